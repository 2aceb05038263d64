/* test_changes.c: Read Change Data Feed and Query Table with startingVersion on the CDF
 * fixtures (delta-rs cdf-table, cdc_ict_table, DAT cdf): line kinds and fields, version
 * and timestamp per line, historical metadata, the reference errors, and paging. */
#include <time.h>

#include "tests/unit/sharing/shq_test_util.h"

static int run_cdf(lines *l, dl_table *t, const shq_changes *c, const char *hdr,
                   const shq_table_opts *o, shq_result *res) {
  shq_caps caps = caps_of(hdr);
  shq_result r;
  return shq_table_changes(t, c, &caps, o, &SIGNER, 1700000000000LL, res ? res : &r, collect, l);
}

static void check_change_line(const lines *l, size_t i, int64_t vmin, int64_t vmax) {
  json_t *b = body_of(l, i);
  const char *k = key_of(l, i);
  assert_true(!strcmp(k, "add") || !strcmp(k, "cdf") || !strcmp(k, "remove"));
  const char *url = json_string_value(json_object_get(b, "url"));
  assert_true(!strncmp(url, "https://signed.example/", 23));
  if (!strcmp(k, "cdf")) assert_non_null(strstr(url, "_change_data/"));
  assert_int_equal(strlen(json_string_value(json_object_get(b, "id"))), 32);
  assert_true(json_is_object(json_object_get(b, "partitionValues")));
  assert_true(json_integer_value(json_object_get(b, "size")) > 0);
  int64_t v = json_integer_value(json_object_get(b, "version"));
  assert_true(v >= vmin && v <= vmax);
  assert_true(json_integer_value(json_object_get(b, "timestamp")) > 1600000000000LL);
  assert_int_equal(json_integer_value(json_object_get(b, "expirationTimestamp")), SIGN_EXP);
  if (strcmp(k, "add")) assert_null(json_object_get(b, "stats"));
}

static void test_cdf_table(void **state) {
  (void)state;
  dl_table *t = open_table(DRS "cdf-table");
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  c.starting_version = 0;
  lines l = {0};
  shq_result res;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, &res), 0);
  assert_int_equal(res.version, 0);
  assert_int_equal(res.format, SHQ_FORMAT_PARQUET);
  assert_string_equal(key_of(&l, 0), "protocol");
  assert_string_equal(key_of(&l, 1), "metaData");
  json_t *md = body_of(&l, 1);
  assert_int_equal(json_integer_value(json_object_get(md, "version")), 3);
  assert_string_equal(json_string_value(json_object_get(json_object_get(md, "configuration"),
                                                        "enableChangeDataFeed")), "true");
  /* v0 has no cdc files: its 10 adds; v1..v3 have cdc files, served exclusively */
  assert_int_equal(count_key(&l, "add"), 10);
  assert_int_equal(count_key(&l, "cdf"), 13);
  assert_int_equal(count_key(&l, "remove"), 0);
  for (size_t i = 2; i < l.n; i++) check_change_line(&l, i, 0, 3);
  lines_free(&l);
  c.starting_version = 1;
  c.ending_version = 2;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, &res), 0);
  assert_int_equal(res.version, 1);
  assert_int_equal(count_key(&l, "cdf"), 12);
  for (size_t i = 2; i < l.n; i++) check_change_line(&l, i, 1, 2);
  lines_free(&l);
  /* includeHistoricalMetadata: the header metadata is the starting version's */
  c.include_historical_metadata = true;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, &res), 0);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 1), "version")), 1);
  lines_free(&l);
  /* delta format wraps cdc actions */
  c = (shq_changes)SHQ_CHANGES_INIT;
  c.starting_version = 3;
  assert_int_equal(run_cdf(&l, t, &c, "responseformat=delta", &o, &res), 0);
  assert_int_equal(res.format, SHQ_FORMAT_DELTA);
  assert_int_equal(l.n, 3);
  json_t *f = body_of(&l, 2);
  json_t *cdc = json_object_get(json_object_get(f, "deltaSingleAction"), "cdc");
  assert_non_null(cdc);
  assert_true(!strncmp(json_string_value(json_object_get(cdc, "path")), "https://signed.example/_change_data/", 36));
  assert_int_equal(json_integer_value(json_object_get(f, "version")), 3);
  lines_free(&l);
  dl_table_free(t);
}

static void test_cdf_errors(void **state) {
  (void)state;
  dl_table *t = open_table(DRS "cdf-table");
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  lines l = {0};
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "No startingVersion or startingTimestamp provided for CDF read.");
  c.starting_version = 9; /* outside the history: DD_EINVAL, the protocol's one code */
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "Provided Start version(9) for reading change data is invalid. "
                      "Start version cannot be greater than the latest version of the table(3).");
  c.starting_version = 2;
  c.ending_version = 1;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "End cannot be before start."));
  c.ending_version = -1;
  c.starting_timestamp = "2023-01-01T00:00:00Z";
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "Multiple starting arguments"));
  c.starting_timestamp = NULL;
  c.max_files = 0;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  c.max_files = -1;
  o.start_version = 3;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "You can only query table changes since version 3.");
  o = topts(false);
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "cdf is not enabled on table share.schema.table");
  assert_int_equal(l.n, 0);
  dl_table_free(t);
  /* a table without CDF */
  t = open_table(DAT "basic_partitioned/delta");
  o = topts(true);
  c = (shq_changes)SHQ_CHANGES_INIT;
  c.starting_version = 0;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "Error getting change data for range [0, 1] as change data "
                      "was not recorded for version [0]");
  dl_table_free(t);
}

static void test_cdf_by_timestamp(void **state) {
  (void)state;
  /* in-commit timestamps: the commit times are in the log, not in file times */
  dl_table *t = open_table(DRS "cdc_ict_table");
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  assert_int_equal(dl_commit_timestamps(t, &vs, &ts, &n), 0);
  assert_true(n >= 4);
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  char start[64], end[64], sec[32];
  struct tm tm;
  /* version 1's in-commit timestamp in this fixture is earlier than version 0's; use 2..3 */
  time_t s1 = (time_t)(ts[2] / 1000), s2 = (time_t)(ts[3] / 1000);
  gmtime_r(&s1, &tm);
  strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(start, sizeof start, "%s.%03dZ", sec, (int)(ts[2] % 1000));
  gmtime_r(&s2, &tm);
  strftime(sec, sizeof sec, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(end, sizeof end, "%s.%03d", sec, (int)(ts[3] % 1000));
  c.starting_timestamp = start;
  c.ending_timestamp = end;
  lines l = {0};
  shq_result res;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, &res), 0);
  assert_int_equal(res.version, 2);
  size_t seen2 = 0;
  for (size_t i = 2; i < l.n; i++) {
    int64_t v = json_integer_value(json_object_get(body_of(&l, i), "version"));
    int64_t tsv = json_integer_value(json_object_get(body_of(&l, i), "timestamp"));
    assert_true(v >= 2 && v <= 3);
    seen2 += v == 3;
    assert_int_equal(tsv, ts[v]); /* the in-commit timestamp of that version */
  }
  assert_true(seen2 > 0);
  lines_free(&l);
  free(vs);
  free(ts);
  dl_table_free(t);
}

static void test_dat_cdf(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "cdf/delta");
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  c.starting_version = 0;
  lines l = {0};
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), 0);
  assert_int_equal(count_key(&l, "add"), 1);  /* v1 insert */
  assert_int_equal(count_key(&l, "cdf"), 1);  /* v2 delete: the cdc file only */
  assert_int_equal(count_key(&l, "remove"), 0);
  lines_free(&l);
  dl_table_free(t);
}

static void test_cdf_paging(void **state) {
  (void)state;
  dl_table *t = open_table(DRS "cdf-table");
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  c.starting_version = 0;
  c.max_files = 5;
  char *token = NULL, *ids[64];
  size_t nids = 0, pages = 0;
  do {
    c.page_token = token;
    lines l = {0}, again = {0};
    assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), 0);
    assert_int_equal(run_cdf(&again, t, &c, NULL, &o, NULL), 0);
    assert_int_equal(l.n, again.n);
    for (size_t i = 0; i < l.n; i++) assert_string_equal(l.raw[i], again.raw[i]);
    assert_string_equal(key_of(&l, l.n - 1), "endStreamAction");
    for (size_t i = 2; i + 1 < l.n; i++) {
      char *id = NULL;
      assert_true(asprintf(&id, "%s:%s", key_of(&l, i),
                           json_string_value(json_object_get(body_of(&l, i), "id"))) > 0);
      for (size_t j = 0; j < nids; j++) assert_string_not_equal(ids[j], id);
      ids[nids++] = id;
    }
    free(token);
    const char *nt = json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken"));
    token = nt ? strdup(nt) : NULL;
    pages++;
    lines_free(&l);
    lines_free(&again);
  } while (token);
  assert_int_equal(nids, 23);
  assert_int_equal(pages, 5);
  for (size_t i = 0; i < nids; i++) free(ids[i]);
  /* a token of this query does not fit another one */
  c.page_token = NULL;
  lines l = {0};
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), 0);
  char *tok = strdup(json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken")));
  lines_free(&l);
  c.starting_version = 1;
  c.page_token = tok;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "invalid page token"));
  free(tok);
  dl_table_free(t);
}

static void test_starting_version_query(void **state) {
  (void)state;
  dl_table *t = open_table(DRS "cdf-table");
  shq_table_opts o = topts(true);
  lines l = {0};
  shq_result res;
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":1}", NULL, &o, &res), 0);
  assert_int_equal(res.version, 1);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 1), "version")), 1);
  assert_int_equal(count_key(&l, "add"), 6);
  assert_int_equal(count_key(&l, "remove"), 7);
  assert_int_equal(count_key(&l, "cdf"), 0);
  for (size_t i = 2; i < l.n; i++) check_change_line(&l, i, 1, 3);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":1,\"endingVersion\":1}", NULL, &o, &res), 0);
  assert_int_equal(l.n, 2 + 6);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":4}", NULL, &o, &res), DD_EINVAL);
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":2,\"endingVersion\":1}", NULL, &o, &res), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "startingVersion(2) must be smaller than or equal to endingVersion(1).");
  /* historical metadata after the starting version (DAT with_schema_change) */
  dl_table_free(t);
  t = open_table(DAT "with_schema_change/delta");
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":0}", NULL, &o, &res), 0);
  assert_true(count_key(&l, "metaData") >= 2);
  for (size_t i = 2; i < l.n; i++)
    if (!strcmp(key_of(&l, i), "metaData"))
      assert_true(json_integer_value(json_object_get(body_of(&l, i), "version")) > 0);
  lines_free(&l);
  dl_table_free(t);
}

/* One commit through the delta engine: optional metadata (CDF on/off) and optional add. */
static void commit(dl_table *t, int cdf, const char *add_path) {
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) s = NULL;
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  if (!s) {
    dl_protocol p = {.min_reader_version = 1, .min_writer_version = 4};
    assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  }
  if (cdf >= 0) {
    char cfg[64];
    size_t n = (size_t)snprintf(cfg, sizeof cfg, "delta.enableChangeDataFeed%c%s%c", 0,
                                cdf ? "true" : "false", 0);
    cfg[n] = 0;
    dl_metadata_spec md = {.id = "tid", .schema_string = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}",
                           .configuration = cfg, .created_time = -1};
    assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  }
  if (add_path) {
    dl_file f = {.path = add_path, .size = 10, .modification_time = 1, .data_change = true,
                 .partition_values = "", .deletion_timestamp = -1, .base_row_id = -1,
                 .default_row_commit_version = -1};
    assert_int_equal(dl_txn_add_file(x, &f), 0);
  }
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.checkpoint = false;
  assert_int_equal(dl_txn_commit(x, &co, NULL), 0);
  dl_txn_free(x);
  dl_snapshot_free(s);
}

static void test_cdf_disabled_mid_range(void **state) {
  (void)state;
  char dir[] = "/tmp/shq_cdf_XXXXXX";
  assert_non_null(mkdtemp(dir));
  dl_table *t = open_table(dir);
  commit(t, 1, NULL);        /* v0: CDF on */
  commit(t, -1, "a.parquet"); /* v1 */
  commit(t, 0, NULL);        /* v2: CDF off */
  commit(t, -1, "b.parquet"); /* v3 */
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  c.starting_version = 0;
  lines l = {0};
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "Error getting change data for range [0, 3] as change data "
                      "was not recorded for version [2]");
  lines_free(&l);
  c.ending_version = 1;
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), 0);
  assert_int_equal(count_key(&l, "add"), 1);
  lines_free(&l);
  /* streaming reads do not need CDF and carry the historical metadata of version 2 */
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":0}", NULL, &o, NULL), 0);
  assert_int_equal(count_key(&l, "add"), 2);
  assert_int_equal(count_key(&l, "metaData"), 2);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, l.n - 2), "version")), 2);
  lines_free(&l);
  dl_table_free(t);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_historical_protocol(void **state) {
  (void)state;
  char dir[] = "/tmp/shq_hp_XXXXXX";
  assert_non_null(mkdtemp(dir));
  dl_table *t = open_table(dir);
  commit(t, 1, NULL);         /* v0: protocol 1/4, CDF on */
  commit(t, -1, "a.parquet"); /* v1 */
  dl_snapshot *s = NULL;      /* v2: protocol upgrade to writer version 5 */
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dl_protocol p = {.min_reader_version = 1, .min_writer_version = 5};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.checkpoint = false;
  assert_int_equal(dl_txn_commit(x, &co, NULL), 0);
  dl_txn_free(x);
  dl_snapshot_free(s);
  commit(t, -1, "b.parquet"); /* v3 */
  shq_table_opts o = topts(true);
  shq_changes c = SHQ_CHANGES_INIT;
  c.starting_version = 0;
  c.include_historical_protocol = true;
  lines l = {0};
  assert_int_equal(run_cdf(&l, t, &c, "responseformat=delta", &o, NULL), 0);
  assert_int_equal(count_key(&l, "protocol"), 2);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 0), "version")), 3);
  size_t hist = 0;
  for (size_t i = 2; i < l.n; i++) {
    if (strcmp(key_of(&l, i), "protocol")) continue;
    hist++;
    json_t *b = body_of(&l, i);
    assert_int_equal(json_integer_value(json_object_get(b, "version")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "deltaProtocol"), "minWriterVersion")), 5);
  }
  assert_int_equal(hist, 1);
  lines_free(&l);
  /* parquet: ignored */
  assert_int_equal(run_cdf(&l, t, &c, NULL, &o, NULL), 0);
  assert_int_equal(count_key(&l, "protocol"), 1);
  lines_free(&l);
  /* the streaming query: head protocol stamped with startingVersion */
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":1,\"includeHistoricalProtocol\":true}",
                             "responseformat=delta", &o, NULL), 0);
  assert_int_equal(count_key(&l, "protocol"), 2);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 0), "version")), 1);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"startingVersion\":1}", "responseformat=delta", &o, NULL), 0);
  assert_int_equal(count_key(&l, "protocol"), 1);
  assert_null(json_object_get(body_of(&l, 0), "version"));
  lines_free(&l);
  dl_table_free(t);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cdf_table),
      cmocka_unit_test(test_cdf_errors),
      cmocka_unit_test(test_cdf_by_timestamp),
      cmocka_unit_test(test_dat_cdf),
      cmocka_unit_test(test_cdf_paging),
      cmocka_unit_test(test_starting_version_query),
      cmocka_unit_test(test_cdf_disabled_mid_range),
      cmocka_unit_test(test_historical_protocol),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
