/* deltactl_table.h: `deltactl table ...`, the Delta table commands of the CLI. The
 * argument handling is in deltactl_table.c, the rendering (JSON or text table) in
 * deltactl_table_print.c. */
#ifndef DD_CMD_DELTACTL_TABLE_H
#define DD_CMD_DELTACTL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

/* argv[0] is "table". Returns the process exit code (0 only on success). */
int dctl_table_main(int argc, char **argv);

/* The rendering half (deltactl_table_print.c). Each returns 0 or a DD_E* code. */
typedef struct dl_table dl_table;
typedef struct dl_snapshot dl_snapshot;
int dctl_print_detail(const dl_snapshot *s, bool json);
int dctl_print_files(const dl_snapshot *s, bool json);
int dctl_print_history(dl_table *t, bool json);
int dctl_print_changes(dl_table *t, int64_t from, int64_t to, bool json);

#endif
