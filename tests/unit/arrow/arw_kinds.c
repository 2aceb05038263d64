/* arw_kinds.c: writes an Arrow IPC stream of the kinds added with the column API (Int8,
 * Int16, Float32, Decimal128, Null) beside a list and a map, built with the bulk appends,
 * then a second batch made by arw_batch_take and a third by arw_batch_slice, to the file
 * named on the command line; pyarrow_check.py reads it with pyarrow and compares every cell
 * with values it computes from the same rules. Keep the two in step. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "tests/unit/arrow/write_file.h"

enum { ROWS = 20 };

typedef struct ids {
  int i8, i16, f32, dec, dec0, nul, l, el, m, mk, mv;
} ids;

static int build_schema(arw_schema *s, ids *f) {
  int rc = arw_schema_add(s, ARW_ROOT, "i8", ARW_INT8, true, &f->i8);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "i16", ARW_INT16, false, &f->i16);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "f32", ARW_FLOAT32, true, &f->f32);
  if (!rc) rc = arw_schema_add_decimal(s, ARW_ROOT, "dec", 38, 6, true, &f->dec);
  if (!rc) rc = arw_schema_add_decimal(s, ARW_ROOT, "dec0", 5, 0, false, &f->dec0);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "nul", ARW_NULL, true, &f->nul);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &f->l);
  if (!rc) rc = arw_schema_add(s, f->l, "element", ARW_INT8, true, &f->el);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &f->m);
  if (!rc) rc = arw_schema_add(s, f->m, "key", ARW_UTF8, false, &f->mk);
  if (!rc) rc = arw_schema_add_decimal(s, f->m, "value", 10, 2, true, &f->mv);
  return rc;
}

/* The 16-byte little-endian two's complement of v, sign-extended. */
static void dec_le(int64_t v, uint8_t out[16]) {
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)v >> (8 * i));
  memset(out + 8, v < 0 ? 0xFF : 0, 8);
}

static int fill(arw_batch *b, const ids *f) {
  int8_t v8[ROWS];
  int16_t v16[ROWS];
  float vf[ROWS];
  uint8_t dec[ROWS][16], dec0[ROWS][16], valid[ROWS], fvalid[ROWS];
  for (int i = 0; i < ROWS; i++) {
    v8[i] = (int8_t)(i * 13 - 128);
    v16[i] = (int16_t)(i * 3000 - 32768);
    vf[i] = (float)i / 8.0f;
    valid[i] = i % 3 != 0;
    fvalid[i] = i != 4;
    /* dec: (i - 10) * 123456789012 with scale 6, and row 19 the largest 38 digits */
    dec_le((int64_t)(i - 10) * 123456789012LL, dec[i]);
    dec_le(i * 7 - 99999 + (i == ROWS - 1 ? 199998 - 7 * i : 0), dec0[i]);
  }
  /* 10^38 - 1 = 0x4B3B4CA85A86C47A098A223FFFFFFFFF */
  static const uint8_t max38[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0x3F, 0x22, 0x8A, 0x09,
                                    0x7A, 0xC4, 0x86, 0x5A, 0xA8, 0x4C, 0x3B, 0x4B};
  memcpy(dec[ROWS - 1], max38, 16);
  int rc = arw_append_fixed(b, f->i8, v8, ROWS, valid);
  if (!rc) rc = arw_append_fixed(b, f->i16, v16, ROWS, NULL);
  if (!rc) rc = arw_append_fixed(b, f->f32, vf, ROWS, fvalid);
  if (!rc) rc = arw_append_fixed(b, f->dec, dec, ROWS, valid);
  if (!rc) rc = arw_append_fixed(b, f->dec0, dec0, ROWS, NULL);
  if (!rc) rc = arw_append_nulls(b, f->nul, ROWS);
  uint8_t d16[16];
  char key[8];
  for (int i = 0; !rc && i < ROWS; i++) {
    for (int j = 0; !rc && j < i % 4; j++) rc = arw_append_i32(b, f->el, i - j);
    if (!rc) rc = i % 5 == 2 ? arw_append_null(b, f->l) : arw_append_done(b, f->l);
    for (int j = 0; !rc && j < i % 3; j++) {
      snprintf(key, sizeof key, "k%d", j);
      dec_le(i * 100 + j, d16);
      rc = arw_append_str(b, f->mk, key, strlen(key));
      if (!rc) rc = j == 1 ? arw_append_null(b, f->mv) : arw_append_dec128(b, f->mv, d16);
    }
    if (!rc) rc = i == 7 ? arw_append_null(b, f->m) : arw_append_done(b, f->m);
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.arrows\n", argv[0]);
    return 2;
  }
  arw_schema *s = NULL;
  arw_batch *b = NULL, *t = NULL, *sl = NULL;
  arw_buf out = ARW_BUF_INIT;
  ids f;
  static const size_t take[] = {19, 2, 7, 7, 0, 13, 4};
  int rc = arw_schema_new(&s);
  if (!rc) rc = build_schema(s, &f);
  if (!rc) rc = arw_batch_new(&b, s);
  if (!rc) rc = fill(b, &f);
  if (!rc) rc = arw_batch_take(&t, b, take, sizeof take / sizeof take[0]);
  if (!rc) rc = arw_batch_slice(&sl, b, 5, 17);
  if (!rc) rc = arw_write_schema(&out, s);
  if (!rc) rc = arw_write_batch(&out, b);
  if (!rc) rc = arw_write_batch(&out, t);
  if (!rc) rc = arw_write_batch(&out, sl);
  if (!rc) rc = arw_write_eos(&out);
  if (!rc) rc = arw_test_write_file(argv[1], &out);
  if (rc) fprintf(stderr, "arw_kinds: %s\n", dd_err_msg());
  arw_buf_free(&out);
  arw_batch_free(sl);
  arw_batch_free(t);
  arw_batch_free(b);
  arw_schema_free(s);
  return rc ? 1 : 0;
}
