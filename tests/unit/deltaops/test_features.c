/* test_features.c: protocol upgrades, adding and dropping table features (Table Features
 * rules: legacy implications, reader 3 / writer 7, no downgrade, unknown names), CREATE in
 * its four modes (types from DDL, partitioning, clustering, properties, comments,
 * generated and identity metadata), and the DDL type parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "dop_test_util.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

static dl_snapshot *latest(dl_table **t, const char *loc) {
  dl_snapshot *s = NULL;
  assert_int_equal(dl_table_open(t, loc), 0);
  assert_int_equal(dl_snapshot_open(&s, *t, NULL), 0);
  return s;
}

static bool has(const char *const *v, size_t n, const char *x) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i], x)) return true;
  return false;
}

static void check_protocol(const char *loc, int r, int w, const char *rf, const char *wf) {
  dl_table *t;
  dl_snapshot *s = latest(&t, loc);
  const dl_protocol *p = dl_snapshot_protocol(s);
  assert_int_equal(p->min_reader_version, r);
  assert_int_equal(p->min_writer_version, w);
  if (rf) assert_true(has(p->reader_features, p->num_reader_features, rf));
  if (wf) assert_true(has(p->writer_features, p->num_writer_features, wf));
  if (r < 3) assert_null(p->reader_features);
  if (w < 7) assert_null(p->writer_features);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static void test_upgrade(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  dop_result *r = NULL;
  assert_int_equal(dop_upgrade_protocol(&r, d, 1, 4), 0);
  dop_result_free(r);
  check_protocol(d, 1, 4, NULL, NULL);
  json_t *ci = tu_commit_info(d, 5);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "UPGRADE PROTOCOL");
  json_t *np = json_loads(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "newProtocol")), 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(np, "minWriterVersion")), 4);
  json_decref(np);
  json_decref(ci);
  assert_int_equal(dop_upgrade_protocol(&r, d, 1, 2), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "downgraded"));
  assert_int_equal(dop_upgrade_protocol(&r, d, 3, 4), DD_EINVAL);
  assert_int_equal(dop_upgrade_protocol(&r, d, 1, 9), DD_EINVAL);
  assert_int_equal(tu_latest_version(d), 5);
  /* To table features: legacy writer 4 features become explicit. */
  assert_int_equal(dop_upgrade_protocol(&r, d, 1, 7), 0);
  dop_result_free(r);
  check_protocol(d, 1, 7, NULL, "changeDataFeed");
  check_protocol(d, 1, 7, NULL, "appendOnly");
  check_protocol(d, 1, 7, NULL, "generatedColumns");
  tu_rmrf(d);
  free(d);
}

static void test_add_drop_feature(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  dop_result *r = NULL;
  assert_int_equal(dop_add_feature(&r, d, "noSuchFeature"), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "unknown table feature"));
  assert_int_equal(tu_latest_version(d), 4);
  /* A writer-only feature: writer 7, reader unchanged. */
  assert_int_equal(dop_add_feature(&r, d, "inCommitTimestamp"), 0);
  dop_result_free(r);
  check_protocol(d, 1, 7, NULL, "inCommitTimestamp");
  check_protocol(d, 1, 7, NULL, "invariants"); /* legacy writer 2 made explicit */
  json_t *ci = tu_commit_info(d, 5);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "SET TBLPROPERTIES");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "properties")),
                      "{\"delta.feature.inCommitTimestamp\":\"supported\"}");
  json_decref(ci);
  /* A reader-writer feature: reader 3 with the feature in both lists. */
  assert_int_equal(dop_add_feature(&r, d, "deletionVectors"), 0);
  dop_result_free(r);
  check_protocol(d, 3, 7, "deletionVectors", "deletionVectors");
  /* Clustering pulls domainMetadata in. */
  assert_int_equal(dop_add_feature(&r, d, "clustering"), 0);
  dop_result_free(r);
  check_protocol(d, 3, 7, NULL, "domainMetadata");
  /* Adding again: no new version. */
  int64_t v = tu_latest_version(d);
  assert_int_equal(dop_add_feature(&r, d, "deletionVectors"), 0);
  dop_result_free(r);
  assert_int_equal(tu_latest_version(d), v);
  /* Drops. */
  assert_int_equal(dop_drop_feature(&r, d, "bogus", false), DD_EINVAL);
  assert_int_equal(dop_drop_feature(&r, d, "v2Checkpoint", false), DD_EPRECOND); /* not there */
  assert_int_equal(dop_drop_feature(&r, d, "appendOnly", false), DD_EPRECOND);   /* not removable */
  assert_int_equal(dop_drop_feature(&r, d, "domainMetadata", false), DD_EPRECOND);
  assert_int_equal(dop_drop_feature(&r, d, "deletionVectors", false), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "truncate_history"));
  assert_int_equal(tu_latest_version(d), v);
  assert_int_equal(dop_drop_feature(&r, d, "deletionVectors", true), 0);
  dop_result_free(r);
  check_protocol(d, 1, 7, NULL, "inCommitTimestamp");
  ci = tu_commit_info(d, v + 1);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "DROP FEATURE");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "featureName")),
                      "deletionVectors");
  json_decref(ci);
  assert_int_equal(dop_drop_feature(&r, d, "inCommitTimestamp", false), 0);
  dop_result_free(r);
  tu_rmrf(d);
  free(d);
}

static void test_drop_back_to_legacy(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  dop_result *r = NULL;
  assert_int_equal(dop_add_feature(&r, d, "inCommitTimestamp"), 0);
  dop_result_free(r);
  assert_int_equal(dop_drop_feature(&r, d, "inCommitTimestamp", false), 0);
  dop_result_free(r);
  check_protocol(d, 1, 2, NULL, NULL);
  tu_rmrf(d);
  free(d);
}

static void test_drop_dv_with_traces(void **st) {
  (void)st;
  char *d = tu_copy_fixture("table-with-dv-small");
  dop_result *r = NULL;
  int64_t v = tu_latest_version(d);
  assert_int_equal(dop_drop_feature(&r, d, "deletionVectors", true), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "deletion vectors"));
  assert_int_equal(tu_latest_version(d), v);
  tu_rmrf(d);
  free(d);
}

/* ---- create ---- */

static void test_create_modes(void **st) {
  (void)st;
  char *base = tu_tmpdir(), loc[4096];
  snprintf(loc, sizeof loc, "%s/t", base);
  dop_column cols[] = {
      {.name = "id", .type = "bigint", .nullable = false},
      {.name = "amount", .type = "decimal(10,2)", .nullable = true, .comment = "money"},
      {.name = "day", .type = "date", .nullable = true},
      {.name = "tags", .type = "map<string, array<int>>", .nullable = true},
      {.name = "twice", .type = "bigint", .nullable = true, .generated_as = "id * 2"},
  };
  const char *parts[] = {"day"};
  const char *pk[] = {"delta.enableChangeDataFeed", "delta.logRetentionDuration"},
             *pv[] = {"true", "interval 30 days"};
  dop_create_opts o = {.mode = DOP_REPLACE, .location = loc, .comment = "a table", .num_columns = 5,
                       .columns = cols, .num_partition_columns = 1, .partition_columns = parts,
                       .num_properties = 2, .property_keys = pk, .property_values = pv};
  dop_result *r = NULL;
  assert_int_equal(dop_create(&r, &o), DD_ENOTFOUND); /* replace needs a table */
  o.mode = DOP_CREATE;
  assert_int_equal(dop_create(&r, &o), 0);
  dop_result_free(r);
  dl_table *t;
  dl_snapshot *s = latest(&t, loc);
  const dl_schema *sc = dl_snapshot_schema(s);
  const dl_field *f = dl_schema_field(sc, "amount");
  assert_int_equal(f->type->kind, DL_TYPE_DECIMAL);
  assert_int_equal(f->type->precision, 10);
  assert_int_equal(f->type->scale, 2);
  assert_non_null(strstr(f->metadata_json, "\"comment\":\"money\""));
  assert_non_null(strstr(dl_schema_field(sc, "twice")->metadata_json, "delta.generationExpression"));
  assert_false(dl_schema_field(sc, "id")->nullable);
  assert_int_equal(dl_schema_field(sc, "tags")->type->kind, DL_TYPE_MAP);
  assert_string_equal(dl_snapshot_metadata(s)->partition_columns[0], "day");
  assert_string_equal(dl_snapshot_metadata(s)->description, "a table");
  assert_string_equal(dl_snapshot_property(s, "delta.logRetentionDuration"), "interval 30 days");
  assert_int_equal(dl_snapshot_protocol(s)->min_writer_version, 4); /* generated columns, CDF */
  dl_snapshot_free(s);
  dl_table_free(t);
  json_t *ci = tu_commit_info(loc, 0);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "CREATE TABLE");
  json_t *pa = json_object_get(ci, "operationParameters");
  assert_string_equal(json_string_value(json_object_get(pa, "partitionBy")), "[\"day\"]");
  assert_string_equal(json_string_value(json_object_get(pa, "isManaged")), "false");
  assert_string_equal(json_string_value(json_object_get(pa, "description")), "a table");
  json_decref(ci);
  assert_int_equal(dop_create(&r, &o), DD_EEXISTS);
  o.mode = DOP_CREATE_IF_NOT_EXISTS;
  assert_int_equal(dop_create(&r, &o), 0);
  dop_result_free(r);
  assert_int_equal(tu_latest_version(loc), 0);
  /* Replace with a clustered table: writer 7, clustering + domainMetadata, the domain. */
  const char *cl[] = {"id"};
  o.mode = DOP_CREATE_OR_REPLACE;
  o.num_partition_columns = 0;
  o.num_clustering_columns = 1;
  o.clustering_columns = cl;
  o.num_columns = 2;
  o.num_properties = 0;
  assert_int_equal(dop_create(&r, &o), 0);
  dop_result_free(r);
  s = latest(&t, loc);
  const dl_protocol *p = dl_snapshot_protocol(s);
  assert_int_equal(p->min_writer_version, 7);
  assert_true(has(p->writer_features, p->num_writer_features, "clustering"));
  assert_true(has(p->writer_features, p->num_writer_features, "generatedColumns")); /* never lowered */
  assert_true(has(p->writer_features, p->num_writer_features, "changeDataFeed"));
  assert_int_equal(dl_snapshot_num_domains(s), 1);
  assert_string_equal(dl_snapshot_domain(s, 0)->domain, "delta.clustering");
  dl_snapshot_free(s);
  dl_table_free(t);
  ci = tu_commit_info(loc, 1);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "CREATE OR REPLACE TABLE");
  json_decref(ci);
  dop_result *det = NULL;
  assert_int_equal(dop_detail(&det, loc), 0);
  assert_string_equal(dop_result_cell(det, 0, 8)->str, "[\"id\"]");
  dop_result_free(det);
  /* Identity columns: writer 6 and the delta.identity.* metadata. */
  char loc2[4200];
  snprintf(loc2, sizeof loc2, "%s/ident", base);
  dop_column icol = {.name = "id", .type = "bigint", .identity = true, .identity_start = 5,
                     .identity_step = 2, .identity_allow_explicit_insert = true};
  dop_create_opts io = {.mode = DOP_CREATE, .location = loc2, .num_columns = 1, .columns = &icol};
  assert_int_equal(dop_create(&r, &io), 0);
  dop_result_free(r);
  s = latest(&t, loc2);
  assert_int_equal(dl_snapshot_protocol(s)->min_writer_version, 6);
  const char *md = dl_schema_field(dl_snapshot_schema(s), "id")->metadata_json;
  assert_non_null(strstr(md, "\"delta.identity.start\":5"));
  assert_non_null(strstr(md, "\"delta.identity.step\":2"));
  assert_non_null(strstr(md, "\"delta.identity.allowExplicitInsert\":true"));
  dl_snapshot_free(s);
  dl_table_free(t);
  /* an identity column other than BIGINT, a step of 0: Delta's errors, nothing created */
  snprintf(loc2, sizeof loc2, "%s/ident-bad", base);
  icol.type = "int";
  assert_int_equal(dop_create(&r, &io), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "[DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE] DataType integer"));
  icol.type = "bigint";
  icol.identity_step = 0;
  assert_int_equal(dop_create(&r, &io), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP"));
  assert_false(tu_exists(loc2, "_delta_log"));
  /* Bad input. */
  o.mode = DOP_CREATE;
  snprintf(loc, sizeof loc, "%s/u", base);
  cols[1].type = "decimal(99,2)";
  assert_int_equal(dop_create(&r, &o), DD_EINVAL);
  cols[1].type = "notatype";
  assert_int_equal(dop_create(&r, &o), DD_EINVAL);
  cols[1].type = "int";
  const char *badpart[] = {"nope"};
  o.num_clustering_columns = 0;
  o.num_partition_columns = 1;
  o.partition_columns = badpart;
  assert_int_equal(dop_create(&r, &o), DD_EINVAL);
  assert_false(tu_exists(loc, "_delta_log"));
  tu_rmrf(base);
  free(base);
}

static void test_ddl(void **st) {
  (void)st;
  char *j = NULL;
  assert_int_equal(dop_ddl_type_json(&j, "INT"), 0);
  assert_string_equal(j, "\"integer\"");
  free(j);
  assert_int_equal(dop_ddl_type_json(&j, "decimal(10, 2)"), 0);
  assert_string_equal(j, "\"decimal(10,2)\"");
  free(j);
  assert_int_equal(dop_ddl_type_json(&j, "struct<a:int,`b c`:array<string>>"), 0);
  assert_non_null(strstr(j, "\"name\":\"b c\""));
  assert_non_null(strstr(j, "\"elementType\":\"string\""));
  free(j);
  assert_int_equal(dop_ddl_type_json(&j, "varchar(10)"), 0);
  assert_string_equal(j, "\"string\"");
  free(j);
  assert_int_equal(dop_ddl_type_json(&j, "array<int"), DD_EINVAL);
  assert_int_equal(dop_ddl_type_json(&j, "int extra"), DD_EINVAL);
  int64_t ms;
  assert_int_equal(dop_parse_interval_ms("interval 7 days", &ms), 0);
  assert_int_equal(ms, 604800000);
  assert_int_equal(dop_parse_interval_ms("interval 168 hours", &ms), 0);
  assert_int_equal(ms, 604800000);
  assert_int_equal(dop_parse_interval_ms("soon", &ms), DD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_upgrade),        cmocka_unit_test(test_add_drop_feature),
      cmocka_unit_test(test_drop_back_to_legacy), cmocka_unit_test(test_drop_dv_with_traces),
      cmocka_unit_test(test_create_modes),   cmocka_unit_test(test_ddl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
