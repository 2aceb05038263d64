/* opt_run.c: OPTIMIZE (see opt.h): the considered files, the bins per partition, each bin
 * read through the scan (deletion vectors applied) and written through the data writer
 * (each bin's writer finished on a thread while the next bin is read), then one commit of
 * the adds and removes with Delta's OPTIMIZE commitInfo. */
#include "store/optimize/opt_int.h"

#include "common/buf.h"
#include "store/dwrite/dw.h"
#include "store/scan/scn.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#define DV_RATIO 0.05 /* Delta's optimize.maxDeletedRowsRatio */

/* A copy of an active file (the snapshot's views are borrowed for a callback only). The
 * copies move (the array grows, qsort): nothing in them points into themselves. */
typedef struct ofile {
  dl_file f;
  dl_dv *dv;
  char *path, *stats, *pv, *tags, *dvp;
  size_t pv_len;
} ofile;

typedef struct run {
  dl_table *t;
  dl_snapshot *s;
  const opt_opts *o;
  int64_t target, min_size;
  ofile *files;
  size_t n, cap;
  size_t considered;
  const char **data_cols;   /* top-level non-partition columns */
  size_t ndata;
  /* the curve's columns: the Z-order columns, or a clustered table's clustering columns
   * (cluster set; names and their JSON list owned here) */
  const char *const *curve;
  size_t ncurve;
  bool cluster;
  char **ccols, *ccols_json;
  size_t nccols;
  opt_progress prog;
  int64_t now;
  bool rtrack;              /* row tracking enabled: the rows keep their ids and commit
                             * versions (read with the scan, written to the materialized
                             * columns) */
} run;

static int64_t clock_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int oom(void) { return dd_err_set(DD_ENOMEM, "optimize: out of memory"); }

static size_t packed_len(const char *p) {
  const char *q = p;
  while (*q) {
    q += strlen(q) + 1;
    q += strlen(q) + 1;
  }
  return (size_t)(q - p) + 1;
}

static char *dup_packed(const char *p, size_t *len) {
  size_t n = packed_len(p);
  char *c = malloc(n);
  if (c) memcpy(c, p, n);
  if (len) *len = n;
  return c;
}

static void ofile_free(ofile *f) {
  free(f->path);
  free(f->stats);
  free(f->pv);
  free(f->tags);
  free(f->dvp);
  free(f->dv);
}

static int copy_file(ofile *o, const dl_file *f) {
  memset(o, 0, sizeof *o);
  o->f = *f;
  o->path = strdup(f->path);
  o->stats = f->stats ? strdup(f->stats) : NULL;
  o->pv = dup_packed(f->partition_values, &o->pv_len);
  o->tags = f->tags ? dup_packed(f->tags, NULL) : NULL;
  if (f->dv && (o->dv = malloc(sizeof *o->dv))) {
    *o->dv = *f->dv;
    o->dvp = strdup(f->dv->path_or_inline);
    o->dv->path_or_inline = o->dvp;
    o->f.dv = o->dv;
  }
  o->f.path = o->f.raw_path = o->path;
  o->f.stats = o->stats;
  o->f.partition_values = o->pv;
  o->f.tags = o->tags;
  if (!o->path || (f->stats && !o->stats) || !o->pv || (f->tags && !o->tags) ||
      (f->dv && (!o->dv || !o->dvp))) {
    ofile_free(o);
    return oom();
  }
  return 0;
}

/* ---- which files ----------------------------------------------------------------------- */

static bool dv_heavy(const dl_file *f) {
  if (!f->dv) return false;
  int64_t records = -1;
  dl_stats *st = NULL;
  if (f->stats && dl_stats_parse(&st, f->stats) == 0) records = dl_stats_num_records(st);
  dl_stats_free(st);
  return records <= 0 || (double)f->dv->cardinality / (double)records > DV_RATIO;
}

static int collect_cb(void *ctx, const dl_file *f) {
  run *r = ctx;
  if (r->o->keep_file && !r->o->keep_file(r->o->keep_ctx, f)) return 0;
  r->considered++;
  bool take = r->ncurve > 0 || f->size < r->min_size || dv_heavy(f);
  if (!take) return 0;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    ofile *n = realloc(r->files, cap * sizeof *n);
    if (!n) return oom();
    r->files = n;
    r->cap = cap;
  }
  int rc = copy_file(&r->files[r->n], f);
  if (!rc) r->n++;
  return rc;
}

static int cmp_part_size(const void *a, const void *b) {
  const ofile *x = a, *y = b;
  size_t n = x->pv_len < y->pv_len ? x->pv_len : y->pv_len;
  int c = memcmp(x->pv, y->pv, n);
  if (c) return c;
  if (x->pv_len != y->pv_len) return x->pv_len < y->pv_len ? -1 : 1;
  if (x->f.size != y->f.size) return x->f.size < y->f.size ? -1 : 1;
  return strcmp(x->path, y->path);
}

static bool same_part(const ofile *a, const ofile *b) {
  return a->pv_len == b->pv_len && memcmp(a->pv, b->pv, a->pv_len) == 0;
}

/* ---- bins ------------------------------------------------------------------------------ */

typedef struct bin { size_t first, n; } bin;

static int make_bins(run *r, bin **out, size_t *nout, int64_t *parts) {
  bin *bins = calloc(r->n + 1, sizeof *bins);
  if (!bins) return oom();
  size_t nb = 0;
  *parts = 0;
  for (size_t i = 0; i < r->n;) {
    size_t end = i;
    while (end < r->n && same_part(&r->files[i], &r->files[end])) end++;
    size_t before = nb;
    size_t start = i;
    int64_t size = 0;
    /* a bin's input bytes: compaction the target, clustering a cube, Z-order no bound */
    int64_t limit = r->cluster ? OPT_CLUSTER_TARGET_CUBE_SIZE : r->ncurve ? INT64_MAX : r->target;
    for (size_t j = i; j < end; j++) {
      if (j > start && size > limit - r->files[j].f.size) {
        bins[nb++] = (bin){start, j - start};
        start = j;
        size = 0;
      }
      size += r->files[j].f.size;
    }
    bins[nb++] = (bin){start, end - start};
    /* a single file is rewritten only for its deletion vector (or Z-order) */
    size_t keep = before;
    for (size_t b = before; b < nb; b++)
      if (bins[b].n > 1 || r->ncurve > 0 || r->files[bins[b].first].f.dv)
        bins[keep++] = bins[b];
    nb = keep;
    *parts += nb > before;
    i = end;
  }
  *out = bins;
  *nout = nb;
  return 0;
}

/* ---- rewriting one bin ----------------------------------------------------------------- */

static void progress(run *r) {
  if (r->o->progress) r->o->progress(r->o->progress_ctx, &r->prog);
}

static int open_writer(run *r, dw_writer **w, const arw_schema *s, const ofile *first) {
  dw_opts wo = DW_OPTS_INIT;
  wo.codec = r->o->codec;
  wo.data_change = false;
  wo.partition_values = first->pv;
  wo.target_file_bytes = 0; /* one file per bin; Z-order cuts its files itself */
  /* a bin's file comes out about the size of its input, at most about the target */
  if (r->target > 0 && r->target < ((int64_t)1 << 32))
    wo.file_bytes_hint = (size_t)r->target + (size_t)r->target / 8;
  wo.row_tracking = r->rtrack;
  return dw_open(w, r->t, r->s, s, &wo);
}

typedef int (*batch_fn)(void *ctx, const arw_batch *b);

/* One scan over a bin's files (so the scan's threads decode the next file while this one
 * is written): keep_file admits the bin's paths and notes the files in the scan's order,
 * which the progress follows. */
typedef struct bin_scan {
  const ofile **by_path; /* the bin's files, sorted by path */
  const ofile **order;   /* the files the scan reads, in its order */
  size_t n, norder, done;
} bin_scan;

static int cmp_ofile_path(const void *a, const void *b) {
  return strcmp((*(const ofile *const *)a)->path, (*(const ofile *const *)b)->path);
}

static bool keep_bin_file(void *ctx, const dl_file *f) {
  bin_scan *bs = ctx;
  ofile key = {.path = (char *)f->path};
  const ofile *k = &key;
  const ofile **hit = bsearch(&k, bs->by_path, bs->n, sizeof *bs->by_path, cmp_ofile_path);
  if (hit && bs->norder < bs->n) bs->order[bs->norder++] = *hit;
  return hit != NULL;
}

static void bin_scan_free(bin_scan *bs) {
  free(bs->by_path);
  free(bs->order);
}

/* A scan of bin bn's files: the data columns, or only cols when ncols > 0. */
static int open_bin_scan(run *r, const bin *bn, const char *const *cols, size_t ncols,
                         bin_scan *bs, scn_scan **sc) {
  *sc = NULL;
  memset(bs, 0, sizeof *bs);
  bs->n = bn->n;
  bs->by_path = malloc((bn->n + 1) * sizeof *bs->by_path);
  bs->order = malloc((bn->n + 1) * sizeof *bs->order);
  if (!bs->by_path || !bs->order) return oom();
  for (size_t i = 0; i < bn->n; i++) bs->by_path[i] = &r->files[bn->first + i];
  qsort(bs->by_path, bn->n, sizeof *bs->by_path, cmp_ofile_path);
  scn_opts so = SCN_OPTS_INIT;
  so.columns = ncols ? cols : r->data_cols;
  so.num_columns = ncols ? ncols : r->ndata;
  so.keep_file = keep_bin_file;
  so.keep_ctx = bs;
  so.batch_rows = r->o->batch_rows;
  so.row_tracking = r->rtrack && !ncols; /* the rows written, not the Z-order sample */
  return scn_open(sc, r->t, r->s, &so);
}

/* Counts the files the scan has finished (progress) when count is set. */
static void files_progress(run *r, bin_scan *bs, size_t read, bool count) {
  for (; count && bs->done < read && bs->done < bs->norder; bs->done++) {
    r->prog.files_done++;
    r->prog.bytes_done += bs->order[bs->done]->f.size;
    progress(r);
  }
}

/* Every batch of sc into sink(ctx). */
static int drain_bin(run *r, bin_scan *bs, scn_scan *sc, bool count, batch_fn sink,
                     void *ctx) {
  const arw_batch *b = NULL;
  scn_stats st;
  int rc;
  while (!(rc = scn_next(sc, &b)) && b) {
    scn_stats_get(sc, &st);
    files_progress(r, bs, st.files_read ? st.files_read - 1 : 0, count);
    if ((rc = sink(ctx, b))) break;
  }
  if (!rc) files_progress(r, bs, bs->norder, count);
  return rc;
}

static int write_sink(void *ctx, const arw_batch *b) { return dw_write(ctx, b); }

/* Compaction: every file's batches straight into one writer. */
static int compact_bin(run *r, const bin *bn, dw_writer **out) {
  bin_scan bs;
  scn_scan *sc = NULL;
  dw_writer *w = NULL;
  int rc = open_bin_scan(r, bn, NULL, 0, &bs, &sc);
  if (!rc) rc = open_writer(r, &w, scn_schema(sc), &r->files[bn->first]);
  if (!rc) rc = drain_bin(r, &bs, sc, true, write_sink, w);
  scn_free(sc);
  bin_scan_free(&bs);
  *out = w;
  return rc;
}

/* Z-order: the partition's rows into the bounded sort (opt_zsort.c), which asks once for
 * the sample pass when they do not fit in one run; then written in the sorted order, cut
 * into files of equal row counts. The bin's scan stays open: its schema is the sort's. */
typedef struct zctx {
  run *r;
  const bin *bn;
  opt__zsort *z;
  dw_writer *w;
  size_t per_file, done;
} zctx;

static int sample_sink(void *ctx, const arw_batch *b) { return opt__zs_sample(ctx, b); }

/* Every row's Z-order columns of the bin, once, into the sample. */
static int sample_pass(run *r, const bin *bn, opt__zsort *z) {
  bin_scan bs;
  scn_scan *sc = NULL;
  int rc = open_bin_scan(r, bn, r->curve, r->ncurve, &bs, &sc);
  if (!rc) rc = drain_bin(r, &bs, sc, false, sample_sink, z);
  scn_free(sc);
  bin_scan_free(&bs);
  return rc ? rc : opt__zs_ranks_done(z);
}

static int zadd_sink(void *ctx, const arw_batch *b) {
  zctx *c = ctx;
  int rc = opt__zs_add(c->z, b);
  if (rc == OPT_ZS_NEED_RANKS) {
    rc = sample_pass(c->r, c->bn, c->z);
    if (!rc) rc = opt__zs_add(c->z, b);
    if (rc == OPT_ZS_NEED_RANKS) rc = dd_err_set(DD_EINTERNAL, "optimize: Z-order ranks");
  }
  return rc;
}

static int zemit(void *ctx, const arw_batch *b) {
  zctx *c = ctx;
  int rc = dw_write(c->w, b);
  c->done += arw_batch_rows(b);
  if (!rc && c->done % c->per_file == 0) rc = dw_next_file(c->w);
  return rc;
}

static size_t zorder_run_bytes(const run *r) {
  if (r->o->zorder_run_bytes) return r->o->zorder_run_bytes;
  int64_t t = r->target < ((int64_t)1 << 20) ? (int64_t)1 << 20 : r->target;
  return (uint64_t)t > OPT_MAX_ZORDER_RUN_BYTES ? OPT_MAX_ZORDER_RUN_BYTES : (size_t)t;
}

static const char *tmp_dir(const run *r) {
  if (r->o->tmp_dir) return r->o->tmp_dir;
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

static int zorder_bin(run *r, const bin *bn, dw_writer **out) {
  bin_scan bs;
  scn_scan *sc = NULL;
  zctx c = {.r = r, .bn = bn};
  int rc = open_bin_scan(r, bn, NULL, 0, &bs, &sc);
  if (!rc) rc = opt__zs_new(&c.z, scn_schema(sc), r->curve, r->ncurve, r->cluster,
                            zorder_run_bytes(r), tmp_dir(r));
  if (!rc) rc = drain_bin(r, &bs, sc, true, zadd_sink, &c);
  size_t n = c.z ? opt__zs_rows(c.z) : 0;
  if (!rc) rc = open_writer(r, &c.w, scn_schema(sc), &r->files[bn->first]);
  /* as many files as target sizes in the input (Delta's numFiles), equal row counts */
  int64_t bytes = 0;
  for (size_t i = 0; i < bn->n; i++) bytes += r->files[bn->first + i].f.size;
  size_t nfiles = (size_t)((bytes + r->target - 1) / r->target);
  if (nfiles < 1) nfiles = 1;
  c.per_file = (n + nfiles - 1) / nfiles;
  if (c.per_file < 1) c.per_file = 1;
  size_t step = r->o->batch_rows ? r->o->batch_rows : SCN_DEFAULT_BATCH_ROWS;
  if (!rc) rc = opt__zs_finish(c.z, step, c.per_file, zemit, &c);
  opt__zs_free(c.z);
  scn_free(sc);
  bin_scan_free(&bs);
  *out = c.w;
  return rc;
}

/* ---- the commit ------------------------------------------------------------------------ */

static char *json_list(const char *const *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
  char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
  json_decref(a);
  return s;
}

static int64_t pct(const int64_t *sorted, size_t n, double p) {
  if (!n) return 0;
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return sorted[i < n ? i : n - 1];
}

/* Delta's commitInfo for OPTIMIZE: parameters and (string-valued) metrics. */
static int commit_info(run *r, const opt_result *res, int64_t *added, size_t nadded,
                       char **params, char **metrics) {
  char *pred = NULL, *z = json_list(r->o->zorder_by, r->o->num_zorder);
  if (r->o->predicate) pred = json_list(&r->o->predicate, 1);
  else pred = json_list(NULL, 0);
  json_t *p = json_pack("{s:s?,s:s?,s:b,s:s}", "predicate", pred, "zOrderBy", z, "auto", 0,
                        "clusterBy", r->cluster ? r->ccols_json : "[]");
  if (p && r->cluster) json_object_set_new(p, "isFull", json_boolean(r->o->full));
  free(pred);
  free(z);
  *params = p ? json_dumps(p, JSON_COMPACT) : NULL;
  json_decref(p);
  opt_file_stats st;
  opt__file_stats(&st, added, nadded);
  json_t *m = json_object();
#define M(k, v) json_object_set_new(m, k, json_sprintf("%lld", (long long)(v)))
  if (m) {
    M("numRemovedFiles", res->num_files_removed);
    M("numRemovedBytes", res->files_removed.total_size);
    M("p25FileSize", pct(added, nadded, 0.25));
    M("numDeletionVectorsRemoved", res->num_dvs_removed);
    M("minFileSize", st.min);
    M("numAddedFiles", res->num_files_added);
    M("maxFileSize", st.max);
    M("p75FileSize", pct(added, nadded, 0.75));
    M("p50FileSize", pct(added, nadded, 0.5));
    M("numAddedBytes", res->files_added.total_size);
  }
#undef M
  *metrics = m ? json_dumps(m, JSON_COMPACT) : NULL;
  json_decref(m);
  return *params && *metrics ? 0 : oom();
}

static int commit(run *r, opt_result *res, const bin *bins, size_t nb, dw_writer **ws) {
  size_t nadd = 0;
  for (size_t b = 0; b < nb; b++) nadd += ws[b] ? dw_num_files(ws[b]) : 0;
  int64_t *added = calloc(nadd + 1, sizeof *added), *removed = NULL;
  size_t nrem = 0;
  for (size_t b = 0; b < nb; b++) nrem += bins[b].n;
  removed = calloc(nrem + 1, sizeof *removed);
  dl_txn *x = NULL;
  char *params = NULL, *metrics = NULL;
  int rc = added && removed ? 0 : oom();
  if (!rc) rc = dl_txn_begin(&x, r->t, r->s);
  size_t ia = 0, ir = 0;
  for (size_t b = 0; b < nb && !rc; b++) {
    for (size_t i = 0; i < bins[b].n && !rc; i++) {
      ofile *f = &r->files[bins[b].first + i];
      dl_file rm = f->f;
      rm.data_change = false;
      rm.deletion_timestamp = r->now;
      removed[ir++] = f->f.size;
      res->num_dvs_removed += f->f.dv != NULL;
      res->num_dv_rows_removed += f->f.dv ? f->f.dv->cardinality : 0;
      rc = dl_txn_read_file(x, f->path);
      if (!rc) rc = dl_txn_remove_file(x, &rm);
    }
    char *tags = NULL; /* a clustered bin is one new ZCube */
    if (!rc && r->cluster && ws[b]) rc = opt__cluster_tags(&tags, r->ccols_json);
    for (size_t i = 0; ws[b] && i < dw_num_files(ws[b]) && !rc; i++) {
      dl_file a = *dw_file(ws[b], i);
      if (r->cluster) {
        a.clustering_provider = "liquid";
        a.tags = tags;
      }
      added[ia++] = a.size;
      rc = dl_txn_add_file(x, &a);
    }
    free(tags);
  }
  res->num_files_added = (int64_t)ia;
  res->num_files_removed = (int64_t)ir;
  opt__file_stats(&res->files_removed, removed, ir);
  opt__file_stats(&res->files_added, added, ia);
  if (!rc) rc = commit_info(r, res, added, ia, &params, &metrics);
  if (!rc) {
    dl_commit_opts co = DL_COMMIT_OPTS_INIT;
    co.operation = "OPTIMIZE";
    co.operation_parameters = params;
    co.operation_metrics = metrics;
    co.max_retries = r->o->max_retries;
    co.now_ms = r->o->now_ms;
    rc = dl_txn_commit(x, &co, &res->version);
  }
  dl_txn_free(x);
  free(params);
  free(metrics);
  free(added);
  free(removed);
  return rc;
}

/* ---- entry ------------------------------------------------------------------------------ */

static int parse_size(const char *v, int64_t *out) {
  char *end;
  long long n = strtoll(v, &end, 10);
  long long mul = 1;
  while (*end == ' ') end++;
  if (!strcasecmp(end, "k") || !strcasecmp(end, "kb")) mul = 1024;
  else if (!strcasecmp(end, "m") || !strcasecmp(end, "mb")) mul = 1024 * 1024;
  else if (!strcasecmp(end, "g") || !strcasecmp(end, "gb")) mul = 1024LL * 1024 * 1024;
  else if (*end) mul = 0;
  if (n <= 0 || mul == 0 || n > INT64_MAX / mul)
    return dd_err_set(DD_EINVAL, "delta.targetFileSize '%s' is not a size in bytes", v);
  *out = n * mul;
  return 0;
}

/* A clustered table: its clustering columns become the curve's (Delta's refusals first). */
static int check_cluster(run *r) {
  int rc = dop_clustering_columns(&r->ccols, &r->nccols, r->s);
  if (rc < 0) return rc;
  bool clustered = rc == 1;
  if (clustered && r->o->num_zorder) {
    dd_buf b = {0};
    for (size_t i = 0; i < r->o->num_zorder; i++)
      dd_buf_printf(&b, "%s%s", i ? ", " : "", r->o->zorder_by[i]);
    rc = dd_err_set(DD_EINVAL, "[DELTA_CLUSTERING_WITH_ZORDER_BY] OPTIMIZE command for Delta table "
                    "with clustering cannot specify ZORDER BY. Please remove ZORDER BY (%s).",
                    b.p ? b.p : "");
    dd_buf_free(&b);
    return rc;
  }
  if (clustered && r->o->keep_file)
    return opt_check_where(r->s, r->o->predicate ? r->o->predicate : "");
  if (r->o->full && r->nccols == 0)
    return dd_err_set(DD_EUNSUPPORTED, "[DELTA_OPTIMIZE_FULL_NOT_SUPPORTED] OPTIMIZE FULL is only "
                      "supported for clustered tables with non-empty clustering columns.");
  if (r->nccols == 0) return 0; /* CLUSTER BY NONE: compaction */
  for (size_t i = 0; i < r->nccols; i++) {
    const dl_field *f = dl_schema_field(dl_snapshot_schema(r->s), r->ccols[i]);
    if (!f || strchr(r->ccols[i], '.'))
      return dd_err_set(DD_EUNSUPPORTED, "optimize: clustering column '%s' is nested or missing: "
                        "deltad clusters by top-level columns only", r->ccols[i]);
  }
  r->cluster = true;
  r->curve = (const char *const *)r->ccols;
  r->ncurve = r->nccols;
  json_t *a = json_array();
  for (size_t i = 0; a && i < r->nccols; i++) json_array_append_new(a, json_string(r->ccols[i]));
  r->ccols_json = a ? json_dumps(a, JSON_COMPACT) : NULL;
  json_decref(a);
  return r->ccols_json ? 0 : oom();
}

/* The files opt_cluster.c picks among the considered ones; the others are let go. */
static int pick_clustered(run *r, opt_result *res) {
  const dl_file **v = calloc(r->n + 1, sizeof *v);
  bool *keep = calloc(r->n + 1, sizeof *keep);
  int rc = v && keep ? 0 : oom();
  for (size_t i = 0; !rc && i < r->n; i++) v[i] = &r->files[i].f;
  if (!rc) rc = opt__cluster_input_stats(res, v, r->n);
  if (!rc) rc = opt__cluster_pick(keep, v, r->n, r->ccols_json, r->o->full, OPT_CLUSTER_MIN_CUBE_SIZE);
  size_t w = 0;
  for (size_t i = 0; !rc && i < r->n; i++) {
    if (keep[i]) r->files[w++] = r->files[i];
    else ofile_free(&r->files[i]);
  }
  if (!rc) r->n = w;
  free(v);
  free(keep);
  return rc;
}

static int check_zorder(run *r) {
  const dl_metadata *md = dl_snapshot_metadata(r->s);
  const dl_schema *sc = dl_snapshot_schema(r->s);
  for (size_t i = 0; i < r->o->num_zorder; i++) {
    const char *c = r->o->zorder_by[i];
    for (size_t j = 0; j < md->num_partition_columns; j++)
      if (!strcasecmp(c, md->partition_columns[j]))
        return dd_err_set(DD_EINVAL, "optimize: '%s' is a partition column; Z-ordering by "
                          "one has no effect (Delta refuses it too)", c);
    const dl_field *f = dl_schema_field(sc, c);
    if (!f) return dd_err_set(DD_EINVAL, "optimize: the table has no column '%s' to Z-order by", c);
    dl_type_kind k = f->type->kind;
    if (k == DL_TYPE_STRUCT || k == DL_TYPE_ARRAY || k == DL_TYPE_MAP || k == DL_TYPE_VARIANT ||
        k == DL_TYPE_VOID)
      return dd_err_set(DD_EINVAL, "optimize: cannot Z-order by '%s': a nested or unordered "
                        "type", c);
  }
  return 0;
}

static int data_columns(run *r) {
  const dl_type *root = dl_schema_root(dl_snapshot_schema(r->s));
  const dl_metadata *md = dl_snapshot_metadata(r->s);
  r->data_cols = calloc(root->num_fields + 1, sizeof *r->data_cols);
  if (!r->data_cols) return oom();
  for (size_t i = 0; i < root->num_fields; i++) {
    bool part = false;
    for (size_t j = 0; j < md->num_partition_columns; j++)
      part |= !strcasecmp(root->fields[i].name, md->partition_columns[j]);
    if (!part) r->data_cols[r->ndata++] = root->fields[i].name;
  }
  return 0;
}

int opt_run(opt_result *out, dl_table *t, dl_snapshot *s, const opt_opts *opts) {
  memset(out, 0, sizeof *out);
  out->version = -1;
  out->start_ms = clock_ms();
  opt_opts def = OPT_OPTS_INIT;
  run r = {.t = t, .s = s, .o = opts ? opts : &def, .rtrack = dl_rowtrack_enabled(s)};
  r.now = r.o->now_ms ? r.o->now_ms : out->start_ms;
  r.target = r.o->target_size;
  const char *prop = dl_snapshot_property(s, "delta.targetFileSize");
  int rc = 0;
  if (r.target < 0) rc = dd_err_set(DD_EINVAL, "optimize: a negative target size");
  if (!rc && r.target == 0 && prop) rc = parse_size(prop, &r.target);
  if (!rc && r.target == 0) r.target = OPT_DEFAULT_TARGET_SIZE;
  r.min_size = r.o->min_file_size > 0 ? r.o->min_file_size : r.target;
  bin *bins = NULL;
  size_t nb = 0;
  dw_writer **ws = NULL;
  if (!rc) rc = dl_protocol_check(dl_snapshot_protocol(s), true);
  if (!rc) rc = check_cluster(&r);
  if (!rc) rc = check_zorder(&r);
  if (!rc && !r.cluster) {
    r.curve = r.o->zorder_by;
    r.ncurve = r.o->num_zorder;
  }
  if (!rc) rc = data_columns(&r);
  if (!rc) rc = dl_snapshot_files(s, collect_cb, &r);
  if (!rc && r.cluster) rc = pick_clustered(&r, out);
  if (!rc) {
    if (r.n) qsort(r.files, r.n, sizeof *r.files, cmp_part_size); /* NULL when none */
    rc = make_bins(&r, &bins, &nb, &out->partitions_optimized);
  }
  if (!rc) ws = calloc(nb + 1, sizeof *ws);
  if (!rc && !ws) rc = oom();
  r.prog.bins_total = nb;
  for (size_t b = 0; b < nb && !rc; b++) {
    r.prog.files_total += bins[b].n;
    for (size_t i = 0; i < bins[b].n; i++) r.prog.bytes_total += r.files[bins[b].first + i].f.size;
  }
  opt__finisher fin = {0};
  for (size_t b = 0; b < nb && !rc; b++) {
    rc = r.ncurve ? zorder_bin(&r, &bins[b], &ws[b]) : compact_bin(&r, &bins[b], &ws[b]);
    if (!rc) rc = opt__finish_wait(&fin); /* the bin before */
    if (!rc && ws[b]) rc = opt__finish_start(&fin, ws[b]);
    if (!rc && ws[b]) out->rows_written += dw_rows(ws[b]);
    r.prog.bins_done++;
    progress(&r);
  }
  int frc = opt__finish_wait(&fin);
  if (!rc) rc = frc;
  out->num_batches = (int64_t)nb;
  out->total_considered_files = (int64_t)r.considered;
  out->zorder = r.o->num_zorder > 0;
  out->clustering = r.cluster;
  for (size_t b = 0; r.cluster && b < nb; b++) out->cluster.out_cubes += ws && ws[b] != NULL;
  out->num_table_columns = (int64_t)r.ndata;
  if (!rc && nb) rc = commit(&r, out, bins, nb, ws);
  out->total_files_skipped = out->total_considered_files - out->num_files_removed;
  out->cluster.merged_files = out->num_files_removed;
  out->cluster.merged_size = out->files_removed.total_size;
  for (size_t b = 0; ws && b < nb; b++) {
    if (rc && ws[b]) dw_abort(ws[b]);
    dw_free(ws[b]);
  }
  /* a committed writer's files belong to the table now: dw_free does not delete them */
  out->end_ms = clock_ms();
  free(ws);
  free(bins);
  for (size_t i = 0; i < r.n; i++) ofile_free(&r.files[i]);
  free(r.files);
  free(r.data_cols);
  dop_clustering_free(r.ccols, r.nccols);
  free(r.ccols_json);
  return rc;
}
