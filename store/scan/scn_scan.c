/* scn_scan.c: the scan's life: the projected columns and their Arrow schema, the list of
 * active files (copied from the snapshot, after keep_file), and scn_next, which reads one
 * row group at a time (scn_read.c), drops the rows the file's deletion vector names, adds
 * partition values and hands out batches of at most batch_rows rows. Data files and
 * deletion vectors are read only from inside the table directory or opts.roots. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

typedef struct scn__col {
  const dl_field *field;
  int arw_id;
  bool partition;
  const char *part_key;  /* key in partitionValues (physical name under column mapping) */
} scn__col;

typedef struct scn__file {
  char *path;            /* as in the log (decoded) */
  char *pvals;           /* packed partition values (copied) */
  bool has_dv;
  dl_dv dv;
  char *dv_text;         /* dv.path_or_inline (copied) */
} scn__file;

struct scn_scan {
  dl_table *t;
  dl_snapshot *snap;
  size_t batch_rows;
  int64_t limit;
  const char *mode;      /* column mapping: "none", "name" or "id" */
  arw_schema *schema;
  scn__col *cols;
  size_t ncols;
  char *table_dir;       /* realpath of the table location */
  char **roots;
  size_t nroots;
  scn__file *files;
  size_t nfiles, cap_files, next_file;
  /* the file being read */
  pq_file *pf;
  scn__bind *binds;      /* per column (partition columns unbound) */
  scn__rg rg;
  size_t next_rg, nrg;
  int64_t rg_base;       /* file row index of the current row group's first row */
  dl_rowset dv;
  size_t dv_pos;
  const scn__file *cur;
  /* the current row group's rows and those of it still to hand out */
  arw_batch *rgb;
  size_t *keep;
  size_t nkeep, keep_cap, keep_pos;
  bool keep_all;
  arw_batch *outb;
  scn_stats st;
  /* open-time file collection */
  const scn_opts *o;
  int cb_rc;
};

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

static void close_file(scn_scan *s) {
  for (size_t i = 0; s->binds && i < s->ncols; i++) scn__bind_free(&s->binds[i]);
  free(s->binds);
  s->binds = NULL;
  scn__rg_free(&s->rg);
  pq_file_free(s->pf);
  s->pf = NULL;
  dl_rowset_free(&s->dv);
  s->dv = (dl_rowset){NULL, 0};
  s->cur = NULL;
}

static int load_dv(scn_scan *s, const scn__file *f) {
  if (f->dv.storage_type != 'i') { /* a file: confine it before the engine reads it */
    char *p = NULL, *real = NULL;
    int rc = dl_dv_path(&p, &f->dv);
    if (!rc) rc = resolve(s, p, &real);
    free(p);
    free(real);
    if (rc) return dd_err_wrap(rc, "deletion vector of '%s'", f->path);
  }
  int rc = dl_dv_load(&s->dv, s->t, &f->dv);
  return rc ? dd_err_wrap(rc, "deletion vector of '%s'", f->path) : 0;
}

static int open_file(scn_scan *s, const scn__file *f) {
  char *real = NULL;
  int rc = resolve(s, f->path, &real);
  if (!rc) rc = pq_file_open_path(&s->pf, real);
  free(real);
  if (rc) return dd_err_wrap(rc, "data file '%s'", f->path);
  s->cur = f;
  s->next_rg = 0;
  s->nrg = pq_file_num_row_groups(s->pf);
  s->rg_base = 0;
  s->dv_pos = 0;
  if (f->has_dv && (rc = load_dv(s, f))) return rc;
  size_t nleaves = pq_file_num_columns(s->pf);
  s->rg = (scn__rg){.pf = s->pf, .ncols = nleaves};
  s->rg.cols = calloc(nleaves ? nleaves : 1, sizeof *s->rg.cols);
  s->rg.cols_rg = malloc((nleaves ? nleaves : 1) * sizeof *s->rg.cols_rg);
  s->binds = calloc(s->ncols, sizeof *s->binds);
  if (!s->rg.cols || !s->rg.cols_rg || !s->binds)
    return dd_err_set(DD_ENOMEM, "scan: out of memory opening '%s'", f->path);
  for (size_t i = 0; i < nleaves; i++) s->rg.cols_rg[i] = SIZE_MAX;
  const pq_field *root = pq_file_schema(s->pf);
  for (size_t i = 0; i < s->ncols && !rc; i++) {
    const scn__col *c = &s->cols[i];
    if (c->partition) continue;
    const pq_field *x = scn__pq_child(root, c->field, s->mode);
    rc = scn__bind_node(&s->binds[i], s->schema, c->arw_id, c->field->type, x, 0, 0, -1,
                        s->mode);
  }
  if (rc) return dd_err_wrap(rc, "data file '%s'", f->path);
  s->st.files_read++;
  return 0;
}

/* ---- row groups ---------------------------------------------------------------------------- */

/* Reads the next row group of the current file into s->rgb and its kept rows. */
static int read_row_group(scn_scan *s) {
  size_t rg = s->next_rg++;
  int64_t n64 = pq_row_group_num_rows(s->pf, rg);
  if (n64 < 0) return dd_err_set(DD_ECORRUPT, "scan: row group with %lld rows", (long long)n64);
  size_t n = (size_t)n64;
  arw_batch_clear(s->rgb);
  s->rg.rg = rg;
  int rc = 0;
  for (size_t i = 0; i < s->ncols && !rc; i++) {
    const scn__col *c = &s->cols[i];
    if (c->partition) {
      const char *text = NULL;
      if (!dl_kv_get(s->cur->pvals, c->part_key, &text)) text = NULL;
      rc = scn__append_partition(s->rgb, c->arw_id, c->field->type, text, n);
    } else {
      rc = scn__read_field(&s->rg, s->rgb, &s->binds[i], n);
    }
    if (rc) rc = dd_err_wrap(rc, "column '%s' of '%s'", c->field->name, s->cur->path);
  }
  if (rc) return rc;
  s->st.row_groups_read++;
  s->st.rows_read += n64;
  /* the rows the deletion vector keeps */
  if (n > s->keep_cap) {
    size_t *k = realloc(s->keep, n * sizeof *k);
    if (!k) return dd_err_set(DD_ENOMEM, "scan: out of memory");
    s->keep = k;
    s->keep_cap = n;
  }
  size_t m = 0;
  const uint64_t base = (uint64_t)s->rg_base;
  for (size_t i = 0; i < n; i++) {
    uint64_t row = base + i;
    while (s->dv_pos < s->dv.count && s->dv.rows[s->dv_pos] < row) s->dv_pos++;
    if (s->dv_pos < s->dv.count && s->dv.rows[s->dv_pos] == row) continue;
    s->keep[m++] = i;
  }
  s->st.rows_deleted += (int64_t)(n - m);
  s->nkeep = m;
  s->keep_pos = 0;
  s->keep_all = m == n;
  s->rg_base += n64;
  return 0;
}

int scn_next(scn_scan *s, const arw_batch **out) {
  *out = NULL;
  for (;;) {
    int64_t left = s->limit < 0 ? INT64_MAX : s->limit - s->st.rows_returned;
    if (left <= 0) return 0;
    if (s->keep_pos < s->nkeep) {
      size_t k = s->nkeep - s->keep_pos;
      if (k > s->batch_rows) k = s->batch_rows;
      if ((int64_t)k > left) k = (size_t)left;
      if (s->keep_all && s->keep_pos == 0 && k == arw_batch_rows(s->rgb)) {
        *out = s->rgb; /* the whole row group as it is */
      } else {
        arw_batch_clear(s->outb);
        int rc = arw_batch_append_rows(s->outb, s->rgb, s->keep + s->keep_pos, k);
        if (rc) return rc;
        *out = s->outb;
      }
      s->keep_pos += k;
      s->st.rows_returned += (int64_t)k;
      return 0;
    }
    if (s->pf && s->next_rg < s->nrg) {
      int rc = read_row_group(s);
      if (rc) return rc;
      continue;
    }
    close_file(s);
    if (s->next_file == s->nfiles) return 0;
    int rc = open_file(s, &s->files[s->next_file++]);
    if (rc) return rc;
  }
}

/* ---- open / free --------------------------------------------------------------------------- */

static bool is_partition(const dl_metadata *md, const char *name) {
  for (size_t i = 0; i < md->num_partition_columns; i++)
    if (!strcasecmp(md->partition_columns[i], name)) return true;
  return false;
}

static int setup_columns(scn_scan *s, const scn_opts *o) {
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s->snap));
  const dl_metadata *md = dl_snapshot_metadata(s->snap);
  size_t n = o->num_columns ? o->num_columns : root->num_fields;
  s->cols = calloc(n ? n : 1, sizeof *s->cols);
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
  return rc;
}

static int setup_roots(scn_scan *s, const scn_opts *o) {
  const char *loc = dl_table_location(s->t);
  if (!strncmp(loc, "file://", 7)) loc += 7;
  else if (!strncmp(loc, "file:", 5)) loc += 5;
  else if (strstr(loc, "://"))
    return dd_err_set(DD_EUNSUPPORTED, "scan: reads local tables only, not '%s'", loc);
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
  const char *mode = dl_snapshot_property(snap, "delta.columnMapping.mode");
  s->mode = mode && (!strcmp(mode, "name") || !strcmp(mode, "id")) ? mode : "none";
  s->o = o;
  rc = setup_roots(s, o);
  if (!rc) rc = setup_columns(s, o);
  if (!rc) rc = arw_batch_new(&s->rgb, s->schema);
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
  close_file(s);
  for (size_t i = 0; i < s->nfiles; i++) {
    free(s->files[i].path);
    free(s->files[i].pvals);
    free(s->files[i].dv_text);
  }
  free(s->files);
  for (size_t i = 0; i < s->nroots; i++) free(s->roots[i]);
  free(s->roots);
  free(s->table_dir);
  free(s->keep);
  arw_batch_free(s->outb);
  arw_batch_free(s->rgb);
  arw_schema_free(s->schema);
  free(s->cols);
  free(s);
}
