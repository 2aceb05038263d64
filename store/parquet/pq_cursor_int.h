/* pq_cursor_int.h: the cursor's internal state, shared by pq_cursor.c (projection, row
 * group streaming) and pq_assemble.c (building nested rows from levels). */
#ifndef DD_STORE_PARQUET_PQ_CURSOR_INT_H
#define DD_STORE_PARQUET_PQ_CURSOR_INT_H

#include "store/parquet/pq_internal.h"

/* One node of the assembly plan, parallel to a pq_pnode. */
typedef struct pq__an pq__an;
struct pq__an {
  pq_shape shape;
  int16_t opt_def;  /* > 0: the node is null when the entry's def level is below this */
  int16_t rep_def;  /* LIST/MAP: an element exists when def >= rep_def */
  int16_t rep_lvl;  /* LIST/MAP: repetition level that continues this list */
  uint32_t lo, hi;  /* the cursor columns (leaves) under this node: [lo, hi) */
  uint32_t nkids;
  pq__an *kids;
};

struct pq_cursor {
  const pq_file *f;
  pq__arena plan;          /* pnodes and the assembly plan */
  pq_pnode *proot;
  pq__an *aroot;
  size_t ncols;
  uint32_t *leaf_ids;      /* file leaf index of each cursor column */
  pq__col *cols;
  size_t *pos, *vpos;      /* per column: next level entry, next value */
  size_t rg, rg_end;       /* current and one-past-last row group */
  bool loaded;
  int64_t row_in_rg, rows_in_rg;
  pq__arena rowmem;        /* the current row */
  pq_value *stack;         /* elements of lists under construction */
  size_t sp, scap;
  pq_value row;
  int failed;              /* a cursor that failed stays failed */
};

int pq__assemble_row(pq_cursor *k, pq_value *out);
int pq__check_row_end(pq_cursor *k);
int pq__check_rg_end(pq_cursor *k);

#endif
