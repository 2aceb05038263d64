/* connect_arrow.h: a dop_result for Spark Connect clients: its Spark SQL type texts as a
 * spark.connect.DataType tree (the ExecutePlanResponse / AnalyzePlan schema) and its rows
 * as one Arrow IPC stream (schema, one record batch, end of stream) for
 * ExecutePlanResponse.ArrowBatch.data. Nested values (maps, arrays, structs), which the
 * result keeps as JSON text, become Arrow Map, List and Struct values. */
#ifndef DD_SERVER_SERVICE_CONNECT_ARROW_H
#define DD_SERVER_SERVICE_CONNECT_ARROW_H

#include "store/arrow/arrow.h"
#include "spark/connect/types.pb-c.h"
#include "store/deltaops/dop.h"

/* The result's row type as a struct DataType (heap tree: protobuf_c_message_free_unpacked). */
int connect_result_datatype(Spark__Connect__DataType **out, const dop_result *r);
/* The DataType of a DDL schema (AnalyzePlan DDLParse, sent by createDataFrame(rows, "a INT,
 * b STRING")): a column list as a struct, else the one type; DD_EINVAL for bad text. */
int connect_ddl_datatype(Spark__Connect__DataType **out, const char *ddl);
/* The result as an arw_schema and one batch of every row (both the caller's: free the
 * batch first). */
int connect_result_batch(arw_schema **out_schema, arw_batch **out_batch, const dop_result *r);
/* Appends a complete Arrow IPC stream of every row of r to out. */
int connect_result_arrow(arw_buf *out, const dop_result *r);

#endif
