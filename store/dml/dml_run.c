/* dml_run.c: DELETE and UPDATE (see dml.h): one pass over the snapshot's active files
 * inside a transaction. Each candidate file (kept by data skipping) joins the read set;
 * a metadata-only DELETE removes it whole; otherwise a first scan looks for a matched row
 * (stopping at the first batch with one) and, when there is one, a second scan rewrites
 * the file through the data writer. A copy-on-write DELETE or UPDATE without the change
 * data feed and without routed rows lists its candidate files first and rewrites them on
 * DML__WORKERS threads (dml_par.c; each thread a file at a time, reading a file once,
 * streamed into its writer while the predicate is evaluated, after a file that had a matched
 * row, and looking for a matched row first after one that had none), the commit's actions
 * then taken in the files' order, as one thread takes them. An UPDATE that assigns a
 * partition column sends every row it writes through the partition router instead
 * (dml_route.c), so updated rows land in the files of their new partition. Then one commit
 * with Delta's commitInfo. */
#include "store/dml/dml_merge_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/dwrite/dw.h"
#include "store/optimize/opt_filter.h"
#include "store/scan/scn.h"

/* A candidate file of the parallel copy-on-write: had it a matched row? */
typedef struct cand {
  bool any;
} cand;

typedef struct run {
  dl_table *t;
  dl_snapshot *s;
  const dml_opts *o;
  bool update;
  dml__bound b;
  ex_skipper *sk;
  opt_filter *pf;   /* metadata-only DELETE: the predicate on each file's partition values */
  dl_txn *x;
  dw_writer **ws;   /* one per rewritten file: deleted when the operation fails */
  size_t nw, capw;
  bool use_dv;      /* delta.enableDeletionVectors with the deletionVectors feature */
  dml__dvfile dvf;  /* the operation's deletion vectors */
  dml__cdc cdc;     /* the change data feed (when the table has it on) */
  dml__router rt;   /* UPDATE of a partition column: every new row goes to its partition */
  bool routed;
  uint8_t *mask;
  size_t mask_cap;
  size_t *idx;
  dml_result *res;
  int64_t now;
  /* Scans that only look for matched rows read only the predicate's columns: */
  const char **pcols;  /* its top-level columns (NULL: read every column) */
  size_t npcols;
  ex_node *ppred;      /* the predicate bound over the projected scan's schema */
  /* The parallel copy-on-write (par): the candidates in log order, and what each had. */
  bool par;
  unsigned scan_threads; /* decode threads of each scan (0: the scan's default) */
  dml__par pc;
  cand *cs;              /* [pc.n] */
  /* Row tracking enabled: rewrites keep rows' ids and commit versions (dml_rowtrack.c) */
  bool rtrack;
  arw_schema *rts;       /* the updated rows' schema: the table's and the two columns */
} run;


static const char *op_name(const run *r) { return r->update ? "UPDATE" : "DELETE"; }

/* mask[0..n) of predicate pred over b (all ones without one); *ones counts them. */
static int eval_pred(run *r, const ex_node *pred, const arw_batch *b, size_t *ones) {
  size_t n = arw_batch_rows(b);
  if (n + 1 > r->mask_cap) {
    uint8_t *m = realloc(r->mask, n + 1);
    size_t *ix = realloc(r->idx, (n + 1) * sizeof *ix);
    if (m) r->mask = m;
    if (ix) r->idx = ix;
    if (!m || !ix) return dml__oom();
    r->mask_cap = n + 1;
  }
  if (!pred) {
    memset(r->mask, 1, n);
    *ones = n;
    return 0;
  }
  return ex_eval_mask(pred, b, r->mask, ones);
}

static int eval_mask(run *r, const arw_batch *b, size_t *ones) { return eval_pred(r, r->b.pred, b, ones); }

/* The top-level columns bound predicate e reads, into r->pcols (names borrowed from e). */
static int collect_cols(run *r, const ex_node *e) {
  if (ex_node_kind(e) == EX_COLUMN) {
    size_t n = 0;
    const char *const *p = ex_column_parts(e, &n);
    for (size_t i = 0; n && i < r->npcols; i++)
      if (!strcasecmp(r->pcols[i], p[0])) return 0;
    const char **v = n ? realloc(r->pcols, (r->npcols + 1) * sizeof *v) : r->pcols;
    if (n && !v) return dml__oom();
    if (n) r->pcols = v, r->pcols[r->npcols++] = p[0];
    return 0;
  }
  int rc = 0;
  for (size_t i = 0; !rc && i < ex_nargs(e); i++) rc = collect_cols(r, ex_arg(e, i));
  return rc;
}

/* A scan of file f's predicate columns only (every column when r->pcols is NULL), the
 * projected predicate bound on first use. */
static int open_pred_scan(run *r, const dl_file *f, scn_scan **sc) {
  int rc = dml__open_scan(sc, r->t, r->s, f->path, r->o->batch_rows, r->o->roots, r->o->num_roots, r->pcols,
                          r->npcols, r->scan_threads, false);
  if (rc || !r->pcols || r->ppred) return rc;
  ex_node *parsed = NULL;
  const ex_node *e = r->o->predicate;
  if (!e) rc = ex_parse(&parsed, r->o->predicate_sql, strlen(r->o->predicate_sql), NULL), e = parsed;
  if (!rc) rc = ex_bind(&r->ppred, e, scn_schema(*sc), NULL);
  ex_free(parsed);
  return rc;
}

static const ex_node *pred_of_scan(const run *r) { return r->pcols ? r->ppred : r->b.pred; }

static int open_scan(run *r, const dl_file *f, scn_scan **sc) {
  return dml__open_scan(sc, r->t, r->s, f->path, r->o->batch_rows, r->o->roots, r->o->num_roots, NULL, 0,
                        r->scan_threads, r->rtrack);
}

/* Pass 1: does file f hold a matched row? (Reads the predicate's columns only.) */
static int has_match(run *r, const dl_file *f, bool *any) {
  scn_scan *sc = NULL;
  const arw_batch *b = NULL;
  size_t ones = 0;
  *any = false;
  int rc = open_pred_scan(r, f, &sc);
  while (!rc && !*any && !(rc = scn_next(sc, &b)) && b)
    if (!(rc = eval_pred(r, pred_of_scan(r), b, &ones))) *any = ones > 0;
  scn_free(sc);
  r->res->num_files_read++;
  return rc;
}

/* UPDATE of one batch with matched rows (matched: r->mask, NULL: every row): the new values
 * of every row, checked, with their row ids and commit versions under row tracking. */
static int update_batch(run *r, const arw_batch *in, const uint8_t *matched, arw_batch **out) {
  int rc = dml__check_not_null(&r->b, in);
  if (!rc) rc = arw_batch_new(out, r->rtrack ? r->rts : r->b.schema);
  for (size_t i = 0; !rc && i < r->b.ncols; i++)
    rc = ex_eval(r->b.outs[i], in, *out, arw_schema_column(r->b.schema, i));
  if (!rc && r->rtrack) rc = dml__rt_append(*out, in, matched);
  if (!rc) rc = dml__check_constraints(&r->b, *out);
  return rc;
}

/* Rows into the file's writer, or, when rows may change partition, to the router. */
static int out_write(run *r, dw_writer *w, const arw_batch *b) {
  return r->routed ? dml__router_write(&r->rt, b) : dw_write(w, b);
}

/* Batch b, whose mask (ones matched rows) is in r->mask, without its deleted rows / with
 * its updated ones, into w. */
static int write_masked(run *r, dw_writer *w, const arw_batch *b, size_t ones) {
  size_t n = arw_batch_rows(b), kept = 0;
  arw_batch *nb = NULL;
  int rc = 0;
  r->res->num_affected_rows += (int64_t)ones;
  r->res->num_copied_rows += (int64_t)(n - ones);
  if (!ones) return out_write(r, w, b);
  size_t nm = 0;
  for (size_t i = 0; i < n && r->cdc.on; i++)
    if (r->mask[i]) r->idx[nm++] = i;
  rc = dml__cdc_write(&r->cdc, b, r->idx, nm, r->update ? DML__CH_PRE : DML__CH_DELETE);
  if (rc) return rc;
  if (r->update) {
    rc = update_batch(r, b, r->mask, &nb);
    if (!rc) rc = dml__cdc_write(&r->cdc, nb, r->idx, nm, DML__CH_POST);
  } else {
    for (size_t i = 0; i < n; i++)
      if (!r->mask[i]) r->idx[kept++] = i;
    rc = kept ? arw_batch_take(&nb, b, r->idx, kept) : 0;
  }
  if (!rc && nb) rc = out_write(r, w, nb);
  arw_batch_free(nb);
  return rc;
}

static int write_batch(run *r, dw_writer *w, const arw_batch *b) {
  size_t ones = 0;
  int rc = eval_mask(r, b, &ones);
  return rc ? rc : write_masked(r, w, b, ones);
}

static int add_writer(run *r, dw_writer *w) {
  void *v = r->ws;
  int rc = dml__reserve(&v, &r->capw, r->nw, sizeof *r->ws);
  r->ws = v;
  if (rc) return rc;
  r->ws[r->nw++] = w;
  return 0;
}

static int remove_file(run *r, const dl_file *f) {
  r->res->num_removed_files++;
  r->res->num_removed_bytes += f->size > 0 ? f->size : 0;
  r->res->num_dvs_removed += f->dv != NULL;
  return dml__remove(r->x, f, r->now);
}

/* Pass 2: file f rewritten without its deleted rows / with its updated ones, into *w
 * (opened here, the caller's to free; none when rows are routed). */
static int rewrite_data(run *r, const dl_file *f, dw_writer **w) {
  scn_scan *sc = NULL;
  dw_opts wo = DW_OPTS_INIT;
  wo.codec = r->o->codec;
  wo.partition_values = f->partition_values;
  wo.row_tracking = r->rtrack;
  const arw_batch *b = NULL;
  int rc = open_scan(r, f, &sc);
  if (!rc && !r->routed) rc = dw_open(w, r->t, r->s, r->b.schema, &wo);
  while (!rc && !(rc = scn_next(sc, &b)) && b) rc = write_batch(r, *w, b);
  if (!rc && *w) rc = dw_finish(*w);
  scn_free(sc);
  return rc;
}

/* Writer w's files added to the transaction; w joins r->ws (NULL: nothing). */
static int take_adds(run *r, dw_writer *w) {
  int rc = w ? add_writer(r, w) : 0;
  if (rc) {
    dw_abort(w);
    dw_free(w);
    return rc;
  }
  for (size_t i = 0; !rc && w && i < dw_num_files(w); i++) {
    const dl_file *a = dw_file(w, i);
    r->res->num_added_files++;
    r->res->num_added_bytes += a->size;
    rc = dl_txn_add_file(r->x, a);
  }
  return rc;
}

/* File f's rewrite w into the transaction: f removed, w's files added. */
static int take_rewrite(run *r, const dl_file *f, dw_writer *w) {
  int rc = remove_file(r, f);
  if (rc) dw_abort(w), dw_free(w);
  return rc ? rc : take_adds(r, w);
}

static int rewrite(run *r, const dl_file *f) {
  dw_writer *w = NULL;
  int rc = rewrite_data(r, f, &w);
  if (rc && w) dw_abort(w), dw_free(w);
  return rc ? rc : take_rewrite(r, f, w);
}

/* ---- deletion vectors -------------------------------------------------------------------- */

/* UPDATE's matched rows idx[0..k) of b, updated, into the writer (opened on first use). */
static int write_updated(run *r, const dl_file *f, const arw_batch *b, size_t k, dw_writer **w) {
  arw_batch *m = NULL, *u = NULL;
  int rc = arw_batch_take(&m, b, r->idx, k);
  if (!rc && !*w && !r->routed) {
    dw_opts wo = DW_OPTS_INIT;
    wo.codec = r->o->codec;
    wo.partition_values = f->partition_values;
    wo.row_tracking = r->rtrack;
    rc = dw_open(w, r->t, r->s, r->b.schema, &wo);
    if (!rc && (rc = add_writer(r, *w))) dw_free(*w), *w = NULL;
  }
  if (!rc) rc = update_batch(r, m, NULL, &u);
  if (!rc) rc = out_write(r, *w, u);
  if (!rc) rc = dml__cdc_write(&r->cdc, m, NULL, k, DML__CH_PRE);
  if (!rc) rc = dml__cdc_write(&r->cdc, u, NULL, k, DML__CH_POST);
  arw_batch_free(u);
  arw_batch_free(m);
  return rc;
}

/* The matched rows' positions in file f (its old deletion vector's rows skipped), and
 * for UPDATE their new values written. */
static int mark_rows(run *r, const dl_file *f, const dl_rowset *old, uint64_t **del, size_t *nd,
                     dw_writer **w) {
  scn_scan *sc = NULL;
  const arw_batch *b = NULL;
  size_t cap = 0, oi = 0;
  uint64_t pos = 0;
  /* a DELETE without the change data feed needs only the predicate's columns */
  bool proj = !r->update && !r->cdc.on;
  int rc = proj ? open_pred_scan(r, f, &sc) : open_scan(r, f, &sc);
  while (!rc && !(rc = scn_next(sc, &b)) && b) {
    size_t n = arw_batch_rows(b), ones = 0, k = 0;
    if ((rc = eval_pred(r, proj ? pred_of_scan(r) : r->b.pred, b, &ones))) break;
    r->res->num_affected_rows += (int64_t)ones;
    for (size_t j = 0; j < n && !rc; j++, pos++) {
      while (oi < old->count && old->rows[oi] == pos) oi++, pos++;
      if (!r->mask[j]) continue;
      r->idx[k++] = j;
      rc = dml__push_u64(del, nd, &cap, pos);
    }
    if (!rc && r->update && k) rc = write_updated(r, f, b, k, w);
    if (!rc && !r->update) rc = dml__cdc_write(&r->cdc, b, r->idx, k, DML__CH_DELETE);
  }
  scn_free(sc);
  return rc;
}

static int64_t file_rows(const dl_file *f);

/* File f with a matched row, by deletion vector: the old file stays with the union of its
 * deletion vector and the matched rows (a file left without rows is removed instead);
 * UPDATE's new rows go to a new file. */
static int dv_file(run *r, const dl_file *f) {
  dl_rowset old = {0};
  uint64_t *del = NULL, *all = NULL;
  size_t nd = 0, na = 0;
  dw_writer *w = NULL;
  int rc = f->dv ? dl_dv_load(&old, r->t, f->dv) : 0;
  if (!rc) rc = mark_rows(r, f, &old, &del, &nd, &w);
  if (!rc) rc = dml__rows_union(&all, &na, old.rows, old.count, del, nd);
  if (!rc && w) rc = dw_finish(w);
  int64_t records = f->stats ? file_rows(f) + (f->dv ? f->dv->cardinality : 0) : -1;
  if (rc) {
  } else if (records >= 0 && (int64_t)na >= records) {
    /* every row is gone: the file goes (as Delta, whose UPDATE then counts no bytes and no
     * removed deletion vector) */
    int64_t bytes = r->res->num_removed_bytes, dvs = r->res->num_dvs_removed;
    rc = remove_file(r, f);
    if (r->update) r->res->num_removed_bytes = bytes, r->res->num_dvs_removed = dvs;
  } else {
    rc = dml__replace_dv(r->x, &r->dvf, f, all, na, r->now);
    r->res->num_dvs_added += !f->dv;
    r->res->num_dvs_updated += f->dv != NULL;
    r->res->num_removed_files += r->update; /* as Delta counts them */
    r->res->num_changed_files++;
  }
  for (size_t i = 0; !rc && w && i < dw_num_files(w); i++) {
    const dl_file *a = dw_file(w, i);
    r->res->num_added_files++;
    r->res->num_added_bytes += a->size;
    rc = dl_txn_add_file(r->x, a);
  }
  free(all);
  free(del);
  dl_rowset_free(&old);
  return rc;
}

/* Logical rows of a file from its stats (-1 unknown). */
static int64_t file_rows(const dl_file *f) {
  dl_stats *st = NULL;
  int64_t n = -1;
  if (f->stats && dl_stats_parse(&st, f->stats) == 0) n = dl_stats_num_records(st);
  dl_stats_free(st);
  if (n >= 0 && f->dv) n -= f->dv->cardinality;
  return n;
}

/* ---- copy-on-write on several threads ----------------------------------------------------- */

/* Each worker writes the rows of every file it rewrites into one data writer for as long as
 * the files' partition stays the same (a new writer when it changes), cut at this size, so a
 * rewrite of many small files adds few files (as Spark's tasks pack small files). */
#define DML__FILE_BYTES ((int64_t)128 << 20)

typedef struct worker {
  run r;             /* the operation's run with its own buffers and counters */
  run *m;            /* the operation's run */
  dml_result res;
  bool last_any;     /* the worker's last file had a matched row */
  dw_writer **ws;    /* its writers; the last one open (while cur) */
  char **pvs;        /* [nws] their packed partition values */
  size_t nws, capws;
  bool cur;
} worker;

static size_t pv_len(const char *pv) {
  const char *c = pv, *k, *v;
  while (dl_kv_next(&c, &k, &v)) {
  }
  return (size_t)(c - pv) + 1;
}

/* The worker's open writer for partition values pv, a new one when they changed. */
static int worker_writer(worker *w, const char *pv, dw_writer **out) {
  size_t len = pv_len(pv);
  if (w->cur && !memcmp(w->pvs[w->nws - 1], pv, len)) return *out = w->ws[w->nws - 1], 0;
  int rc = w->cur ? dw_finish(w->ws[w->nws - 1]) : 0;
  w->cur = false;
  void *a = w->ws, *b = w->pvs;
  size_t ca = w->capws, cb = w->capws;
  if (!rc) rc = dml__reserve(&a, &ca, w->nws, sizeof *w->ws);
  w->ws = a;
  if (!rc) rc = dml__reserve(&b, &cb, w->nws, sizeof *w->pvs);
  w->pvs = b;
  if (rc) return rc;
  w->capws = ca;
  char *copy = malloc(len);
  if (!copy) return dml__oom();
  memcpy(copy, pv, len);
  dw_opts wo = DW_OPTS_INIT;
  wo.codec = w->r.o->codec;
  wo.partition_values = copy;
  wo.target_file_bytes = DML__FILE_BYTES;
  wo.row_tracking = w->r.rtrack;
  dw_writer *dw = NULL;
  if ((rc = dw_open(&dw, w->r.t, w->r.s, w->r.b.schema, &wo))) {
    free(copy);
    return rc;
  }
  w->ws[w->nws] = dw, w->pvs[w->nws++] = copy, w->cur = true;
  *out = dw;
  return 0;
}

/* Rows of batch b (all of them) copied into *held (made on first use). */
static int hold_rows(run *r, const scn_scan *sc, const arw_batch *b, arw_batch **held) {
  size_t n = arw_batch_rows(b);
  for (size_t i = 0; i < n; i++) r->idx[i] = i;
  int rc = *held ? 0 : arw_batch_new(held, scn_schema(sc));
  return rc ? rc : arw_batch_append_rows(*held, b, r->idx, n);
}

/* File f read once, its rows evaluated and written into the worker's writer from its first
 * batch with a matched row on; the batches before that one are held (copied) until it comes,
 * and dropped when no row matched (*any false: the file stays). */
static int rewrite_into(worker *w, const dl_file *f, bool *any) {
  run *r = &w->r;
  scn_scan *sc = NULL;
  const arw_batch *b = NULL;
  arw_batch *held = NULL;
  dw_writer *dw = NULL;
  *any = false;
  int rc = open_scan(r, f, &sc);
  while (!rc && !(rc = scn_next(sc, &b)) && b) {
    size_t ones = 0;
    if ((rc = eval_mask(r, b, &ones))) break;
    if (!*any && !ones) {
      rc = hold_rows(r, sc, b, &held);
      continue;
    }
    if (!*any) {
      *any = true;
      rc = worker_writer(w, f->partition_values, &dw);
      if (!rc && held) rc = out_write(r, dw, held);
      if (!rc && held) r->res->num_copied_rows += (int64_t)arw_batch_rows(held);
    }
    if (!rc) rc = write_masked(r, dw, b, ones);
  }
  r->res->num_files_read++;
  arw_batch_free(held);
  scn_free(sc);
  return rc;
}

/* One candidate: rewritten when it has a matched row. After a file with a matched row the
 * next is read once (rewrite_into); after one without, its predicate's columns are looked
 * at first and it is read again only when one matched. */
static int par_file(void *ctx, const dl_file *f, size_t i) {
  worker *w = ctx;
  run *r = &w->r;
  bool *any = &w->m->cs[i].any;
  int64_t t0 = dml__mono_ms();
  int rc = 0;
  if (!w->last_any) {
    rc = has_match(r, f, any);
    r->res->scan_ms += dml__mono_ms() - t0;
    t0 = dml__mono_ms();
    if (!rc && !*any) return (w->last_any = false), 0;
    r->res->num_files_read--; /* the same file again */
  }
  if (!rc) rc = rewrite_into(w, f, any);
  r->res->rewrite_ms += dml__mono_ms() - t0;
  w->last_any = *any;
  return rc;
}

/* The last writer of a worker, finished on its thread. */
static int par_end(void *ctx) {
  worker *w = ctx;
  bool open = w->cur;
  w->cur = false;
  return open ? dw_finish(w->ws[w->nws - 1]) : 0;
}

/* The remove action of candidate i when it had a matched row. */
static int take_cb(void *ctx, const dl_file *f, size_t i) {
  run *r = ctx;
  return r->cs[i].any ? remove_file(r, f) : 0;
}

/* The workers' counters into the run's; their writers into r->ws (after an error too, so
 * that the run's end deletes their files). */
static int par_gather(run *r, worker *ws, size_t n, int rc) {
  for (size_t i = 0; i < n; i++) {
    worker *w = &ws[i];
    const dml_result *q = &w->res;
    r->res->num_files_read += q->num_files_read;
    r->res->num_affected_rows += q->num_affected_rows;
    r->res->num_copied_rows += q->num_copied_rows;
    r->res->scan_ms += q->scan_ms;
    r->res->rewrite_ms += q->rewrite_ms;
    for (size_t k = 0; k < w->nws; k++) {
      if (rc) dw_abort(w->ws[k]), dw_free(w->ws[k]);
      else rc = take_adds(r, w->ws[k]);
      free(w->pvs[k]);
    }
    free(w->ws), free(w->pvs);
    free(w->r.mask), free(w->r.idx), ex_free(w->r.ppred);
  }
  return rc;
}

/* The candidates rewritten by the workers; the removes taken in the candidates' order, then
 * the workers' files. */
static int par_run(run *r) {
  worker ws[DML__WORKERS];
  void *ctx[DML__WORKERS];
  size_t n = dml__par_workers(&r->pc);
  r->cs = calloc(r->pc.n, sizeof *r->cs);
  if (!r->cs) return dml__oom();
  for (size_t i = 0; i < n; i++) {
    worker *w = &ws[i];
    *w = (worker){.r = *r, .m = r, .last_any = true};
    w->r.res = &w->res;
    w->r.mask = NULL, w->r.idx = NULL, w->r.mask_cap = 0, w->r.ppred = NULL;
    w->r.scan_threads = 1; /* the workers are the parallelism */
    ctx[i] = w;
  }
  int rc = dml__par_run(&r->pc, r->s, ctx, par_file, par_end);
  if (!rc) rc = dml__par_each(&r->pc, r->s, r, take_cb);
  return par_gather(r, ws, n, rc);
}

static void par_free(run *r) {
  free(r->cs);
  dml__par_free(&r->pc);
}

static int file_cb(void *ctx, const dl_file *f) {
  run *r = ctx;
  r->res->num_files_considered++;
  if (r->sk && !ex_skipper_keep(r->sk, f)) return 0;
  int rc = dl_txn_read_file(r->x, f->path);
  if (rc) return rc;
  if (!r->update && r->b.partition_only) {
    bool match = true; /* an error evaluating the partition predicate fails the DELETE */
    if (r->pf && (rc = opt_filter_match(r->pf, f, &match))) return dd_err_wrap(rc, "DELETE condition on partition values of %s", f->path);
    if (!match) return 0;
    int64_t n = file_rows(f);
    if (n < 0 || r->res->num_affected_rows < 0) r->res->num_affected_rows = -1;
    else r->res->num_affected_rows += n;
    return remove_file(r, f);
  }
  if (r->par) return dml__par_add(&r->pc, f->path);
  int64_t t0 = dml__mono_ms();
  bool any = false;
  rc = has_match(r, f, &any);
  int64_t t1 = dml__mono_ms();
  r->res->scan_ms += t1 - t0;
  if (!rc && any) rc = r->use_dv ? dv_file(r, f) : rewrite(r, f);
  r->res->rewrite_ms += dml__mono_ms() - t1;
  return rc;
}

/* ---- the commit ------------------------------------------------------------------------ */

static int commit(run *r) {
  char *params = NULL, *metrics = NULL, *pred = NULL;
  json_t *a = json_array();
  if (a && r->b.pred_sql) json_array_append_new(a, json_string(r->b.pred_sql));
  else if (a && !r->update) json_array_append_new(a, json_string("true")); /* UPDATE: [] */
  pred = a ? json_dumps(a, JSON_COMPACT) : NULL;
  json_decref(a);
  json_t *p = pred ? json_pack("{s:s}", "predicate", pred) : NULL;
  params = p ? json_dumps(p, JSON_COMPACT) : NULL;
  json_decref(p);
  free(pred);
  int rc = params ? dml_metrics_json(&metrics, r->res) : dml__oom();
  if (!rc) rc = dml__commit(r->x, op_name(r), params, metrics, r->o->max_retries, r->o->now_ms, &r->res->version);
  free(params);
  free(metrics);
  return rc;
}

/* ---- entry ------------------------------------------------------------------------------ */

static int dml_run(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts, bool update) {
  memset(out, 0, sizeof *out);
  out->version = -1;
  out->is_update = update;
  int64_t start = dml__mono_ms();
  dml_opts def = DML_OPTS_INIT;
  run r = {.t = t, .s = s, .o = opts ? opts : &def, .update = update, .res = out};
  r.now = r.o->now_ms ? r.o->now_ms : dml__wall_ms();
  r.use_dv = dml__use_dv(s);
  int rc = dml__check_table(s, op_name(&r), false);
  if (!rc) rc = dml__bind(&r.b, s, r.o, update);
  r.rtrack = dl_rowtrack_enabled(s);
  if (!rc && r.rtrack) rc = dml__rt_schema(&r.rts, &r.b, s);
  if (!rc && r.b.pred && (r.o->predicate || r.o->predicate_sql)) rc = collect_cols(&r, r.b.pred);
  if (!rc && !r.npcols) free(r.pcols), r.pcols = NULL; /* a constant predicate: read as before */
  if (!rc) rc = dml__cdc_init(&r.cdc, t, s, r.b.schema, r.o->codec);
  if (!rc && update && r.b.moves_partitions &&
      !(rc = dml__router_init(&r.rt, t, s, r.b.schema, r.o->codec, false))) {
    r.routed = true;
    r.rt.row_tracking = r.rtrack;
  }
  if (!rc && r.b.pred) rc = ex_skipper_new(&r.sk, r.b.pred, s);
  /* Whole files go only on the exact answer of the partition filter, which takes SQL text:
   * a predicate given as a tree, or one the filter cannot evaluate, reads the files. */
  if (!rc && !update && r.b.pred && r.b.partition_only &&
      (r.o->predicate || !r.o->predicate_sql || opt_filter_new(&r.pf, s, r.o->predicate_sql)))
    r.b.partition_only = false;
  out->metadata_only = !update && r.b.partition_only;
  if (!rc) rc = dl_txn_begin(&r.x, t, s);
  r.par = !r.use_dv && !r.cdc.on && !r.routed && !out->metadata_only;
  if (!rc) rc = dl_snapshot_files(s, file_cb, &r);
  if (!rc && r.par && r.pc.n) rc = par_run(&r);
  out->execution_ms = dml__mono_ms() - start;
  if (!rc && r.routed) {
    int64_t files = 0, bytes = 0;
    rc = dml__router_commit(&r.rt, r.x, &files, &bytes);
    out->num_added_files += files;
    out->num_added_bytes += bytes;
  }
  if (!rc) rc = dml__dv_put(&r.dvf, t);
  if (!rc) rc = dml__cdc_commit(&r.cdc, r.x, &out->num_change_files);
  if (!rc && (out->num_removed_files || out->num_changed_files)) rc = commit(&r);
  dml__cdc_free(&r.cdc, rc != 0);
  if (r.routed) dml__router_free(&r.rt, rc != 0);
  for (size_t i = 0; i < r.nw; i++) {
    if (rc) dw_abort(r.ws[i]);
    dw_free(r.ws[i]);
  }
  dml__dv_free(&r.dvf, t, rc != 0);
  if (rc) out->version = -1;
  par_free(&r);
  free(r.ws);
  free(r.mask);
  free(r.pcols);
  ex_free(r.ppred);
  free(r.idx);
  dl_txn_free(r.x);
  opt_filter_free(r.pf);
  ex_skipper_free(r.sk);
  dml__bound_free(&r.b);
  arw_schema_free(r.rts);
  return rc;
}

int dml_delete(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts) {
  return dml_run(out, t, s, opts, false);
}

int dml_update(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts) {
  return dml_run(out, t, s, opts, true);
}
