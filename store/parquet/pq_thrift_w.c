/* pq_thrift_w.c: a Thrift compact protocol writer (footer and page headers). Errors are
 * sticky in w->err so a serialization can be written straight through and checked once. */
#include "store/parquet/pq_internal.h"

static void put(pq__tw *w, const void *p, size_t n) {
  if (!w->err) w->err = pq__buf_put(w->out, p, n);
}

void pq__tw_varint_raw(pq__tw *w, uint64_t v) {
  if (!w->err) w->err = pq__buf_uleb(w->out, v);
}

void pq__tw_zigzag_raw(pq__tw *w, int64_t v) {
  pq__tw_varint_raw(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void pq__tw_field(pq__tw *w, int16_t id, int type) {
  int16_t delta = (int16_t)(id - w->last[w->depth]);
  if (delta > 0 && delta <= 15) {
    uint8_t b = (uint8_t)(delta << 4 | type);
    put(w, &b, 1);
  } else {
    uint8_t b = (uint8_t)type;
    put(w, &b, 1);
    pq__tw_zigzag_raw(w, id);
  }
  w->last[w->depth] = id;
}

void pq__tw_i32(pq__tw *w, int16_t id, int32_t v) {
  pq__tw_field(w, id, PQ__TT_I32);
  pq__tw_zigzag_raw(w, v);
}

void pq__tw_i64(pq__tw *w, int16_t id, int64_t v) {
  pq__tw_field(w, id, PQ__TT_I64);
  pq__tw_zigzag_raw(w, v);
}

void pq__tw_bool(pq__tw *w, int16_t id, bool v) {
  pq__tw_field(w, id, v ? PQ__TT_TRUE : PQ__TT_FALSE);
}

void pq__tw_binary(pq__tw *w, int16_t id, const void *p, size_t n) {
  pq__tw_field(w, id, PQ__TT_BINARY);
  pq__tw_varint_raw(w, n);
  put(w, p, n);
}

void pq__tw_list(pq__tw *w, int16_t id, int elem_type, uint32_t n) {
  pq__tw_field(w, id, PQ__TT_LIST);
  if (n < 15) {
    uint8_t b = (uint8_t)(n << 4 | (uint32_t)elem_type);
    put(w, &b, 1);
  } else {
    uint8_t b = (uint8_t)(0xf0 | elem_type);
    put(w, &b, 1);
    pq__tw_varint_raw(w, n);
  }
}

void pq__tw_struct_begin(pq__tw *w, int16_t id) {
  if (id >= 0) pq__tw_field(w, id, PQ__TT_STRUCT);
  if (w->depth + 1 >= PQ__MAX_DEPTH) {
    w->err = dd_err_set(DD_EINTERNAL, "parquet: thrift writer nesting too deep");
    return;
  }
  w->last[++w->depth] = 0;
}

void pq__tw_struct_end(pq__tw *w) {
  uint8_t z = 0;
  put(w, &z, 1);
  if (w->depth > 0) w->depth--;
}
