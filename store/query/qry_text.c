/* qry_text.c: one text rendering of Arrow values (qry.h, "value text"), shared by
 * `deltactl table scan` (both paths) and the DeltaConnectService rows (nested cells as JSON):
 * decimals with their scale, binary as hex, dates YYYY-MM-DD, timestamps
 * YYYY-MM-DDTHH:MM:SS.ffffff (UTC), structs and maps as objects (a key that is not a string
 * as its JSON text), arrays as lists, floats as their shortest round-trip text, NaN and the
 * infinities by name. The buffer is sticky on allocation failure: it stops growing and the
 * functions that return a code report DD_ENOMEM. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/civil.h"
#include "common/err.h"
#include "store/query/qry.h"

void qry_text_put(qry_text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->len + n + 1 > t->cap) {
    size_t c = t->cap ? t->cap : 256;
    while (c < t->len + n + 1) c *= 2;
    char *q = realloc(t->p, c);
    if (!q) {
      t->oom = true;
      return;
    }
    t->p = q;
    t->cap = c;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = 0;
}

void qry_text_clear(qry_text *t) {
  t->len = 0;
  qry_text_put(t, "", 0);
}

void qry_text_free(qry_text *t) {
  free(t->p);
  *t = (qry_text)QRY_TEXT_INIT;
}

static void puts_(qry_text *t, const char *s) { qry_text_put(t, s, strlen(s)); }

static void putf(qry_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(qry_text *t, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  qry_text_put(t, buf, n < 0 ? 0 : (size_t)n);
}

void qry_text_json_str(qry_text *t, const char *s, size_t n) {
  qry_text_put(t, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      qry_text_put(t, e, 2);
    } else if (c < 0x20) {
      putf(t, "\\u%04x", c);
    } else {
      qry_text_put(t, &s[i], 1);
    }
  }
  qry_text_put(t, "\"", 1);
}

void qry_text_date(qry_text *t, int64_t days) {
  int64_t y;
  unsigned m, d;
  dd_civil_from_days(days, &y, &m, &d);
  putf(t, "%04" PRId64 "-%02u-%02u", y, m, d);
}

void qry_text_timestamp(qry_text *t, int64_t us) {
  int64_t days = us >= 0 ? us / 86400000000LL : -((-(us + 1)) / 86400000000LL) - 1;
  int64_t rem = us - days * 86400000000LL;
  qry_text_date(t, days);
  int64_t secs = rem / 1000000;
  putf(t, "T%02d:%02d:%02d.%06d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
       (int)(rem % 1000000));
}

void qry_text_decimal(qry_text *t, const uint8_t *le, int scale) {
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
  while (n <= scale && n < (int)sizeof digits) digits[n++] = '0';
  if (neg) qry_text_put(t, "-", 1);
  for (int i = n - 1; i >= 0; i--) {
    qry_text_put(t, &digits[i], 1);
    if (i == scale && scale > 0) qry_text_put(t, ".", 1);
  }
}

void qry_text_float(qry_text *t, double v, bool single, bool quote_special) {
  if (isnan(v) || isinf(v)) {
    const char *s = isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    if (quote_special) putf(t, "\"%s\"", s);
    else puts_(t, s);
    return;
  }
  char buf[40];
  for (int prec = single ? 6 : 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0"); /* a float stays a float in JSON readers */
  puts_(t, buf);
}

void qry_text_hex(qry_text *t, const uint8_t *p, size_t n) {
  for (size_t j = 0; j < n; j++) putf(t, "%02x", p[j]);
}

/* ---- nested values -------------------------------------------------------------------- */

static int value(qry_text *t, const arw_batch *b, int id, size_t i, bool json);

static int nested(qry_text *t, const arw_batch *b, int id, const arw_view *v, size_t i) {
  const arw_schema *s = arw_batch_schema(b);
  arw_kind k = arw_field_kind(s, id);
  int rc = 0;
  if (k == ARW_STRUCT) {
    qry_text_put(t, "{", 1);
    for (int c = 0; c < arw_field_nchildren(s, id) && !rc; c++) {
      if (c) qry_text_put(t, ", ", 2);
      const char *nm = arw_field_name(s, arw_field_child(s, id, c));
      qry_text_json_str(t, nm, strlen(nm));
      qry_text_put(t, ": ", 2);
      rc = value(t, b, arw_field_child(s, id, c), i, true);
    }
    qry_text_put(t, "}", 1);
    return rc;
  }
  int32_t a = v->offsets[i], e = v->offsets[i + 1];
  if (k == ARW_LIST) {
    qry_text_put(t, "[", 1);
    for (int32_t j = a; j < e && !rc; j++) {
      if (j > a) qry_text_put(t, ", ", 2);
      rc = value(t, b, arw_field_child(s, id, 0), (size_t)j, true);
    }
    qry_text_put(t, "]", 1);
    return rc;
  }
  int key = arw_field_child(s, id, 0), val = arw_field_child(s, id, 1);
  bool str_keys = arw_field_kind(s, key) == ARW_UTF8;
  qry_text_put(t, "{", 1);
  for (int32_t j = a; j < e && !rc; j++) {
    if (j > a) qry_text_put(t, ", ", 2);
    if (str_keys) {
      rc = value(t, b, key, (size_t)j, true);
    } else { /* the key's JSON text as a string */
      qry_text kt = QRY_TEXT_INIT;
      rc = value(&kt, b, key, (size_t)j, true);
      if (!rc && kt.oom) rc = dd_err_set(DD_ENOMEM, "out of memory rendering a value");
      qry_text_json_str(t, kt.p ? kt.p : "", kt.len);
      qry_text_free(&kt);
    }
    qry_text_put(t, ": ", 2);
    if (!rc) rc = value(t, b, val, (size_t)j, true);
  }
  qry_text_put(t, "}", 1);
  return rc;
}

static int value(qry_text *t, const arw_batch *b, int id, size_t i, bool json) {
  arw_view v;
  int rc = arw_batch_view(b, id, &v);
  if (rc) return rc;
  if (!arw_view_valid(&v, i)) {
    puts_(t, json ? "null" : "");
    return 0;
  }
  const uint8_t *p = v.values;
  switch (v.kind) {
    case ARW_BOOL: puts_(t, arw_view_bool(&v, i) ? "true" : "false"); return 0;
    case ARW_INT8: putf(t, "%d", (int)(int8_t)p[i]); return 0;
    case ARW_INT16: { int16_t x; memcpy(&x, p + 2 * i, 2); putf(t, "%d", x); return 0; }
    case ARW_INT32: { int32_t x; memcpy(&x, p + 4 * i, 4); putf(t, "%" PRId32, x); return 0; }
    case ARW_INT64: { int64_t x; memcpy(&x, p + 8 * i, 8); putf(t, "%" PRId64, x); return 0; }
    case ARW_FLOAT32: { float x; memcpy(&x, p + 4 * i, 4); qry_text_float(t, x, true, json); return 0; }
    case ARW_FLOAT64: { double x; memcpy(&x, p + 8 * i, 8); qry_text_float(t, x, false, json); return 0; }
    case ARW_DATE32:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: {
      if (json) qry_text_put(t, "\"", 1);
      if (v.kind == ARW_DATE32) {
        int32_t days;
        memcpy(&days, p + 4 * i, 4);
        qry_text_date(t, days);
      } else {
        int64_t x;
        memcpy(&x, p + 8 * i, 8);
        qry_text_timestamp(t, x);
      }
      if (json) qry_text_put(t, "\"", 1);
      return 0;
    }
    case ARW_DECIMAL128:
      if (json) qry_text_put(t, "\"", 1);
      qry_text_decimal(t, p + 16 * i, arw_field_scale(arw_batch_schema(b), id));
      if (json) qry_text_put(t, "\"", 1);
      return 0;
    case ARW_UTF8: {
      const char *s = (const char *)p + v.offsets[i];
      size_t n = (size_t)(v.offsets[i + 1] - v.offsets[i]);
      if (json) qry_text_json_str(t, s, n);
      else qry_text_put(t, s, n);
      return 0;
    }
    case ARW_BINARY:
      if (json) qry_text_put(t, "\"", 1);
      qry_text_hex(t, p + v.offsets[i], (size_t)(v.offsets[i + 1] - v.offsets[i]));
      if (json) qry_text_put(t, "\"", 1);
      return 0;
    case ARW_NULL: puts_(t, json ? "null" : ""); return 0;
    default: return nested(t, b, id, &v, i);
  }
}

int qry_text_value(qry_text *t, const arw_batch *b, int id, size_t i, bool json) {
  int rc = value(t, b, id, i, json);
  if (!rc && t->oom) rc = dd_err_set(DD_ENOMEM, "out of memory rendering a value");
  return rc;
}
