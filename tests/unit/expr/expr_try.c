/* expr_try.c: prints the result of each expression given as an argument over the unit-test
 * fixture table (a debugging aid for tests/unit/expr). */
#include "tests/unit/expr/expr_fixture.h"

int main(int argc, char **argv) {
  fx f;
  fx_open(&f);
  for (int i = 1; i < argc; i++) {
    char *r = fx_eval(&f, argv[i]);
    printf("%s  =>  %s\n", argv[i], r);
    free(r);
  }
  fx_close(&f);
  return 0;
}
