/* deltactl_table.c: `deltactl table files|changes TABLE ...`: parses the arguments, reads
 * the Delta log in this process (DeltaConnectService has no call for a table's files or
 * its change feed, so these two always read the table directly; a catalog name is
 * resolved through the server first) and hands the result to the printers of
 * deltactl_table_print.c. Errors go to stderr with the engine's message. (Every other
 * table verb is in deltactl_tableops.c.) */
#include "cmd/deltactl_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: deltactl table files TABLE [--version V | --timestamp TS]\n"
          "       deltactl table changes TABLE --from V [--to V]\n"
          "  files     active files (path, size, partition values, deleted rows)\n"
          "  changes   the files added and removed between --from and --to (default latest)\n"
          "TABLE is a path or a catalog name (catalog.schema.table). Both read the table's log in\n"
          "this process (the server has no call for them); --local is accepted and changes nothing.\n"
          "options:\n"
          "  --version V         read version V (files)\n"
          "  --timestamp TS      read the version current at TS (epoch ms or ISO-8601; files)\n"
          "  --from V --to V     version range for changes (--to defaults to latest)\n"
          "  --local             (accepted: these verbs always run in this process)\n"
          "  --output FORMAT     table, json, jsonl or csv\n"
          "  --help              this text; 'deltactl table --help' lists every table verb\n");
}

typedef struct args {
  const char *verb, *path, *timestamp;
  int64_t version, from, to;
  bool local;
} args;

static bool parse_i64(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || v < 0) return false;
  *out = v;
  return true;
}

/* Returns -1 to continue, else an exit code. */
static int parse_args(int argc, char **argv, args *a) {
  *a = (args){.version = -1, .from = -1, .to = -1};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--local")) {
      a->local = true;
    } else if (!strcmp(o, "--version") || !strcmp(o, "--from") || !strcmp(o, "--to")) {
      int64_t *dst = o[2] == 'v' ? &a->version : (o[2] == 'f' ? &a->from : &a->to);
      if (!val || !parse_i64(val, dst)) {
        fprintf(stderr, "deltactl table: %s needs a version number\n", o);
        return 2;
      }
      i++;
    } else if (!strcmp(o, "--timestamp")) {
      if (!val) {
        fprintf(stderr, "deltactl table: --timestamp needs a value\n");
        return 2;
      }
      a->timestamp = argv[++i];
    } else if (o[0] == '-') {
      fprintf(stderr, "deltactl table: unknown option %s\n", o);
      return 2;
    } else if (!a->verb) {
      a->verb = o;
    } else if (!a->path) {
      a->path = o;
    } else {
      fprintf(stderr, "deltactl table: unexpected argument %s\n", o);
      return 2;
    }
  }
  if (!a->verb) {
    usage(stderr);
    return 2;
  }
  if (strcmp(a->verb, "files") && strcmp(a->verb, "changes")) {
    fprintf(stderr, "deltactl table: unknown verb %s\n", a->verb);
    usage(stderr);
    return 2;
  }
  if (!a->path) {
    fprintf(stderr, "deltactl table %s: missing TABLE (a path or catalog.schema.table)\n", a->verb);
    return 2;
  }
  if (a->from < 0 && !strcmp(a->verb, "changes")) {
    fprintf(stderr, "deltactl table changes: needs --from V\n");
    return 2;
  }
  if (a->version >= 0 && a->timestamp) {
    fprintf(stderr, "deltactl table: --version and --timestamp are exclusive\n");
    return 2;
  }
  return -1;
}

static int run(const args *a) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  bool json = false;
  char *loc = NULL;
  int code = dctl_table_location(a->path, &loc);
  if (code) return code;
  int rc = dl_table_open(&t, loc);
  if (rc) goto cleanup;
  if (!strcmp(a->verb, "changes")) {
    rc = dctl_print_changes(t, a->from, a->to, json);
  } else {
    dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
    o.version = a->version;
    if (a->timestamp) rc = dl_parse_timestamp(a->timestamp, &o.timestamp_ms);
    if (!rc) rc = dl_snapshot_open(&s, t, &o);
    if (!rc) rc = dctl_print_files(s, json);
  }
cleanup:
  if (rc) fprintf(stderr, "deltactl table %s: %s: %s\n", a->verb, dd_err_name(rc), dd_err_msg());
  dl_snapshot_free(s);
  dl_table_free(t);
  free(loc);
  return rc ? 1 : 0;
}

int dctl_table_main(int argc, char **argv) {
  args a;
  int code = parse_args(argc, argv, &a);
  return code >= 0 ? code : run(&a);
}
