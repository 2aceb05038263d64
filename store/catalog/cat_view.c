/* cat_view.c: read views of the catalog store. A view is one LMDB read transaction that
 * a request opens once and reads everything through (cat_view_* in cat_store.h); the
 * per-call read functions run over a view of their own on the stack (cat__view_begin /
 * cat__view_end), so each lookup has one implementation. */
#include <assert.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

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
  assert(v->txn && "a view is closed once");
  cat__view_end(v, 0);
  free(v);
}
