/* dw_stats.c: the add action's stats JSON (see dw_int.h for what Delta writes): which
 * columns get stats, min/max/nullCount accumulation, string truncation, and the JSON text
 * with Delta's value formats (dates yyyy-MM-dd, timestamps yyyy-MM-ddTHH:mm:ss.SSS[Z]). */
#include "store/dwrite/dw_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/civil.h"

/* ---- which columns --------------------------------------------------------------------- */

typedef struct plan {
  dw__stats *st;
  size_t cap;
  const char *path[64], *logical[64];
  size_t depth;
  bool mapped;
  int64_t num_indexed;      /* -1: all */
  const char *stats_cols;   /* delta.dataSkippingStatsColumns or NULL */
} plan;

static dw__skind skind(const dl_type *t) {
  switch (t->kind) {
    case DL_TYPE_BYTE: case DL_TYPE_SHORT: case DL_TYPE_INTEGER: case DL_TYPE_LONG:
      return DW__S_INT;
    case DL_TYPE_FLOAT: return DW__S_FLOAT;
    case DL_TYPE_DOUBLE: return DW__S_DOUBLE;
    case DL_TYPE_DATE: return DW__S_DATE;
    case DL_TYPE_TIMESTAMP: return DW__S_TS;
    case DL_TYPE_TIMESTAMP_NTZ: return DW__S_TS_NTZ;
    case DL_TYPE_STRING: return DW__S_STRING;
    case DL_TYPE_DECIMAL: return DW__S_DECIMAL;
    default: return DW__S_NULLS;
  }
}

/* Is the logical dotted path (depth parts) named by the comma-separated list, itself or
 * through an enclosing struct? */
static bool listed(const char *list, const char *const *logical, size_t depth) {
  const char *p = list;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    const char *e = p;
    while (*e && *e != ',') e++;
    const char *q = e;
    while (q > p && q[-1] == ' ') q--;
    /* compare "a.b" against the path's first segments */
    const char *s = p;
    size_t d = 0;
    bool ok = q > p;
    while (ok && s < q && d < depth) {
      size_t n = strlen(logical[d]);
      if ((size_t)(q - s) < n || strncasecmp(s, logical[d], n) != 0) ok = false;
      else if (s + n == q) { s = q; d++; break; }
      else if (s[n] == '.') { s += n + 1; d++; }
      else ok = false;
    }
    if (ok && s == q) return true;
    p = e;
  }
  return false;
}

static int add_col(plan *p, const dl_type *t) {
  dw__stats *st = p->st;
  if (st->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 16;
    dw__stat *n = realloc(st->cols, cap * sizeof *n);
    if (!n) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
    st->cols = n;
    p->cap = cap;
  }
  dw__stat *c = &st->cols[st->n];
  memset(c, 0, sizeof *c);
  c->path = malloc(p->depth * sizeof *c->path);
  if (!c->path) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  memcpy(c->path, p->path, p->depth * sizeof *c->path);
  c->depth = p->depth;
  c->leaf = -1;
  c->kind = skind(t);
  c->scale = t->scale;
  if (p->stats_cols) c->indexed = listed(p->stats_cols, p->logical, p->depth);
  else c->indexed = p->num_indexed < 0 || (int64_t)st->n < p->num_indexed;
  st->n++;
  return 0;
}

static int walk(plan *p, const dl_type *t) {
  if (t->kind != DL_TYPE_STRUCT) return add_col(p, t);
  if (p->depth >= 64) return dd_err_set(DD_EUNSUPPORTED, "dwrite: schema nested too deeply");
  for (size_t i = 0; i < t->num_fields; i++) {
    const dl_field *f = &t->fields[i];
    p->path[p->depth] = p->mapped && f->physical_name ? f->physical_name : f->name;
    p->logical[p->depth++] = f->name;
    int rc = walk(p, f->type);
    p->depth--;
    if (rc) return rc;
  }
  return 0;
}

static bool is_partition(const char *name, const char *const *cols, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(name, cols[i]) == 0) return true;
  return false;
}

int dw__stats_plan(dw__stats *st, const dl_type *root, const char *const *partition_cols,
                   size_t npart, const char *conf) {
  memset(st, 0, sizeof *st);
  plan p = {.st = st, .num_indexed = 32};
  const char *v = NULL, *mode = NULL;
  if (conf && dl_kv_get(conf, "delta.dataSkippingNumIndexedCols", &v) && v) {
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end || n < -1)
      return dd_err_set(DD_EINVAL, "delta.dataSkippingNumIndexedCols '%s' is not a count", v);
    p.num_indexed = n;
  }
  if (conf && dl_kv_get(conf, "delta.dataSkippingStatsColumns", &v) && v && *v)
    p.stats_cols = v;
  st->prefix_len = 32;
  if (conf && dl_kv_get(conf, "delta.dataSkippingStringPrefixLength", &v) && v) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > 4096)
      return dd_err_set(DD_EINVAL, "delta.dataSkippingStringPrefixLength '%s' is not 1..4096", v);
    st->prefix_len = (int)n;
  }
  if (conf && dl_kv_get(conf, "delta.columnMapping.mode", &mode) && mode)
    p.mapped = strcmp(mode, "name") == 0 || strcmp(mode, "id") == 0;
  if (conf && dl_kv_get(conf, "delta.enableDeletionVectors", &v) && v)
    st->tight_bounds = strcasecmp(v, "true") == 0;
  int rc = 0;
  for (size_t i = 0; i < root->num_fields && !rc; i++) {
    const dl_field *f = &root->fields[i];
    if (is_partition(f->name, partition_cols, npart)) continue;
    p.path[0] = p.mapped && f->physical_name ? f->physical_name : f->name;
    p.logical[0] = f->name;
    p.depth = 1;
    rc = walk(&p, f->type);
  }
  if (rc) dw__stats_free(st);
  return rc;
}

void dw__stats_reset(dw__stats *st) {
  for (size_t i = 0; i < st->n; i++) {
    dw__stat *c = &st->cols[i];
    c->has = c->bad = false;
    c->nulls = 0;
    c->smin.len = c->smax.len = 0;
  }
}

void dw__stats_free(dw__stats *st) {
  for (size_t i = 0; i < st->n; i++) {
    free(st->cols[i].path);
    dd_buf_free(&st->cols[i].smin);
    dd_buf_free(&st->cols[i].smax);
  }
  free(st->cols);
  memset(st, 0, sizeof *st);
}

/* ---- accumulation ---------------------------------------------------------------------- */

void dw__stat_int(dw__stat *c, int64_t v) {
  if (!c->has) { c->imin = c->imax = v; c->has = true; return; }
  if (v < c->imin) c->imin = v;
  if (v > c->imax) c->imax = v;
}

void dw__stat_real(dw__stat *c, double v) {
  if (!isfinite(v)) { c->bad = true; return; }
  if (!c->has) { c->dmin = c->dmax = v; c->has = true; return; }
  if (v < c->dmin) c->dmin = v;
  if (v > c->dmax) c->dmax = v;
}

void dw__stat_dec(dw__stat *c, dw__i128 v) {
  if (!c->has) { c->qmin = c->qmax = v; c->has = true; return; }
  if (v < c->qmin) c->qmin = v;
  if (v > c->qmax) c->qmax = v;
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  size_t n = an < bn ? an : bn;
  int r = n ? memcmp(a, b, n) : 0;
  return r ? r : (an > bn) - (an < bn);
}

static void set_buf(dd_buf *b, const uint8_t *p, size_t n) {
  b->len = 0;
  dd_buf_put(b, p, n);
  if (!b->p) dd_buf_put(b, "", 0);
}

void dw__stat_str(dw__stat *c, const uint8_t *p, size_t n) {
  if (!c->has) {
    set_buf(&c->smin, p, n);
    set_buf(&c->smax, p, n);
    c->has = true;
    return;
  }
  if (bytes_cmp(p, n, (const uint8_t *)c->smin.p, c->smin.len) < 0) set_buf(&c->smin, p, n);
  if (bytes_cmp(p, n, (const uint8_t *)c->smax.p, c->smax.len) > 0) set_buf(&c->smax, p, n);
}

/* ---- ranges from the Parquet writer ---- */

/* A PLAIN number of 4 or 8 bytes (little-endian) as an integer and as a real. */
static void le_num(const pq_bytes *b, int64_t *i, double *d) {
  uint8_t raw[8] = {0};
  memcpy(raw, b->ptr, b->len < 8 ? b->len : 8);
  if (b->len == 4) {
    int32_t x;
    float f;
    memcpy(&x, raw, 4), memcpy(&f, raw, 4);
    *i = x, *d = f;
  } else {
    memcpy(i, raw, 8), memcpy(d, raw, 8);
  }
}

int dw__stats_take_ranges(dw__stats *st, const pq_writer *pw) {
  for (size_t i = 0; i < st->n; i++) {
    dw__stat *c = &st->cols[i];
    if (!c->indexed || c->leaf < 0 || !dw__range_kind(c->kind)) continue;
    pq_range r;
    int rc = pq_writer_leaf_range(pw, (size_t)c->leaf, &r);
    if (rc) return rc;
    if (r.nan) c->bad = true;
    if (!r.has || c->bad) continue;
    switch (c->kind) {
      case DW__S_STRING:
        dw__stat_str(c, r.min.ptr, r.min.len);
        dw__stat_str(c, r.max.ptr, r.max.len);
        break;
      default: {
        int64_t lo, hi;
        double dlo, dhi;
        le_num(&r.min, &lo, &dlo);
        le_num(&r.max, &hi, &dhi);
        if (c->kind == DW__S_FLOAT || c->kind == DW__S_DOUBLE) dw__stat_real(c, dlo), dw__stat_real(c, dhi);
        else dw__stat_int(c, lo), dw__stat_int(c, hi);
        break;
      }
    }
  }
  return 0;
}

/* ---- string truncation ----------------------------------------------------------------- */

/* Bytes of the UTF-8 sequence at p (1 for an invalid lead byte) and its code point. */
static size_t utf8_next(const uint8_t *p, size_t n, uint32_t *cp) {
  uint8_t b = p[0];
  size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (len > n) len = 1;
  uint32_t v = len == 1 ? b : len == 2 ? b & 0x1f : len == 3 ? b & 0x0f : b & 0x07;
  for (size_t i = 1; i < len; i++) v = v << 6 | (p[i] & 0x3f);
  *cp = v;
  return len;
}

/* Byte offset after `units` UTF-16 units (never inside a code point: a supplementary
 * character straddling the limit is kept whole); *got receives the units taken. */
static size_t take_units(const uint8_t *p, size_t n, size_t units, size_t *got) {
  size_t off = 0, u = 0;
  while (off < n && u < units) {
    uint32_t cp;
    off += utf8_next(p + off, n - off, &cp);
    u += cp >= 0x10000 ? 2 : 1;
  }
  *got = u;
  return off;
}

static size_t count_units(const uint8_t *p, size_t n) {
  size_t got;
  take_units(p, n, SIZE_MAX, &got);
  return got;
}

size_t dw__trunc_min(const uint8_t *p, size_t n, int prefix_len) {
  size_t got;
  return take_units(p, n, (size_t)prefix_len, &got);
}

size_t dw__trunc_max(uint8_t *out, const uint8_t *p, size_t n, int prefix_len, bool *ok) {
  *ok = true;
  size_t total = count_units(p, n);
  if (total <= (size_t)prefix_len) {
    memcpy(out, p, n);
    return n;
  }
  size_t units;
  size_t off = take_units(p, n, (size_t)prefix_len, &units);
  while (units <= (size_t)prefix_len * 2) {
    if (off >= n) { /* the whole string fits */
      memcpy(out, p, n);
      return n;
    }
    uint32_t cp;
    size_t len = utf8_next(p + off, n - off, &cp);
    if (cp == 0x10FFFF) { /* cannot be topped: keep it and look further */
      off += len;
      units += 2;
      continue;
    }
    memcpy(out, p, off);
    if (cp < 0x7F) {
      out[off] = 0x7F;
      return off + 1;
    }
    memcpy(out + off, "\xF4\x8F\xBF\xBF", 4);
    return off + 4;
  }
  *ok = false;
  return 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_str(dd_buf *b, const uint8_t *p, size_t n) {
  dd_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    if (c == '"' || c == '\\') {
      dd_buf_putc(b, '\\');
      dd_buf_putc(b, (char)c);
    } else if (c < 0x20) {
      dd_buf_printf(b, "\\u%04x", c);
    } else {
      dd_buf_putc(b, (char)c);
    }
  }
  dd_buf_putc(b, '"');
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

static void json_date(dd_buf *b, int64_t days) {
  int64_t y;
  unsigned m, d;
  dd_civil_from_days(days, &y, &m, &d);
  dd_buf_printf(b, "\"%04lld-%02u-%02u\"", (long long)y, m, d);
}

static void json_ts(dd_buf *b, int64_t micros, bool utc) {
  int64_t ms = floor_div(micros, 1000);
  int64_t days = floor_div(ms, 86400000);
  int64_t in_day = ms - days * 86400000;
  int64_t y;
  unsigned m, d;
  dd_civil_from_days(days, &y, &m, &d);
  dd_buf_printf(b, "\"%04lld-%02u-%02uT%02d:%02d:%02d.%03d%s\"", (long long)y, m, d,
                (int)(in_day / 3600000), (int)(in_day / 60000 % 60), (int)(in_day / 1000 % 60),
                (int)(in_day % 1000), utc ? "Z" : "");
}

static void json_dec(dd_buf *b, dw__i128 v, int scale) {
  char digits[48];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  while (n <= scale) digits[n++] = '0';
  if (neg) dd_buf_putc(b, '-');
  for (int i = n - 1; i >= 0; i--) {
    dd_buf_putc(b, digits[i]);
    if (i == scale && scale > 0) dd_buf_putc(b, '.');
  }
}

static void json_real(dd_buf *b, double v, bool single) {
  char tmp[40];
  snprintf(tmp, sizeof tmp, single ? "%.9g" : "%.17g", v);
  dd_buf_puts(b, tmp);
  if (!strpbrk(tmp, ".eE")) dd_buf_puts(b, ".0");
}

typedef enum { J_MIN, J_MAX, J_NULLS } jpart;

/* Does column c have an entry in this part; for a max, *tmp gets its truncated bytes. */
static bool has_entry(const dw__stats *st, const dw__stat *c, jpart part) {
  if (!c->indexed) return false;
  if (part == J_NULLS) return true;
  if (!c->has || c->bad || c->kind == DW__S_NULLS) return false;
  if (c->kind == DW__S_STRING && part == J_MAX) {
    uint8_t *tmp = malloc((size_t)st->prefix_len * 8 + 8);
    bool ok = false;
    if (tmp) dw__trunc_max(tmp, (const uint8_t *)c->smax.p, c->smax.len, st->prefix_len, &ok);
    free(tmp);
    return ok;
  }
  return true;
}

static void entry_value(dd_buf *b, const dw__stats *st, const dw__stat *c, jpart part) {
  bool mn = part == J_MIN;
  switch (c->kind) {
    case DW__S_INT: dd_buf_printf(b, "%lld", (long long)(mn ? c->imin : c->imax)); break;
    case DW__S_FLOAT: case DW__S_DOUBLE:
      json_real(b, mn ? c->dmin : c->dmax, c->kind == DW__S_FLOAT);
      break;
    case DW__S_DATE: json_date(b, mn ? c->imin : c->imax); break;
    case DW__S_TS: case DW__S_TS_NTZ:
      json_ts(b, mn ? c->imin : c->imax, c->kind == DW__S_TS);
      break;
    case DW__S_DECIMAL: json_dec(b, mn ? c->qmin : c->qmax, c->scale); break;
    case DW__S_STRING: {
      const dd_buf *s = mn ? &c->smin : &c->smax;
      if (mn) {
        json_str(b, (const uint8_t *)s->p, dw__trunc_min((const uint8_t *)s->p, s->len,
                                                         st->prefix_len));
        break;
      }
      uint8_t *tmp = malloc((size_t)st->prefix_len * 8 + 8);
      bool ok = false;
      size_t n = tmp ? dw__trunc_max(tmp, (const uint8_t *)s->p, s->len, st->prefix_len, &ok) : 0;
      if (!tmp) b->oom = true;
      else json_str(b, tmp, n);
      free(tmp);
      break;
    }
    default: break;
  }
}

/* One of minValues / maxValues / nullCount: nested objects opened and closed as the
 * columns' paths (in schema order, so a struct's columns are contiguous) go. */
static void json_part(dd_buf *b, const dw__stats *st, jpart part) {
  dd_buf_putc(b, '{');
  const dw__stat *prev = NULL;
  for (size_t i = 0; i < st->n; i++) {
    const dw__stat *c = &st->cols[i];
    if (!has_entry(st, c, part)) continue;
    size_t common = 0;
    if (prev)
      while (common + 1 < prev->depth && common + 1 < c->depth &&
             strcmp(prev->path[common], c->path[common]) == 0)
        common++;
    if (prev) {
      for (size_t d = common + 1; d < prev->depth; d++) dd_buf_putc(b, '}');
      dd_buf_putc(b, ',');
    }
    for (size_t d = common; d + 1 < c->depth; d++) {
      json_str(b, (const uint8_t *)c->path[d], strlen(c->path[d]));
      dd_buf_puts(b, ":{");
    }
    json_str(b, (const uint8_t *)c->path[c->depth - 1], strlen(c->path[c->depth - 1]));
    dd_buf_putc(b, ':');
    if (part == J_NULLS) dd_buf_printf(b, "%lld", (long long)c->nulls);
    else entry_value(b, st, c, part);
    prev = c;
  }
  if (prev)
    for (size_t d = 1; d < prev->depth; d++) dd_buf_putc(b, '}');
  dd_buf_putc(b, '}');
}

int dw__stats_json(char **out, const dw__stats *st, int64_t num_records) {
  *out = NULL;
  dd_buf b = {0};
  dd_buf_printf(&b, "{\"numRecords\":%lld", (long long)num_records);
  bool any = false;
  for (size_t i = 0; i < st->n; i++) any |= st->cols[i].indexed;
  if (any) {
    dd_buf_puts(&b, ",\"minValues\":");
    json_part(&b, st, J_MIN);
    dd_buf_puts(&b, ",\"maxValues\":");
    json_part(&b, st, J_MAX);
    dd_buf_puts(&b, ",\"nullCount\":");
    json_part(&b, st, J_NULLS);
  }
  if (st->tight_bounds) dd_buf_puts(&b, ",\"tightBounds\":true");
  dd_buf_putc(&b, '}');
  if (b.oom) {
    dd_buf_free(&b);
    return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  }
  *out = b.p;
  return 0;
}
