/* scn_scan.c: the scan's life: the projected columns and their Arrow schema, the list of
 * active files (copied from the snapshot, after keep_file), and scn_next, which reads one
 * row group at a time (scn_read.c), drops the rows the file's deletion vector names, adds
 * partition values and hands out batches of at most batch_rows rows. Data files and
 * deletion vectors are read only from inside the table directory or opts.roots. With
 * threads > 1 the row groups are decoded ahead by scn_pool.c's workers (through
 * scn__file_open and scn__decode_rg, which only read the scan), in the same order. Data
 * files in object storage above 1 MiB are read by ranges (pq_file_open_reader: the footer,
 * then the projected column chunks), smaller ones whole. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

/* ---- files ------------------------------------------------------------------------------- */

static size_t packed_len(const char *p) {
  const char *c = p, *k, *v;
  while (dl_kv_next(&c, &k, &v)) {
  }
  return (size_t)(c - p) + 1;
}

static int add_file(void *ctx, const dl_file *f) {
  scn_scan *s = ctx;
  s->st.files_total++;
  if (s->o->only_file && strcmp(s->o->only_file, f->path)) return 0;
  if (s->o->keep_file && !s->o->keep_file(s->o->keep_ctx, f)) {
    s->st.files_skipped++;
    return 0;
  }
  if (s->nfiles == s->cap_files) {
    size_t cap = s->cap_files ? 2 * s->cap_files : 64;
    scn__file *n = realloc(s->files, cap * sizeof *n);
    if (!n) return s->cb_rc = dd_err_set(DD_ENOMEM, "scan: out of memory listing files");
    s->files = n;
    s->cap_files = cap;
  }
  scn__file *x = &s->files[s->nfiles];
  memset(x, 0, sizeof *x);
  size_t pl = packed_len(f->partition_values);
  x->size = f->size;
  x->base_row_id = f->base_row_id;
  x->row_commit_version = f->default_row_commit_version;
  x->path = strdup(f->path);
  x->pvals = malloc(pl);
  if (x->pvals) memcpy(x->pvals, f->partition_values, pl);
  if (f->dv) {
    x->has_dv = true;
    x->dv = *f->dv;
    x->dv_text = strdup(f->dv->path_or_inline ? f->dv->path_or_inline : "");
    x->dv.path_or_inline = x->dv_text;
  }
  s->nfiles++;
  if (!x->path || !x->pvals || (f->dv && !x->dv_text))
    return s->cb_rc = dd_err_set(DD_ENOMEM, "scan: out of memory listing files");
  return 0;
}

/* Is the real path p inside directory dir (also real)? */
static bool inside(const char *p, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return true;
  return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == 0);
}

/* The real local path of a file named in the log (relative to the table, an absolute path
 * or a file: URI), refused (DD_EPERM) unless inside the table or a root. */
static int resolve(const scn_scan *s, const char *path, char **out) {
  *out = NULL;
  const char *p = path;
  if (!strncmp(p, "file://", 7)) p += 7;
  else if (!strncmp(p, "file:", 5)) p += 5;
  else if (strstr(p, "://"))
    return dd_err_set(DD_EUNSUPPORTED, "scan: '%s' is not a local file", path);
  char *joined = NULL;
  if (p[0] != '/') {
    if (!dl_rel_path_clean(p, strlen(p)))
      return dd_err_set(DD_EPERM, "scan: file path '%s' escapes the table", path);
    if (asprintf(&joined, "%s/%s", s->table_dir, p) < 0)
      return dd_err_set(DD_ENOMEM, "scan: out of memory");
    p = joined;
  }
  char *real = realpath(p, NULL);
  free(joined);
  if (!real) return dd_err_set(DD_EIO, "scan: cannot open data file '%s'", path);
  bool ok = inside(real, s->table_dir);
  for (size_t i = 0; !ok && i < s->nroots; i++) ok = inside(real, s->roots[i]);
  if (!ok) {
    free(real);
    return dd_err_set(DD_EPERM, "scan: file '%s' is outside the table and the allowed roots",
                      path);
  }
  *out = real;
  return 0;
}

void scn__file_close(scn__open *o) {
  if (!o) return;
  for (size_t i = 0; o->binds && i < o->ncols; i++) scn__bind_free(&o->binds[i]);
  free(o->binds);
  pq_file_free(o->pf);
  free(o->buf);
  dl_rowset_free(&o->dv);
  free(o);
}

static int load_dv(const scn_scan *s, scn__open *o) {
  const scn__file *f = o->f;
  if (f->dv.storage_type != 'i' && s->table_dir) { /* a local file: confine it first */
    char *p = NULL, *real = NULL;
    int rc = dl_dv_path(&p, &f->dv);
    if (!rc) rc = resolve(s, p, &real);
    free(p);
    free(real);
    if (rc) return dd_err_wrap(rc, "deletion vector of '%s'", f->path);
  }
  int rc = dl_dv_load(&o->dv, s->t, &f->dv);
  return rc ? dd_err_wrap(rc, "deletion vector of '%s'", f->path) : 0;
}

/* Data files in object storage up to this size are read whole (one request); larger ones
 * by ranges: the footer, then the column chunks the scan decodes. */
#define SCN__WHOLE_READ_MAX (1u << 20)

/* pq_file_open_reader's callback for a file in the table's store (ctx: the scn__open). */
static int remote_read(void *ctx, uint64_t off, size_t len, uint8_t *out) {
  const scn__open *o = ctx;
  return os_read_range(o->st, o->f->path, off, len, out);
}

/* Opens o->pf on a file of a table in object storage. */
static int open_remote(const scn_scan *s, scn__open *o) {
  const scn__file *f = o->f;
  o->st = dl_table_store(s->t);
  int64_t size = f->size;
  os_stat sb;
  if (size < 0 && os_stat_path(o->st, f->path, &sb) == 0) size = sb.size;
  dd_err_clear();
  if (size > (int64_t)SCN__WHOLE_READ_MAX) {
    int rc = pq_file_open_reader(&o->pf, remote_read, o, (uint64_t)size);
    if (rc != DD_EPERM) return rc; /* (outside the store's root: a shallow clone's source) */
    dd_err_clear();
  }
  size_t len = 0;
  int rc = os_read_any(o->st, f->path, &o->buf, &len);
  return rc ? rc : pq_file_open_mem(&o->pf, o->buf, len);
}

int scn__file_open(const scn_scan *s, const scn__file *f, scn__open **out) {
  *out = NULL;
  scn__open *o = calloc(1, sizeof *o);
  if (!o) return dd_err_set(DD_ENOMEM, "scan: out of memory opening '%s'", f->path);
  o->f = f;
  char *real = NULL;
  int rc = s->table_dir ? resolve(s, f->path, &real) : open_remote(s, o);
  if (!rc && real) rc = pq_file_open_path(&o->pf, real);
  free(real);
  if (rc) {
    rc = dd_err_wrap(rc, "data file '%s'", f->path);
    goto cleanup;
  }
  o->nrg = pq_file_num_row_groups(o->pf);
  if (f->has_dv && (rc = load_dv(s, o))) goto cleanup;
  o->binds = calloc(s->ncols ? s->ncols : 1, sizeof *o->binds);
  if (!o->binds) {
    rc = dd_err_set(DD_ENOMEM, "scan: out of memory opening '%s'", f->path);
    goto cleanup;
  }
  o->ncols = s->ncols;
  const pq_field *root = pq_file_schema(o->pf);
  for (size_t i = 0; i < s->ncols && !rc; i++) {
    const scn__col *c = &s->cols[i];
    if (c->partition) continue;
    const pq_field *x = scn__pq_child(root, c->field, s->mode);
    if (c->rowtrack) {
      if (x && x->column >= 0 && x->type == PQ_T_INT64 && x->max_rep == 0) o->binds[i].node = x;
      continue;
    }
    rc = scn__bind_node(&o->binds[i], s->schema, c->arw_id, c->field->type, x, 0, 0, -1,
                        s->mode);
  }
  if (rc) rc = dd_err_wrap(rc, "data file '%s'", f->path);
cleanup:
  if (rc) scn__file_close(o);
  else *out = o;
  return rc;
}

void scn__rg_bind(scn__rg *r, const scn__open *o) {
  if (r->pf == o->pf && r->cols) return;
  size_t nleaves = pq_file_num_columns(o->pf);
  if (r->cols && r->ncols == nleaves && nleaves) {
    /* another file of as many leaves (the same schema, typically): its columns are decoded
     * into the memory of the last file's (pq_column_reread keeps what has the same shape) */
    r->pf = o->pf;
    for (size_t i = 0; i < r->ncols; i++) r->cols_rg[i] = SIZE_MAX;
    return;
  }
  scn__rg_free(r);
  r->pf = o->pf;
  r->ncols = nleaves;
  r->cols = calloc(nleaves ? nleaves : 1, sizeof *r->cols);
  r->cols_rg = malloc((nleaves ? nleaves : 1) * sizeof *r->cols_rg);
  if (!r->cols || !r->cols_rg) r->ncols = 0; /* get_col then fails cleanly */
  for (size_t i = 0; r->cols_rg && i < r->ncols; i++) r->cols_rg[i] = SIZE_MAX;
}

int scn__unit_init(scn__unit *u, const arw_schema *schema) {
  memset(u, 0, sizeof *u);
  return arw_batch_new(&u->b, schema);
}

void scn__unit_free(scn__unit *u) {
  arw_batch_free(u->b);
  free(u->keep);
  memset(u, 0, sizeof *u);
}

/* ---- row groups ---------------------------------------------------------------------------- */

int scn__decode_rg(const scn_scan *s, const scn__open *o, size_t rg, int64_t base,
                   scn__rg *r, scn__unit *u) {
  const scn__file *f = o->f;
  arw_batch_clear(u->b);
  u->decoded = false;
  u->nrows = u->nkeep = 0;
  int64_t n64 = pq_row_group_num_rows(o->pf, rg);
  if (n64 < 0) return dd_err_set(DD_ECORRUPT, "scan: row group with %lld rows", (long long)n64);
  if (!r->cols) return dd_err_set(DD_ENOMEM, "scan: out of memory opening '%s'", f->path);
  size_t n = (size_t)n64;
  r->rg = rg;
  int rc = 0;
  for (size_t i = 0; i < s->ncols && !rc; i++) {
    const scn__col *c = &s->cols[i];
    if (c->partition) {
      const char *text = NULL;
      if (!dl_kv_get(f->pvals, c->part_key, &text)) text = NULL;
      rc = scn__append_partition(u->b, c->arw_id, c->field->type, text, n);
    } else if (c->rowtrack == SCN__RT_ID) {
      int64_t first = f->base_row_id >= 0 ? f->base_row_id + base : -1;
      rc = scn__read_rowtrack(r, u->b, c->arw_id, o->binds[i].node, n, first, 1);
    } else if (c->rowtrack == SCN__RT_VERSION) {
      rc = scn__read_rowtrack(r, u->b, c->arw_id, o->binds[i].node, n, f->row_commit_version, 0);
    } else {
      rc = scn__read_field(r, u->b, &o->binds[i], n);
    }
    if (rc) rc = dd_err_wrap(rc, "column '%s' of '%s'", c->field->name, f->path);
  }
  if (rc) return rc;
  /* the rows the deletion vector keeps */
  if (n > u->keep_cap) {
    size_t *k = realloc(u->keep, n * sizeof *k);
    if (!k) return dd_err_set(DD_ENOMEM, "scan: out of memory");
    u->keep = k;
    u->keep_cap = n;
  }
  size_t m = 0, dv_pos = 0;
  const uint64_t b0 = (uint64_t)base;
  if (o->dv.count) { /* the first deleted row at or after this row group */
    size_t lo = 0, hi = o->dv.count;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (o->dv.rows[mid] < b0) lo = mid + 1;
      else hi = mid;
    }
    dv_pos = lo;
  }
  if (dv_pos == o->dv.count || o->dv.rows[dv_pos] >= b0 + n) {
    for (size_t i = 0; i < n; i++) u->keep[i] = i;
    m = n;
  } else {
    for (size_t i = 0; i < n; i++) {
      uint64_t row = b0 + i;
      while (dv_pos < o->dv.count && o->dv.rows[dv_pos] < row) dv_pos++;
      if (dv_pos < o->dv.count && o->dv.rows[dv_pos] == row) continue;
      u->keep[m++] = i;
    }
  }
  u->decoded = true;
  u->nrows = n;
  u->nkeep = m;
  u->keep_all = m == n;
  return 0;
}

/* One thread: the next unit into s->cu, decoded here; *end past the last file. */
static int next_unit_here(scn_scan *s, bool *end) {
  *end = false;
  for (;;) {
    if (s->cur && s->next_rg < s->cur->nrg) {
      size_t rg = s->next_rg++;
      s->cu.first_of_file = rg == 0;
      int64_t base = s->rg_base;
      s->rg_base += pq_row_group_num_rows(s->cur->pf, rg);
      return scn__decode_rg(s, s->cur, rg, base, &s->rg, &s->cu);
    }
    scn__file_close(s->cur); /* s->rg keeps its memory for the next file (scn__rg_bind) */
    s->cur = NULL;
    if (s->next_file == s->nfiles) {
      *end = true;
      return 0;
    }
    int rc = scn__file_open(s, &s->files[s->next_file++], &s->cur);
    if (rc) return rc;
    scn__rg_bind(&s->rg, s->cur);
    s->next_rg = 0;
    s->rg_base = 0;
    if (s->cur->nrg == 0) { /* a file without row groups still counts as read */
      arw_batch_clear(s->cu.b);
      s->cu.decoded = false;
      s->cu.first_of_file = true;
      s->cu.nrows = s->cu.nkeep = 0;
      return 0;
    }
  }
}

static unsigned default_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n > SCN_MAX_THREADS ? SCN_MAX_THREADS : (unsigned)n;
}

/* The next unit into s->cu, with its counters. */
static int next_unit(scn_scan *s, bool *end) {
  if (!s->started) {
    s->started = true;
    if (s->threads > 1 && s->nfiles > 0) {
      int rc = scn__pool_start(&s->pool, s);
      if (rc) return rc;
    }
  }
  int rc = s->pool ? scn__pool_next(s->pool, &s->cu, end) : next_unit_here(s, end);
  if (rc || *end) return rc;
  const scn__unit *u = &s->cu;
  if (u->first_of_file) s->st.files_read++;
  if (u->decoded) {
    s->st.row_groups_read++;
    s->st.rows_read += (int64_t)u->nrows;
    s->st.rows_deleted += (int64_t)(u->nrows - u->nkeep);
  }
  s->keep_pos = 0;
  return 0;
}

int scn_next(scn_scan *s, const arw_batch **out) {
  *out = NULL;
  if (s->failed) return dd_err_set(s->failed, "scan: an earlier error stopped this scan");
  for (;;) {
    int64_t left = s->limit < 0 ? INT64_MAX : s->limit - s->st.rows_returned;
    if (left <= 0 || s->done) return 0;
    scn__unit *u = &s->cu;
    if (s->keep_pos < u->nkeep) {
      size_t k = u->nkeep - s->keep_pos;
      if (k > s->batch_rows) k = s->batch_rows;
      if ((int64_t)k > left) k = (size_t)left;
      if (u->keep_all && s->keep_pos == 0 && k == arw_batch_rows(u->b)) {
        *out = u->b; /* the whole row group as it is */
      } else {
        arw_batch_clear(s->outb);
        int rc = arw_batch_append_rows(s->outb, u->b, u->keep + s->keep_pos, k);
        if (rc) return rc;
        *out = s->outb;
      }
      s->keep_pos += k;
      s->st.rows_returned += (int64_t)k;
      return 0;
    }
    bool end = false;
    int rc = next_unit(s, &end);
    if (rc) {
      s->failed = rc;
      return rc;
    }
    if (end) {
      s->done = true;
      return 0;
    }
  }
}

/* ---- open / free --------------------------------------------------------------------------- */

static bool is_partition(const dl_metadata *md, const char *name) {
  for (size_t i = 0; i < md->num_partition_columns; i++)
    if (!strcasecmp(md->partition_columns[i], name)) return true;
  return false;
}

static const dl_type SCN__LONG = {.kind = DL_TYPE_LONG};

/* The row tracking columns after the projected ones (scn_opts.row_tracking). */
static int setup_rowtrack(scn_scan *s) {
  if (!dl_rowtrack_enabled(s->snap))
    return dd_err_set(DD_EINVAL, "scan: the table does not enable row tracking");
  const char *keys[2] = {DL_RT_ID_COLUMN_KEY, DL_RT_VERSION_COLUMN_KEY};
  int rc = 0;
  for (int k = 0; k < 2 && !rc; k++) {
    const char *name = dl_snapshot_property(s->snap, keys[k]);
    s->rt_fields[k] = (dl_field){.name = name, .type = &SCN__LONG, .nullable = true,
                                 .metadata_json = "{}", .column_mapping_id = -1,
                                 .physical_name = name};
    scn__col *c = &s->cols[s->ncols];
    c->field = &s->rt_fields[k];
    c->rowtrack = k ? SCN__RT_VERSION : SCN__RT_ID;
    rc = scn_arrow_field(s->schema, ARW_ROOT, name, &SCN__LONG, true, &c->arw_id);
    if (!rc) s->ncols++;
  }
  return rc;
}

static int setup_columns(scn_scan *s, const scn_opts *o) {
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s->snap));
  const dl_metadata *md = dl_snapshot_metadata(s->snap);
  size_t n = o->num_columns ? o->num_columns : root->num_fields;
  s->cols = calloc(n + 2, sizeof *s->cols);
  if (!s->cols) return dd_err_set(DD_ENOMEM, "scan: out of memory");
  int rc = arw_schema_new(&s->schema);
  for (size_t i = 0; i < n && !rc; i++) {
    const dl_field *f = o->num_columns ? scn__find_field(root, o->columns[i]) : &root->fields[i];
    if (!f) return dd_err_set(DD_EINVAL, "scan: no column '%s' in the table", o->columns[i]);
    for (size_t j = 0; j < i; j++)
      if (s->cols[j].field == f)
        return dd_err_set(DD_EINVAL, "scan: column '%s' is named twice", f->name);
    scn__col *c = &s->cols[s->ncols];
    c->field = f;
    c->partition = is_partition(md, f->name);
    c->part_key = strcmp(s->mode, "none") && f->physical_name ? f->physical_name : f->name;
    rc = scn_arrow_field(s->schema, ARW_ROOT, f->name, f->type, true, &c->arw_id);
    if (!rc) s->ncols++;
  }
  return rc || !o->row_tracking ? rc : setup_rowtrack(s);
}

static int setup_roots(scn_scan *s, const scn_opts *o) {
  const char *loc = dl_table_location(s->t);
  if (!strncmp(loc, "file://", 7)) loc += 7;
  else if (!strncmp(loc, "file:", 5)) loc += 5;
  else if (strstr(loc, "://")) /* object storage: its store reads only below the root */
    return 0;
  if (!(s->table_dir = realpath(loc, NULL)))
    return dd_err_set(DD_EIO, "scan: cannot open table directory '%s'", loc);
  s->roots = calloc(o->num_roots ? o->num_roots : 1, sizeof *s->roots);
  if (!s->roots) return dd_err_set(DD_ENOMEM, "scan: out of memory");
  for (size_t i = 0; i < o->num_roots; i++) {
    if (!o->roots[i] || o->roots[i][0] != '/')
      return dd_err_set(DD_EINVAL, "scan: root '%s' is not an absolute path",
                        o->roots[i] ? o->roots[i] : "(null)");
    char *r = realpath(o->roots[i], NULL);
    if (r) s->roots[s->nroots++] = r; /* a root that does not exist holds no file */
  }
  return 0;
}

int scn_open(scn_scan **out, dl_table *t, dl_snapshot *snap, const scn_opts *opts) {
  *out = NULL;
  scn_opts defaults = SCN_OPTS_INIT;
  const scn_opts *o = opts ? opts : &defaults;
  if (o->version != SCN_OPTS_VERSION)
    return dd_err_set(DD_EINVAL, "scan: options version %u, expected %u", o->version,
                      SCN_OPTS_VERSION);
  int rc = dl_protocol_check(dl_snapshot_protocol(snap), false);
  if (rc) return rc;
  scn_scan *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "scan: out of memory");
  s->t = t;
  s->snap = snap;
  s->batch_rows = o->batch_rows ? o->batch_rows : SCN_DEFAULT_BATCH_ROWS;
  s->limit = o->limit;
  s->threads = o->threads ? o->threads : default_threads();
  if (s->threads > SCN_MAX_THREADS) s->threads = SCN_MAX_THREADS;
  const char *mode = dl_snapshot_property(snap, "delta.columnMapping.mode");
  s->mode = mode && (!strcmp(mode, "name") || !strcmp(mode, "id")) ? mode : "none";
  s->o = o;
  rc = setup_roots(s, o);
  if (!rc) rc = setup_columns(s, o);
  if (!rc) rc = scn__unit_init(&s->cu, s->schema);
  if (!rc) rc = arw_batch_new(&s->outb, s->schema);
  if (!rc) rc = dl_snapshot_files(snap, add_file, s);
  if (rc && s->cb_rc) rc = s->cb_rc;
  if (!rc && o->only_file && s->nfiles == 0)
    rc = dd_err_set(DD_ENOTFOUND, "scan: '%s' is not an active file of version %lld",
                    o->only_file, (long long)dl_snapshot_version(snap));
  s->o = NULL;
  if (rc) {
    scn_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

const arw_schema *scn_schema(const scn_scan *s) { return s->schema; }

void scn_stats_get(const scn_scan *s, scn_stats *out) { *out = s->st; }

void scn_free(scn_scan *s) {
  if (!s) return;
  scn__pool_free(s->pool);
  scn__rg_free(&s->rg);
  scn__file_close(s->cur);
  for (size_t i = 0; i < s->nfiles; i++) {
    free(s->files[i].path);
    free(s->files[i].pvals);
    free(s->files[i].dv_text);
  }
  free(s->files);
  for (size_t i = 0; i < s->nroots; i++) free(s->roots[i]);
  free(s->roots);
  free(s->table_dir);
  scn__unit_free(&s->cu);
  arw_batch_free(s->outb);
  arw_schema_free(s->schema);
  free(s->cols);
  free(s);
}
