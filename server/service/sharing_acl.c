/* sharing_acl.c: who may see which share: admins every share, recipients their grants.
 * A share that exists but was not granted answers like one that does not exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/sharing_int.h"

int shr_share_visible(const dd_call *call, cat_view *v, const char *name, cat_share **out) {
  *out = NULL;
  if (!name || !*name || strlen(name) > 255)
    return dd_err_set(DD_ENOTFOUND, "share '%s' not found", name ? name : "");
  if (call->principal->kind == DD_PRINCIPAL_ADMIN) {
    int rc = cat_view_share_get(v, out, name);
    if (rc == DD_ENOTFOUND || rc == DD_EINVAL)
      return dd_err_set(DD_ENOTFOUND, "share '%s' not found", name);
    return rc;
  }
  if (call->principal->kind != DD_PRINCIPAL_RECIPIENT)
    return dd_err_set(DD_EUNAUTH, "a bearer token is required");
  char sid[40];
  int rc = cat_view_grant_check(v, call->principal->id, name, sid);
  if (!rc) rc = cat_view_share_by_id(v, out, sid);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "share '%s' not found", name);
  return rc;
}

static int shr_table_missing(const char *share, const char *schema, const char *table) {
  return dd_err_set(DD_ENOTFOUND,
                    "[Share/Schema/Table] '%s/%s/%s' does not exist, please contact your "
                    "share provider for further information.",
                    share, schema, table);
}

int shr_table_visible(const dd_call *call, cat_view *v, const char *share, const char *schema,
                      const char *table, cat_share **out_share,
                      const cat_shared_table **out_table) {
  cat_share *sh = NULL;
  *out_share = NULL;
  *out_table = NULL;
  int rc = shr_share_visible(call, v, share, &sh);
  if (rc == DD_ENOTFOUND) return shr_table_missing(share, schema, table);
  if (rc) return rc;
  for (size_t i = 0; i < sh->n_schemas; i++) {
    if (strcasecmp(sh->schemas[i]->name, schema) != 0) continue;
    for (size_t j = 0; j < sh->schemas[i]->n_tables; j++)
      if (strcasecmp(sh->schemas[i]->tables[j]->name, table) == 0) {
        *out_share = sh;
        *out_table = sh->schemas[i]->tables[j];
        return 0;
      }
  }
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  return shr_table_missing(share, schema, table);
}
