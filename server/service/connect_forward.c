/* connect_forward.c: the forwarder of connect_forward.h: the rules (which operations, what
 * table size), the plan to send (a Delta SQL statement, or a query's relation tree with its
 * table leaves read by location), the Spark session of each client session, the relay of
 * Spark's responses, and what was forwarded (a log line, deltad_spark_forwarded_total). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/metrics.h"
#include "server/call/call.h"
#include "server/call/req_guard.h"
#include "server/service/connect_forward.h"
#include "server/service/connect_session.h"
#include "server/service/connect_sql.h"
#include "store/delta/dl.h"

#define FWD_DELTA_RELATION_URL "delta.connect.DeltaRelation"
#define FWD_DELTA_COMMAND_URL "delta.connect.DeltaCommand"
#define FWD_DEFAULT_TIMEOUT_MS (3600LL * 1000)
#define FWD_MAX_DEPTH 256
#define SC_METHOD(m) "/spark.connect.SparkConnectService/" m
/* A query part the forwarder does not send (a non-Delta read, a Delta Connect relation
 * other than a scan): the whole query stays in deltad. Positive, unlike the DD_E* codes. */
#define FWD_KEEP_LOCAL 1

/* The operations, by bit (the order of the metric's samples). */
enum { FWD_OPTIMIZE, FWD_DELETE, FWD_UPDATE, FWD_MERGE, FWD_VACUUM, FWD_SCAN, FWD_NOPS };
static const char *const FWD_OP_NAMES[FWD_NOPS] = {"optimize", "delete", "update", "merge", "vacuum", "scan"};

typedef struct fwd_session {
  struct fwd_session *next;
  char *client_id;
  char spark_id[37];
} fwd_session;

/* The forwarder. on, target, endpoint, mask, min_bytes, timeout_ms and rpc are written once
 * by connect_forward_configure before calls arrive; mu guards sessions and counts. */
static struct {
  bool on;
  char target[310], endpoint[300];
  unsigned mask;
  int64_t min_bytes, timeout_ms;
  connect_fwd_rpc rpc;
  pthread_mutex_t mu;
  fwd_session *sessions;
  uint64_t counts[FWD_NOPS];
} fwd = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ======================= settings ======================= */

static int parse_ops(unsigned *mask, const char *ops) {
  *mask = 0;
  if (!ops || !*ops || !strcasecmp(ops, "all")) return *mask = (1u << FWD_NOPS) - 1, 0;
  for (const char *p = ops; *p;) {
    size_t n = strcspn(p, ",");
    int k = -1;
    for (int i = 0; i < FWD_NOPS; i++)
      if (strlen(FWD_OP_NAMES[i]) == n && !strncasecmp(p, FWD_OP_NAMES[i], n)) k = i;
    if (k < 0)
      return dd_err_set(DD_EINVAL, "spark-forward: unknown operation '%.*s' (optimize, delete, update, merge, "
                        "vacuum, scan or all)", (int)n, p);
    *mask |= 1u << k;
    p += n + (p[n] == ',');
  }
  return 0;
}

int connect_forward_configure(const connect_fwd_opts *o) {
  if (!o->target || !*o->target) return fwd.on = false, 0;
  const char *hp = o->target;
  if (!strncmp(hp, "sc://", 5)) hp += 5;
  size_t n = strcspn(hp, "/;?");
  if (!n || !memchr(hp, ':', n) || n >= sizeof fwd.endpoint || strlen(o->target) >= sizeof fwd.target)
    return dd_err_set(DD_EINVAL, "spark-connect: expected sc://host:port, got '%s'", o->target);
  if (hp[n] && strcmp(hp + n, "/"))
    return dd_err_set(DD_EINVAL, "spark-connect: parameters (token, use_ssl, ...) are not supported: '%s'", o->target);
  if (o->min_bytes < 0) return dd_err_set(DD_EINVAL, "spark-forward-min-bytes: must be 0 or more");
  if (!o->rpc.stream || !o->rpc.unary) return dd_err_set(DD_EINVAL, "spark-connect: no transport");
  int rc = parse_ops(&fwd.mask, o->ops);
  if (rc) return rc;
  memcpy(fwd.endpoint, hp, n);
  fwd.endpoint[n] = '\0';
  snprintf(fwd.target, sizeof fwd.target, "sc://%s", fwd.endpoint);
  fwd.min_bytes = o->min_bytes;
  fwd.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : FWD_DEFAULT_TIMEOUT_MS;
  fwd.rpc = o->rpc;
  fwd.on = true;
  return 0;
}

void connect_forward_shutdown(void) {
  pthread_mutex_lock(&fwd.mu);
  for (fwd_session *s = fwd.sessions, *next; s; s = next) next = s->next, free(s->client_id), free(s);
  fwd.sessions = NULL;
  pthread_mutex_unlock(&fwd.mu);
  fwd.on = false;
}

bool connect_forward_enabled(void) { return fwd.on; }

void connect_forward_metrics_write(dd_buf *b) {
  uint64_t n[FWD_NOPS];
  pthread_mutex_lock(&fwd.mu);
  memcpy(n, fwd.counts, sizeof n);
  pthread_mutex_unlock(&fwd.mu);
  dd_metrics_head(b, "deltad_spark_forwarded_total", "counter",
                  "Delta Connect plans forwarded to the Spark Connect server (--spark-connect), by operation.");
  for (int i = 0; i < FWD_NOPS; i++) {
    dd_buf l = {0};
    dd_metrics_label(&l, "op", FWD_OP_NAMES[i]);
    dd_metrics_sample_u64(b, "deltad_spark_forwarded_total", l.p, n[i]);
    dd_buf_free(&l);
  }
}

/* ======================= sessions ======================= */

/* The Spark session id of the client's session (made on first use). */
static int spark_session(char out[37], const char *client_id) {
  int rc = 0;
  pthread_mutex_lock(&fwd.mu);
  fwd_session *s = fwd.sessions;
  while (s && strcmp(s->client_id, client_id)) s = s->next;
  if (!s && (s = calloc(1, sizeof *s)) && (s->client_id = strdup(client_id))) {
    connect_uuid(s->spark_id);
    s->next = fwd.sessions;
    fwd.sessions = s;
  } else if (!s || !s->client_id) {
    free(s), s = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (s) memcpy(out, s->spark_id, 37);
  pthread_mutex_unlock(&fwd.mu);
  return rc;
}

static Spark__Connect__UserContext fwd_user(void) {
  Spark__Connect__UserContext u = SPARK__CONNECT__USER_CONTEXT__INIT;
  u.user_id = (char *)"deltad";
  u.user_name = (char *)"deltad";
  return u;
}

void connect_forward_release(const char *session_id) {
  if (!fwd.on || !session_id) return;
  fwd_session *found = NULL;
  pthread_mutex_lock(&fwd.mu);
  for (fwd_session **p = &fwd.sessions; *p; p = &(*p)->next)
    if (!strcmp((*p)->client_id, session_id)) {
      found = *p, *p = found->next;
      break;
    }
  pthread_mutex_unlock(&fwd.mu);
  if (!found) return;
  Spark__Connect__ReleaseSessionRequest req = SPARK__CONNECT__RELEASE_SESSION_REQUEST__INIT;
  Spark__Connect__UserContext u = fwd_user();
  req.session_id = found->spark_id;
  req.user_context = &u;
  ProtobufCMessage *out = NULL;
  if (fwd.rpc.unary(fwd.rpc.ctx, fwd.endpoint, 10000, SC_METHOD("ReleaseSession"), &req.base,
                    &spark__connect__release_session_response__descriptor, &out))
    dd_log(DD_LOG_WARN, "spark forward: releasing Spark session %s at %s: %s", found->spark_id, fwd.target, dd_err_msg());
  else dd_log(DD_LOG_INFO, "spark forward: released Spark session %s of session %s at %s", found->spark_id, session_id, fwd.target);
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  dd_err_clear();
  free(found->client_id);
  free(found);
}

/* ======================= what to forward ======================= */

/* What one plan forwards as: its operation, the plan to send (owned), its tables. */
typedef struct fwd_job {
  int op;                    /* FWD_*, or -1: not forwarded */
  Spark__Connect__Plan *plan; /* the plan sent to Spark (malloc'ed tree) */
  char **locs;
  size_t nlocs;
  char *sql;                 /* the statement sent, for the log; NULL for a relation tree */
} fwd_job;

static void job_free(fwd_job *j) {
  if (j->plan) protobuf_c_message_free_unpacked(&j->plan->base, NULL);
  for (size_t i = 0; i < j->nlocs; i++) free(j->locs[i]);
  free(j->locs);
  free(j->sql);
}

static void *new_msg(const ProtobufCMessageDescriptor *d) {
  void *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

static bool any_is(const Google__Protobuf__Any *a, const char *msg) {
  const char *slash = a && a->type_url ? strrchr(a->type_url, '/') : NULL;
  return slash && !strcmp(slash + 1, msg);
}

/* A plan running `sql`: root = SQL relation, or (as_command) a spark.sql command. */
static int sql_plan(Spark__Connect__Plan **out, const char *sql, bool as_command) {
  Spark__Connect__Plan *p = new_msg(&spark__connect__plan__descriptor);
  Spark__Connect__Relation *rel = new_msg(&spark__connect__relation__descriptor);
  Spark__Connect__SQL *s = new_msg(&spark__connect__sql__descriptor);
  Spark__Connect__Command *c = as_command ? new_msg(&spark__connect__command__descriptor) : NULL;
  Spark__Connect__SqlCommand *sc = as_command ? new_msg(&spark__connect__sql_command__descriptor) : NULL;
  char *q = strdup(sql);
  *out = p;
  if (rel && s && q) rel->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SQL, rel->sql = s, s->query = q, s = NULL, q = NULL;
  if (p && c && sc && rel && !s) {
    sc->input = rel, rel = NULL;
    c->command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_SQL_COMMAND, c->sql_command = sc, sc = NULL;
    p->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND, p->command = c, c = NULL;
  } else if (p && !as_command && rel && !s) {
    p->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT, p->root = rel, rel = NULL;
  }
  bool ok = p && !rel && !s && !c && !sc && !q;
  free(q);
  if (s) protobuf_c_message_free_unpacked(&s->base, NULL);
  if (rel) protobuf_c_message_free_unpacked(&rel->base, NULL);
  if (sc) protobuf_c_message_free_unpacked(&sc->base, NULL);
  if (c) protobuf_c_message_free_unpacked(&c->base, NULL);
  if (!ok) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static int job_add_loc(fwd_job *j, char *loc) {
  char **g = realloc(j->locs, (j->nlocs + 1) * sizeof *g);
  if (!g) return free(loc), dd_err_set(DD_ENOMEM, "out of memory");
  j->locs = g;
  g[j->nlocs++] = loc;
  return 0;
}

/* A statement job: its operation if the rules name it, translated. */
static int job_statement(fwd_job *j, int op, int rc, char *sql, char *loc, bool as_command) {
  if (rc) return free(sql), free(loc), dd_err_wrap(rc, "forwarding %s to Spark", FWD_OP_NAMES[op]);
  j->op = op, j->sql = sql;
  if ((rc = job_add_loc(j, loc))) return rc;
  return sql_plan(&j->plan, sql, as_command);
}

/* ---- a query's relation tree ---- */

/* rel becomes a Delta read of loc (taken). */
static int to_delta_read(Spark__Connect__Relation *rel, fwd_job *j, char *loc) {
  Spark__Connect__Read *rd = new_msg(&spark__connect__read__descriptor);
  Spark__Connect__Read__DataSource *ds = new_msg(&spark__connect__read__data_source__descriptor);
  char **paths = malloc(sizeof *paths);
  char *fmt = strdup("delta"), *path = strdup(loc);
  int rc = job_add_loc(j, loc);
  if (!rc && (!rd || !ds || !paths || !fmt || !path)) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    free(rd), free(ds), free(paths), free(fmt), free(path);
    return rc;
  }
  paths[0] = path;
  ds->paths = paths, ds->n_paths = 1;
  ds->_format_case = SPARK__CONNECT__READ__DATA_SOURCE___FORMAT_FORMAT, ds->format = fmt;
  rd->read_type_case = SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE, rd->data_source = ds;
  if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION) protobuf_c_message_free_unpacked(&rel->extension->base, NULL);
  else protobuf_c_message_free_unpacked(&rel->read->base, NULL);
  rel->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_READ;
  rel->read = rd;
  return 0;
}

/* One relation of a query: a table leaf is read by its confined location. FWD_KEEP_LOCAL
 * for a part that is not forwarded. */
static int leaf(Spark__Connect__Relation *rel, fwd_job *j, const connect_exec_opts *o) {
  char *loc = NULL;
  int rc = 0;
  if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION && any_is(rel->extension, FWD_DELTA_RELATION_URL)) {
    ProtobufCMessage *m = NULL;
    const Google__Protobuf__Any *a = rel->extension;
    if ((rc = rg_pb_unpack(&m, &delta__connect__delta_relation__descriptor, a->value.data, a->value.len))) return rc;
    const Delta__Connect__DeltaRelation *d = (const Delta__Connect__DeltaRelation *)m;
    if (d->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN)
      rc = connect_exec_table_location(&loc, d->scan->table, o);
    else rc = FWD_KEEP_LOCAL;
    protobuf_c_message_free_unpacked(m, NULL);
    return rc ? rc : to_delta_read(rel, j, loc);
  }
  if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_READ) {
    const Spark__Connect__Read *r = rel->read;
    if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_NAMED_TABLE)
      rc = connect_exec_name_location(&loc, r->named_table->unparsed_identifier, o);
    else if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE && r->data_source->n_paths == 1 &&
             (!r->data_source->_format_case || !strcasecmp(r->data_source->format, "delta")))
      rc = connect_exec_name_location(&loc, r->data_source->paths[0], o);
    else return FWD_KEEP_LOCAL;
    return rc ? rc : to_delta_read(rel, j, loc);
  }
  if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_SQL && rel->sql->query) {
    char *q = NULL;
    if ((rc = connect_fwd_sql_rewrite(&q, &j->locs, &j->nlocs, rel->sql->query, o))) return rc;
    free(rel->sql->query);
    rel->sql->query = q;
  }
  return 0;
}

/* Visits every relation under m (submessages by reflection), depth-bounded. */
static int walk(ProtobufCMessage *m, fwd_job *j, const connect_exec_opts *o, int depth) {
  if (depth > FWD_MAX_DEPTH) return dd_err_set(DD_EINVAL, "plan nested deeper than %d", FWD_MAX_DEPTH);
  int rc = 0;
  if (m->descriptor == &spark__connect__relation__descriptor && (rc = leaf((Spark__Connect__Relation *)m, j, o))) return rc;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  char *base = (char *)m;
  for (unsigned i = 0; i < d->n_fields && !rc; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
    if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(uint32_t *)(base + f->quantifier_offset) != f->id) continue;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(size_t *)(base + f->quantifier_offset);
      ProtobufCMessage **arr = *(ProtobufCMessage ***)(base + f->offset);
      for (size_t k = 0; k < n && !rc; k++) rc = walk(arr[k], j, o, depth + 1);
    } else {
      ProtobufCMessage *sub = *(ProtobufCMessage **)(base + f->offset);
      if (sub) rc = walk(sub, j, o, depth + 1);
    }
  }
  return rc;
}

static int job_query(fwd_job *j, const Spark__Connect__Plan *plan, const connect_exec_opts *o) {
  size_t len = spark__connect__plan__get_packed_size(plan);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  spark__connect__plan__pack(plan, buf);
  j->plan = spark__connect__plan__unpack(NULL, len, buf);
  free(buf);
  if (!j->plan) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = walk(&j->plan->root->base, j, o, 0);
  if (rc == FWD_KEEP_LOCAL) return 0;
  if (!rc && j->nlocs) j->op = FWD_SCAN;
  return rc ? dd_err_wrap(rc, "forwarding a query to Spark") : 0;
}

/* ---- spark.sql(...) ---- */

/* The operation a statement's first word names; -1 for others (a query included: deltad
 * answers spark.sql(query) with its relation, which is forwarded when it is read). */
static int statement_op(const char *sql) {
  static const struct { const char *word; int op; } W[] = {
      {"DELETE", FWD_DELETE}, {"UPDATE", FWD_UPDATE}, {"MERGE", FWD_MERGE}, {"OPTIMIZE", FWD_OPTIMIZE}, {"VACUUM", FWD_VACUUM}};
  sql += strspn(sql, " \t\r\n(");
  size_t n = strspn(sql, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  for (size_t i = 0; i < sizeof W / sizeof W[0]; i++)
    if (strlen(W[i].word) == n && !strncasecmp(sql, W[i].word, n)) return W[i].op;
  return -1;
}

static int job_sql_command(fwd_job *j, const Spark__Connect__SqlCommand *c, const connect_exec_opts *o) {
  const char *text = connect_sql_command_text(c);
  int op = text ? statement_op(text) : -1;
  if (op < 0 || !(fwd.mask & (1u << op))) return 0;
  char *q = NULL;
  int rc = connect_fwd_sql_rewrite(&q, &j->locs, &j->nlocs, text, o);
  if (rc) return dd_err_wrap(rc, "forwarding %s to Spark", FWD_OP_NAMES[op]);
  j->op = op, j->sql = q;
  return sql_plan(&j->plan, q, true);
}

/* ---- the plan ---- */

static int relation_op(const Delta__Connect__DeltaRelation *r) {
  switch (r->relation_type_case) {
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE: return FWD_DELETE;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_UPDATE_TABLE: return FWD_UPDATE;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_MERGE_INTO_TABLE: return FWD_MERGE;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_OPTIMIZE_TABLE: return FWD_OPTIMIZE;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN: return FWD_SCAN;
    default: return -1;
  }
}

static int job_extension(fwd_job *j, const Google__Protobuf__Any *a, bool is_cmd, const Spark__Connect__Plan *plan,
                         const connect_exec_opts *o) {
  ProtobufCMessage *m = NULL;
  const ProtobufCMessageDescriptor *d = is_cmd ? &delta__connect__delta_command__descriptor : &delta__connect__delta_relation__descriptor;
  int rc = rg_pb_unpack(&m, d, a->value.data, a->value.len);
  if (rc) return 0; /* deltad's own path reports it */
  char *sql = NULL, *loc = NULL;
  if (is_cmd) {
    const Delta__Connect__DeltaCommand *c = (const Delta__Connect__DeltaCommand *)m;
    if (c->command_type_case == DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE && (fwd.mask & (1u << FWD_VACUUM))) {
      rc = connect_fwd_sql_command(&sql, &loc, c, o);
      rc = job_statement(j, FWD_VACUUM, rc, sql, loc, false);
    }
  } else {
    const Delta__Connect__DeltaRelation *r = (const Delta__Connect__DeltaRelation *)m;
    int op = relation_op(r);
    if (op == FWD_SCAN && (fwd.mask & (1u << op))) rc = job_query(j, plan, o);
    else if (op >= 0 && (fwd.mask & (1u << op))) {
      rc = connect_fwd_sql_relation(&sql, &loc, r, o);
      rc = job_statement(j, op, rc, sql, loc, false);
    }
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

static int job_make(fwd_job *j, const Spark__Connect__Plan *p, const connect_exec_opts *o) {
  memset(j, 0, sizeof *j);
  j->op = -1;
  if (!p) return 0;
  if (p->op_type_case == SPARK__CONNECT__PLAN__OP_TYPE_COMMAND && p->command) {
    const Spark__Connect__Command *c = p->command;
    if (c->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_SQL_COMMAND) return job_sql_command(j, c->sql_command, o);
    if (c->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_EXTENSION && any_is(c->extension, FWD_DELTA_COMMAND_URL))
      return job_extension(j, c->extension, true, p, o);
    return 0;
  }
  if (p->op_type_case != SPARK__CONNECT__PLAN__OP_TYPE_ROOT || !p->root) return 0;
  if (p->root->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION && any_is(p->root->extension, FWD_DELTA_RELATION_URL))
    return job_extension(j, p->root->extension, false, p, o);
  if (!(fwd.mask & (1u << FWD_SCAN))) return 0;
  return job_query(j, p, o);
}

/* The largest latest-snapshot size of the job's tables (bytes of their data files). */
static int job_size(int64_t *out, const fwd_job *j) {
  *out = 0;
  for (size_t i = 0; i < j->nlocs; i++) {
    dl_table *t = NULL;
    dl_snapshot *s = NULL;
    int rc = dl_table_open(&t, j->locs[i]);
    if (!rc) rc = dl_snapshot_open(&s, t, NULL);
    if (!rc && dl_snapshot_size_bytes(s) > *out) *out = dl_snapshot_size_bytes(s);
    dl_snapshot_free(s);
    dl_table_free(t);
    if (rc) return rc;
  }
  return 0;
}

/* ======================= the call ======================= */

typedef struct fwd_relay {
  connect_fwd_send_fn send;
  void *ud;
  bool complete;
} fwd_relay;

/* Spark's response with the client's ids (send_resp fills them), then Spark's restored so
 * the transport frees what it allocated. */
static int relay(void *ud, const ProtobufCMessage *msg) {
  fwd_relay *st = ud;
  Spark__Connect__ExecutePlanResponse *r = (Spark__Connect__ExecutePlanResponse *)msg;
  if (r->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE) st->complete = true;
  char *sid = r->session_id, *ssid = r->server_side_session_id, *op = r->operation_id, *rid = r->response_id;
  int rc = st->send(st->ud, r);
  r->session_id = sid, r->server_side_session_id = ssid, r->operation_id = op, r->response_id = rid;
  return rc;
}

/* Spark's session gets the client's vacuum retention setting. */
static int sync_retention(const char *spark_sid, int64_t timeout_ms, const connect_exec_opts *o) {
  if (o->retention_check) return 0;
  Spark__Connect__KeyValue kv = SPARK__CONNECT__KEY_VALUE__INIT, *pairs[1] = {&kv};
  kv.key = (char *)CONNECT_RETENTION_CHECK_CONF;
  kv._value_case = SPARK__CONNECT__KEY_VALUE___VALUE_VALUE, kv.value = (char *)"false";
  Spark__Connect__ConfigRequest__Set set = SPARK__CONNECT__CONFIG_REQUEST__SET__INIT;
  set.pairs = pairs, set.n_pairs = 1;
  Spark__Connect__ConfigRequest__Operation op = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__INIT;
  op.op_type_case = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_SET, op.set = &set;
  Spark__Connect__UserContext u = fwd_user();
  Spark__Connect__ConfigRequest req = SPARK__CONNECT__CONFIG_REQUEST__INIT;
  req.session_id = (char *)spark_sid, req.user_context = &u, req.operation = &op;
  ProtobufCMessage *out = NULL;
  int rc = fwd.rpc.unary(fwd.rpc.ctx, fwd.endpoint, timeout_ms, SC_METHOD("Config"), &req.base,
                         &spark__connect__config_response__descriptor, &out);
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  return rc;
}

static int spark_error(int rc, int64_t timeout_ms) {
  if (rc == DD_EIO) return dd_err_wrap(DD_EIO, "Spark Connect server %s is unavailable", fwd.target);
  if (rc == DD_EDEADLINE)
    return dd_err_wrap(DD_EDEADLINE, "Spark Connect server %s did not answer within %lld ms", fwd.target, (long long)timeout_ms);
  return dd_err_wrap(rc, "Spark Connect server %s", fwd.target);
}

static int job_run(const fwd_job *j, const Spark__Connect__ExecutePlanRequest *creq, const char *client_op,
                   int64_t timeout_ms, const connect_exec_opts *o, connect_fwd_send_fn send, void *ud) {
  char spark_sid[37], op_id[37];
  int rc = spark_session(spark_sid, creq->session_id);
  if (!rc && j->op == FWD_VACUUM) rc = sync_retention(spark_sid, timeout_ms, o);
  if (rc) return rc < 0 && rc != DD_ENOMEM ? spark_error(rc, timeout_ms) : rc;
  connect_uuid(op_id);
  Spark__Connect__UserContext u = fwd_user();
  Spark__Connect__ExecutePlanRequest req = SPARK__CONNECT__EXECUTE_PLAN_REQUEST__INIT;
  req.session_id = spark_sid, req.user_context = &u, req.plan = j->plan;
  req._operation_id_case = SPARK__CONNECT__EXECUTE_PLAN_REQUEST___OPERATION_ID_OPERATION_ID, req.operation_id = op_id;
  req._client_type_case = SPARK__CONNECT__EXECUTE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE, req.client_type = (char *)"deltad";
  req.n_tags = creq->n_tags, req.tags = creq->tags; /* for an Interrupt by tag */
  fwd_relay st = {send, ud, false};
  if ((rc = connect_fwd_op_add(creq->session_id, client_op, spark_sid, op_id))) return rc;
  rc = fwd.rpc.stream(fwd.rpc.ctx, fwd.endpoint, timeout_ms, SC_METHOD("ExecutePlan"), &req.base,
                      &spark__connect__execute_plan_response__descriptor, relay, &st);
  connect_fwd_op_remove(op_id);
  if (rc) return rc == DD_ENOMEM || rc == DD_ECANCELLED ? rc : spark_error(rc, timeout_ms);
  if (st.complete) return 0;
  /* Spark ends a non-reattachable execution without result_complete; the client's is. */
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  Spark__Connect__ExecutePlanResponse__ResultComplete done = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESULT_COMPLETE__INIT;
  r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE;
  r.result_complete = &done;
  return send(ud, &r);
}

const char *connect_forward_target(void) { return fwd.on ? fwd.target : ""; }

/* The client's id of Spark's operation spark_op: from the pairs taken before the Interrupt
 * was sent, else from the operations running now (one that started meanwhile). */
static char *pair_client(const connect_fwd_pair *pairs, size_t n, const char *spark_op) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(pairs[i].spark_op, spark_op)) return strdup(pairs[i].client_op);
  return connect_fwd_op_client(spark_op);
}

int connect_forward_interrupt(const Spark__Connect__InterruptRequest *creq, char ***ids, size_t *n_ids) {
  char spark_sid[37], spark_op[37];
  bool by_id = creq->interrupt_type == SPARK__CONNECT__INTERRUPT_REQUEST__INTERRUPT_TYPE__INTERRUPT_TYPE_OPERATION_ID;
  if (!fwd.on || !connect_fwd_op_find(creq->session_id, by_id ? creq->operation_id : NULL, spark_sid, spark_op))
    return 0;
  Spark__Connect__InterruptRequest req = *creq; /* the same interrupt, on Spark's ids */
  Spark__Connect__UserContext u = fwd_user();
  req.session_id = spark_sid, req.user_context = &u;
  req._client_observed_server_side_session_id_case = SPARK__CONNECT__INTERRUPT_REQUEST___CLIENT_OBSERVED_SERVER_SIDE_SESSION_ID__NOT_SET;
  if (by_id) req.operation_id = spark_op;
  connect_fwd_pair *pairs;
  size_t n_pairs;
  int rc = connect_fwd_op_pairs(creq->session_id, &pairs, &n_pairs);
  if (rc) return rc;
  ProtobufCMessage *out = NULL;
  rc = fwd.rpc.unary(fwd.rpc.ctx, fwd.endpoint, 10000, SC_METHOD("Interrupt"), &req.base,
                     &spark__connect__interrupt_response__descriptor, &out);
  if (rc) {
    connect_fwd_pairs_free(pairs, n_pairs);
    return spark_error(rc, 10000);
  }
  const Spark__Connect__InterruptResponse *r = (const Spark__Connect__InterruptResponse *)out;
  for (size_t i = 0; i < r->n_interrupted_ids && !rc; i++) {
    char *id = pair_client(pairs, n_pairs, r->interrupted_ids[i]);
    char **grown = id ? realloc(*ids, (*n_ids + 1) * sizeof **ids) : NULL;
    if (grown) *ids = grown, grown[(*n_ids)++] = id;
    else if (id) free(id), rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  dd_log(DD_LOG_INFO, "spark forward: interrupt of session %s sent to %s: %zu interrupted", creq->session_id, fwd.target,
         r->n_interrupted_ids);
  protobuf_c_message_free_unpacked(out, NULL);
  connect_fwd_pairs_free(pairs, n_pairs);
  return rc;
}

int connect_forward_execute(connect_fwd_result *out, const Spark__Connect__ExecutePlanRequest *req,
                            const char *op_id, int64_t deadline_ms, const connect_exec_opts *o,
                            connect_fwd_send_fn send, void *ud) {
  const Spark__Connect__Plan *plan = req->plan;
  const char *session_id = req->session_id;
  memset(out, 0, sizeof *out);
  if (!fwd.on) return 0;
  fwd_job j;
  int64_t size = 0;
  int rc = job_make(&j, plan, o);
  if (!rc && j.op >= 0 && fwd.min_bytes > 0) rc = job_size(&size, &j);
  if (rc || j.op < 0 || (fwd.min_bytes > 0 && size <= fwd.min_bytes)) {
    job_free(&j);
    return rc;
  }
  out->forwarded = true;
  out->op = FWD_OP_NAMES[j.op];
  out->mutates = j.op != FWD_SCAN;
  snprintf(out->table, sizeof out->table, "%s", j.nlocs ? j.locs[0] : "");
  int64_t timeout_ms = fwd.timeout_ms;
  if (deadline_ms > 0 && deadline_ms - dd_call_now_ms() < timeout_ms) timeout_ms = deadline_ms - dd_call_now_ms();
  rc = timeout_ms > 0 ? job_run(&j, req, op_id, timeout_ms, o, send, ud)
                      : dd_err_set(DD_EDEADLINE, "the call's deadline passed before it reached Spark");
  if (!rc) {
    pthread_mutex_lock(&fwd.mu);
    fwd.counts[j.op]++;
    pthread_mutex_unlock(&fwd.mu);
  }
  dd_log(rc ? DD_LOG_WARN : DD_LOG_INFO, "spark forward: op=%s table=%s spark=%s session=%s %s%s%s%s", FWD_OP_NAMES[j.op],
         j.nlocs ? j.locs[0] : "", fwd.target, session_id, rc ? "failed: " : "ok", rc ? dd_err_msg() : "",
         j.sql ? " sql=" : "", j.sql ? j.sql : "");
  job_free(&j);
  return rc;
}
