/* expr_skip_judge.c: the store/expr side of integration.expr_skip_spark. For a Delta table
 * and predicates (one per line on stdin) it prints one JSON line per predicate:
 * {"kept": [paths], "skipped": [paths]} by ex_skipper over the table's real stats, or
 * {"error": "..."}.  Usage: expr_skip_judge TABLE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/expr/ex.h"
#include "store/scan/scn.h"

typedef struct lists {
  ex_skipper *sk;
  char *kept, *skipped;
  size_t nk, ns;
} lists;

static void add(char **buf, size_t *n, const char *path) {
  size_t l = strlen(path);
  *buf = realloc(*buf, *n + l + 8);
  *n += (size_t)sprintf(*buf + *n, "%s\"%s\"", *n ? ", " : "", path);
}

static int on_file(void *ctx, const dl_file *f) {
  lists *l = ctx;
  if (ex_skipper_keep(l->sk, f)) add(&l->kept, &l->nk, f->path);
  else add(&l->skipped, &l->ns, f->path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: expr_skip_judge TABLE_DIR\n");
    return 2;
  }
  dl_table *t;
  dl_snapshot *snap;
  arw_schema *s;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  if (dl_table_open(&t, argv[1]) || dl_snapshot_open(&snap, t, &o) || arw_schema_new(&s) ||
      scn_arrow_schema(s, dl_schema_root(dl_snapshot_schema(snap)), NULL, 0)) {
    fprintf(stderr, "%s\n", dd_err_msg());
    return 1;
  }
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = '\0';
    ex_node *e = NULL, *b = NULL;
    lists l = {0};
    if (ex_parse(&e, line, strlen(line), NULL) || ex_bind(&b, e, s, NULL) ||
        ex_skipper_new(&l.sk, b, snap) || dl_snapshot_files(snap, on_file, &l)) {
      printf("{\"error\": \"");
      for (const char *m = dd_err_msg(); *m; m++) putchar(*m == '"' || *m == '\\' ? '\'' : *m);
      printf("\"}\n");
    } else {
      printf("{\"kept\": [%s], \"skipped\": [%s]}\n", l.kept ? l.kept : "", l.skipped ? l.skipped : "");
    }
    fflush(stdout);
    ex_skipper_free(l.sk);
    free(l.kept);
    free(l.skipped);
    ex_free(b);
    ex_free(e);
  }
  arw_schema_free(s);
  dl_snapshot_free(snap);
  dl_table_free(t);
  return 0;
}
