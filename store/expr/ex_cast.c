/* ex_cast.c: Spark's CAST between atomic types (Cast.scala rules), ANSI and legacy, plus the
 * text forms casts need: dates and timestamps (Spark's accepted formats, the session's
 * fixed UTC offset), decimals (HALF_UP rounding), and Java's Double.toString shortest form.
 *
 * ANSI mode: a malformed string is [CAST_INVALID_INPUT], a value outside the target is
 * [CAST_OVERFLOW] (integers) or [NUMERIC_VALUE_OUT_OF_RANGE] (decimals). Legacy mode gives
 * NULL for both, except integer narrowing, which wraps as Java's does. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

/* ---- calendar (proleptic Gregorian; H. Hinnant's days_from_civil) ---- */

int64_t ex__days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

void ex__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t yy = (int64_t)yoe + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

static bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
static unsigned mdays(int64_t y, unsigned m) {
  static const unsigned n[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : n[m - 1];
}

static void trim(const char **s, size_t *len) {
  while (*len && (unsigned char)**s <= ' ') (*s)++, (*len)--;
  while (*len && (unsigned char)(*s)[*len - 1] <= ' ') (*len)--;
}

/* Reads 1..max digits. */
static bool digits(const char *s, size_t len, size_t *i, int min, int max, int64_t *out) {
  int n = 0;
  int64_t v = 0;
  while (*i < len && isdigit((unsigned char)s[*i]) && n < max) v = v * 10 + (s[(*i)++] - '0'), n++;
  if (n < min) return false;
  *out = v;
  return true;
}

/* yyyy[-m[m][-d[d]]] with an optional sign; *i after it. */
static bool date_part(const char *s, size_t len, size_t *i, int64_t *days) {
  int64_t y, m = 1, d = 1;
  bool neg = false;
  if (*i < len && (s[*i] == '-' || s[*i] == '+')) neg = s[(*i)++] == '-';
  if (!digits(s, len, i, 4, 7, &y)) return false;
  if (neg) y = -y;
  if (*i < len && s[*i] == '-') {
    (*i)++;
    if (!digits(s, len, i, 1, 2, &m)) return false;
    if (*i < len && s[*i] == '-') {
      (*i)++;
      if (!digits(s, len, i, 1, 2, &d)) return false;
    }
  }
  if (m < 1 || m > 12 || d < 1 || d > (int64_t)mdays(y, (unsigned)m)) return false;
  *days = ex__days_from_civil(y, (unsigned)m, (unsigned)d);
  return true;
}

bool ex__parse_date(const char *s, size_t len, int64_t *days) {
  trim(&s, &len);
  size_t i = 0;
  if (!date_part(s, len, &i, days)) return false;
  /* anything after a space or 'T' is ignored (Spark's stringToDate) */
  return i == len || s[i] == ' ' || s[i] == 'T';
}

/* Zone suffix: Z, UTC, GMT, UT, [+-]h[h][:mm], [+-]hhmm, (UTC|GMT)[+-]... */
static bool zone(const char *s, size_t len, size_t i, int32_t *off) {
  while (i < len && s[i] == ' ') i++;
  if (i == len) return false;
  const char *z = s + i;
  size_t zl = len - i;
  if ((zl == 1 && (*z == 'Z' || *z == 'z'))) {
    *off = 0;
    return true;
  }
  size_t k = 0;
  if (zl >= 3 && (!strncasecmp(z, "UTC", 3) || !strncasecmp(z, "GMT", 3))) k = 3;
  else if (zl >= 2 && !strncasecmp(z, "UT", 2)) k = 2;
  if (k == zl) {
    *off = 0;
    return true;
  }
  if (z[k] != '+' && z[k] != '-') return false;
  int sign = z[k] == '-' ? -1 : 1;
  size_t j = k + 1;
  int64_t h = 0, m = 0;
  if (!digits(z, zl, &j, 1, 2, &h)) return false;
  if (j < zl && z[j] == ':') j++;
  if (j < zl && !digits(z, zl, &j, 2, 2, &m)) return false;
  if (j != zl || h > 18 || m > 59) return false;
  *off = sign * (int32_t)(h * 3600 + m * 60);
  return true;
}

bool ex__parse_timestamp(const char *s, size_t len, bool ntz, int32_t tz_offset_s,
                         int64_t *micros) {
  trim(&s, &len);
  size_t i = 0;
  int64_t days, h = 0, mi = 0, sec = 0, frac = 0;
  if (!date_part(s, len, &i, &days)) return false;
  int32_t off = tz_offset_s;
  if (i < len && (s[i] == ' ' || s[i] == 'T')) {
    i++;
    if (i < len && isdigit((unsigned char)s[i])) {
      if (!digits(s, len, &i, 1, 2, &h)) return false;
      if (i < len && s[i] == ':') {
        i++;
        if (!digits(s, len, &i, 1, 2, &mi)) return false;
        if (i < len && s[i] == ':') {
          i++;
          if (!digits(s, len, &i, 1, 2, &sec)) return false;
          if (i < len && s[i] == '.') {
            i++;
            int n = 0;
            while (i < len && isdigit((unsigned char)s[i])) {
              if (n < 6) frac = frac * 10 + (s[i] - '0');
              n++, i++;
            }
            for (; n < 6; n++) frac *= 10;
          }
        }
      }
      if (h > 23 || mi > 59 || sec > 59) return false;
    }
    if (i < len) {
      if (!zone(s, len, i, &off)) return false;
      if (ntz) off = 0;
    }
  } else if (i != len) {
    return false;
  }
  /* a year of more digits than an int64 of microseconds holds is no timestamp */
  int64_t secs, us;
  if (__builtin_mul_overflow((int64_t)days, (int64_t)86400, &secs) ||
      __builtin_add_overflow(secs, (int64_t)(h * 3600 + mi * 60 + sec) - (int64_t)off, &secs) ||
      __builtin_mul_overflow(secs, (int64_t)1000000, &us) ||
      __builtin_add_overflow(us, (int64_t)frac, micros))
    return false;
  return true;
}

void ex__format_date(char *buf, int64_t days) {
  int64_t y;
  unsigned m, d;
  ex__civil_from_days(days, &y, &m, &d);
  /* a year of an int64 day count can take 17 digits: format wide, keep what fits */
  char tmp[64];
  if (y >= 0 && y <= 9999) snprintf(tmp, sizeof tmp, "%04lld-%02u-%02u", (long long)y, m, d);
  else snprintf(tmp, sizeof tmp, "%+lld-%02u-%02u", (long long)y, m, d);
  snprintf(buf, 16, "%.15s", tmp);
}

static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

void ex__format_timestamp(char *buf, int64_t micros) {
  int64_t secs = floordiv(micros, 1000000), us = micros - secs * 1000000;
  int64_t days = floordiv(secs, 86400), rem = secs - days * 86400;
  char date[16];
  ex__format_date(date, days);
  int n = snprintf(buf, 40, "%s %02d:%02d:%02d", date, (int)(rem / 3600), (int)(rem / 60 % 60),
                   (int)(rem % 60));
  if (us) {
    char f[8];
    snprintf(f, sizeof f, "%06d", (int)us);
    int k = 6;
    while (k > 0 && f[k - 1] == '0') k--;
    f[k] = '\0';
    snprintf(buf + n, 40 - (size_t)n, ".%s", f);
  }
}

/* ---- decimals ---- */

bool ex__parse_decimal(const char *s, size_t len, ex_type t, ex_i128 *out) {
  trim(&s, &len);
  size_t i = 0;
  bool neg = false;
  if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  ex_i128 v = 0;
  int sig = 0, scale = 0, rd = 0;
  bool dot = false, any = false;
  for (; i < len; i++) {
    char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (!isdigit((unsigned char)c)) break;
    any = true;
    if (sig >= 38) {
      if (!dot) return false; /* more than 38 integral digits */
      if (sig == 38) rd = c - '0', sig++; /* first dropped fraction digit rounds */
      continue;
    }
    if (sig || c != '0') sig++;
    v = v * 10 + (c - '0');
    if (dot) scale++;
  }
  if (!any) return false;
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    int64_t e;
    if (!digits(s, len, &i, 1, 4, &e)) return false;
    scale += eneg ? (int)e : -(int)e;
  }
  if (i != len) return false;
  while (scale < t.scale) {
    if (v >= ex__pow10(37)) return false;
    v *= 10;
    scale++;
  }
  while (scale > t.scale) {
    rd = (int)(v % 10);
    v /= 10;
    scale--;
  }
  if (rd >= 5) v += 1;
  if (v >= ex__pow10(t.precision)) return false;
  *out = neg ? -v : v;
  return true;
}

/* ---- Java's Double.toString / Float.toString ---- */

void ex__format_double(char *buf, double d, bool is_float) {
  if (isnan(d)) {
    strcpy(buf, "NaN");
    return;
  }
  if (isinf(d)) {
    strcpy(buf, d > 0 ? "Infinity" : "-Infinity");
    return;
  }
  if (d == 0) {
    strcpy(buf, signbit(d) ? "-0.0" : "0.0");
    return;
  }
  char tmp[40];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
    if (is_float ? strtof(tmp, NULL) == (float)d : strtod(tmp, NULL) == d) break;
  }
  /* tmp is [-]D.DDDDe[+-]XX: split digits and exponent */
  char dig[24];
  int nd = 0, exp;
  const char *p = tmp;
  bool neg = *p == '-';
  if (neg) p++;
  for (; *p && *p != 'e'; p++)
    if (isdigit((unsigned char)*p)) dig[nd++] = *p;
  exp = atoi(p + 1);
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  char *o = buf;
  if (neg) *o++ = '-';
  double a = fabs(d);
  if (a >= 1e-3 && a < 1e7) {
    if (exp >= 0) {
      for (int i = 0; i <= exp; i++) *o++ = i < nd ? dig[i] : '0';
      *o++ = '.';
      if (nd > exp + 1)
        for (int i = exp + 1; i < nd; i++) *o++ = dig[i];
      else
        *o++ = '0';
    } else {
      *o++ = '0';
      *o++ = '.';
      for (int i = 0; i < -exp - 1; i++) *o++ = '0';
      for (int i = 0; i < nd; i++) *o++ = dig[i];
    }
    *o = '\0';
  } else {
    *o++ = dig[0];
    *o++ = '.';
    if (nd > 1)
      for (int i = 1; i < nd; i++) *o++ = dig[i];
    else
      *o++ = '0';
    sprintf(o, "E%d", exp);
  }
}

/* ---- the cast ---- */

static int type_upper(char *buf, size_t cap, ex_type t) {
  ex_type_format(t, buf, cap);
  for (char *p = buf; *p; p++) *p = (char)toupper((unsigned char)*p);
  return 0;
}

static int invalid_input(const ex__vec *in, size_t i, ex_type to) {
  char tn[40];
  type_upper(tn, sizeof tn, to);
  size_t len = in->off[i + 1] - in->off[i];
  return dd_err_set(DD_EINVAL, "[CAST_INVALID_INPUT] The value '%.*s' of the type \"STRING\" "
                    "cannot be cast to \"%s\" because it is malformed. Correct the value as per "
                    "the syntax, or change its target type. Use `try_cast` to tolerate malformed "
                    "input and return NULL instead.", (int)(len > 100 ? 100 : len),
                    ex__vec_str(in, i), tn);
}

static void value_text(char *buf, size_t cap, const ex__vec *in, size_t i) {
  switch (in->type.id) {
    case EX_T_FLOAT:
    case EX_T_DOUBLE: {
      char d[40];
      ex__format_double(d, in->f[i], in->type.id == EX_T_FLOAT);
      snprintf(buf, cap, "%s%s", d, in->type.id == EX_T_DOUBLE ? "D" : "");
      break;
    }
    case EX_T_DECIMAL: {
      char d[48];
      ex__dec_format(d, in->d[i], in->type.scale);
      snprintf(buf, cap, "%sBD", d);
      break;
    }
    case EX_T_BYTE: snprintf(buf, cap, "%lldY", (long long)in->i[i]); break;
    case EX_T_SHORT: snprintf(buf, cap, "%lldS", (long long)in->i[i]); break;
    case EX_T_LONG: snprintf(buf, cap, "%lldL", (long long)in->i[i]); break;
    default: snprintf(buf, cap, "%lld", (long long)in->i[i]); break;
  }
}

static int overflow(const ex__vec *in, size_t i, ex_type to) {
  char from[40], tn[40], v[64];
  type_upper(from, sizeof from, in->type);
  type_upper(tn, sizeof tn, to);
  value_text(v, sizeof v, in, i);
  if (to.id == EX_T_DECIMAL)
    return dd_err_set(DD_ERANGE, "[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] %s cannot be "
                      "represented as Decimal(%d, %d). If necessary set \"spark.sql.ansi.enabled\" "
                      "to \"false\" to bypass this error, and return NULL instead.", v,
                      to.precision, to.scale);
  return dd_err_set(DD_ERANGE, "[CAST_OVERFLOW] The value %s of the type \"%s\" cannot be cast "
                    "to \"%s\" due to an overflow. Use `try_cast` to tolerate overflow and return "
                    "NULL instead.", v, from, tn);
}

bool ex__can_cast(ex_type from, ex_type to, bool ansi) {
  ex_type_id f = from.id, t = to.id;
  if (f == t || f == EX_T_NULL) return true;
  if (ex__is_nested(f) || ex__is_nested(t) || t == EX_T_NULL) return false;
  if (t == EX_T_STRING) return true;
  if (f == EX_T_STRING) return true;
  if (t == EX_T_BINARY) return !ansi && ex__is_integral(f);
  if (f == EX_T_BINARY) return false;
  bool fn = ex__is_numeric(f) || f == EX_T_BOOLEAN, tn = ex__is_numeric(t) || t == EX_T_BOOLEAN;
  if (fn && tn) return true;
  bool fts = f == EX_T_TIMESTAMP || f == EX_T_TIMESTAMP_NTZ || f == EX_T_DATE;
  bool tts = t == EX_T_TIMESTAMP || t == EX_T_TIMESTAMP_NTZ || t == EX_T_DATE;
  if (fts && tts) return true;
  if (f == EX_T_TIMESTAMP && tn) return t != EX_T_BOOLEAN || !ansi;
  if (fn && t == EX_T_TIMESTAMP) return f != EX_T_BOOLEAN || !ansi;
  if (f == EX_T_DATE && tn) return !ansi;
  return false;
}

/* legacy narrowing of an int64 as Java does: wrap */
static int64_t wrap(int64_t v, ex_type_id t) {
  switch (t) {
    case EX_T_BYTE: return (int8_t)v;
    case EX_T_SHORT: return (int16_t)v;
    case EX_T_INT: return (int32_t)v;
    default: return v;
  }
}

static int64_t floor_div(int64_t a, int64_t b) { return floordiv(a, b); }

/* One value from in[i] into out[i]; returns 1 for a (legacy) null, 0, or an error. */
static int cast_one(ex__vec *out, const ex__vec *in, size_t i, const ex__opts *o) {
  ex_type to = out->type;
  ex_type_id f = in->type.id, t = to.id;
  bool ansi = o->ansi;
  char buf[64];
  /* ---- to string ---- */
  if (t == EX_T_STRING || (t == EX_T_BINARY && f == EX_T_STRING)) {
    const char *s = buf;
    size_t len;
    switch (f) {
      case EX_T_STRING:
      case EX_T_BINARY:
        s = ex__vec_str(in, i);
        len = in->off[i + 1] - in->off[i];
        return ex__vec_str_push(out, i, s, len);
      case EX_T_BOOLEAN: s = in->b[i] ? "true" : "false"; break;
      case EX_T_FLOAT:
      case EX_T_DOUBLE: ex__format_double(buf, in->f[i], f == EX_T_FLOAT); break;
      case EX_T_DECIMAL: ex__dec_format(buf, in->d[i], in->type.scale); break;
      case EX_T_DATE: ex__format_date(buf, in->i[i]); break;
      case EX_T_TIMESTAMP: ex__format_timestamp(buf, in->i[i] + (int64_t)o->tz_offset_s * 1000000); break;
      case EX_T_TIMESTAMP_NTZ: ex__format_timestamp(buf, in->i[i]); break;
      default: snprintf(buf, sizeof buf, "%lld", (long long)in->i[i]); break;
    }
    return ex__vec_str_push(out, i, s, strlen(s));
  }
  /* ---- from string ---- */
  if (f == EX_T_STRING) {
    /* a column of empty strings may have no data buffer at all */
    const char *s = ex__vec_str(in, i);
    size_t len = in->off[i + 1] - in->off[i];
    const char *ts = s;
    size_t tl = len;
    trim(&ts, &tl);
    bool ok = true;
    switch (t) {
      case EX_T_BOOLEAN: {
        static const char *yes[] = {"t", "true", "y", "yes", "1"}, *no[] = {"f", "false", "n", "no", "0"};
        ok = false;
        for (int k = 0; k < 5 && !ok; k++) {
          if (tl == strlen(yes[k]) && !strncasecmp(ts, yes[k], tl)) ok = true, out->b[i] = 1;
          else if (tl == strlen(no[k]) && !strncasecmp(ts, no[k], tl)) ok = true, out->b[i] = 0;
        }
        break;
      }
      case EX_T_BYTE:
      case EX_T_SHORT:
      case EX_T_INT:
      case EX_T_LONG: {
        size_t k = 0;
        bool neg = false;
        if (k < tl && (ts[k] == '+' || ts[k] == '-')) neg = ts[k++] == '-';
        ex_i128 v = 0;
        size_t d0 = k;
        while (k < tl && isdigit((unsigned char)ts[k]) && v < ((ex_i128)1 << 100)) v = v * 10 + (ts[k++] - '0');
        ok = k > d0;
        if (ok && k < tl && !ansi && ts[k] == '.') { /* legacy: "1.9" truncates */
          k++;
          while (k < tl && isdigit((unsigned char)ts[k])) k++;
        }
        if (k != tl) ok = false;
        if (neg) v = -v;
        if (ok && (v < ex__int_min(t) || v > ex__int_max(t))) ok = false;
        if (ok) out->i[i] = (int64_t)v;
        break;
      }
      case EX_T_FLOAT:
      case EX_T_DOUBLE: {
        char tmp[128];
        size_t n = tl < sizeof tmp - 1 ? tl : sizeof tmp - 1;
        memcpy(tmp, ts, n);
        tmp[n] = '\0';
        if (n > 1 && strchr("dDfF", tmp[n - 1]) && (isdigit((unsigned char)tmp[n - 2]) || tmp[n - 2] == '.'))
          tmp[--n] = '\0'; /* Java's 1.5d / 1.5f */
        const char *q = tmp + (tmp[0] == '+' || tmp[0] == '-');
        char *end;
        double d;
        if (!strcasecmp(q, "nan")) d = NAN;
        else if (!strcasecmp(q, "inf") || !strcasecmp(q, "infinity")) d = tmp[0] == '-' ? -INFINITY : INFINITY;
        else if (!*q || (!isdigit((unsigned char)*q) && *q != '.')) ok = false, d = 0;
        else {
          d = strtod(tmp, &end);
          if (*end || tl >= sizeof tmp) ok = false;
        }
        if (ok) out->f[i] = t == EX_T_FLOAT ? (double)(float)d : d;
        break;
      }
      case EX_T_DECIMAL: ok = ex__parse_decimal(ts, tl, to, &out->d[i]); break;
      case EX_T_DATE: ok = ex__parse_date(ts, tl, &out->i[i]); break;
      case EX_T_TIMESTAMP: ok = ex__parse_timestamp(ts, tl, false, o->tz_offset_s, &out->i[i]); break;
      case EX_T_TIMESTAMP_NTZ: ok = ex__parse_timestamp(ts, tl, true, 0, &out->i[i]); break;
      default: ok = false; break;
    }
    if (ok) return 0;
    if (ansi) return invalid_input(in, i, to);
    return 1;
  }
  /* ---- dates and timestamps ---- */
  int64_t us_day = 86400LL * 1000000;
  int64_t off_us = (int64_t)o->tz_offset_s * 1000000;
  if (t == EX_T_DATE) {
    if (f == EX_T_TIMESTAMP) out->i[i] = floor_div(in->i[i] + off_us, us_day);
    else if (f == EX_T_TIMESTAMP_NTZ) out->i[i] = floor_div(in->i[i], us_day);
    else return 1;
    return 0;
  }
  if (t == EX_T_TIMESTAMP || t == EX_T_TIMESTAMP_NTZ) {
    int64_t shift = t == EX_T_TIMESTAMP ? off_us : 0;
    if (f == EX_T_DATE) out->i[i] = in->i[i] * us_day - shift;
    else if (f == EX_T_TIMESTAMP_NTZ) out->i[i] = in->i[i] - off_us;
    else if (f == EX_T_TIMESTAMP) out->i[i] = in->i[i] + off_us;
    else if (ex__is_integral(f)) {
      if (__builtin_mul_overflow(in->i[i], 1000000, &out->i[i])) {
        if (ansi) return overflow(in, i, to);
        out->i[i] = in->i[i] < 0 ? INT64_MIN : INT64_MAX;
      }
    } else if (f == EX_T_FLOAT || f == EX_T_DOUBLE) {
      double d = in->f[i] * 1e6;
      if (isnan(d) || isinf(d) || d >= 9.2e18 || d <= -9.2e18) {
        if (ansi) return overflow(in, i, to);
        return 1;
      }
      out->i[i] = (int64_t)d;
    } else if (f == EX_T_DECIMAL) {
      ex_i128 v = in->d[i] * 1000000 / ex__pow10(in->type.scale);
      out->i[i] = (int64_t)v;
    } else {
      return 1;
    }
    return 0;
  }
  /* ---- numeric and boolean targets ---- */
  /* source as one of: integer (int64), double, decimal */
  if (f == EX_T_TIMESTAMP || f == EX_T_DATE) {
    if (t == EX_T_DOUBLE || t == EX_T_FLOAT) {
      out->f[i] = f == EX_T_DATE ? (double)in->i[i] : (double)in->i[i] / 1e6;
      return 0;
    }
    ex__vec tmp = *in;
    int64_t secs = f == EX_T_DATE ? in->i[i] : floor_div(in->i[i], 1000000);
    tmp.type = ex__t(EX_T_LONG);
    tmp.i = &secs;
    if (t == EX_T_BOOLEAN) {
      out->b[i] = secs != 0;
      return 0;
    }
    if (t == EX_T_DECIMAL) {
      out->d[i] = (ex_i128)secs * ex__pow10(to.scale);
      return 0;
    }
    if (secs < ex__int_min(t) || secs > ex__int_max(t)) {
      if (ansi) return overflow(&tmp, 0, to);
      out->i[i] = wrap(secs, t);
      return 0;
    }
    out->i[i] = secs;
    return 0;
  }
  if (t == EX_T_BOOLEAN) {
    if (f == EX_T_FLOAT || f == EX_T_DOUBLE) out->b[i] = in->f[i] != 0;
    else if (f == EX_T_DECIMAL) out->b[i] = in->d[i] != 0;
    else out->b[i] = in->i[i] != 0;
    return 0;
  }
  if (t == EX_T_FLOAT || t == EX_T_DOUBLE) {
    double d;
    if (f == EX_T_FLOAT || f == EX_T_DOUBLE) d = in->f[i];
    else if (f == EX_T_DECIMAL) {
      char txt[48];
      ex__dec_format(txt, in->d[i], in->type.scale);
      d = strtod(txt, NULL);
    } else if (f == EX_T_BOOLEAN) d = in->b[i];
    else d = (double)in->i[i];
    out->f[i] = t == EX_T_FLOAT ? (double)(float)d : d;
    return 0;
  }
  if (t == EX_T_DECIMAL) {
    ex_i128 v;
    bool ok = true;
    if (f == EX_T_DECIMAL) {
      int ds = to.scale - in->type.scale;
      v = in->d[i];
      if (ds >= 0) {
        ex_i128 m = ex__pow10(ds);
        if (__builtin_mul_overflow(v, m, &v)) ok = false;
      } else {
        ex_i128 m = ex__pow10(-ds), q = v / m, r = v % m;
        if (r < 0) r = -r;
        if (r * 2 >= m) q += v < 0 ? -1 : 1;
        v = q;
      }
    } else if (f == EX_T_FLOAT || f == EX_T_DOUBLE) {
      char txt[40];
      double d = in->f[i];
      if (isnan(d) || isinf(d)) ok = false;
      else {
        ex__format_double(txt, d, f == EX_T_FLOAT);
        ok = ex__parse_decimal(txt, strlen(txt), to, &v);
      }
    } else {
      int64_t x = f == EX_T_BOOLEAN ? in->b[i] : in->i[i];
      if (__builtin_mul_overflow((ex_i128)x, ex__pow10(to.scale), &v)) ok = false;
    }
    if (ok && (v >= ex__pow10(to.precision) || v <= -ex__pow10(to.precision))) ok = false;
    if (!ok) {
      if (ansi) return overflow(in, i, to);
      return 1;
    }
    out->d[i] = v;
    return 0;
  }
  /* integral targets */
  if (f == EX_T_BOOLEAN) {
    out->i[i] = in->b[i];
    return 0;
  }
  if (f == EX_T_FLOAT || f == EX_T_DOUBLE) {
    double d = trunc(in->f[i]);
    double lo = (double)ex__int_min(t), hi = (double)ex__int_max(t);
    if (isnan(d) || d < lo || d > hi || (t == EX_T_LONG && d >= 9223372036854775808.0)) {
      if (ansi) return overflow(in, i, to);
      /* Java: NaN -> 0, saturate to int/long, then narrow */
      int64_t sat = isnan(d) ? 0 : d < 0 ? (t == EX_T_LONG ? INT64_MIN : INT32_MIN)
                                         : (t == EX_T_LONG ? INT64_MAX : INT32_MAX);
      out->i[i] = wrap(sat, t);
      return 0;
    }
    out->i[i] = (int64_t)d;
    return 0;
  }
  if (f == EX_T_DECIMAL) {
    ex_i128 v = in->d[i] / ex__pow10(in->type.scale);
    if (v < ex__int_min(t) || v > ex__int_max(t)) {
      if (ansi) return overflow(in, i, to);
      out->i[i] = wrap((int64_t)v, t);
      return 0;
    }
    out->i[i] = (int64_t)v;
    return 0;
  }
  int64_t v = in->i[i];
  if (v < ex__int_min(t) || v > ex__int_max(t)) {
    if (ansi) return overflow(in, i, to);
    out->i[i] = wrap(v, t);
    return 0;
  }
  out->i[i] = v;
  return 0;
}

static int cast_vec(ex__vec *out, const ex__vec *in, ex_type to, const ex__opts *o, bool try_) {
  int rc = ex__vec_init(out, to, in->n);
  if (rc) return rc;
  if (in->type.id == EX_T_NULL || to.id == EX_T_NULL) {
    if (in->n && (rc = ex__vec_valid_alloc(out))) goto fail;
    if (in->n) memset(out->valid, 0, in->n);
    return 0;
  }
  /* fast paths: same representation */
  bool same = ex_type_equal(in->type, to) ||
              (ex__is_integral(in->type.id) && ex__is_integral(to.id) &&
               ex__int_max(to.id) >= ex__int_max(in->type.id));
  if (same && in->i && out->i) {
    memcpy(out->i, in->i, in->n * sizeof *in->i);
    if (in->valid && (rc = ex__vec_and_valid(out, in))) goto fail;
    return 0;
  }
  if (in->valid && (rc = ex__vec_and_valid(out, in))) goto fail;
  bool strs = out->off != NULL;
  for (size_t i = 0; i < in->n; i++) {
    if (!ex__ok(in, i)) {
      if (strs) out->off[i + 1] = out->data_len;
      continue;
    }
    rc = cast_one(out, in, i, o);
    if (rc < 0 && try_ && rc != DD_ENOMEM) {
      dd_err_clear();
      rc = 1;
    }
    if (rc < 0) goto fail;
    if (rc == 1) {
      if ((rc = ex__vec_set_null(out, i))) goto fail;
      if (strs) out->off[i + 1] = out->data_len;
    }
  }
  return 0;
fail:
  ex__vec_free(out);
  return rc;
}

int ex__cast_vec(ex__vec *out, const ex__vec *in, ex_type to, const ex__opts *o) {
  return cast_vec(out, in, to, o, false);
}

int ex__cast_vec_try(ex__vec *out, const ex__vec *in, ex_type to, const ex__opts *o) {
  return cast_vec(out, in, to, o, true);
}
