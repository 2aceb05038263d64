/* arw_tool.c: writes the cross-check Arrow IPC stream (every type the writer supports,
 * nulls at every level, two record batches) to the file named on the command line, for
 * crosscheck.py to read back with the apache-arrow JS library. The values are listed
 * independently in crosscheck.py; keep the two in step. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "tests/unit/arrow/write_file.h"

/* Field ids of the cross-check schema. */
typedef struct ids {
  int s, b, i32, i64, f64, ok, d, ts, tsn, tags, tag, props, pk, pv;
  int info, name, n, t, te, m, mk, mv, inner, flag;
} ids;

static int build_schema(arw_schema *s, ids *f) {
  int rc = 0;
#define ADD(parent, nm, kind, nullable, out) \
  if (!rc) rc = arw_schema_add(s, parent, nm, kind, nullable, out)
  ADD(ARW_ROOT, "s", ARW_UTF8, true, &f->s);
  ADD(ARW_ROOT, "b", ARW_BINARY, true, &f->b);
  ADD(ARW_ROOT, "i32", ARW_INT32, true, &f->i32);
  ADD(ARW_ROOT, "i64", ARW_INT64, false, &f->i64);
  ADD(ARW_ROOT, "f64", ARW_FLOAT64, true, &f->f64);
  ADD(ARW_ROOT, "ok", ARW_BOOL, true, &f->ok);
  ADD(ARW_ROOT, "d", ARW_DATE32, true, &f->d);
  ADD(ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &f->ts);
  ADD(ARW_ROOT, "tsn", ARW_TIMESTAMP, true, &f->tsn);
  ADD(ARW_ROOT, "tags", ARW_LIST, true, &f->tags);
  ADD(f->tags, "element", ARW_UTF8, true, &f->tag);
  ADD(ARW_ROOT, "props", ARW_MAP, true, &f->props);
  ADD(f->props, "key", ARW_UTF8, false, &f->pk);
  ADD(f->props, "value", ARW_UTF8, true, &f->pv);
  ADD(ARW_ROOT, "info", ARW_STRUCT, true, &f->info);
  ADD(f->info, "name", ARW_UTF8, true, &f->name);
  ADD(f->info, "n", ARW_INT32, false, &f->n);
  ADD(f->info, "t", ARW_LIST, true, &f->t);
  ADD(f->t, "element", ARW_UTF8, true, &f->te);
  ADD(f->info, "m", ARW_MAP, true, &f->m);
  ADD(f->m, "key", ARW_UTF8, false, &f->mk);
  ADD(f->m, "value", ARW_UTF8, true, &f->mv);
  ADD(f->info, "inner", ARW_STRUCT, true, &f->inner);
  ADD(f->inner, "flag", ARW_BOOL, true, &f->flag);
#undef ADD
  return rc;
}

static int str(arw_batch *b, int id, const char *s) { return arw_append_str(b, id, s, strlen(s)); }

/* Batch 1: three hand-picked rows (full values, all nulls, edge values). */
static int batch1(arw_batch *b, const ids *f) {
  int rc = 0;
#define DO(call) if (!rc) rc = (call)
  /* row 0 */
  DO(str(b, f->s, "h\xc3\xa9llo"));
  DO(arw_append_str(b, f->b, "\x00\xff", 2));
  DO(arw_append_i32(b, f->i32, -5));
  DO(arw_append_i64(b, f->i64, 9007199254740993LL));
  DO(arw_append_f64(b, f->f64, 1.5));
  DO(arw_append_bool(b, f->ok, true));
  DO(arw_append_i32(b, f->d, 19000));
  DO(arw_append_i64(b, f->ts, 1700000000123456LL));
  DO(arw_append_i64(b, f->tsn, -1));
  DO(str(b, f->tag, "a")); DO(arw_append_null(b, f->tag)); DO(str(b, f->tag, "c"));
  DO(arw_append_done(b, f->tags));
  DO(str(b, f->pk, "k1")); DO(str(b, f->pv, "v1"));
  DO(str(b, f->pk, "k2")); DO(arw_append_null(b, f->pv));
  DO(arw_append_done(b, f->props));
  DO(str(b, f->name, "x")); DO(arw_append_i32(b, f->n, 1));
  DO(str(b, f->te, "p")); DO(arw_append_done(b, f->t));
  DO(str(b, f->mk, "a")); DO(str(b, f->mv, "b")); DO(arw_append_done(b, f->m));
  DO(arw_append_bool(b, f->flag, true)); DO(arw_append_done(b, f->inner));
  DO(arw_append_done(b, f->info));
  /* row 1: nulls everywhere i64 allows */
  const int nullable[] = {f->s, f->b, f->i32, f->f64, f->ok, f->d, f->ts, f->tsn,
                          f->tags, f->props, f->info};
  for (size_t i = 0; i < sizeof nullable / sizeof nullable[0]; i++)
    DO(arw_append_null(b, nullable[i]));
  DO(arw_append_i64(b, f->i64, 0));
  /* row 2: empty and extreme values */
  DO(str(b, f->s, ""));
  DO(arw_append_str(b, f->b, "", 0));
  DO(arw_append_i32(b, f->i32, 2147483647));
  DO(arw_append_i64(b, f->i64, INT64_MIN));
  DO(arw_append_f64(b, f->f64, -0.25));
  DO(arw_append_bool(b, f->ok, false));
  DO(arw_append_i32(b, f->d, -1));
  DO(arw_append_i64(b, f->ts, 0));
  DO(arw_append_i64(b, f->tsn, 0));
  DO(arw_append_done(b, f->tags));
  DO(arw_append_done(b, f->props));
  DO(arw_append_null(b, f->name)); DO(arw_append_i32(b, f->n, -7));
  DO(arw_append_null(b, f->t));
  DO(arw_append_done(b, f->m));
  DO(arw_append_null(b, f->inner));
  DO(arw_append_done(b, f->info));
  return rc;
}

/* Batch 2: eleven generated rows (bitmaps spanning two bytes); crosscheck.py computes the
 * same rows from the same rules. */
static int batch2(arw_batch *b, const ids *f) {
  int rc = 0;
  char s[32];
  for (int i = 0; !rc && i < 11; i++) {
    snprintf(s, sizeof s, "r%d", i);
    DO(i % 3 == 0 ? arw_append_null(b, f->s) : str(b, f->s, s));
    DO(i % 4 == 1 ? arw_append_null(b, f->b) : arw_append_str(b, f->b, s, strlen(s)));
    DO(arw_append_i32(b, f->i32, i * -100));
    DO(arw_append_i64(b, f->i64, (int64_t)i * 1000000007LL));
    DO(i == 7 ? arw_append_null(b, f->f64) : arw_append_f64(b, f->f64, i / 4.0));
    DO(i % 5 == 0 ? arw_append_null(b, f->ok) : arw_append_bool(b, f->ok, i % 2 == 0));
    DO(arw_append_i32(b, f->d, 18000 + i));
    DO(arw_append_i64(b, f->ts, 1600000000000000LL + i));
    DO(i % 2 ? arw_append_null(b, f->tsn) : arw_append_i64(b, f->tsn, -i));
    for (int k = 0; !rc && k < i % 3; k++) DO(str(b, f->tag, s));
    DO(i == 4 ? arw_append_null(b, f->tags) : arw_append_done(b, f->tags));
    for (int k = 0; !rc && k < i % 2; k++) {
      DO(str(b, f->pk, "k"));
      DO(str(b, f->pv, s));
    }
    DO(i == 9 ? arw_append_null(b, f->props) : arw_append_done(b, f->props));
    if (i % 4 == 3) {
      DO(arw_append_null(b, f->info));
      continue;
    }
    DO(str(b, f->name, s));
    DO(arw_append_i32(b, f->n, i));
    DO(arw_append_done(b, f->t));
    DO(arw_append_null(b, f->m));
    DO(arw_append_bool(b, f->flag, i > 5));
    DO(arw_append_done(b, f->inner));
    DO(arw_append_done(b, f->info));
  }
#undef DO
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.arrows\n", argv[0]);
    return 2;
  }
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  arw_buf out = ARW_BUF_INIT;
  ids f;
  int rc = arw_schema_new(&s);
  if (!rc) rc = build_schema(s, &f);
  if (!rc) rc = arw_batch_new(&b, s);
  if (!rc) rc = arw_write_schema(&out, s);
  if (!rc) rc = batch1(b, &f);
  if (!rc) rc = arw_write_batch(&out, b);
  if (!rc) arw_batch_clear(b);
  if (!rc) rc = batch2(b, &f);
  if (!rc) rc = arw_write_batch(&out, b);
  if (!rc) rc = arw_write_eos(&out);
  if (!rc) rc = arw_test_write_file(argv[1], &out);
  if (rc) fprintf(stderr, "arw_tool: %s\n", dd_err_msg());
  arw_buf_free(&out);
  arw_batch_free(b);
  arw_schema_free(s);
  return rc ? 1 : 0;
}
