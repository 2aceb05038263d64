/* dml_race.c: a DELETE or UPDATE that loses or wins a race, for test_dml.py. Opens the
 * latest snapshot of TABLE, prints "ready", waits for a line on stdin (the test commits
 * something concurrently meanwhile), then runs the operation on the old snapshot and
 * prints "ok VERSION AFFECTED" or "error STATUS MESSAGE".
 *
 * usage: dml_race TABLE delete WHERE | dml_race TABLE update WHERE COL EXPR */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "store/dml/dml.h"

int main(int argc, char **argv) {
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
