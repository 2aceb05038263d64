/* test_dml_identity.c: the values store/dml hands out to identity columns (dml_identity.c):
 * start + k * step beyond the high water mark, on the lattice, in the step's direction,
 * the end of BIGINT; and through dml_write: rows without a value numbered, the commit's
 * metaData carrying the new delta.identity.highWaterMark, an explicit value refused for
 * GENERATED ALWAYS and kept (the mark left alone) for BY DEFAULT, and two writers handing
 * out values at once: the second to commit is a conflict (DD_ECONFLICT), nothing of it
 * committed. The writes are judged against Spark in tests/integration/dwrite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store/dml/dml.h"
#include "store/dml/dml_int.h"
#include "store/scan/scn.h"

/* ---- dml__ident_take: the lattice ---- */

static dml__idcol col(int64_t start, int64_t step, bool has_hwm, int64_t hwm) {
  char md[256];
  snprintf(md, sizeof md, "{\"delta.identity.start\":%lld,\"delta.identity.step\":%lld%s%lld%s}",
           (long long)start, (long long)step, has_hwm ? ",\"delta.identity.highWaterMark\":" : ",\"x\":",
           (long long)hwm, ",\"delta.identity.allowExplicitInsert\":false");
  /* parsed the way a table's field is: through a one-column snapshot schema */
  char schema[512];
  snprintf(schema, sizeof schema, "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\","
           "\"nullable\":true,\"metadata\":%s}]}", md);
  char tmpl[] = "/tmp/dml_ident_XXXXXX";
  char *dir = mkdtemp(tmpl);
  dl_table *t;
  assert_int_equal(dl_table_open(&t, dir), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  dl_protocol p = {1, 6, 0, 0, NULL, NULL};
  dl_metadata_spec m = {NULL, NULL, NULL, schema, 0, NULL, NULL, -1};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  assert_int_equal(dl_txn_set_metadata(x, &m), 0);
  dl_snapshot *s;
  assert_int_equal(dl_txn_pending_snapshot(&s, x), 0);
  arw_schema *as;
  assert_int_equal(arw_schema_new(&as), 0);
  assert_int_equal(scn_arrow_schema(as, dl_schema_root(dl_snapshot_schema(s)), NULL, 0), 0);
  dml__ident id;
  assert_int_equal(dml__ident_init(&id, s, as), 0);
  assert_int_equal(id.n, 1);
  dml__idcol c = id.c[0];
  c.name = NULL; /* the copy outlives id */
  dml__ident_free(&id);
  arw_schema_free(as);
  dl_snapshot_free(s);
  dl_txn_free(x);
  dl_table_free(t);
  rmdir(dir);
  return c;
}

static void take(dml__idcol *c, const int64_t *want, size_t n) {
  int64_t got[8];
  assert_int_equal(dml__ident_take(c, got, n), 0);
  for (size_t i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
}

static void test_lattice(void **state) {
  (void)state;
  dml__idcol c = col(10, 1, false, 0); /* no mark: start */
  take(&c, (int64_t[]){10, 11, 12}, 3);
  assert_int_equal(c.last, 12);
  assert_int_equal(c.issued, 3);
  c = col(10, -3, false, 0);
  take(&c, (int64_t[]){10, 7, 4}, 3);
  assert_int_equal(c.last, 4);
  c = col(10, 1, true, 14); /* beyond the mark */
  take(&c, (int64_t[]){15, 16}, 2);
  c = col(10, -3, true, 4);
  take(&c, (int64_t[]){1, -2}, 2);
  c = col(10, 5, true, 17); /* a mark off the lattice: the next lattice value */
  take(&c, (int64_t[]){20, 25}, 2);
  c = col(10, -5, true, 3);
  take(&c, (int64_t[]){0, -5}, 2);
  c = col(10, 2, true, 3); /* a mark before start: start */
  take(&c, (int64_t[]){10, 12}, 2);
  c = col(10, -2, true, 30);
  take(&c, (int64_t[]){10, 8}, 2);
  assert_int_equal(c.issued, 2);
}

static void test_end_of_bigint(void **state) {
  (void)state;
  dml__idcol c = col(INT64_MAX - 1, 1, false, 0);
  int64_t v[3];
  assert_int_equal(dml__ident_take(&c, v, 2), 0);
  assert_true(v[0] == INT64_MAX - 1 && v[1] == INT64_MAX);
  assert_int_equal(dml__ident_take(&c, v, 1), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "long overflow"));
  c = col(INT64_MIN + 2, -2, true, INT64_MIN); /* nothing left beyond the mark */
  assert_int_equal(dml__ident_take(&c, v, 1), DD_EINVAL);
  c = col(0, INT64_MAX, true, 0);
  assert_int_equal(dml__ident_take(&c, v, 1), 0);
  assert_true(v[0] == INT64_MAX);
}

/* ---- dml_write on a table (id BIGINT identity, v STRING) ---- */

typedef struct src {
  arw_schema *s;
  arw_batch *b;
  bool sent;
  void (*before)(void); /* run before the batch is handed over (the racing writer) */
} src;

static int next(void *ctx, const arw_batch **out) {
  src *c = ctx;
  if (c->before) c->before(), c->before = NULL;
  *out = c->sent ? NULL : c->b;
  c->sent = true;
  return 0;
}

static char g_dir[64];

static void make(const char *ident_md) {
  char tmpl[] = "/tmp/dml_identw_XXXXXX";
  snprintf(g_dir, sizeof g_dir, "%s", mkdtemp(tmpl));
  char schema[512];
  snprintf(schema, sizeof schema, "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\","
           "\"nullable\":true,\"metadata\":%s},{\"name\":\"v\",\"type\":\"string\",\"nullable\":true,"
           "\"metadata\":{}}]}", ident_md);
  dl_table *t;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  dl_protocol p = {1, 6, 0, 0, NULL, NULL};
  dl_metadata_spec m = {NULL, NULL, NULL, schema, 0, NULL, NULL, -1};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  assert_int_equal(dl_txn_set_metadata(x, &m), 0);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  int64_t v;
  assert_int_equal(dl_txn_commit(x, &co, &v), 0);
  dl_txn_free(x);
  dl_table_free(t);
}

static void drop(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  assert_int_equal(system(cmd), 0);
}

/* A source of n rows: v "r<i>", with an id column (ids[i]) when ids is given. */
static void source(src *c, size_t n, const int64_t *ids) {
  memset(c, 0, sizeof *c);
  int vid, iid;
  assert_int_equal(arw_schema_new(&c->s), 0);
  if (ids) arw_schema_add(c->s, ARW_ROOT, "id", ARW_INT64, true, &iid);
  arw_schema_add(c->s, ARW_ROOT, "v", ARW_UTF8, true, &vid);
  assert_int_equal(arw_batch_new(&c->b, c->s), 0);
  for (size_t i = 0; i < n; i++) {
    char txt[16];
    int k = snprintf(txt, sizeof txt, "r%zu", i);
    if (ids) arw_append_i64(c->b, iid, ids[i]);
    arw_append_str(c->b, vid, txt, (size_t)k);
  }
}

static void source_free(src *c) {
  arw_batch_free(c->b);
  arw_schema_free(c->s);
}

static int append(src *c, int64_t *version) {
  dl_table *t;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  dml_write_opts o = DML_WRITE_OPTS_INIT;
  o.source_schema = c->s;
  o.next = next;
  o.ctx = c;
  o.by_name = true;
  o.max_retries = 3;
  dml_write_result r;
  int rc = dml_write(&r, t, &o);
  if (version) *version = r.version;
  dl_table_free(t);
  return rc;
}

/* The table's latest version and its id column's metadata key (-1 when absent). */
static int64_t mark(int64_t *version) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  if (version) *version = dl_snapshot_version(s);
  const dl_field *f = dl_schema_field(dl_snapshot_schema(s), "id");
  json_t *m = json_loads(f->metadata_json, 0, NULL);
  json_t *h = json_object_get(m, "delta.identity.highWaterMark");
  int64_t out = h ? json_integer_value(h) : -1;
  json_decref(m);
  dl_snapshot_free(s);
  dl_table_free(t);
  return out;
}

/* The ids of the table's rows, sorted, into v (returns how many). */
static size_t ids(int64_t *v, size_t cap) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  scn_scan *sc;
  scn_opts so = SCN_OPTS_INIT;
  assert_int_equal(scn_open(&sc, t, s, &so), 0);
  size_t n = 0;
  for (;;) {
    const arw_batch *b = NULL;
    assert_int_equal(scn_next(sc, &b), 0);
    if (!b) break;
    arw_view w;
    assert_int_equal(arw_batch_view(b, arw_schema_find(arw_batch_schema(b), ARW_ROOT, "id"), &w), 0);
    for (size_t i = 0; i < w.length && n < cap; i++) v[n++] = ((const int64_t *)w.values)[i];
  }
  scn_free(sc);
  dl_snapshot_free(s);
  dl_table_free(t);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int64_t x = v[j];
      v[j] = v[j - 1], v[j - 1] = x;
    }
  return n;
}

#define ALWAYS "{\"delta.identity.start\":10,\"delta.identity.step\":-3,\"delta.identity.allowExplicitInsert\":false}"
#define BY_DEFAULT "{\"delta.identity.start\":10,\"delta.identity.step\":1,\"delta.identity.allowExplicitInsert\":true}"

static void test_write_numbers_rows(void **state) {
  (void)state;
  make(ALWAYS);
  src c;
  source(&c, 3, NULL);
  assert_int_equal(append(&c, NULL), 0);
  source_free(&c);
  assert_int_equal(mark(NULL), 4);
  source(&c, 2, NULL);
  assert_int_equal(append(&c, NULL), 0);
  source_free(&c);
  assert_int_equal(mark(NULL), -2);
  int64_t v[16];
  assert_int_equal(ids(v, 16), 5);
  const int64_t want[] = {-2, 1, 4, 7, 10};
  for (size_t i = 0; i < 5; i++) assert_int_equal(v[i], want[i]);
  /* explicit values: GENERATED ALWAYS refuses them, nothing committed */
  int64_t before, after;
  mark(&before);
  source(&c, 1, (int64_t[]){100});
  assert_int_equal(append(&c, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED"));
  source_free(&c);
  mark(&after);
  assert_int_equal(before, after);
  drop();
}

static void test_write_explicit_by_default(void **state) {
  (void)state;
  make(BY_DEFAULT);
  src c;
  source(&c, 2, (int64_t[]){100, 5});
  assert_int_equal(append(&c, NULL), 0);
  source_free(&c);
  assert_int_equal(mark(NULL), -1); /* explicit values leave the mark alone (as Delta 4.4) */
  source(&c, 2, NULL);
  assert_int_equal(append(&c, NULL), 0);
  source_free(&c);
  assert_int_equal(mark(NULL), 11);
  int64_t v[8];
  assert_int_equal(ids(v, 8), 4);
  const int64_t want[] = {5, 10, 11, 100};
  for (size_t i = 0; i < 4; i++) assert_int_equal(v[i], want[i]);
  drop();
}

/* Writer A reads the table, then writer B hands out values and commits before A does: A's
 * commit meets B's metaData change and fails (DD_ECONFLICT); the table holds B's rows. */
static void race_b(void) {
  src b;
  source(&b, 2, NULL);
  assert_int_equal(append(&b, NULL), 0);
  source_free(&b);
}

static void test_concurrent_writers_conflict(void **state) {
  (void)state;
  make(ALWAYS);
  src a;
  source(&a, 3, NULL);
  a.before = race_b;
  assert_int_equal(append(&a, NULL), DD_ECONFLICT);
  source_free(&a);
  int64_t version;
  assert_int_equal(mark(&version), 7);
  assert_int_equal(version, 1);
  int64_t v[8];
  assert_int_equal(ids(v, 8), 2);
  assert_true(v[0] == 7 && v[1] == 10);
  drop();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lattice),
      cmocka_unit_test(test_end_of_bigint),
      cmocka_unit_test(test_write_numbers_rows),
      cmocka_unit_test(test_write_explicit_by_default),
      cmocka_unit_test(test_concurrent_writers_conflict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
