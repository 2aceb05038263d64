/* shq_token.c: page and refresh tokens. A token is base64url(compact JSON) "." base64url
 * (16-byte MAC): HMAC-SHA256 under the share's token key, or plain SHA-256 when no key is
 * configured (then it only detects corruption). The JSON binds the token to the shared
 * table id, the query's checksum and the snapshot version, so the same token always
 * yields the same page and cannot be replayed against another table or query. */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

static void token_mac(const shq_table_opts *o, const char *d, size_t n, uint8_t out[32]) {
  unsigned int len = 0;
  if (o->token_key && o->token_key_len)
    HMAC(EVP_sha256(), o->token_key, (int)o->token_key_len, (const uint8_t *)d, n, out, &len);
  else
    EVP_Digest(d, n, out, &len, EVP_sha256(), NULL);
}

char *shq__token_encode(const shq_token *t, const shq_table_opts *o) {
  json_t *j = json_pack("{s:s#, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "k", &t->kind, (size_t)1,
                        "i", t->table_id ? t->table_id : "", "q", t->checksum ? t->checksum : "",
                        "v", (json_int_t)t->version, "sv", (json_int_t)t->start_version,
                        "ai", (json_int_t)t->action_index, "ev", (json_int_t)t->end_version,
                        "lv", (json_int_t)t->latest_version, "x", (json_int_t)t->expires_ms);
  if (!j) return NULL;
  if (t->records && json_object_set_new(j, "n", json_integer(t->records))) {
    json_decref(j);
    return NULL;
  }
  if (t->after && json_object_set_new(j, "a", json_string(t->after))) {
    json_decref(j); /* not UTF-8 */
    return NULL;
  }
  char *txt = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(j);
  if (!txt) return NULL;
  uint8_t mac[32];
  token_mac(o, txt, strlen(txt), mac);
  char *a = shq__b64url_enc((const uint8_t *)txt, strlen(txt)), *b = shq__b64url_enc(mac, 16);
  char *out = a && b ? malloc(strlen(a) + strlen(b) + 2) : NULL;
  if (out) {
    strcpy(out, a);
    strcat(out, ".");
    strcat(out, b);
  }
  free(txt);
  free(a);
  free(b);
  return out;
}

void shq__token_clear(shq_token *t) {
  free(t->table_id);
  free(t->checksum);
  free(t->after);
  *t = (shq_token){0};
}

static int bad(const char *what, const char *why) {
  return dd_err_set(DD_EINVAL, "invalid %s: %s", what, why);
}

static int token_fields(shq_token *t, const json_t *j) {
  const char *k = json_string_value(json_object_get(j, "k"));
  const char *i = json_string_value(json_object_get(j, "i"));
  const char *q = json_string_value(json_object_get(j, "q"));
  const char *a = json_string_value(json_object_get(j, "a"));
  if (!k || !i || !q) return -1;
  t->kind = k[0];
  t->table_id = strdup(i);
  t->checksum = strdup(q);
  t->after = a ? strdup(a) : NULL;
  t->version = json_integer_value(json_object_get(j, "v"));
  t->start_version = json_integer_value(json_object_get(j, "sv"));
  t->action_index = json_integer_value(json_object_get(j, "ai"));
  t->end_version = json_integer_value(json_object_get(j, "ev"));
  t->latest_version = json_integer_value(json_object_get(j, "lv"));
  t->expires_ms = json_integer_value(json_object_get(j, "x"));
  t->records = json_integer_value(json_object_get(j, "n"));
  return t->table_id && t->checksum && (!a || t->after) ? 0 : -1;
}

int shq__token_decode(shq_token *out, const char *s, char kind, const char *checksum,
                      const shq_table_opts *o, int64_t now_ms) {
  const char *what = kind == 'p' ? "page token" : "refresh token";
  *out = (shq_token){0};
  const char *dot = strchr(s, '.');
  if (!dot || strlen(s) > 1u << 16) return bad(what, "malformed");
  char *head = strndup(s, (size_t)(dot - s));
  uint8_t *body = NULL, *mac = NULL, want[32];
  size_t nb = 0, nm = 0;
  json_t *j = NULL;
  int rc = bad(what, "malformed");
  if (!head || shq__b64url_dec(head, &body, &nb) || shq__b64url_dec(dot + 1, &mac, &nm)) goto done;
  token_mac(o, (const char *)body, nb, want);
  if (nm != 16 || CRYPTO_memcmp(mac, want, 16)) {
    rc = bad(what, "signature mismatch");
    goto done;
  }
  if (!(j = json_loadb((const char *)body, nb, 0, NULL)) || token_fields(out, j)) goto done;
  if (out->kind != kind) rc = bad(what, "wrong kind of token");
  else if (strcmp(out->table_id, o->table_id ? o->table_id : ""))
    rc = bad(what, "The table specified in the token does not match the table being queried.");
  else if (checksum && strcmp(out->checksum, checksum))
    rc = bad(what, "Query parameter mismatch detected for the next page query. The query "
                   "parameter cannot change when querying the next page results.");
  else if (out->expires_ms && out->expires_ms < now_ms)
    rc = bad(what, "The token has expired. Please restart the query.");
  else rc = 0;
done:
  if (rc) shq__token_clear(out);
  json_decref(j);
  free(head);
  free(body);
  free(mac);
  return rc;
}
