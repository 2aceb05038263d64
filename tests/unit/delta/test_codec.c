/* test_codec.c: the delta module's decoders: schema strings, partition values, stats,
 * timestamps, Z85, the deletion-vector (portable roaring) decoder, DV paths and ids,
 * _last_checkpoint and commit-file parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"

static void test_schema(void **state) {
  (void)state;
  const char *js =
      "{\"type\":\"struct\",\"fields\":["
      "{\"name\":\"a\",\"type\":\"decimal(10,2)\",\"nullable\":true,\"metadata\":"
      "{\"delta.columnMapping.id\":7,\"delta.columnMapping.physicalName\":\"col-1\"}},"
      "{\"name\":\"t\",\"type\":\"timestamp_ntz\",\"nullable\":false,\"metadata\":{}},"
      "{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"keyType\":\"string\",\"valueType\":"
      "{\"type\":\"array\",\"elementType\":\"long\",\"containsNull\":false},"
      "\"valueContainsNull\":true},\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"s\",\"type\":{\"type\":\"struct\",\"fields\":[{\"name\":\"x\",\"type\":"
      "\"byte\",\"nullable\":true,\"metadata\":{}}]},\"nullable\":true,\"metadata\":{}}]}";
  dl_schema *s = NULL;
  assert_int_equal(dl_schema_parse(&s, js, strlen(js)), 0);
  const dl_type *r = dl_schema_root(s);
  assert_int_equal(r->num_fields, 5);
  assert_int_equal(r->fields[0].type->kind, DL_TYPE_DECIMAL);
  assert_int_equal(r->fields[0].type->precision, 10);
  assert_int_equal(r->fields[0].type->scale, 2);
  assert_int_equal(r->fields[0].column_mapping_id, 7);
  assert_string_equal(r->fields[0].physical_name, "col-1");
  assert_false(r->fields[1].nullable);
  assert_int_equal(r->fields[1].type->kind, DL_TYPE_TIMESTAMP_NTZ);
  assert_int_equal(r->fields[2].type->kind, DL_TYPE_VARIANT);
  assert_int_equal(r->fields[3].type->kind, DL_TYPE_MAP);
  assert_int_equal(r->fields[3].type->value->element->kind, DL_TYPE_LONG);
  assert_non_null(dl_schema_field(s, "S"));
  char buf[256];
  dl_type_format(r->fields[3].type, buf, sizeof buf);
  assert_string_equal(buf, "map<string,array<long>>");
  dl_schema_free(s);
  const char *blob = "{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"blob\"}]}";
  assert_int_equal(dl_schema_parse(&s, blob, strlen(blob)), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "blob"));
  assert_int_equal(dl_schema_parse(&s, "[1", 2), DD_ECORRUPT);
  assert_int_equal(dl_schema_parse(&s, "\"long\"", 6), DD_ECORRUPT);
}

static void test_partition_values(void **state) {
  (void)state;
  dl_type t = {0};
  dl_value v;
  t.kind = DL_TYPE_INTEGER;
  assert_int_equal(dl_partition_value_parse(&v, &t, "-42"), 0);
  assert_int_equal(v.i64, -42);
  assert_int_equal(dl_partition_value_parse(&v, &t, ""), 0);
  assert_true(v.is_null);
  assert_int_equal(dl_partition_value_parse(&v, &t, NULL), 0);
  assert_true(v.is_null);
  assert_int_equal(dl_partition_value_parse(&v, &t, "3000000000"), DD_ECORRUPT);
  t.kind = DL_TYPE_DATE;
  assert_int_equal(dl_partition_value_parse(&v, &t, "1970-01-02"), 0);
  assert_int_equal(v.i64, 1);
  assert_int_equal(dl_partition_value_parse(&v, &t, "2021-02-31x"), DD_ECORRUPT);
  t.kind = DL_TYPE_TIMESTAMP;
  assert_int_equal(dl_partition_value_parse(&v, &t, "1970-01-01 00:00:01.5"), 0);
  assert_int_equal(v.i64, 1500000);
  assert_int_equal(dl_partition_value_parse(&v, &t, "1970-01-01T00:00:00.123456Z"), 0);
  assert_int_equal(v.i64, 123456);
  t.kind = DL_TYPE_BOOLEAN;
  assert_int_equal(dl_partition_value_parse(&v, &t, "true"), 0);
  assert_true(v.b);
  t.kind = DL_TYPE_DOUBLE;
  assert_int_equal(dl_partition_value_parse(&v, &t, "2.5"), 0);
  assert_true(v.f64 == 2.5);
  assert_int_equal(dl_partition_value_parse(&v, &t, "NaN"), 0);
  assert_true(isnan(v.f64));
  t.kind = DL_TYPE_DECIMAL;
  assert_int_equal(dl_partition_value_parse(&v, &t, "-12.50"), 0);
  assert_string_equal(v.str, "-12.50");
  assert_int_equal(dl_partition_value_parse(&v, &t, "1x"), DD_ECORRUPT);
  t.kind = DL_TYPE_STRING;
  assert_int_equal(dl_partition_value_parse(&v, &t, "a/b%c d"), 0);
  assert_string_equal(v.str, "a/b%c d");
}

static void test_timestamps_stats_kv(void **state) {
  (void)state;
  int64_t ms;
  assert_int_equal(dl_parse_timestamp("1700000000123", &ms), 0);
  assert_int_equal(ms, 1700000000123LL);
  assert_int_equal(dl_parse_timestamp("2024-01-02T03:04:05Z", &ms), 0);
  assert_int_equal(ms, 1704164645000LL);
  assert_int_equal(dl_parse_timestamp("2024-01-02T04:04:05.5+01:00", &ms), 0);
  assert_int_equal(ms, 1704164645500LL);
  assert_int_equal(dl_parse_timestamp("yesterday", &ms), DD_EINVAL);
  dl_stats *st = NULL;
  assert_int_equal(dl_stats_parse(&st, "{\"numRecords\":5,\"minValues\":{\"a\":{\"b\":1}},"
                                       "\"nullCount\":{\"c\":0},\"tightBounds\":false}"), 0);
  assert_int_equal(dl_stats_num_records(st), 5);
  assert_false(dl_stats_tight_bounds(st));
  char *s = NULL;
  assert_int_equal(dl_stats_get(&s, st, DL_STATS_MIN, "a.b"), 0);
  assert_string_equal(s, "1");
  free(s);
  assert_int_equal(dl_stats_get(&s, st, DL_STATS_MAX, "a.b"), DD_ENOTFOUND);
  dl_stats_free(st);
  assert_int_equal(dl_stats_parse(&st, "[]"), DD_ECORRUPT);
  char *packed = NULL;
  const char *keys[] = {"x", "y"}, *vals[] = {"1", NULL};
  assert_int_equal(dl_kv_pack(&packed, keys, vals, 2), 0);
  const char *v;
  assert_int_equal(dl_kv_get(packed, "x", &v), 1);
  assert_string_equal(v, "1");
  assert_int_equal(dl_kv_get(packed, "y", &v), 1);
  assert_null(v);
  assert_int_equal(dl_kv_get(packed, "z", &v), 0);
  free(packed);
}

static void test_z85_and_dv(void **state) {
  (void)state;
  /* The inline example of PROTOCOL.md: rows 3, 4, 7, 11, 18, 29. */
  dl_dv dv = {.storage_type = 'i',
              .path_or_inline = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
              .offset = -1, .size_in_bytes = 40, .cardinality = 6};
  dl_rowset r;
  int rc = dl_dv_load(&r, NULL, &dv);
  if (rc) print_message("%s\n", dd_err_msg());
  assert_int_equal(rc, 0);
  uint64_t want[] = {3, 4, 7, 11, 18, 29};
  assert_int_equal(r.count, 6);
  for (int i = 0; i < 6; i++) assert_int_equal(r.rows[i], want[i]);
  assert_true(dl_rowset_contains(&r, 11));
  assert_false(dl_rowset_contains(&r, 12));
  dl_rowset_free(&r);
  dv.cardinality = 7;
  assert_int_equal(dl_dv_load(&r, NULL, &dv), DD_ECORRUPT);
  uint8_t *b;
  size_t n;
  assert_int_equal(dl_z85_decode(&b, &n, "HelloWorld", 10), 0);
  uint8_t hw[] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
  assert_int_equal(n, 8);
  assert_memory_equal(b, hw, 8);
  free(b);
  assert_int_equal(dl_z85_decode(&b, &n, "abc", 3), DD_ECORRUPT);
  /* 'u' path with a prefix: the PROTOCOL.md example */
  dl_dv u = {.storage_type = 'u', .path_or_inline = "ab^-aqEH.-t@S}K{vb[*k^", .offset = 4,
             .size_in_bytes = 40, .cardinality = 6};
  char *p = NULL;
  assert_int_equal(dl_dv_path(&p, &u), 0);
  assert_string_equal(p, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
  free(p);
  assert_int_equal(dl_dv_unique_id(&p, &u), 0);
  assert_string_equal(p, "uab^-aqEH.-t@S}K{vb[*k^@4");
  free(p);
  /* truncated and garbage inputs fail cleanly */
  uint8_t junk[16] = {0xD1, 0xD3, 0x39, 0x64, 5, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  assert_int_equal(dl_dv_decode(&r, junk, sizeof junk), DD_ECORRUPT);
  assert_int_equal(dl_dv_decode(&r, junk, 3), DD_ECORRUPT);
}

static void test_last_checkpoint(void **state) {
  (void)state;
  dl__last_cp lc;
  const char *ok = "{\"version\":10,\"size\":13,\"parts\":2,\"sizeInBytes\":99,\"numOfAddFiles\":4}";
  assert_int_equal(dl__last_cp_parse(&lc, ok, strlen(ok)), 0);
  assert_int_equal(lc.version, 10);
  assert_int_equal(lc.parts, 2);
  assert_int_equal(lc.num_add_files, 4);
  assert_int_equal(dl__last_cp_parse(&lc, "", 0), DD_ECORRUPT);
  assert_int_equal(dl__last_cp_parse(&lc, "{\"version\":-1}", 14), DD_ECORRUPT);
}

static int count_cb(void *ctx, dl__action *a) {
  int *counts = ctx;
  counts[a->kind]++;
  return 0;
}

static void test_commit_parse(void **state) {
  (void)state;
  const char *c =
      "{\"commitInfo\":{\"timestamp\":1,\"inCommitTimestamp\":5}}\n"
      "{\"add\":{\"path\":\"a%20b\",\"size\":3,\"partitionValues\":{\"p\":null},"
      "\"modificationTime\":1,\"dataChange\":true,\"unknownField\":1}}\n\n"
      "{\"remove\":{\"path\":\"x\",\"deletionTimestamp\":7}}\n"
      "{\"somethingNew\":{}}\n";
  int counts[DL__A_UNKNOWN + 1] = {0};
  assert_int_equal(dl__parse_commit(c, strlen(c), "t", count_cb, counts), 0);
  assert_int_equal(counts[DL__A_ADD], 1);
  assert_int_equal(counts[DL__A_REMOVE], 1);
  assert_int_equal(counts[DL__A_COMMITINFO], 1);
  assert_int_equal(counts[DL__A_UNKNOWN], 1);
  const char *bad = "{\"add\":{\"path\":\"a\"}}\n";
  assert_int_equal(dl__parse_commit(bad, strlen(bad), "t", count_cb, counts), DD_ECORRUPT);
  assert_int_equal(dl__parse_commit("{x", 2, "t", count_cb, counts), DD_ECORRUPT);
}

/* Writer features this engine honours on write: identity tables (writer 7 with
 * identityColumns, as Spark writes them) are writable for log operations; an unknown
 * writer feature still is not. */
static void test_writer_features(void **state) {
  (void)state;
  const char *const rf[] = {"deletionVectors"};
  const char *const wf[] = {"deletionVectors", "identityColumns", "invariants"};
  dl_protocol p = {3, 7, 1, 3, rf, wf};
  assert_int_equal(dl_protocol_check(&p, true), 0);
  const char *const bad[] = {"identityColumns", "someFutureFeature"};
  p.writer_features = bad;
  p.num_writer_features = 2;
  assert_int_equal(dl_protocol_check(&p, true), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "someFutureFeature"));
  assert_int_equal(dl_protocol_check(&p, false), 0); /* reading ignores writer features */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schema),          cmocka_unit_test(test_partition_values),
      cmocka_unit_test(test_timestamps_stats_kv), cmocka_unit_test(test_z85_and_dv),
      cmocka_unit_test(test_last_checkpoint), cmocka_unit_test(test_commit_parse),
      cmocka_unit_test(test_writer_features),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
