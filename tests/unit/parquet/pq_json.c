/* pq_json.c: canonical JSON text of Parquet rows, shared by pq_tool and the unit tests.
 * The form (mirrored by tests/js/pq_dump.mjs): structs are objects in schema order,
 * lists arrays, maps objects keyed by the key's text; integers in decimal (unsigned when
 * annotated so), floating values and decimals as %.17g (null for NaN/infinity); strings
 * as JSON strings; other bytes as "0x" + hex; INT96 as nanoseconds since the epoch. */
#include "tests/unit/parquet/pq_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_string(FILE *o, const uint8_t *p, size_t n) {
  fputc('"', o);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    if (c == '"' || c == '\\') fprintf(o, "\\%c", c);
    else if (c == '\n') fputs("\\n", o);
    else if (c == '\r') fputs("\\r", o);
    else if (c == '\t') fputs("\\t", o);
    else if (c == '\b') fputs("\\b", o);
    else if (c == '\f') fputs("\\f", o);
    else if (c < 0x20) fprintf(o, "\\u%04x", c);
    else fputc(c, o);
  }
  fputc('"', o);
}

static void put_double(FILE *o, double d) {
  if (isnan(d) || isinf(d)) fputs("null", o);
  else if (d == 0) fputs("0", o);
  else fprintf(o, "%.17g", d);
}

static void put_hex(FILE *o, const uint8_t *p, size_t n) {
  fputs("\"0x", o);
  for (size_t i = 0; i < n; i++) fprintf(o, "%02x", p[i]);
  fputc('"', o);
}

static bool is_decimal(const pq_field *f) {
  return f && (f->converted == PQ_CT_DECIMAL || f->logical.kind == PQ_LT_DECIMAL);
}

static int32_t decimal_scale(const pq_field *f) {
  return f->logical.kind == PQ_LT_DECIMAL ? f->logical.scale : f->scale;
}

static bool is_unsigned(const pq_field *f) {
  if (!f) return false;
  if (f->converted >= PQ_CT_UINT_8 && f->converted <= PQ_CT_UINT_64) return true;
  return f->logical.kind == PQ_LT_INTEGER && !f->logical.is_signed;
}

static double big_endian_signed(const uint8_t *p, size_t n) {
  double v = 0;
  for (size_t i = 0; i < n; i++) v = v * 256 + p[i];
  if (n && (p[0] & 0x80)) v -= pow(256.0, (double)n);
  return v;
}

static void put_int96(FILE *o, const uint8_t *p) {
  uint64_t nanos;
  uint32_t jd;
  memcpy(&nanos, p, 8);
  memcpy(&jd, p + 8, 4);
  __int128 ns = ((__int128)jd - 2440588) * 86400000000000LL + (__int128)nanos;
  char tmp[48];
  int i = (int)sizeof tmp;
  bool neg = ns < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)ns : (unsigned __int128)ns;
  tmp[--i] = '\0';
  do {
    tmp[--i] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (neg) tmp[--i] = '-';
  fputs(tmp + i, o);
}

static void put_scalar(FILE *o, const pq_field *f, const pq_value *v) {
  bool dec = is_decimal(f);
  double scale = dec ? pow(10.0, decimal_scale(f)) : 1;
  switch (v->kind) {
    case PQ_V_BOOL: fputs(v->u.b ? "true" : "false", o); break;
    case PQ_V_INT32:
      if (dec) put_double(o, v->u.i32 / scale);
      else if (is_unsigned(f)) fprintf(o, "%" PRIu32, (uint32_t)v->u.i32);
      else fprintf(o, "%" PRId32, v->u.i32);
      break;
    case PQ_V_INT64:
      if (dec) put_double(o, (double)v->u.i64 / scale);
      else if (is_unsigned(f)) fprintf(o, "%" PRIu64, (uint64_t)v->u.i64);
      else fprintf(o, "%" PRId64, v->u.i64);
      break;
    case PQ_V_FLOAT: put_double(o, v->u.f); break;
    case PQ_V_DOUBLE: put_double(o, v->u.d); break;
    case PQ_V_INT96: put_int96(o, v->u.bytes); break;
    case PQ_V_BYTES: case PQ_V_FIXED:
      if (dec) put_double(o, big_endian_signed(v->u.bytes, v->len) / scale);
      else if (v->is_string) put_string(o, v->u.bytes, v->len);
      else put_hex(o, v->u.bytes, v->len);
      break;
    default: fputs("null", o);
  }
}

static void put_value(FILE *o, const pq_pnode *s, const pq_value *v);

static void put_key(FILE *o, const pq_pnode *s, const pq_value *k) {
  if (k->kind == PQ_V_BYTES && k->is_string) {
    put_string(o, k->u.bytes, k->len);
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return;
  put_value(m, s, k);
  fclose(m);
  if (len >= 2 && buf[0] == '"') put_string(o, (const uint8_t *)buf + 1, len - 2);
  else put_string(o, (const uint8_t *)buf, len);
  free(buf);
}

static void put_value(FILE *o, const pq_pnode *s, const pq_value *v) {
  if (v->kind == PQ_V_NULL) {
    fputs("null", o);
  } else if (v->kind == PQ_V_STRUCT) {
    fputc('{', o);
    for (uint32_t i = 0; i < v->len && s && i < s->num_children; i++) {
      if (i) fputc(',', o);
      put_string(o, (const uint8_t *)s->children[i].name, strlen(s->children[i].name));
      fputc(':', o);
      put_value(o, &s->children[i], &v->u.items[i]);
    }
    fputc('}', o);
  } else if (v->kind == PQ_V_LIST) {
    fputc('[', o);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) fputc(',', o);
      put_value(o, s ? &s->children[0] : NULL, &v->u.items[i]);
    }
    fputc(']', o);
  } else if (v->kind == PQ_V_MAP) {
    fputc('{', o);
    for (uint32_t i = 0; i < v->len; i++) {
      if (i) fputc(',', o);
      put_key(o, s ? &s->children[0] : NULL, &v->u.items[2 * i]);
      fputc(':', o);
      put_value(o, s ? &s->children[1] : NULL, &v->u.items[2 * i + 1]);
    }
    fputc('}', o);
  } else {
    put_scalar(o, s ? s->field : NULL, v);
  }
}

void pq_json_print(FILE *out, const pq_pnode *schema, const pq_value *v) {
  put_value(out, schema, v);
}

void pq_json_schema(FILE *o, const pq_field *f, int indent) {
  static const char *shapes[] = {"primitive", "struct", "list", "map"};
  fprintf(o, "%*s%s type=%d rep=%d conv=%d logical=%d shape=%s def=%d rep=%d%s\n", indent,
          "", f->name, f->type, f->repetition, f->converted, f->logical.kind,
          shapes[f->shape], f->max_def, f->max_rep, f->is_string ? " string" : "");
  for (uint32_t i = 0; i < f->num_children; i++) pq_json_schema(o, &f->children[i], indent + 2);
}
