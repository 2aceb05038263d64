/* lance_svc.h: deltad.lance.v1.NamespaceService, the Lance Namespace operations over the
 * catalog store (handlers follow handler.h; the gRPC runtime serves them from the app's
 * method table and the Lance REST adapter, server/http/native/lance_rest.c, calls the same
 * entries of dd_lance_methods by index).
 *
 * Besides the status, a failed handler records on its thread what the failure was about
 * (a namespace or a table), which the REST adapter needs to choose between Lance's
 * NamespaceNotFound and TableNotFound, NamespaceAlreadyExists and TableAlreadyExists. It is
 * per thread like dd_err_msg() and valid until the next Lance handler runs on the thread. */
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

typedef enum {
  LANCE_SUBJECT_NONE = 0, /* the request itself (bad input, authentication, ...) */
  LANCE_SUBJECT_NAMESPACE,
  LANCE_SUBJECT_TABLE
} lance_subject;

/* What the last failure of a Lance handler on this thread was about. */
lance_subject lance_svc_subject(void);

/* Parses a Lance mode / behavior string, case-insensitive, PascalCase or snake_case
 * ("ExistOk", "exist_ok", "EXISTOK"): *out is the index of the matching name in
 * names[0..n) (names are lower case without '_'), or dflt for "". DD_EINVAL naming field
 * for anything else. */
int lance_svc_parse_mode(int *out, const char *field, const char *value, const char *const *names,
                         size_t n, int dflt);

#endif
