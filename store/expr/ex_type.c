/* ex_type.c: Spark's data types as store/expr sees them: names (parse / simpleString), the
 * arrow kinds they travel in, integer ranges, decimal precision rules and the wider type
 * two types meet at (Spark's TypeCoercion.findWiderTypeForTwo). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

ex_type ex__t(ex_type_id id) { return (ex_type){.id = id}; }
ex_type ex__dec(int p, int s) { return (ex_type){.id = EX_T_DECIMAL, .precision = p, .scale = s}; }

bool ex__is_integral(ex_type_id t) { return t >= EX_T_BYTE && t <= EX_T_LONG; }
bool ex__is_numeric(ex_type_id t) { return t >= EX_T_BYTE && t <= EX_T_DECIMAL; }
bool ex__is_nested(ex_type_id t) { return t == EX_T_STRUCT || t == EX_T_ARRAY || t == EX_T_MAP; }

bool ex_type_equal(ex_type a, ex_type b) {
  if (a.id != b.id) return false;
  return a.id != EX_T_DECIMAL || (a.precision == b.precision && a.scale == b.scale);
}

int64_t ex__int_min(ex_type_id t) {
  switch (t) {
    case EX_T_BYTE: return INT8_MIN;
    case EX_T_SHORT: return INT16_MIN;
    case EX_T_INT: return INT32_MIN;
    default: return INT64_MIN;
  }
}

int64_t ex__int_max(ex_type_id t) {
  switch (t) {
    case EX_T_BYTE: return INT8_MAX;
    case EX_T_SHORT: return INT16_MAX;
    case EX_T_INT: return INT32_MAX;
    default: return INT64_MAX;
  }
}

ex_i128 ex__pow10(int n) {
  ex_i128 v = 1;
  for (int i = 0; i < n; i++) v *= 10;
  return v;
}

void ex__dec_format(char *buf, ex_i128 v, int scale) {
  char digits[48];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  while (n <= scale) digits[n++] = '0';
  char *p = buf;
  if (neg) *p++ = '-';
  for (int i = n - 1; i >= 0; i--) {
    *p++ = digits[i];
    if (i == scale && scale > 0) *p++ = '.';
  }
  *p = '\0';
}

ex_type ex__dec_of(ex_type t) {
  switch (t.id) {
    case EX_T_BYTE: return ex__dec(3, 0);
    case EX_T_SHORT: return ex__dec(5, 0);
    case EX_T_INT: return ex__dec(10, 0);
    case EX_T_LONG: return ex__dec(20, 0);
    default: return t;
  }
}

ex_type ex__dec_bounded(int p, int s) {
  if (p <= 38) return ex__dec(p, s);
  /* DecimalType.adjustPrecisionScale: keep the integral digits, at least min(s, 6) of
   * the fraction. */
  int int_digits = p - s;
  int min_scale = s < 6 ? s : 6;
  int adj = 38 - int_digits;
  if (adj < min_scale) adj = min_scale;
  return ex__dec(38, adj);
}

/* ---- names ---- */

static bool word_is(const char *t, size_t len, const char *w) {
  return strlen(w) == len && strncasecmp(t, w, len) == 0;
}

int ex_type_parse(ex_type *out, const char *text, size_t len) {
  while (len && isspace((unsigned char)*text)) text++, len--;
  while (len && isspace((unsigned char)text[len - 1])) len--;
  size_t w = 0;
  while (w < len && (isalnum((unsigned char)text[w]) || text[w] == '_')) w++;
  static const struct { const char *name; ex_type_id id; } names[] = {
    {"boolean", EX_T_BOOLEAN}, {"bool", EX_T_BOOLEAN}, {"tinyint", EX_T_BYTE},
    {"byte", EX_T_BYTE}, {"smallint", EX_T_SHORT}, {"short", EX_T_SHORT},
    {"int", EX_T_INT}, {"integer", EX_T_INT}, {"bigint", EX_T_LONG}, {"long", EX_T_LONG},
    {"float", EX_T_FLOAT}, {"real", EX_T_FLOAT}, {"double", EX_T_DOUBLE},
    {"string", EX_T_STRING}, {"binary", EX_T_BINARY}, {"date", EX_T_DATE},
    {"timestamp", EX_T_TIMESTAMP}, {"timestamp_ltz", EX_T_TIMESTAMP},
    {"timestamp_ntz", EX_T_TIMESTAMP_NTZ}, {"void", EX_T_NULL},
  };
  const char *rest = text + w;
  size_t rlen = len - w;
  while (rlen && isspace((unsigned char)*rest)) rest++, rlen--;
  if (word_is(text, w, "decimal") || word_is(text, w, "dec") || word_is(text, w, "numeric")) {
    int p = 10, s = 0;
    if (rlen) {
      char buf[64];
      if (rlen >= sizeof buf) goto bad;
      memcpy(buf, rest, rlen);
      buf[rlen] = '\0';
      int n = 0;
      if (sscanf(buf, " ( %d , %d ) %n", &p, &s, &n) == 2 && (size_t)n == rlen) {
      } else if (sscanf(buf, " ( %d ) %n", &p, &n) == 1 && (size_t)n == rlen) {
        s = 0;
      } else {
        goto bad;
      }
    }
    if (p < 1 || p > 38 || s < 0 || s > p)
      return dd_err_set(DD_EINVAL, "[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] decimal(%d,%d) is "
                        "not a valid type: precision is 1..38 and scale 0..precision", p, s);
    *out = ex__dec(p, s);
    return 0;
  }
  if ((word_is(text, w, "varchar") || word_is(text, w, "char")) && rlen) {
    int n = 0, k = 0;
    char buf[32];
    if (rlen >= sizeof buf) goto bad;
    memcpy(buf, rest, rlen);
    buf[rlen] = '\0';
    if (sscanf(buf, " ( %d ) %n", &k, &n) != 1 || (size_t)n != rlen || k < 1) goto bad;
    *out = ex__t(EX_T_STRING);
    return 0;
  }
  if (rlen) goto bad;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (word_is(text, w, names[i].name)) {
      *out = ex__t(names[i].id);
      return 0;
    }
bad:
  return dd_err_set(DD_EINVAL, "[UNSUPPORTED_DATATYPE] Unsupported data type \"%.*s\"",
                    (int)(len > 200 ? 200 : len), text);
}

size_t ex_type_format(ex_type t, char *buf, size_t cap) {
  static const char *names[] = {
    [EX_T_NULL] = "void", [EX_T_BOOLEAN] = "boolean", [EX_T_BYTE] = "tinyint",
    [EX_T_SHORT] = "smallint", [EX_T_INT] = "int", [EX_T_LONG] = "bigint",
    [EX_T_FLOAT] = "float", [EX_T_DOUBLE] = "double", [EX_T_DECIMAL] = "decimal",
    [EX_T_STRING] = "string", [EX_T_BINARY] = "binary", [EX_T_DATE] = "date",
    [EX_T_TIMESTAMP] = "timestamp", [EX_T_TIMESTAMP_NTZ] = "timestamp_ntz",
    [EX_T_STRUCT] = "struct", [EX_T_ARRAY] = "array", [EX_T_MAP] = "map",
  };
  int n;
  if (t.id == EX_T_DECIMAL)
    n = snprintf(buf, cap, "decimal(%d,%d)", t.precision, t.scale);
  else
    n = snprintf(buf, cap, "%s", names[t.id]);
  return n < 0 ? 0 : (size_t)n;
}

/* ---- arrow ---- */

ex_type ex_type_of_arrow(const arw_schema *s, int field) {
  switch (arw_field_kind(s, field)) {
    case ARW_UTF8: return ex__t(EX_T_STRING);
    case ARW_BINARY: return ex__t(EX_T_BINARY);
    case ARW_INT8: return ex__t(EX_T_BYTE);
    case ARW_INT16: return ex__t(EX_T_SHORT);
    case ARW_INT32: return ex__t(EX_T_INT);
    case ARW_INT64: return ex__t(EX_T_LONG);
    case ARW_FLOAT32: return ex__t(EX_T_FLOAT);
    case ARW_FLOAT64: return ex__t(EX_T_DOUBLE);
    case ARW_DECIMAL128:
      return ex__dec(arw_field_precision(s, field), arw_field_scale(s, field));
    case ARW_BOOL: return ex__t(EX_T_BOOLEAN);
    case ARW_DATE32: return ex__t(EX_T_DATE);
    case ARW_TIMESTAMP: return ex__t(EX_T_TIMESTAMP_NTZ);
    case ARW_TIMESTAMP_UTC: return ex__t(EX_T_TIMESTAMP);
    case ARW_LIST: return ex__t(EX_T_ARRAY);
    case ARW_MAP: return ex__t(EX_T_MAP);
    case ARW_STRUCT: return ex__t(EX_T_STRUCT);
    default: return ex__t(EX_T_NULL);
  }
}

arw_kind ex__arrow_kind(ex_type t) {
  switch (t.id) {
    case EX_T_BOOLEAN: return ARW_BOOL;
    case EX_T_BYTE: return ARW_INT8;
    case EX_T_SHORT: return ARW_INT16;
    case EX_T_INT: return ARW_INT32;
    case EX_T_LONG: return ARW_INT64;
    case EX_T_FLOAT: return ARW_FLOAT32;
    case EX_T_DOUBLE: return ARW_FLOAT64;
    case EX_T_DECIMAL: return ARW_DECIMAL128;
    case EX_T_STRING: return ARW_UTF8;
    case EX_T_BINARY: return ARW_BINARY;
    case EX_T_DATE: return ARW_DATE32;
    case EX_T_TIMESTAMP: return ARW_TIMESTAMP_UTC;
    case EX_T_TIMESTAMP_NTZ: return ARW_TIMESTAMP;
    case EX_T_STRUCT: return ARW_STRUCT;
    case EX_T_ARRAY: return ARW_LIST;
    case EX_T_MAP: return ARW_MAP;
    default: return ARW_NULL;
  }
}

/* ---- wider types ---- */

static int num_rank(ex_type_id t) {
  switch (t) {
    case EX_T_BYTE: return 1;
    case EX_T_SHORT: return 2;
    case EX_T_INT: return 3;
    case EX_T_LONG: return 4;
    case EX_T_FLOAT: return 5;
    case EX_T_DOUBLE: return 6;
    default: return 0;
  }
}

static ex_type wider_decimal(ex_type a, ex_type b) {
  int s = a.scale > b.scale ? a.scale : b.scale;
  int ra = a.precision - a.scale, rb = b.precision - b.scale;
  int r = ra > rb ? ra : rb;
  int p = r + s;
  if (p > 38) {
    p = 38;
    s = 38 - r < 0 ? 0 : 38 - r;
  }
  return ex__dec(p, s);
}

bool ex__wider(ex_type a, ex_type b, ex_type *out, bool ansi) {
  if (ex_type_equal(a, b)) {
    *out = a;
    return true;
  }
  if (a.id == EX_T_NULL) {
    *out = b;
    return true;
  }
  if (b.id == EX_T_NULL) {
    *out = a;
    return true;
  }
  if (num_rank(a.id) && num_rank(b.id)) {
    *out = num_rank(a.id) > num_rank(b.id) ? a : b;
    return true;
  }
  if (a.id == EX_T_DECIMAL || b.id == EX_T_DECIMAL) {
    ex_type d = a.id == EX_T_DECIMAL ? a : b, o = a.id == EX_T_DECIMAL ? b : a;
    if (o.id == EX_T_DECIMAL || ex__is_integral(o.id)) {
      *out = wider_decimal(d, ex__dec_of(o));
      return true;
    }
    if (o.id == EX_T_FLOAT || o.id == EX_T_DOUBLE) {
      *out = ex__t(EX_T_DOUBLE);
      return true;
    }
  }
  if ((a.id == EX_T_DATE && (b.id == EX_T_TIMESTAMP || b.id == EX_T_TIMESTAMP_NTZ)) ||
      (b.id == EX_T_DATE && (a.id == EX_T_TIMESTAMP || a.id == EX_T_TIMESTAMP_NTZ))) {
    *out = a.id == EX_T_DATE ? b : a;
    return true;
  }
  if ((a.id == EX_T_TIMESTAMP && b.id == EX_T_TIMESTAMP_NTZ) ||
      (b.id == EX_T_TIMESTAMP && a.id == EX_T_TIMESTAMP_NTZ)) {
    *out = ex__t(EX_T_TIMESTAMP);
    return true;
  }
  /* A string meets an atomic type: legacy mode widens to string; ANSI casts the string to
   * the other type (the string is the side that must parse). */
  if (a.id == EX_T_STRING || b.id == EX_T_STRING) {
    ex_type o = a.id == EX_T_STRING ? b : a;
    if (ex__is_nested(o.id) || o.id == EX_T_BINARY) return false;
    if (ansi && o.id != EX_T_BOOLEAN) {
      *out = ex__is_integral(o.id) ? ex__t(EX_T_LONG) : o;
      if (o.id == EX_T_DECIMAL) *out = ex__t(EX_T_DOUBLE);
      return true;
    }
    *out = ex__t(EX_T_STRING);
    return true;
  }
  return false;
}
