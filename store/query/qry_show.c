/* qry_show.c: Spark's text output: df.show() (Dataset.showString with ToPrettyString cell
 * text: NULL, [hex bytes], {struct, fields}, [array, items], {key -> value}, Java's
 * Double.toString, dates and UTC timestamps as Spark prints them), printSchema's tree
 * string and simpleString type names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/civil.h"
#include "store/query/qry_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

/* ======================= cell text ======================= */

/* Java's Double.toString / Float.toString: the shortest digits that read back, in plain
 * notation for 1e-3 <= |v| < 1e7, else d.dddE[-]n; NaN, Infinity, -Infinity. */
static void java_double(FILE *f, double v, bool is_float) {
  if (isnan(v)) { fputs("NaN", f); return; }
  if (isinf(v)) { fputs(v < 0 ? "-Infinity" : "Infinity", f); return; }
  if (v == 0) { fputs(signbit(v) ? "-0.0" : "0.0", f); return; }
  char buf[40];
  int prec = 1;
  for (; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
    if (is_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  /* buf: [-]d.ddde[+-]xx */
  char digits[24];
  size_t nd = 0;
  const char *p = buf;
  bool neg = *p == '-';
  if (neg) p++;
  for (; *p && *p != 'e'; p++)
    if (*p != '.') digits[nd++] = *p;
  int exp = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (neg) fputc('-', f);
  double a = fabs(v);
  if (a >= 1e-3 && a < 1e7) {
    if (exp >= 0) {
      for (int i = 0; i <= exp; i++) fputc(i < (int)nd ? digits[i] : '0', f);
      fputc('.', f);
      if ((int)nd > exp + 1) fwrite(digits + exp + 1, 1, nd - (size_t)exp - 1, f);
      else fputc('0', f);
    } else {
      fputs("0.", f);
      for (int i = 0; i < -exp - 1; i++) fputc('0', f);
      fwrite(digits, 1, nd, f);
    }
  } else {
    fputc(digits[0], f);
    fputc('.', f);
    if (nd > 1) fwrite(digits + 1, 1, nd - 1, f);
    else fputc('0', f);
    fprintf(f, "E%d", exp);
  }
}

static void fmt_date(FILE *f, int64_t days) {
  int64_t y;
  unsigned m, d;
  dd_civil_from_days(days, &y, &m, &d);
  if (y < 0 || y > 9999) fprintf(f, "%+05lld-%02u-%02u", (long long)y, m, d);
  else fprintf(f, "%04lld-%02u-%02u", (long long)y, m, d);
}

static void fmt_ts(FILE *f, int64_t us) {
  int64_t days = us / 86400000000LL, rem = us % 86400000000LL;
  if (rem < 0) rem += 86400000000LL, days--;
  fmt_date(f, days);
  int64_t secs = rem / 1000000, frac = rem % 1000000;
  fprintf(f, " %02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
  if (frac) {
    char b[8];
    snprintf(b, sizeof b, "%06lld", (long long)frac);
    size_t n = 6;
    while (b[n - 1] == '0') n--;
    fprintf(f, ".%.*s", (int)n, b);
  }
}

static void fmt_dec(FILE *f, ex_i128 v, int scale) {
  char b[48];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  do b[n++] = (char)('0' + (int)(u % 10)), u /= 10; while (u);
  while (n <= scale) b[n++] = '0';
  if (neg) fputc('-', f);
  for (int i = n - 1; i >= 0; i--) {
    fputc(b[i], f);
    if (i == scale && scale > 0) fputc('.', f);
  }
}

static void fmt_cell(FILE *f, const arw_batch *b, int id, size_t r, bool top);

static void fmt_children(FILE *f, const arw_batch *b, int id, const arw_view *v, size_t r) {
  const arw_schema *s = arw_batch_schema(b);
  switch (v->kind) {
    case ARW_STRUCT:
      fputc('{', f);
      for (int k = 0; k < arw_field_nchildren(s, id); k++) {
        if (k) fputs(", ", f);
        fmt_cell(f, b, arw_field_child(s, id, k), r, false);
      }
      fputc('}', f);
      return;
    case ARW_LIST:
      fputc('[', f);
      for (int32_t e = v->offsets[r]; e < v->offsets[r + 1]; e++) {
        if (e > v->offsets[r]) fputs(", ", f);
        fmt_cell(f, b, arw_field_child(s, id, 0), (size_t)e, false);
      }
      fputc(']', f);
      return;
    default: /* MAP */
      fputc('{', f);
      for (int32_t e = v->offsets[r]; e < v->offsets[r + 1]; e++) {
        if (e > v->offsets[r]) fputs(", ", f);
        fmt_cell(f, b, arw_field_child(s, id, 0), (size_t)e, false);
        fputs(" -> ", f);
        fmt_cell(f, b, arw_field_child(s, id, 1), (size_t)e, false);
      }
      fputc('}', f);
  }
}

static void fmt_cell(FILE *f, const arw_batch *b, int id, size_t r, bool top) {
  arw_view v;
  (void)top;
  if (arw_batch_view(b, id, &v)) { dd_err_clear(); return; }
  if (!arw_view_valid(&v, r)) { fputs("NULL", f); return; }
  int64_t i = 0;
  switch (v.kind) {
    case ARW_BOOL: fputs(arw_view_bool(&v, r) ? "true" : "false", f); return;
    case ARW_INT8: fprintf(f, "%d", ((const int8_t *)v.values)[r]); return;
    case ARW_INT16: { int16_t x; memcpy(&x, v.values + 2 * r, 2); fprintf(f, "%d", x); return; }
    case ARW_INT32: { int32_t x; memcpy(&x, v.values + 4 * r, 4); fprintf(f, "%d", x); return; }
    case ARW_DATE32: { int32_t x; memcpy(&x, v.values + 4 * r, 4); fmt_date(f, x); return; }
    case ARW_INT64: memcpy(&i, v.values + 8 * r, 8); fprintf(f, "%lld", (long long)i); return;
    case ARW_TIMESTAMP: case ARW_TIMESTAMP_UTC: memcpy(&i, v.values + 8 * r, 8); fmt_ts(f, i); return;
    case ARW_FLOAT32: { float x; memcpy(&x, v.values + 4 * r, 4); java_double(f, x, true); return; }
    case ARW_FLOAT64: { double x; memcpy(&x, v.values + 8 * r, 8); java_double(f, x, false); return; }
    case ARW_DECIMAL128: {
      ex_i128 x;
      memcpy(&x, v.values + 16 * r, 16);
      fmt_dec(f, x, arw_field_scale(arw_batch_schema(b), id));
      return;
    }
    case ARW_UTF8: fwrite(v.values + v.offsets[r], 1, (size_t)(v.offsets[r + 1] - v.offsets[r]), f); return;
    case ARW_BINARY:
      fputc('[', f);
      for (int32_t k = v.offsets[r]; k < v.offsets[r + 1]; k++) fprintf(f, k > v.offsets[r] ? " %02X" : "%02X", v.values[k]);
      fputc(']', f);
      return;
    case ARW_NULL: fputs("NULL", f); return;
    default: fmt_children(f, b, id, &v, r); return;
  }
}

/* ======================= showString ======================= */

typedef struct cell { char *s; size_t len, width; } cell;

/* Code points in s (Spark counts display width; wide characters are not doubled here). */
static size_t width_of(const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
  return w;
}

/* Byte length of the first k code points. */
static size_t prefix_bytes(const char *s, size_t n, size_t k) {
  size_t i = 0;
  for (size_t cp = 0; i < n; i++) {
    if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == k) break;
  }
  return i;
}

/* Spark's escapeMetaCharacters, then its truncation. */
static int make_cell(cell *c, const char *raw, size_t n, int32_t truncate) {
  size_t len = 0;
  char *s = NULL;
  FILE *f = open_memstream(&s, &len);
  if (!f) return OOM();
  static const char esc[][2] = {{'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}, {'\f', 'f'}, {'\b', 'b'}, {'\v', 'v'}, {'\a', 'a'}};
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < sizeof esc / sizeof esc[0] && esc[k][0] != raw[i]) k++;
    if (k < sizeof esc / sizeof esc[0]) fputc('\\', f), fputc(esc[k][1], f);
    else fputc(raw[i], f);
  }
  if (fclose(f) || !s) return free(s), OOM();
  size_t w = width_of(s, len);
  if (truncate > 0 && w > (size_t)truncate) {
    size_t keep = truncate < 4 ? (size_t)truncate : (size_t)truncate - 3;
    len = prefix_bytes(s, len, keep);
    char *t = realloc(s, len + 4);
    if (!t) return free(s), OOM();
    s = t;
    if (truncate >= 4) memcpy(s + len, "...", 3), len += 3;
    s[len] = 0;
    w = width_of(s, len);
  }
  *c = (cell){s, len, w};
  return 0;
}

static int cell_text(cell *c, const arw_batch *b, int id, size_t r, int32_t truncate) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (!f) return OOM();
  fmt_cell(f, b, id, r, true);
  if (fclose(f) || !s) return free(s), OOM();
  int rc = make_cell(c, s, len, truncate);
  free(s);
  return rc;
}

static void pad(FILE *f, const cell *c, size_t w, bool left) {
  if (left)
    for (size_t i = c->width; i < w; i++) fputc(' ', f);
  fwrite(c->s, 1, c->len, f);
  if (!left)
    for (size_t i = c->width; i < w; i++) fputc(' ', f);
}

static void render(FILE *f, cell *cells, size_t ncols, size_t nrows, int32_t truncate, bool vertical) {
  size_t *w = calloc(ncols + 1, sizeof *w);
  if (!w) return;
  if (!vertical) {
    for (size_t c = 0; c < ncols; c++) {
      w[c] = 3;
      for (size_t r = 0; r <= nrows; r++) w[c] = cells[r * ncols + c].width > w[c] ? cells[r * ncols + c].width : w[c];
    }
    for (int line = 0; line < 2 + (int)nrows + 2; line++) {
      bool sep = line == 0 || line == 2 || line == (int)nrows + 3;
      size_t r = line == 1 ? 0 : (size_t)line - 2;
      fputc(sep ? '+' : '|', f);
      for (size_t c = 0; c < ncols; c++) {
        if (sep)
          for (size_t k = 0; k < w[c]; k++) fputc('-', f);
        else
          pad(f, &cells[r * ncols + c], w[c], truncate > 0);
        fputc(sep ? '+' : '|', f);
      }
      fputc('\n', f);
    }
  } else {
    size_t nw = 3, dw = 3;
    for (size_t c = 0; c < ncols; c++) nw = cells[c].width > nw ? cells[c].width : nw;
    for (size_t r = 1; r <= nrows; r++)
      for (size_t c = 0; c < ncols; c++) dw = cells[r * ncols + c].width > dw ? cells[r * ncols + c].width : dw;
    for (size_t r = 1; r <= nrows; r++) {
      int n = fprintf(f, "-RECORD %zu", r - 1);
      for (size_t k = (size_t)n; k < nw + dw + 5; k++) fputc('-', f);
      fputc('\n', f);
      for (size_t c = 0; c < ncols; c++) {
        fputc(' ', f);
        pad(f, &cells[c], nw, false);
        fputs(" | ", f);
        pad(f, &cells[r * ncols + c], dw, false);
        fputs(" \n", f);
      }
    }
    if (!nrows) fputs("(0 rows)\n", f);
  }
  free(w);
}

int qry_show_string(char **out, qry_op *op, int32_t num_rows, int32_t truncate, bool vertical) {
  *out = NULL;
  if (num_rows < 0) num_rows = 0;
  const arw_schema *s = qry_schema(op);
  size_t ncols = arw_schema_ncolumns(s), nrows = 0, cap = 16;
  cell *cells = calloc((cap + 1) * (ncols ? ncols : 1), sizeof *cells);
  int rc = cells ? 0 : OOM();
  for (size_t c = 0; !rc && c < ncols; c++) {
    const char *n = arw_field_name(s, arw_schema_column(s, c));
    rc = make_cell(&cells[c], n, strlen(n), truncate);
  }
  bool more = false;
  const arw_batch *b;
  while (!rc && !more && !(rc = qry_next(op, &b)) && b) {
    for (size_t r = 0; !rc && r < arw_batch_rows(b); r++) {
      if (nrows == (size_t)num_rows) { more = true; break; }
      if (nrows == cap) {
        cell *n = realloc(cells, (2 * cap + 1) * (ncols ? ncols : 1) * sizeof *n);
        if (!n) { rc = OOM(); break; }
        cells = n, cap *= 2;
      }
      nrows++;
      for (size_t c = 0; !rc && c < ncols; c++)
        rc = cell_text(&cells[nrows * ncols + c], b, arw_schema_column(s, c), r, truncate);
    }
  }
  size_t len = 0;
  FILE *f = rc ? NULL : open_memstream(out, &len);
  if (!rc && !f) rc = OOM();
  if (f) {
    render(f, cells, ncols, nrows, truncate, vertical);
    if (more) fprintf(f, "only showing top %d %s\n", num_rows, num_rows == 1 ? "row" : "rows");
    if (fclose(f)) rc = OOM();
  }
  for (size_t i = 0; cells && i < (nrows + 1) * ncols; i++) free(cells[i].s);
  free(cells);
  if (rc) free(*out), *out = NULL;
  return rc;
}

/* ======================= types ======================= */

int qry_type_string(char **out, const arw_schema *s, int id) { return arw_type_string(out, s, id); }

/* printSchema's typeName: long, integer, string, struct, array, map, decimal(p,s), ... */
static void type_name(FILE *f, const arw_schema *s, int id) {
  static const char *const names[] = {
      [ARW_UTF8] = "string", [ARW_BINARY] = "binary", [ARW_INT32] = "integer", [ARW_INT64] = "long",
      [ARW_FLOAT64] = "double", [ARW_BOOL] = "boolean", [ARW_DATE32] = "date",
      [ARW_TIMESTAMP] = "timestamp_ntz", [ARW_TIMESTAMP_UTC] = "timestamp", [ARW_INT8] = "byte",
      [ARW_INT16] = "short", [ARW_FLOAT32] = "float", [ARW_NULL] = "void", [ARW_LIST] = "array",
      [ARW_MAP] = "map", [ARW_STRUCT] = "struct"};
  arw_kind k = arw_field_kind(s, id);
  if (k == ARW_DECIMAL128) fprintf(f, "decimal(%d,%d)", arw_field_precision(s, id), arw_field_scale(s, id));
  else fputs(k < sizeof names / sizeof names[0] && names[k] ? names[k] : "?", f);
}

static void tree(FILE *f, const arw_schema *s, int id, const char *name, const char *null_word, bool show_null,
                 int depth, int level) {
  if (level > 0 && depth > level) return;
  for (int i = 1; i < depth; i++) fputs(" |   ", f);
  fprintf(f, " |-- %s: ", name);
  type_name(f, s, id);
  if (show_null) fprintf(f, " (%s = %s)", null_word, arw_field_nullable(s, id) ? "true" : "false");
  fputc('\n', f);
  arw_kind k = arw_field_kind(s, id);
  if (k == ARW_STRUCT)
    for (int c = 0; c < arw_field_nchildren(s, id); c++) {
      int ch = arw_field_child(s, id, c);
      tree(f, s, ch, arw_field_name(s, ch), "nullable", true, depth + 1, level);
    }
  if (k == ARW_LIST)
    tree(f, s, arw_field_child(s, id, 0), "element", "containsNull", true, depth + 1, level);
  if (k == ARW_MAP) {
    tree(f, s, arw_field_child(s, id, 0), "key", "", false, depth + 1, level);
    tree(f, s, arw_field_child(s, id, 1), "value", "valueContainsNull", true, depth + 1, level);
  }
}

int qry_tree_string(char **out, const arw_schema *s, int level) {
  size_t len = 0;
  FILE *f = open_memstream(out, &len);
  if (!f) return OOM();
  fputs("root\n", f);
  for (size_t c = 0; c < arw_schema_ncolumns(s); c++) {
    int id = arw_schema_column(s, c);
    tree(f, s, id, arw_field_name(s, id), "nullable", true, 1, level);
  }
  return fclose(f) ? OOM() : 0;
}
