/* ex_tree.c: building, copying, inspecting and freeing expression trees. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

char *ex__strndup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *ex__strdup(const char *s) { return ex__strndup(s, strlen(s)); }

int ex__node_new(ex_node **out, ex_kind kind) {
  ex_node *e = calloc(1, sizeof *e);
  if (!e) return dd_err_set(DD_ENOMEM, "out of memory");
  e->kind = kind;
  e->depth = 1;
  e->field = -1;
  *out = e;
  return 0;
}

static void free_args(ex_node **args, size_t n) {
  for (size_t i = 0; i < n; i++) ex_free(args[i]);
}

int ex__set_args(ex_node *e, ex_node **args, size_t nargs) {
  int depth = 0;
  for (size_t i = 0; i < nargs; i++) {
    if (!args[i]) {
      free_args(args, nargs);
      return dd_err_set(DD_EINVAL, "expression argument %zu is missing", i);
    }
    if (args[i]->depth > depth) depth = args[i]->depth;
  }
  if (depth + 1 > EX_MAX_DEPTH) {
    free_args(args, nargs);
    return dd_err_set(DD_EINVAL, "expression nested deeper than %d levels", EX_MAX_DEPTH);
  }
  if (nargs) {
    e->args = malloc(nargs * sizeof *e->args);
    if (!e->args) {
      free_args(args, nargs);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    memcpy(e->args, args, nargs * sizeof *args);
  }
  e->nargs = nargs;
  e->depth = depth + 1;
  return 0;
}

void ex_free(ex_node *e) {
  if (!e) return;
  free_args(e->args, e->nargs);
  free(e->args);
  free(e->name);
  free((char *)e->lit.str);
  for (size_t i = 0; i < e->nparts; i++) free(e->parts[i]);
  free(e->parts);
  free(e->fpath);
  if (e->aux && e->fn && e->fn->free_aux) e->fn->free_aux(e->aux);
  free(e);
}

/* ---- constructors ---- */

int ex_new_literal(ex_node **out, const ex_value *v) {
  ex_node *e = NULL;
  int rc = ex__node_new(&e, EX_LITERAL);
  if (rc) return rc;
  e->lit = *v;
  e->lit.str = NULL;
  if (!v->is_null && (v->type.id == EX_T_STRING || v->type.id == EX_T_BINARY)) {
    char *s = ex__strndup(v->str ? v->str : "", v->str ? v->len : 0);
    if (!s) {
      free(e);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    e->lit.str = s;
  }
  *out = e;
  return 0;
}

int ex_new_column(ex_node **out, const char *const *parts, size_t nparts) {
  if (nparts == 0) return dd_err_set(DD_EINVAL, "a column reference needs a name");
  ex_node *e = NULL;
  int rc = ex__node_new(&e, EX_COLUMN);
  if (rc) return rc;
  e->parts = calloc(nparts, sizeof *e->parts);
  if (!e->parts) goto oom;
  e->nparts = nparts;
  for (size_t i = 0; i < nparts; i++)
    if (!(e->parts[i] = ex__strdup(parts[i]))) goto oom;
  *out = e;
  return 0;
oom:
  ex_free(e);
  return dd_err_set(DD_ENOMEM, "out of memory");
}

/* Splits Spark's attribute syntax (a.b, `a.b`.c, `x``y`) into parts. */
int ex_new_column_text(ex_node **out, const char *text, size_t len) {
  char **parts = NULL;
  size_t n = 0, cap = 0, i = 0;
  char *cur = malloc(len + 1);
  int rc = 0;
  if (!cur) return dd_err_set(DD_ENOMEM, "out of memory");
  while (i <= len) {
    size_t cl = 0;
    bool quoted = false;
    if (i < len && text[i] == '`') {
      quoted = true;
      i++;
      for (;;) {
        if (i >= len) {
          rc = dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] unclosed backquote in column name '%.*s'",
                          (int)len, text);
          goto cleanup;
        }
        if (text[i] == '`') {
          if (i + 1 < len && text[i + 1] == '`') {
            cur[cl++] = '`';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        cur[cl++] = text[i++];
      }
    } else {
      while (i < len && text[i] != '.') cur[cl++] = text[i++];
    }
    if ((!quoted && cl == 0) || (i < len && text[i] != '.')) {
      rc = dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] invalid column name '%.*s'", (int)len, text);
      goto cleanup;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 4;
      char **np = realloc(parts, nc * sizeof *np);
      if (!np) {
        rc = dd_err_set(DD_ENOMEM, "out of memory");
        goto cleanup;
      }
      parts = np;
      cap = nc;
    }
    if (!(parts[n] = ex__strndup(cur, cl))) {
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      goto cleanup;
    }
    n++;
    if (i >= len) break;
    i++; /* the dot */
    if (i == len) {
      rc = dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] invalid column name '%.*s'", (int)len, text);
      goto cleanup;
    }
  }
  rc = ex_new_column(out, (const char *const *)parts, n);
cleanup:
  for (size_t k = 0; k < n; k++) free(parts[k]);
  free(parts);
  free(cur);
  return rc;
}

int ex_new_call(ex_node **out, const char *fn, ex_node **args, size_t nargs) {
  ex_node *e = NULL;
  int rc = ex__node_new(&e, EX_CALL);
  if (rc) {
    free_args(args, nargs);
    return rc;
  }
  if (!(e->name = ex__strdup(fn))) {
    free_args(args, nargs);
    free(e);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  for (char *p = e->name; *p; p++) *p = (char)tolower((unsigned char)*p);
  if (!strcmp(e->name, "==")) strcpy(e->name, "="); /* Spark Connect's spelling of = */
  if ((rc = ex__set_args(e, args, nargs))) {
    ex_free(e);
    return rc;
  }
  *out = e;
  return 0;
}

/* arg is taken, even on failure (*out is then NULL: ex_new_cast(&v, v, t) is safe). */
static int new_unary(ex_node **out, ex_kind kind, ex_node *arg) {
  ex_node *e = NULL;
  int rc = ex__node_new(&e, kind);
  if (rc) {
    ex_free(arg);
    return *out = NULL, rc;
  }
  if ((rc = ex__set_args(e, &arg, 1))) {
    ex_free(e);
    return *out = NULL, rc;
  }
  *out = e;
  return 0;
}

int ex_new_cast(ex_node **out, ex_node *arg, ex_type to) {
  int rc = new_unary(out, EX_CAST, arg);
  if (!rc) (*out)->cast_to = to;
  return rc;
}

int ex_new_try_cast(ex_node **out, ex_node *arg, ex_type to) {
  int rc = ex_new_cast(out, arg, to);
  if (!rc) (*out)->try_ = true;
  return rc;
}

int ex_new_alias(ex_node **out, ex_node *arg, const char *name) {
  char *n = ex__strdup(name);
  if (!n) {
    ex_free(arg);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  int rc = new_unary(out, EX_ALIAS, arg);
  if (rc) {
    free(n);
    return rc;
  }
  (*out)->name = n;
  return 0;
}

int ex_new_star(ex_node **out, const char *target) {
  ex_node *e = NULL;
  int rc = ex__node_new(&e, EX_STAR);
  if (rc) return rc;
  if (target && !(e->name = ex__strdup(target))) {
    free(e);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = e;
  return 0;
}

int ex_new_sort(ex_node **out, ex_node *arg, bool ascending, int nulls_first) {
  int rc = new_unary(out, EX_SORT, arg);
  if (rc) return rc;
  (*out)->asc = ascending;
  (*out)->nulls_first = nulls_first < 0 ? ascending : nulls_first != 0;
  return 0;
}

/* ---- copy ---- */

int ex_clone(ex_node **out, const ex_node *e) {
  ex_node *c = NULL;
  int rc = ex__node_new(&c, e->kind);
  if (rc) return rc;
  c->depth = e->depth;
  c->lit = e->lit;
  c->lit.str = NULL;
  c->cast_to = e->cast_to;
  c->implicit = e->implicit;
  c->try_ = e->try_;
  c->asc = e->asc;
  c->nulls_first = e->nulls_first;
  c->distinct = e->distinct;
  if (e->name && !(c->name = ex__strdup(e->name))) goto oom;
  if (e->lit.str && !(c->lit.str = ex__strndup(e->lit.str, e->lit.len))) goto oom;
  if (e->nparts) {
    if (!(c->parts = calloc(e->nparts, sizeof *c->parts))) goto oom;
    c->nparts = e->nparts;
    for (size_t i = 0; i < e->nparts; i++)
      if (!(c->parts[i] = ex__strdup(e->parts[i]))) goto oom;
  }
  if (e->nargs) {
    if (!(c->args = calloc(e->nargs, sizeof *c->args))) goto oom;
    c->nargs = e->nargs;
    for (size_t i = 0; i < e->nargs; i++)
      if ((rc = ex_clone(&c->args[i], e->args[i]))) goto fail;
  }
  /* The bound part is not copied: a clone is an unbound tree to bind again. */
  *out = c;
  return 0;
oom:
  rc = dd_err_set(DD_ENOMEM, "out of memory");
fail:
  ex_free(c);
  return rc;
}

int ex_map_columns(ex_node **out, const ex_node *e, ex_column_fn fn, void *ctx) {
  *out = NULL;
  if (e->kind == EX_COLUMN) {
    int rc = fn(out, e, ctx);
    return rc || *out ? rc : ex_clone(out, e);
  }
  int rc = ex_clone(out, e);
  for (size_t i = 0; i < e->nargs && !rc; i++) {
    ex_free((*out)->args[i]);
    (*out)->args[i] = NULL;
    rc = ex_map_columns(&(*out)->args[i], e->args[i], fn, ctx);
  }
  if (rc) ex_free(*out), *out = NULL;
  return rc;
}

/* ---- inspection ---- */

ex_kind ex_node_kind(const ex_node *e) { return e->kind; }
size_t ex_nargs(const ex_node *e) { return e->nargs; }
const ex_node *ex_arg(const ex_node *e, size_t i) { return i < e->nargs ? e->args[i] : NULL; }
const char *ex_fn_name(const ex_node *e) { return e->kind == EX_CALL ? e->name : NULL; }
bool ex_call_distinct(const ex_node *e) { return e->kind == EX_CALL && e->distinct; }
void ex_set_distinct(ex_node *e, bool distinct) { e->distinct = distinct; }
const char *ex_alias_name(const ex_node *e) { return e->kind == EX_ALIAS ? e->name : NULL; }
const char *ex_star_target(const ex_node *e) { return e->kind == EX_STAR ? e->name : NULL; }
const ex_value *ex_literal(const ex_node *e) { return e->kind == EX_LITERAL ? &e->lit : NULL; }
ex_type ex_cast_type(const ex_node *e) { return e->cast_to; }
bool ex_cast_is_try(const ex_node *e) { return e->kind == EX_CAST && e->try_; }
bool ex_sort_ascending(const ex_node *e) { return e->asc; }
bool ex_sort_nulls_first(const ex_node *e) { return e->nulls_first; }

const char *const *ex_column_parts(const ex_node *e, size_t *nparts) {
  if (e->kind != EX_COLUMN) {
    *nparts = 0;
    return NULL;
  }
  *nparts = e->nparts;
  return (const char *const *)e->parts;
}

bool ex_is_bound(const ex_node *e) { return e->bound; }
ex_type ex_result_type(const ex_node *e) { return e->type; }
bool ex_result_nullable(const ex_node *e) { return e->nullable; }
int ex_column_field(const ex_node *e) { return e->kind == EX_COLUMN ? e->field : -1; }

bool ex_uses_columns(const ex_node *e) {
  if (e->kind == EX_COLUMN || e->kind == EX_STAR) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (ex_uses_columns(e->args[i])) return true;
  return false;
}
