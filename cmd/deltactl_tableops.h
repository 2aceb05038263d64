/* deltactl_tableops.h: `deltactl table vacuum|restore|clone|upgrade|add-feature|
 * drop-feature|generate|create|convert|is-delta|history|detail`: Delta table maintenance,
 * against a server (DeltaConnectService) or in-process (--local, store/deltaops). */
#ifndef DD_CMD_DELTACTL_TABLEOPS_H
#define DD_CMD_DELTACTL_TABLEOPS_H

#include <stdbool.h>

/* argv[0] is "table". Returns the process exit code (0 only on success). */
int dctl_tableops_main(int argc, char **argv);
/* True for the verbs dctl_tableops_main serves. */
bool dctl_tableops_has_verb(const char *verb);
/* Dispatch of `table`: detail and the maintenance verbs here, the rest (files, changes;
 * history with --local or without a server) to dctl_table_main. */
int dctl_tableops_dispatch(int argc, char **argv);

/* Streams a DeltaConnectService request and prints its result rows; the exit code. */
struct ProtobufCMessage;
int dctl_tableops_remote(const char *method, const struct ProtobufCMessage *req);
/* `table optimize` (deltactl_optimize.c); argv[0] is "table". */
int dctl_optimize_main(int argc, char **argv);
/* `table delete` / `table update` (deltactl_dml.c); argv[0] is "table". */
int dctl_dml_main(int argc, char **argv);
/* `table merge` (deltactl_merge.c); argv[0] is "table". */
int dctl_merge_main(int argc, char **argv);
/* The catalog verbs (deltactl_tablereg.c): register, get, list, update (without --set or
 * --where among argv), drop, undrop, dropped. argv[0] is "table". */
#include <stdbool.h>
bool dctl_tablereg_has_verb(const char *verb, int argc, char **argv);
int dctl_tablereg_main(int argc, char **argv);

#endif
