/* deltactl_table.h: `deltactl table ...`, the Delta table commands of the CLI. The
 * maintenance verbs and detail are in deltactl_tableops.c (server or --local), files,
 * changes and the local history in deltactl_table.c; all of them print through
 * deltactl_table_print.c (JSON or text). */
#ifndef DD_CMD_DELTACTL_TABLE_H
#define DD_CMD_DELTACTL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

/* `table files|history|changes` in this process; argv[0] is "table". Returns the process
 * exit code (0 only on success). */
int dctl_table_main(int argc, char **argv);
/* `table scan PATH --local ...` (deltactl_scan.c): a table's rows. */
int dctl_scan_main(int argc, char **argv);

/* The rendering half (deltactl_table_print.c). Each returns 0 or a DD_E* code. */
typedef struct dl_table dl_table;
typedef struct dl_snapshot dl_snapshot;
typedef struct dop_result dop_result;
/* An operation's result, whoever ran it: JSON is one object a row (a line each); text is
 * "label: value" lines for one row of more than four columns, else a tab-separated table. */
int dctl_print_result(const dop_result *r, bool json);
int dctl_print_files(const dl_snapshot *s, bool json);
int dctl_print_history(dl_table *t, bool json);
int dctl_print_changes(dl_table *t, int64_t from, int64_t to, bool json);

#endif
