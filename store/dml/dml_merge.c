/* dml_merge.c: MERGE (see dml.h): the source materialised and hashed on the join keys,
 * one pass over the target's files (each batch joined, the clauses applied in order; a
 * file with a changed row rewritten copy-on-write or given a deletion vector), then the
 * unmatched source rows through the WHEN NOT MATCHED clauses, then one commit.
 * Copy-on-write without the change data feed lists the candidate files first and joins
 * them on DML__WORKERS threads (dml_par.c), each worker with its own partition router,
 * counters and matched-source flags (the plan, the source and its index shared, read
 * only); the removes are then taken in the files' order, the flags and counters summed,
 * and the inserts go through the first worker's router. On a table with row tracking the
 * target scans carry each row's id and commit version (dml_rowtrack.c): copied rows keep
 * both, updated rows (WHEN MATCHED or WHEN NOT MATCHED BY SOURCE) keep their id with a null
 * version (the new file's defaultRowCommitVersion), inserted rows have neither (fresh ids:
 * their file's baseRowId, which the commit assigns, plus their position). */
#include "store/dml/dml_merge_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/scan/scn.h"

enum { ACT_COPY = -1, ACT_DELETE = -2 };

typedef struct mrun {
  dl_table *t;
  dl_snapshot *s;
  const dml_merge_opts *o;
  dml__mplan p;
  arw_batch *src;        /* the source, one batch */
  arw_batch *skeys;      /* its key columns */
  dml__keyidx idx;
  uint8_t *smatched;     /* [source rows] matched by a target row */
  ex_skipper *sk;
  dl_txn *x;
  dml__router rt;
  bool rtrack;           /* row tracking: scans and writes carry the rows' ids and versions */
  arw_schema *rts;       /* then the schema of rewritten rows: the target's and those two */
  bool use_dv;
  dml__dvfile dvf;
  dml__cdc cdc;          /* the change data feed (when the table has it on) */
  bool cdc_inserts;      /* inserts go to the feed too (not in an inserts-only MERGE) */
  dml_merge_result *res;
  int64_t now;
  bool changed;          /* a file removed or marked */
  /* copy-on-write on several threads: */
  bool par;
  unsigned scan_threads; /* decode threads of each target scan (0: the scan's default) */
  dml__par pc;           /* the candidate files */
  uint8_t *rewritten;    /* [pc.n] the candidate had a changed row */
  dml__router *wrt;      /* the routers of workers 1.. (their files follow rt's) */
  size_t nwrt;
} mrun;

/* Per target batch: the pairs and each row's action. */
typedef struct fstate {
  size_t *pt, *ps;       /* candidate / matched pairs */
  size_t np, cap;
  int *cnt;              /* matches per target row */
  size_t *first;         /* its first matched source row */
  int *act;              /* ACT_COPY, ACT_DELETE, or the clause index of an update */
  size_t *ix;
  uint8_t *mask;
} fstate;


static int fs_reserve(fstate *f, size_t n) {
  f->cnt = realloc(f->cnt, (n + 1) * sizeof *f->cnt);
  f->first = realloc(f->first, (n + 1) * sizeof *f->first);
  f->act = realloc(f->act, (n + 1) * sizeof *f->act);
  f->ix = realloc(f->ix, (n + 1) * sizeof *f->ix);
  f->mask = realloc(f->mask, n + 1);
  return f->cnt && f->first && f->act && f->ix && f->mask ? 0 : dml__oom();
}

static int push_pair(fstate *f, size_t t, size_t s) {
  if (f->np == f->cap) {
    size_t c = f->cap ? f->cap * 2 : 1024;
    size_t *a = realloc(f->pt, c * sizeof *a);
    if (a) f->pt = a;
    size_t *b = a ? realloc(f->ps, c * sizeof *b) : NULL;
    if (b) f->ps = b;
    if (!a || !b) return dml__oom();
    f->cap = c;
  }
  f->pt[f->np] = t;
  f->ps[f->np++] = s;
  return 0;
}

static void fs_free(fstate *f) {
  free(f->pt), free(f->ps), free(f->cnt), free(f->first), free(f->act), free(f->ix), free(f->mask);
}

/* ---- the join of one target batch ----------------------------------------------------- */

static int candidates(mrun *r, fstate *f, const arw_batch *b) {
  size_t n = arw_batch_rows(b), ns = arw_batch_rows(r->src);
  f->np = 0;
  if (!r->p.nkeys) {
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
      for (size_t j = 0; j < ns && !rc; j++) rc = push_pair(f, i, j);
    return rc;
  }
  arw_batch *kb = NULL;
  dd_buf key = {0};
  int rc = dml__keys_eval(&kb, &r->p, r->p.tkey, b);
  for (size_t i = 0; i < n && !rc; i++) {
    bool null = false;
    key.len = 0;
    if ((rc = dml__key_row(&key, kb, i, &null)) || null) continue;
    const uint8_t *k = (const uint8_t *)key.p;
    for (int64_t j = dml__keyidx_first(&r->idx, k, key.len); j >= 0 && !rc;
         j = dml__keyidx_next(&r->idx, j, k, key.len))
      rc = push_pair(f, i, (size_t)j);
  }
  dd_buf_free(&key);
  arw_batch_free(kb);
  return rc;
}

/* The candidate pairs that satisfy the residual ON condition. */
static int residual(mrun *r, fstate *f, const arw_batch *b) {
  if (!r->p.residual || !f->np) return 0;
  arw_batch *pb = NULL;
  uint8_t *m = malloc(f->np + 1);
  int rc = m ? dml__mplan_pairs(&pb, &r->p, b, f->pt, r->src, f->ps, f->np) : dml__oom();
  if (!rc) rc = ex_eval_mask(r->p.residual, pb, m, NULL);
  size_t k = 0;
  for (size_t i = 0; !rc && i < f->np; i++)
    if (m[i]) f->pt[k] = f->pt[i], f->ps[k++] = f->ps[i];
  if (!rc) f->np = k;
  arw_batch_free(pb);
  free(m);
  return rc;
}

static int multi_match(void) {
  return dd_err_set(DD_EINVAL, "MERGE: [DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] Cannot "
                    "perform Merge as multiple source rows matched and attempted to modify the same "
                    "target row in the Delta table in possibly conflicting ways. By SQL semantics of "
                    "Merge, when multiple source rows match on the same target row, the result may be "
                    "ambiguous as it is unclear which source row should be used to update or delete "
                    "the matching target row. You can preprocess the source table to eliminate the "
                    "possibility of multiple matches.");
}

/* Decides act[] for the rows rows[0..k) of in (the clause kind's batch) by the clauses of
 * kind, the first whose condition holds. */
static int decide(mrun *r, fstate *f, dml_merge_kind kind, const arw_batch *in, const size_t *rows,
                  size_t k) {
  uint8_t *m = malloc(k + 1), *done = calloc(k + 1, 1);
  int rc = m && done ? 0 : dml__oom();
  for (size_t c = 0; c < r->p.ncl && !rc; c++) {
    const dml__mclause *cl = &r->p.cl[c];
    if (cl->kind != kind) continue;
    if (cl->cond) rc = ex_eval_mask(cl->cond, in, m, NULL);
    else memset(m, 1, k);
    for (size_t i = 0; i < k && !rc; i++) {
      if (done[i] || !m[i]) continue;
      done[i] = 1;
      f->act[rows[i]] = cl->action == DML_MERGE_DELETE ? ACT_DELETE : (int)c;
    }
  }
  free(m);
  free(done);
  return rc;
}

/* The change rows of one clause's rows: the target rows tgt[rows[ix[j]]] as preimages
 * and out as postimages, or out as inserts (tgt NULL). */
static int cdc_updates(mrun *r, const arw_batch *tgt, const size_t *rows, const size_t *ix,
                       size_t n, const arw_batch *out) {
  if (!r->cdc.on) return 0;
  if (!tgt) return r->cdc_inserts ? dml__cdc_write(&r->cdc, out, NULL, n, DML__CH_INSERT) : 0;
  size_t *ti = malloc((n + 1) * sizeof *ti);
  if (!ti) return dml__oom();
  for (size_t j = 0; j < n; j++) ti[j] = rows[ix[j]];
  int rc = dml__cdc_write(&r->cdc, tgt, ti, n, DML__CH_PRE);
  if (!rc) rc = dml__cdc_write(&r->cdc, out, NULL, n, DML__CH_POST);
  free(ti);
  return rc;
}

/* The new rows out of one clause's rows (outs over sel); under row tracking with the two
 * columns: for updated target rows tgt[rows[ix[j]]] their ids and null versions, for
 * inserts (tgt NULL) nulls. */
static int clause_out(mrun *r, arw_batch **out, ex_node *const *outs, const arw_batch *sel,
                      const arw_batch *tgt, const size_t *rows, const size_t *ix, size_t n) {
  bool upd = r->rtrack && tgt;
  size_t *ti = upd ? malloc((n + 1) * sizeof *ti) : NULL;
  if (upd && !ti) return dml__oom();
  for (size_t j = 0; upd && j < n; j++) ti[j] = rows[ix[j]];
  int rc = dml__mplan_eval_outs(out, &r->p, r->rtrack ? r->rts : NULL, outs, sel);
  if (!rc && upd) rc = dml__rt_append_updated(*out, tgt, ti, n);
  for (size_t k = 0; !rc && r->rtrack && !tgt && k < 2; k++)
    rc = arw_append_nulls(*out, arw_schema_column(r->rts, r->p.tb.ncols + k), n);
  if (rc) arw_batch_free(*out), *out = NULL;
  free(ti);
  return rc;
}

/* Rows of `in` (indexed by the batch rows their positions map to) updated by each UPDATE
 * clause, written; counts what each clause did. tgt: the target batch those rows index
 * (the change feed's preimages, the row ids), NULL for inserts. */
static int apply_updates(mrun *r, fstate *f, const arw_batch *in, const size_t *rows, size_t k,
                         bool matched, const arw_batch *tgt) {
  int rc = 0;
  for (size_t c = 0; c < r->p.ncl && !rc; c++) {
    size_t nsel = 0;
    for (size_t i = 0; i < k; i++)
      if (f->act[rows[i]] == (int)c) f->ix[nsel++] = i;
    if (!nsel) continue;
    arw_batch *sel = NULL, *out = NULL;
    rc = arw_batch_take(&sel, in, f->ix, nsel);
    if (!rc) rc = clause_out(r, &out, r->p.cl[c].outs, sel, tgt, rows, f->ix, nsel);
    if (!rc) rc = dml__router_write(&r->rt, out);
    if (!rc) rc = cdc_updates(r, tgt, rows, f->ix, nsel, out);
    *(matched ? &r->res->matched_updated : &r->res->nmbs_updated) += (int64_t)nsel;
    arw_batch_free(out);
    arw_batch_free(sel);
  }
  return rc;
}

/* Counts the deleted rows among rows[0..k) of target batch b and writes their change rows. */
static int count_deletes(mrun *r, const fstate *f, const arw_batch *b, const size_t *rows, size_t k,
                         int64_t *ctr) {
  size_t nd = 0;
  for (size_t i = 0; i < k; i++)
    if (f->act[rows[i]] == ACT_DELETE) f->ix[nd++] = rows[i];
  *ctr += (int64_t)nd;
  return dml__cdc_write(&r->cdc, b, f->ix, nd, DML__CH_DELETE);
}

/* One target batch: act[] for every row, updated rows written. */
static int join_batch(mrun *r, fstate *f, const arw_batch *b) {
  size_t n = arw_batch_rows(b);
  int rc = fs_reserve(f, n);
  if (!rc) rc = candidates(r, f, b);
  if (!rc) rc = residual(r, f, b);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) f->cnt[i] = 0, f->act[i] = ACT_COPY;
  for (size_t k = 0; k < f->np; k++) {
    if (!f->cnt[f->pt[k]]++) f->first[f->pt[k]] = f->ps[k];
    r->smatched[f->ps[k]] = 1;
  }
  bool check = r->p.has_matched || r->p.has_nmbs;
  size_t nm = 0, nu = 0;
  size_t *mrows = malloc((n + 1) * sizeof *mrows), *urows = malloc((n + 1) * sizeof *urows);
  size_t *srows = malloc((n + 1) * sizeof *srows);
  if (!mrows || !urows || !srows) rc = dml__oom();
  for (size_t i = 0; i < n && !rc; i++) {
    if (f->cnt[i] > 1 && check && !r->p.multi_ok) rc = multi_match();
    if (f->cnt[i]) mrows[nm] = i, srows[nm++] = f->first[i];
    else urows[nu++] = i;
  }
  if (!rc && nm && r->p.has_matched) {
    arw_batch *pb = NULL;
    rc = dml__mplan_pairs(&pb, &r->p, b, mrows, r->src, srows, nm);
    if (!rc) rc = decide(r, f, DML_MERGE_MATCHED, pb, mrows, nm);
    if (!rc) rc = apply_updates(r, f, pb, mrows, nm, true, b);
    if (!rc) rc = count_deletes(r, f, b, mrows, nm, &r->res->matched_deleted);
    arw_batch_free(pb);
  }
  if (!rc && nu && r->p.has_nmbs) {
    arw_batch *ub = NULL;
    rc = nu == n ? 0 : arw_batch_take(&ub, b, urows, nu);
    const arw_batch *in = ub ? ub : b;
    if (!rc) rc = decide(r, f, DML_MERGE_NOT_MATCHED_BY_SOURCE, in, urows, nu);
    if (!rc) rc = apply_updates(r, f, in, urows, nu, false, b);
    if (!rc) rc = count_deletes(r, f, b, urows, nu, &r->res->nmbs_deleted);
    arw_batch_free(ub);
  }
  free(mrows), free(urows), free(srows);
  return rc;
}

/* ---- one target file ------------------------------------------------------------------- */

static int remove_file(mrun *r, const dl_file *f) {
  r->res->files_removed++;
  r->res->bytes_removed += f->size > 0 ? f->size : 0;
  r->res->dvs_removed += f->dv != NULL;
  r->changed = true;
  return dml__remove(r->x, f, r->now);
}

/* File f by deletion vector: its old vector plus the changed rows del[0..nd). */
static int mark_file(mrun *r, const dl_file *f, const dl_rowset *old, uint64_t *del, size_t nd,
                     int64_t live) {
  uint64_t *all = NULL;
  size_t na = 0;
  if (dml__rows_union(&all, &na, old->rows, old->count, del, nd)) return dml__oom();
  int rc = 0;
  if ((int64_t)nd >= live) {
    rc = remove_file(r, f);
  } else {
    rc = dml__replace_dv(r->x, &r->dvf, f, all, na, r->now);
    r->res->dvs_added += !f->dv;
    r->res->dvs_updated += f->dv != NULL;
    r->res->files_removed++;
    r->changed = true;
  }
  free(all);
  return rc;
}

static int open_scan(mrun *r, const dl_file *f, scn_scan **sc) {
  return dml__open_scan(sc, r->t, r->s, f->path, r->o->batch_rows, r->o->roots, r->o->num_roots, NULL, 0,
                        r->scan_threads, r->rtrack);
}

/* File f joined; copy-on-write, its rows written to the router when one changed (*rewritten:
 * the caller removes it). */
static int do_file(mrun *r, const dl_file *f, bool *rewritten) {
  scn_scan *sc = NULL;
  const arw_batch *b = NULL;
  arw_batch *keep = NULL;  /* copy-on-write: the file's unchanged rows */
  dl_rowset old = {0};
  uint64_t *del = NULL, pos = 0;
  size_t nd = 0, cap = 0, oi = 0;
  int64_t live = 0, copied = 0;
  fstate st = {0};
  int64_t t0 = dml__mono_ms();
  int rc = r->use_dv && f->dv ? dl_dv_load(&old, r->t, f->dv) : 0;
  if (!rc) rc = open_scan(r, f, &sc);
  if (!rc && !r->use_dv) rc = arw_batch_new(&keep, r->rtrack ? r->rts : r->p.tb.schema);
  while (!rc && !(rc = scn_next(sc, &b)) && b) {
    size_t n = arw_batch_rows(b), nk = 0;
    live += (int64_t)n;
    if ((rc = join_batch(r, &st, b))) break;
    for (size_t i = 0; i < n && !rc; i++, pos++) {
      while (oi < old.count && old.rows[oi] == pos) oi++, pos++;
      if (st.act[i] == ACT_COPY) st.ix[nk++] = i;
      else if (r->use_dv) rc = dml__push_u64(&del, &nd, &cap, pos);
    }
    if (!rc && !r->use_dv && nk < n) nd += n - nk;
    if (!rc && keep && nk) rc = arw_batch_append_rows(keep, b, st.ix, nk);
    copied += (int64_t)nk;
  }
  scn_free(sc);
  int64_t t1 = dml__mono_ms();
  r->res->scan_ms += t1 - t0;
  if (!rc && nd && r->use_dv) {
    rc = mark_file(r, f, &old, del, nd, live);
  } else if (!rc && nd) {
    r->res->copied += copied;
    rc = dml__router_write(&r->rt, keep);
    *rewritten = !rc;
  }
  r->res->rewrite_ms += dml__mono_ms() - t1;
  arw_batch_free(keep);
  dl_rowset_free(&old);
  free(del);
  fs_free(&st);
  return rc;
}

static int file_cb(void *ctx, const dl_file *f) {
  mrun *r = ctx;
  r->res->files_before_skipping++;
  if (r->sk && !ex_skipper_keep(r->sk, f)) return 0;
  r->res->files_after_skipping++;
  int rc = dl_txn_read_file(r->x, f->path);
  if (rc || r->par) return rc ? rc : dml__par_add(&r->pc, f->path);
  bool rewritten = false;
  rc = do_file(r, f, &rewritten);
  return !rc && rewritten ? remove_file(r, f) : rc;
}

/* ---- copy-on-write on several threads ---------------------------------------------------- */

typedef struct mworker {
  mrun r;                /* the run with its own router, counters and matched flags */
  mrun *m;
  dml_merge_result res;
} mworker;

static int par_file(void *ctx, const dl_file *f, size_t i) {
  mworker *w = ctx;
  bool rewritten = false;
  int rc = do_file(&w->r, f, &rewritten);
  w->m->rewritten[i] = rewritten;
  return rc;
}

static int take_cb(void *ctx, const dl_file *f, size_t i) {
  mrun *r = ctx;
  return r->rewritten[i] ? remove_file(r, f) : 0;
}

/* Worker i's counters and matched flags into the run's. */
static void par_gather(mrun *r, const mworker *w) {
  const dml_merge_result *q = &w->res;
  dml_merge_result *o = r->res;
  o->matched_updated += q->matched_updated, o->matched_deleted += q->matched_deleted;
  o->nmbs_updated += q->nmbs_updated, o->nmbs_deleted += q->nmbs_deleted, o->copied += q->copied;
  o->scan_ms += q->scan_ms, o->rewrite_ms += q->rewrite_ms;
  size_t ns = arw_batch_rows(r->src);
  for (size_t j = 0; w->r.smatched != r->smatched && j < ns; j++) r->smatched[j] |= w->r.smatched[j];
}

/* The candidates joined by the workers (worker 0 with the run's router and flags), then
 * their removes in the candidates' order. */
static int par_run(mrun *r) {
  mworker ws[DML__WORKERS];
  void *ctx[DML__WORKERS];
  size_t n = dml__par_workers(&r->pc), ns = arw_batch_rows(r->src);
  r->rewritten = calloc(r->pc.n, 1);
  r->wrt = calloc(DML__WORKERS, sizeof *r->wrt);
  int rc = r->rewritten && r->wrt ? 0 : dml__oom();
  for (size_t i = 0; i < n; i++) {
    mworker *w = &ws[i];
    *w = (mworker){.r = *r, .m = r};
    w->r.res = &w->res;
    w->r.scan_threads = 1; /* the workers are the parallelism */
    ctx[i] = w;
    if (!i) continue;
    w->r.smatched = rc ? NULL : calloc(ns + 1, 1);
    if (rc) continue;
    if (!w->r.smatched) rc = dml__oom();
    if (!rc && (rc = dml__router_init(&r->wrt[r->nwrt], r->t, r->s, r->p.tb.schema, r->o->codec, false)))
      dml__router_free(&r->wrt[r->nwrt], false);
    if (!rc) r->wrt[r->nwrt].row_tracking = r->rtrack;
    if (!rc) w->r.rt = r->wrt[r->nwrt++];
  }
  if (!rc) rc = dml__par_run(&r->pc, r->s, ctx, par_file, NULL);
  for (size_t i = 0; i < n; i++) {
    if (i && i - 1 < r->nwrt) r->wrt[i - 1] = ws[i].r.rt; /* the routers' writers, back */
    if (!rc) par_gather(r, &ws[i]);
    if (i) free(ws[i].r.smatched);
  }
  if (n) r->rt = ws[0].r.rt;
  return rc ? rc : dml__par_each(&r->pc, r->s, r, take_cb);
}

/* ---- inserts, the source, the commit ---------------------------------------------------- */

static int inserts(mrun *r) {
  size_t ns = arw_batch_rows(r->src), nu = 0;
  size_t *rows = malloc((ns + 1) * sizeof *rows);
  fstate st = {0};
  arw_batch *ub = NULL;
  int rc = rows ? fs_reserve(&st, ns) : dml__oom();
  for (size_t j = 0; j < ns && !rc; j++)
    if (!r->smatched[j]) rows[nu] = nu, st.ix[nu++] = j;
  if (!rc && nu) rc = arw_batch_take(&ub, r->src, st.ix, nu);
  for (size_t i = 0; i < nu; i++) st.act[i] = ACT_COPY;
  if (!rc && nu) rc = decide(r, &st, DML_MERGE_NOT_MATCHED, ub, rows, nu);
  size_t before = (size_t)r->res->matched_updated;
  if (!rc && nu) rc = apply_updates(r, &st, ub, rows, nu, true, NULL);
  r->res->inserted = r->res->matched_updated - (int64_t)before;
  r->res->matched_updated = (int64_t)before;
  arw_batch_free(ub);
  fs_free(&st);
  free(rows);
  return rc;
}

static int load_source(mrun *r) {
  int64_t t0 = dml__mono_ms();
  int rc = arw_batch_new(&r->src, r->p.ss);
  size_t *id = NULL, cap = 0;
  for (size_t i = 0; i < r->o->num_source && !rc; i++) {
    size_t n = arw_batch_rows(r->o->source[i]);
    if (n > cap) {
      size_t *ni = realloc(id, n * sizeof *ni);
      if (!ni) { rc = dml__oom(); break; }
      id = ni, cap = n;
    }
    for (size_t k = 0; k < n; k++) id[k] = k;
    rc = arw_batch_append_rows(r->src, r->o->source[i], id, n);
  }
  free(id);
  size_t ns = rc ? 0 : arw_batch_rows(r->src);
  r->res->num_source_rows = (int64_t)ns;
  if (!rc && !r->p.nkeys && ns > DML_MERGE_NESTED_MAX)
    rc = dd_err_set(DD_EUNSUPPORTED, "MERGE: the ON condition has no equality between a target and a "
                    "source expression, and a nested-loop join is limited to %d source rows (the source "
                    "has %zu)", DML_MERGE_NESTED_MAX, ns);
  if (!rc && !(r->smatched = calloc(ns + 1, 1))) rc = dml__oom();
  if (!rc && r->p.nkeys) rc = dml__keys_eval(&r->skeys, &r->p, r->p.skey, r->src);
  if (!rc && r->p.nkeys) rc = dml__keyidx_build(&r->idx, r->skeys);
  r->res->materialize_ms = dml__mono_ms() - t0;
  return rc;
}

/* The protocol; delta.appendOnly refuses a MERGE that may change target rows. */
static int check_table(const mrun *r) {
  return dml__check_table(r->s, "MERGE", !r->p.has_matched && !r->p.has_nmbs);
}

/* Row tracking when the table enables it and the MERGE may rewrite target rows (an
 * insert-only MERGE's rows all get fresh ids). */
static int rowtrack_init(mrun *r) {
  r->rtrack = dl_rowtrack_enabled(r->s) && (r->p.has_matched || r->p.has_nmbs);
  r->rt.row_tracking = r->rtrack;
  return r->rtrack ? dml__rt_schema(&r->rts, &r->p.tb, r->s) : 0;
}

int dml_merge(dml_merge_result *out, dl_table *t, dl_snapshot *s, const dml_merge_opts *opts) {
  memset(out, 0, sizeof *out);
  out->version = -1;
  int64_t start = dml__mono_ms();
  dml_merge_opts def = DML_MERGE_OPTS_INIT;
  mrun r = {.t = t, .s = s, .o = opts ? opts : &def, .res = out};
  dl_snapshot *evolved = NULL;
  int rc = dml__merge_evolve(&evolved, s, r.o);
  if (evolved) r.s = s = evolved; /* read and write the target as it will be */
  r.now = r.o->now_ms ? r.o->now_ms : dml__wall_ms();
  r.use_dv = dml__use_dv(s);
  if (!rc) rc = dml__mplan_bind(&r.p, s, r.o);
  if (!rc) rc = check_table(&r);
  if (!rc) rc = dml__router_init(&r.rt, t, s, r.p.tb.schema, r.o->codec, false);
  if (!rc) rc = rowtrack_init(&r);
  if (!rc) rc = dml__cdc_init(&r.cdc, t, s, r.p.tb.schema, r.o->codec);
  r.cdc_inserts = r.p.has_matched || r.p.has_nmbs;
  if (!rc) rc = load_source(&r);
  if (!rc && r.p.skip && !r.p.has_nmbs) rc = ex_skipper_new(&r.sk, r.p.skip, s);
  if (!rc) rc = dl_txn_begin(&r.x, t, s);
  if (!rc && evolved) rc = dml__merge_set_metadata(r.x, evolved);
  r.par = !r.use_dv && !r.cdc.on;
  if (!rc) rc = dl_snapshot_files(s, file_cb, &r);
  if (!rc && r.pc.n) rc = par_run(&r);
  if (!rc && r.p.has_insert) rc = inserts(&r);
  if (!rc) rc = dml__router_commit(&r.rt, r.x, &out->files_added, &out->bytes_added);
  for (size_t i = 0; !rc && i < r.nwrt; i++)
    rc = dml__router_commit(&r.wrt[i], r.x, &out->files_added, &out->bytes_added);
  if (!rc) rc = dml__cdc_commit(&r.cdc, r.x, &out->change_files);
  out->execution_ms = dml__mono_ms() - start;
  if (!rc) rc = dml__dv_put(&r.dvf, t);
  if (!rc && (r.changed || out->files_added || evolved)) {
    rc = dml__ident_metadata(r.x, &r.p.ident, r.s); /* identity values handed out: the new mark */
    if (!rc) rc = dml__merge_commit(r.x, &r.p, r.o, out);
  }
  dml__router_free(&r.rt, rc != 0);
  for (size_t i = 0; i < r.nwrt; i++) dml__router_free(&r.wrt[i], rc != 0);
  free(r.wrt);
  free(r.rewritten);
  dml__par_free(&r.pc);
  dml__cdc_free(&r.cdc, rc != 0);
  dml__dv_free(&r.dvf, t, rc != 0);
  if (rc) out->version = -1;
  dl_txn_free(r.x);
  ex_skipper_free(r.sk);
  dml__keyidx_free(&r.idx);
  arw_batch_free(r.skeys);
  arw_batch_free(r.src);
  free(r.smatched);
  dml__mplan_free(&r.p);
  arw_schema_free(r.rts);
  dl_snapshot_free(evolved);
  return rc;
}
