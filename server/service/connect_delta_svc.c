/* connect_delta_svc.c: deltad.connect.v1.DeltaConnectService: ExecuteCommand and
 * ExecuteRelation run a delta.connect message (connect_exec.c) and stream the result as
 * one ExecuteResult{schema} followed by one ExecuteResult{row} per row (over REST: NDJSON).
 * A Scan, and ExecuteQuery's spark.connect.Relation, run on the query engine
 * (connect_plan.c) and stream batch by batch (connect_rows.c). Admin only. The vacuum retention check is on unless the request carries the header
 * x-delta-retention-duration-check: false. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "server/service/app.h"
#include "server/service/connect_exec.h"
#include "server/service/connect_plan.h"
#include "server/service/connect_rows.h"
#include "server/service/svc_util.h"

/* Sends the schema, then every row; values point into r (the handler keeps ownership). */
static int send_result(dd_call *call, const dop_result *r) {
  int rc = 0;
  Deltad__Connect__V1__ResultSchema__Column *cols = calloc(r->ncols + 1, sizeof *cols);
  Deltad__Connect__V1__ResultSchema__Column **colp = calloc(r->ncols + 1, sizeof *colp);
  Deltad__Connect__V1__Value *vals = calloc(r->ncols + 1, sizeof *vals);
  Deltad__Connect__V1__Value **valp = calloc(r->ncols + 1, sizeof *valp);
  if (!cols || !colp || !vals || !valp) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  Deltad__Connect__V1__ResultSchema schema = DELTAD__CONNECT__V1__RESULT_SCHEMA__INIT;
  for (size_t i = 0; i < r->ncols; i++) {
    deltad__connect__v1__result_schema__column__init(&cols[i]);
    cols[i].name = (char *)r->cols[i].name;
    cols[i].type = (char *)r->cols[i].type;
    cols[i].nullable = r->cols[i].nullable;
    colp[i] = &cols[i];
  }
  schema.n_columns = r->ncols;
  schema.columns = colp;
  Deltad__Connect__V1__ExecuteResult msg = DELTAD__CONNECT__V1__EXECUTE_RESULT__INIT;
  msg.result_case = DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_SCHEMA;
  msg.schema = &schema;
  if ((rc = call->send(call, &msg.base))) goto cleanup;
  Deltad__Connect__V1__ResultRow row = DELTAD__CONNECT__V1__RESULT_ROW__INIT;
  row.n_values = r->ncols;
  row.values = valp;
  msg.result_case = DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_ROW;
  msg.row = &row;
  for (size_t i = 0; i < r->nrows && !rc; i++) {
    for (size_t j = 0; j < r->ncols; j++) {
      const dop_cell *c = dop_result_cell(r, i, j);
      Deltad__Connect__V1__Value *v = &vals[j];
      deltad__connect__v1__value__init(v);
      valp[j] = v;
      switch (c->kind) {
        case DOP_BOOL: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_BOOL_VALUE, v->bool_value = c->i64 != 0; break;
        case DOP_I64: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_INT64_VALUE, v->int64_value = c->i64; break;
        case DOP_F64: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_DOUBLE_VALUE, v->double_value = c->f64; break;
        case DOP_STR: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_STRING_VALUE, v->string_value = c->str; break;
        case DOP_TS_MS: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_TIMESTAMP_MS, v->timestamp_ms = c->i64; break;
        case DOP_JSON: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_JSON, v->json = c->str; break;
        default: v->kind_case = DELTAD__CONNECT__V1__VALUE__KIND_NULL_VALUE, v->null_value = true;
      }
    }
    rc = call->send(call, &msg.base);
  }
cleanup:
  free(cols);
  free(colp);
  free(vals);
  free(valp);
  return rc;
}

static connect_exec_opts call_opts(dd_call *call) {
  connect_exec_opts o = CONNECT_EXEC_OPTS_INIT;
  o.store = dd_app_store(call->app);
  const char *h = call->header ? call->header(call, CONNECT_RETENTION_CHECK_HEADER) : NULL;
  if (h && !strcasecmp(h, "false")) o.retention_check = false;
  return o;
}

static int cs_command(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  *out = NULL;
  int rc = svc_require_admin(call);
  if (rc) return rc;
  dop_result *r = NULL;
  connect_exec_opts o = call_opts(call);
  rc = connect_exec_command(&r, (const Delta__Connect__DeltaCommand *)req, &o);
  if (!rc) rc = send_result(call, r);
  dop_result_free(r);
  return rc;
}

static int cs_relation(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  *out = NULL;
  int rc = svc_require_admin(call);
  if (rc) return rc;
  dop_result *r = NULL;
  connect_exec_opts o = call_opts(call);
  const Delta__Connect__DeltaRelation *rel = (const Delta__Connect__DeltaRelation *)req;
  if (rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN) {
    char *loc = NULL;
    qry_op *op = NULL;
    if (!(rc = connect_exec_table_location(&loc, rel->scan->table, &o)))
      rc = connect_plan_scan(&op, loc, -1, NULL, NULL, &o);
    if (!rc) rc = connect_rows_send(call, op);
    qry_free(op);
    free(loc);
    return rc;
  }
  rc = connect_exec_relation(&r, rel, &o);
  if (!rc) rc = send_result(call, r);
  dop_result_free(r);
  return rc;
}

static int cs_query(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  *out = NULL;
  int rc = svc_require_admin(call);
  if (rc) return rc;
  connect_exec_opts o = call_opts(call);
  qry_op *op = NULL;
  rc = connect_plan_build(&op, (const Spark__Connect__Relation *)req, &o);
  if (!rc) rc = connect_rows_send(call, op);
  qry_free(op);
  return rc;
}

const dd_method dd_connect_delta_methods[] = {
    {"/deltad.connect.v1.DeltaConnectService/ExecuteCommand", &delta__connect__delta_command__descriptor,
     &deltad__connect__v1__execute_result__descriptor, cs_command, DD_METHOD_STREAMING},
    {"/deltad.connect.v1.DeltaConnectService/ExecuteRelation", &delta__connect__delta_relation__descriptor,
     &deltad__connect__v1__execute_result__descriptor, cs_relation, DD_METHOD_STREAMING},
    {"/deltad.connect.v1.DeltaConnectService/ExecuteQuery", &spark__connect__relation__descriptor,
     &deltad__connect__v1__execute_result__descriptor, cs_query, DD_METHOD_STREAMING},
};
const size_t dd_connect_delta_methods_len = sizeof dd_connect_delta_methods / sizeof dd_connect_delta_methods[0];
