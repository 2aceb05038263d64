/* deltactl.c: the deltad command-line client. Dispatches the first word to a command
 * group; each group lives in its own deltactl_<group>.c. */
#include <stdio.h>
#include <string.h>

#include "cmd/deltactl_table.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: deltactl [--server HOST:PORT] [--token T | --token-file F]\n"
          "                [--output table|json] GROUP VERB [ARGS...]\n"
          "groups:\n"
          "  table   Delta table commands (detail, files, history, changes)\n");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "table") == 0) return dctl_table_main(argc - i, argv + i);
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
  }
  usage(stderr);
  return 2;
}
