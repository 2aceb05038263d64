/* test_query.c: Query Table and Query Table Metadata on real fixture tables: line shapes
 * of both formats against PROTOCOL.md, every JSON predicate op on partition columns and
 * on stats, SQL predicateHints, limitHint, time travel by version and timestamp, paging
 * with maxFiles / pageToken, endStreamAction, deletion vectors and column mapping. */
#include <sys/stat.h>
#include <utime.h>

#include "tests/unit/sharing/shq_test_util.h"

#define COL(n, t) "{\"op\":\"column\",\"name\":\"" n "\",\"valueType\":\"" t "\"}"
#define LIT(v, t) "{\"op\":\"literal\",\"value\":\"" v "\",\"valueType\":\"" t "\"}"
#define BIN(op, a, b) "{\"op\":\"" op "\",\"children\":[" a "," b "]}"
#define UN(op, a) "{\"op\":\"" op "\",\"children\":[" a "]}"

static size_t njp(dl_table *t, const char *pred) {
  json_t *b = json_pack("{s:s}", "jsonPredicateHints", pred);
  char *body = json_dumps(b, JSON_COMPACT);
  size_t n = nfiles(t, body);
  free(body);
  json_decref(b);
  return n;
}

static size_t nsql(dl_table *t, const char *sql) {
  json_t *b = json_pack("{s:[s]}", "predicateHints", sql);
  char *body = json_dumps(b, JSON_COMPACT);
  size_t n = nfiles(t, body);
  free(body);
  json_decref(b);
  return n;
}

/* ======================= line shapes ======================= */

static void test_parquet_lines(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  lines l = {0};
  shq_table_opts o = topts(false);
  shq_result res;
  assert_int_equal(run_query(&l, t, "{}", NULL, &o, &res), 0);
  assert_int_equal(res.version, 1);
  assert_int_equal(res.format, SHQ_FORMAT_PARQUET);
  assert_false(res.end_stream_action);
  assert_int_equal(l.n, 2 + 6);
  assert_string_equal(l.raw[0], "{\"protocol\":{\"minReaderVersion\":1}}");
  json_t *md = body_of(&l, 1);
  assert_string_equal(key_of(&l, 1), "metaData");
  assert_string_equal(json_string_value(json_object_get(md, "id")), "0ff90ebd-7dd8-435b-873a-3b7f92d261b6");
  assert_string_equal(json_string_value(json_object_get(json_object_get(md, "format"), "provider")), "parquet");
  assert_true(json_is_string(json_object_get(md, "schemaString")));
  assert_true(json_is_object(json_object_get(md, "configuration")));
  assert_int_equal(json_object_size(json_object_get(md, "configuration")), 0);
  json_t *pc = json_object_get(md, "partitionColumns");
  assert_int_equal(json_array_size(pc), 1);
  assert_string_equal(json_string_value(json_array_get(pc, 0)), "letter");
  assert_null(json_object_get(md, "version")); /* only for time travel */
  for (size_t i = 2; i < l.n; i++) {
    json_t *f = body_of(&l, i);
    assert_string_equal(key_of(&l, i), "file");
    const char *url = json_string_value(json_object_get(f, "url"));
    assert_non_null(url);
    assert_true(!strncmp(url, "https://signed.example/letter=", 30));
    const char *id = json_string_value(json_object_get(f, "id"));
    assert_int_equal(strlen(id), 32);
    assert_true(json_is_object(json_object_get(f, "partitionValues")));
    assert_true(json_is_integer(json_object_get(f, "size")));
    assert_int_equal(json_integer_value(json_object_get(f, "size")) > 700, 1);
    assert_true(json_is_string(json_object_get(f, "stats")));
    assert_int_equal(json_integer_value(json_object_get(f, "expirationTimestamp")), SIGN_EXP);
    assert_null(json_object_get(f, "version"));
    assert_null(json_object_get(f, "timestamp"));
    for (size_t j = 2; j < i; j++) /* ids are unique */
      assert_string_not_equal(id, json_string_value(json_object_get(body_of(&l, j), "id")));
  }
  lines_free(&l);
  dl_table_free(t);
}

static void test_delta_lines_plain_table(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  lines l = {0};
  shq_table_opts o = topts(false);
  shq_result res;
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta", &o, &res), 0);
  assert_int_equal(res.format, SHQ_FORMAT_DELTA);
  assert_string_equal(l.raw[0], "{\"protocol\":{\"deltaProtocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}}");
  json_t *dm = json_object_get(body_of(&l, 1), "deltaMetadata");
  assert_non_null(dm);
  assert_true(json_is_object(json_object_get(json_object_get(dm, "format"), "options")));
  assert_int_equal(json_integer_value(json_object_get(dm, "createdTime")) > 0, 1);
  json_t *f = body_of(&l, 2);
  assert_int_equal(strlen(json_string_value(json_object_get(f, "id"))), 32);
  assert_int_equal(json_integer_value(json_object_get(f, "expirationTimestamp")), SIGN_EXP);
  json_t *add = json_object_get(json_object_get(f, "deltaSingleAction"), "add");
  assert_non_null(add);
  assert_true(!strncmp(json_string_value(json_object_get(add, "path")), "https://signed.example/", 23));
  assert_true(json_is_integer(json_object_get(add, "modificationTime")));
  assert_true(json_is_true(json_object_get(add, "dataChange")));
  assert_true(json_is_string(json_object_get(add, "stats")));
  lines_free(&l);
  /* both formats offered on a plain table: parquet */
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta,parquet", &o, &res), 0);
  assert_int_equal(res.format, SHQ_FORMAT_PARQUET);
  lines_free(&l);
  dl_table_free(t);
}

static void test_metadata_endpoint(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  lines l = {0};
  shq_table_opts o = topts(false);
  shq_caps c = caps_of(NULL);
  shq_result res;
  assert_int_equal(shq_table_metadata(t, -1, NULL, &c, &o, &res, collect, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(res.version, 1);
  json_t *md = body_of(&l, 1);
  assert_int_equal(json_integer_value(json_object_get(md, "numFiles")), 6);
  assert_true(json_integer_value(json_object_get(md, "size")) > 4000);
  lines_free(&l);
  assert_int_equal(shq_table_metadata(t, 0, NULL, &c, &o, &res, collect, &l), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "history sharing is not enabled on table: share.schema.table"));
  o.history_shared = true;
  assert_int_equal(shq_table_metadata(t, 0, NULL, &c, &o, &res, collect, &l), 0);
  assert_int_equal(res.version, 0);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 1), "version")), 0);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 1), "numFiles")), 3);
  lines_free(&l);
  dl_table_free(t);
}

/* ======================= JSON predicates ======================= */

static void test_json_partition_ops(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta"); /* letters a a b c e f */
  assert_int_equal(njp(t, BIN("equal", COL("letter", "string"), LIT("a", "string"))), 2);
  assert_int_equal(njp(t, BIN("lessThan", COL("letter", "string"), LIT("b", "string"))), 2);
  assert_int_equal(njp(t, BIN("lessThanOrEqual", COL("letter", "string"), LIT("b", "string"))), 3);
  assert_int_equal(njp(t, BIN("greaterThan", COL("letter", "string"), LIT("c", "string"))), 2);
  assert_int_equal(njp(t, BIN("greaterThanOrEqual", COL("letter", "string"), LIT("c", "string"))), 3);
  assert_int_equal(njp(t, BIN("lessThan", LIT("e", "string"), COL("letter", "string"))), 1);
  assert_int_equal(njp(t, UN("not", BIN("equal", COL("letter", "string"), LIT("a", "string")))), 4);
  assert_int_equal(njp(t, BIN("or", BIN("equal", COL("letter", "string"), LIT("a", "string")),
                              BIN("equal", COL("letter", "string"), LIT("f", "string")))), 3);
  assert_int_equal(njp(t, BIN("and", BIN("greaterThanOrEqual", COL("letter", "string"), LIT("b", "string")),
                              BIN("lessThanOrEqual", COL("letter", "string"), LIT("e", "string")))), 3);
  assert_int_equal(njp(t, UN("isNull", COL("letter", "string"))), 0);
  assert_int_equal(njp(t, UN("not", UN("isNull", COL("letter", "string")))), 6);
  assert_int_equal(njp(t, BIN("equal", LIT("1", "int"), LIT("1", "int"))), 6);
  assert_int_equal(njp(t, BIN("equal", LIT("1", "int"), LIT("2", "int"))), 0);
  dl_table_free(t);
}

static void test_json_typed_partitions(void **state) {
  (void)state;
  /* months 1 2 2 12 12 4, stored as strings: int compares numerically, string by bytes */
  dl_table *t = open_table(DRS "delta-0.8.0-partitioned");
  assert_int_equal(njp(t, BIN("equal", COL("month", "int"), LIT("12", "int"))), 2);
  assert_int_equal(njp(t, BIN("greaterThan", COL("month", "int"), LIT("2", "int"))), 3);
  assert_int_equal(njp(t, BIN("greaterThan", COL("month", "string"), LIT("2", "string"))), 1);
  assert_int_equal(njp(t, BIN("and", BIN("equal", COL("year", "long"), LIT("2021", "long")),
                              BIN("lessThan", COL("day", "int"), LIT("5", "int")))), 1);
  dl_table_free(t);
  t = open_table(DRS "cdf-table"); /* birthday: date partitions */
  assert_int_equal(njp(t, BIN("greaterThanOrEqual", COL("birthday", "date"), LIT("2023-12-29", "date"))), 2);
  dl_table_free(t);
}

static void test_json_escaped_and_null_partitions(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "multi_partitioned/delta");
  assert_int_equal(njp(t, BIN("equal", COL("letter", "string"), LIT("/%20%f", "string"))), 1);
  assert_int_equal(njp(t, BIN("equal", COL("data", "string"), LIT("\xF0\x9F\x98\x88", "string"))), 1);
  /* version 1: three files of version 0 plus (null,null,null) and (a,null,x) */
  assert_int_equal(nfiles(t, "{\"version\":1}"), 5);
  const char *v1 = "{\"version\":1,\"jsonPredicateHints\":\"%s\"}";
  char body[1024];
  struct { const char *pred; size_t want; } cases[] = {
      {UN("isNull", COL("letter", "string")), 1},
      {UN("isNull", COL("date", "date")), 2},
      {UN("not", UN("isNull", COL("date", "date"))), 3},
      {BIN("equal", COL("date", "date"), LIT("1970-01-02", "date")), 1},
      {UN("not", BIN("equal", COL("letter", "string"), LIT("a", "string"))), 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *s = json_string(cases[i].pred);
    char *esc = json_dumps(s, JSON_ENCODE_ANY);
    esc[strlen(esc) - 1] = 0;
    snprintf(body, sizeof body, v1, esc + 1);
    assert_int_equal(nfiles(t, body), cases[i].want);
    free(esc);
    json_decref(s);
  }
  /* null partition values are JSON null; the path is decoded once before signing */
  lines l = {0};
  shq_table_opts o = topts(true);
  assert_int_equal(run_query(&l, t, "{\"version\":1}", NULL, &o, NULL), 0);
  size_t nulls = 0;
  for (size_t i = 2; i < l.n; i++)
    nulls += json_is_null(json_object_get(json_object_get(body_of(&l, i), "partitionValues"), "letter"));
  assert_int_equal(nulls, 1);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{}", NULL, &o, NULL), 0);
  bool seen = false;
  for (size_t i = 2; i < l.n; i++)
    seen |= strstr(json_string_value(json_object_get(body_of(&l, i), "url")),
                   "signed.example/letter=%2F%2520%25f/") != NULL;
  assert_true(seen);
  lines_free(&l);
  dl_table_free(t);
}

static void test_json_stats_ops(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta"); /* number 1..6, a_float 1.1..6.6 */
  assert_int_equal(njp(t, BIN("equal", COL("number", "long"), LIT("4", "long"))), 1);
  assert_int_equal(njp(t, BIN("greaterThan", COL("number", "long"), LIT("4", "long"))), 2);
  assert_int_equal(njp(t, BIN("lessThan", COL("a_float", "double"), LIT("2.0", "double"))), 1);
  assert_int_equal(njp(t, BIN("and", BIN("equal", COL("letter", "string"), LIT("a", "string")),
                              BIN("lessThan", COL("number", "long"), LIT("2", "long")))), 1);
  assert_int_equal(njp(t, BIN("equal", COL("nosuchcol", "long"), LIT("2", "long"))), 6);
  dl_table_free(t);
  t = open_table(DAT "all_primitive_types/delta"); /* one file, values 0..4 */
  struct { const char *pred; size_t want; } cases[] = {
      {BIN("equal", COL("int32", "int"), LIT("5", "int")), 0},
      {BIN("lessThanOrEqual", COL("int32", "int"), LIT("4", "int")), 1},
      {BIN("greaterThanOrEqual", COL("int64", "long"), LIT("4", "long")), 1},
      {BIN("greaterThan", COL("int8", "int"), LIT("4", "int")), 0},
      {BIN("lessThan", COL("int16", "int"), LIT("0", "int")), 0},
      {BIN("equal", COL("utf8", "string"), LIT("9", "string")), 0},
      {BIN("equal", COL("utf8", "string"), LIT("2", "string")), 1},
      {BIN("greaterThan", COL("date32", "date"), LIT("1970-01-05", "date")), 0},
      {BIN("equal", COL("date32", "date"), LIT("1970-01-03", "date")), 1},
      {BIN("greaterThan", COL("timestamp", "timestamp"), LIT("1970-01-01T05:00:00Z", "timestamp")), 0},
      {BIN("lessThan", COL("timestamp", "timestamp"), LIT("1970-01-01T01:00:00Z", "timestamp")), 1},
      {BIN("greaterThanOrEqual", COL("float64", "double"), LIT("4.5", "double")), 0},
      {BIN("equal", COL("float32", "float"), LIT("2", "float")), 1},
      {UN("isNull", COL("int64", "long")), 0},
      {UN("not", UN("isNull", COL("int64", "long"))), 1},
      {BIN("equal", COL("bool", "bool"), LIT("true", "bool")), 1}, /* no min/max: kept */
      {UN("not", BIN("equal", COL("int32", "int"), LIT("3", "int"))), 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t got = njp(t, cases[i].pred);
    if (got != cases[i].want) fail_msg("case %zu: %s: got %zu", i, cases[i].pred, got);
  }
  dl_table_free(t);
}

/* Runs a query with jsonPredicateHints; returns the code (no line may be written on error). */
static int jp_rc(dl_table *t, const char *pred, const char *extra) {
  json_t *b = json_pack("{s:s}", "jsonPredicateHints", pred);
  if (extra) {
    json_t *x = json_loads(extra, 0, NULL);
    assert_non_null(x);
    json_object_update(b, x);
    json_decref(x);
  }
  char *body = json_dumps(b, JSON_COMPACT);
  lines l = {0};
  shq_table_opts o = topts(true);
  int rc = run_query(&l, t, body, NULL, &o, NULL);
  if (rc) assert_int_equal(l.n, 0);
  lines_free(&l);
  free(body);
  json_decref(b);
  return rc;
}

static void test_json_malformed_rejected(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  struct { const char *pred, *msg; } cases[] = {
      {"{", "invalid jsonPredicateHints: not JSON"},
      {"[]", "invalid jsonPredicateHints: each op must be a JSON object"},
      {"{\"op\":\"like\",\"children\":[]}", "invalid jsonPredicateHints: unknown op 'like' ("},
      {"{\"children\":[]}", "invalid jsonPredicateHints: a node has no 'op'"},
      {"{\"op\":true}", "invalid jsonPredicateHints: 'op' must be a string"},
      {UN("and", BIN("equal", COL("letter", "string"), LIT("a", "string"))),
       "invalid jsonPredicateHints: and needs at least two children, got 1"},
      {BIN("equal", COL("letter", "string"), LIT("x", "int")),
       "invalid jsonPredicateHints: literal value 'x' is not a valid int"},
      {BIN("equal", COL("letter", "varchar"), LIT("a", "string")),
       "invalid jsonPredicateHints: unsupported valueType 'varchar' (bool, int, long, string, "
       "date, float, double, timestamp)"},
      {UN("isNull", LIT("a", "string")),
       "invalid jsonPredicateHints: isNull needs exactly one child, a column op"},
      {UN("equal", COL("letter", "string")),
       "invalid jsonPredicateHints: equal needs exactly two children, got 1"},
      {BIN("not", COL("a", "int"), COL("b", "int")),
       "invalid jsonPredicateHints: not needs exactly one child, got 2"},
      {"{\"op\":\"equal\",\"children\":{}}",
       "invalid jsonPredicateHints: 'children' of equal must be an array"},
      {"{\"op\":\"column\",\"name\":\"x\",\"valueType\":\"int\",\"children\":[" COL("y", "int") "]}",
       "invalid jsonPredicateHints: column op cannot have children"},
      {"{\"op\":\"literal\",\"value\":1,\"valueType\":\"int\"}",
       "invalid jsonPredicateHints: literal op needs a string 'value'"},
      {"{\"op\":\"column\",\"name\":\"x\"}",
       "invalid jsonPredicateHints: column op needs a string valueType"},
      {BIN("lessThan", BIN("or", COL("a", "int"), COL("b", "int")), LIT("1", "int")),
       "invalid jsonPredicateHints: lessThan compares two leaf ops (column or literal)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (jp_rc(t, cases[i].pred, NULL) != DD_EINVAL) fail_msg("case %zu accepted: %s", i, cases[i].pred);
    if (strncmp(dd_err_msg(), cases[i].msg, strlen(cases[i].msg)))
      fail_msg("case %zu: %s: message '%s'", i, cases[i].pred, dd_err_msg());
  }
  /* a long bad op name is clipped on a UTF-8 boundary, so the message stays valid JSON text */
  char op[300] = "{\"op\":\"";
  for (int i = 0; i < 40; i++) strcat(op, "\xC3\xA9");
  strcat(op, "\"}");
  assert_int_equal(jp_rc(t, op, NULL), DD_EINVAL);
  json_t *m = json_string(dd_err_msg());
  assert_non_null(m);
  assert_non_null(strstr(dd_err_msg(), "...'"));
  json_decref(m);
  /* rejected in the startingVersion form too, and before a page token is looked at */
  assert_int_equal(jp_rc(t, "{\"op\":\"foo\"}", "{\"startingVersion\":0}"), DD_EINVAL);
  assert_int_equal(jp_rc(t, "{\"op\":\"foo\"}", "{\"maxFiles\":1,\"pageToken\":\"x.y\"}"), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "unknown op 'foo'"));
  /* well formed but not applicable: best effort, every file */
  assert_int_equal(njp(t, BIN("equal", COL("nosuch", "int"), LIT("1", "int"))), 6);
  assert_int_equal(njp(t, BIN("equal", COL("letter", "int"), LIT("1", "int"))), 6);
  dl_table_free(t);
}

/* ======================= SQL predicateHints ======================= */

static void test_sql_hints(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  assert_int_equal(nsql(t, "letter = 'a'"), 2);
  assert_int_equal(nsql(t, "letter <> 'a'"), 4);
  assert_int_equal(nsql(t, "letter != 'a'"), 4);
  assert_int_equal(nsql(t, "'c' < letter"), 2);
  assert_int_equal(nsql(t, "letter <= 'b'"), 3);
  assert_int_equal(nsql(t, "letter >= 'e'"), 2);
  assert_int_equal(nsql(t, "letter > 'e'"), 1);
  assert_int_equal(nsql(t, "letter IS NULL"), 0);
  assert_int_equal(nsql(t, "letter is not null"), 6);
  assert_int_equal(nsql(t, "number > 4"), 2);
  assert_int_equal(nsql(t, "letter = 'a' OR letter = 'b'"), 3);
  assert_int_equal(nsql(t, "(letter = 'a' OR letter = 'b') AND number >= 4"), 1);
  assert_int_equal(nsql(t, "NOT (letter = 'a')"), 4);
  assert_int_equal(nsql(t, "letter LIKE 'a%'"), 6);  /* unsupported: skipped */
  assert_int_equal(nsql(t, "nope = 1"), 6);          /* unknown column: skipped */
  assert_int_equal(nsql(t, "number = 'x'"), 6);      /* literal of the wrong type: skipped */
  assert_int_equal(nfiles(t, "{\"predicateHints\":[\"letter >= 'b'\",\"letter <= 'c'\"]}"), 2);
  assert_int_equal(nfiles(t, "{\"predicateHints\":[\"letter >= 'b'\",\"garbage ((\"]}"), 4);
  dl_table_free(t);
  t = open_table(DRS "cdf-table");
  assert_int_equal(nsql(t, "birthday = DATE '2023-12-29'"), 2);
  assert_int_equal(nsql(t, "birthday < '2023-12-23'"), 4);
  dl_table_free(t);
}

/* ======================= limitHint ======================= */

static void test_limit_hint(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta"); /* one record per file */
  assert_int_equal(nfiles(t, "{\"limitHint\":2}"), 2);
  assert_int_equal(nfiles(t, "{\"limitHint\":0}"), 0);
  assert_int_equal(nfiles(t, "{\"limitHint\":100}"), 6);
  assert_int_equal(nfiles(t, "{\"limitHint\":1,\"predicateHints\":[\"letter = 'a'\"]}"), 1);
  dl_table_free(t);
  t = open_table(DAT "no_stats/delta"); /* numRecords only */
  assert_int_equal(nfiles(t, "{\"limitHint\":1}"), 1);
  assert_int_equal(nfiles(t, "{\"limitHint\":6}"), 1); /* one file left after overwrites */
  dl_table_free(t);
  t = open_table(DRS "delta-0.8.0-partitioned"); /* no stats: unknown counts, keep going */
  assert_int_equal(nfiles(t, "{\"limitHint\":1}"), 6);
  dl_table_free(t);
}

/* ======================= time travel ======================= */

static void test_version_travel(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  lines l = {0};
  shq_table_opts o = topts(true);
  shq_result res;
  assert_int_equal(run_query(&l, t, "{\"version\":0}", NULL, &o, &res), 0);
  assert_int_equal(res.version, 0);
  assert_int_equal(count_key(&l, "file"), 3);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 1), "version")), 0);
  for (size_t i = 2; i < l.n; i++) {
    assert_int_equal(json_integer_value(json_object_get(body_of(&l, i), "version")), 0);
    assert_true(json_integer_value(json_object_get(body_of(&l, i), "timestamp")) > 0);
  }
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"version\":5}", NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "beyond the latest version 1"));
  assert_int_equal(run_query(&l, t, "{\"version\":-1}", NULL, &o, NULL), DD_EINVAL);
  assert_int_equal(run_query(&l, t, "{\"version\":0,\"startingVersion\":0}", NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "Please only provide one of: version,timestamp,startingVersion");
  o.start_version = 1;
  assert_int_equal(run_query(&l, t, "{\"version\":0}", NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "You can only query table data since version 1.");
  o = topts(false);
  assert_int_equal(run_query(&l, t, "{\"version\":0}", NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "Reading table by version or timestamp is not supported "
                      "because history sharing is not enabled on table: share.schema.table");
  assert_int_equal(l.n, 0);
  dl_table_free(t);
}

static void set_mtime(const char *dir, int v, time_t when) {
  char p[1024];
  snprintf(p, sizeof p, "%s/_delta_log/%020d.json", dir, v);
  struct utimbuf u = {when, when};
  assert_int_equal(utime(p, &u), 0);
}

static void test_timestamp_travel(void **state) {
  (void)state;
  char dir[] = "/tmp/shq_ts_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char tbl[1100];
  snprintf(tbl, sizeof tbl, "%s/t", dir);
  copy_tree(DAT "basic_partitioned/delta", tbl);
  set_mtime(tbl, 0, 1000000000); /* 2001-09-09T01:46:40Z */
  set_mtime(tbl, 1, 1100000000); /* 2004-11-09T11:33:20Z */
  dl_table *t = open_table(tbl);
  shq_table_opts o = topts(true);
  lines l = {0};
  shq_result res;
  assert_int_equal(run_query(&l, t, "{\"timestamp\":\"2002-01-01T00:00:00Z\"}", NULL, &o, &res), 0);
  assert_int_equal(res.version, 0);
  assert_int_equal(count_key(&l, "file"), 3);
  assert_int_equal(json_integer_value(json_object_get(body_of(&l, 2), "timestamp")), 1000000000000LL);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"timestamp\":\"2004-11-09 11:33:20\"}", NULL, &o, &res), 0);
  assert_int_equal(res.version, 1);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, "{\"timestamp\":\"not a time\"}", NULL, &o, &res), DD_EINVAL);
  /* after the last commit (Delta refuses to time travel into the future) or before the first */
  assert_int_equal(run_query(&l, t, "{\"timestamp\":\"2004-11-09 11:33:21\"}", NULL, &o, &res), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "is after the latest version 1"));
  assert_int_equal(run_query(&l, t, "{\"timestamp\":\"1999-01-01T00:00:00Z\"}", NULL, &o, &res), DD_EINVAL);
  assert_int_equal(l.n, 0);
  shq_caps nc = caps_of(NULL);
  assert_int_equal(shq_table_metadata(t, -1, "2030-01-01T00:00:00Z", &nc, &o, &res, collect, &l), DD_EINVAL);
  assert_int_equal(shq_table_metadata(t, -1, "2004-11-09T11:33:20Z", &nc, &o, &res, collect, &l), 0);
  assert_int_equal(res.version, 1);
  lines_free(&l);
  int64_t v = -1;
  assert_int_equal(shq_table_version(&v, t, "2002-01-01T00:00:00Z", &o), 0);
  assert_int_equal(v, 1);
  assert_int_equal(shq_table_version(&v, t, "2001-09-09T01:46:40Z", &o), 0);
  assert_int_equal(v, 0);
  assert_int_equal(shq_table_version(&v, t, "1999-01-01T00:00:00Z", &o), 0);
  assert_int_equal(v, 0);
  assert_int_equal(shq_table_version(&v, t, "2005-01-01T00:00:00Z", &o), DD_EINVAL);
  assert_int_equal(shq_table_version(&v, t, NULL, &o), 0);
  assert_int_equal(v, 1);
  o.start_version = 1;
  assert_int_equal(shq_table_version(&v, t, "1999-01-01T00:00:00Z", &o), DD_EINVAL);
  o = topts(false);
  assert_int_equal(shq_table_version(&v, t, "1999-01-01T00:00:00Z", &o), DD_EINVAL);
  dl_table_free(t);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* ======================= paging and endStreamAction ======================= */

static void test_end_stream_action(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  shq_table_opts o = topts(false);
  lines l = {0};
  shq_result res;
  assert_int_equal(run_query(&l, t, "{}", "includeEndStreamAction=true", &o, &res), 0);
  assert_true(res.end_stream_action);
  assert_int_equal(l.n, 2 + 6 + 1);
  assert_string_equal(key_of(&l, l.n - 1), "endStreamAction");
  json_t *e = body_of(&l, l.n - 1);
  assert_int_equal(json_integer_value(json_object_get(e, "minUrlExpirationTimestamp")), SIGN_EXP);
  assert_null(json_object_get(e, "nextPageToken"));
  lines_free(&l);
  /* refresh token: reusing it pins the version */
  assert_int_equal(run_query(&l, t, "{\"includeRefreshToken\":true}", NULL, &o, &res), 0);
  const char *rt = json_string_value(json_object_get(body_of(&l, l.n - 1), "refreshToken"));
  assert_non_null(rt);
  char body[2048];
  snprintf(body, sizeof body, "{\"refreshToken\":\"%s\"}", rt);
  lines_free(&l);
  assert_int_equal(run_query(&l, t, body, NULL, &o, &res), 0);
  assert_int_equal(count_key(&l, "file"), 6);
  lines_free(&l);
  assert_int_equal(shq_write_stream_error("boom \"x\"", collect, &l), 0);
  assert_string_equal(l.raw[0], "{\"endStreamAction\":{\"errorMessage\":\"boom \\\"x\\\"\"}}");
  lines_free(&l);
  dl_table_free(t);
}

/* Pages through `body` (which has maxFiles) and checks every file comes exactly once. */
static size_t page_all(dl_table *t, const char *body_fmt, size_t want_files, size_t page) {
  char *seen[4096];
  size_t nseen = 0, pages = 0;
  char *token = NULL;
  shq_table_opts o = topts(false);
  for (;;) {
    char body[4096];
    if (token) snprintf(body, sizeof body, body_fmt, ",\"pageToken\":\"", token, "\"");
    else snprintf(body, sizeof body, body_fmt, "", "", "");
    lines l = {0}, again = {0};
    if (run_query(&l, t, body, NULL, &o, NULL)) fail_msg("%s", dd_err_msg());
    if (run_query(&again, t, body, NULL, &o, NULL)) fail_msg("%s", dd_err_msg());
    assert_int_equal(l.n, again.n); /* idempotent */
    for (size_t i = 0; i < l.n; i++) assert_string_equal(l.raw[i], again.raw[i]);
    pages++;
    assert_string_equal(key_of(&l, l.n - 1), "endStreamAction");
    assert_true(count_key(&l, "file") <= page);
    for (size_t i = 2; i + 1 < l.n; i++) {
      const char *id = json_string_value(json_object_get(body_of(&l, i), "id"));
      for (size_t j = 0; j < nseen; j++) assert_string_not_equal(seen[j], id);
      seen[nseen++] = strdup(id);
    }
    free(token);
    const char *nt = json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken"));
    token = nt ? strdup(nt) : NULL;
    lines_free(&l);
    lines_free(&again);
    if (!token) break;
  }
  assert_int_equal(nseen, want_files);
  for (size_t i = 0; i < nseen; i++) free(seen[i]);
  return pages;
}

static void test_paging_fixture(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  assert_int_equal(page_all(t, "{\"maxFiles\":2%s%s%s}", 6, 2), 3);
  assert_int_equal(page_all(t, "{\"maxFiles\":4%s%s%s}", 6, 4), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":1,\"predicateHints\":[\"letter <> 'a'\"]%s%s%s}", 4, 1), 4);
  assert_int_equal(page_all(t, "{\"maxFiles\":1099511627776%s%s%s}", 6, 10000), 1);
  dl_table_free(t);
}

/* The file URLs of every page of a query, in path order (the signer keeps the path). */
static size_t page_urls(dl_table *t, const char *body_fmt, char urls[][512], size_t *page_len) {
  size_t n = 0, pages = 0;
  char *token = NULL;
  shq_table_opts o = topts(false);
  do {
    char body[4096];
    if (token) snprintf(body, sizeof body, body_fmt, ",\"pageToken\":\"", token, "\"");
    else snprintf(body, sizeof body, body_fmt, "", "", "");
    lines l = {0};
    if (run_query(&l, t, body, NULL, &o, NULL)) fail_msg("%s", dd_err_msg());
    size_t first = n;
    for (size_t i = 2; i + 1 < l.n; i++)
      snprintf(urls[n++], 512, "%s", json_string_value(json_object_get(body_of(&l, i), "url")));
    qsort(urls + first, n - first, sizeof *urls, (int (*)(const void *, const void *))strcmp);
    page_len[pages++] = n - first;
    free(token);
    const char *nt = json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken"));
    token = nt ? strdup(nt) : NULL;
    lines_free(&l);
  } while (token);
  return pages;
}

/* limitHint with maxFiles: the limit counts records across the pages of one query. */
static void test_paging_with_limit(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta"); /* 6 files, one record each */
  assert_int_equal(page_all(t, "{\"maxFiles\":2,\"limitHint\":3%s%s%s}", 3, 2), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":2,\"limitHint\":4%s%s%s}", 4, 2), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":1,\"limitHint\":5%s%s%s}", 5, 1), 5);
  assert_int_equal(page_all(t, "{\"maxFiles\":4,\"limitHint\":0%s%s%s}", 0, 4), 1);
  assert_int_equal(page_all(t, "{\"maxFiles\":4,\"limitHint\":6%s%s%s}", 6, 4), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":4,\"limitHint\":60%s%s%s}", 6, 4), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":2,\"limitHint\":1,\"predicateHints\":[\"letter <> 'a'\"]%s%s%s}", 1, 2), 1);
  /* the files are the first ones in path order: the unlimited pages, cut */
  char all[8][512], lim[8][512];
  size_t all_len[8], lim_len[8];
  assert_int_equal(page_urls(t, "{\"maxFiles\":6%s%s%s}", all, all_len), 1);
  assert_int_equal(page_urls(t, "{\"maxFiles\":2,\"limitHint\":3%s%s%s}", lim, lim_len), 2);
  assert_int_equal(lim_len[0], 2);
  assert_int_equal(lim_len[1], 1);
  for (size_t i = 0; i < 3; i++) assert_string_equal(lim[i], all[i]);
  /* the limit is part of the query a page token is bound to */
  shq_table_opts o = topts(false);
  lines l = {0};
  assert_int_equal(run_query(&l, t, "{\"maxFiles\":2,\"limitHint\":3}", NULL, &o, NULL), 0);
  char body[2048];
  snprintf(body, sizeof body, "{\"maxFiles\":2,\"limitHint\":30,\"pageToken\":\"%s\"}",
           json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken")));
  lines_free(&l);
  assert_int_equal(run_query(&l, t, body, NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "invalid page token"));
  dl_table_free(t);
  t = open_table(DRS "delta-0.8.0-partitioned"); /* no stats: counts unknown, never cut */
  assert_int_equal(page_all(t, "{\"maxFiles\":2,\"limitHint\":1%s%s%s}", 6, 2), 3);
  dl_table_free(t);
}

static void test_page_token_checks(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  shq_table_opts o = topts(false);
  lines l = {0};
  assert_int_equal(run_query(&l, t, "{\"maxFiles\":2}", NULL, &o, NULL), 0);
  char *tok = strdup(json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken")));
  lines_free(&l);
  char body[4096];
  snprintf(body, sizeof body, "{\"maxFiles\":2,\"predicateHints\":[\"letter = 'a'\"],\"pageToken\":\"%s\"}", tok);
  assert_int_equal(run_query(&l, t, body, NULL, &o, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "invalid page token"));
  snprintf(body, sizeof body, "{\"maxFiles\":2,\"pageToken\":\"%s\"}", tok);
  shq_table_opts other = o;
  other.table_id = "tbl-2";
  assert_int_equal(run_query(&l, t, body, NULL, &other, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "invalid page token"));
  tok[3] ^= 1;
  snprintf(body, sizeof body, "{\"maxFiles\":2,\"pageToken\":\"%s\"}", tok);
  assert_int_equal(run_query(&l, t, body, NULL, &o, NULL), DD_EINVAL);
  assert_int_equal(run_query(&l, t, "{\"maxFiles\":2,\"pageToken\":\"@@@\"}", NULL, &o, NULL), DD_EINVAL);
  assert_int_equal(run_query(&l, t, "{\"maxFiles\":0}", NULL, &o, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "maxFiles must be positive.");
  /* an expired token */
  o.token_ttl_ms = 1;
  assert_int_equal(run_query(&l, t, "{\"maxFiles\":2}", NULL, &o, NULL), 0);
  snprintf(body, sizeof body, "{\"maxFiles\":2,\"pageToken\":\"%s\"}",
           json_string_value(json_object_get(body_of(&l, l.n - 1), "nextPageToken")));
  lines_free(&l);
  shq_query q;
  assert_int_equal(shq_query_parse_json(&q, body, strlen(body)), 0);
  shq_caps c = caps_of(NULL);
  shq_result res;
  assert_int_equal(shq_query_table(t, &q, &c, &o, &SIGNER, 1700000000000LL + 5, &res, collect, &l), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "expired"));
  shq_query_clear(&q);
  free(tok);
  dl_table_free(t);
}

/* A table written with the commit API: 250 files in 5 partitions, paged 17 at a time. */
static void test_paging_generated_table(void **state) {
  (void)state;
  char dir[] = "/tmp/shq_gen_XXXXXX";
  assert_non_null(mkdtemp(dir));
  dl_table *t = open_table(dir);
  dl_txn *txn = NULL;
  assert_int_equal(dl_txn_begin(&txn, t, NULL), 0);
  dl_protocol p = {.min_reader_version = 1, .min_writer_version = 2};
  assert_int_equal(dl_txn_set_protocol(txn, &p), 0);
  const char *pc[] = {"part"};
  dl_metadata_spec md = {.schema_string = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"part\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}",
                         .num_partition_columns = 1, .partition_columns = pc, .created_time = -1};
  assert_int_equal(dl_txn_set_metadata(txn, &md), 0);
  for (int i = 0; i < 250; i++) {
    char path[128], val[16], stats[128];
    snprintf(val, sizeof val, "p%d", i % 5);
    snprintf(path, sizeof path, "part=%s/f-%03d.parquet", val, i);
    snprintf(stats, sizeof stats, "{\"numRecords\":10,\"minValues\":{\"id\":%d},\"maxValues\":{\"id\":%d},\"nullCount\":{\"id\":0}}", i * 10, i * 10 + 9);
    char *pv = NULL;
    const char *k[] = {"part"}, *v[] = {val};
    assert_int_equal(dl_kv_pack(&pv, k, v, 1), 0);
    dl_file f = {.path = path, .size = 100 + i, .modification_time = 1, .data_change = true,
                 .stats = stats, .partition_values = pv, .base_row_id = -1,
                 .default_row_commit_version = -1, .deletion_timestamp = -1};
    assert_int_equal(dl_txn_add_file(txn, &f), 0);
    free(pv);
  }
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.checkpoint = false;
  int64_t ver = -1;
  assert_int_equal(dl_txn_commit(txn, &co, &ver), 0);
  dl_txn_free(txn);
  assert_int_equal(page_all(t, "{\"maxFiles\":17%s%s%s}", 250, 17), 15);
  assert_int_equal(page_all(t, "{\"maxFiles\":7,\"jsonPredicateHints\":\"{\\\"op\\\":\\\"equal\\\",\\\"children\\\":[{\\\"op\\\":\\\"column\\\",\\\"name\\\":\\\"part\\\",\\\"valueType\\\":\\\"string\\\"},{\\\"op\\\":\\\"literal\\\",\\\"value\\\":\\\"p3\\\",\\\"valueType\\\":\\\"string\\\"}]}\"%s%s%s}", 50, 7), 8);
  assert_int_equal(njp(t, BIN("lessThan", COL("id", "long"), LIT("100", "long"))), 10);
  assert_int_equal(nfiles(t, "{\"limitHint\":25}"), 3);
  /* 10 records per file: 25 rows need 3 files, however they are paged */
  assert_int_equal(page_all(t, "{\"maxFiles\":2,\"limitHint\":25%s%s%s}", 3, 2), 2);
  assert_int_equal(page_all(t, "{\"maxFiles\":1,\"limitHint\":25%s%s%s}", 3, 1), 3);
  assert_int_equal(page_all(t, "{\"maxFiles\":7,\"limitHint\":100%s%s%s}", 10, 7), 2);
  dl_table_free(t);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* ======================= deletion vectors, column mapping ======================= */

static void check_dv_table(const char *path, size_t want_files) {
  dl_table *t = open_table(path);
  shq_table_opts o = topts(false);
  lines l = {0};
  shq_result res;
  assert_int_equal(run_query(&l, t, "{}", NULL, &o, &res), DD_EPRECOND);
  assert_true(!strncmp(dd_err_msg(), "Unsupported Delta Table Properties: ", 36));
  assert_int_equal(run_query(&l, t, "{}", "responseformat=parquet;readerfeatures=deletionvectors", &o, &res), DD_EPRECOND);
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta", &o, &res), DD_EPRECOND);
  /* the message names what the client left out */
  assert_non_null(strstr(dd_err_msg(), "responseformat=delta;readerfeatures=deletionvectors"));
  assert_int_equal(l.n, 0);
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta,parquet;readerfeatures=deletionvectors", &o, &res), 0);
  assert_int_equal(res.format, SHQ_FORMAT_DELTA);
  json_t *dp = json_object_get(body_of(&l, 0), "deltaProtocol");
  assert_int_equal(json_integer_value(json_object_get(dp, "minReaderVersion")), 3);
  assert_string_equal(json_string_value(json_array_get(json_object_get(dp, "readerFeatures"), 0)), "deletionVectors");
  assert_int_equal(count_key(&l, "file"), want_files);
  size_t dvs = 0;
  for (size_t i = 2; i < l.n; i++) {
    json_t *add = json_object_get(json_object_get(body_of(&l, i), "deltaSingleAction"), "add");
    json_t *dv = json_object_get(add, "deletionVector");
    if (!dv) continue;
    dvs++;
    assert_string_equal(json_string_value(json_object_get(dv, "storageType")), "p");
    assert_true(!strncmp(json_string_value(json_object_get(dv, "pathOrInlineDv")), "https://signed.example/", 23));
    assert_true(json_integer_value(json_object_get(dv, "cardinality")) > 0);
  }
  assert_true(dvs > 0);
  lines_free(&l);
  dl_table_free(t);
}

static void test_deletion_vectors(void **state) {
  (void)state;
  check_dv_table(DAT "deletion_vectors/delta", 1);
  check_dv_table(DRS "table-with-dv-small", 1);
}

static void test_column_mapping(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "column_mapping/delta");
  shq_table_opts o = topts(false);
  lines l = {0};
  assert_int_equal(run_query(&l, t, "{}", NULL, &o, NULL), DD_EPRECOND);
  assert_true(!strncmp(dd_err_msg(), "Unsupported Delta Table Properties: ", 36));
  assert_non_null(strstr(dd_err_msg(), "readerfeatures=columnmapping"));
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta;readerfeatures=columnmapping", &o, NULL), 0);
  json_t *cfg = json_object_get(json_object_get(body_of(&l, 1), "deltaMetadata"), "configuration");
  assert_string_equal(json_string_value(json_object_get(cfg, "delta.columnMapping.mode")), "name");
  assert_int_equal(count_key(&l, "file"), 2);
  lines_free(&l);
  /* predicates use the logical name; stats are keyed by the physical one */
  const char *body = "{\"jsonPredicateHints\":\"{\\\"op\\\":\\\"equal\\\",\\\"children\\\":[{\\\"op\\\":\\\"column\\\",\\\"name\\\":\\\"letter\\\",\\\"valueType\\\":\\\"string\\\"},{\\\"op\\\":\\\"literal\\\",\\\"value\\\":\\\"z\\\",\\\"valueType\\\":\\\"string\\\"}]}\"}";
  assert_int_equal(run_query(&l, t, body, "responseformat=delta;readerfeatures=columnmapping", &o, NULL), 0);
  assert_int_equal(count_key(&l, "file"), 0);
  lines_free(&l);
  dl_table_free(t);
  t = open_table(DRS "table_with_column_mapping");
  assert_int_equal(run_query(&l, t, "{}", "responseformat=delta;readerfeatures=columnmapping", &o, NULL), 0);
  assert_int_equal(count_key(&l, "file"), 2);
  lines_free(&l);
  dl_table_free(t);
}

static void test_snapshot_cache(void **state) {
  (void)state;
  dl_table *t = open_table(DAT "basic_partitioned/delta");
  shq_table_opts o = topts(true);
  assert_int_equal(dl_cache_new(&o.cache, 1 << 24), 0);
  lines a = {0}, b = {0};
  assert_int_equal(run_query(&a, t, "{}", NULL, &o, NULL), 0);
  assert_true(dl_cache_bytes(o.cache) > 0);
  assert_int_equal(run_query(&b, t, "{}", NULL, &o, NULL), 0);
  assert_int_equal(a.n, 8);
  assert_int_equal(a.n, b.n);
  for (size_t i = 0; i < a.n; i++) assert_string_equal(a.raw[i], b.raw[i]);
  lines_free(&a);
  lines_free(&b);
  assert_int_equal(run_query(&a, t, "{\"version\":0}", NULL, &o, NULL), 0); /* not from the cache */
  assert_int_equal(count_key(&a, "file"), 3);
  lines_free(&a);
  int64_t v;
  assert_int_equal(shq_table_version(&v, t, NULL, &o), 0);
  assert_int_equal(v, 1);
  dl_cache_free(o.cache);
  dl_table_free(t);
}

/* A one-commit table whose add action has the given path. */
static void write_table(const char *dir, const char *path) {
  char p[1200];
  snprintf(p, sizeof p, "%s/_delta_log", dir);
  assert_int_equal(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000000.json", dir);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fprintf(f, "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n"
             "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
             "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\",\"partitionColumns\":[],"
             "\"configuration\":{},\"createdTime\":1}}\n"
             "{\"add\":{\"path\":\"%s\",\"partitionValues\":{},\"size\":1,\"modificationTime\":1,"
             "\"dataChange\":true}}\n", path);
  fclose(f);
}

static void test_paths_outside_table(void **state) {
  (void)state;
  struct { const char *path; int rc; const char *url_tail; } cases[] = {
      {"/etc/passwd", DD_EPRECOND, NULL},
      {"s3://other-bucket/secret.parquet", DD_EPRECOND, NULL},
      {"a/../../x.parquet", DD_EPRECOND, NULL},
      {"%2E%2E/x.parquet", DD_EPRECOND, NULL},
      {"@TABLE@/sub/x.parquet", 0, "signed.example/sub/x.parquet"},
      {"sub/x%20y.parquet", 0, "signed.example/sub/x y.parquet"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char dir[] = "/tmp/shq_abs_XXXXXX", path[512];
    assert_non_null(mkdtemp(dir));
    const char *at = strstr(cases[i].path, "@TABLE@");
    if (at) snprintf(path, sizeof path, "file://%s%s", dir, at + 7);
    else snprintf(path, sizeof path, "%s", cases[i].path);
    write_table(dir, path);
    dl_table *t = open_table(dir);
    lines l = {0};
    shq_table_opts o = topts(false);
    int rc = run_query(&l, t, "{}", NULL, &o, NULL);
    if (rc != cases[i].rc) fail_msg("%s: rc %d (%s)", path, rc, dd_err_msg());
    if (!rc) {
      assert_int_equal(l.n, 3);
      assert_non_null(strstr(json_string_value(json_object_get(body_of(&l, 2), "url")), cases[i].url_tail));
    }
    lines_free(&l);
    dl_table_free(t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
  }
}

/* The path check is kept with a cached snapshot once it passed, and only then: a bad path
 * is refused on every query, and a commit that adds one makes a new snapshot that is
 * checked again. */
static void test_paths_checked_through_cache(void **state) {
  (void)state;
  char dir[] = "/tmp/shq_absc_XXXXXX", p[512];
  assert_non_null(mkdtemp(dir));
  write_table(dir, "sub/ok.parquet");
  dl_cache *cache = NULL;
  assert_int_equal(dl_cache_new(&cache, 1u << 26), 0);
  shq_table_opts o = topts(false);
  o.cache = cache;
  for (int i = 0; i < 2; i++) {
    dl_table *t = open_table(dir);
    lines l = {0};
    assert_int_equal(run_query(&l, t, "{}", NULL, &o, NULL), 0);
    assert_int_equal(l.n, 3);
    lines_free(&l);
    dl_table_free(t);
  }
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000001.json", dir);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("{\"add\":{\"path\":\"/etc/passwd\",\"partitionValues\":{},\"size\":1,"
        "\"modificationTime\":1,\"dataChange\":true}}\n", f);
  fclose(f);
  for (int i = 0; i < 2; i++) {
    dl_table *t = open_table(dir);
    lines l = {0};
    assert_int_equal(run_query(&l, t, "{}", NULL, &o, NULL), DD_EPRECOND);
    lines_free(&l);
    dl_table_free(t);
  }
  dl_cache_free(cache);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paths_checked_through_cache),
      cmocka_unit_test(test_parquet_lines),
      cmocka_unit_test(test_delta_lines_plain_table),
      cmocka_unit_test(test_metadata_endpoint),
      cmocka_unit_test(test_json_partition_ops),
      cmocka_unit_test(test_json_typed_partitions),
      cmocka_unit_test(test_json_escaped_and_null_partitions),
      cmocka_unit_test(test_json_stats_ops),
      cmocka_unit_test(test_json_malformed_rejected),
      cmocka_unit_test(test_sql_hints),
      cmocka_unit_test(test_limit_hint),
      cmocka_unit_test(test_version_travel),
      cmocka_unit_test(test_timestamp_travel),
      cmocka_unit_test(test_end_stream_action),
      cmocka_unit_test(test_paging_fixture),
      cmocka_unit_test(test_paging_with_limit),
      cmocka_unit_test(test_page_token_checks),
      cmocka_unit_test(test_paging_generated_table),
      cmocka_unit_test(test_deletion_vectors),
      cmocka_unit_test(test_column_mapping),
      cmocka_unit_test(test_snapshot_cache),
      cmocka_unit_test(test_paths_outside_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
