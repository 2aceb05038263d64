/* cat_kv.c: the calls of the key-value interface (cat_kv.h), dispatched to the store's
 * backend, the transaction counters of cat_store_stats, and the sharing of a bound call
 * view's read transaction (cat_view_bind, cat_view.c). */
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

int cat__txn_begin(cat_store *s, cat_txn **out, bool write) {
  *out = NULL;
  cat_view *bound = cat__view_bound(s);
  if (bound && !write) { /* the call's view: share its transaction */
    bound->txn->borrows++;
    *out = bound->txn;
    return 0;
  }
  if (bound) cat__view_unbind_for_write(bound);
  atomic_fetch_add_explicit(write ? &s->write_txns : &s->read_txns, 1, memory_order_relaxed);
  int rc = s->be->begin(s, out, write);
  if (!rc) (*out)->borrows = 0;
  return rc;
}

int cat__txn_commit(cat_txn *t) {
  if (!t->write && t->borrows > 0) { /* a share of the bound view's: give it back */
    t->borrows--;
    return 0;
  }
  if (!t->write) return t->s->be->commit(t);
  int rc = cat__audit_on_commit(t); /* an armed audit event joins the change (cat_audit_armed.c) */
  if (rc) {
    t->s->be->abort(t);
    return rc;
  }
  const cat_txn copy = *t; /* t is freed by the commit */
  rc = t->s->be->commit(t);
  cat__audit_committed(&copy, rc);
  return rc;
}

void cat__txn_abort(cat_txn *t) {
  if (t && !t->write && t->borrows > 0) t->borrows--;
  else if (t) t->s->be->abort(t);
}

int cat__kv_get(cat_txn *t, int db, const void *k, size_t kn, cat__bytes *v) {
  return t->s->be->get(t, db, (cat__bytes){k, kn}, v);
}

int cat__kv_put(cat_txn *t, int db, const void *k, size_t kn, const void *v, size_t vn,
                bool no_overwrite) {
  return t->s->be->put(t, db, (cat__bytes){k, kn}, (cat__bytes){v, vn}, no_overwrite);
}

int cat__kv_del(cat_txn *t, int db, const void *k, size_t kn) {
  return t->s->be->del(t, db, (cat__bytes){k, kn});
}

int cat__cur_open(cat_txn *t, int db, cat__cur **out) {
  *out = NULL;
  return t->s->be->cur_open(t, db, out);
}

int cat__cur_seek(cat__cur *c, const void *from, size_t n, cat__bytes *k, cat__bytes *v) {
  return c->txn->s->be->cur_seek(c, (cat__bytes){from, n}, k, v);
}

int cat__cur_next(cat__cur *c, cat__bytes *k, cat__bytes *v) {
  return c->txn->s->be->cur_next(c, k, v);
}

void cat__cur_close(cat__cur *c) {
  if (c) c->txn->s->be->cur_close(c);
}

int cat__cur_seek_after(cat__cur *c, const char *prefix, size_t plen, const char *after,
                        cat__bytes *k, cat__bytes *v) {
  char key[CAT__KEY_MAX + 1];
  size_t alen = strlen(after);
  if (plen + alen >= sizeof key) return dd_err_set(DD_EINVAL, "page token too long");
  memcpy(key, prefix, plen);
  memcpy(key + plen, after, alen);
  int rc = cat__cur_seek(c, key, plen + alen, k, v);
  if (rc == 0 && alen > 0 && k->n == plen + alen && memcmp(k->p, key, plen + alen) == 0)
    rc = cat__cur_next(c, k, v);
  if (rc == 0 && (k->n < plen || memcmp(k->p, prefix, plen) != 0)) rc = DD_ENOTFOUND;
  return rc;
}

bool cat__in_prefix(const cat__bytes *k, const char *prefix, size_t plen) {
  return k->n >= plen && memcmp(k->p, prefix, plen) == 0;
}
