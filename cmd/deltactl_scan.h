/* deltactl_scan.h: what the two paths of `deltactl table scan` share: the output formats
 * and the row printing around store/query's value text (deltactl_scan.c), and the server
 * path (deltactl_scan_remote.c). */
#ifndef DD_CMD_DELTACTL_SCAN_H
#define DD_CMD_DELTACTL_SCAN_H

#include <stdint.h>

#include "store/query/qry.h"

typedef enum { DCTL_SCAN_TABLE, DCTL_SCAN_JSON, DCTL_SCAN_CSV } dctl_scan_fmt;

/* The header line of table and csv output (nothing for json). */
void dctl_scan_header(const char *const *names, size_t n, dctl_scan_fmt f);
/* A csv cell, quoted when it holds a comma, a quote or a line break. */
void dctl_scan_csv_cell(qry_text *l, const char *s, size_t n);
/* Before cell c of a row: the separator, and in json the column's name. */
void dctl_scan_sep(qry_text *l, dctl_scan_fmt f, size_t c, const char *name);
/* Ends the row in l and writes it to stdout. */
int dctl_scan_end_row(qry_text *l, dctl_scan_fmt f);

/* The scan as the command line gave it (limit, version: -1 for none). */
typedef struct dctl_scan_request {
  const char *path;
  const char *columns; /* "a,b" or NULL */
  const char *where;   /* Spark SQL predicate or NULL */
  int64_t limit, version;
  dctl_scan_fmt fmt;
} dctl_scan_request;

/* Runs the scan on the server (DeltaConnectService.ExecuteQuery: Limit over Project over
 * Filter over the table's Scan, or over a Delta Read with versionAsOf) and prints its rows
 * as they stream. Returns the exit code. */
int dctl_scan_remote(const dctl_scan_request *q);

#endif
