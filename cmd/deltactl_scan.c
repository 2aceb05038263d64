/* deltactl_scan.c: `deltactl table scan PATH --local [--columns a,b] [--where EXPR]
 * [--limit N] [--version N] [--output table|json|csv] [--batch-rows N] [--root DIR]`: reads
 * a table's rows in this process through store/scan (filtered by store/expr with --where)
 * and prints them, batch by batch (never the whole table in memory). Value rendering (the same as the Spark judge's, tests/integration/peers/
 * spark_judge.py): decimals as strings, binary as hex, dates "YYYY-MM-DD", timestamps
 * "YYYY-MM-DDTHH:MM:SS.ffffff" (UTC), structs as objects, arrays as lists, maps as objects
 * (a key that is not a string as its JSON text), NaN/Infinity as strings. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/deltactl_table.h"
#include "common/civil.h"
#include "common/err.h"
#include "store/expr/ex.h"
#include "store/scan/scn.h"

static const char USAGE[] =
    "usage: deltactl table scan PATH --local [options]\n"
    "  --columns a,b       top-level columns to read, in this order (default: all)\n"
    "  --limit N           at most N rows\n"
    "  --version N         read version N (default: latest)\n"
    "  --output table|json|csv  json: one object a line; table: tab-separated with a header\n"
    "  --batch-rows N      rows per batch read (default 65536)\n"
    "  --root DIR          a directory outside the table that data files and deletion\n"
    "                      vectors named by absolute paths may be read from (repeatable)\n"
    "  --where EXPR        only the rows where the Spark SQL predicate EXPR is true (files\n"
    "                      that cannot match are skipped by their stats and partition values)\n"
    "  --local             read the table in this process (the server path is not there yet)\n";

/* ---- a growable line ---------------------------------------------------------------------- */

typedef struct line {
  char *p;
  size_t len, cap;
} line;

static void put(line *l, const char *s, size_t n) {
  if (l->len + n + 1 > l->cap) {
    size_t c = l->cap ? l->cap : 256;
    while (c < l->len + n + 1) c *= 2;
    char *q = realloc(l->p, c);
    if (!q) {
      fprintf(stderr, "deltactl table scan: out of memory\n");
      exit(1);
    }
    l->p = q;
    l->cap = c;
  }
  memcpy(l->p + l->len, s, n);
  l->len += n;
  l->p[l->len] = 0;
}

static void puts_(line *l, const char *s) { put(l, s, strlen(s)); }

static void putf(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(line *l, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  put(l, buf, n < 0 ? 0 : (size_t)n);
}

static void put_json_str(line *l, const uint8_t *s, size_t n) {
  put(l, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(l, e, 2);
    } else if (c < 0x20) {
      putf(l, "\\u%04x", c);
    } else {
      put(l, (const char *)&s[i], 1);
    }
  }
  put(l, "\"", 1);
}

/* ---- values ----------------------------------------------------------------------------- */


static void put_date(line *l, int64_t days) {
  int64_t y;
  unsigned m, d;
  dd_civil_from_days(days, &y, &m, &d);
  putf(l, "%04" PRId64 "-%02u-%02u", y, m, d);
}

static void put_ts(line *l, int64_t us) {
  int64_t days = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
  int64_t rem = us - days * 86400000000LL;
  put_date(l, days);
  int64_t secs = rem / 1000000;
  putf(l, "T%02d:%02d:%02d.%06d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
       (int)(rem % 1000000));
}

static void put_decimal(line *l, const uint8_t *le, int scale) {
  unsigned __int128 u = 0;
  for (int i = 15; i >= 0; i--) u = (u << 8) | le[i];
  bool neg = (le[15] & 0x80) != 0;
  if (neg) u = (unsigned __int128)0 - u;
  char digits[48];
  int n = 0;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  while (n <= scale) digits[n++] = '0';
  if (neg) put(l, "-", 1);
  for (int i = n - 1; i >= 0; i--) {
    put(l, &digits[i], 1);
    if (i == scale && scale > 0) put(l, ".", 1);
  }
}

/* The shortest text that reads back as v (as a float when single). */
static void put_float(line *l, double v, bool single, bool quote_special) {
  if (isnan(v) || isinf(v)) {
    const char *s = isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    if (quote_special) putf(l, "\"%s\"", s);
    else puts_(l, s);
    return;
  }
  char buf[40];
  for (int prec = single ? 6 : 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0"); /* a float stays a float in JSON readers */
  puts_(l, buf);
}

/* Renders slot i of field id. top: a top-level cell of table/csv output (strings bare). */
static int put_value(line *l, const arw_batch *b, int id, size_t i, bool json);

static int put_nested(line *l, const arw_batch *b, int id, const arw_view *v, size_t i) {
  const arw_schema *s = arw_batch_schema(b);
  arw_kind k = arw_field_kind(s, id);
  int rc = 0;
  if (k == ARW_STRUCT) {
    put(l, "{", 1);
    for (int c = 0; c < arw_field_nchildren(s, id) && !rc; c++) {
      if (c) put(l, ", ", 2);
      const char *nm = arw_field_name(s, arw_field_child(s, id, c));
      put_json_str(l, (const uint8_t *)nm, strlen(nm));
      put(l, ": ", 2);
      rc = put_value(l, b, arw_field_child(s, id, c), i, true);
    }
    put(l, "}", 1);
    return rc;
  }
  int32_t a = v->offsets[i], e = v->offsets[i + 1];
  if (k == ARW_LIST) {
    put(l, "[", 1);
    for (int32_t j = a; j < e && !rc; j++) {
      if (j > a) put(l, ", ", 2);
      rc = put_value(l, b, arw_field_child(s, id, 0), (size_t)j, true);
    }
    put(l, "]", 1);
    return rc;
  }
  int key = arw_field_child(s, id, 0), val = arw_field_child(s, id, 1);
  bool str_keys = arw_field_kind(s, key) == ARW_UTF8;
  put(l, "{", 1);
  for (int32_t j = a; j < e && !rc; j++) {
    if (j > a) put(l, ", ", 2);
    if (str_keys) {
      rc = put_value(l, b, key, (size_t)j, true);
    } else { /* the key's JSON text as a string */
      line kl = {0};
      rc = put_value(&kl, b, key, (size_t)j, true);
      put_json_str(l, (const uint8_t *)(kl.p ? kl.p : ""), kl.len);
      free(kl.p);
    }
    put(l, ": ", 2);
    if (!rc) rc = put_value(l, b, val, (size_t)j, true);
  }
  put(l, "}", 1);
  return rc;
}

static int put_value(line *l, const arw_batch *b, int id, size_t i, bool json) {
  arw_view v;
  int rc = arw_batch_view(b, id, &v);
  if (rc) return rc;
  if (!arw_view_valid(&v, i)) {
    puts_(l, json ? "null" : "");
    return 0;
  }
  const arw_schema *s = arw_batch_schema(b);
  const uint8_t *p = v.values;
  switch (v.kind) {
    case ARW_BOOL: puts_(l, arw_view_bool(&v, i) ? "true" : "false"); return 0;
    case ARW_INT8: putf(l, "%d", (int)(int8_t)p[i]); return 0;
    case ARW_INT16: { int16_t x; memcpy(&x, p + 2 * i, 2); putf(l, "%d", x); return 0; }
    case ARW_INT32: { int32_t x; memcpy(&x, p + 4 * i, 4); putf(l, "%" PRId32, x); return 0; }
    case ARW_INT64: { int64_t x; memcpy(&x, p + 8 * i, 8); putf(l, "%" PRId64, x); return 0; }
    case ARW_FLOAT32: { float x; memcpy(&x, p + 4 * i, 4); put_float(l, x, true, json); return 0; }
    case ARW_FLOAT64: { double x; memcpy(&x, p + 8 * i, 8); put_float(l, x, false, json); return 0; }
    case ARW_DATE32:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: {
      int64_t x = 0;
      if (v.kind == ARW_DATE32) {
        int32_t days;
        memcpy(&days, p + 4 * i, 4);
        x = days;
      } else {
        memcpy(&x, p + 8 * i, 8);
      }
      if (json) put(l, "\"", 1);
      if (v.kind == ARW_DATE32) put_date(l, x);
      else put_ts(l, x);
      if (json) put(l, "\"", 1);
      return 0;
    }
    case ARW_DECIMAL128:
      if (json) put(l, "\"", 1);
      put_decimal(l, p + 16 * i, arw_field_scale(s, id));
      if (json) put(l, "\"", 1);
      return 0;
    case ARW_UTF8:
      if (json) put_json_str(l, p + v.offsets[i], (size_t)(v.offsets[i + 1] - v.offsets[i]));
      else put(l, (const char *)p + v.offsets[i], (size_t)(v.offsets[i + 1] - v.offsets[i]));
      return 0;
    case ARW_BINARY:
      if (json) put(l, "\"", 1);
      for (int32_t j = v.offsets[i]; j < v.offsets[i + 1]; j++) putf(l, "%02x", p[j]);
      if (json) put(l, "\"", 1);
      return 0;
    case ARW_NULL: puts_(l, json ? "null" : ""); return 0;
    default: return put_nested(l, b, id, &v, i);
  }
}

/* ---- output ------------------------------------------------------------------------------ */

typedef enum { OUT_TABLE, OUT_JSON, OUT_CSV } out_fmt;

static void put_csv_cell(line *l, const char *s, size_t n) {
  bool quote = strpbrk(s, ",\"\r\n") != NULL;
  if (!quote) {
    put(l, s, n);
    return;
  }
  put(l, "\"", 1);
  for (size_t i = 0; i < n; i++) put(l, s[i] == '"' ? "\"\"" : &s[i], s[i] == '"' ? 2 : 1);
  put(l, "\"", 1);
}

/* The top-level columns to print (field ids of the batch schema). */
typedef struct cols_out {
  int *ids;
  size_t n;
} cols_out;

static void header(const arw_schema *s, const cols_out *co, out_fmt f) {
  if (f == OUT_JSON) return;
  line l = {0};
  for (size_t c = 0; c < co->n; c++) {
    const char *nm = arw_field_name(s, co->ids[c]);
    if (c) put(&l, f == OUT_CSV ? "," : "\t", 1);
    if (f == OUT_CSV) put_csv_cell(&l, nm, strlen(nm));
    else puts_(&l, nm);
  }
  put(&l, "\n", 1);
  fwrite(l.p, 1, l.len, stdout);
  free(l.p);
}

static int print_batch(const arw_batch *b, const cols_out *co, out_fmt f, line *l) {
  const arw_schema *s = arw_batch_schema(b);
  size_t ncols = co->n, rows = arw_batch_rows(b);
  line cell = {0};
  int rc = 0;
  for (size_t r = 0; r < rows && !rc; r++) {
    l->len = 0;
    if (f == OUT_JSON) put(l, "{", 1);
    for (size_t c = 0; c < ncols && !rc; c++) {
      int id = co->ids[c];
      if (c) put(l, f == OUT_JSON ? ", " : f == OUT_CSV ? "," : "\t", f == OUT_JSON ? 2 : 1);
      if (f == OUT_JSON) {
        const char *nm = arw_field_name(s, id);
        put_json_str(l, (const uint8_t *)nm, strlen(nm));
        put(l, ": ", 2);
        rc = put_value(l, b, id, r, true);
      } else {
        cell.len = 0;
        put(&cell, "", 0);
        arw_kind k = arw_field_kind(s, id);
        bool nested = k == ARW_STRUCT || k == ARW_LIST || k == ARW_MAP;
        rc = put_value(&cell, b, id, r, nested);
        if (f == OUT_CSV) put_csv_cell(l, cell.p, cell.len);
        else put(l, cell.p, cell.len);
      }
    }
    if (f == OUT_JSON) put(l, "}", 1);
    put(l, "\n", 1);
    if (fwrite(l->p, 1, l->len, stdout) != l->len) rc = dd_err_set(DD_EIO, "cannot write the output");
  }
  free(cell.p);
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
  out_fmt fmt = OUT_TABLE;
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
      if (!strcmp(val, "json")) fmt = OUT_JSON;
      else if (!strcmp(val, "csv")) fmt = OUT_CSV;
      else if (!strcmp(val, "table")) fmt = OUT_TABLE;
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
    fprintf(stderr, "deltactl table scan: the server path is not there yet; use --local\n");
    return 2;
  }
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  scn_scan *sc = NULL;
  char *cols_copy = cols_text ? strdup(cols_text) : NULL;
  const char **cols = NULL;
  size_t ncols = 0;
  line l = {0};
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
  free(l.p);
  scn_free(sc);
  dl_snapshot_free(s);
  dl_table_free(t);
  free(cols);
  free(cols_copy);
  return rc ? 1 : 0;
}
