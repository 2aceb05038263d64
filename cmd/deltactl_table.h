/* deltactl_table.h: `deltactl table ...`, the Delta table commands of the CLI. The
 * maintenance verbs and detail are in deltactl_tableops.c (server or --local), files,
 * changes and the local history in deltactl_table.c; all of them print through
 * deltactl_table_print.c (JSON or text). */
#ifndef DD_CMD_DELTACTL_TABLE_H
#define DD_CMD_DELTACTL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

/* `table files|changes` in this process; argv[0] is "table". Returns the process
 * exit code (0 only on success). */
int dctl_table_main(int argc, char **argv);
/* The local path of a table argument (deltactl_tableops.c): a catalog name
 * (catalog.schema.table that is not an existing path) is looked up on the server
 * (NamespaceService/DescribeTable); anything else is a path, made absolute. *out
 * malloc'ed. Returns 0 or an exit code after printing why. */
int dctl_table_location(const char *arg, char **out);
/* `table scan PATH --local ...` (deltactl_scan.c): a table's rows. */
int dctl_scan_main(int argc, char **argv);

/* The rendering half (deltactl_table_print.c). Each returns 0 or a DD_E* code. */
typedef struct dl_table dl_table;
typedef struct dl_snapshot dl_snapshot;
typedef struct dop_result dop_result;
/* An operation's result, whoever ran it: JSON is one object a row (a line each); text is
 * "label: value" lines for one row of more than four columns, else a tab-separated table. */
int dctl_print_result(const dop_result *r, bool json);
/* As dctl_print_result; with list, JSON is an array even for one row (history, lists of
 * files), else a result of one row prints as one object. Follows --output (jsonl, csv). */
int dctl_print_result_as(const dop_result *r, bool json, bool list);
/* The end of an in-process operation (optimize, delete, update): rc != 0 prints the error
 * (exit DCTL_EXIT_SERVER), else prints r by --output; frees r either way. The exit code. */
int dctl_finish_local(int rc, dop_result *r);
int dctl_print_files(const dl_snapshot *s, bool json);
int dctl_print_changes(dl_table *t, int64_t from, int64_t to, bool json);

#endif
