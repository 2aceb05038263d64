/* deltactl.c: the deltad command-line client. Parses the global flags, then dispatches the
 * first word to a command group; each group lives in its own deltactl_<group>.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "cmd/version.h"
#include "common/mem.h"

static const char dctl__usage[] =
    "usage: deltactl [GLOBAL FLAGS] GROUP VERB [ARGS...]\n"
    "       deltactl help [GROUP] | deltactl --version\n"
    "groups:\n"
    "  catalog      catalogs: list, create, get, update, delete\n"
    "  schema       schemas inside a catalog: list, create, get, update, delete\n"
    "  credential   storage credentials: list, create, get, delete\n"
    "  location     storage locations: list, create, get, delete\n"
    "  audit        the audit log: list (changes, recipient reads)\n"
    "  admin        operations: backup\n"
    "  server       the server itself: info, ping\n"
    "  share        Delta Sharing shares, their schemas and tables\n"
    "  recipient    Delta Sharing recipients (create writes a profile file)\n"
    "  grant        grants of shares to recipients\n"
    "  table        Delta tables: read, describe and maintain (server, or --local)\n"
    "  completion   shell completion: 'deltactl completion bash|zsh'\n"
    "  help         this text, or 'deltactl help GROUP' for a group's verbs\n"
    "global flags (also accepted after the verb: --output):\n"
    "  --server HOST:PORT   gRPC endpoint (default $DELTAD_SERVER, else 127.0.0.1:50051)\n"
    "  --token T            bearer token (default --token-file, then $DELTAD_TOKEN,\n"
    "                       then ./data/admin.token when readable)\n"
    "  --token-file F       read the token from the first line of F\n"
    "  --output FORMAT, -o  table (aligned text, the default), json (one document),\n"
    "                       jsonl (one JSON object a line) or csv (a header, then rows)\n"
    "  --timeout SECONDS    deadline of each call (default 30)\n"
    "  --tls-ca-file F      TLS: the server's certificate must chain to the CA in F\n"
    "                       (default $DELTAD_TLS_CA_FILE; without either, plaintext)\n"
    "  --tls-cert-file F, --tls-key-file F  a client certificate (deltad's tls-client-auth)\n"
    "  --version            print deltactl's version\n"
    "  --help               this text; 'deltactl GROUP --help', 'deltactl GROUP VERB --help'\n"
    "output: JSON keys are the API's camelCase names; times are ISO 8601 (UTC) in text and\n"
    "JSON, except fields whose name ends in Ms (epoch milliseconds).\n"
    "exit status:\n"
    "  0  success\n"
    "  1  the call failed; stderr says 'deltactl: <GRPC STATUS>: <server message>'\n"
    "     (UNAVAILABLE or DEADLINE_EXCEEDED when the server cannot be reached)\n"
    "  2  usage error (bad flags or arguments, no token to send)\n"
    "  3  local failure (unreadable token file, output encoding, out of memory)\n";

typedef struct dctl__group {
  const char *name;
  int (*fn)(int argc, char **argv);
} dctl__group;

static const dctl__group dctl__groups[] = {
    {"catalog", dctl_catalog_main},       {"schema", dctl_schema_main},
    {"credential", dctl_credential_main}, {"location", dctl_location_main},
    {"server", dctl_server_main},         {"table", dctl_tableops_dispatch},
    {"share", dctl_share_main},           {"recipient", dctl_recipient_main},
    {"grant", dctl_grant_main},           {"completion", dctl_completion_main},
    {"audit", dctl_audit_main},           {"admin", dctl_admin_main},
    {NULL, NULL},
};

static int dctl__bad(const char *fmt, const char *arg) {
  fputs("deltactl: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nRun 'deltactl --help' for usage.\n", stderr);
  return DCTL_EXIT_USAGE;
}

/* Stores one global flag's value. Returns DCTL_CONTINUE or an exit code. */
static int dctl__set_global(dctl_globals *g, const char *name, const char *val) {
  if (strcmp(name, "--server") == 0) g->server = val;
  else if (strcmp(name, "--token") == 0) g->token = val;
  else if (strcmp(name, "--token-file") == 0) g->token_file = val;
  else if (strcmp(name, "--tls-ca-file") == 0) g->tls_ca_file = val;
  else if (strcmp(name, "--tls-cert-file") == 0) g->tls_cert_file = val;
  else if (strcmp(name, "--tls-key-file") == 0) g->tls_key_file = val;
  else if (strcmp(name, "--output") == 0 || strcmp(name, "-o") == 0) {
    if (dctl_output_parse(val, &g->output) != 0)
      return dctl__bad("--output must be table, json, jsonl or csv, not '%s'", val);
  } else if (strcmp(name, "--timeout") == 0) {
    char *end;
    double s = strtod(val, &end);
    if (*end || !(s > 0) || s > 86400.0 * 365) return dctl__bad("bad --timeout '%s'", val);
    g->timeout_ms = (int64_t)(s * 1000.0);
    if (g->timeout_ms < 1) g->timeout_ms = 1;
  } else {
    return dctl__bad("unknown global flag '%s'", name);
  }
  return DCTL_CONTINUE;
}

/* Parses the global flags; *out_group is the index of the group word in argv (0: none).
 * Returns DCTL_CONTINUE or an exit code. */
static int dctl__parse_globals(int argc, char **argv, int *out_group) {
  dctl_globals *g = dctl_globals_get();
  *out_group = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(dctl__usage, stdout);
      return 0;
    }
    if (strcmp(a, "--version") == 0) {
      printf("deltactl %s\n", DELTAD_VERSION);
      return 0;
    }
    if (a[0] != '-') {
      *out_group = i;
      return DCTL_CONTINUE;
    }
    char name[32];
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    if (len >= sizeof name) return dctl__bad("unknown global flag '%s'", a);
    memcpy(name, a, len);
    name[len] = '\0';
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (!val) return dctl__bad("global flag %s needs a value", name);
    int rc = dctl__set_global(g, name, val);
    if (rc != DCTL_CONTINUE) return rc;
  }
  return dctl__bad("%s", "missing GROUP");
}

/* Takes --output/-o given after the group word out of argv (up to a `--`), so every
 * command accepts it before the group or after the verb. `table scan` keeps its own
 * --output (its formats differ); the global one is handed to it when it has none.
 * Returns DCTL_CONTINUE or an exit code; *argc shrinks. */
static int dctl__take_output(int *argc, char **argv, int gi, int *out_seen) {
  dctl_globals *g = dctl_globals_get();
  int scan = gi + 1 < *argc && !strcmp(argv[gi], "table") && !strcmp(argv[gi + 1], "scan");
  int w = gi + 1, seen = 0;
  for (int r = gi + 1; r < *argc; r++) {
    const char *a = argv[r];
    if (!strcmp(a, "--")) {
      while (r < *argc) argv[w++] = argv[r++];
      break;
    }
    const char *val = NULL;
    int is_out = !strcmp(a, "--output") || !strcmp(a, "-o");
    if (is_out && r + 1 < *argc) val = argv[++r];
    else if (!strncmp(a, "--output=", 9)) val = a + 9, is_out = 1;
    if (!is_out || scan) {
      argv[w++] = is_out && scan ? "--output" : argv[r];
      if (is_out && scan && val) argv[w++] = (char *)val, seen = 1;
      continue;
    }
    if (!val) return dctl__bad("%s", "--output needs a value (table, json, jsonl or csv)");
    if (dctl_output_parse(val, &g->output) != 0)
      return dctl__bad("--output must be table, json, jsonl or csv, not '%s'", val);
  }
  *argc = w;
  argv[w] = NULL;
  *out_seen = seen;
  return DCTL_CONTINUE;
}

int main(int argc, char **argv) {
  dd_mem_tune();
  int gi;
  char *help_argv[] = {NULL, "--help", NULL};
  int rc = dctl__parse_globals(argc, argv, &gi);
  if (rc != DCTL_CONTINUE) return rc;
  if (!strcmp(argv[gi], "help")) {
    if (gi + 1 >= argc) {
      fputs(dctl__usage, stdout);
      return 0;
    }
    help_argv[0] = argv[gi + 1];
    argv = help_argv, argc = 2, gi = 0;
  }
  int seen = 0;
  rc = dctl__take_output(&argc, argv, gi, &seen);
  if (rc != DCTL_CONTINUE) return rc;
  char **scan_argv = NULL; /* `table scan` with only the global --output: handed on */
  dctl_output out = dctl_globals_get()->output;
  if (!seen && out != DCTL_OUT_TABLE && gi + 1 < argc && !strcmp(argv[gi], "table") &&
      !strcmp(argv[gi + 1], "scan")) {
    if (!(scan_argv = calloc((size_t)argc + 3, sizeof *scan_argv))) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    memcpy(scan_argv, argv, (size_t)argc * sizeof *argv);
    scan_argv[argc++] = "--output";
    scan_argv[argc++] = out == DCTL_OUT_CSV ? "csv" : "json";
    argv = scan_argv;
  }
  const dctl__group *grp = dctl__groups;
  while (grp->name && strcmp(grp->name, argv[gi]) != 0) grp++;
  if (!grp->name) {
    free(scan_argv);
    return dctl__bad("unknown group '%s'", argv[gi]);
  }
  rc = grp->fn(argc - gi, argv + gi);
  free(scan_argv);
  dctl_client_close();
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "deltactl: cannot write the output\n");
    if (rc == 0) rc = DCTL_EXIT_LOCAL;
  }
  return rc;
}
