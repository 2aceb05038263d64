/* connect_rows.h: a query's rows (a store/query operator tree) as the DeltaConnectService
 * result stream: one ExecuteResult{schema}, then one ExecuteResult{row} per row, produced
 * batch by batch (the stream holds one batch of the tree at a time). The Delta type ->
 * Value mapping is written in proto/deltad/connect/v1/connect.proto. */
#ifndef DD_SERVER_SERVICE_CONNECT_ROWS_H
#define DD_SERVER_SERVICE_CONNECT_ROWS_H

#include "server/call/handler.h"
#include "store/query/qry.h"

/* Sends op's schema and rows on call (op stays the caller's). Stops with DD_EDEADLINE when
 * the call's deadline passes between batches, and with send's code (DD_ECANCELLED) when the
 * client went away. */
int connect_rows_send(dd_call *call, qry_op *op);
/* A qry_check_fn over a dd_call (ctx): DD_EDEADLINE once the call's deadline passed. */
int connect_rows_deadline_check(void *ctx);

#endif
