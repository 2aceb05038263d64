/* deltactl_table.c: `deltactl table files|history|changes PATH --local ...`: parses the
 * arguments, runs the Delta engine in-process and hands the result to the printers of
 * deltactl_table_print.c. Errors go to stderr with the engine's message. (detail and the
 * maintenance verbs, which also run on a server, are in deltactl_tableops.c.) */
#include "cmd/deltactl_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: deltactl table VERB PATH [options]\n"
          "verbs read in this process (--local):\n"
          "  files     active files (path, size, partition values, deleted rows)\n"
          "  history   commits, newest first\n"
          "  changes   change data feed between --from and --to\n"
          "options:\n"
          "  --version V         read version V (files)\n"
          "  --timestamp TS      read the version current at TS (epoch ms or ISO-8601; files)\n"
          "  --from V --to V     version range for changes (--to defaults to latest)\n"
          "  --local             run the engine in this process (required for these verbs)\n"
          "  --output json|table output format (default table)\n"
          "  --help              this text\n"
          "detail, history and the maintenance verbs (server or --local): deltactl table detail --help\n");
}

typedef struct args {
  const char *verb, *path, *output, *timestamp;
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
  *a = (args){.version = -1, .from = -1, .to = -1, .output = "table"};
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
    } else if (!strcmp(o, "--output")) {
      if (!val || (strcmp(val, "json") != 0 && strcmp(val, "table") != 0)) {
        fprintf(stderr, "deltactl table: --output takes json or table\n");
        return 2;
      }
      a->output = argv[++i];
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
  if (strcmp(a->verb, "files") && strcmp(a->verb, "history") && strcmp(a->verb, "changes")) {
    fprintf(stderr, "deltactl table: unknown verb %s\n", a->verb);
    usage(stderr);
    return 2;
  }
  if (!a->path) {
    fprintf(stderr, "deltactl table %s: missing PATH\n", a->verb);
    return 2;
  }
  if (a->version >= 0 && a->timestamp) {
    fprintf(stderr, "deltactl table: --version and --timestamp are exclusive\n");
    return 2;
  }
  if (!a->local) {
    if (!strcmp(a->verb, "history"))
      fprintf(stderr, "deltactl table history: no server named (--server or $DELTAD_SERVER), so "
                      "server mode is not available; use --local\n");
    else
      fprintf(stderr, "deltactl table %s: runs in this process only; use --local\n", a->verb);
    return 2;
  }
  return -1;
}

static int run(const args *a) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  bool json = !strcmp(a->output, "json");
  int rc = dl_table_open(&t, a->path);
  if (rc) goto cleanup;
  if (!strcmp(a->verb, "history")) {
    rc = dctl_print_history(t, json);
  } else if (!strcmp(a->verb, "changes")) {
    rc = a->from < 0 ? dd_err_set(DD_EINVAL, "changes needs --from") : 0;
    if (!rc) rc = dctl_print_changes(t, a->from, a->to, json);
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
  return rc ? 1 : 0;
}

int dctl_table_main(int argc, char **argv) {
  args a;
  int code = parse_args(argc, argv, &a);
  return code >= 0 ? code : run(&a);
}
