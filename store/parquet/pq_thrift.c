/* pq_thrift.c: a bounded reader for the Thrift compact protocol (footer, page headers).
 * Every read checks the remaining bytes; nesting is limited to PQ__MAX_DEPTH. */
#include "store/parquet/pq_internal.h"

int pq__tr_corrupt(const pq__tr *r, const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt %s: %s", r->what ? r->what : "thrift",
                    why);
}

int pq__tr_varint(pq__tr *r, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return pq__tr_corrupt(r, "truncated varint");
    uint8_t c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return pq__tr_corrupt(r, "varint longer than 10 bytes");
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int pq__tr_field(pq__tr *r, int16_t *last_id, int *type, int16_t *id) {
  if (r->p >= r->end) return pq__tr_corrupt(r, "truncated struct (no stop byte)");
  uint8_t b = *r->p++;
  *type = b & 0x0f;
  if (*type == PQ__TT_STOP) return 0;
  int delta = b >> 4;
  if (delta) {
    *id = (int16_t)(*last_id + delta);
  } else {
    uint64_t v = 0;
    int rc = pq__tr_varint(r, &v);
    if (rc) return rc;
    int64_t s = unzigzag(v);
    if (s < INT16_MIN || s > INT16_MAX) return pq__tr_corrupt(r, "field id out of range");
    *id = (int16_t)s;
  }
  *last_id = *id;
  return 0;
}

int pq__tr_i64(pq__tr *r, int type, int64_t *out) {
  if (type == PQ__TT_I8) {
    if (r->p >= r->end) return pq__tr_corrupt(r, "truncated byte");
    *out = (int8_t)*r->p++;
    return 0;
  }
  if (type != PQ__TT_I16 && type != PQ__TT_I32 && type != PQ__TT_I64)
    return pq__tr_corrupt(r, "expected an integer field");
  uint64_t v = 0;
  int rc = pq__tr_varint(r, &v);
  if (rc) return rc;
  *out = unzigzag(v);
  return 0;
}

int pq__tr_i32(pq__tr *r, int type, int32_t *out) {
  int64_t v = 0;
  int rc = pq__tr_i64(r, type, &v);
  if (rc) return rc;
  if (v < INT32_MIN || v > INT32_MAX) return pq__tr_corrupt(r, "i32 out of range");
  *out = (int32_t)v;
  return 0;
}

int pq__tr_bool(pq__tr *r, int type, bool *out) {
  if (type == PQ__TT_TRUE || type == PQ__TT_FALSE) {
    *out = type == PQ__TT_TRUE;
    return 0;
  }
  return pq__tr_corrupt(r, "expected a bool field");
}

int pq__tr_binary(pq__tr *r, int type, const uint8_t **p, size_t *n) {
  if (type != PQ__TT_BINARY) return pq__tr_corrupt(r, "expected a binary field");
  uint64_t len = 0;
  int rc = pq__tr_varint(r, &len);
  if (rc) return rc;
  if (len > (uint64_t)(r->end - r->p)) return pq__tr_corrupt(r, "binary length past end");
  *p = r->p;
  *n = (size_t)len;
  r->p += len;
  return 0;
}

int pq__tr_list(pq__tr *r, int type, int *elem_type, uint32_t *size) {
  if (type != PQ__TT_LIST && type != PQ__TT_SET) return pq__tr_corrupt(r, "expected a list");
  if (r->p >= r->end) return pq__tr_corrupt(r, "truncated list header");
  uint8_t b = *r->p++;
  *elem_type = b & 0x0f;
  uint64_t n = b >> 4;
  if (n == 15) {
    int rc = pq__tr_varint(r, &n);
    if (rc) return rc;
  }
  /* Every element takes at least one byte, so the size cannot exceed what is left. */
  if (n > (uint64_t)(r->end - r->p)) return pq__tr_corrupt(r, "list size past end");
  *size = (uint32_t)n;
  return 0;
}

int pq__tr_struct_begin(pq__tr *r, int type) {
  if (type != PQ__TT_STRUCT) return pq__tr_corrupt(r, "expected a struct");
  if (++r->depth > PQ__MAX_DEPTH) return pq__tr_corrupt(r, "nesting too deep");
  return 0;
}

void pq__tr_struct_end(pq__tr *r) { r->depth--; }

static int skip_struct(pq__tr *r) {
  int16_t last = 0, id = 0;
  int type = 0, rc;
  for (;;) {
    if ((rc = pq__tr_field(r, &last, &type, &id))) return rc;
    if (type == PQ__TT_STOP) return 0;
    if ((rc = pq__tr_skip(r, type))) return rc;
  }
}

static int skip_collection(pq__tr *r, int type) {
  int et, rc;
  uint32_t n;
  if (type == PQ__TT_MAP) {
    uint64_t m = 0;
    if ((rc = pq__tr_varint(r, &m))) return rc;
    if (m == 0) return 0;
    if (m > (uint64_t)(r->end - r->p)) return pq__tr_corrupt(r, "map size past end");
    if (r->p >= r->end) return pq__tr_corrupt(r, "truncated map header");
    uint8_t kv = *r->p++;
    for (uint64_t i = 0; i < m; i++) {
      if ((rc = pq__tr_skip(r, kv >> 4)) || (rc = pq__tr_skip(r, kv & 0x0f))) return rc;
    }
    return 0;
  }
  if ((rc = pq__tr_list(r, type, &et, &n))) return rc;
  for (uint32_t i = 0; i < n; i++) {
    if (et == PQ__TT_TRUE || et == PQ__TT_FALSE) {
      if (r->p >= r->end) return pq__tr_corrupt(r, "truncated bool list");
      r->p++;
    } else if ((rc = pq__tr_skip(r, et))) {
      return rc;
    }
  }
  return 0;
}

int pq__tr_skip(pq__tr *r, int type) {
  int64_t iv;
  const uint8_t *p;
  size_t n;
  int rc = 0;
  if (++r->depth > PQ__MAX_DEPTH) return pq__tr_corrupt(r, "nesting too deep");
  switch (type) {
    case PQ__TT_TRUE: case PQ__TT_FALSE: break;
    case PQ__TT_I8: case PQ__TT_I16: case PQ__TT_I32: case PQ__TT_I64:
      rc = pq__tr_i64(r, type, &iv);
      break;
    case PQ__TT_DOUBLE:
      if (r->end - r->p < 8) rc = pq__tr_corrupt(r, "truncated double");
      else r->p += 8;
      break;
    case PQ__TT_BINARY: rc = pq__tr_binary(r, type, &p, &n); break;
    case PQ__TT_LIST: case PQ__TT_SET: case PQ__TT_MAP: rc = skip_collection(r, type); break;
    case PQ__TT_STRUCT: rc = skip_struct(r); break;
    default: rc = pq__tr_corrupt(r, "unknown field type");
  }
  r->depth--;
  return rc;
}
