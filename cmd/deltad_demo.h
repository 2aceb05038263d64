/* deltad_demo.h: the `--demo` start-up: a catalog, a schema and a storage location to try
 * the API on, created through the call core like any call (reg serves the app's methods). */
#ifndef DD_CMD_DELTAD_DEMO_H
#define DD_CMD_DELTAD_DEMO_H

#include "server/call/call.h"

/* Creates what is missing of the demo objects; existing ones are left as they are. */
int dd_demo_setup(const dd_call_registry *reg, const char *data_dir);
/* Writes the demo Delta table at location (a directory) unless it already has a log. */
int dd_demo_table(const char *location);

#endif
