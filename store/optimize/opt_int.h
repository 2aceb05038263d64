/* opt_int.h: internals of OPTIMIZE, shared by opt_run.c (file selection, bins, the
 * rewrite and the commit), opt_zorder.c (Z-order keys and the row order), opt_zsort.c
 * (the Z-order of a partition in bounded memory), opt_finish.c (a bin's writer finished
 * behind the next bin) and opt_result.c (metrics as JSON and as Delta's result row). */
#ifndef DD_STORE_OPTIMIZE_OPT_INT_H
#define DD_STORE_OPTIMIZE_OPT_INT_H

#include "store/optimize/opt.h"

#include "common/err.h"
#include "store/dwrite/dw.h"

#include <pthread.h>

/* Row order of batch b (n rows) by the Z-order (or, hilbert set, the Hilbert curve) of
 * columns names[0..k): *out_idx malloc'ed (n entries). DD_EINVAL for a column that is
 * missing or nested. */
int opt__zorder_order(size_t **out_idx, const arw_batch *b, const char *const *names,
                      size_t k, bool hilbert);

/* The curve keys of n rows from their k columns of 32-bit ranks (opt_hilbert.c): with
 * hilbert, the ranks are replaced in place by their Hilbert transposition first (k at most
 * OPT_MAX_CURVE_COLUMNS; more and the Z-order is used), then interleaved as
 * opt_zorder_interleave does. */
#define OPT_MAX_CURVE_COLUMNS 64
void opt__curve_keys(uint64_t *keys, uint32_t *const *ranks, size_t k, size_t n, bool hilbert);

/* Order-preserving keys of column view v (n rows); valid[i] false for nulls. DD_EINVAL
 * for a kind that has no order. */
int opt__column_keys(uint64_t *key, bool *valid, const arw_view *v, size_t n);

/* ---- the Z-order sort of a partition in bounded memory (opt_zsort.c) ----
 * Rows come in (opt__zs_add) and go into an in-memory run of at most run_bytes Arrow
 * bytes. If every row fits, the run is ordered exactly as opt__zorder_order does. When the
 * run overflows, the ranks must hold for the whole partition: the caller feeds every row's
 * Z-order columns once (opt__zs_sample, a deterministic reservoir of OPT_ZS_SAMPLE rows,
 * exact up to that many rows) and calls opt__zs_ranks_done; then each full run is sorted
 * by its Z-keys and spilled to an unlinked temp file (Arrow IPC chunks with their keys),
 * and opt__zs_finish merges the runs. */
#define OPT_ZS_SAMPLE 65536
#define OPT_ZS_CHUNK_ROWS 1024 /* rows per spilled chunk: the merge holds one per run */
#define OPT_ZS_NEED_RANKS 1 /* opt__zs_add: feed the sample first, then add b again */
typedef struct opt__zsort opt__zsort;
typedef int (*opt__zs_emit_fn)(void *ctx, const arw_batch *b);
int opt__zs_new(opt__zsort **out, const arw_schema *s, const char *const *names, size_t k,
                bool hilbert, size_t run_bytes, const char *tmp_dir);
int opt__zs_add(opt__zsort *z, const arw_batch *b);
int opt__zs_sample(opt__zsort *z, const arw_batch *b);
int opt__zs_ranks_done(opt__zsort *z);
bool opt__zs_has_ranks(const opt__zsort *z);
size_t opt__zs_rows(const opt__zsort *z);
size_t opt__zs_runs_spilled(const opt__zsort *z);
/* Every row in Z-order, in batches of at most chunk rows that never cross a multiple of
 * cut rows (0: no cut). */
int opt__zs_finish(opt__zsort *z, size_t chunk, size_t cut, opt__zs_emit_fn emit, void *ctx);
void opt__zs_free(opt__zsort *z);

/* ---- a bin's writer finished on its own thread (opt_finish.c) ----
 * opt__finish_start runs dw_finish(w) on a thread (here when none can start); the caller
 * leaves w alone until opt__finish_wait, which returns dw_finish's result with its message.
 * One finish at a time per finisher. */
typedef struct opt__finisher {
  dw_writer *w;
  pthread_t th;
  bool running;
  int rc;
  char *msg; /* the thread's error message (dd_err_msg is per thread) */
} opt__finisher;
int opt__finish_start(opt__finisher *f, dw_writer *w);
int opt__finish_wait(opt__finisher *f);

/* ---- clustering (opt_cluster.c) ----
 * keep[i] for the files f[0..n) a clustering OPTIMIZE rewrites (see opt_cluster.c), for
 * clustering columns cols_json (a JSON list of their logical names). */
int opt__cluster_pick(bool *keep, const dl_file *const *f, size_t n, const char *cols_json,
                      bool full, int64_t min_cube);
/* The input side of clusteringStats (in_*) of the considered files f[0..n). */
int opt__cluster_input_stats(opt_result *r, const dl_file *const *f, size_t n);
/* The tags of one new ZCube's files: a fresh ZCUBE_ID and ZCUBE_ZORDER_BY = cols_json
 * (packed map, malloc'ed). */
int opt__cluster_tags(char **out, const char *cols_json);

/* Fills a file-size summary from n sizes (sorted ascending in place). */
void opt__file_stats(opt_file_stats *out, int64_t *sizes, size_t n);

#endif
