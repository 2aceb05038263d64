/* txi_int.h: internals of store/textin: the parsed text as string cells (txi_parse.c),
 * typed into Arrow batches by txi_read.c. */
#ifndef DD_STORE_TEXTIN_TXI_INT_H
#define DD_STORE_TEXTIN_TXI_INT_H

#include "store/textin/txi.h"

#include "common/err.h"

/* JSON inference: the kind that holds every non-null value of a column so far. */
enum { TXI__K_NONE, TXI__K_BOOL, TXI__K_LONG, TXI__K_DOUBLE, TXI__K_STRING };

typedef struct txi__row {
  char **cells; /* [n] malloc'ed text, NULL for null; columns past n are null */
  size_t n;
} txi__row;

typedef struct txi__table {
  char **names; /* [ncols] as the file has them (CSV header order, JSON first-seen order) */
  int *kinds;   /* [ncols] TXI__K_* (JSON only) */
  size_t ncols, capcols;
  txi__row *rows;
  size_t nrows, caprows;
} txi__table;

int txi__parse_csv(txi__table *t, const char *text, size_t len);
int txi__parse_json(txi__table *t, const char *text, size_t len);
void txi__table_free(txi__table *t);

#endif
