/* dml_route.c: new rows of a MERGE into data files, one data writer per partition value
 * (dml_merge_int.h). A row's partition values are its partition columns cast to strings
 * (Spark's CAST AS STRING, as Delta serializes partition values; NULL and the empty string
 * are null); the writer for them is found by their serialized form, made on first use. */
#include "store/dml/dml_merge_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"

int dml__router_init(dml__router *r, dl_table *t, const dl_snapshot *s, const arw_schema *schema,
                     pq_codec codec, bool change_data) {
  memset(r, 0, sizeof *r);
  r->t = t, r->s = s, r->schema = schema, r->codec = codec, r->change_data = change_data;
  const dl_metadata *md = dl_snapshot_metadata(s);
  size_t n = md->num_partition_columns;
  r->pkey = calloc(n + 1, sizeof *r->pkey);
  r->pstr = calloc(n + 1, sizeof *r->pstr);
  int rc = r->pkey && r->pstr ? arw_schema_new(&r->sschema) : dml__oom();
  for (size_t i = 0; i < n && !rc; i++, r->npc++) {
    const char *col = md->partition_columns[i];
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), col);
    const char *key = f && f->physical_name && dl_kv_get(md->configuration, "delta.columnMapping.mode", &(const char *){0})
                          ? f->physical_name : col;
    ex_node *c = NULL, *cast = NULL;
    if (!(r->pkey[i] = strdup(key))) rc = dml__oom();
    if (!rc) rc = ex_new_column(&c, &col, 1);
    if (!rc) rc = ex_new_cast(&cast, c, (ex_type){EX_T_STRING, 0, 0});
    if (!rc) rc = ex_bind(&r->pstr[i], cast, schema, NULL);
    if (!rc) rc = ex_add_field(r->sschema, ARW_ROOT, col, r->pstr[i], NULL);
    ex_free(cast);
  }
  return rc;
}

/* The route of partition key key[0..len) (made on first use). */
static int route_of(dml__router *r, const char *key, size_t len, const arw_batch *sb, size_t row,
                    size_t *out) {
  for (size_t i = r->n; i-- > 0;)
    if (r->r[i].klen == len && !memcmp(r->r[i].key, key, len)) return *out = i, 0;
  if (r->n == r->cap) {
    size_t c = r->cap ? r->cap * 2 : 8;
    dml__route *nr = realloc(r->r, c * sizeof *nr);
    if (!nr) return dml__oom();
    r->r = nr, r->cap = c;
  }
  dml__route *e = &r->r[r->n];
  memset(e, 0, sizeof *e);
  const char **vals = calloc(r->npc + 1, sizeof *vals);
  char **own = calloc(r->npc + 1, sizeof *own);
  int rc = vals && own ? 0 : dml__oom();
  for (size_t i = 0; i < r->npc && !rc; i++) {
    arw_view v;
    if ((rc = arw_batch_view(sb, arw_schema_column(r->sschema, i), &v))) break;
    if (!arw_view_valid(&v, row) || v.offsets[row + 1] == v.offsets[row]) continue;
    own[i] = strndup((const char *)v.values + v.offsets[row], (size_t)(v.offsets[row + 1] - v.offsets[row]));
    if (!(vals[i] = own[i])) rc = dml__oom();
  }
  if (!rc) rc = dl_kv_pack(&e->pv, (const char *const *)r->pkey, vals, r->npc);
  if (!rc && !(e->key = malloc(len + 1))) rc = dml__oom();
  if (!rc) {
    memcpy(e->key, key, len);
    e->klen = len;
    dw_opts wo = DW_OPTS_INIT;
    wo.codec = r->codec;
    wo.partition_values = r->npc ? e->pv : NULL;
    wo.change_data = r->change_data;
    if (r->no_data_change) wo.data_change = false;
    wo.row_tracking = r->row_tracking;
    rc = dw_open(&e->w, r->t, r->s, r->schema, &wo);
  }
  for (size_t i = 0; own && i < r->npc; i++) free(own[i]);
  free(own);
  free(vals);
  if (rc) {
    free(e->key);
    free(e->pv);
    return rc;
  }
  *out = r->n++;
  return 0;
}

static int write_grouped(dml__router *r, const arw_batch *b, const arw_batch *sb) {
  size_t n = arw_batch_rows(b);
  size_t *ent = malloc((n + 1) * sizeof *ent), *idx = malloc((n + 1) * sizeof *idx);
  uint8_t *done = calloc(n + 1, 1);
  dd_buf key = {0};
  int rc = ent && idx && done ? 0 : dml__oom();
  for (size_t i = 0; i < n && !rc; i++) {
    key.len = 0;
    for (size_t c = 0; c < r->npc && !rc; c++) {
      arw_view v;
      if ((rc = arw_batch_view(sb, arw_schema_column(r->sschema, c), &v))) break;
      bool valid = arw_view_valid(&v, i) && v.offsets[i + 1] > v.offsets[i];
      dd_buf_putc(&key, valid ? 1 : 0);
      if (valid) dd_buf_put(&key, v.values + v.offsets[i], (size_t)(v.offsets[i + 1] - v.offsets[i]));
      dd_buf_putc(&key, 0);
    }
    if (!rc && key.oom) rc = dml__oom();
    if (!rc) rc = route_of(r, key.p ? key.p : "", key.len, sb, i, &ent[i]);
  }
  for (size_t i = 0; i < n && !rc; i++) {
    if (done[i]) continue;
    size_t k = 0;
    for (size_t j = i; j < n; j++)
      if (!done[j] && ent[j] == ent[i]) idx[k++] = j, done[j] = 1;
    arw_batch *part = NULL;
    rc = k == n ? dw_write(r->r[ent[i]].w, b) : arw_batch_take(&part, b, idx, k);
    if (!rc && part) rc = dw_write(r->r[ent[i]].w, part);
    arw_batch_free(part);
  }
  dd_buf_free(&key);
  free(ent), free(idx), free(done);
  return rc;
}

int dml__router_write(dml__router *r, const arw_batch *b) {
  size_t n = arw_batch_rows(b), one = 0;
  if (!n) return 0;
  r->rows += (int64_t)n;
  if (!r->npc) {
    int rc = r->n ? 0 : route_of(r, "", 0, NULL, 0, &one);
    return rc ? rc : dw_write(r->r[0].w, b);
  }
  arw_batch *sb = NULL;
  int rc = arw_batch_new(&sb, r->sschema);
  for (size_t i = 0; i < r->npc && !rc; i++) rc = ex_eval(r->pstr[i], b, sb, arw_schema_column(r->sschema, i));
  if (!rc) rc = write_grouped(r, b, sb);
  arw_batch_free(sb);
  return rc;
}

int dml__router_commit(dml__router *r, dl_txn *x, int64_t *files, int64_t *bytes) {
  int rc = 0;
  for (size_t i = 0; i < r->n && !rc; i++) {
    rc = dw_finish(r->r[i].w);
    for (size_t f = 0; !rc && f < dw_num_files(r->r[i].w); f++) {
      const dl_file *a = dw_file(r->r[i].w, f);
      ++*files;
      if (bytes) *bytes += a->size;
      rc = r->change_data ? dl_txn_add_cdc(x, a) : dl_txn_add_file(x, a);
    }
  }
  return rc;
}

void dml__router_free(dml__router *r, bool abort) {
  for (size_t i = 0; i < r->n; i++) {
    if (abort) dw_abort(r->r[i].w);
    dw_free(r->r[i].w);
    free(r->r[i].key);
    free(r->r[i].pv);
  }
  for (size_t i = 0; i < r->npc; i++) {
    free(r->pkey[i]);
    ex_free(r->pstr[i]);
  }
  free(r->pkey);
  free(r->pstr);
  free(r->r);
  arw_schema_free(r->sschema);
  memset(r, 0, sizeof *r);
}
