/* txi_parse.c: CSV and JSON-lines text parsed into a table of string cells (txi_int.h),
 * with the per-column kinds JSON inference needs. */
#include "store/textin/txi_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

static int oom(void) { return dd_err_set(DD_ENOMEM, "out of memory"); }

void txi__table_free(txi__table *t) {
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t c = 0; c < t->rows[r].n; c++) free(t->rows[r].cells[c]);
    free(t->rows[r].cells);
  }
  for (size_t c = 0; c < t->ncols; c++) free(t->names[c]);
  free(t->rows);
  free(t->names);
  free(t->kinds);
  memset(t, 0, sizeof *t);
}

static int add_col(txi__table *t, const char *name, size_t len) {
  if (t->ncols == t->capcols) {
    size_t c = t->capcols ? t->capcols * 2 : 16;
    char **nn = realloc(t->names, c * sizeof *nn);
    if (!nn) return oom();
    t->names = nn;
    int *nk = realloc(t->kinds, c * sizeof *nk);
    if (!nk) return oom();
    t->kinds = nk;
    t->capcols = c;
  }
  if (!(t->names[t->ncols] = strndup(name, len))) return oom();
  t->kinds[t->ncols++] = TXI__K_NONE;
  return 0;
}

static int new_row(txi__table *t) {
  if (t->nrows == t->caprows) {
    size_t c = t->caprows ? t->caprows * 2 : 64;
    txi__row *nr = realloc(t->rows, c * sizeof *nr);
    if (!nr) return oom();
    t->rows = nr, t->caprows = c;
  }
  txi__row *r = &t->rows[t->nrows++];
  r->n = t->ncols;
  r->cells = calloc(r->n + 1, sizeof *r->cells);
  return r->cells ? 0 : oom();
}

/* ---- CSV ------------------------------------------------------------------------------ */

/* One field at *p (quotes undone) into f; *quoted when it was quoted. Stops at the comma,
 * line end or end of text (not consumed). */
static int csv_field(const char **p, const char *end, dd_buf *f, bool *quoted, size_t *line) {
  const char *s = *p;
  f->len = 0;
  *quoted = s < end && *s == '"';
  if (*quoted) {
    size_t start = *line;
    for (s++;; s++) {
      if (s >= end) return dd_err_set(DD_EINVAL, "line %zu: a quoted field is not closed", start);
      if (*s == '"') {
        if (s + 1 < end && s[1] == '"') dd_buf_putc(f, '"'), s++;
        else break;
      } else {
        if (*s == '\n') (*line)++;
        dd_buf_putc(f, *s);
      }
    }
    s++;
    if (s < end && *s != ',' && *s != '\n' && *s != '\r')
      return dd_err_set(DD_EINVAL, "line %zu: text after a closing quote", *line);
  } else {
    while (s < end && *s != ',' && *s != '\n' && *s != '\r') dd_buf_putc(f, *s++);
  }
  *p = s;
  return f->oom ? oom() : 0;
}

int txi__parse_csv(txi__table *t, const char *text, size_t len) {
  const char *p = text, *end = text + len;
  dd_buf f = {0};
  size_t line = 1;
  int rc = 0;
  bool header = true;
  while (!rc && p < end) {
    if (*p == '\n' || *p == '\r') { /* a blank line */
      line += *p == '\n';
      p++;
      continue;
    }
    size_t col = 0;
    if (!header && (rc = new_row(t))) break;
    for (;;) {
      bool quoted;
      if ((rc = csv_field(&p, end, &f, &quoted, &line))) break;
      if (header) {
        rc = add_col(t, f.p ? f.p : "", f.len);
      } else if (col >= t->ncols) {
        rc = dd_err_set(DD_EINVAL, "line %zu: more fields than the header's %zu", line, t->ncols);
      } else if (f.len) { /* empty, quoted or not, is NULL (Spark's nullValue "") */
        char *v = strndup(f.p ? f.p : "", f.len);
        if (!v) rc = oom();
        t->rows[t->nrows - 1].cells[col] = v;
      }
      col++;
      if (rc || p >= end || *p != ',') break;
      p++;
    }
    if (rc) break;
    if (!header && col != t->ncols)
      rc = dd_err_set(DD_EINVAL, "line %zu: %zu fields, the header has %zu", line, col, t->ncols);
    header = false;
    if (p < end && *p == '\r') p++;
    if (p < end && *p == '\n') p++, line++;
  }
  dd_buf_free(&f);
  if (!rc && !t->ncols) rc = dd_err_set(DD_EINVAL, "the CSV file has no header line");
  return rc;
}

/* ---- JSON lines ------------------------------------------------------------------------- */

static int find_or_add(txi__table *t, const char *key, size_t *out) {
  for (size_t c = 0; c < t->ncols; c++)
    if (!strcmp(t->names[c], key)) return *out = c, 0;
  *out = t->ncols;
  return add_col(t, key, strlen(key));
}

static int kind_of(const json_t *v) {
  if (json_is_boolean(v)) return TXI__K_BOOL;
  if (json_is_integer(v)) return TXI__K_LONG;
  if (json_is_real(v)) return TXI__K_DOUBLE;
  return TXI__K_STRING;
}

/* The kind that holds values of kinds a and b. */
static int widen(int a, int b) {
  if (a == TXI__K_NONE || a == b) return b;
  if ((a == TXI__K_LONG && b == TXI__K_DOUBLE) || (a == TXI__K_DOUBLE && b == TXI__K_LONG)) return TXI__K_DOUBLE;
  return TXI__K_STRING;
}

static char *text_of(const json_t *v) {
  if (json_is_string(v)) return strdup(json_string_value(v));
  if (json_is_true(v)) return strdup("true");
  if (json_is_false(v)) return strdup("false");
  return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

static int json_line(txi__table *t, const char *s, size_t len, size_t line) {
  json_error_t err;
  json_t *o = json_loadb(s, len, JSON_DECODE_ANY, &err);
  if (!json_is_object(o)) {
    json_decref(o);
    return dd_err_set(DD_EINVAL, "line %zu: not a JSON object%s%s", line, o ? "" : ": ", o ? "" : err.text);
  }
  const char *k;
  json_t *v;
  int rc = new_row(t);
  json_object_foreach(o, k, v) {
    size_t c;
    if (rc || (rc = find_or_add(t, k, &c))) break;
    if (json_is_null(v)) continue;
    txi__row *r = &t->rows[t->nrows - 1];
    if (c >= r->n) { /* a key this row added: the row grows */
      char **nc = realloc(r->cells, (c + 2) * sizeof *nc);
      if (!nc) { rc = oom(); break; }
      for (size_t i = r->n; i <= c + 1; i++) nc[i] = NULL;
      r->cells = nc, r->n = c + 1;
    }
    free(r->cells[c]);
    if (!(r->cells[c] = text_of(v))) rc = oom();
    t->kinds[c] = widen(t->kinds[c], kind_of(v));
  }
  json_decref(o);
  return rc;
}

int txi__parse_json(txi__table *t, const char *text, size_t len) {
  const char *p = text, *end = text + len;
  size_t line = 1;
  int rc = 0;
  while (!rc && p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end, *s = p;
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s < e) rc = json_line(t, s, (size_t)(e - s), line);
    p = nl ? nl + 1 : end;
    line++;
  }
  return rc;
}
