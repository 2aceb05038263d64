/* pq_wfooter.c: serializes the writer's FileMetaData: the flattened schema (LIST and MAP
 * written as the standard 3-level groups "list"/"element" and "key_value"/key/value with
 * both ConvertedType and LogicalType annotations), row groups with column chunk metadata
 * and statistics, key-value metadata and created_by. */
#include "store/parquet/pq_writer_int.h"

#include <string.h>

static void empty_struct(pq__tw *t, int16_t id) {
  pq__tw_struct_begin(t, id);
  pq__tw_struct_end(t);
}

static void tw_i8(pq__tw *t, int16_t id, int8_t v) {
  pq__tw_field(t, id, PQ__TT_I8);
  if (!t->err) t->err = pq__buf_byte(t->out, (uint8_t)v);
}

static void logical(pq__tw *t, const pq__wnode *n) {
  pq__tw_struct_begin(t, 10);
  switch (n->kind) {
    case PQ_W_STRING: empty_struct(t, PQ_LT_STRING); break;
    case PQ_W_LIST: empty_struct(t, PQ_LT_LIST); break;
    case PQ_W_MAP: empty_struct(t, PQ_LT_MAP); break;
    case PQ_W_DATE: empty_struct(t, PQ_LT_DATE); break;
    case PQ_W_INT8: case PQ_W_INT16:
      pq__tw_struct_begin(t, PQ_LT_INTEGER);
      tw_i8(t, 1, n->kind == PQ_W_INT8 ? 8 : 16);
      pq__tw_bool(t, 2, true);
      pq__tw_struct_end(t);
      break;
    case PQ_W_DECIMAL:
      pq__tw_struct_begin(t, PQ_LT_DECIMAL);
      pq__tw_i32(t, 1, n->scale);
      pq__tw_i32(t, 2, n->precision);
      pq__tw_struct_end(t);
      break;
    default:
      pq__tw_struct_begin(t, PQ_LT_TIMESTAMP);
      pq__tw_bool(t, 1, n->kind != PQ_W_TIMESTAMP_NTZ);
      pq__tw_struct_begin(t, 2);
      empty_struct(t, n->kind == PQ_W_TIMESTAMP_MILLIS ? 1 : 2);
      pq__tw_struct_end(t);
      pq__tw_struct_end(t);
  }
  pq__tw_struct_end(t);
}

static int converted(pq_wkind k) {
  switch (k) {
    case PQ_W_STRING: return PQ_CT_UTF8;
    case PQ_W_LIST: return PQ_CT_LIST;
    case PQ_W_MAP: return PQ_CT_MAP;
    case PQ_W_DATE: return PQ_CT_DATE;
    case PQ_W_TIMESTAMP_MICROS: return PQ_CT_TIMESTAMP_MICROS;
    case PQ_W_TIMESTAMP_MILLIS: return PQ_CT_TIMESTAMP_MILLIS;
    case PQ_W_INT8: return PQ_CT_INT_8;
    case PQ_W_INT16: return PQ_CT_INT_16;
    case PQ_W_DECIMAL: return PQ_CT_DECIMAL;
    default: return PQ_CT_NONE; /* TIMESTAMP_NTZ has a LogicalType only */
  }
}

/* One SchemaElement; n is the node whose annotations it carries (NULL: none). */
static void element(pq__tw *t, const char *name, int type, int32_t tlen, int rep,
                    int32_t nkids, const pq__wnode *n) {
  pq__tw_struct_begin(t, -1);
  if (type >= 0) pq__tw_i32(t, 1, type);
  if (type == PQ_T_FIXED_LEN_BYTE_ARRAY) pq__tw_i32(t, 2, tlen);
  if (rep >= 0) pq__tw_i32(t, 3, rep);
  pq__tw_binary(t, 4, name, strlen(name));
  if (nkids >= 0) pq__tw_i32(t, 5, nkids);
  int ct = n ? converted(n->kind) : PQ_CT_NONE;
  if (ct != PQ_CT_NONE) pq__tw_i32(t, 6, ct);
  if (ct == PQ_CT_DECIMAL) {
    pq__tw_i32(t, 7, n->scale);
    pq__tw_i32(t, 8, n->precision);
  }
  if (n && n->field_id > 0) pq__tw_i32(t, 9, n->field_id);
  if (ct != PQ_CT_NONE || (n && n->kind == PQ_W_TIMESTAMP_NTZ)) logical(t, n);
  pq__tw_struct_end(t);
}

static uint32_t count_elems(const pq__wnode *n) {
  uint32_t c = 1 + (n->kind == PQ_W_LIST || n->kind == PQ_W_MAP);
  for (size_t i = 0; i < n->nkids; i++) c += count_elems(&n->kids[i]);
  return c;
}

static void schema_node(pq__tw *t, const pq__wnode *n) {
  int rep = n->nullable ? PQ_OPTIONAL : PQ_REQUIRED;
  switch (n->kind) {
    case PQ_W_STRUCT:
      element(t, n->name, -1, 0, rep, (int32_t)n->nkids, n);
      break;
    case PQ_W_LIST: case PQ_W_MAP:
      element(t, n->name, -1, 0, rep, 1, n);
      element(t, n->kind == PQ_W_LIST ? "list" : "key_value", -1, 0, PQ_REPEATED,
              (int32_t)n->nkids, NULL);
      break;
    default:
      element(t, n->name, pq__wleaf_type(n), n->type_length, rep, -1, n);
  }
  for (size_t i = 0; i < n->nkids; i++) schema_node(t, &n->kids[i]);
}

static void stats(pq__tw *t, const pq__wleaf *l, const pq__wchunk *c) {
  pq__tw_struct_begin(t, 12);
  bool legacy = l->type != PQ_T_BYTE_ARRAY && l->type != PQ_T_FIXED_LEN_BYTE_ARRAY;
  if (c->has_minmax && legacy) {
    pq__tw_binary(t, 1, c->max.data, c->max.len);
    pq__tw_binary(t, 2, c->min.data, c->min.len);
  }
  pq__tw_i64(t, 3, c->nulls);
  if (c->has_minmax) {
    pq__tw_binary(t, 5, c->max.data, c->max.len);
    pq__tw_binary(t, 6, c->min.data, c->min.len);
  }
  pq__tw_struct_end(t);
}

static void chunk(pq__tw *t, const pq_writer *w, const pq__wleaf *l, const pq__wchunk *c) {
  pq__tw_struct_begin(t, -1);
  pq__tw_i64(t, 2, c->has_dict ? c->dict_off : c->data_off);
  pq__tw_struct_begin(t, 3);
  pq__tw_i32(t, 1, l->type);
  pq__tw_list(t, 2, PQ__TT_I32, c->has_dict ? 3 : 2);
  pq__tw_zigzag_raw(t, PQ__ENC_PLAIN);
  pq__tw_zigzag_raw(t, PQ__ENC_RLE);
  if (c->has_dict) pq__tw_zigzag_raw(t, PQ__ENC_RLE_DICT);
  pq__tw_list(t, 3, PQ__TT_BINARY, (uint32_t)l->path_len);
  for (size_t i = 0; i < l->path_len; i++) {
    pq__tw_varint_raw(t, strlen(l->path[i]));
    if (!t->err) t->err = pq__buf_put(t->out, l->path[i], strlen(l->path[i]));
  }
  pq__tw_i32(t, 4, w->o.codec);
  pq__tw_i64(t, 5, c->num_values);
  pq__tw_i64(t, 6, c->uncomp_size);
  pq__tw_i64(t, 7, c->comp_size);
  pq__tw_i64(t, 9, c->data_off);
  if (c->has_dict) pq__tw_i64(t, 11, c->dict_off);
  if (w->o.statistics) stats(t, l, c);
  pq__tw_struct_end(t);
  pq__tw_struct_end(t);
}

static void row_group(pq__tw *t, const pq_writer *w, const pq__wrg *g) {
  int64_t comp = 0;
  for (size_t i = 0; i < w->nleaves; i++) comp += g->chunks[i].comp_size;
  pq__tw_struct_begin(t, -1);
  pq__tw_list(t, 1, PQ__TT_STRUCT, (uint32_t)w->nleaves);
  for (size_t i = 0; i < w->nleaves; i++) chunk(t, w, &w->leaves[i], &g->chunks[i]);
  pq__tw_i64(t, 2, g->total_bytes);
  pq__tw_i64(t, 3, g->num_rows);
  pq__tw_i64(t, 5, g->file_off);
  pq__tw_i64(t, 6, comp);
  pq__tw_struct_end(t);
}

int pq__wfooter_write(const pq_writer *w, pq__buf *out) {
  size_t start = out->len;
  pq__tw t = {out, {0}, 0, 0};
  pq__tw_i32(&t, 1, 1);
  pq__tw_list(&t, 2, PQ__TT_STRUCT, count_elems(&w->root));
  element(&t, w->root.name, -1, 0, -1, (int32_t)w->root.nkids, NULL);
  for (size_t i = 0; i < w->root.nkids; i++) schema_node(&t, &w->root.kids[i]);
  pq__tw_i64(&t, 3, w->total_rows);
  pq__tw_list(&t, 4, PQ__TT_STRUCT, (uint32_t)w->nrgs);
  for (size_t i = 0; i < w->nrgs; i++) row_group(&t, w, &w->rgs[i]);
  if (w->nkv) {
    pq__tw_list(&t, 5, PQ__TT_STRUCT, (uint32_t)w->nkv);
    for (size_t i = 0; i < w->nkv; i++) {
      pq__tw_struct_begin(&t, -1);
      pq__tw_binary(&t, 1, w->kv_k[i], strlen(w->kv_k[i]));
      if (w->kv_v[i]) pq__tw_binary(&t, 2, w->kv_v[i], strlen(w->kv_v[i]));
      pq__tw_struct_end(&t);
    }
  }
  const char *cb = w->o.created_by ? w->o.created_by : "deltad parquet writer";
  pq__tw_binary(&t, 6, cb, strlen(cb));
  pq__tw_struct_end(&t);
  if (t.err) return t.err;
  size_t flen = out->len - start;
  int rc = pq__buf_le32(out, (uint32_t)flen);
  return rc ? rc : pq__buf_put(out, "PAR1", 4);
}
