/* dop_generate.c: GENERATE symlink_format_manifest. Writes one manifest per partition,
 * _symlink_format_manifest/<col>=<value>/.../manifest (or _symlink_format_manifest/manifest
 * for an unpartitioned table), each listing the absolute URIs of the partition's active
 * data files, one per line, so Presto/Athena/Hive can read the current version. Partition
 * columns and values are Hive-escaped (so neither can name a directory outside the manifest
 * tree); every listed file must resolve under the table or an allowed root; a null value is __HIVE_DEFAULT_PARTITION__. Manifests of
 * partitions that no longer have files are deleted with their empty directories. Tables
 * with deletion vectors are refused, as Delta does: a manifest cannot express them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/deltaops/dop_int.h"

#define MANIFEST_DIR "_symlink_format_manifest"

static const dop_col NO_COLS[1] = {{"", "", true}};

typedef struct entry {
  char *part, *uri;
} entry;

typedef struct gctx {
  const char *location;
  const dl_metadata *m;
  const dop_roots *roots;
  entry *e;
  size_t n, cap;
} gctx;

static void hive_escape(FILE *f, const char *v) {
  for (; *v; v++) {
    unsigned char c = (unsigned char)*v;
    if (c < 0x20 || strchr("\"#%'*/:=?\\\x7f{[]^", c)) fprintf(f, "%%%02X", c);
    else fputc(c, f);
  }
}

static char *partition_dir(const gctx *g, const dl_file *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&buf, &len);
  if (!mf) return NULL;
  for (size_t i = 0; i < g->m->num_partition_columns; i++) {
    const char *col = g->m->partition_columns[i], *v = NULL;
    dl_kv_get(f->partition_values, col, &v);
    fputs(i ? "/" : "", mf);
    hive_escape(mf, col);
    fputc('=', mf);
    if (v && *v) hive_escape(mf, v);
    else fputs("__HIVE_DEFAULT_PARTITION__", mf);
  }
  fclose(mf);
  return buf;
}

static int file_cb(void *vctx, const dl_file *f) {
  gctx *g = vctx;
  if (f->dv)
    return dd_err_set(DD_EPRECOND, "cannot generate symlink manifests: file %s has a deletion vector "
                      "(manifests cannot express deleted rows)", f->path);
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 64;
    entry *n = realloc(g->e, cap * sizeof *n);
    if (!n) return DOP_OOM();
    g->e = n;
    g->cap = cap;
  }
  char *abs = NULL;
  int rc = dop__log_path(&abs, NULL, g->location, f->path, g->roots);
  if (rc) return rc;
  entry *e = &g->e[g->n];
  e->part = partition_dir(g, f);
  e->uri = NULL;
  if (abs && asprintf(&e->uri, "file://%s", abs) < 0) e->uri = NULL;
  free(abs);
  g->n++;
  return e->part && e->uri ? 0 : DOP_OOM();
}

static int cmp_entry(const void *a, const void *b) {
  const entry *x = a, *y = b;
  int c = strcmp(x->part, y->part);
  return c ? c : strcmp(x->uri, y->uri);
}

static int write_manifests(os_store *st, gctx *g, dop__set *written) {
  int rc = 0;
  for (size_t i = 0; i < g->n && !rc;) {
    size_t j = i;
    char *buf = NULL, *path = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    if (!mf) return DOP_OOM();
    for (; j < g->n && !strcmp(g->e[j].part, g->e[i].part); j++) fprintf(mf, "%s\n", g->e[j].uri);
    fclose(mf);
    const char *part = g->e[i].part;
    if (asprintf(&path, "%s%s%s/manifest", MANIFEST_DIR, *part ? "/" : "", part) < 0) path = NULL;
    rc = path && buf ? os_put(st, path, buf, len) : DOP_OOM();
    if (!rc) rc = dop__set_add(written, path);
    free(path);
    free(buf);
    i = j;
  }
  return rc;
}

/* Deletes manifests not written this time; returns whether dir is now empty. */
static int remove_stale(os_store *st, const char *dir, const dop__set *written, bool *empty) {
  os_list l = {0};
  int rc = os_list_dir(st, dir, &l);
  *empty = false;
  if (rc == DD_ENOTFOUND) return dd_err_clear(), *empty = true, 0;
  size_t left = l.count;
  for (size_t i = 0; i < l.count && !rc; i++) {
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, l.entries[i].name) < 0) { rc = DOP_OOM(); break; }
    if (l.entries[i].is_dir) {
      bool sub_empty;
      rc = remove_stale(st, p, written, &sub_empty);
      if (!rc && sub_empty && os_rmdir(st, p) == 0) left--;
    } else if (!strcmp(l.entries[i].name, "manifest") && !dop__set_has(written, p)) {
      if ((rc = os_delete(st, p)) == 0) left--;
    }
    free(p);
  }
  os_list_free(&l);
  *empty = left == 0;
  dd_err_clear();
  return rc;
}

int dop_generate(dop_result **out, const char *location, const char *mode) {
  return dop_generate_in(out, location, mode, NULL);
}

int dop_generate_in(dop_result **out, const char *location, const char *mode,
                    const dop_roots *roots) {
  *out = NULL;
  if (!mode || strcasecmp(mode, "symlink_format_manifest"))
    return dd_err_set(DD_EINVAL, "generate: unsupported mode '%s' (only symlink_format_manifest)", mode ? mode : "");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  os_store *st = NULL;
  dop__set written = {0};
  gctx g = {.location = location, .roots = roots};
  int rc = dop__open_latest(&t, &s, location);
  if (rc) return rc;
  g.m = dl_snapshot_metadata(s);
  bool empty;
  if ((rc = dl_snapshot_files(s, file_cb, &g)) || (rc = os_open(&st, location))) goto cleanup;
  qsort(g.e, g.n, sizeof *g.e, cmp_entry);
  if ((rc = write_manifests(st, &g, &written))) goto cleanup;
  if ((rc = remove_stale(st, MANIFEST_DIR, &written, &empty))) goto cleanup;
  rc = dop__result_new(out, NO_COLS, 0);
cleanup:
  for (size_t i = 0; i < g.n; i++) free(g.e[i].part), free(g.e[i].uri);
  free(g.e);
  dop__set_free(&written);
  os_store_free(st);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
