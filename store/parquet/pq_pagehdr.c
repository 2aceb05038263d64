/* pq_pagehdr.c: decodes a Thrift PageHeader (data v1, dictionary, data v2). */
#include "store/parquet/pq_internal.h"

#include <string.h>

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

static int parse_v1(pq__tr *r, pq__pagehdr *h) {
  int16_t last = 0, id;
  int type;
  for (;;) {
    TRY(pq__tr_field(r, &last, &type, &id));
    if (type == PQ__TT_STOP) return 0;
    if (id == 1) TRY(pq__tr_i32(r, type, &h->num_values));
    else if (id == 2) TRY(pq__tr_i32(r, type, &h->encoding));
    else if (id == 3) TRY(pq__tr_i32(r, type, &h->def_encoding));
    else if (id == 4) TRY(pq__tr_i32(r, type, &h->rep_encoding));
    else TRY(pq__tr_skip(r, type));
  }
}

static int parse_dict(pq__tr *r, pq__pagehdr *h) {
  int16_t last = 0, id;
  int type;
  for (;;) {
    TRY(pq__tr_field(r, &last, &type, &id));
    if (type == PQ__TT_STOP) return 0;
    if (id == 1) TRY(pq__tr_i32(r, type, &h->num_values));
    else if (id == 2) TRY(pq__tr_i32(r, type, &h->encoding));
    else TRY(pq__tr_skip(r, type));
  }
}

static int parse_v2(pq__tr *r, pq__pagehdr *h) {
  int16_t last = 0, id;
  int type;
  h->is_compressed = true;
  for (;;) {
    TRY(pq__tr_field(r, &last, &type, &id));
    if (type == PQ__TT_STOP) return 0;
    switch (id) {
      case 1: TRY(pq__tr_i32(r, type, &h->num_values)); break;
      case 2: TRY(pq__tr_i32(r, type, &h->num_nulls)); break;
      case 3: TRY(pq__tr_i32(r, type, &h->num_rows)); break;
      case 4: TRY(pq__tr_i32(r, type, &h->encoding)); break;
      case 5: TRY(pq__tr_i32(r, type, &h->def_len)); break;
      case 6: TRY(pq__tr_i32(r, type, &h->rep_len)); break;
      case 7: TRY(pq__tr_bool(r, type, &h->is_compressed)); break;
      default: TRY(pq__tr_skip(r, type));
    }
  }
}

static int parse_sub(pq__tr *r, int type, int (*fn)(pq__tr *, pq__pagehdr *),
                     pq__pagehdr *h, bool *flag) {
  TRY(pq__tr_struct_begin(r, type));
  TRY(fn(r, h));
  pq__tr_struct_end(r);
  *flag = true;
  return 0;
}

int pq__pagehdr_parse(pq__pagehdr *h, const uint8_t *p, size_t n, size_t *hdr_len) {
  pq__tr r = {p, p + n, 0, "page header"};
  int16_t last = 0, id;
  int type;
  memset(h, 0, sizeof *h);
  h->type = -1;
  for (;;) {
    TRY(pq__tr_field(&r, &last, &type, &id));
    if (type == PQ__TT_STOP) break;
    switch (id) {
      case 1: TRY(pq__tr_i32(&r, type, &h->type)); break;
      case 2: TRY(pq__tr_i32(&r, type, &h->uncompressed_size)); break;
      case 3: TRY(pq__tr_i32(&r, type, &h->compressed_size)); break;
      case 5: TRY(parse_sub(&r, type, parse_v1, h, &h->has_data)); break;
      case 7: TRY(parse_sub(&r, type, parse_dict, h, &h->has_dict)); break;
      case 8: TRY(parse_sub(&r, type, parse_v2, h, &h->has_v2)); break;
      default: TRY(pq__tr_skip(&r, type));
    }
  }
  if (h->compressed_size < 0 || h->uncompressed_size < 0 || h->num_values < 0)
    return pq__tr_corrupt(&r, "negative size or count");
  *hdr_len = (size_t)(r.p - p);
  return 0;
}
