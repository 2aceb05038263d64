/* connect_forward.h: forwarding Delta Connect work to a real Spark Connect server
 * (`deltad --spark-connect sc://host:port`, docs/scaling.md). The operations named by
 * --spark-forward (optimize, delete, update, merge, vacuum, scan; or all), on tables whose
 * latest snapshot is larger than --spark-forward-min-bytes, are not run by deltad: their
 * plan is translated to the equivalent Delta SQL against delta.`<location>` (catalog names
 * resolved to the table's location first, every location confined as deltad confines its
 * own), sent as ExecutePlan on a Spark session of the client's session, and Spark's
 * responses are relayed to the client with only the session, operation and response ids
 * made the client's. A query (a Delta Scan, a Spark read of a Delta table, a SQL relation)
 * goes as its own relation tree with each table leaf replaced by a read of its location.
 *
 * The transport is the program's (connect_fwd_rpc): the service layer knows no gRPC.
 * State: one process-wide forwarder, configured once at start (connect_forward_configure)
 * before any call; its session map and counters are guarded by an internal mutex, so every
 * other function may be called from any thread. */
#ifndef DD_SERVER_SERVICE_CONNECT_FORWARD_H
#define DD_SERVER_SERVICE_CONNECT_FORWARD_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/service/connect_exec.h"
#include "spark/connect/base.pb-c.h"

/* Called once per response message of a call; msg is borrowed for the callback. A non-zero
 * return cancels the call and is what stream returns. */
typedef int (*connect_fwd_msg_fn)(void *ud, const ProtobufCMessage *msg);

/* An outbound gRPC transport to the Spark Connect endpoint ("host:port"). Both return 0 or
 * the DD_E* code of the gRPC status (UNAVAILABLE = DD_EIO, DEADLINE_EXCEEDED = DD_EDEADLINE)
 * with Spark's message in dd_err_msg(); every call carries a deadline of timeout_ms. */
typedef struct connect_fwd_rpc {
  int (*stream)(void *ctx, const char *endpoint, int64_t timeout_ms, const char *method,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                connect_fwd_msg_fn fn, void *ud);
  int (*unary)(void *ctx, const char *endpoint, int64_t timeout_ms, const char *method,
               const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
               ProtobufCMessage **out);
  void *ctx;
} connect_fwd_rpc;

typedef struct connect_fwd_opts {
  const char *target;   /* "sc://host:port"; NULL or "" = forwarding off */
  const char *ops;      /* "optimize,delete,..." or "all"; NULL or "" = all */
  int64_t min_bytes;    /* forward only tables whose snapshot is larger; 0 = any size */
  int64_t timeout_ms;   /* deadline of a forwarded call; 0 = one hour */
  connect_fwd_rpc rpc;
} connect_fwd_opts;
#define CONNECT_FWD_OPTS_INIT {NULL, NULL, 0, 0, {NULL, NULL, NULL}}

/* Checks and keeps the settings (copied). DD_EINVAL naming a bad target or operation. */
int connect_forward_configure(const connect_fwd_opts *o);
/* Drops the settings and the session map (at exit). */
void connect_forward_shutdown(void);
bool connect_forward_enabled(void);

/* Sends one relayed response to the client (filling the client's ids). */
typedef int (*connect_fwd_send_fn)(void *ud, Spark__Connect__ExecutePlanResponse *r);

/* What connect_forward_execute did: forwarded, and then which operation ("delete", ...;
 * a static string), on which table (its location, truncated to fit), and whether the
 * operation changes the table (all but scan). */
typedef struct connect_fwd_result {
  bool forwarded;
  const char *op;
  bool mutates;
  char table[1024];
} connect_fwd_result;

/* ExecutePlan of req->plan for the client's session req->session_id (op_id: the client's
 * operation id): when the rules forward it, runs it on Spark,
 * relays every response through send, sets out->forwarded and returns 0 or the error
 * (Spark's status and message; UNAVAILABLE naming the endpoint when Spark cannot be reached).
 * Otherwise out->forwarded is false and 0 is returned: deltad runs the plan itself. A plan
 * the rules forward but that has no Delta SQL form (a merge source that is a query, an
 * expression kind SQL cannot spell) is DD_EUNSUPPORTED saying so. deadline_ms: the client
 * call's (dd_call_now_ms clock; 0 = none): the forwarded call ends by then too. */
int connect_forward_execute(connect_fwd_result *out, const Spark__Connect__ExecutePlanRequest *req,
                            const char *op_id, int64_t deadline_ms, const connect_exec_opts *o,
                            connect_fwd_send_fn send, void *ud);
/* The client's Interrupt (all, by tag, by operation id) of its session, forwarded to Spark
 * when a forwarded operation of the session runs (the client's tags go with each forwarded
 * ExecutePlan): appends the client's ids of the operations Spark interrupted to *ids
 * (malloc'ed strings, *n_ids). 0 when nothing was forwarded, else Spark's error. */
int connect_forward_interrupt(const Spark__Connect__InterruptRequest *req, char ***ids, size_t *n_ids);

/* ---- running forwarded operations (connect_forward_ops.c) ---- */
int connect_fwd_op_add(const char *session, const char *client_op, const char *spark_sid, const char *spark_op);
void connect_fwd_op_remove(const char *spark_op);
/* The Spark session and operation of a running forwarded operation of session (client_op
 * NULL: any). */
bool connect_fwd_op_find(const char *session, const char *client_op, char spark_sid[37], char spark_op[37]);
/* The running forwarded operations of session as (Spark's id, client's id) pairs, copied
 * (*out malloc'ed, free with connect_fwd_pairs_free): an Interrupt maps Spark's answer
 * through them, since an interrupted operation may end, and leave the list, before
 * Spark's answer to the Interrupt arrives. */
typedef struct {
  char spark_op[37];
  char *client_op;
} connect_fwd_pair;
int connect_fwd_op_pairs(const char *session, connect_fwd_pair **out, size_t *n);
void connect_fwd_pairs_free(connect_fwd_pair *p, size_t n);
/* The client's operation id of Spark's spark_op (malloc'ed), NULL when unknown. */
char *connect_fwd_op_client(const char *spark_op);
/* "sc://host:port" of the Spark endpoint ("" when off). */
const char *connect_forward_target(void);

/* The client released its session: releases its Spark session too (errors ignored). */
void connect_forward_release(const char *session_id);

/* deltad_spark_forwarded_total{op=...} in Prometheus' text format. */
typedef struct dd_buf dd_buf;
void connect_forward_metrics_write(dd_buf *b);

/* ---- Delta SQL (connect_forward_sql.c) ---- */

/* `delta.\`<loc>\`` with backticks doubled. */
void connect_fwd_sql_table(dd_buf *b, const char *loc);
/* 'text' (backslash and quote escaped), `name` (backticks doubled), a double or float
 * literal (NaN and infinities as casts). */
void connect_fwd_sql_string(dd_buf *b, const char *s, size_t len);
void connect_fwd_sql_ident(dd_buf *b, const char *s);
void connect_fwd_sql_double(dd_buf *b, double v, bool is_float);
/* Local rows (a LocalRelation's Arrow IPC stream) as a parenthesised SELECT over VALUES
 * (connect_forward_values.c); DD_EUNSUPPORTED for a column type or row count it does not
 * write. */
int connect_fwd_sql_values(dd_buf *b, const Spark__Connect__LocalRelation *l);
/* A spark.connect Expression as Spark SQL text; DD_EUNSUPPORTED naming a kind it cannot spell. */
int connect_fwd_sql_expr(dd_buf *b, const Spark__Connect__Expression *e);
/* The Delta SQL statement of a Delta Connect relation (delete, update, merge, optimize) or
 * command (vacuum); *loc the (first) table's location. Both malloc'ed. */
int connect_fwd_sql_relation(char **sql, char **loc, const Delta__Connect__DeltaRelation *rel,
                             const connect_exec_opts *o);
int connect_fwd_sql_command(char **sql, char **loc, const Delta__Connect__DeltaCommand *cmd,
                            const connect_exec_opts *o);
/* sql with each table it names after FROM, JOIN, INTO, UPDATE, USING, TABLE, OPTIMIZE,
 * VACUUM, HISTORY or DETAIL (catalog.schema.table or delta.`path`) replaced by
 * delta.`<location>`; the locations are appended to *locs (malloc'ed strings, *nlocs). */
int connect_fwd_sql_rewrite(char **out, char ***locs, size_t *nlocs, const char *sql,
                            const connect_exec_opts *o);

#endif
