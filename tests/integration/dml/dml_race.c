/* dml_race.c: a DELETE or UPDATE that loses or wins a race, for test_dml.py. Opens the
 * latest snapshot of TABLE, prints "ready", waits for a line on stdin (the test commits
 * something concurrently meanwhile), then runs the operation on the old snapshot and
 * prints "ok VERSION AFFECTED" or "error STATUS MESSAGE".
 *
 * usage: dml_race TABLE delete WHERE | dml_race TABLE update WHERE COL EXPR |
 *        dml_race TABLE merge KEY   (MERGE INTO t USING (SELECT KEY AS x) s ON t.x = s.x
 *                                    WHEN MATCHED THEN UPDATE SET y = 'merged') |
 *        dml_race TABLE append N    (a DataFrame append of N rows v = 'race<i>', the other
 *                                    columns left to the table: an identity column numbers
 *                                    them; "ready" once the write has read the table) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/dml/dml.h"

/* The MERGE of one source row x = key. */
static int merge(dl_table *t, dl_snapshot *s, int key, int64_t *version, int64_t *affected) {
  arw_schema *sc = NULL;
  arw_batch *b = NULL;
  ex_node *on = NULL, *v = NULL;
  int id = 0;
  dml_merge_result res;
  int rc = arw_schema_new(&sc);
  if (!rc) rc = arw_schema_add(sc, ARW_ROOT, "x", ARW_INT32, true, &id);
  if (!rc) rc = arw_batch_new(&b, sc);
  if (!rc) rc = arw_append_i32(b, id, key);
  if (!rc) rc = ex_parse(&on, "t.x = s.x", 9, NULL);
  if (!rc) rc = ex_parse(&v, "'merged'", 8, NULL);
  if (!rc) {
    dml_assignment as = {"y", v};
    dml_merge_clause cl = {DML_MERGE_MATCHED, DML_MERGE_UPDATE, NULL, &as, 1};
    const arw_batch *src[1] = {b};
    dml_merge_opts o = DML_MERGE_OPTS_INIT;
    o.source_schema = sc, o.source = src, o.num_source = 1;
    o.target_alias = "t", o.source_alias = "s", o.on = on;
    o.clauses = &cl, o.num_clauses = 1;
    rc = dml_merge(&res, t, s, &o);
  }
  if (!rc) *version = res.version, *affected = res.matched_updated;
  ex_free(on);
  ex_free(v);
  arw_batch_free(b);
  arw_schema_free(sc);
  return rc;
}

/* The append's source: "ready", a line on stdin, then its one batch. */
typedef struct race_src {
  const arw_batch *b;
  int calls;
} race_src;

static int race_next(void *ctx, const arw_batch **out) {
  race_src *r = ctx;
  char line[64];
  *out = NULL;
  if (r->calls++) return 0;
  printf("ready\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin)) return dd_err_set(DD_EINVAL, "dml_race: no go line");
  *out = r->b;
  return 0;
}

static int append(const char *path, int n) {
  dl_table *t = NULL;
  arw_schema *sc = NULL;
  arw_batch *b = NULL;
  dml_write_result res;
  int id = 0;
  int rc = dl_table_open(&t, path);
  if (!rc) rc = arw_schema_new(&sc);
  if (!rc) rc = arw_schema_add(sc, ARW_ROOT, "v", ARW_UTF8, true, &id);
  if (!rc) rc = arw_batch_new(&b, sc);
  for (int i = 0; i < n && !rc; i++) {
    char v[32];
    int k = snprintf(v, sizeof v, "race%d", i);
    rc = arw_append_str(b, id, v, (size_t)k);
  }
  if (!rc) {
    race_src r = {b, 0};
    dml_write_opts o = DML_WRITE_OPTS_INIT;
    o.source_schema = sc, o.next = race_next, o.ctx = &r, o.by_name = true;
    rc = dml_write(&res, t, &o);
  }
  if (rc) printf("error %s %s\n", dd_err_name(rc), dd_err_msg());
  else printf("ok %lld %lld\n", (long long)res.version, (long long)res.num_rows);
  arw_batch_free(b);
  arw_schema_free(sc);
  dl_table_free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[2], "append")) return append(argv[1], atoi(argv[3]));
  if (argc == 4 && !strcmp(argv[2], "merge")) {
    dl_table *t = NULL;
    dl_snapshot *s = NULL;
    int64_t version = -1, affected = 0;
    char line[64];
    int rc = dl_table_open(&t, argv[1]);
    if (!rc) rc = dl_snapshot_open(&s, t, NULL);
    if (!rc) {
      printf("ready\n");
      fflush(stdout);
      if (!fgets(line, sizeof line, stdin)) return 2;
      rc = merge(t, s, atoi(argv[3]), &version, &affected);
    }
    if (rc) printf("error %s %s\n", dd_err_name(rc), dd_err_msg());
    else printf("ok %lld %lld\n", (long long)version, (long long)affected);
    dl_snapshot_free(s);
    dl_table_free(t);
    return 0;
  }
  if (argc < 4 || (strcmp(argv[2], "delete") && (strcmp(argv[2], "update") || argc < 6))) {
    fprintf(stderr, "usage: dml_race TABLE delete WHERE | dml_race TABLE update WHERE COL EXPR\n");
    return 2;
  }
  bool update = !strcmp(argv[2], "update");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  ex_node *v = NULL;
  dml_result res;
  int rc = dl_table_open(&t, argv[1]);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc && update) rc = ex_parse(&v, argv[5], strlen(argv[5]), NULL);
  if (!rc) {
    char line[64];
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin)) return 2;
    dml_assignment as = {argv[4], v};
    dml_opts o = DML_OPTS_INIT;
    o.predicate_sql = argv[3];
    o.assignments = &as;
    o.num_assignments = update;
    rc = update ? dml_update(&res, t, s, &o) : dml_delete(&res, t, s, &o);
  }
  if (rc) printf("error %s %s\n", dd_err_name(rc), dd_err_msg());
  else printf("ok %lld %lld\n", (long long)res.version, (long long)res.num_affected_rows);
  ex_free(v);
  dl_snapshot_free(s);
  dl_table_free(t);
  return 0;
}
