/* dop_cluster.c: liquid clustering's table state. A table is clustered when its protocol
 * has the `clustering` writer feature; its clustering columns are in the `delta.clustering`
 * domain as {"clusteringColumns": [["part", ...], ...], "domainName": "delta.clustering"}
 * (as Delta writes it; each column a path of physical
 * names when column mapping is on; a plain string per column is read too, as PROTOCOL.md's
 * example writes it). ALTER TABLE ... CLUSTER BY (c, ...) | NONE rewrites that domain, as
 * Delta's AlterTableClusterByDeltaCommand does: operation "CLUSTER BY" with parameters
 * oldClusteringColumns / newClusteringColumns (comma-joined logical names); an unclustered,
 * unpartitioned table gets the feature (and domainMetadata) with it; CLUSTER BY NONE on an
 * unclustered table commits nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "store/deltaops/dop_int.h"

#define CLUSTER_DOMAIN "delta.clustering"
#define MAX_CLUSTER_COLUMNS 4 /* Delta's spark.databricks.delta.clusteringColumns.limit */

static const dop_col NO_COLS[1] = {{"", "", true}};

bool dop_is_clustered(const dl_snapshot *s) {
  const dl_protocol *p = dl_snapshot_protocol(s);
  for (size_t i = 0; p && p->writer_features && i < p->num_writer_features; i++)
    if (!strcmp(p->writer_features[i], "clustering")) return true;
  return false;
}

void dop_clustering_free(char **cols, size_t n) {
  for (size_t i = 0; cols && i < n; i++) free(cols[i]);
  free(cols);
}

/* One column of the domain (a path array or a string) as a logical dotted name. */
static char *logical_name(const dl_schema *sc, const json_t *e) {
  dd_buf b = {0};
  const dl_type *t = dl_schema_root(sc);
  size_t n = json_is_array(e) ? json_array_size(e) : 1;
  for (size_t j = 0; j < n; j++) {
    const json_t *part = json_is_array(e) ? json_array_get(e, j) : e;
    const char *phys = json_string_value(part), *name = phys;
    if (!phys) break;
    const dl_field *f = NULL;
    for (size_t k = 0; t && t->kind == DL_TYPE_STRUCT && k < t->num_fields && !f; k++)
      if ((t->fields[k].physical_name && !strcmp(t->fields[k].physical_name, phys)) ||
          !strcmp(t->fields[k].name, phys))
        f = &t->fields[k];
    if (f) name = f->name;
    t = f ? f->type : NULL;
    if (j) dd_buf_putc(&b, '.');
    dd_buf_puts(&b, name);
  }
  dd_buf_putc(&b, 0);
  if (b.oom) {
    dd_buf_free(&b);
    return NULL;
  }
  return b.p;
}

int dop_clustering_columns(char ***out, size_t *n, const dl_snapshot *s) {
  *out = NULL;
  *n = 0;
  if (!dop_is_clustered(s)) return 0;
  const char *cfg = NULL;
  for (size_t i = 0; i < dl_snapshot_num_domains(s); i++)
    if (!strcmp(dl_snapshot_domain(s, i)->domain, CLUSTER_DOMAIN))
      cfg = dl_snapshot_domain(s, i)->configuration;
  json_t *j = cfg ? json_loads(cfg, 0, NULL) : NULL;
  const json_t *cols = json_object_get(j, "clusteringColumns");
  size_t m = json_array_size(cols);
  char **v = calloc(m + 1, sizeof *v);
  int rc = v ? 0 : DOP_OOM();
  for (size_t i = 0; i < m && !rc; i++)
    if (!(v[i] = logical_name(dl_snapshot_schema(s), json_array_get(cols, i)))) rc = DOP_OOM();
  json_decref(j);
  if (rc) {
    dop_clustering_free(v, m);
    return rc;
  }
  *out = v;
  *n = m;
  return 1;
}

/* ---- REPLACE and RESTORE ----------------------------------------------------------------- */

static const char *domain_config(const dl_snapshot *s) {
  for (size_t i = 0; s && i < dl_snapshot_num_domains(s); i++)
    if (!strcmp(dl_snapshot_domain(s, i)->domain, CLUSTER_DOMAIN)) return dl_snapshot_domain(s, i)->configuration;
  return NULL;
}

int dop__carry_clustering(dl_txn *x, const dl_snapshot *latest, const dl_snapshot *restored) {
  if (!domain_config(latest)) return 0;
  const char *cfg = restored && dop_is_clustered(restored) ? domain_config(restored) : NULL;
  json_t *j = cfg ? json_loads(cfg, 0, NULL) : NULL;
  bool keep = json_array_size(json_object_get(j, "clusteringColumns")) > 0;
  json_decref(j);
  if (keep) return dl_txn_set_domain(x, CLUSTER_DOMAIN, cfg, false);
  return dl_txn_set_domain(x, CLUSTER_DOMAIN,
                           "{\"clusteringColumns\":[],\"domainName\":\"" CLUSTER_DOMAIN "\"}", false);
}

/* ---- ALTER TABLE ... CLUSTER BY ---------------------------------------------------------- */

static size_t leaves(const dl_type *t) {
  if (t->kind != DL_TYPE_STRUCT) return 1;
  size_t n = 0;
  for (size_t i = 0; i < t->num_fields; i++) n += leaves(t->fields[i].type);
  return n;
}

/* Is top-level field f of the schema among the columns Delta collects stats for? */
static bool has_stats(const dl_snapshot *s, const dl_field *f) {
  const char *list = dl_snapshot_property(s, "delta.dataSkippingStatsColumns");
  if (list && *list) {
    size_t n = strlen(f->name);
    for (const char *p = list; *p;) {
      while (*p == ' ' || *p == ',') p++;
      const char *e = p;
      while (*e && *e != ',') e++;
      const char *q = e;
      while (q > p && q[-1] == ' ') q--;
      if ((size_t)(q - p) == n && !strncasecmp(p, f->name, n)) return true;
      p = e;
    }
    return false;
  }
  const char *v = dl_snapshot_property(s, "delta.dataSkippingNumIndexedCols");
  long long limit = v ? strtoll(v, NULL, 10) : 32;
  if (limit < 0) return true;
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s));
  size_t before = 0;
  for (size_t i = 0; i < root->num_fields && &root->fields[i] != f; i++)
    before += leaves(root->fields[i].type);
  return (long long)before < limit;
}

int dop__check_clustering_count(size_t n) {
  if (n <= MAX_CLUSTER_COLUMNS) return 0;
  return dd_err_set(DD_EINVAL, "[DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS] CLUSTER BY supports up to %d "
                    "clustering columns, but the table has %zu clustering columns. Please remove "
                    "the extra clustering columns.", MAX_CLUSTER_COLUMNS, n);
}

int dop__clustering_type_error(const char *column) {
  return dd_err_set(DD_EINVAL, "[DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED] CLUSTER BY is not "
                    "supported because the following column(s): %s don't support data skipping.",
                    column);
}

/* Checks the new columns as Delta does; fills phys[i] (borrowed) with each physical name. */
static int check_columns(const dl_snapshot *s, const char *const *cols, size_t n, const char **phys) {
  const dl_metadata *md = dl_snapshot_metadata(s);
  if (md->num_partition_columns)
    return dd_err_set(DD_EINVAL, "[DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED] "
                      "ALTER TABLE CLUSTER BY cannot be applied to a partitioned table.");
  int rc = dop__check_clustering_count(n);
  if (rc) return rc;
  const char *mode = dl_snapshot_property(s, "delta.columnMapping.mode");
  bool mapped = mode && (!strcmp(mode, "name") || !strcmp(mode, "id"));
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < i; j++)
      if (!strcasecmp(cols[i], cols[j]))
        return dd_err_set(DD_EINVAL, "CLUSTER BY: column '%s' is named twice", cols[i]);
    if (strchr(cols[i], '.'))
      return dd_err_set(DD_EUNSUPPORTED, "CLUSTER BY: nested column '%s': deltad clusters by "
                        "top-level columns only", cols[i]);
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), cols[i]);
    if (!f)
      return dd_err_set(DD_EINVAL, "CLUSTER BY: the table has no column '%s'", cols[i]);
    dl_type_kind k = f->type->kind;
    if (k == DL_TYPE_STRUCT || k == DL_TYPE_ARRAY || k == DL_TYPE_MAP || k == DL_TYPE_VARIANT ||
        k == DL_TYPE_BOOLEAN || k == DL_TYPE_BINARY || k == DL_TYPE_VOID)
      return dop__clustering_type_error(f->name);
    if (!has_stats(s, f))
      return dd_err_set(DD_EINVAL, "[DELTA_CLUSTERING_COLUMN_MISSING_STATS] Clustering requires "
                        "clustering columns to have stats. Couldn't find clustering column(s) "
                        "'%s' in stats schema", f->name);
    phys[i] = mapped && f->physical_name ? f->physical_name : f->name;
  }
  return 0;
}

static char *joined(char *const *v, size_t n) {
  dd_buf b = {0};
  for (size_t i = 0; i < n; i++) {
    if (i) dd_buf_putc(&b, ',');
    dd_buf_puts(&b, v[i]);
  }
  dd_buf_putc(&b, 0);
  return b.oom ? (dd_buf_free(&b), NULL) : b.p;
}

static int commit_cluster_by(dl_table *t, dl_snapshot *s, const char *const *phys,
                             char *const *logical, size_t n, char *const *old, size_t nold) {
  dl_txn *x = NULL;
  dop__proto p;
  dl_protocol np;
  char **rf = NULL, **wf = NULL;
  dop__proto_from(&p, dl_snapshot_protocol(s));
  json_t *cols = json_array();
  for (size_t i = 0; cols && i < n; i++) json_array_append_new(cols, json_pack("[s]", phys[i]));
  json_t *cj = cols ? json_pack("{s:o,s:s}", "clusteringColumns", cols, "domainName", CLUSTER_DOMAIN) : NULL;
  char *cfg = cj ? json_dumps(cj, JSON_COMPACT) : NULL;
  json_decref(cj);
  char *was = joined(old, nold), *now = joined(logical, n);
  int rc = cfg && was && now ? dl_txn_begin(&x, t, s) : DOP_OOM();
  if (!rc && !dop_is_clustered(s)) { /* the feature comes with the first CLUSTER BY */
    rc = dop__proto_add_feature(&p, "clustering");
    if (!rc) rc = dop__proto_to(&p, &np, &rf, &wf);
    if (!rc) rc = dl_txn_set_protocol(x, &np);
  }
  if (!rc) rc = dl_txn_set_domain(x, CLUSTER_DOMAIN, cfg, false);
  if (!rc)
    rc = dop__commit(x, "CLUSTER BY", json_pack("{s:s,s:s}", "oldClusteringColumns", was,
                                                "newClusteringColumns", now), json_object(), NULL);
  dl_txn_free(x);
  dop__proto_free(&p);
  free(rf);
  free(wf);
  free(cfg);
  free(was);
  free(now);
  return rc;
}

int dop_cluster_by(dop_result **out, const char *location, const char *const *cols, size_t n) {
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  char **old = NULL, **logical = calloc(n + 1, sizeof *logical);
  size_t nold = 0;
  const char **phys = calloc(n + 1, sizeof *phys);
  int rc = phys && logical ? dop__open_latest(&t, &s, location) : DOP_OOM();
  bool skip = !rc && n == 0 && !dop_is_clustered(s); /* NONE on an unclustered table */
  if (!rc && !skip) rc = check_columns(s, cols, n, phys);
  for (size_t i = 0; !rc && !skip && i < n; i++)
    if (!(logical[i] = strdup(dl_schema_field(dl_snapshot_schema(s), cols[i])->name))) rc = DOP_OOM();
  if (!rc && !skip && (rc = dop_clustering_columns(&old, &nold, s)) > 0) rc = 0;
  if (!rc && !skip) rc = commit_cluster_by(t, s, phys, logical, n, old, nold);
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
  dop_clustering_free(old, nold);
  dop_clustering_free(logical, n);
  free(phys);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
