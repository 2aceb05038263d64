/* lance_svc.h: deltad.lance.v1.NamespaceService, the Lance Namespace operations over the
 * catalog store (handlers follow handler.h; every transport runs them from the app's
 * method table through the call core, the Lance REST codec of server/http/native too).
 *
 * Besides the status, a failed handler records what the failure was about in the call's
 * error detail (dd_call_set_detail: DD_CALL_DETAIL_NAMESPACE or _TABLE, _NONE for the
 * request itself), which picks between Lance's NamespaceNotFound and TableNotFound,
 * NamespaceAlreadyExists and TableAlreadyExists (dd_call_status_lance). */
#ifndef DD_SERVER_SERVICE_LANCE_SVC_H
#define DD_SERVER_SERVICE_LANCE_SVC_H

#include <stddef.h>

#include "server/call/handler.h"

/* Index of each operation in dd_lance_methods. */
typedef enum {
  LANCE_M_CREATE_NAMESPACE = 0,
  LANCE_M_LIST_NAMESPACES,
  LANCE_M_DESCRIBE_NAMESPACE,
  LANCE_M_DROP_NAMESPACE,
  LANCE_M_NAMESPACE_EXISTS,
  LANCE_M_LIST_TABLES,
  LANCE_M_REGISTER_TABLE,
  LANCE_M_DESCRIBE_TABLE,
  LANCE_M_TABLE_EXISTS,
  LANCE_M_DROP_TABLE,
  LANCE_M_DEREGISTER_TABLE,
  LANCE_M_COUNT
} lance_method_index;

extern const dd_method dd_lance_methods[LANCE_M_COUNT];
extern const size_t dd_lance_methods_len;

/* Parses a Lance mode / behavior string, case-insensitive, PascalCase or snake_case
 * ("ExistOk", "exist_ok", "EXISTOK"): *out is the index of the matching name in
 * names[0..n) (names are lower case without '_'), or dflt for "". DD_EINVAL naming field
 * for anything else. */
int lance_svc_parse_mode(int *out, const char *field, const char *value, const char *const *names,
                         size_t n, int dflt);

#endif
