/* dl_state.c: the non-file part of a snapshot (protocol, metadata with parsed schema, app
 * transactions, domain metadata) and how log actions change it: the newest protocol and
 * metaData win, txn keeps the newest version per appId, domainMetadata keeps the newest per
 * domain and removed=true drops it. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

void dl__state_free(dl__state *st) {
  if (!st) return;
  dl__arena_free(&st->arena);
  dl_schema_free(st->schema);
  free(st->txns);
  free(st->domains);
  memset(st, 0, sizeof *st);
}

static const char *const *copy_strv(dl__arena *a, const char *const *v, size_t n) {
  if (!v) return NULL;
  const char **o = dl__arena_alloc(a, (n ? n : 1) * sizeof *o);
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++)
    if (!(o[i] = dl__arena_strdup(a, v[i]))) return NULL;
  return o;
}

static const char *copy_kv(dl__arena *a, const char *kv) {
  if (!kv) return NULL;
  size_t n = dl__kv_size(kv);
  char *p = dl__arena_alloc(a, n);
  if (p) memcpy(p, kv, n);
  return p;
}

static int set_protocol(dl__state *st, const dl_protocol *p) {
  dl_protocol np = *p;
  np.reader_features = copy_strv(&st->arena, p->reader_features, p->num_reader_features);
  np.writer_features = copy_strv(&st->arena, p->writer_features, p->num_writer_features);
  if ((p->reader_features && !np.reader_features) || (p->writer_features && !np.writer_features))
    return OOM();
  st->proto = np;
  st->has_proto = true;
  return 0;
}

/* Copies a metadata view into the arena and parses its schema. */
int dl__state_set_metadata(dl__state *st, const dl_metadata *m) {
  dl__arena *a = &st->arena;
  dl_metadata n = *m;
  n.id = dl__arena_strdup(a, m->id);
  n.name = dl__arena_strdup(a, m->name);
  n.description = dl__arena_strdup(a, m->description);
  n.format_provider = dl__arena_strdup(a, m->format_provider ? m->format_provider : "parquet");
  n.format_options = copy_kv(a, m->format_options ? m->format_options : "");
  n.schema_string = dl__arena_strdup(a, m->schema_string);
  n.partition_columns = copy_strv(a, m->partition_columns, m->num_partition_columns);
  if (!n.partition_columns) n.partition_columns = copy_strv(a, (const char *[]){""}, 0);
  n.configuration = copy_kv(a, m->configuration ? m->configuration : "");
  if (!n.id || !n.format_provider || !n.format_options || !n.schema_string ||
      !n.partition_columns || !n.configuration)
    return OOM();
  dl_schema *schema = NULL;
  int rc = dl_schema_parse(&schema, n.schema_string, strlen(n.schema_string));
  if (rc) return dd_err_wrap(rc, "metaData.schemaString");
  dl_schema_free(st->schema);
  st->schema = schema;
  st->md = n;
  st->has_md = true;
  return 0;
}

static int metadata_from_json(dl__state *st, const json_t *j) {
  dl_metadata m = {0};
  dl__arena tmp = {0};
  int rc = 0;
  const char *pcs[256];
  m.id = dl__json_str(j, "id");
  m.name = dl__json_str(j, "name");
  m.description = dl__json_str(j, "description");
  m.schema_string = dl__json_str(j, "schemaString");
  /* Some writers (delta-live-table) emit an interim metaData without a schema. */
  if (!m.schema_string) m.schema_string = "{\"type\":\"struct\",\"fields\":[]}";
  if (!m.id) {
    rc = dd_err_set(DD_ECORRUPT, "metaData action: id is required");
    goto cleanup;
  }
  json_t *fmt = json_object_get(j, "format");
  m.format_provider = dl__json_str(fmt, "provider");
  m.format_options = dl__kv_from_json(&tmp, json_object_get(fmt, "options"));
  m.configuration = dl__kv_from_json(&tmp, json_object_get(j, "configuration"));
  json_t *pc = json_object_get(j, "partitionColumns");
  size_t npc = json_is_array(pc) ? json_array_size(pc) : 0;
  if (npc > sizeof pcs / sizeof pcs[0]) {
    rc = dd_err_set(DD_EUNSUPPORTED, "metaData action: too many partition columns");
    goto cleanup;
  }
  for (size_t i = 0; i < npc; i++) {
    const json_t *s = json_array_get(pc, i);
    if (!json_is_string(s)) {
      rc = dd_err_set(DD_ECORRUPT, "metaData action: partitionColumns must be strings");
      goto cleanup;
    }
    pcs[i] = json_string_value(s);
  }
  m.partition_columns = pcs;
  m.num_partition_columns = npc;
  m.created_time = dl__json_int(j, "createdTime", -1);
  if (!m.format_options || !m.configuration) {
    rc = OOM();
    goto cleanup;
  }
  rc = dl__state_set_metadata(st, &m);
cleanup:
  dl__arena_free(&tmp);
  return rc;
}

static int set_txn(dl__state *st, const dl_app_txn *t) {
  for (size_t i = 0; i < st->n_txns; i++) {
    if (!strcmp(st->txns[i].app_id, t->app_id)) {
      st->txns[i].version = t->version;
      st->txns[i].last_updated = t->last_updated;
      return 0;
    }
  }
  if (st->n_txns == st->cap_txns) {
    size_t cap = st->cap_txns ? st->cap_txns * 2 : 8;
    dl_app_txn *n = realloc(st->txns, cap * sizeof *n);
    if (!n) return OOM();
    st->txns = n;
    st->cap_txns = cap;
  }
  dl_app_txn *n = &st->txns[st->n_txns];
  *n = *t;
  if (!(n->app_id = dl__arena_strdup(&st->arena, t->app_id))) return OOM();
  st->n_txns++;
  return 0;
}

static int set_domain(dl__state *st, const char *domain, const char *config, bool removed) {
  for (size_t i = 0; i < st->n_domains; i++) {
    if (strcmp(st->domains[i].domain, domain) != 0) continue;
    if (removed) {
      st->domains[i] = st->domains[--st->n_domains];
      return 0;
    }
    if (!(st->domains[i].configuration = dl__arena_strdup(&st->arena, config))) return OOM();
    return 0;
  }
  if (removed) return 0;
  if (st->n_domains == st->cap_domains) {
    size_t cap = st->cap_domains ? st->cap_domains * 2 : 8;
    dl_domain *n = realloc(st->domains, cap * sizeof *n);
    if (!n) return OOM();
    st->domains = n;
    st->cap_domains = cap;
  }
  dl_domain *d = &st->domains[st->n_domains];
  d->domain = dl__arena_strdup(&st->arena, domain);
  d->configuration = dl__arena_strdup(&st->arena, config);
  if (!d->domain || !d->configuration) return OOM();
  st->n_domains++;
  return 0;
}

int dl__state_apply(dl__state *st, const dl__action *a) {
  switch (a->kind) {
    case DL__A_PROTOCOL: return set_protocol(st, &a->proto);
    case DL__A_METADATA: return metadata_from_json(st, a->md_json);
    case DL__A_TXN: return set_txn(st, &a->txn);
    case DL__A_DOMAIN: return set_domain(st, a->domain, a->domain_config, a->domain_removed);
    default: return 0;
  }
}

int dl__state_copy(dl__state *dst, const dl__state *src) {
  memset(dst, 0, sizeof *dst);
  int rc = 0;
  if (src->has_proto) rc = set_protocol(dst, &src->proto);
  if (!rc && src->has_md) rc = dl__state_set_metadata(dst, &src->md);
  for (size_t i = 0; !rc && i < src->n_txns; i++) rc = set_txn(dst, &src->txns[i]);
  for (size_t i = 0; !rc && i < src->n_domains; i++)
    rc = set_domain(dst, src->domains[i].domain, src->domains[i].configuration, false);
  if (rc) dl__state_free(dst);
  return rc;
}
