/* os_oauth.c: the token request the GCS and Azure backends share (os_http.h): a form POSTed
 * to an OAuth 2 token endpoint, and its JSON answer read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "store/objstore/os_http.h"

static int oauth_url(void *ctx, char **out) {
  return (*out = strdup(ctx)) ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int os__oauth_token(const char *url, const char *form, const char *what, int64_t now,
                    char **token, int64_t *exp) {
  *token = NULL;
  static const char *const hl[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
  os__http_req rq = {0};
  rq.method = "POST";
  rq.headers = hl;
  rq.body = form;
  rq.body_len = strlen(form);
  os__http_resp r = {0};
  int rc = os__http_do(&rq, oauth_url, (void *)url, &r);
  json_t *j = !rc && r.body ? json_loads((const char *)r.body, 0, NULL) : NULL;
  const char *t = json_string_value(json_object_get(j, "access_token"));
  if (!rc && (r.status != 200 || !t || !*t)) {
    const char *e = json_string_value(json_object_get(j, "error_description"));
    if (!e) e = json_string_value(json_object_get(j, "error"));
    rc = dd_err_set(r.status == 400 || r.status == 401 || r.status == 403 ? DD_EPERM : DD_EIO,
                    "%s: HTTP %ld%s%s", what, r.status, e ? ": " : "", e ? e : "");
  }
  if (!rc && !(*token = strdup(t))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  json_t *ttl = json_object_get(j, "expires_in"); /* a number, or a string of one */
  int64_t life = json_is_string(ttl) ? strtoll(json_string_value(ttl), NULL, 10)
                                     : (int64_t)json_integer_value(ttl);
  *exp = now + (life > 0 ? life : 3600);
  json_decref(j);
  os__http_resp_free(&r);
  return rc;
}
