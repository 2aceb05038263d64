/* opt_cluster.c: which files a clustering OPTIMIZE rewrites, as Delta's ClusteringStrategy
 * picks them, and the tags its new files carry.
 *
 * A clustered file is one a clustering OPTIMIZE wrote: clusteringProvider "liquid" and the
 * tags ZCUBE_ID (one id per rewritten bin, a "ZCube") and ZCUBE_ZORDER_BY (the clustering
 * columns, a JSON list). Candidates are the files with no provider or "liquid" whose
 * ZCUBE_ZORDER_BY, when they have one, names today's clustering columns; the others (a
 * provider of another implementation, or clustered by older columns before an ALTER TABLE
 * CLUSTER BY) are skipped. Among the candidates, ZCubes of OPT_CLUSTER_MIN_CUBE_SIZE bytes
 * or more are left alone. Then:
 *  - OPTIMIZE FULL with skipped files: the small candidates and the skipped files;
 *  - else the small candidates, unless they are all one ZCube (already clustered together
 *    and nothing new: nothing to do).
 * So a plain OPTIMIZE right after another rewrites nothing; new files bring the small
 * ZCubes with them into one new clustering. */
#include "store/optimize/opt_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define TAG_ID "ZCUBE_ID"
#define TAG_BY "ZCUBE_ZORDER_BY"

static const char *tag(const dl_file *f, const char *key) {
  const char *v = NULL;
  return f->tags && dl_kv_get(f->tags, key, &v) ? v : NULL;
}

/* Does the tag's JSON list name the same columns, in order, as cols_json? */
static bool same_columns(const char *tag_json, const char *cols_json) {
  json_t *a = json_loads(tag_json, 0, NULL), *b = json_loads(cols_json, 0, NULL);
  bool eq = a && b && json_equal(a, b);
  json_decref(a);
  json_decref(b);
  return eq;
}

/* Not another implementation's file, nor one clustered by other columns. */
static bool candidate(const dl_file *f, const char *cols_json) {
  const char *cp = f->clustering_provider, *by = tag(f, TAG_BY);
  return (!cp || !strcmp(cp, "liquid")) && !(tag(f, TAG_ID) && by && !same_columns(by, cols_json));
}

typedef struct pick { size_t i; const char *cube; } pick;

static int cmp_cube(const void *x, const void *y) {
  const pick *a = x, *b = y;
  if (!a->cube || !b->cube) return (a->cube != NULL) - (b->cube != NULL); /* unclustered first */
  int c = strcmp(a->cube, b->cube);
  return c ? c : (a->i > b->i) - (a->i < b->i);
}

int opt__cluster_pick(bool *keep, const dl_file *const *f, size_t n, const char *cols_json,
                      bool full, int64_t min_cube) {
  pick *c = calloc(n + 1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "optimize: out of memory");
  size_t nc = 0, skipped = 0;
  for (size_t i = 0; i < n; i++) {
    keep[i] = false;
    if (candidate(f[i], cols_json)) c[nc++] = (pick){i, tag(f[i], TAG_BY) ? tag(f[i], TAG_ID) : NULL};
    else skipped++;
  }
  qsort(c, nc, sizeof *c, cmp_cube);
  size_t small = 0, cubes = 0, loose = 0;
  for (size_t a = 0; a < nc;) { /* one ZCube (or one unclustered file) at a time */
    size_t b = a + 1;
    int64_t bytes = f[c[a].i]->size;
    while (c[a].cube && b < nc && c[b].cube && !strcmp(c[a].cube, c[b].cube)) bytes += f[c[b++].i]->size;
    if (!c[a].cube || bytes < min_cube) {
      for (size_t j = a; j < b; j++) c[small++] = c[j];
      if (c[a].cube) cubes++;
      else loose++;
    }
    a = b;
  }
  bool take = (full && skipped) || loose > 0 || cubes > 1;
  for (size_t j = 0; take && j < small; j++) keep[c[j].i] = true;
  for (size_t i = 0; full && skipped && i < n; i++)
    if (!candidate(f[i], cols_json)) keep[i] = true;
  free(c);
  return 0;
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int opt__cluster_input_stats(opt_result *r, const dl_file *const *f, size_t n) {
  const char **ids = calloc(n + 1, sizeof *ids);
  if (!ids) return dd_err_set(DD_ENOMEM, "optimize: out of memory");
  size_t nid = 0;
  for (size_t i = 0; i < n; i++) {
    const char *id = tag(f[i], TAG_ID);
    if (id) {
      ids[nid++] = id;
      r->cluster.in_cube_files++;
      r->cluster.in_cube_size += f[i]->size;
    } else {
      r->cluster.in_other_files++;
      r->cluster.in_other_size += f[i]->size;
    }
  }
  qsort(ids, nid, sizeof *ids, cmp_str);
  for (size_t i = 0; i < nid; i++) r->cluster.in_cubes += i == 0 || strcmp(ids[i - 1], ids[i]);
  free(ids);
  return 0;
}

int opt_check_where(const dl_snapshot *s, const char *where) {
  if (!where || !dop_is_clustered(s)) return 0;
  return dd_err_set(DD_EUNSUPPORTED, "[DELTA_CLUSTERING_WITH_PARTITION_PREDICATE] OPTIMIZE command "
                    "for Delta table with clustering doesn't support partition predicates. Please "
                    "remove the predicates: %s.", where);
}

int opt__cluster_tags(char **out, const char *cols_json) {
  char id[37];
  dl_uuid(id);
  const char *keys[] = {TAG_ID, TAG_BY}, *vals[] = {id, cols_json};
  return dl_kv_pack(out, keys, vals, 2);
}
