/* deltactl_tableops.c: the `deltactl table` group: its help, its dispatch, and every verb
 * but files/changes (deltactl_table.c), scan and optimize. Each verb builds a delta.connect
 * message and either streams it through DeltaConnectService (the default, --server from
 * the global flags) or runs the same store/deltaops operation in-process (--local); either
 * way the result (columns + rows, a dop_result) goes to the one printer
 * (deltactl_tablecall.c, deltactl_table_print.c). On a terminal, long local work shows a
 * progress line on stderr. Exit codes: 0 success, 1 the operation failed, 2 usage, 3 local
 * failure. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "store/deltaops/dop.h"

#define CMD_METHOD DCTL_TBL_CMD_METHOD
#define REL_METHOD DCTL_TBL_REL_METHOD

/* ======================= verbs ======================= */

typedef struct common {
  int local, dry_run, allow_short, deep, replace, truncate;
  const char *retain, *version, *timestamp, *reader, *writer, *mode, *comment, *schema, *limit;
  dctl_strv props, cols, parts, clusters;
} common;

/* A table as the user named it: a path (made absolute) or a catalog name. */
typedef struct target {
  char *path;       /* the absolute path, or the name itself */
  bool is_name;     /* catalog.schema.table: the server resolves it */
} target;

/* The table being worked on (main sets it): mk_table sends a catalog name as
 * table_or_view_name, a path as path. */
static target cur;

static Delta__Connect__DeltaTable *mk_table(Delta__Connect__DeltaTable *t, Delta__Connect__DeltaTable__Path *p,
                                            const char *path, Delta__Connect__DeltaTable__Path__HadoopConfEntry **conf,
                                            size_t nconf) {
  delta__connect__delta_table__init(t);
  delta__connect__delta_table__path__init(p);
  if (cur.is_name && path == cur.path && !nconf) {
    t->access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_TABLE_OR_VIEW_NAME;
    t->table_or_view_name = (char *)path;
    return t;
  }
  t->access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH;
  t->path = p;
  p->path = (char *)path;
  p->n_hadoop_conf = nconf;
  p->hadoop_conf = conf;
  return t;
}

static bool parse_i64(const char *s, int64_t *v) {
  char *end;
  if (!s || !*s) return false;
  *v = strtoll(s, &end, 10);
  return !*end;
}

static const char USAGE[] =
    "usage: deltactl [GLOBAL FLAGS] table VERB TABLE [ARGS...] [--local]\n"
    "TABLE is a path or a catalog name (catalog.schema.table, resolved by the server); NAME is\n"
    "a catalog name only. Maintenance verbs run on the server (--server, DeltaConnectService;\n"
    "it works only under registered storage locations) unless --local runs them in this\n"
    "process; both print the same. The catalog verbs (register ... dropped) call TablesService.\n"
    "verbs:\n"
    "  register      a catalog table: register NAME LOCATION (EXTERNAL), or register NAME\n"
    "                --managed --column N:TYPE... (MANAGED, under the schema's storage root)\n"
    "  get           a catalog table with its Delta schema and version: get NAME\n"
    "  list          the catalog tables of a schema: list CATALOG.SCHEMA [--all]\n"
    "  drop          drop NAME (EXTERNAL: deregistered; MANAGED: undrop within the retention)\n"
    "  undrop        undrop NAME [--id ID]\n"
    "  dropped       dropped MANAGED tables: dropped CATALOG.SCHEMA\n"
    "  history       commits, newest first: history TABLE [--limit N]\n"
    "  detail        one row about the table: detail TABLE [--version N | --timestamp TS] (--local)\n"
    "  files         active files: files TABLE [--version N | --timestamp TS] (always in this process)\n"
    "  changes       files added/removed: changes TABLE --from V [--to V] (always in this process)\n"
    "  scan          rows: scan TABLE [--where EXPR] [--columns a,b] [--limit N] (see scan --help)\n"
    "  vacuum        delete unreferenced files: vacuum TABLE [--retain HOURS] [--dry-run]\n"
    "                [--allow-short-retention]; prints the files and bytes deleted\n"
    "  restore       restore TABLE (--version N | --timestamp TS)\n"
    "  clone         clone SOURCE TARGET [--version N | --timestamp TS] [--deep] [--replace]\n"
    "                [--property K=V]...\n"
    "  optimize      compact files: optimize TABLE [--where EXPR] [--zorder-by C1,C2]\n"
    "                [--target-size BYTES] (see optimize --help)\n"
    "  upgrade       upgrade TABLE --reader N --writer N\n"
    "  add-feature   add-feature TABLE FEATURE\n"
    "  drop-feature  drop-feature TABLE FEATURE [--truncate-history]\n"
    "  generate      generate TABLE [--mode symlink_format_manifest]\n"
    "  create        create PATH --column NAME:TYPE[:not null]... [--partition COL]...\n"
    "                [--cluster COL]... [--property K=V]... [--comment TEXT]\n"
    "                [--mode create|if-not-exists|replace|create-or-replace]\n"
    "  delete        delete TABLE [--where EXPR] (see delete --help)\n"
    "  update        update TABLE --set COL=EXPR... [--where EXPR] (DML); without --set,\n"
    "                update NAME [--new-name N] [--comment C] [--owner O] [--property K=V]...\n"
    "  merge         merge TABLE --source SRC --on EXPR CLAUSE... (see merge --help)\n"
    "  convert       convert PATH [--partition-schema 'a INT, b STRING']\n"
    "  is-delta      is-delta PATH: true or false\n"
    "options of every verb:\n"
    "  --local             run in this process instead of on the server\n"
    "  --output FORMAT     table, json (one object, an array for history), jsonl or csv\n"
    "  --help              this text\n";

static const char *const VERBS[] = {"vacuum", "restore", "clone", "upgrade", "add-feature", "drop-feature",
                                    "generate", "create", "convert", "is-delta", "history", "detail", NULL};

bool dctl_tableops_has_verb(const char *verb) {
  for (int i = 0; VERBS[i]; i++)
    if (!strcmp(VERBS[i], verb)) return true;
  return false;
}

static int parse_common(common *c, int argc, char **argv, const char **pos, int *npos) {
  dctl_opt opts[] = {
      {"--local", 0, NULL, &c->local, NULL},          {"--dry-run", 0, NULL, &c->dry_run, NULL},
      {"--allow-short-retention", 0, NULL, &c->allow_short, NULL},
      {"--deep", 0, NULL, &c->deep, NULL},            {"--replace", 0, NULL, &c->replace, NULL},
      {"--truncate-history", 0, NULL, &c->truncate, NULL},
      {"--retain", 1, &c->retain, NULL, NULL},        {"--version", 1, &c->version, NULL, NULL},
      {"--timestamp", 1, &c->timestamp, NULL, NULL},  {"--reader", 1, &c->reader, NULL, NULL},
      {"--writer", 1, &c->writer, NULL, NULL},        {"--mode", 1, &c->mode, NULL, NULL},
      {"--comment", 1, &c->comment, NULL, NULL},      {"--partition-schema", 1, &c->schema, NULL, NULL},
      {"--limit", 1, &c->limit, NULL, NULL},
      {"--property", 1, NULL, NULL, &c->props},       {"--column", 1, NULL, NULL, &c->cols},
      {"--partition", 1, NULL, NULL, &c->parts},      {"--cluster", 1, NULL, NULL, &c->clusters},
      {NULL, 0, NULL, NULL, NULL},
  };
  dctl_cmd cmd = {USAGE, opts, 1, 3};
  return dctl_parse(&cmd, argc, argv, pos, npos);
}

/* Splits the K=V list into two arrays (pointers into a copy kept in *hold). */
static int split_props(const dctl_strv *kv, const char **k, const char **v, char **hold) {
  for (size_t i = 0; i < kv->n; i++) {
    hold[i] = strdup(kv->v[i]);
    char *eq = hold[i] ? strchr(hold[i], '=') : NULL;
    if (!eq) return dctl_usage_error(USAGE, "--property wants KEY=VALUE, not '%s'", kv->v[i]);
    *eq = '\0';
    k[i] = hold[i];
    v[i] = eq + 1;
  }
  return DCTL_CONTINUE;
}

/* ---- per-verb: local and remote ---- */

/* ---- vacuum: what it did ---- */

static const dop_col VACUUM_DONE_COLS[] = {
    {"path", "string", false}, {"numDeletedFiles", "bigint", false}, {"numDeletedBytes", "bigint", false}};

/* A metric of a history row's operationMetrics (a JSON object of strings); -1 when absent. */
static int64_t metric(const dop_result *h, size_t row, const char *name) {
  for (size_t j = 0; j < h->ncols; j++) {
    const dop_cell *c = dop_result_cell(h, row, j);
    if (strcmp(h->cols[j].name, "operationMetrics") || c->kind != DOP_JSON || !c->str) continue;
    json_t *m = json_loads(c->str, 0, NULL);
    json_t *v = json_object_get(m, name);
    int64_t n = json_is_string(v) ? strtoll(json_string_value(v), NULL, 10) : json_is_integer(v) ? json_integer_value(v) : -1;
    json_decref(m);
    return n;
  }
  return -1;
}

static const char *row_str(const dop_result *h, size_t row, const char *col) {
  for (size_t j = 0; j < h->ncols; j++)
    if (!strcmp(h->cols[j].name, col)) return dop_result_cell(h, row, j)->str;
  return NULL;
}

/* After a vacuum: the two newest commits are its VACUUM END and VACUUM START; prints the
 * files and bytes they record. */
static int vacuum_done(common *c, const char *path) {
  dop_result *h = NULL;
  dctl_tbl_stream s = {0};
  int code;
  if (c->local) {
    code = dctl_tbl_local_error(dop_history(&h, path, 2));
  } else {
    Delta__Connect__DeltaTable t;
    Delta__Connect__DeltaTable__Path p;
    Delta__Connect__DescribeHistory dh = DELTA__CONNECT__DESCRIBE_HISTORY__INIT;
    dh.table = mk_table(&t, &p, path, NULL, 0);
    Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DESCRIBE_HISTORY;
    rel.describe_history = &dh;
    code = dctl_tbl_fetch(REL_METHOD, &rel.base, &s);
    h = &s.r;
  }
  if (code) goto cleanup;
  const char *end = h->nrows > 0 ? row_str(h, 0, "operation") : NULL;
  const char *start = h->nrows > 1 ? row_str(h, 1, "operation") : NULL;
  if (!end || !start || strcmp(end, "VACUUM END") || strcmp(start, "VACUUM START")) {
    code = dctl_fail(DCTL_EXIT_SERVER, "vacuum finished, but its VACUUM START/END commits are not the newest");
    goto cleanup;
  }
  int64_t files = metric(h, 0, "numDeletedFiles"), bytes = metric(h, 1, "sizeOfDataToDelete");
  if (dctl_globals_get()->output == DCTL_OUT_TABLE) {
    printf("vacuum: deleted %lld files (%lld bytes) from %s\n", (long long)files, (long long)bytes, path);
  } else {
    dop_cell cells[3] = {{DOP_STR, 0, 0, (char *)path}, {DOP_I64, files, 0, NULL}, {DOP_I64, bytes, 0, NULL}};
    dop_result r = {3, VACUUM_DONE_COLS, 1, cells, 3};
    code = dctl_tbl_print(&r, false, 0);
  }
cleanup:
  if (c->local) dop_result_free(h);
  else dctl_tbl_stream_free(&s);
  return code;
}

/* A dry run: the files it would delete (also when none). */
static int vacuum_would(dop_result *r, const char *path) {
  if (dctl_globals_get()->output != DCTL_OUT_TABLE) return dctl_tbl_print(r, true, 0);
  printf("vacuum --dry-run: would delete %zu file%s from %s%s\n", r->nrows, r->nrows == 1 ? "" : "s", path,
         r->nrows ? ":" : "");
  for (size_t i = 0; i < r->nrows; i++) printf("  %s\n", dop_result_cell(r, i, 0)->str);
  return 0;
}

static int verb_vacuum(common *c, const char *path) {
  double hours = 0;
  if (c->retain) {
    char *end;
    hours = strtod(c->retain, &end);
    if (*end || end == c->retain) return dctl_usage_error(USAGE, "--retain wants hours, not '%s'", c->retain);
  }
  int code;
  if (c->local) {
    dop_result *r = NULL;
    dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
    o.has_retention = c->retain != NULL;
    o.retention_hours = hours;
    o.retention_check = !c->allow_short;
    o.dry_run = c->dry_run;
    if (isatty(2)) o.progress = dctl_tbl_progress;
    code = dctl_tbl_local_error(dop_vacuum(&r, path, &o, NULL));
    if (!code && c->dry_run) code = vacuum_would(r, path);
    dop_result_free(r);
    return code || c->dry_run ? code : vacuum_done(c, path);
  }
  Delta__Connect__DeltaTable t;
  Delta__Connect__DeltaTable__Path p;
  Delta__Connect__DeltaTable__Path__HadoopConfEntry e[2], *ep[2];
  size_t n = 0;
  if (c->allow_short) {
    delta__connect__delta_table__path__hadoop_conf_entry__init(&e[n]);
    e[n].key = "spark.databricks.delta.retentionDurationCheck.enabled";
    e[n].value = "false";
    ep[n] = &e[n], n++;
  }
  if (c->dry_run) {
    delta__connect__delta_table__path__hadoop_conf_entry__init(&e[n]);
    e[n].key = "deltad.vacuum.dryRun";
    e[n].value = "true";
    ep[n] = &e[n], n++;
  }
  Delta__Connect__VacuumTable v = DELTA__CONNECT__VACUUM_TABLE__INIT;
  v.table = mk_table(&t, &p, path, ep, n);
  if (c->retain) v._retention_hours_case = DELTA__CONNECT__VACUUM_TABLE___RETENTION_HOURS_RETENTION_HOURS, v.retention_hours = hours;
  Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
  cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE;
  cmd.vacuum_table = &v;
  dctl_tbl_stream s = {0};
  code = dctl_tbl_fetch(CMD_METHOD, &cmd.base, &s);
  if (!code && c->dry_run) code = vacuum_would(&s.r, path);
  dctl_tbl_stream_free(&s);
  return code || c->dry_run ? code : vacuum_done(c, path);
}

static int verb_restore(common *c, const char *path) {
  int64_t version = -1;
  if (!c->version == !c->timestamp) return dctl_usage_error(USAGE, "restore needs one of --version or --timestamp");
  if (c->version && (!parse_i64(c->version, &version) || version < 0))
    return dctl_usage_error(USAGE, "--version wants a number >= 0");
  if (c->local) {
    dop_result *r = NULL;
    return dctl_tbl_finish_local(dop_restore(&r, path, version, c->timestamp), &r, false, 0);
  }
  Delta__Connect__DeltaTable t;
  Delta__Connect__DeltaTable__Path p;
  Delta__Connect__RestoreTable rt = DELTA__CONNECT__RESTORE_TABLE__INIT;
  rt.table = mk_table(&t, &p, path, NULL, 0);
  if (c->version) rt.version_or_timestamp_case = DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_VERSION, rt.version = version;
  else rt.version_or_timestamp_case = DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_TIMESTAMP, rt.timestamp = (char *)c->timestamp;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_RESTORE_TABLE;
  rel.restore_table = &rt;
  return dctl_tbl_remote(REL_METHOD, &rel.base, false, 0);
}

static int verb_clone(common *c, const char *src, const char *dst) {
  int64_t version = -1;
  if (c->version && c->timestamp) return dctl_usage_error(USAGE, "give --version or --timestamp, not both");
  if (c->version && (!parse_i64(c->version, &version) || version < 0 || version > INT32_MAX))
    return dctl_usage_error(USAGE, "--version wants a number >= 0");
  const char *k[DCTL_LIST_MAX], *v[DCTL_LIST_MAX];
  char *hold[DCTL_LIST_MAX] = {0};
  int code = split_props(&c->props, k, v, hold);
  if (code == DCTL_CONTINUE && c->local) {
    dop_result *r = NULL;
    dop_clone_opts o = DOP_CLONE_OPTS_INIT;
    o.target = dst;
    o.version = version;
    o.timestamp = c->timestamp;
    o.shallow = !c->deep;
    o.replace = c->replace;
    o.num_properties = c->props.n;
    o.property_keys = k;
    o.property_values = v;
    if (isatty(2)) o.progress = dctl_tbl_progress;
    code = dctl_tbl_finish_local(dop_clone(&r, src, &o), &r, false, 0);
  } else if (code == DCTL_CONTINUE) {
    Delta__Connect__DeltaTable t;
    Delta__Connect__DeltaTable__Path p;
    Delta__Connect__CloneTable ct = DELTA__CONNECT__CLONE_TABLE__INIT;
    Delta__Connect__CloneTable__PropertiesEntry e[DCTL_LIST_MAX], *ep[DCTL_LIST_MAX];
    for (size_t i = 0; i < c->props.n; i++) {
      delta__connect__clone_table__properties_entry__init(&e[i]);
      e[i].key = (char *)k[i];
      e[i].value = (char *)v[i];
      ep[i] = &e[i];
    }
    ct.table = mk_table(&t, &p, src, NULL, 0);
    ct.target = (char *)dst;
    ct.is_shallow = !c->deep;
    ct.replace = c->replace;
    ct.n_properties = c->props.n;
    ct.properties = ep;
    if (c->version) ct.version_or_timestamp_case = DELTA__CONNECT__CLONE_TABLE__VERSION_OR_TIMESTAMP_VERSION, ct.version = (int32_t)version;
    if (c->timestamp) ct.version_or_timestamp_case = DELTA__CONNECT__CLONE_TABLE__VERSION_OR_TIMESTAMP_TIMESTAMP, ct.timestamp = (char *)c->timestamp;
    Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CLONE_TABLE;
    cmd.clone_table = &ct;
    code = dctl_tbl_remote(CMD_METHOD, &cmd.base, false, 0);
  }
  for (size_t i = 0; i < c->props.n; i++) free(hold[i]);
  return code;
}

static int verb_simple_cmd(common *c, const char *verb, const char *path, const char *arg) {
  Delta__Connect__DeltaTable t;
  Delta__Connect__DeltaTable__Path p;
  Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
  Delta__Connect__UpgradeTableProtocol up = DELTA__CONNECT__UPGRADE_TABLE_PROTOCOL__INIT;
  Delta__Connect__AddFeatureSupport af = DELTA__CONNECT__ADD_FEATURE_SUPPORT__INIT;
  Delta__Connect__DropFeatureSupport df = DELTA__CONNECT__DROP_FEATURE_SUPPORT__INIT;
  Delta__Connect__Generate g = DELTA__CONNECT__GENERATE__INIT;
  dop_result *r = NULL;
  mk_table(&t, &p, path, NULL, 0);
  if (!strcmp(verb, "upgrade")) {
    int64_t rv, wv;
    if (!parse_i64(c->reader, &rv) || !parse_i64(c->writer, &wv))
      return dctl_usage_error(USAGE, "upgrade needs --reader N and --writer N");
    dctl_tbl_done("upgraded %s to reader version %lld, writer version %lld", path,
             (long long)rv, (long long)wv);
    if (c->local) return dctl_tbl_finish_local(dop_upgrade_protocol(&r, path, (int)rv, (int)wv), &r, false, 0);
    up.table = &t, up.reader_version = (int32_t)rv, up.writer_version = (int32_t)wv;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_UPGRADE_TABLE_PROTOCOL;
    cmd.upgrade_table_protocol = &up;
  } else if (!strcmp(verb, "add-feature")) {
    if (!arg) return dctl_usage_error(USAGE, "add-feature needs PATH FEATURE");
    dctl_tbl_done("added feature %s to %s", arg, path);
    if (c->local) return dctl_tbl_finish_local(dop_add_feature(&r, path, arg), &r, false, 0);
    af.table = &t, af.feature_name = (char *)arg;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_ADD_FEATURE_SUPPORT;
    cmd.add_feature_support = &af;
  } else if (!strcmp(verb, "drop-feature")) {
    if (!arg) return dctl_usage_error(USAGE, "drop-feature needs PATH FEATURE");
    dctl_tbl_done("dropped feature %s from %s", arg, path);
    if (c->local) return dctl_tbl_finish_local(dop_drop_feature(&r, path, arg, c->truncate), &r, false, 0);
    df.table = &t, df.feature_name = (char *)arg;
    if (c->truncate) df._truncate_history_case = DELTA__CONNECT__DROP_FEATURE_SUPPORT___TRUNCATE_HISTORY_TRUNCATE_HISTORY, df.truncate_history = 1;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_DROP_FEATURE_SUPPORT;
    cmd.drop_feature_support = &df;
  } else { /* generate */
    const char *mode = c->mode ? c->mode : "symlink_format_manifest";
    dctl_tbl_done("generated %s for %s", mode, path);
    if (c->local) return dctl_tbl_finish_local(dop_generate(&r, path, mode), &r, false, 0);
    g.table = &t, g.mode = (char *)mode;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_GENERATE;
    cmd.generate = &g;
  }
  return dctl_tbl_remote(CMD_METHOD, &cmd.base, false, 0);
}

/* detail reads a past snapshot (--version, --timestamp) in this process only: DescribeDetail
 * has no version. */
static int check_detail(const common *c, int64_t *version) {
  *version = -1;
  if (c->version && c->timestamp) return dctl_usage_error(USAGE, "give --version or --timestamp, not both");
  if (c->version && (!parse_i64(c->version, version) || *version < 0))
    return dctl_usage_error(USAGE, "--version wants a number >= 0");
  if (!c->local && (c->version || c->timestamp))
    return dctl_usage_error(USAGE, "detail --version and --timestamp need --local");
  return DCTL_CONTINUE;
}

static int verb_describe(common *c, const char *verb, const char *path) {
  dop_result *r = NULL;
  int64_t limit = 0, version = -1;
  if (c->limit && (!parse_i64(c->limit, &limit) || limit < 0)) return dctl_usage_error(USAGE, "--limit wants a number");
  if (!strcmp(verb, "detail")) {
    int code = check_detail(c, &version);
    if (code != DCTL_CONTINUE) return code;
  }
  if (c->local) {
    if (!strcmp(verb, "history")) return dctl_tbl_finish_local(dop_history(&r, path, (size_t)limit), &r, true, 0);
    if (!strcmp(verb, "detail")) return dctl_tbl_finish_local(dop_detail_at(&r, path, version, c->timestamp), &r, false, 0);
    if (!strcmp(verb, "is-delta")) return dctl_tbl_finish_local(dop_is_delta(&r, path), &r, false, 0);
    return dctl_tbl_finish_local(dop_convert(&r, path, c->schema, isatty(2) ? dctl_tbl_progress : NULL, NULL), &r, false, 0);
  }
  Delta__Connect__DeltaTable t;
  Delta__Connect__DeltaTable__Path p;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  Delta__Connect__DescribeHistory h = DELTA__CONNECT__DESCRIBE_HISTORY__INIT;
  Delta__Connect__DescribeDetail d = DELTA__CONNECT__DESCRIBE_DETAIL__INIT;
  Delta__Connect__IsDeltaTable isd = DELTA__CONNECT__IS_DELTA_TABLE__INIT;
  Delta__Connect__ConvertToDelta cv = DELTA__CONNECT__CONVERT_TO_DELTA__INIT;
  mk_table(&t, &p, path, NULL, 0);
  if (!strcmp(verb, "history")) {
    h.table = &t;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DESCRIBE_HISTORY;
    rel.describe_history = &h;
  } else if (!strcmp(verb, "detail")) {
    d.table = &t;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DESCRIBE_DETAIL;
    rel.describe_detail = &d;
  } else if (!strcmp(verb, "is-delta")) {
    isd.path = (char *)path;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_IS_DELTA_TABLE;
    rel.is_delta_table = &isd;
  } else {
    cv.identifier = (char *)path;
    if (c->schema) cv.partition_schema_case = DELTA__CONNECT__CONVERT_TO_DELTA__PARTITION_SCHEMA_PARTITION_SCHEMA_STRING, cv.partition_schema_string = (char *)c->schema;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_CONVERT_TO_DELTA;
    rel.convert_to_delta = &cv;
  }
  /* DescribeHistory has no limit: the newest --limit rows of its answer are printed. */
  if (!strcmp(verb, "history")) return dctl_tbl_remote(REL_METHOD, &rel.base, true, (size_t)limit);
  return dctl_tbl_remote(REL_METHOD, &rel.base, false, 0);
}

static int create_mode(const char *m) {
  if (!m || !strcmp(m, "create")) return DOP_CREATE;
  if (!strcmp(m, "if-not-exists")) return DOP_CREATE_IF_NOT_EXISTS;
  if (!strcmp(m, "replace")) return DOP_REPLACE;
  if (!strcmp(m, "create-or-replace")) return DOP_CREATE_OR_REPLACE;
  return 0;
}

static int verb_create(common *c, const char *path) {
  int mode = create_mode(c->mode);
  if (!mode) return dctl_usage_error(USAGE, "--mode must be create, if-not-exists, replace or create-or-replace");
  if (!c->cols.n) return dctl_usage_error(USAGE, "create needs at least one --column NAME:TYPE");
  static const char *const did[] = {"", "created table", "created table (unless one existed)", "replaced table",
                                     "created or replaced table"};
  dctl_tbl_done("%s %s (%zu column%s)", did[mode >= 1 && mode <= 4 ? mode : 1], path,
           c->cols.n, c->cols.n == 1 ? "" : "s");
  dop_column cols[DCTL_LIST_MAX];
  char *hold[DCTL_LIST_MAX] = {0}, *khold[DCTL_LIST_MAX] = {0};
  const char *k[DCTL_LIST_MAX], *v[DCTL_LIST_MAX];
  int code = split_props(&c->props, k, v, khold);
  for (size_t i = 0; code == DCTL_CONTINUE && i < c->cols.n; i++) {
    hold[i] = strdup(c->cols.v[i]);
    char *colon = hold[i] ? strchr(hold[i], ':') : NULL;
    if (!colon) { code = dctl_usage_error(USAGE, "--column wants NAME:TYPE, not '%s'", c->cols.v[i]); break; }
    *colon = '\0';
    char *type = colon + 1, *nn = strstr(type, ":not null");
    if (nn) *nn = '\0';
    cols[i] = (dop_column){.name = hold[i], .type = type, .nullable = nn == NULL};
  }
  if (code == DCTL_CONTINUE && c->local) {
    dop_result *r = NULL;
    dop_create_opts o = {.mode = (dop_create_mode)mode, .location = path, .comment = c->comment,
                         .num_columns = c->cols.n, .columns = cols, .num_partition_columns = c->parts.n,
                         .partition_columns = c->parts.v, .num_clustering_columns = c->clusters.n,
                         .clustering_columns = c->clusters.v, .num_properties = c->props.n,
                         .property_keys = k, .property_values = v};
    code = dctl_tbl_finish_local(dop_create(&r, &o), &r, false, 0);
  } else if (code == DCTL_CONTINUE) {
    Delta__Connect__CreateDeltaTable ct = DELTA__CONNECT__CREATE_DELTA_TABLE__INIT;
    Delta__Connect__CreateDeltaTable__Column pc[DCTL_LIST_MAX], *pcp[DCTL_LIST_MAX];
    Spark__Connect__DataType dt[DCTL_LIST_MAX];
    Spark__Connect__DataType__Unparsed un[DCTL_LIST_MAX];
    Delta__Connect__CreateDeltaTable__PropertiesEntry e[DCTL_LIST_MAX], *ep[DCTL_LIST_MAX];
    for (size_t i = 0; i < c->cols.n; i++) {
      delta__connect__create_delta_table__column__init(&pc[i]);
      spark__connect__data_type__init(&dt[i]);
      spark__connect__data_type__unparsed__init(&un[i]);
      un[i].data_type_string = (char *)cols[i].type;
      dt[i].kind_case = SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED;
      dt[i].unparsed = &un[i];
      pc[i].name = (char *)cols[i].name;
      pc[i].data_type = &dt[i];
      pc[i].nullable = cols[i].nullable;
      pcp[i] = &pc[i];
    }
    for (size_t i = 0; i < c->props.n; i++) {
      delta__connect__create_delta_table__properties_entry__init(&e[i]);
      e[i].key = (char *)k[i];
      e[i].value = (char *)v[i];
      ep[i] = &e[i];
    }
    ct.mode = (Delta__Connect__CreateDeltaTable__Mode)mode;
    ct._location_case = DELTA__CONNECT__CREATE_DELTA_TABLE___LOCATION_LOCATION;
    ct.location = (char *)path;
    if (c->comment) ct._comment_case = DELTA__CONNECT__CREATE_DELTA_TABLE___COMMENT_COMMENT, ct.comment = (char *)c->comment;
    ct.n_columns = c->cols.n;
    ct.columns = pcp;
    ct.n_partitioning_columns = c->parts.n;
    ct.partitioning_columns = (char **)c->parts.v;
    ct.n_clustering_columns = c->clusters.n;
    ct.clustering_columns = (char **)c->clusters.v;
    ct.n_properties = c->props.n;
    ct.properties = ep;
    Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CREATE_DELTA_TABLE;
    cmd.create_delta_table = &ct;
    code = dctl_tbl_remote(CMD_METHOD, &cmd.base, false, 0);
  }
  for (size_t i = 0; i < DCTL_LIST_MAX; i++) free(hold[i]), free(khold[i]);
  return code;
}

/* cur for pos: a catalog name stays one for the server; --local (and vacuum's options,
 * which travel with a path) look its location up first. */
static int set_target(const common *c, const char *verb, const char *pos) {
  cur.is_name = dctl_tbl_is_catalog_name(pos);
  bool by_path = c->local || (!strcmp(verb, "vacuum") && (c->dry_run || c->allow_short)) ||
                 !strcmp(verb, "is-delta") || !strcmp(verb, "convert");
  if (cur.is_name && by_path) {
    cur.is_name = false;
    return dctl_tbl_catalog_location(pos, &cur.path);
  }
  cur.path = cur.is_name ? strdup(pos) : dctl_tbl_abs_path(pos);
  return cur.path ? 0 : dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
}

static void usage_to(FILE *f) { fputs(USAGE, f); }

int dctl_tableops_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    if (argc < 2) fputs("deltactl: table: missing verb\n", stderr);
    usage_to(argc < 2 ? stderr : stdout);
    return argc < 2 ? DCTL_EXIT_USAGE : 0;
  }
  const char *verb = argv[1];
  if (!dctl_tableops_has_verb(verb)) return dctl_usage_error(USAGE, "unknown table verb '%s'", verb);
  common c;
  memset(&c, 0, sizeof c);
  const char *pos[3] = {0};
  int npos = 0;
  int code = parse_common(&c, argc - 1, argv + 1, pos, &npos);
  if (code != DCTL_CONTINUE) return code;
  if ((code = set_target(&c, verb, pos[0])) != 0) return code;
  char *path = cur.path, *second = NULL;
  if (!strcmp(verb, "vacuum")) code = verb_vacuum(&c, path);
  else if (!strcmp(verb, "restore")) code = verb_restore(&c, path);
  else if (!strcmp(verb, "clone")) {
    if (npos < 2) code = dctl_usage_error(USAGE, "clone needs SOURCE and TARGET");
    else if (!(second = dctl_tbl_abs_path(pos[1]))) code = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    else code = verb_clone(&c, path, second);
  } else if (!strcmp(verb, "create")) code = verb_create(&c, path);
  else if (!strcmp(verb, "upgrade") || !strcmp(verb, "add-feature") || !strcmp(verb, "drop-feature") ||
           !strcmp(verb, "generate"))
    code = verb_simple_cmd(&c, verb, path, npos > 1 ? pos[1] : NULL);
  else code = verb_describe(&c, verb, path);
  free(path);
  free(second);
  return code;
}

/* Dispatch of `table`: one line a verb family; every other verb (and --help) is here. */
int dctl_tableops_dispatch(int argc, char **argv) {
  if (argc >= 2 && dctl_tablereg_has_verb(argv[1], argc, argv)) return dctl_tablereg_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "optimize")) return dctl_optimize_main(argc, argv);
  if (argc >= 2 && (!strcmp(argv[1], "delete") || !strcmp(argv[1], "update"))) return dctl_dml_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "merge")) return dctl_merge_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "scan")) return dctl_scan_main(argc, argv);
  if (argc >= 2 && (!strcmp(argv[1], "files") || !strcmp(argv[1], "changes"))) return dctl_table_main(argc, argv);
  return dctl_tableops_main(argc, argv);
}
