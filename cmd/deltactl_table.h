/* deltactl_table.h: `deltactl table ...`, the Delta table commands of the CLI. */
#ifndef DD_CMD_DELTACTL_TABLE_H
#define DD_CMD_DELTACTL_TABLE_H

/* argv[0] is "table". Returns the process exit code (0 only on success). */
int dctl_table_main(int argc, char **argv);

#endif
