/* cat_view.c: read views of the catalog store. A view is one read transaction that a
 * request opens once and reads everything through (cat_view_* in cat_store.h); the
 * per-call read functions run over a view of their own on the stack (cat__view_begin /
 * cat__view_end), so each lookup has one implementation.
 *
 * A call view is bound to the thread that runs the call (cat_view_bind): read transactions
 * of its store begun on that thread share its transaction (cat__txn_begin counts the
 * shares in txn->borrows), so the token check and the handler read one state at the cost
 * of one transaction. Only the thread the view is bound to touches the binding; the view
 * itself may move between threads between bindings. */
#include <assert.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

static _Thread_local cat_view *cat__bound; /* this thread's call view, or NULL */

int cat__view_begin(cat_store *s, cat_view *v) {
  v->s = s;
  v->txn = NULL;
  return cat__txn_begin(s, &v->txn, false);
}

int cat__view_end(cat_view *v, int rc) {
  if (v->txn) cat__txn_abort(v->txn);
  v->txn = NULL;
  return rc;
}

cat_view *cat__view_bound(const cat_store *s) {
  cat_view *v = cat__bound;
  return v && v->s == s && v->txn ? v : NULL;
}

cat_view *cat_view_bound(cat_store *s) { return cat__view_bound(s); }

void cat__view_unbind_for_write(cat_view *v) {
  assert(v == cat__bound);
  cat__bound = NULL;
  if (v->txn && v->txn->borrows == 0) cat__view_end(v, 0);
}

cat_view *cat_view_bind(cat_view *v) {
  cat_view *was = cat__bound;
  cat__bound = v;
  return was;
}

void cat_view_end(cat_view *v) {
  if (!v || !v->txn || v == cat__bound) return;
  assert(v->txn->borrows == 0 && "a view is ended after the reads that share it");
  if (v->txn->borrows == 0) cat__view_end(v, 0);
}

int cat_view_open(cat_store *s, cat_view **out) {
  *out = NULL;
  cat_view *v = malloc(sizeof *v);
  if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = cat__view_begin(s, v);
  if (rc) {
    free(v);
    return rc;
  }
  *out = v;
  return 0;
}

void cat_view_close(cat_view *v) {
  if (!v) return;
  if (cat__bound == v) cat__bound = NULL;
  cat__view_end(v, 0);
  free(v);
}

int cat_view_generation(cat_view *v, uint64_t *out) {
  *out = 0;
  if (!v || !v->txn || v->txn->write)
    return dd_err_set(DD_EINTERNAL, "catalog view: no read transaction for a generation");
  return cat__txn_generation(v->txn, out);
}

int cat__txn_generation(cat_txn *t, uint64_t *out) {
  *out = 0;
  if (!t->s->be->generation)
    return dd_err_set(DD_EUNSUPPORTED, "catalog store: %s has no generation", t->s->be->name);
  return t->s->be->generation(t, out);
}
