/* deltactl_tablecall.h: the plumbing the `deltactl table` verbs share (deltactl_tablecall.c):
 * DeltaConnectService streams as a dop_result, one printer for server and --local
 * results, local failures, and table names (paths, catalog names). Exit codes as in
 * deltactl_common.h. */
#ifndef DD_CMD_DELTACTL_TABLECALL_H
#define DD_CMD_DELTACTL_TABLECALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/deltactl_common.h"
#include "store/deltaops/dop.h"

#define DCTL_TBL_CMD_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteCommand"
#define DCTL_TBL_REL_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteRelation"

/* A result streamed from the server; its columns are owned (dctl_tbl_stream_free). */
typedef struct dctl_tbl_stream {
  dop_result r;
  dop_col *cols;
} dctl_tbl_stream;

/* A progress line on stderr (dop_progress_fn), for a terminal. */
void dctl_tbl_progress(void *ctx, const char *phase, uint64_t done, uint64_t total);
/* Streams req into s (zeroed by the caller, freed with dctl_tbl_stream_free whatever the
 * outcome). Returns an exit code, after printing the call's error. */
int dctl_tbl_fetch(const char *method, const ProtobufCMessage *req, dctl_tbl_stream *s);
void dctl_tbl_stream_free(dctl_tbl_stream *s);
/* What a verb whose result has no columns did, printed in text instead of the result. */
void dctl_tbl_done(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints r (--output): list verbs print a JSON array even for one row; limit > 0 keeps
 * the first limit rows. An exit code. */
int dctl_tbl_print(dop_result *r, bool list, size_t limit);
/* Streams req and prints its result as dctl_tbl_print does. */
int dctl_tbl_remote(const char *method, const ProtobufCMessage *req, bool list, size_t limit);
/* Reports a failed local operation (rc a DD_E* code; 0 gives 0) and clears a progress line. */
int dctl_tbl_local_error(int rc);
/* Reports rc, else prints *rp; frees *rp (read after the callee filled it). */
int dctl_tbl_finish_local(int rc, dop_result **rp, bool list, size_t limit);

/* catalog.schema.table: three non-empty dot-separated parts, no '/', and no such file here
 * (a relative path wins). */
bool dctl_tbl_is_catalog_name(const char *a);
/* p made absolute against the working directory (absolute paths, file: URLs and
 * delta.`...` names as they are); malloc'ed, NULL when out of memory. */
char *dctl_tbl_abs_path(const char *p);
/* The location the catalog keeps for catalog.schema.table (NamespaceService/DescribeTable;
 * a file:// URL becomes its path); *out malloc'ed. An exit code. */
int dctl_tbl_catalog_location(const char *name, char **out);
/* The table argument of a data verb (scan, delete, update, merge, optimize) as a path: a
 * catalog name's location (as dctl_tbl_catalog_location), a URL or absolute path as it is,
 * else the existing relative path resolved (realpath). *out malloc'ed. An exit code. */
int dctl_tbl_data_path(const char *arg, char **out);

#endif
