/* connect_spark_svc.c: spark.connect.SparkConnectService for Delta Connect clients.
 * ExecutePlan runs a Plan whose command.extension is Any(delta.connect.DeltaCommand) or
 * whose root.extension is Any(delta.connect.DeltaRelation) and answers as Spark does: a
 * response carrying the schema, one ArrowBatch (an Arrow IPC stream) with the rows, and
 * result_complete, each with the session, server-side session, operation and response ids.
 * Responses are kept per operation for ReattachExecute until ReleaseExecute or
 * ReleaseSession. AnalyzePlan answers schema (running the relation; a mutating one is run
 * once and its result kept for the ExecutePlan of the same plan) and spark_version. Config
 * keeps per-session settings (spark.databricks.delta.retentionDurationCheck.enabled turns
 * the vacuum retention check off). Interrupt is forwarded to Spark when an operation of the
 * session was forwarded there (the interrupted ids are the client's); deltad's own
 * operations run to completion within ExecutePlan and are not interrupted. A relation or command outside what follows is
 * UNIMPLEMENTED naming it. Admin only.
 * Queries (every other relation, and Delta Connect's Scan) run on store/query through
 * connect_plan.c: the schema first, then bounded Arrow batches as the operators yield
 * them, then result_complete. spark.sql(...) (SqlCommand) answers with its SQL relation for
 * a query, or runs a maintenance statement at once and answers with its rows as a
 * LocalRelation (connect_sql.c). AnalyzePlan also answers explain, tree_string, is_local
 * and is_streaming. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/app.h"
#include "server/service/connect_arrow.h"
#include "server/service/connect_exec.h"
#include "server/service/connect_forward.h"
#include "server/service/connect_plan.h"
#include "server/service/connect_rows.h"
#include "server/service/connect_session.h"
#include "server/service/connect_sql.h"
#include "server/service/connect_write.h"
#include "server/call/req_guard.h"
#include "server/service/svc_util.h"
#include "spark/connect/base.pb-c.h"

#define DELTA_COMMAND_URL "delta.connect.DeltaCommand"
#define DELTA_RELATION_URL "delta.connect.DeltaRelation"
#define SPARK_VERSION "4.0.0"

/* Spark's defaults for the settings its Python client reads in one batch (toPandas,
 * collect, show and repr ask for these; one unknown key fails the whole call). */
static const char *const CONF_DEFAULTS[][2] = {
    {CONNECT_RETENTION_CHECK_CONF, "true"},
    {"spark.sql.session.timeZone", "UTC"},
    {"spark.sql.execution.pandas.structHandlingMode", "legacy"},
    {"spark.sql.execution.arrow.pyspark.selfDestruct.enabled", "false"},
    {"spark.sql.execution.pandas.convertToArrowArraySafely", "false"},
    {"spark.sql.execution.arrow.useLargeVarTypes", "false"},
    {"spark.sql.repl.eagerEval.enabled", "false"},
    {"spark.sql.repl.eagerEval.maxNumRows", "20"},
    {"spark.sql.repl.eagerEval.truncate", "20"},
    {"spark.sql.timestampType", "TIMESTAMP_LTZ"},
    {"spark.sql.pyspark.jvmStacktrace.enabled", "false"},
    {"spark.sql.connect.serverStacktrace.enabled", "false"},
    /* createDataFrame reads these; data above the threshold would go as a cached artifact
     * relation, which deltad does not take: its requests are bounded anyway */
    {"spark.sql.session.localRelationCacheThreshold", "67108864"},
    {"spark.sql.session.localRelationSizeLimit", "2147483647"},
    {"spark.sql.session.localRelationChunkSizeRows", "10000"},
    {"spark.sql.session.localRelationChunkSizeBytes", "16777216"},
    {"spark.sql.session.localRelationBatchOfChunksSizeBytes", "134217728"},
    {"spark.sql.execution.pandas.inferPandasDictAsMap", "false"},
    {"spark.sql.pyspark.inferNestedDictAsStruct.enabled", "false"},
    {"spark.sql.pyspark.legacy.inferArrayTypeFromFirstElement.enabled", "false"},
    {"spark.sql.pyspark.legacy.inferMapTypeFromFirstPair.enabled", "false"},
};

/* ======================= plans ======================= */

/* Does the Any's type URL name msg ("type.googleapis.com/delta.connect.DeltaCommand")? */
static bool any_is(const Google__Protobuf__Any *a, const char *msg) {
  const char *slash = a && a->type_url ? strrchr(a->type_url, '/') : NULL;
  return slash && !strcmp(slash + 1, msg);
}

/* The name of the oneof member numbered `field` of d ("limit", "read"), quoted, for messages;
 * a number no member has (0: a kind this server's protos do not know) says so. */
static const char *oneof_name(const ProtobufCMessageDescriptor *d, unsigned field, char *buf,
                              size_t cap) {
  const ProtobufCFieldDescriptor *f = field ? protobuf_c_message_descriptor_get_field(d, field) : NULL;
  if (f) snprintf(buf, cap, "'%s'", f->name);
  else snprintf(buf, cap, "of a kind this server does not know (field %u)", field);
  return buf;
}

/* A decoded plan: a Delta Connect command or (maintenance) relation, or a query (any
 * other relation, a Delta Scan included), or spark.sql(...) (SqlCommand). */
typedef struct plan {
  Delta__Connect__DeltaCommand *cmd;
  Delta__Connect__DeltaRelation *rel;
  const Spark__Connect__Relation *query;  /* borrowed from the request */
  const Spark__Connect__SqlCommand *sql;  /* borrowed from the request */
  const Spark__Connect__WriteOperation *write; /* df.write...: borrowed from the request */
  const Spark__Connect__WriteOperationV2 *write2; /* df.writeTo(...): borrowed */
} plan;

static void plan_free(plan *p) {
  if (p->cmd) protobuf_c_message_free_unpacked(&p->cmd->base, NULL);
  if (p->rel) protobuf_c_message_free_unpacked(&p->rel->base, NULL);
}

static int plan_decode(plan *out, const Spark__Connect__Plan *p) {
  memset(out, 0, sizeof *out);
  if (!p) return dd_err_set(DD_EINVAL, "plan: required");
  const Google__Protobuf__Any *a = NULL;
  const char *want = NULL;
  char kind[96];
  if (p->op_type_case == SPARK__CONNECT__PLAN__OP_TYPE_COMMAND && p->command) {
    if (p->command->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_SQL_COMMAND) {
      out->sql = p->command->sql_command;
      return 0;
    }
    if (p->command->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_OPERATION) {
      out->write = p->command->write_operation;
      return 0;
    }
    if (p->command->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_OPERATION_V2) {
      out->write2 = p->command->write_operation_v2;
      return 0;
    }
    if (p->command->command_type_case != SPARK__CONNECT__COMMAND__COMMAND_TYPE_EXTENSION)
      return dd_err_set(DD_EUNSUPPORTED, "Spark command %s is not supported by deltad",
                        oneof_name(&spark__connect__command__descriptor, (unsigned)p->command->command_type_case,
                                   kind, sizeof kind));
    a = p->command->extension, want = DELTA_COMMAND_URL;
  } else if (p->op_type_case == SPARK__CONNECT__PLAN__OP_TYPE_ROOT && p->root) {
    if (p->root->rel_type_case != SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION) {
      if (!p->root->rel_type_case)
        return dd_err_set(DD_EUNSUPPORTED, "Spark relation %s is not supported by deltad",
                          oneof_name(&spark__connect__relation__descriptor, 0, kind, sizeof kind));
      out->query = p->root;
      return 0;
    }
    a = p->root->extension, want = DELTA_RELATION_URL;
  } else {
    return dd_err_set(DD_EINVAL, "plan: a root relation or a command is required");
  }
  if (!any_is(a, want))
    return dd_err_set(DD_EUNSUPPORTED, "deltad serves only Delta Connect operations: extension '%s' is not "
                      "type.googleapis.com/%s", a && a->type_url ? a->type_url : "", want);
  /* the Any's bytes are a second message: bounded like the request (req_guard.h) */
  bool is_cmd = !strcmp(want, DELTA_COMMAND_URL);
  ProtobufCMessage *m = NULL;
  const ProtobufCMessageDescriptor *d =
      is_cmd ? &delta__connect__delta_command__descriptor : &delta__connect__delta_relation__descriptor;
  int rc = rg_pb_unpack(&m, d, a->value.data, a->value.len);
  if (rc) return dd_err_wrap(rc, "the plan's extension (Any %s)", want);
  if (is_cmd) out->cmd = (Delta__Connect__DeltaCommand *)m;
  else out->rel = (Delta__Connect__DeltaRelation *)m;
  /* a Delta Scan is a query: its rows stream through the query engine */
  if (out->rel && out->rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN) {
    protobuf_c_message_free_unpacked(m, NULL);
    out->rel = NULL;
    out->query = p->root;
  }
  return 0;
}

static connect_exec_opts session_opts(const char *session_id, struct cat_store *store) {
  connect_exec_opts o = CONNECT_EXEC_OPTS_INIT;
  o.store = store;
  char *v = connect_conf_get(session_id, CONNECT_RETENTION_CHECK_CONF);
  if (v && !strcasecmp(v, "false")) o.retention_check = false;
  free(v);
  v = connect_conf_get(session_id, CONNECT_AUTO_MERGE_CONF);
  o.auto_merge = v && !strcasecmp(v, "true");
  free(v);
  return o;
}

/* Runs the plan (or takes the result kept by AnalyzePlan for it). */
static int plan_run(dop_result **out, const plan *p, const char *session_id, const uint8_t *key,
                    size_t key_len, struct cat_store *store) {
  connect_exec_opts o = session_opts(session_id, store);
  if (p->cmd) return connect_exec_command(out, p->cmd, &o);
  if ((*out = connect_plan_take(session_id, key, key_len))) return 0;
  return connect_exec_relation(out, p->rel, &o);
}

static int pack_plan(uint8_t **out, size_t *len, const Spark__Connect__Plan *p) {
  *len = spark__connect__plan__get_packed_size(p);
  if (!(*out = malloc(*len ? *len : 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  spark__connect__plan__pack(p, *out);
  return 0;
}

/* ======================= ExecutePlan ======================= */

typedef struct exec_ctx {
  dd_call *call;
  const char *session_id, *op_id;
  char ssid[37];
} exec_ctx;

/* Fills the ids of a response, sends it, and keeps its bytes for reattach. */
static int send_resp(exec_ctx *x, Spark__Connect__ExecutePlanResponse *r) {
  char rid[37];
  connect_uuid(rid);
  r->session_id = (char *)x->session_id;
  r->server_side_session_id = x->ssid;
  r->operation_id = (char *)x->op_id;
  r->response_id = rid;
  size_t len = spark__connect__execute_plan_response__get_packed_size(r);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  spark__connect__execute_plan_response__pack(r, buf);
  int rc = connect_op_record(x->session_id, x->op_id, rid, buf, len);
  free(buf);
  return rc ? rc : x->call->send(x->call, &r->base);
}

static int send_result(exec_ctx *x, const dop_result *res) {
  Spark__Connect__DataType *schema = NULL;
  arw_buf arrow = ARW_BUF_INIT;
  int rc = connect_result_datatype(&schema, res);
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  if (!rc) {
    r.schema = schema;
    rc = send_resp(x, &r);
    r.schema = NULL;
  }
  if (!rc && res->ncols) {
    Spark__Connect__ExecutePlanResponse__ArrowBatch b = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__ARROW_BATCH__INIT;
    rc = connect_result_arrow(&arrow, res);
    b.row_count = (int64_t)res->nrows;
    b.data.data = arrow.data;
    b.data.len = arrow.len;
    b._start_offset_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__ARROW_BATCH___START_OFFSET_START_OFFSET;
    b.start_offset = 0;
    r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH;
    r.arrow_batch = &b;
    if (!rc) rc = send_resp(x, &r);
  }
  if (!rc) {
    Spark__Connect__ExecutePlanResponse__ResultComplete done = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESULT_COMPLETE__INIT;
    r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE;
    r.result_complete = &done;
    rc = send_resp(x, &r);
  }
  arw_buf_free(&arrow);
  if (schema) protobuf_c_message_free_unpacked(&schema->base, NULL);
  return rc;
}

/* One ArrowBatch response: a whole IPC stream (schema, the batch, end). A batch whose
 * stream would pass CONNECT_ARROW_MAX_BYTES goes as two halves (Spark bounds its arrow
 * batches the same way, spark.connect.grpc.arrow.maxBatchSize). */
#define CONNECT_ARROW_MAX_BYTES (4u << 20)

static int send_batch(exec_ctx *x, const arw_schema *s, const arw_batch *b, int64_t *offset, int depth) {
  size_t rows = arw_batch_rows(b);
  arw_buf buf = ARW_BUF_INIT;
  int rc = arw_write_schema(&buf, s);
  if (!rc) rc = arw_write_batch(&buf, b);
  if (!rc) rc = arw_write_eos(&buf);
  if (!rc && buf.len > CONNECT_ARROW_MAX_BYTES && rows > 1 && depth < 40) {
    arw_buf_free(&buf);
    arw_batch *h = NULL;
    if (!(rc = arw_batch_slice(&h, b, 0, rows / 2))) rc = send_batch(x, s, h, offset, depth + 1);
    arw_batch_free(h), h = NULL;
    if (!rc && !(rc = arw_batch_slice(&h, b, rows / 2, rows))) rc = send_batch(x, s, h, offset, depth + 1);
    arw_batch_free(h);
    return rc;
  }
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  Spark__Connect__ExecutePlanResponse__ArrowBatch ab = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__ARROW_BATCH__INIT;
  ab.row_count = (int64_t)rows;
  ab.data.data = buf.data;
  ab.data.len = buf.len;
  ab._start_offset_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__ARROW_BATCH___START_OFFSET_START_OFFSET;
  ab.start_offset = *offset;
  r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH;
  r.arrow_batch = &ab;
  if (!rc) rc = send_resp(x, &r);
  *offset += (int64_t)rows;
  arw_buf_free(&buf);
  return rc;
}

static int send_complete(exec_ctx *x) {
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  Spark__Connect__ExecutePlanResponse__ResultComplete done = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESULT_COMPLETE__INIT;
  r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE;
  r.result_complete = &done;
  return send_resp(x, &r);
}

/* A query: the schema, then its batches as they come (one batch of the operator tree in
 * memory at a time, plus what sort/aggregate hold), an empty batch when there are no rows
 * (the client takes the columns from it), then result_complete. */
static int stream_query(exec_ctx *x, qry_op *op) {
  Spark__Connect__DataType *schema = NULL;
  const arw_schema *s = qry_schema(op);
  int rc = connect_plan_datatype(&schema, s);
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  if (!rc) {
    r.schema = schema;
    rc = send_resp(x, &r);
  }
  if (schema) protobuf_c_message_free_unpacked(&schema->base, NULL);
  int64_t offset = 0;
  bool any = false;
  const arw_batch *b;
  qry_set_check(op, connect_rows_deadline_check, x->call);
  while (!rc && !(rc = qry_next(op, &b)) && b) {
    any = true;
    rc = send_batch(x, s, b, &offset, 0);
  }
  qry_set_check(op, NULL, NULL);
  if (!rc && !any) {
    arw_batch *empty = NULL;
    if (!(rc = arw_batch_new(&empty, s))) rc = send_batch(x, s, empty, &offset, 0);
    arw_batch_free(empty);
  }
  return rc ? rc : send_complete(x);
}

/* spark.sql(...): a query answers with its SQL relation, which the client then reads (and
 * analyzes) like any DataFrame; a command (VACUUM, DESCRIBE HISTORY, ...) runs now and
 * answers with its rows as a LocalRelation (Arrow IPC), as Spark does. */
static int run_sql_command(exec_ctx *x, const Spark__Connect__SqlCommand *c, const connect_exec_opts *o) {
  const char *text = connect_sql_command_text(c);
  if (!text) return dd_err_set(DD_EINVAL, "sql: a statement is required");
  Spark__Connect__Relation rel = SPARK__CONNECT__RELATION__INIT;
  Spark__Connect__SQL sqlrel = SPARK__CONNECT__SQL__INIT;
  Spark__Connect__LocalRelation local = SPARK__CONNECT__LOCAL_RELATION__INIT;
  arw_buf buf = ARW_BUF_INIT;
  qry_op *op = NULL;
  int rc = 0;
  if (connect_sql_is_query(text)) {
    /* parse and plan it now, so a bad statement fails here as in Spark */
    if (!(rc = connect_sql_query(&op, text, o, 0))) {
      sqlrel.query = (char *)text;
      rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SQL;
      rel.sql = &sqlrel;
    }
  } else if (!(rc = connect_sql_query(&op, text, o, 0))) {
    const arw_batch *b;
    rc = arw_write_schema(&buf, qry_schema(op));
    while (!rc && !(rc = qry_next(op, &b)) && b) rc = arw_write_batch(&buf, b);
    if (!rc) rc = arw_write_eos(&buf);
    local.data.data = buf.data;
    local.data.len = buf.len;
    rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION;
    rel.local_relation = &local;
  }
  qry_free(op);
  Spark__Connect__ExecutePlanResponse r = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__INIT;
  Spark__Connect__ExecutePlanResponse__SqlCommandResult res = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__SQL_COMMAND_RESULT__INIT;
  res.relation = &rel;
  r.response_type_case = SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_SQL_COMMAND_RESULT;
  r.sql_command_result = &res;
  if (!rc) rc = send_resp(x, &r);
  arw_buf_free(&buf);
  return rc ? rc : send_complete(x);
}

static const char *observed(bool has, const char *v) { return has ? v : NULL; }

static int forward_send(void *ud, Spark__Connect__ExecutePlanResponse *r) { return send_resp(ud, r); }

static int sc_execute(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__ExecutePlanRequest *req = (const Spark__Connect__ExecutePlanRequest *)msg;
  *out = NULL;
  exec_ctx x = {.call = call, .session_id = req->session_id};
  char op[37];
  plan p = {0};
  dop_result *res = NULL;
  uint8_t *key = NULL;
  size_t key_len = 0;
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, observed(req->_client_observed_server_side_session_id_case,
                                                                req->client_observed_server_side_session_id), x.ssid);
  if (rc) return rc;
  if (req->_operation_id_case && req->operation_id && *req->operation_id) x.op_id = req->operation_id;
  else connect_uuid(op), x.op_id = op;
  if ((rc = plan_decode(&p, req->plan)) || (rc = pack_plan(&key, &key_len, req->plan))) goto cleanup;
  if ((rc = connect_op_start(x.session_id, x.op_id))) goto cleanup;
  if (connect_forward_enabled()) { /* --spark-connect: the rules may send it to Spark */
    connect_fwd_result fr;
    connect_exec_opts o = session_opts(x.session_id, dd_app_store(call->app));
    rc = connect_forward_execute(&fr, req, x.op_id, call->deadline_ms, &o, forward_send, &x);
    if (!rc && fr.forwarded && fr.mutates) dd_app_audit_forward(call, fr.op, fr.table, connect_forward_target());
    if (rc || fr.forwarded) goto cleanup;
  }
  if (p.write || p.write2) {
    connect_exec_opts o = session_opts(x.session_id, dd_app_store(call->app));
    rc = p.write ? connect_write_operation(p.write, &o) : connect_write_operation_v2(p.write2, &o);
    if (!rc) rc = send_complete(&x);
    goto cleanup;
  }
  if (p.query || p.sql) {
    connect_exec_opts o = session_opts(x.session_id, dd_app_store(call->app));
    qry_op *op = NULL;
    if (p.sql) rc = run_sql_command(&x, p.sql, &o);
    else if (!(rc = connect_plan_build(&op, p.query, &o))) rc = stream_query(&x, op);
    qry_free(op);
    /* A data file that cannot be read is the query's failure, as Spark reports it
     * (FAILED_READ_FILE), not UNAVAILABLE: the client would retry the whole plan for
     * minutes. */
    if (rc == DD_EIO) rc = dd_err_wrap(DD_EINTERNAL, "[FAILED_READ_FILE]");
    goto cleanup;
  }
  if ((rc = plan_run(&res, &p, x.session_id, key, key_len, dd_app_store(call->app)))) goto cleanup;
  rc = send_result(&x, res);
cleanup:
  dop_result_free(res);
  free(key);
  plan_free(&p);
  return rc;
}

static int sc_reattach(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__ReattachExecuteRequest *req = (const Spark__Connect__ReattachExecuteRequest *)msg;
  *out = NULL;
  char ssid[37];
  uint8_t **msgs = NULL;
  size_t *lens = NULL, n = 0;
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, observed(req->_client_observed_server_side_session_id_case,
                                                                req->client_observed_server_side_session_id), ssid);
  if (!rc) rc = connect_op_replay(req->session_id, req->operation_id,
                                  req->_last_response_id_case ? req->last_response_id : NULL, &msgs, &lens, &n);
  for (size_t i = 0; i < n; i++) {
    Spark__Connect__ExecutePlanResponse *r = rc ? NULL : spark__connect__execute_plan_response__unpack(NULL, lens[i], msgs[i]);
    if (r) rc = call->send(call, &r->base), protobuf_c_message_free_unpacked(&r->base, NULL);
    free(msgs[i]);
  }
  free(msgs);
  free(lens);
  return rc;
}

/* ======================= unary methods ======================= */

static void *new_msg(const ProtobufCMessageDescriptor *d) {
  void *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

static int sc_release_execute(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__ReleaseExecuteRequest *req = (const Spark__Connect__ReleaseExecuteRequest *)msg;
  char ssid[37];
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, NULL, ssid);
  if (rc) return rc;
  connect_op_release(req->session_id, req->operation_id,
                     req->release_case == SPARK__CONNECT__RELEASE_EXECUTE_REQUEST__RELEASE_RELEASE_UNTIL
                         ? req->release_until->response_id : NULL);
  Spark__Connect__ReleaseExecuteResponse *r = new_msg(&spark__connect__release_execute_response__descriptor);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->session_id = strdup(req->session_id);
  r->server_side_session_id = strdup(ssid);
  r->_operation_id_case = SPARK__CONNECT__RELEASE_EXECUTE_RESPONSE___OPERATION_ID_OPERATION_ID;
  r->operation_id = strdup(req->operation_id);
  rc = r->session_id && r->server_side_session_id && r->operation_id ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  return svc_reply(out, &r->base, rc);
}

static int sc_release_session(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__ReleaseSessionRequest *req = (const Spark__Connect__ReleaseSessionRequest *)msg;
  char ssid[37] = "";
  int rc = svc_require_admin(call);
  if (rc) return rc;
  if (connect_session_release(req->session_id, ssid)) dd_err_clear(); /* releasing twice is fine */
  connect_forward_release(req->session_id);
  Spark__Connect__ReleaseSessionResponse *r = new_msg(&spark__connect__release_session_response__descriptor);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->session_id = strdup(req->session_id);
  r->server_side_session_id = strdup(ssid);
  rc = r->session_id && r->server_side_session_id ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  return svc_reply(out, &r->base, rc);
}

static int sc_interrupt(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__InterruptRequest *req = (const Spark__Connect__InterruptRequest *)msg;
  char ssid[37];
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, NULL, ssid);
  if (rc) return rc;
  Spark__Connect__InterruptResponse *r = new_msg(&spark__connect__interrupt_response__descriptor);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->session_id = strdup(req->session_id);
  r->server_side_session_id = strdup(ssid);
  rc = r->session_id && r->server_side_session_id ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = connect_forward_interrupt(req, &r->interrupted_ids, &r->n_interrupted_ids);
  return svc_reply(out, &r->base, rc);
}

/* ---- Config ---- */

static const char *conf_default(const char *key) {
  for (size_t i = 0; i < sizeof CONF_DEFAULTS / sizeof CONF_DEFAULTS[0]; i++)
    if (!strcmp(CONF_DEFAULTS[i][0], key)) return CONF_DEFAULTS[i][1];
  return NULL;
}

static int add_pair(Spark__Connect__ConfigResponse *r, const char *key, const char *value) {
  Spark__Connect__KeyValue **n = realloc(r->pairs, (r->n_pairs + 1) * sizeof *n);
  if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
  r->pairs = n;
  Spark__Connect__KeyValue *kv = new_msg(&spark__connect__key_value__descriptor);
  if (!kv) return dd_err_set(DD_ENOMEM, "out of memory");
  n[r->n_pairs++] = kv;
  kv->key = strdup(key);
  if (value) kv->_value_case = SPARK__CONNECT__KEY_VALUE___VALUE_VALUE, kv->value = strdup(value);
  return kv->key && (!value || kv->value) ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* The value of key for this session (malloc'ed), else its default, else dflt. */
static char *conf_value(const char *session, const char *key, const char *dflt) {
  char *v = connect_conf_get(session, key);
  if (!v && conf_default(key)) v = strdup(conf_default(key));
  if (!v && dflt) v = strdup(dflt);
  return v;
}

static int config_op(Spark__Connect__ConfigResponse *r, const char *sid, const Spark__Connect__ConfigRequest__Operation *op) {
  int rc = 0;
  switch (op->op_type_case) {
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_SET:
      for (size_t i = 0; i < op->set->n_pairs && !rc; i++) {
        const Spark__Connect__KeyValue *kv = op->set->pairs[i];
        if (!strcmp(kv->key, CONNECT_RETENTION_CHECK_CONF) && kv->_value_case &&
            strcasecmp(kv->value, "true") && strcasecmp(kv->value, "false"))
          return dd_err_set(DD_EINVAL, "%s must be true or false, not '%s'", kv->key, kv->value);
        rc = connect_conf_set(sid, kv->key, kv->_value_case ? kv->value : NULL);
      }
      return rc;
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET:
      for (size_t i = 0; i < op->get->n_keys && !rc; i++) {
        char *v = conf_value(sid, op->get->keys[i], NULL);
        rc = v ? add_pair(r, op->get->keys[i], v)
               : dd_err_set(DD_ENOTFOUND, "[SQL_CONF_NOT_FOUND] the SQL config \"%s\" cannot be found", op->get->keys[i]);
        free(v);
      }
      return rc;
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET_WITH_DEFAULT:
      for (size_t i = 0; i < op->get_with_default->n_pairs && !rc; i++) {
        const Spark__Connect__KeyValue *kv = op->get_with_default->pairs[i];
        char *v = connect_conf_get(sid, kv->key);
        rc = add_pair(r, kv->key, v ? v : kv->_value_case ? kv->value : NULL);
        free(v);
      }
      return rc;
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET_OPTION:
      for (size_t i = 0; i < op->get_option->n_keys && !rc; i++) {
        char *v = conf_value(sid, op->get_option->keys[i], NULL);
        rc = add_pair(r, op->get_option->keys[i], v);
        free(v);
      }
      return rc;
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET_ALL: {
      char **k = NULL, **v = NULL;
      size_t n = 0;
      const char *prefix = op->get_all->_prefix_case ? op->get_all->prefix : NULL;
      rc = connect_conf_all(sid, prefix, &k, &v, &n);
      for (size_t i = 0; i < n; i++) {
        if (!rc) rc = add_pair(r, k[i], v[i]);
        free(k[i]), free(v[i]);
      }
      free(k), free(v);
      for (size_t i = 0; !rc && i < sizeof CONF_DEFAULTS / sizeof CONF_DEFAULTS[0]; i++) {
        char *set = connect_conf_get(sid, CONF_DEFAULTS[i][0]);
        if (!set && (!prefix || !strncmp(CONF_DEFAULTS[i][0], prefix, strlen(prefix))))
          rc = add_pair(r, CONF_DEFAULTS[i][0], CONF_DEFAULTS[i][1]);
        free(set);
      }
      return rc;
    }
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_UNSET:
      for (size_t i = 0; i < op->unset->n_keys && !rc; i++) rc = connect_conf_set(sid, op->unset->keys[i], NULL);
      return rc;
    case SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_IS_MODIFIABLE:
      for (size_t i = 0; i < op->is_modifiable->n_keys && !rc; i++) rc = add_pair(r, op->is_modifiable->keys[i], "true");
      return rc;
    default: return dd_err_set(DD_EINVAL, "config: an operation is required");
  }
}

static int sc_config(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__ConfigRequest *req = (const Spark__Connect__ConfigRequest *)msg;
  char ssid[37];
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, observed(req->_client_observed_server_side_session_id_case,
                                                                req->client_observed_server_side_session_id), ssid);
  if (rc) return rc;
  if (!req->operation) return dd_err_set(DD_EINVAL, "config: an operation is required");
  Spark__Connect__ConfigResponse *r = new_msg(&spark__connect__config_response__descriptor);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->session_id = strdup(req->session_id);
  r->server_side_session_id = strdup(ssid);
  rc = r->session_id && r->server_side_session_id ? config_op(r, req->session_id, req->operation)
                                                  : dd_err_set(DD_ENOMEM, "out of memory");
  return svc_reply(out, &r->base, rc);
}

/* ---- AnalyzePlan ---- */

/* schema, explain, tree_string, is_local or is_streaming of a query plan. Building the
 * operator tree reads no rows (ShowString and Delta maintenance relations excepted). */
static int analyze_query(Spark__Connect__AnalyzePlanResponse *r, int kind, const Spark__Connect__Relation *rel,
                         const char *sid, struct cat_store *store, int level) {
  connect_exec_opts o = session_opts(sid, store);
  qry_op *op = NULL;
  int rc = 0;
  if (kind == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_LOCAL) {
    if (!(r->is_local = new_msg(&spark__connect__analyze_plan_response__is_local__descriptor))) return dd_err_set(DD_ENOMEM, "out of memory");
    r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_IS_LOCAL;
    r->is_local->is_local = connect_plan_is_local(rel);
    return 0;
  }
  if (kind == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_STREAMING) {
    if (!(r->is_streaming = new_msg(&spark__connect__analyze_plan_response__is_streaming__descriptor))) return dd_err_set(DD_ENOMEM, "out of memory");
    r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_IS_STREAMING;
    return 0;
  }
  if ((rc = connect_plan_build(&op, rel, &o))) return rc;
  char *text = NULL;
  switch (kind) {
    case SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SCHEMA:
      if (!(r->schema = new_msg(&spark__connect__analyze_plan_response__schema__descriptor))) rc = dd_err_set(DD_ENOMEM, "out of memory");
      else r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SCHEMA,
           rc = connect_plan_datatype(&r->schema->schema, qry_schema(op));
      break;
    case SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_EXPLAIN:
      if (!(rc = connect_plan_explain(&text, op))) {
        if (!(r->explain = new_msg(&spark__connect__analyze_plan_response__explain__descriptor))) rc = dd_err_set(DD_ENOMEM, "out of memory");
        else r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_EXPLAIN, r->explain->explain_string = text, text = NULL;
      }
      break;
    default: /* tree_string */
      if (!(rc = qry_tree_string(&text, qry_schema(op), level))) {
        if (!(r->tree_string = new_msg(&spark__connect__analyze_plan_response__tree_string__descriptor))) rc = dd_err_set(DD_ENOMEM, "out of memory");
        else r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_TREE_STRING, r->tree_string->tree_string = text, text = NULL;
      }
  }
  free(text);
  qry_free(op);
  return rc;
}

/* explain / tree_string / is_local / is_streaming: of a query; of a Delta Connect relation or
 * command (which are not run for it) a short answer naming it. */
static int analyze_other(Spark__Connect__AnalyzePlanResponse *r, int kind, const Spark__Connect__Plan *sp,
                         const char *sid, struct cat_store *store, int level) {
  plan p;
  int rc = plan_decode(&p, sp);
  if (!rc && p.query) rc = analyze_query(r, kind, p.query, sid, store, level);
  else if (!rc) {
    Spark__Connect__Relation none = SPARK__CONNECT__RELATION__INIT;
    if (kind == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_LOCAL ||
        kind == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_STREAMING)
      rc = analyze_query(r, kind, &none, sid, store, level);
    else if (kind == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_EXPLAIN) {
      if (!(r->explain = new_msg(&spark__connect__analyze_plan_response__explain__descriptor)) ||
          !(r->explain->explain_string = strdup(p.cmd ? "== Physical Plan ==\nDelta Connect command\n\n"
                                                      : "== Physical Plan ==\nDelta Connect relation\n\n")))
        rc = dd_err_set(DD_ENOMEM, "out of memory");
      else r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_EXPLAIN;
    } else {
      rc = dd_err_set(DD_EUNSUPPORTED, "AnalyzePlan tree_string of a Delta Connect command is not supported");
    }
  }
  plan_free(&p);
  return rc;
}

static int analyze_schema(Spark__Connect__AnalyzePlanResponse *r, const char *sid,
                          const Spark__Connect__Plan *sp, struct cat_store *store) {
  plan p;
  dop_result *res = NULL;
  uint8_t *key = NULL;
  size_t key_len = 0;
  int rc = plan_decode(&p, sp);
  if (!rc && p.query) {
    rc = analyze_query(r, SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SCHEMA, p.query, sid, store, 0);
    plan_free(&p);
    return rc;
  }
  if (!rc && (p.cmd || p.sql || p.write || p.write2)) {
    static const dop_col none[1] = {{"", "", true}};
    res = calloc(1, sizeof *res);
    if (res) res->cols = none;
    else rc = dd_err_set(DD_ENOMEM, "out of memory");
  } else if (!rc) {
    rc = pack_plan(&key, &key_len, sp);
    if (!rc) rc = plan_run(&res, &p, sid, key, key_len, store);
  }
  Spark__Connect__AnalyzePlanResponse__Schema *s = rc ? NULL : new_msg(&spark__connect__analyze_plan_response__schema__descriptor);
  if (!rc && !s) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) {
    r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SCHEMA;
    r->schema = s;
    rc = connect_result_datatype(&s->schema, res);
  }
  /* A mutating relation ran now: keep its result for the ExecutePlan of this plan. */
  if (!rc && p.rel && connect_relation_mutates(p.rel)) rc = connect_plan_put(sid, key, key_len, res), res = NULL;
  dop_result_free(res);
  free(key);
  plan_free(&p);
  return rc;
}

static int sc_analyze(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  const Spark__Connect__AnalyzePlanRequest *req = (const Spark__Connect__AnalyzePlanRequest *)msg;
  char ssid[37];
  int rc = svc_require_admin(call);
  if (!rc) rc = connect_session_touch(req->session_id, observed(req->_client_observed_server_side_session_id_case,
                                                                req->client_observed_server_side_session_id), ssid);
  if (rc) return rc;
  Spark__Connect__AnalyzePlanResponse *r = new_msg(&spark__connect__analyze_plan_response__descriptor);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->session_id = strdup(req->session_id);
  r->server_side_session_id = strdup(ssid);
  if (!r->session_id || !r->server_side_session_id) rc = dd_err_set(DD_ENOMEM, "out of memory");
  else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SCHEMA)
    rc = analyze_schema(r, req->session_id, req->schema->plan, dd_app_store(call->app));
  else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SPARK_VERSION) {
    r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SPARK_VERSION;
    r->spark_version = new_msg(&spark__connect__analyze_plan_response__spark_version__descriptor);
    if (!r->spark_version || !(r->spark_version->version = strdup(SPARK_VERSION)))
      rc = dd_err_set(DD_ENOMEM, "out of memory");
  } else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_EXPLAIN) {
    rc = analyze_other(r, req->analyze_case, req->explain->plan, req->session_id, dd_app_store(call->app), 0);
  } else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_TREE_STRING) {
    int level = req->tree_string->_level_case ? req->tree_string->level : 0;
    rc = analyze_other(r, req->analyze_case, req->tree_string->plan, req->session_id, dd_app_store(call->app), level);
  } else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_LOCAL) {
    rc = analyze_other(r, req->analyze_case, req->is_local->plan, req->session_id, dd_app_store(call->app), 0);
  } else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_IS_STREAMING) {
    rc = analyze_other(r, req->analyze_case, req->is_streaming->plan, req->session_id, dd_app_store(call->app), 0);
  } else if (req->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_DDL_PARSE) {
    r->result_case = SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_DDL_PARSE;
    r->ddl_parse = new_msg(&spark__connect__analyze_plan_response__ddlparse__descriptor);
    rc = r->ddl_parse ? connect_ddl_datatype(&r->ddl_parse->parsed, req->ddl_parse->ddl_string)
                      : dd_err_set(DD_ENOMEM, "out of memory");
  } else {
    char kind[96];
    rc = dd_err_set(DD_EUNSUPPORTED, "AnalyzePlan %s is not supported by deltad (schema, explain, tree_string, "
                    "is_local, is_streaming, ddl_parse and spark_version are)",
                    oneof_name(&spark__connect__analyze_plan_request__descriptor, (unsigned)req->analyze_case, kind, sizeof kind));
  }
  return svc_reply(out, &r->base, rc);
}

/* ======================= the table ======================= */

#define SC(name) "/spark.connect.SparkConnectService/" name
const dd_method dd_connect_spark_methods[] = {
    {SC("ExecutePlan"), &spark__connect__execute_plan_request__descriptor,
     &spark__connect__execute_plan_response__descriptor, sc_execute, DD_METHOD_STREAMING},
    {SC("ReattachExecute"), &spark__connect__reattach_execute_request__descriptor,
     &spark__connect__execute_plan_response__descriptor, sc_reattach, DD_METHOD_STREAMING},
    {SC("AnalyzePlan"), &spark__connect__analyze_plan_request__descriptor,
     &spark__connect__analyze_plan_response__descriptor, sc_analyze, 0},
    {SC("Config"), &spark__connect__config_request__descriptor, &spark__connect__config_response__descriptor,
     sc_config, 0},
    {SC("Interrupt"), &spark__connect__interrupt_request__descriptor,
     &spark__connect__interrupt_response__descriptor, sc_interrupt, 0},
    {SC("ReleaseExecute"), &spark__connect__release_execute_request__descriptor,
     &spark__connect__release_execute_response__descriptor, sc_release_execute, 0},
    {SC("ReleaseSession"), &spark__connect__release_session_request__descriptor,
     &spark__connect__release_session_response__descriptor, sc_release_session, 0},
};
const size_t dd_connect_spark_methods_len = sizeof dd_connect_spark_methods / sizeof dd_connect_spark_methods[0];
