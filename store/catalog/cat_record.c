/* cat_record.c: the pieces every kind of catalog object is built from: packed protobuf
 * records keyed by id, case-insensitive name indexes, and paged listing in key order. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

/* ---- records ------------------------------------------------------------------------------ */

int cat__rec_get(cat_store *s, cat_txn *txn, int db, const char *id,
                 const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out) {
  cat__bytes v;
  (void)s;
  *out = NULL;
  int rc = cat__kv_get(txn, db, id, strlen(id), &v);
  if (rc) return rc;
  *out = protobuf_c_message_unpack(desc, NULL, v.n, v.p);
  if (!*out) return dd_err_set(DD_ECORRUPT, "catalog store: record %s does not decode", id);
  return 0;
}

int cat__rec_put(cat_store *s, cat_txn *txn, int db, const char *id,
                 const ProtobufCMessage *msg, ProtobufCMessage **copy) {
  unsigned char small[1024];
  size_t n = protobuf_c_message_get_packed_size(msg);
  unsigned char *buf = n <= sizeof small ? small : malloc(n);
  (void)s;
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(msg, buf);
  int rc = cat__kv_put(txn, db, id, strlen(id), buf, n, false);
  if (!rc) cat__audit_note(txn, db, id, strlen(id), false);
  if (!rc && copy) {
    *copy = protobuf_c_message_unpack(msg->descriptor, NULL, n, buf);
    if (!*copy) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (buf != small) free(buf);
  return rc;
}

/* ---- map views ---------------------------------------------------------------------------- */

int cat__props_check(const char *field, size_t n, void *const *src) {
  for (size_t i = 0; i < n; i++) {
    const cat__kv *e = src[i];
    if (!e->key || !*e->key) return dd_err_set(DD_EINVAL, "%s: empty key", field);
  }
  return 0;
}

int cat__props_view(cat__kv ***out, const ProtobufCMessageDescriptor *desc, size_t n,
                    void *const *src) {
  *out = NULL;
  if (n == 0) return 0;
  if (desc->sizeof_message != sizeof(cat__kv))
    return dd_err_set(DD_EINTERNAL, "%s is not a map entry", desc->name);
  cat__kv **ptrs = malloc(n * (sizeof *ptrs + sizeof(cat__kv)));
  if (!ptrs) return dd_err_set(DD_ENOMEM, "out of memory");
  cat__kv *entries = (cat__kv *)(ptrs + n);
  for (size_t i = 0; i < n; i++) {
    const cat__kv *e = src[i];
    protobuf_c_message_init(desc, &entries[i]);
    entries[i].key = e->key;
    entries[i].value = e->value;
    ptrs[i] = &entries[i];
  }
  *out = ptrs;
  return 0;
}

/* ---- name indexes ------------------------------------------------------------------------- */

int cat__name_get(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name,
                  char id[CAT__ID_LEN + 1]) {
  char key[CAT__KEY_MAX];
  cat__bytes v;
  (void)s;
  int rc = cat__kv_get(txn, db, key, cat__name_key(key, scope, name), &v);
  if (rc) return rc;
  if (v.n != CAT__ID_LEN) return dd_err_set(DD_ECORRUPT, "catalog store: bad name index");
  memcpy(id, v.p, CAT__ID_LEN);
  id[CAT__ID_LEN] = '\0';
  return 0;
}

int cat__name_put(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name,
                  const char *id) {
  char key[CAT__KEY_MAX];
  (void)s;
  return cat__kv_put(txn, db, key, cat__name_key(key, scope, name), id, CAT__ID_LEN, true);
}

int cat__key_del(cat_store *s, cat_txn *txn, int db, const void *key, size_t len) {
  (void)s;
  int rc = cat__kv_del(txn, db, key, len);
  if (!rc) cat__audit_note(txn, db, key, len, true);
  return rc == DD_ENOTFOUND ? 0 : rc;
}

int cat__name_del(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name) {
  char key[CAT__KEY_MAX];
  size_t n = cat__name_key(key, scope, name);
  return cat__key_del(s, txn, db, key, n);
}

int cat__get_by_name(cat_store *s, cat_txn *txn, int names_db, int recs_db, const char *scope,
                     const char *name, const ProtobufCMessageDescriptor *desc,
                     ProtobufCMessage **out, char id[CAT__ID_LEN + 1]) {
  int rc = cat__name_get(s, txn, names_db, scope, name, id);
  if (rc) return rc;
  rc = cat__rec_get(s, txn, recs_db, id, desc, out);
  if (rc == DD_ENOTFOUND)
    return dd_err_set(DD_ECORRUPT, "catalog store: name index points at missing record %s", id);
  return rc;
}

/* ---- walking a scope ---------------------------------------------------------------------- */

int cat__scope_walk(cat_store *s, cat_txn *txn, int db, const char *scope, cat__walk_fn fn,
                    void *arg) {
  char key[CAT__KEY_MAX], id[CAT__ID_LEN + 1];
  size_t plen = cat__name_key(key, scope, ""), klen = plen;
  cat__cur *cur = NULL;
  cat__bytes k, v;
  int frc = 0, rc = cat__cur_open(txn, db, &cur);
  while (!rc) {
    /* re-seek every time: fn may have changed the db */
    rc = cat__cur_seek(cur, key, klen, &k, &v);
    if (!rc && klen > plen && k.n == klen && memcmp(k.p, key, klen) == 0)
      rc = cat__cur_next(cur, &k, &v);
    if (rc || k.n < plen || k.n >= CAT__KEY_MAX || memcmp(k.p, key, plen)) break;
    if (v.n != CAT__ID_LEN) {
      rc = dd_err_set(DD_ECORRUPT, "catalog store: bad index entry");
      break;
    }
    klen = k.n;
    memcpy(key, k.p, klen);
    key[klen] = '\0';
    memcpy(id, v.p, CAT__ID_LEN);
    id[CAT__ID_LEN] = '\0';
    if ((frc = fn(s, txn, key + plen, id, arg)) != 0) break;
  }
  cat__cur_close(cur);
  return frc ? frc : rc == DD_ENOTFOUND ? 0 : rc;
}

/* ---- listing ------------------------------------------------------------------------------- */

void cat__page_free(cat__page *page) {
  for (size_t i = 0; i < page->n; i++) protobuf_c_message_free_unpacked(page->items[i], NULL);
  free(page->items);
  free(page->next);
  memset(page, 0, sizeof *page);
}

static int cat__list_collect(cat_store *s, cat_txn *txn, cat__cur *cur, int recs_db,
                             const char *prefix, size_t plen, const char *after, int max,
                             const ProtobufCMessageDescriptor *desc, cat__page *out) {
  cat__bytes k, v;
  char last[CAT__KEY_MAX];
  size_t last_len = 0;
  int rc = cat__cur_seek_after(cur, prefix, plen, after, &k, &v);
  while (rc == 0 && cat__in_prefix(&k, prefix, plen) && out->n < (size_t)max) {
    char id[CAT__ID_LEN + 1];
    if (v.n != CAT__ID_LEN) return dd_err_set(DD_ECORRUPT, "catalog store: bad name index");
    memcpy(id, v.p, CAT__ID_LEN);
    id[CAT__ID_LEN] = '\0';
    last_len = k.n - plen;
    memcpy(last, (const char *)k.p + plen, last_len);
    rc = cat__rec_get(s, txn, recs_db, id, desc, &out->items[out->n]);
    if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ECORRUPT, "catalog store: dangling index %s", id);
    if (rc) return rc;
    out->n++;
    rc = cat__cur_next(cur, &k, &v);
  }
  if (rc != 0 && rc != DD_ENOTFOUND) return rc;
  bool more = rc == 0 && cat__in_prefix(&k, prefix, plen);
  out->next = more ? cat__page_token(last, last_len) : strdup("");
  return out->next ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int cat__list(cat_store *s, int names_db, int recs_db, const char *scope,
              const ProtobufCMessageDescriptor *desc, int32_t max_results, const char *token,
              cat__page *out) {
  char after[CAT__NAME_MAX + 1], prefix[CAT__KEY_MAX];
  int max;
  cat_txn *txn = NULL;
  cat__cur *cur = NULL;
  memset(out, 0, sizeof *out);
  int rc = cat__page_args(max_results, token, &max, after);
  if (rc) return rc;
  size_t plen = scope ? cat__name_key(prefix, scope, "") : 0;
  out->items = calloc((size_t)max, sizeof *out->items);
  if (!out->items) return dd_err_set(DD_ENOMEM, "out of memory");
  if ((rc = cat__txn_begin(s, &txn, false))) goto cleanup;
  if ((rc = cat__cur_open(txn, names_db, &cur))) goto cleanup;
  rc = cat__list_collect(s, txn, cur, recs_db, prefix, plen, after, max, desc, out);
cleanup:
  cat__cur_close(cur);
  cat__txn_abort(txn);
  if (rc) cat__page_free(out);
  return rc;
}
