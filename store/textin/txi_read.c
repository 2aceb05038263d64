/* txi_read.c: a CSV or JSON-lines file as typed Arrow batches (txi.h): the file parsed
 * into string cells (txi_parse.c), its columns chosen and typed (the schema given, or
 * inferred), each batch built as strings and cast by the expression engine (Spark's ANSI
 * string casts). */
#include "store/textin/txi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/expr/ex.h"

#define DEFAULT_ROWS 65536

static int oom(void) { return dd_err_set(DD_ENOMEM, "out of memory"); }

static const char *ext(const char *path) {
  const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
  return dot && (!slash || dot > slash) ? dot + 1 : "";
}

static bool is_json(const char *path) {
  const char *e = ext(path);
  return !strcasecmp(e, "json") || !strcasecmp(e, "jsonl") || !strcasecmp(e, "ndjson");
}

bool txi_is_text(const char *path) { return is_json(path) || !strcasecmp(ext(path), "csv"); }

static int slurp(char **out, size_t *len, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return dd_err_set(DD_ENOTFOUND, "cannot open %s", path);
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap + 1);
      if (!nb) { rc = oom(); break; }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (!rc && ferror(f)) rc = dd_err_set(DD_EIO, "cannot read %s", path);
  fclose(f);
  if (rc) return free(buf), rc;
  *out = buf, *len = n;
  return 0;
}

/* The columns read: file column src[i] as type[i], named name[i]. */
typedef struct cols {
  size_t n;
  size_t *src;
  ex_type *type;
  char **name;
} cols;

static void cols_free(cols *c) {
  for (size_t i = 0; i < c->n; i++) free(c->name[i]);
  free(c->src), free(c->type), free(c->name);
}

static int cols_alloc(cols *c, size_t n) {
  c->src = calloc(n + 1, sizeof *c->src);
  c->type = calloc(n + 1, sizeof *c->type);
  c->name = calloc(n + 1, sizeof *c->name);
  return c->src && c->type && c->name ? 0 : oom();
}

static int by_name(const void *a, const void *b, void *t) {
  const txi__table *tb = t;
  return strcmp(tb->names[*(const size_t *)a], tb->names[*(const size_t *)b]);
}

/* Without a schema: CSV columns as strings in file order; JSON columns by name, typed
 * by their values. */
static int infer(cols *c, const txi__table *t, bool json) {
  int rc = cols_alloc(c, t->ncols);
  for (size_t i = 0; !rc && i < t->ncols; i++) c->src[i] = i;
  if (!rc && json) qsort_r(c->src, t->ncols, sizeof *c->src, by_name, (void *)t);
  for (size_t i = 0; !rc && i < t->ncols; i++) {
    int k = json ? t->kinds[c->src[i]] : TXI__K_STRING;
    c->type[i].id = k == TXI__K_BOOL ? EX_T_BOOLEAN : k == TXI__K_LONG ? EX_T_LONG : k == TXI__K_DOUBLE ? EX_T_DOUBLE : EX_T_STRING;
    if (!(c->name[i] = strdup(t->names[c->src[i]]))) rc = oom();
    c->n++;
  }
  return rc;
}

/* "name TYPE, ..." (names may be `quoted`; types may hold commas inside parentheses). */
static int from_schema(cols *c, const txi__table *t, const char *ddl) {
  size_t cap = 1;
  for (const char *p = ddl; *p; p++) cap += *p == ',';
  int rc = cols_alloc(c, cap);
  const char *p = ddl;
  while (!rc && *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    const char *ns = p, *ne;
    if (*p == '`') {
      ns = ++p;
      while (*p && *p != '`') p++;
      ne = p;
      if (*p) p++;
    } else {
      while (*p && *p != ' ' && *p != '\t') p++;
      ne = p;
    }
    const char *ts = p;
    int depth = 0;
    while (*p && (depth || *p != ',')) depth += *p == '(' ? 1 : *p == ')' ? -1 : 0, p++;
    const char *te = p;
    if (*p == ',') p++;
    while (ts < te && (*ts == ' ' || *ts == '\t')) ts++;
    while (te > ts && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\n')) te--;
    if (ne == ns || te == ts) return dd_err_set(DD_EINVAL, "the schema '%s' wants 'name TYPE, ...'", ddl);
    size_t i = c->n;
    if ((rc = ex_type_parse(&c->type[i], ts, (size_t)(te - ts)))) break;
    if (!(c->name[i] = strndup(ns, (size_t)(ne - ns)))) return oom();
    c->n++;
    size_t k = 0;
    while (k < t->ncols && strcasecmp(t->names[k], c->name[i])) k++;
    if (k == t->ncols) return dd_err_set(DD_EINVAL, "the file has no column %s", c->name[i]);
    c->src[i] = k;
  }
  return rc;
}

/* Rows [r0, r1) of t as one batch of the typed schema (casts bound over ss). */
static int batch(arw_batch **out, const txi__table *t, const cols *c, const arw_schema *ss, const arw_schema *ts,
                 ex_node *const *casts, size_t r0, size_t r1) {
  arw_batch *sb = NULL;
  *out = NULL;
  int rc = arw_batch_new(&sb, ss);
  for (size_t i = 0; !rc && i < c->n; i++) {
    int id = arw_schema_column(ss, i);
    for (size_t r = r0; !rc && r < r1; r++) {
      const txi__row *row = &t->rows[r];
      const char *v = c->src[i] < row->n ? row->cells[c->src[i]] : NULL;
      rc = v ? arw_append_str(sb, id, v, strlen(v)) : arw_append_null(sb, id);
    }
  }
  if (!rc) rc = arw_batch_new(out, ts);
  for (size_t i = 0; !rc && i < c->n; i++) rc = ex_eval(casts[i], sb, *out, arw_schema_column(ts, i));
  if (rc) arw_batch_free(*out), *out = NULL;
  arw_batch_free(sb);
  return rc;
}

static int build(arw_schema **schema, arw_batch ***batches, size_t *n, const txi__table *t, const cols *c,
                 size_t rows) {
  arw_schema *ss = NULL;
  ex_node **casts = calloc(c->n + 1, sizeof *casts);
  int rc = casts ? arw_schema_new(&ss) : oom();
  if (!rc) rc = arw_schema_new(schema);
  for (size_t i = 0; !rc && i < c->n; i++) rc = arw_schema_add(ss, ARW_ROOT, c->name[i], ARW_UTF8, true, NULL);
  for (size_t i = 0; !rc && i < c->n; i++) {
    ex_node *col = NULL, *e = NULL;
    const char *name = c->name[i];
    rc = ex_new_column(&col, &name, 1);
    if (!rc && c->type[i].id != EX_T_STRING) rc = ex_new_cast(&e, col, c->type[i]), col = NULL;
    else e = col, col = NULL;
    if (!rc) rc = ex_bind(&casts[i], e, ss, NULL);
    if (!rc) rc = ex_add_field(*schema, ARW_ROOT, name, casts[i], NULL);
    ex_free(e);
  }
  size_t nb = (t->nrows + rows - 1) / rows;
  if (!rc && !(*batches = calloc(nb + 1, sizeof **batches))) rc = oom();
  for (size_t b = 0; !rc && b < nb; b++) {
    size_t r0 = b * rows, r1 = r0 + rows < t->nrows ? r0 + rows : t->nrows;
    if ((rc = batch(&(*batches)[b], t, c, ss, *schema, casts, r0, r1)))
      rc = dd_err_wrap(rc, "rows %zu to %zu", r0 + 1, r1);
    else (*n)++;
  }
  for (size_t i = 0; casts && i < c->n; i++) ex_free(casts[i]);
  free(casts);
  arw_schema_free(ss);
  return rc;
}

int txi_read_text(arw_schema **schema, arw_batch ***batches, size_t *n, const char *text, size_t len, bool json,
                  const txi_opts *opts) {
  *schema = NULL, *batches = NULL, *n = 0;
  txi_opts def = {0};
  const txi_opts *o = opts ? opts : &def;
  txi__table t = {0};
  cols c = {0};
  int rc = json ? txi__parse_json(&t, text, len) : txi__parse_csv(&t, text, len);
  if (!rc) rc = o->schema ? from_schema(&c, &t, o->schema) : infer(&c, &t, json);
  if (!rc) rc = build(schema, batches, n, &t, &c, o->batch_rows ? o->batch_rows : DEFAULT_ROWS);
  if (rc) {
    for (size_t i = 0; i < *n; i++) arw_batch_free((*batches)[i]);
    free(*batches);
    arw_schema_free(*schema);
    *schema = NULL, *batches = NULL, *n = 0;
  }
  cols_free(&c);
  txi__table_free(&t);
  return rc;
}

int txi_read(arw_schema **schema, arw_batch ***batches, size_t *n, const char *path, const txi_opts *opts) {
  *schema = NULL, *batches = NULL, *n = 0;
  char *text = NULL;
  size_t len = 0;
  int rc = txi_is_text(path) ? slurp(&text, &len, path)
                             : dd_err_set(DD_EINVAL, "%s: not a .csv, .json, .jsonl or .ndjson file", path);
  if (!rc) rc = txi_read_text(schema, batches, n, text, len, is_json(path), opts);
  if (rc && text) rc = dd_err_wrap(rc, "%s", path);
  free(text);
  return rc;
}
