/* deltactl_scan.c: `deltactl table scan PATH [--local] [--columns a,b] [--where EXPR]
 * [--limit N] [--version N] [--output table|json|csv] [--batch-rows N] [--root DIR]`: a
 * table's rows, batch by batch (never the whole table in memory). With --local they are read
 * in this process through store/scan (filtered by store/expr with --where); without it the
 * server runs the same options as a query (deltactl_scan_remote.c). Both print through the
 * one renderer, store/query's qry_text (the same as the Spark judge's,
 * tests/integration/peers/spark_judge.py), so both paths print the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_scan.h"
#include "cmd/deltactl_table.h"
#include "common/err.h"
#include "store/expr/ex.h"
#include "store/scan/scn.h"

static const char USAGE[] =
    "usage: deltactl [--server HOST:PORT] table scan PATH [--local] [options]\n"
    "  --columns a,b       top-level columns to read, in this order (default: all)\n"
    "  --limit N           at most N rows\n"
    "  --version N         read version N (default: latest)\n"
    "  --output table|json|csv  json: one object a line; table: tab-separated with a header\n"
    "  --batch-rows N      rows per batch read (default 65536; --local only)\n"
    "  --root DIR          a directory outside the table that data files and deletion\n"
    "                      vectors named by absolute paths may be read from (repeatable;\n"
    "                      --local only: the server uses its storage locations)\n"
    "  --where EXPR        only the rows where the Spark SQL predicate EXPR is true (files\n"
    "                      that cannot match are skipped by their stats and partition values)\n"
    "  --local             read the table in this process (default: the server runs the\n"
    "                      scan, with the options above, through DeltaConnectService)\n";

/* ---- output ------------------------------------------------------------------------------ */

void dctl_scan_csv_cell(qry_text *l, const char *s, size_t n) {
  bool quote = strpbrk(s, ",\"\r\n") != NULL;
  if (!quote) {
    qry_text_put(l, s, n);
    return;
  }
  qry_text_put(l, "\"", 1);
  for (size_t i = 0; i < n; i++) qry_text_put(l, s[i] == '"' ? "\"\"" : &s[i], s[i] == '"' ? 2 : 1);
  qry_text_put(l, "\"", 1);
}

void dctl_scan_header(const char *const *names, size_t n, dctl_scan_fmt f) {
  if (f == DCTL_SCAN_JSON) return;
  qry_text l = QRY_TEXT_INIT;
  for (size_t c = 0; c < n; c++) {
    if (c) qry_text_put(&l, f == DCTL_SCAN_CSV ? "," : "\t", 1);
    if (f == DCTL_SCAN_CSV) dctl_scan_csv_cell(&l, names[c], strlen(names[c]));
    else qry_text_put(&l, names[c], strlen(names[c]));
  }
  qry_text_put(&l, "\n", 1);
  if (l.p) fwrite(l.p, 1, l.len, stdout);
  qry_text_free(&l);
}

void dctl_scan_sep(qry_text *l, dctl_scan_fmt f, size_t c, const char *name) {
  if (c) qry_text_put(l, f == DCTL_SCAN_JSON ? ", " : f == DCTL_SCAN_CSV ? "," : "\t", f == DCTL_SCAN_JSON ? 2 : 1);
  if (f == DCTL_SCAN_JSON) {
    qry_text_json_str(l, name, strlen(name));
    qry_text_put(l, ": ", 2);
  }
}

int dctl_scan_end_row(qry_text *l, dctl_scan_fmt f) {
  if (f == DCTL_SCAN_JSON) qry_text_put(l, "}", 1);
  qry_text_put(l, "\n", 1);
  if (l->oom) return dd_err_set(DD_ENOMEM, "out of memory printing a row");
  if (fwrite(l->p, 1, l->len, stdout) != l->len) return dd_err_set(DD_EIO, "cannot write the output");
  return 0;
}

/* The top-level columns to print (field ids of the batch schema). */
typedef struct cols_out {
  int *ids;
  size_t n;
} cols_out;

static void header(const arw_schema *s, const cols_out *co, dctl_scan_fmt f) {
  const char **names = calloc(co->n + 1, sizeof *names);
  if (!names) return;
  for (size_t c = 0; c < co->n; c++) names[c] = arw_field_name(s, co->ids[c]);
  dctl_scan_header(names, co->n, f);
  free(names);
}

static int print_batch(const arw_batch *b, const cols_out *co, dctl_scan_fmt f, qry_text *l) {
  const arw_schema *s = arw_batch_schema(b);
  size_t rows = arw_batch_rows(b);
  qry_text cell = QRY_TEXT_INIT;
  int rc = 0;
  for (size_t r = 0; r < rows && !rc; r++) {
    qry_text_clear(l);
    if (f == DCTL_SCAN_JSON) qry_text_put(l, "{", 1);
    for (size_t c = 0; c < co->n && !rc; c++) {
      int id = co->ids[c];
      dctl_scan_sep(l, f, c, arw_field_name(s, id));
      arw_kind k = arw_field_kind(s, id);
      bool nested = k == ARW_STRUCT || k == ARW_LIST || k == ARW_MAP;
      if (f == DCTL_SCAN_JSON) {
        rc = qry_text_value(l, b, id, r, true);
      } else {
        qry_text_clear(&cell);
        rc = qry_text_value(&cell, b, id, r, nested);
        if (!rc && f == DCTL_SCAN_CSV) dctl_scan_csv_cell(l, cell.p, cell.len);
        else if (!rc) qry_text_put(l, cell.p, cell.len);
      }
    }
    if (!rc) rc = dctl_scan_end_row(l, f);
  }
  qry_text_free(&cell);
  return rc;
}

/* ---- --where: store/expr's predicate, its data skipping, and the rows it keeps ----------- */

typedef struct where_f {
  ex_node *parsed, *for_skip, *bound;
  arw_schema *logical;  /* the table's whole logical schema, for the skipper's binding */
  ex_skipper *skip;
  arw_batch *kept;
  uint8_t *mask;
  size_t *idx;
  size_t cap;
} where_f;

static void where_free(where_f *w) {
  arw_batch_free(w->kept);
  ex_skipper_free(w->skip);
  ex_free(w->bound);
  ex_free(w->for_skip);
  ex_free(w->parsed);
  arw_schema_free(w->logical);
  free(w->mask);
  free(w->idx);
}

/* Parses text and sets up file skipping for snapshot s in o (which then reads every
 * column: the predicate may use any). */
static int where_begin(where_f *w, const char *text, dl_snapshot *s, scn_opts *o) {
  ex_parse_opts po = EX_PARSE_OPTS_INIT;
  po.allow_alias = false;
  int rc = ex_parse(&w->parsed, text, strlen(text), &po);
  if (!rc) rc = arw_schema_new(&w->logical);
  if (!rc) rc = scn_arrow_schema(w->logical, dl_schema_root(dl_snapshot_schema(s)), NULL, 0);
  if (!rc) rc = ex_bind(&w->for_skip, w->parsed, w->logical, NULL);
  if (!rc) rc = ex_skipper_new(&w->skip, w->for_skip, s);
  if (rc) return dd_err_wrap(rc, "--where");
  o->keep_file = ex_skipper_keep;
  o->keep_ctx = w->skip;
  o->columns = NULL;
  o->num_columns = 0;
  o->limit = -1;
  return 0;
}

/* The rows of b the predicate keeps (at most max) in *out (NULL: none). */
static int where_filter(where_f *w, const arw_batch *b, int64_t max, const arw_batch **out) {
  *out = NULL;
  size_t n = arw_batch_rows(b), ntrue = 0;
  if (n > w->cap) {
    uint8_t *m = realloc(w->mask, n);
    if (m) w->mask = m;
    size_t *x = m ? realloc(w->idx, n * sizeof *x) : NULL;
    if (!m || !x) return dd_err_set(DD_ENOMEM, "out of memory filtering rows");
    w->idx = x;
    w->cap = n;
  }
  int rc = ex_eval_mask(w->bound, b, w->mask, &ntrue);
  if (rc) return dd_err_wrap(rc, "--where");
  size_t k = 0;
  for (size_t i = 0; i < n && (max < 0 || (int64_t)k < max); i++)
    if (w->mask[i]) w->idx[k++] = i;
  if (k == 0) return 0;
  arw_batch_clear(w->kept);
  if ((rc = arw_batch_append_rows(w->kept, b, w->idx, k))) return rc;
  *out = w->kept;
  return 0;
}

/* Field ids of the named columns in the scan's schema (all when none is named). */
static int resolve_columns(const arw_schema *s, const char **names, size_t n, cols_out *co) {
  size_t total = n ? n : arw_schema_ncolumns(s);
  co->ids = calloc(total ? total : 1, sizeof *co->ids);
  if (!co->ids) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < total; i++) {
    int id = n ? arw_schema_find(s, ARW_ROOT, names[i]) : arw_schema_column(s, i);
    for (size_t c = 0; id < 0 && c < arw_schema_ncolumns(s); c++)
      if (!strcasecmp(arw_field_name(s, arw_schema_column(s, c)), names[i]))
        id = arw_schema_column(s, c);
    if (id < 0) return dd_err_set(DD_EINVAL, "scan: no column '%s' in the table", names[i]);
    co->ids[co->n++] = id;
  }
  return 0;
}

/* ---- command ----------------------------------------------------------------------------- */

static bool parse_u64(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || v < 0) return false;
  *out = v;
  return true;
}

/* Splits "a,b" into names (in a copy of the text); *out_n names. */
static int split_columns(char *text, const char ***out, size_t *out_n) {
  size_t n = 1;
  for (char *p = text; *p; p++) n += *p == ',';
  const char **v = calloc(n, sizeof *v);
  if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
  size_t k = 0;
  for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) v[k++] = tok;
  *out = v;
  *out_n = k;
  return 0;
}

int dctl_scan_main(int argc, char **argv) {
  const char *path = NULL, *cols_text = NULL, *where = NULL;
  int64_t limit = -1, version = -1, batch_rows = 0;
  bool local = false;
  dctl_scan_fmt fmt = DCTL_SCAN_TABLE;
  const char *roots[16];
  size_t nroots = 0;
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      fputs(USAGE, stdout);
      return 0;
    } else if (!strcmp(o, "--local")) {
      local = true;
    } else if (!strcmp(o, "--columns") && val) {
      cols_text = argv[++i];
    } else if (!strcmp(o, "--root") && val) {
      if (nroots == sizeof roots / sizeof roots[0]) {
        fprintf(stderr, "deltactl table scan: at most 16 --root\n");
        return 2;
      }
      roots[nroots++] = argv[++i];
    } else if (!strcmp(o, "--where") && val) {
      where = argv[++i];
    } else if ((!strcmp(o, "--limit") || !strcmp(o, "--version") || !strcmp(o, "--batch-rows")) &&
               val) {
      int64_t *dst = o[2] == 'l' ? &limit : o[2] == 'v' ? &version : &batch_rows;
      if (!parse_u64(val, dst)) {
        fprintf(stderr, "deltactl table scan: %s needs a number\n", o);
        return 2;
      }
      i++;
    } else if (!strcmp(o, "--output") && val) {
      val = argv[++i];
      if (!strcmp(val, "json")) fmt = DCTL_SCAN_JSON;
      else if (!strcmp(val, "csv")) fmt = DCTL_SCAN_CSV;
      else if (!strcmp(val, "table")) fmt = DCTL_SCAN_TABLE;
      else {
        fprintf(stderr, "deltactl table scan: --output takes table, json or csv\n");
        return 2;
      }
    } else if (o[0] == '-') {
      fprintf(stderr, "deltactl table scan: unknown option %s (or it needs a value)\n%s", o, USAGE);
      return 2;
    } else if (!path) {
      path = o;
    } else {
      fprintf(stderr, "deltactl table scan: unexpected argument %s\n", o);
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "deltactl table scan: missing PATH\n%s", USAGE);
    return 2;
  }
  if (!local) {
    if (nroots || batch_rows) {
      fprintf(stderr, "deltactl table scan: --root and --batch-rows need --local\n");
      return 2;
    }
    dctl_scan_request q = {path, cols_text, where, limit, version, fmt};
    return dctl_scan_remote(&q);
  }
  char *loc = NULL;
  int code = dctl_tbl_data_path(path, &loc);
  if (code) return code;
  path = loc;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  scn_scan *sc = NULL;
  char *cols_copy = cols_text ? strdup(cols_text) : NULL;
  const char **cols = NULL;
  size_t ncols = 0;
  qry_text l = QRY_TEXT_INIT;
  int rc = cols_text && !cols_copy ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc && cols_copy) rc = split_columns(cols_copy, &cols, &ncols);
  if (!rc) rc = dl_table_open(&t, path);
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  so.version = version;
  if (!rc) rc = dl_snapshot_open(&s, t, &so);
  scn_opts o = SCN_OPTS_INIT;
  o.columns = cols;
  o.num_columns = ncols;
  o.limit = limit;
  o.batch_rows = (size_t)batch_rows;
  o.roots = roots;
  o.num_roots = nroots;
  where_f w = {0};
  cols_out co = {0};
  if (!rc && where) rc = where_begin(&w, where, s, &o);
  if (!rc) rc = scn_open(&sc, t, s, &o);
  if (!rc && where) rc = ex_bind(&w.bound, w.parsed, scn_schema(sc), NULL);
  if (!rc && where) rc = arw_batch_new(&w.kept, scn_schema(sc));
  if (!rc) rc = resolve_columns(scn_schema(sc), where ? cols : NULL, where ? ncols : 0, &co);
  if (!rc) header(scn_schema(sc), &co, fmt);
  const arw_batch *b;
  int64_t printed = 0;
  while (!rc && (limit < 0 || printed < limit) && !(rc = scn_next(sc, &b)) && b) {
    if (where && (rc = where_filter(&w, b, limit < 0 ? -1 : limit - printed, &b))) break;
    if (!b) continue;
    printed += (int64_t)arw_batch_rows(b);
    rc = print_batch(b, &co, fmt, &l);
  }
  if (rc) fprintf(stderr, "deltactl table scan: %s: %s\n", dd_err_name(rc), dd_err_msg());
  where_free(&w);
  free(co.ids);
  qry_text_free(&l);
  scn_free(sc);
  dl_snapshot_free(s);
  dl_table_free(t);
  free(cols);
  free(cols_copy);
  free(loc);
  return rc ? 1 : 0;
}
