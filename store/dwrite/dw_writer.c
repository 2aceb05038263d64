/* dw_writer.c: the data writer's API: the plan made once per writer (Parquet schema,
 * stats columns, partition directory), then files: each one a Parquet writer that batches
 * are shredded into, cut into row groups by rows or buffered bytes, closed when it passes
 * target_file_bytes (or at dw_finish). Each file streams into a put-if-absent of the store
 * (os_put_stream: a local store gets each row group as it is encoded, an object store one
 * upload part at a time, so a file never sits whole in memory; it appears under its name
 * only once complete). */
#include "store/dwrite/dw_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

typedef struct dw__out {
  dl_file f;
  char *path, *stats, *pv;
} dw__out;

struct dw_writer {
  dw_opts o;
  dl_table *t;
  const dl_snapshot *snap;
  const dl_type *root;     /* the table's schema, or cdc_root */
  dl_type cdc_root;        /* change data: the table's columns and _change_type, or row
                            * tracking: the table's and the materialized columns */
  dl_field *cdc_fields;
  const char *const *part;
  size_t npart;
  pq_wfield pqs;
  pq_writer_opts po;
  dw__stats st;
  dw__shredder *shred;
  char *dir;              /* partition directory ("" or "a=1/b=x/") */
  const char **part_keys; /* partitionValues keys: physical names under column mapping */
  pq_writer *cur;         /* the file being written, or NULL */
  os_put_stream *ps;      /* where cur's bytes go (with cur) */
  char *cur_path;         /* cur's path in the table (with cur) */
  int64_t cur_bytes;      /* bytes of cur handed to ps so far */
  int64_t cur_rows, rows;
  int64_t rg_rows;        /* rows in the current row group */
  dw__out *files;
  size_t nfiles, capfiles;
  unsigned seq;
  bool finished, failed;
};

static int64_t now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static const dl_type DW__STRING = {.kind = DL_TYPE_STRING};
static const dl_type DW__LONG = {.kind = DL_TYPE_LONG};

/* The table's root type with n more nullable columns (names borrowed from the snapshot),
 * as written under their names also with column mapping. */
static int extra_root(dw_writer *w, const dl_type *root, const char *const *names,
                      const dl_type *type, size_t n) {
  w->cdc_fields = calloc(root->num_fields + n, sizeof *w->cdc_fields);
  if (!w->cdc_fields) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  memcpy(w->cdc_fields, root->fields, root->num_fields * sizeof *w->cdc_fields);
  for (size_t i = 0; i < n; i++)
    w->cdc_fields[root->num_fields + i] =
        (dl_field){.name = names[i], .type = type, .nullable = true, .column_mapping_id = -1,
                   .physical_name = names[i]};
  w->cdc_root = *root;
  w->cdc_root.fields = w->cdc_fields;
  w->cdc_root.num_fields = root->num_fields + n;
  w->root = &w->cdc_root;
  return 0;
}

static int cdc_root(dw_writer *w, const dl_type *root) {
  const char *name = "_change_type";
  return extra_root(w, root, &name, &DW__STRING, 1);
}

static int rowtrack_root(dw_writer *w, const dl_type *root) {
  if (!dl_rowtrack_enabled(w->snap))
    return dd_err_set(DD_EINVAL, "dwrite: the table does not enable row tracking");
  const char *names[2] = {dl_snapshot_property(w->snap, DL_RT_ID_COLUMN_KEY),
                          dl_snapshot_property(w->snap, DL_RT_VERSION_COLUMN_KEY)};
  return extra_root(w, root, names, &DW__LONG, 2);
}

static bool mapped(const dl_snapshot *s) {
  const char *m = dl_snapshot_property(s, "delta.columnMapping.mode");
  return m && (strcmp(m, "name") == 0 || strcmp(m, "id") == 0);
}

/* Does column c's physical path equal the parts (a JSON array of strings, or one string)? */
static bool same_path(const dw__stat *c, const json_t *parts) {
  size_t n = json_is_array(parts) ? json_array_size(parts) : 1;
  if (n != c->depth) return false;
  for (size_t i = 0; i < n; i++) {
    const char *p = json_string_value(json_is_array(parts) ? json_array_get(parts, i) : parts);
    if (!p || strcmp(p, c->path[i])) return false;
  }
  return true;
}

/* A clustered table's clustering columns always get stats (PROTOCOL.md, Clustered Table):
 * the columns the delta.clustering domain's configuration names are marked indexed. */
static void force_clustering_stats(dw__stats *st, const char *domain_json) {
  json_t *j = domain_json ? json_loads(domain_json, 0, NULL) : NULL;
  const json_t *cols = json_object_get(j, "clusteringColumns");
  for (size_t k = 0; k < json_array_size(cols); k++)
    for (size_t i = 0; i < st->n; i++)
      if (same_path(&st->cols[i], json_array_get(cols, k))) st->cols[i].indexed = true;
  json_decref(j);
}

int dw_open(dw_writer **out, dl_table *t, const dl_snapshot *s, const arw_schema *in,
            const dw_opts *opts) {
  *out = NULL;
  (void)in; /* columns are matched by name at each batch */
  int rc = dl_protocol_check(dl_snapshot_protocol(s), true);
  if (rc) return rc;
  dw_writer *w = calloc(1, sizeof *w);
  if (!w) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  dw_opts def = DW_OPTS_INIT;
  w->o = opts ? *opts : def;
  if (w->o.row_group_rows <= 0) w->o.row_group_rows = 1 << 20;
  if (w->o.row_group_bytes == 0) w->o.row_group_bytes = 64u << 20;
  w->t = t;
  w->snap = s;
  const dl_metadata *md = dl_snapshot_metadata(s);
  w->root = dl_schema_root(dl_snapshot_schema(s));
  if (w->o.change_data) w->o.row_tracking = false;
  if (w->o.row_tracking && (rc = rowtrack_root(w, w->root))) {
    dw_free(w);
    return rc;
  }
  if (w->o.change_data) {
    w->o.data_change = false;
    if ((rc = cdc_root(w, w->root))) {
      dw_free(w);
      return rc;
    }
  }
  w->part = md->partition_columns;
  w->npart = md->num_partition_columns;
  pq_writer_opts po = PQ_WRITER_OPTS_INIT;
  po.codec = w->o.codec;
  po.dictionary = w->o.dictionary;
  po.row_group_rows = w->o.row_group_rows;
  po.created_by = "deltad " DL_ENGINE_VERSION;
  w->po = po;
  dd_buf dir = {0};
  rc = dw__pqschema(&w->pqs, w->root, w->part, w->npart, mapped(s));
  if (!rc) rc = dw__stats_plan(&w->st, w->root, w->part, w->npart, md->configuration);
  for (size_t i = 0; !rc && i < dl_snapshot_num_domains(s); i++)
    if (!strcmp(dl_snapshot_domain(s, i)->domain, "delta.clustering"))
      force_clustering_stats(&w->st, dl_snapshot_domain(s, i)->configuration);
  if (!rc && w->npart && !(w->part_keys = calloc(w->npart, sizeof *w->part_keys)))
    rc = dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  for (size_t i = 0; !rc && i < w->npart; i++) {
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), w->part[i]);
    w->part_keys[i] = f && mapped(s) && f->physical_name ? f->physical_name : w->part[i];
  }
  if (!rc && w->o.change_data) dd_buf_puts(&dir, "_change_data/");
  if (!rc && w->npart) rc = dw__partition_dir(&dir, w->part_keys, w->npart, w->o.partition_values);
  if (!rc) {
    dd_buf_puts(&dir, "");
    if (dir.oom) rc = dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  }
  w->dir = dir.p;
  if (rc) {
    dw_free(w);
    return rc;
  }
  *out = w;
  return 0;
}

/* pq_writer's sink: the bytes go on into the file's put stream. */
static int file_sink(void *ctx, const void *data, size_t len) {
  dw_writer *w = ctx;
  int rc = os_put_stream_write(w->ps, data, len);
  if (!rc) w->cur_bytes += (int64_t)len;
  return rc;
}

/* Drops the current file: its stream leaves nothing behind. */
static void file_drop(dw_writer *w) {
  pq_writer_free(w->cur);
  os_put_stream_abort(w->ps);
  free(w->cur_path);
  w->cur = NULL;
  w->ps = NULL;
  w->cur_path = NULL;
}

static int file_start(dw_writer *w) {
  dw__stats_reset(&w->st);
  w->cur_rows = w->rg_rows = w->cur_bytes = 0;
  /* room for the file at once where the store gathers it (address space only), so that it
   * is not copied at each doubling as it grows: the caller's hint, or the target size and
   * a last row group */
  size_t room = w->o.file_bytes_hint;
  if (!room && w->o.target_file_bytes > 0 && (uint64_t)w->o.target_file_bytes < (4ull << 30))
    room = (size_t)w->o.target_file_bytes + w->o.row_group_bytes;
  dd_buf path = {0};
  dd_buf_puts(&path, w->dir);
  int rc = dw__file_name(&path, w->o.change_data ? "cdc" : "part", w->seq++, w->o.codec);
  w->cur_path = path.p;
  if (!rc) rc = os_put_stream_open(dl_table_store(w->t), w->cur_path, room, &w->ps);
  if (!rc) rc = pq_writer_open_sink(&w->cur, file_sink, w, &w->pqs, &w->po);
  /* the caller cuts the files (no size to watch): encode each row group behind the
   * shredding of the next */
  if (!rc && w->o.target_file_bytes <= 0) pq_writer_encode_behind(w->cur, true);
  if (rc) file_drop(w);
  return rc;
}

/* Closes the current file and commits its put into the store. */
static int file_end(dw_writer *w) {
  if (!w->cur) return 0;
  if (w->cur_rows == 0) {
    file_drop(w);
    w->seq--; /* its number goes to the next file */
    return 0;
  }
  char *stats = NULL, *pv = NULL;
  int rc = pq_writer_close(w->cur, NULL, NULL);
  if (!rc) rc = dw__stats_take_ranges(&w->st, w->cur);
  pq_writer_free(w->cur);
  w->cur = NULL;
  if (!rc && w->nfiles == w->capfiles) {
    size_t cap = w->capfiles ? w->capfiles * 2 : 8;
    dw__out *n = realloc(w->files, cap * sizeof *n);
    if (!n) rc = dd_err_set(DD_ENOMEM, "dwrite: out of memory");
    else {
      w->files = n;
      w->capfiles = cap;
    }
  }
  if (!rc) rc = dw__stats_json(&stats, &w->st, w->cur_rows);
  if (!rc && w->o.partition_values) {
    size_t n = 0;
    for (const char *p = w->o.partition_values; *p; ) { /* packed: key\0value\0 ... \0 */
      p += strlen(p) + 1;
      p += strlen(p) + 1;
      n = (size_t)(p - w->o.partition_values);
    }
    pv = malloc(n + 1);
    if (!pv) rc = dd_err_set(DD_ENOMEM, "dwrite: out of memory");
    else memcpy(pv, w->o.partition_values, n + 1);
  }
  if (!rc) {
    rc = os_put_stream_commit(w->ps);
    w->ps = NULL;
  }
  if (rc) {
    file_drop(w);
    free(stats);
    free(pv);
    return rc;
  }
  dw__out *o = &w->files[w->nfiles++];
  memset(o, 0, sizeof *o);
  o->path = w->cur_path;
  w->cur_path = NULL;
  o->stats = stats;
  o->pv = pv;
  o->f.path = o->f.raw_path = o->path;
  o->f.size = w->cur_bytes;
  o->f.modification_time = now_ms();
  o->f.deletion_timestamp = -1;
  o->f.data_change = w->o.data_change;
  o->f.stats = o->stats;
  o->f.partition_values = o->pv ? o->pv : "";
  o->f.base_row_id = o->f.default_row_commit_version = -1;
  return 0;
}

/* Rows of b into the current file (opened when needed); cuts the row group at
 * row_group_bytes and the file at target_file_bytes. */
static int write_rows(dw_writer *w, const arw_batch *b) {
  size_t n = arw_batch_rows(b);
  int rc = w->cur ? 0 : file_start(w);
  if (!rc) rc = dw__shred_batch(&w->shred, w->cur, &w->st, w->root, w->part, w->npart, b);
  if (rc) return rc;
  w->cur_rows += (int64_t)n;
  w->rows += (int64_t)n;
  w->rg_rows += (int64_t)n;
  if (w->rg_rows >= w->o.row_group_rows) w->rg_rows = 0; /* pq_writer_end_rows cut it */
  if (pq_writer_buffered_bytes(w->cur) >= w->o.row_group_bytes) {
    rc = pq_writer_flush_row_group(w->cur);
    w->rg_rows = 0;
  }
  if (!rc && w->o.target_file_bytes > 0 &&
      pq_writer_bytes_written(w->cur) + (int64_t)pq_writer_buffered_bytes(w->cur) / 2 >=
          w->o.target_file_bytes)
    rc = file_end(w);
  return rc;
}

int dw_write(dw_writer *w, const arw_batch *b) {
  if (w->finished || w->failed)
    return dd_err_set(DD_EPRECOND, "dwrite: the writer is finished or failed");
  size_t n = arw_batch_rows(b);
  int rc = 0;
  /* a batch that would overfill the row group goes in slices */
  for (size_t at = 0; at < n && !rc;) {
    size_t room = (size_t)(w->o.row_group_rows - w->rg_rows);
    if (at == 0 && n <= room) {
      rc = write_rows(w, b);
      break;
    }
    size_t end = n - at < room ? n : at + room;
    arw_batch *part = NULL;
    rc = arw_batch_slice(&part, b, at, end);
    if (!rc) rc = write_rows(w, part);
    arw_batch_free(part);
    at = end;
  }
  if (rc) w->failed = true;
  return rc;
}

int dw_next_file(dw_writer *w) {
  if (w->finished || w->failed)
    return dd_err_set(DD_EPRECOND, "dwrite: the writer is finished or failed");
  int rc = file_end(w);
  if (rc) w->failed = true;
  return rc;
}

int dw_finish(dw_writer *w) {
  if (w->finished || w->failed)
    return dd_err_set(DD_EPRECOND, "dwrite: the writer is finished or failed");
  int rc = file_end(w);
  if (rc) w->failed = true;
  else w->finished = true;
  return rc;
}

size_t dw_num_files(const dw_writer *w) { return w->nfiles; }
const dl_file *dw_file(const dw_writer *w, size_t i) {
  return i < w->nfiles ? &w->files[i].f : NULL;
}
int64_t dw_rows(const dw_writer *w) { return w->rows; }

void dw_abort(dw_writer *w) {
  if (!w) return;
  for (size_t i = 0; i < w->nfiles; i++) os_delete(dl_table_store(w->t), w->files[i].path);
  w->failed = true;
}

void dw_free(dw_writer *w) {
  if (!w) return;
  if (!w->finished) dw_abort(w);
  file_drop(w);
  for (size_t i = 0; i < w->nfiles; i++) {
    free(w->files[i].path);
    free(w->files[i].stats);
    free(w->files[i].pv);
  }
  free(w->files);
  dw__shredder_free(w->shred);
  dw__stats_free(&w->st);
  dw__pqschema_free(&w->pqs);
  free(w->dir);
  free(w->part_keys);
  free(w->cdc_fields);
  free(w);
}
