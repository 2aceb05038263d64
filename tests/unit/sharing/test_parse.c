/* test_parse.c: the request side of the sharing engine without tables: the capabilities
 * header, the Query Table body (strict types, reference messages), protocol timestamps,
 * tokens, the JSON string writer, and the predicate parser / evaluator on hand-made
 * partition values and stats. */
#include "tests/unit/sharing/shq_test_util.h"
#include "store/sharing/shq_internal.h"

static void test_caps(void **state) {
  (void)state;
  shq_caps c;
  assert_int_equal(shq_caps_parse(&c, NULL), 0);
  assert_int_equal(c.formats, 0);
  assert_int_equal(shq_caps_parse(&c, "responseformat=delta,parquet;readerfeatures=deletionvectors,columnmapping;includeendstreamaction=true"), 0);
  assert_int_equal(c.formats, SHQ_FORMAT_DELTA | SHQ_FORMAT_PARQUET);
  assert_true(c.rf_deletion_vectors);
  assert_true(c.rf_column_mapping);
  assert_int_equal(c.num_reader_features, 2);
  assert_true(c.end_stream_action);
  assert_int_equal(shq_caps_parse(&c, " ResponseFormat = DELTA ; ReaderFeatures=DeletionVectors; foo=bar;;x"), 0);
  assert_int_equal(c.formats, SHQ_FORMAT_DELTA);
  assert_true(c.rf_deletion_vectors);
  assert_false(c.rf_column_mapping);
  assert_false(c.end_stream_action);
  assert_int_equal(shq_caps_parse(&c, "includeendstreamaction=false;responseformat=parquet"), 0);
  assert_false(c.end_stream_action);
  assert_int_equal(c.formats, SHQ_FORMAT_PARQUET);
  assert_int_equal(shq_caps_parse(&c, "responseformat=orc"), DD_EINVAL);
  assert_int_equal(shq_caps_parse(&c, "readerfeatures=timestampNtz"), 0);
  assert_int_equal(c.num_reader_features, 1);
}

static void test_query_body(void **state) {
  (void)state;
  shq_query q;
  const char *body = "{\"predicateHints\":[\"a = 1\",\"b > 'x'\"],\"jsonPredicateHints\":\"{}\","
                     "\"limitHint\":1000,\"version\":\"12\",\"maxFiles\":5,\"pageToken\":\"t\","
                     "\"includeRefreshToken\":false,\"unknownField\":[1,2],\"idempotencyKey\":\"k\"}";
  assert_int_equal(shq_query_parse_json(&q, body, strlen(body)), 0);
  assert_int_equal(q.num_predicate_hints, 2);
  assert_string_equal(q.predicate_hints[1], "b > 'x'");
  assert_string_equal(q.json_predicate_hints, "{}");
  assert_int_equal(q.limit_hint, 1000);
  assert_int_equal(q.version, 12);
  assert_int_equal(q.max_files, 5);
  assert_string_equal(q.page_token, "t");
  assert_int_equal(q.starting_version, -1);
  shq_query_clear(&q);
  assert_int_equal(shq_query_parse_json(&q, "", 0), 0);
  assert_int_equal(shq_query_parse_json(&q, " {} ", 4), 0);
  assert_int_equal(q.limit_hint, -1);
  const char *obj = "{\"jsonPredicateHints\":{\"op\":\"isNull\",\"children\":[]}}";
  assert_int_equal(shq_query_parse_json(&q, obj, strlen(obj)), 0);
  assert_non_null(strstr(q.json_predicate_hints, "isNull"));
  shq_query_clear(&q);
  struct { const char *body, *msg; } bad[] = {
      {"{", NULL},
      {"[]", NULL},
      {"{\"version\":\"x\"}", NULL},
      {"{\"version\":1.5}", NULL},
      {"{\"version\":-1}", "table version cannot be negative."},
      {"{\"startingVersion\":-2}", "startingVersion cannot be negative."},
      {"{\"maxFiles\":0}", "maxFiles must be positive."},
      {"{\"maxFiles\":-3}", "maxFiles must be positive."},
      {"{\"limitHint\":\"many\"}", NULL},
      {"{\"predicateHints\":\"a = 1\"}", NULL},
      {"{\"predicateHints\":[1]}", NULL},
      {"{\"timestamp\":5}", NULL},
      {"{\"includeRefreshToken\":\"yes\"}", NULL},
      {"{\"version\":1,\"version\":2}", NULL},
      {"{\"version\":99999999999999999999}", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = shq_query_parse_json(&q, bad[i].body, strlen(bad[i].body));
    if (rc != DD_EINVAL) fail_msg("%s: rc %d", bad[i].body, rc);
    if (bad[i].msg) assert_string_equal(dd_err_msg(), bad[i].msg);
    assert_null(q.predicate_hints); /* cleared on failure */
  }
}

static void test_timestamps(void **state) {
  (void)state;
  int64_t ms;
  assert_int_equal(shq_parse_timestamp("2022-01-01T00:00:00Z", &ms), 0);
  assert_int_equal(ms, 1640995200000LL);
  assert_int_equal(shq_parse_timestamp("2022-01-01T00:00:00.123Z", &ms), 0);
  assert_int_equal(ms, 1640995200123LL);
  assert_int_equal(shq_parse_timestamp("2022-01-01T01:00:00+01:00", &ms), 0);
  assert_int_equal(ms, 1640995200000LL);
  assert_int_equal(shq_parse_timestamp("2022-1-1 00:00:00", &ms), 0);
  assert_int_equal(ms, 1640995200000LL);
  assert_int_equal(shq_parse_timestamp("2022-01-01 00:00:00.5", &ms), 0);
  assert_int_equal(ms, 1640995200500LL);
  assert_int_equal(shq_parse_timestamp("1969-12-31T23:59:59.999Z", &ms), 0);
  assert_int_equal(ms, -1);
  const char *bad[] = {"", "2022-01-01", "2022-13-01T00:00:00Z", "2022-02-30T00:00:00Z",
                       "2022-01-01T25:00:00Z", "2022-01-01T00:00:00Q", "yesterday",
                       "2022-01-01 00:00", "2022-01-01T00:00:00Zjunk"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_int_equal(shq_parse_timestamp(bad[i], &ms), DD_EINVAL);
  int64_t d;
  assert_int_equal(shq__parse_date("2000-02-29", 10, &d), 0);
  assert_int_equal(d, 11016);
  assert_int_equal(shq__parse_date("2001-02-29", 10, &d), -1);
}

static void test_tokens(void **state) {
  (void)state;
  shq_table_opts o = topts(true);
  shq_token t = {.kind = 'p', .table_id = "tbl-1", .checksum = "abc", .version = 7,
                 .after = "x/y.parquet", .expires_ms = 0};
  char *s = shq__token_encode(&t, &o);
  assert_non_null(s);
  assert_null(strpbrk(s, "+/=")); /* URL-safe */
  shq_token d;
  assert_int_equal(shq__token_decode(&d, s, 'p', "abc", &o, 1), 0);
  assert_int_equal(d.version, 7);
  assert_string_equal(d.after, "x/y.parquet");
  shq__token_clear(&d);
  assert_int_equal(shq__token_decode(&d, s, 'r', NULL, &o, 1), DD_EINVAL);
  assert_int_equal(shq__token_decode(&d, s, 'p', "abd", &o, 1), DD_EINVAL);
  shq_table_opts other = o;
  other.token_key = (const uint8_t *)"another key";
  other.token_key_len = 11;
  assert_int_equal(shq__token_decode(&d, s, 'p', "abc", &other, 1), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "signature"));
  free(s);
  t.expires_ms = 100;
  s = shq__token_encode(&t, &o);
  assert_int_equal(shq__token_decode(&d, s, 'p', "abc", &o, 99), 0);
  shq__token_clear(&d);
  assert_int_equal(shq__token_decode(&d, s, 'p', "abc", &o, 101), DD_EINVAL);
  free(s);
  assert_int_equal(shq__token_decode(&d, "", 'p', NULL, &o, 0), DD_EINVAL);
  assert_int_equal(shq__token_decode(&d, "a.b.c", 'p', NULL, &o, 0), DD_EINVAL);
}

/* Evaluates a JSON predicate against one file (partition map built from k=v pairs). */
static bool keep(const char *pred, const char *part_col, const char *part_val, const char *stats) {
  shq_pred *p = NULL;
  if (shq__pred_parse_json(&p, pred, strlen(pred))) fail_msg("parse %s: %s", pred, dd_err_msg());
  const char *pcols[] = {part_col};
  dl_metadata md = {.num_partition_columns = part_col ? 1 : 0, .partition_columns = pcols};
  assert_int_equal(shq__pred_bind(p, &md, NULL), 0);
  char *pv = NULL;
  const char *k[] = {part_col}, *v[] = {part_val};
  assert_int_equal(dl_kv_pack(&pv, k, v, part_col ? 1 : 0), 0);
  bool r = shq__pred_keep(p, pv, stats);
  free(pv);
  shq__pred_free(p);
  return r;
}

#define C(n, t) "{\"op\":\"column\",\"name\":\"" n "\",\"valueType\":\"" t "\"}"
#define L(v, t) "{\"op\":\"literal\",\"value\":\"" v "\",\"valueType\":\"" t "\"}"
#define B(op, a, b) "{\"op\":\"" op "\",\"children\":[" a "," b "]}"
#define U(op, a) "{\"op\":\"" op "\",\"children\":[" a "]}"

static void test_pred_eval(void **state) {
  (void)state;
  const char *st = "{\"numRecords\":10,\"minValues\":{\"x\":5,\"s\":\"bb\",\"n\":{\"y\":1.5}},"
                   "\"maxValues\":{\"x\":9,\"s\":\"dd\",\"n\":{\"y\":2.5}},\"nullCount\":{\"x\":0,\"s\":3,\"z\":10}}";
  assert_true(keep(B("equal", C("x", "int"), L("5", "int")), NULL, NULL, st));
  assert_false(keep(B("equal", C("x", "int"), L("4", "int")), NULL, NULL, st));
  assert_false(keep(B("greaterThan", C("x", "long"), L("9", "long")), NULL, NULL, st));
  assert_true(keep(B("greaterThanOrEqual", C("x", "long"), L("9", "long")), NULL, NULL, st));
  assert_false(keep(B("lessThan", C("x", "long"), L("5", "long")), NULL, NULL, st));
  assert_true(keep(B("lessThanOrEqual", C("x", "long"), L("5", "long")), NULL, NULL, st));
  assert_false(keep(B("equal", C("s", "string"), L("a", "string")), NULL, NULL, st));
  assert_true(keep(B("equal", C("s", "string"), L("c", "string")), NULL, NULL, st));
  assert_false(keep(B("greaterThan", C("n.y", "double"), L("2.5", "double")), NULL, NULL, st));
  assert_true(keep(U("isNull", C("s", "string")), NULL, NULL, st));
  assert_false(keep(U("isNull", C("x", "int")), NULL, NULL, st));
  assert_false(keep(U("not", U("isNull", C("z", "int"))), NULL, NULL, st)); /* all null */
  assert_false(keep(B("equal", C("z", "int"), L("1", "int")), NULL, NULL, st));
  assert_true(keep(B("equal", C("missing", "int"), L("1", "int")), NULL, NULL, st));
  assert_true(keep(B("equal", C("x", "int"), L("4", "int")), NULL, NULL, NULL)); /* no stats */
  /* not(equal) can skip a file only when every row equals the literal */
  assert_true(keep(U("not", B("equal", C("x", "int"), L("5", "int"))), NULL, NULL, st));
  const char *one = "{\"numRecords\":2,\"minValues\":{\"x\":5},\"maxValues\":{\"x\":5},\"nullCount\":{\"x\":0}}";
  assert_false(keep(U("not", B("equal", C("x", "int"), L("5", "int"))), NULL, NULL, one));
  /* unknown in AND/OR */
  assert_false(keep(B("and", B("equal", C("missing", "int"), L("1", "int")),
                      B("equal", C("x", "int"), L("1", "int"))), NULL, NULL, st));
  assert_true(keep(B("or", B("equal", C("missing", "int"), L("1", "int")),
                     B("equal", C("x", "int"), L("1", "int"))), NULL, NULL, st));
  /* not tight bounds: nullCount cannot prove all-null */
  const char *loose = "{\"numRecords\":10,\"tightBounds\":false,\"nullCount\":{\"z\":10}}";
  assert_true(keep(U("not", U("isNull", C("z", "int"))), NULL, NULL, loose));
  /* long strings: the max may be truncated, so it does not bound */
  const char *trunc = "{\"numRecords\":1,\"minValues\":{\"s\":\"a\"},\"maxValues\":{\"s\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"},\"nullCount\":{\"s\":0}}";
  assert_true(keep(B("greaterThan", C("s", "string"), L("c", "string")), NULL, NULL, trunc));
  /* partition values, typed and null */
  assert_true(keep(B("equal", C("p", "date"), L("2021-01-01", "date")), "p", "2021-01-01", NULL));
  assert_false(keep(B("lessThan", C("p", "int"), L("10", "int")), "p", "12", NULL));
  assert_true(keep(B("lessThan", C("p", "string"), L("2", "string")), "p", "12", NULL));
  assert_true(keep(U("isNull", C("p", "string")), "p", NULL, NULL));
  assert_false(keep(B("equal", C("p", "string"), L("a", "string")), "p", NULL, NULL));
  assert_false(keep(U("not", B("equal", C("p", "string"), L("a", "string"))), "p", NULL, NULL));
  assert_true(keep(B("equal", C("p", "timestamp"), L("2021-01-01T00:00:00Z", "timestamp")), "p",
                   "2021-01-01 00:00:00", NULL));
  assert_true(keep(B("equal", C("p", "bool"), L("true", "bool")), "p", "true", NULL));
  assert_false(keep(B("equal", C("p", "bool"), L("false", "bool")), "p", "true", NULL));
  assert_true(keep(B("equal", C("p", "int"), L("1", "int")), "p", "notanumber", NULL));
}

/* The raw text of a looked-up token (for comparing). */
static const char *tok(const shq_tok *t, char buf[64]) {
  if (!t->kind) return "(none)";
  if (t->kind == SHQ_TOK_OTHER) return "(container)";
  snprintf(buf, 64, "%.*s", (int)t->n, t->p);
  return buf;
}

static void lookup_is(const char *stats, const char *path, const char *nr, const char *tb,
                      const char *nc, const char *lo, const char *hi) {
  shq_col_stats cs;
  char b[5][64];
  if (!shq__stats_lookup(stats, path, &cs)) fail_msg("not read: %s", stats);
  assert_string_equal(tok(&cs.num_records, b[0]), nr);
  assert_string_equal(tok(&cs.tight_bounds, b[1]), tb);
  assert_string_equal(tok(&cs.null_count, b[2]), nc);
  assert_string_equal(tok(&cs.min, b[3]), lo);
  assert_string_equal(tok(&cs.max, b[4]), hi);
}

static void test_stats_lookup(void **state) {
  (void)state;
  const char *st = " {\"numRecords\" : 10 ,\"minValues\":{\"x\":-5,\"s\":\"b\\\"b\",\"n\":{\"y\":1.5e3}},"
                   "\"maxValues\":{\"x\":9,\"s\":\"dd\",\"n\":{\"y\":[1,{\"a\":2}]}},"
                   "\"nullCount\":{\"x\":0,\"n\":{\"y\":3}},\"tightBounds\":true,\"extra\":[{},[],null]}\n";
  lookup_is(st, "x", "10", "true", "0", "-5", "9");
  lookup_is(st, "s", "10", "true", "(none)", "b\\\"b", "dd");
  lookup_is(st, "n.y", "10", "true", "3", "1.5e3", "(container)");
  lookup_is(st, "n", "10", "true", "(container)", "(container)", "(container)");
  lookup_is(st, "n.y.z", "10", "true", "(none)", "(none)", "(none)");
  lookup_is(st, "nope", "10", "true", "(none)", "(none)", "(none)");
  lookup_is("{}", "x", "(none)", "(none)", "(none)", "(none)", "(none)");
  /* duplicate keys: the last one wins, as in jansson */
  lookup_is("{\"minValues\":{\"x\":1},\"minValues\":{\"y\":2},\"maxValues\":{\"x\":1,\"x\":7},"
            "\"numRecords\":1,\"numRecords\":2}", "x", "2", "(none)", "(none)", "(none)", "7");
  lookup_is("{\"minValues\":{\"x\":1},\"minValues\":5}", "x", "(none)", "(none)", "(none)", "(none)", "(none)");
  /* keys with escapes are decoded before they are compared */
  lookup_is("{\"min\\u0056alues\":{\"x\\u00e9\":3},\"maxValues\":{\"x\\u00e9\":4}}", "x\xc3\xa9",
            "(none)", "(none)", "(none)", "3", "4");
  /* no column: numRecords only, never a column that happens to be called so */
  shq_col_stats only;
  assert_true(shq__stats_lookup("{\"minValues\":{\"numRecords\":99},\"numRecords\":7}", NULL, &only));
  char nb[64];
  assert_string_equal(tok(&only.num_records, nb), "7");
  assert_int_equal(only.min.kind, SHQ_TOK_NONE);
  /* what is not one JSON object is not read */
  const char *bad[] = {"", "[]", "5", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} x", "{\"a\" 1}",
                       "{\"a\":tru}", "{\"a\":\"x\ty\"}", "{\"a\":01.}", "{\"a\":-}", "{\"a\":1e}",
                       "{\"a\":[1,]}", "{\"a\":\"\\", "{'a':1}", "{\"minValues\":{\"x\":1,}}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    shq_col_stats cs;
    if (shq__stats_lookup(bad[i], "x", &cs)) fail_msg("read: %s", bad[i]);
    assert_int_equal(cs.min.kind, SHQ_TOK_NONE);
  }
  /* nesting is bounded */
  char deep[512] = "{\"a\":";
  for (int i = 0; i < 100; i++) strcat(deep, "[");
  for (int i = 0; i < 100; i++) strcat(deep, "]");
  strcat(deep, "}");
  shq_col_stats cs;
  assert_false(shq__stats_lookup(deep, "x", &cs));
}

/* The evaluator on stats the fast reader must get right: escapes, odd numbers. */
static void test_pred_eval_stats_edges(void **state) {
  (void)state;
  const char *esc = "{\"numRecords\":2,\"minValues\":{\"s\":\"\\u00e9a\"},\"maxValues\":{\"s\":\"\\u00e9c\"},"
                    "\"nullCount\":{\"s\":0}}";
  assert_true(keep(B("equal", C("s", "string"), L("\xc3\xa9" "b", "string")), NULL, NULL, esc));
  assert_false(keep(B("equal", C("s", "string"), L("e", "string")), NULL, NULL, esc));
  assert_false(keep(B("greaterThan", C("s", "string"), L("\xc3\xa9" "d", "string")), NULL, NULL, esc));
  /* a real bound of an integer column is rounded outwards; huge ones bound nothing */
  const char *real = "{\"numRecords\":2,\"minValues\":{\"x\":1.5,\"y\":-1e300},"
                     "\"maxValues\":{\"x\":3.5,\"y\":1e300},\"nullCount\":{\"x\":0,\"y\":0}}";
  assert_true(keep(B("equal", C("x", "long"), L("4", "long")), NULL, NULL, real));
  assert_false(keep(B("equal", C("x", "long"), L("5", "long")), NULL, NULL, real));
  assert_true(keep(B("equal", C("y", "long"), L("5", "long")), NULL, NULL, real));
  /* an integer beyond int64 bounds nothing; numRecords beyond int64 is unknown */
  const char *big = "{\"numRecords\":99999999999999999999,\"minValues\":{\"x\":99999999999999999999},"
                    "\"maxValues\":{\"x\":99999999999999999999},\"nullCount\":{\"x\":0}}";
  assert_true(keep(B("equal", C("x", "long"), L("5", "long")), NULL, NULL, big));
  assert_false(keep(B("equal", C("x", "double"), L("5", "double")), NULL, NULL, big));
  /* stats that are not JSON: nothing known, the file is kept */
  assert_true(keep(B("equal", C("x", "long"), L("5", "long")), NULL, NULL, "{\"minValues\":{\"x\":9}"));
  assert_true(keep(U("isNull", C("x", "long")), NULL, NULL, "garbage"));
}

static void test_pred_parse_rejects(void **state) {
  (void)state;
  const char *bad[] = {
      "[]", "{}", "{\"op\":1}", "{\"op\":\"nope\"}",
      U("not", B("equal", C("a", "int"), L("1", "int")) "," L("1", "int")),
      B("equal", C("a", "int"), B("equal", C("a", "int"), L("1", "int"))),
      U("equal", C("a", "int")),
      "{\"op\":\"column\",\"valueType\":\"int\"}",
      "{\"op\":\"column\",\"name\":\"\",\"valueType\":\"int\"}",
      L("abc", "int"), L("2147483648", "int"), L("1e400x", "double"), L("2021-02-30", "date"),
      L("yes", "bool"), C("a", "decimal"),
      "{\"op\":\"and\",\"children\":{}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    shq_pred *p = NULL;
    if (shq__pred_parse_json(&p, bad[i], strlen(bad[i])) != DD_EINVAL) fail_msg("accepted %s", bad[i]);
    assert_null(p);
  }
  /* depth is bounded */
  char deep[8192] = "";
  for (int i = 0; i < 100; i++) strcat(deep, "{\"op\":\"not\",\"children\":[");
  strcat(deep, U("isNull", C("a", "int")));
  for (int i = 0; i < 100; i++) strcat(deep, "]}");
  shq_pred *p = NULL;
  assert_int_equal(shq__pred_parse_json(&p, deep, strlen(deep)), DD_EINVAL);
}

/* shq__put_jstr: the escapes by name, every other byte as it is, appended after what the
 * buffer holds; every ASCII byte 1..127 reads back through jansson. */
static void test_put_jstr(void **state) {
  (void)state;
  shq_buf b = {0};
  dd_buf_puts(&b, "x=");
  shq__put_jstr(&b, "a\"b\\c\n\r\t\b\f\x01\x1f/\xc3\xbc", 15);
  assert_false(b.oom);
  assert_string_equal(b.p, "x=\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f/\xc3\xbc\"");
  b.len = 0;
  shq__put_jstr(&b, NULL, 0);
  assert_string_equal(b.p, "\"\"");
  char all[256];
  for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
  b.len = 0;
  shq__put_jstr(&b, all, 127); /* ASCII: valid UTF-8 */
  json_error_t e;
  json_t *v = json_loads(b.p, JSON_DECODE_ANY, &e);
  assert_non_null(v);
  assert_int_equal(json_string_length(v), 127);
  assert_memory_equal(json_string_value(v), all, 127);
  json_decref(v);
  for (size_t at = 0; at < 24; at++) { /* an escape at every offset of the 8-byte scan */
    char in[24], want[64];
    memset(in, 'a', sizeof in);
    in[at] = at % 2 ? '"' : '\x07';
    size_t w = 0;
    want[w++] = '"';
    for (size_t i = 0; i < sizeof in; i++) {
      if (i != at) want[w++] = 'a';
      else if (at % 2) w += (size_t)sprintf(want + w, "\\\"");
      else w += (size_t)sprintf(want + w, "\\u0007");
    }
    want[w++] = '"';
    want[w] = 0;
    b.len = 0;
    shq__put_jstr(&b, in, sizeof in);
    assert_string_equal(b.p, want);
  }
  /* dense and mixed: escapes next to each other and to bytes >= 0x80, at every length up
   * to 40, against a byte-at-a-time reference (a fixed pseudo-random sequence) */
  static const char pick[] = {'"', '\\', '\n', '\x01', '\x1f', ' ', 'a', '\x7f', '\x80', '\xa2', '\xdc', '\xff'};
  uint32_t seed = 12345;
  for (int round = 0; round < 2000; round++) {
    char in[40], want[6 * 40 + 3];
    size_t n = (size_t)round % 41, w = 0;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      in[i] = pick[(seed >> 16) % sizeof pick];
    }
    want[w++] = '"';
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)in[i];
      if (c == '"' || c == '\\') w += (size_t)sprintf(want + w, "\\%c", c);
      else if (c == '\n') w += (size_t)sprintf(want + w, "\\n");
      else if (c < 0x20) w += (size_t)sprintf(want + w, "\\u%04x", c);
      else want[w++] = (char)c;
    }
    want[w++] = '"';
    want[w] = 0;
    b.len = 0;
    shq__put_jstr(&b, in, n);
    assert_string_equal(b.p, want);
  }
  dd_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_put_jstr),
      cmocka_unit_test(test_query_body),
      cmocka_unit_test(test_timestamps),
      cmocka_unit_test(test_tokens),
      cmocka_unit_test(test_pred_eval),
      cmocka_unit_test(test_pred_parse_rejects),
      cmocka_unit_test(test_stats_lookup),
      cmocka_unit_test(test_pred_eval_stats_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
