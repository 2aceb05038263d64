/* deltactl_tableops.c: `deltactl table <maintenance verb>` and `table detail`. Each verb
 * builds a delta.connect message and either streams it through DeltaConnectService (the
 * default, --server from the global flags) or runs the same store/deltaops operation
 * in-process (--local); either way the result (columns + rows, a dop_result) goes to the one
 * printer, dctl_print_result (deltactl_table_print.c). On a terminal, long local work shows
 * a progress line on stderr. Exit codes: 0 success, 1 the operation failed, 2 usage, 3 local
 * failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "store/deltaops/dop.h"

#define CMD_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteCommand"
#define REL_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteRelation"

static void progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx;
  if (total) fprintf(stderr, "\r%s: %llu/%llu ", phase, (unsigned long long)done, (unsigned long long)total);
  else fprintf(stderr, "\r%s: %llu ", phase, (unsigned long long)done);
  fflush(stderr);
}

/* ======================= server results ======================= */

/* A dop_result built from the stream; its columns are owned (freed by stream_free). */
typedef struct stream_ctx {
  dop_result r;
  dop_col *cols;
} stream_ctx;

static int on_msg(void *ud, const ProtobufCMessage *msg) {
  stream_ctx *s = ud;
  const Deltad__Connect__V1__ExecuteResult *m = (const Deltad__Connect__V1__ExecuteResult *)msg;
  if (m->result_case == DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_SCHEMA) {
    s->cols = calloc(m->schema->n_columns + 1, sizeof *s->cols);
    if (!s->cols) return DD_ENOMEM;
    for (size_t i = 0; i < m->schema->n_columns; i++) {
      s->cols[i].name = strdup(m->schema->columns[i]->name);
      s->cols[i].type = strdup(m->schema->columns[i]->type);
    }
    s->r.cols = s->cols;
    s->r.ncols = m->schema->n_columns;
    return 0;
  }
  const Deltad__Connect__V1__ResultRow *row = m->row;
  if ((s->r.nrows + 1) * s->r.ncols > s->r.cap) {
    size_t cap = s->r.cap ? s->r.cap * 2 : 64 * (s->r.ncols + 1);
    dop_cell *n = realloc(s->r.cells, cap * sizeof *n);
    if (!n) return DD_ENOMEM;
    s->r.cells = n;
    s->r.cap = cap;
  }
  dop_cell *c = s->r.cells + s->r.nrows * s->r.ncols;
  memset(c, 0, s->r.ncols * sizeof *c);
  s->r.nrows++;
  for (size_t j = 0; j < s->r.ncols && j < row->n_values; j++) {
    const Deltad__Connect__V1__Value *v = row->values[j];
    switch (v->kind_case) {
      case DELTAD__CONNECT__V1__VALUE__KIND_BOOL_VALUE: c[j].kind = DOP_BOOL, c[j].i64 = v->bool_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_INT64_VALUE: c[j].kind = DOP_I64, c[j].i64 = v->int64_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_DOUBLE_VALUE: c[j].kind = DOP_F64, c[j].f64 = v->double_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_TIMESTAMP_MS: c[j].kind = DOP_TS_MS, c[j].i64 = v->timestamp_ms; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_STRING_VALUE: c[j].kind = DOP_STR, c[j].str = strdup(v->string_value); break;
      case DELTAD__CONNECT__V1__VALUE__KIND_JSON: c[j].kind = DOP_JSON, c[j].str = strdup(v->json); break;
      default: c[j].kind = DOP_NULL;
    }
  }
  return 0;
}

static void stream_free(stream_ctx *s) {
  for (size_t i = 0; i < s->r.nrows * s->r.ncols; i++) free(s->r.cells[i].str);
  free(s->r.cells);
  for (size_t i = 0; s->cols && i < s->r.ncols; i++) free((char *)s->cols[i].name), free((char *)s->cols[i].type);
  free(s->cols);
}

static int run_remote(const char *method, const ProtobufCMessage *req) {
  dd_client *c = NULL;
  int code = dctl_client_get(&c);
  if (code) return code;
  stream_ctx s = {0};
  int rc = dd_client_stream(c, method, req, &deltad__connect__v1__execute_result__descriptor, on_msg, &s);
  if (rc) code = dctl_report_call_error(c, rc);
  else if (dctl_print_result(&s.r, dctl_globals_get()->output == DCTL_OUT_JSON))
    code = dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  stream_free(&s);
  return code;
}

int dctl_tableops_remote(const char *method, const ProtobufCMessage *req) {
  return run_remote(method, req);
}

/* rp is read after rc was computed (the callee fills *rp). */
static int finish_local(int rc, dop_result **rp) {
  dop_result *r = *rp;
  if (isatty(2)) fputs("\r\033[K", stderr);
  if (rc) {
    fprintf(stderr, "deltactl: %s: %s\n", dd_err_name(rc), dd_err_msg());
    return DCTL_EXIT_SERVER;
  }
  int code = 0;
  if (dctl_print_result(r, dctl_globals_get()->output == DCTL_OUT_JSON))
    code = dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  dop_result_free(r);
  return code;
}

/* ======================= verbs ======================= */

typedef struct common {
  int local, dry_run, allow_short, deep, replace, truncate;
  const char *retain, *version, *timestamp, *reader, *writer, *mode, *comment, *schema, *limit;
  dctl_strv props, cols, parts, clusters;
} common;

char *dctl_abs_path(const char *p) {
  if (p[0] == '/' || strchr(p, '`') || !strncmp(p, "file:", 5)) return strdup(p);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return strdup(p);
  char *r = NULL;
  return asprintf(&r, "%s/%s", cwd, p) < 0 ? NULL : r;
}

static Delta__Connect__DeltaTable *mk_table(Delta__Connect__DeltaTable *t, Delta__Connect__DeltaTable__Path *p,
                                            const char *path, Delta__Connect__DeltaTable__Path__HadoopConfEntry **conf,
                                            size_t nconf) {
  delta__connect__delta_table__init(t);
  delta__connect__delta_table__path__init(p);
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
    "usage: deltactl table VERB [--local] ARGS...\n"
    "  vacuum PATH [--retain HOURS] [--dry-run] [--allow-short-retention]\n"
    "  restore PATH (--version N | --timestamp TS)\n"
    "  clone SOURCE TARGET [--version N | --timestamp TS] [--deep] [--replace] [--property K=V]...\n"
    "  upgrade PATH --reader N --writer N\n"
    "  add-feature PATH FEATURE\n"
    "  drop-feature PATH FEATURE [--truncate-history]\n"
    "  generate PATH [--mode symlink_format_manifest]\n"
    "  create PATH --column NAME:TYPE[:not null]... [--partition COL]... [--cluster COL]...\n"
    "         [--property K=V]... [--comment TEXT] [--mode create|if-not-exists|replace|create-or-replace]\n"
    "  convert PATH [--partition-schema 'a INT, b STRING']\n"
    "  is-delta PATH | history PATH [--limit N]\n"
    "  detail PATH [--version N | --timestamp TS (with --local)]\n"
    "  optimize PATH [--where EXPR] [--zorder-by C1,C2] [--target-size BYTES]\n"
    "--local runs in this process; otherwise the global --server is called (DeltaConnectService).\n"
    "Both print the same: one object a row with --output json, else text.\n";

static const char *const VERBS[] = {"vacuum", "restore", "clone", "upgrade", "add-feature", "drop-feature",
                                    "generate", "create", "convert", "is-delta", "history", "detail", NULL};

bool dctl_tableops_has_verb(const char *verb) {
  for (int i = 0; VERBS[i]; i++)
    if (!strcmp(VERBS[i], verb)) return true;
  return false;
}

static int parse_common(common *c, int argc, char **argv, const char **pos, int *npos) {
  const char *out = NULL;
  dctl_opt opts[] = {
      {"--local", 0, NULL, &c->local, NULL},          {"--dry-run", 0, NULL, &c->dry_run, NULL},
      {"--allow-short-retention", 0, NULL, &c->allow_short, NULL},
      {"--deep", 0, NULL, &c->deep, NULL},            {"--replace", 0, NULL, &c->replace, NULL},
      {"--truncate-history", 0, NULL, &c->truncate, NULL},
      {"--retain", 1, &c->retain, NULL, NULL},        {"--version", 1, &c->version, NULL, NULL},
      {"--timestamp", 1, &c->timestamp, NULL, NULL},  {"--reader", 1, &c->reader, NULL, NULL},
      {"--writer", 1, &c->writer, NULL, NULL},        {"--mode", 1, &c->mode, NULL, NULL},
      {"--comment", 1, &c->comment, NULL, NULL},      {"--partition-schema", 1, &c->schema, NULL, NULL},
      {"--limit", 1, &c->limit, NULL, NULL},          {"--output", 1, &out, NULL, NULL},
      {"--property", 1, NULL, NULL, &c->props},       {"--column", 1, NULL, NULL, &c->cols},
      {"--partition", 1, NULL, NULL, &c->parts},      {"--cluster", 1, NULL, NULL, &c->clusters},
      {NULL, 0, NULL, NULL, NULL},
  };
  dctl_cmd cmd = {USAGE, opts, 1, 3};
  int code = dctl_parse(&cmd, argc, argv, pos, npos);
  if (code != DCTL_CONTINUE) return code;
  if (out && !strcmp(out, "json")) dctl_globals_get()->output = DCTL_OUT_JSON;
  else if (out && strcmp(out, "table")) return dctl_usage_error(USAGE, "--output must be table or json");
  return DCTL_CONTINUE;
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

static int verb_vacuum(common *c, const char *path) {
  double hours = 0;
  if (c->retain) {
    char *end;
    hours = strtod(c->retain, &end);
    if (*end) return dctl_usage_error(USAGE, "--retain wants hours, not '%s'", c->retain);
  }
  if (c->local) {
    dop_result *r = NULL;
    dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
    o.has_retention = c->retain != NULL;
    o.retention_hours = hours;
    o.retention_check = !c->allow_short;
    o.dry_run = c->dry_run;
    if (isatty(2)) o.progress = progress;
    return finish_local(dop_vacuum(&r, path, &o, NULL), &r);
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
  return run_remote(CMD_METHOD, &cmd.base);
}

static int verb_restore(common *c, const char *path) {
  int64_t version = -1;
  if (!c->version == !c->timestamp) return dctl_usage_error(USAGE, "restore needs one of --version or --timestamp");
  if (c->version && (!parse_i64(c->version, &version) || version < 0))
    return dctl_usage_error(USAGE, "--version wants a number >= 0");
  if (c->local) {
    dop_result *r = NULL;
    return finish_local(dop_restore(&r, path, version, c->timestamp), &r);
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
  return run_remote(REL_METHOD, &rel.base);
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
    if (isatty(2)) o.progress = progress;
    code = finish_local(dop_clone(&r, src, &o), &r);
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
    code = run_remote(CMD_METHOD, &cmd.base);
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
    if (c->local) return finish_local(dop_upgrade_protocol(&r, path, (int)rv, (int)wv), &r);
    up.table = &t, up.reader_version = (int32_t)rv, up.writer_version = (int32_t)wv;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_UPGRADE_TABLE_PROTOCOL;
    cmd.upgrade_table_protocol = &up;
  } else if (!strcmp(verb, "add-feature")) {
    if (!arg) return dctl_usage_error(USAGE, "add-feature needs PATH FEATURE");
    if (c->local) return finish_local(dop_add_feature(&r, path, arg), &r);
    af.table = &t, af.feature_name = (char *)arg;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_ADD_FEATURE_SUPPORT;
    cmd.add_feature_support = &af;
  } else if (!strcmp(verb, "drop-feature")) {
    if (!arg) return dctl_usage_error(USAGE, "drop-feature needs PATH FEATURE");
    if (c->local) return finish_local(dop_drop_feature(&r, path, arg, c->truncate), &r);
    df.table = &t, df.feature_name = (char *)arg;
    if (c->truncate) df._truncate_history_case = DELTA__CONNECT__DROP_FEATURE_SUPPORT___TRUNCATE_HISTORY_TRUNCATE_HISTORY, df.truncate_history = 1;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_DROP_FEATURE_SUPPORT;
    cmd.drop_feature_support = &df;
  } else { /* generate */
    const char *mode = c->mode ? c->mode : "symlink_format_manifest";
    if (c->local) return finish_local(dop_generate(&r, path, mode), &r);
    g.table = &t, g.mode = (char *)mode;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_GENERATE;
    cmd.generate = &g;
  }
  return run_remote(CMD_METHOD, &cmd.base);
}

/* True when a server was named (--server or $DELTAD_SERVER). */
bool dctl_server_named(void) {
  const char *env = getenv("DELTAD_SERVER");
  return dctl_globals_get()->server || (env && *env);
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
  if (!c->local && !dctl_server_named())
    return dctl_usage_error(USAGE, "no server named (--server or $DELTAD_SERVER), so server mode is "
                                   "not available; use --local");
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
    if (!strcmp(verb, "history")) return finish_local(dop_history(&r, path, (size_t)limit), &r);
    if (!strcmp(verb, "detail")) return finish_local(dop_detail_at(&r, path, version, c->timestamp), &r);
    if (!strcmp(verb, "is-delta")) return finish_local(dop_is_delta(&r, path), &r);
    return finish_local(dop_convert(&r, path, c->schema, isatty(2) ? progress : NULL, NULL), &r);
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
  return run_remote(REL_METHOD, &rel.base);
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
    code = finish_local(dop_create(&r, &o), &r);
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
    code = run_remote(CMD_METHOD, &cmd.base);
  }
  for (size_t i = 0; i < DCTL_LIST_MAX; i++) free(hold[i]), free(khold[i]);
  return code;
}

int dctl_tableops_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(USAGE, argc < 2 ? stderr : stdout);
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
  char *path = dctl_abs_path(pos[0]), *second = NULL;
  if (!path) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  if (!strcmp(verb, "vacuum")) code = verb_vacuum(&c, path);
  else if (!strcmp(verb, "restore")) code = verb_restore(&c, path);
  else if (!strcmp(verb, "clone")) {
    if (npos < 2) code = dctl_usage_error(USAGE, "clone needs SOURCE and TARGET");
    else if (!(second = dctl_abs_path(pos[1]))) code = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
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

/* history has two: the engine's listing (deltactl_table.c) with --local or when no server
 * was named, DESCRIBE HISTORY on the server otherwise. */
static bool engine_verb(int argc, char **argv) {
  if (strcmp(argv[1], "history")) return false;
  bool local = false;
  for (int i = 2; i < argc; i++) local |= !strcmp(argv[i], "--local");
  return local || !dctl_server_named();
}

int dctl_tableops_dispatch(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "optimize")) return dctl_optimize_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "scan")) return dctl_scan_main(argc, argv);
  if (argc >= 2 && dctl_tableops_has_verb(argv[1]) && !engine_verb(argc, argv)) return dctl_tableops_main(argc, argv);
  return dctl_table_main(argc, argv);
}
