/* dl_values.c: typed values from the log's strings: partition values (Partition Value
 * Serialization: typed by the schema, "" or null is null, binary as escaped bytes), file
 * statistics (parsed on demand from the raw stats JSON), and timestamps given by users. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ======================= civil time ======================= */

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Parses "[+-]YYYY-MM-DD" at *p; advances *p. */
static bool parse_date(const char **p, int64_t *days) {
  const char *s = *p;
  int sign = 1;
  if (*s == '-' || *s == '+') sign = *s++ == '-' ? -1 : 1;
  char *end;
  errno = 0;
  long long y = strtoll(s, &end, 10);
  if (errno || end == s || *end != '-') return false;
  int m, d, n = 0;
  if (sscanf(end, "-%2d-%2d%n", &m, &d, &n) != 2 || m < 1 || m > 12 || d < 1 || d > 31) return false;
  *days = days_from_civil(sign * y, m, d);
  *p = end + n;
  return true;
}

/* Parses "HH:MM:SS[.ffffff]" into microseconds of the day. */
static bool parse_time(const char **p, int64_t *us) {
  int h, mi, se, n = 0;
  if (sscanf(*p, "%2d:%2d:%2d%n", &h, &mi, &se, &n) != 3 || h > 23 || mi > 59 || se > 60) return false;
  const char *s = *p + n;
  int64_t frac = 0;
  if (*s == '.') {
    s++;
    int digits = 0;
    while (isdigit((unsigned char)*s)) {
      if (digits < 6) frac = frac * 10 + (*s - '0'), digits++;
      s++;
    }
    while (digits++ < 6) frac *= 10;
  }
  *us = ((int64_t)h * 3600 + mi * 60 + se) * 1000000 + frac;
  *p = s;
  return true;
}

/* Parses a time-zone suffix ("Z", "+hh:mm", "-hhmm", "") into seconds east of UTC. */
static bool parse_zone(const char *s, int64_t *secs) {
  *secs = 0;
  if (!*s || !strcmp(s, "Z") || !strcmp(s, "z") || !strcmp(s, " UTC")) return true;
  int sign = *s == '-' ? -1 : (*s == '+' ? 1 : 0);
  if (!sign) return false;
  int h = 0, m = 0;
  if (sscanf(s + 1, "%2d:%2d", &h, &m) != 2 && sscanf(s + 1, "%2d%2d", &h, &m) != 2) return false;
  *secs = sign * (h * 3600 + m * 60);
  return true;
}

/* "YYYY-MM-DD[( |T)HH:MM:SS[.f]][zone]" into microseconds since the epoch. */
static bool parse_ts_us(const char *s, int64_t *out) {
  int64_t days, us = 0, zone = 0;
  if (!parse_date(&s, &days)) return false;
  if (*s == ' ' || *s == 'T' || *s == 't') {
    s++;
    if (!parse_time(&s, &us)) return false;
  }
  if (!parse_zone(s, &zone)) return false;
  *out = days * 86400000000LL + us - zone * 1000000LL;
  return true;
}

int dl_parse_timestamp(const char *s, int64_t *out_ms) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!errno && end != s && *end == 0 && strlen(s) > 8) {
    *out_ms = v;
    return 0;
  }
  int64_t us;
  if (!parse_ts_us(s, &us))
    return dd_err_set(DD_EINVAL, "bad timestamp '%s' (want epoch milliseconds or ISO-8601 like "
                      "2024-01-02T03:04:05Z)", s);
  *out_ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
  return 0;
}

/* ======================= partition values ======================= */

static int bad_value(const char *str, const char *type) {
  return dd_err_set(DD_ECORRUPT, "partition value '%s' is not a valid %s", str, type);
}

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int dl_partition_value_parse(dl_value *out, const dl_type *type, const char *str) {
  memset(out, 0, sizeof *out);
  out->kind = type->kind;
  if (!str || !*str) {
    out->is_null = true;
    return 0;
  }
  out->str = str;
  out->len = strlen(str);
  char *end;
  switch (type->kind) {
    case DL_TYPE_STRING: return 0;
    case DL_TYPE_BINARY: return 0; /* JSON already unescaped the \u00XX bytes */
    case DL_TYPE_BYTE: return parse_int(str, -128, 127, &out->i64) ? 0 : bad_value(str, "byte");
    case DL_TYPE_SHORT: return parse_int(str, -32768, 32767, &out->i64) ? 0 : bad_value(str, "short");
    case DL_TYPE_INTEGER:
      return parse_int(str, INT32_MIN, INT32_MAX, &out->i64) ? 0 : bad_value(str, "integer");
    case DL_TYPE_LONG: return parse_int(str, INT64_MIN, INT64_MAX, &out->i64) ? 0 : bad_value(str, "long");
    case DL_TYPE_FLOAT:
    case DL_TYPE_DOUBLE:
      errno = 0;
      out->f64 = strtod(str, &end);
      if (end == str || *end) {
        if (!strcmp(str, "NaN")) out->f64 = NAN;
        else if (!strcmp(str, "Infinity")) out->f64 = INFINITY;
        else if (!strcmp(str, "-Infinity")) out->f64 = -INFINITY;
        else return bad_value(str, "floating-point number");
      }
      return 0;
    case DL_TYPE_DECIMAL: {
      const char *p = str + (*str == '-' || *str == '+');
      bool digit = false, dot = false;
      for (; *p; p++) {
        if (isdigit((unsigned char)*p)) digit = true;
        else if (*p == '.' && !dot) dot = true;
        else if (*p == 'E' || *p == 'e') { p++; if (*p == '-' || *p == '+') p++; if (!isdigit((unsigned char)*p)) return bad_value(str, "decimal"); while (isdigit((unsigned char)p[1])) p++; }
        else return bad_value(str, "decimal");
      }
      return digit ? 0 : bad_value(str, "decimal");
    }
    case DL_TYPE_BOOLEAN:
      if (!strcmp(str, "true")) out->b = true;
      else if (strcmp(str, "false") != 0) return bad_value(str, "boolean");
      return 0;
    case DL_TYPE_DATE: {
      const char *p = str;
      int64_t days;
      if (!parse_date(&p, &days) || *p) return bad_value(str, "date");
      out->i64 = days;
      return 0;
    }
    case DL_TYPE_TIMESTAMP:
    case DL_TYPE_TIMESTAMP_NTZ:
      return parse_ts_us(str, &out->i64) ? 0 : bad_value(str, "timestamp");
    default:
      return dd_err_set(DD_EUNSUPPORTED, "partition columns of this type are not supported");
  }
}

/* ======================= stats ======================= */

struct dl_stats {
  json_t *root;
};

int dl_stats_parse(dl_stats **out, const char *json) {
  *out = NULL;
  json_error_t e;
  json_t *root = json_loads(json ? json : "{}", 0, &e);
  if (!json_is_object(root)) {
    json_decref(root);
    return dd_err_set(DD_ECORRUPT, "stats: invalid JSON: %s", root ? "not an object" : e.text);
  }
  dl_stats *st = malloc(sizeof *st);
  if (!st) {
    json_decref(root);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  st->root = root;
  *out = st;
  return 0;
}

void dl_stats_free(dl_stats *st) {
  if (!st) return;
  json_decref(st->root);
  free(st);
}

int64_t dl_stats_num_records(const dl_stats *st) { return dl__json_int(st->root, "numRecords", -1); }

bool dl_stats_tight_bounds(const dl_stats *st) {
  json_t *v = json_object_get(st->root, "tightBounds");
  return v ? json_is_true(v) : true;
}

int dl_stats_get(char **out, const dl_stats *st, dl_stats_kind kind, const char *column) {
  *out = NULL;
  static const char *const KEYS[] = {"minValues", "maxValues", "nullCount"};
  json_t *cur = json_object_get(st->root, KEYS[kind]);
  char *path = strdup(column), *save = NULL;
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  for (char *tok = strtok_r(path, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
    cur = json_object_get(cur, tok);
  free(path);
  if (!cur) return dd_err_set(DD_ENOTFOUND, "no %s statistic for column %s", KEYS[kind], column);
  *out = json_dumps(cur, JSON_COMPACT | JSON_ENCODE_ANY);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}
