/* ex_skip.c: data skipping (placeholder while being written). */
#include "store/expr/ex_int.h"
