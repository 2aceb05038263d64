/* pq_footer.c: decodes the Thrift FileMetaData footer into the pq_file model (schema
 * elements, row groups, column chunk metadata, statistics, key-value pairs). Unknown
 * fields are skipped; sizes are bounded by the bytes present. */
#include "store/parquet/pq_internal.h"

#include <string.h>

#define FIELD_LOOP(r, body)                                   \
  do {                                                        \
    int16_t last_ = 0, id;                                    \
    int type, rc_;                                            \
    for (;;) {                                                \
      if ((rc_ = pq__tr_field((r), &last_, &type, &id))) return rc_; \
      if (type == PQ__TT_STOP) break;                         \
      int handled_ = 1;                                       \
      body                                                    \
      if (!handled_ && (rc_ = pq__tr_skip((r), type))) return rc_; \
    }                                                         \
  } while (0)
#define SKIP handled_ = 0
#define TRY(x) do { int rc2_ = (x); if (rc2_) return rc2_; } while (0)

static int read_str(pq__tr *r, int type, pq__arena *a, const char **out) {
  const uint8_t *p;
  size_t n;
  TRY(pq__tr_binary(r, type, &p, &n));
  *out = pq__arena_strndup(a, p, n);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "parquet: out of memory");
}

static int read_bytes(pq__tr *r, int type, pq_bytes *out, bool *has) {
  const uint8_t *p;
  size_t n;
  TRY(pq__tr_binary(r, type, &p, &n));
  out->ptr = p;
  out->len = n;
  *has = true;
  return 0;
}

int pq__parse_stats(pq__tr *r, pq_stats *s) {
  memset(s, 0, sizeof *s);
  FIELD_LOOP(r, {
    switch (id) {
      case 1: TRY(read_bytes(r, type, &s->max, &s->has_max)); break;
      case 2: TRY(read_bytes(r, type, &s->min, &s->has_min)); break;
      case 3: TRY(pq__tr_i64(r, type, &s->null_count)); s->has_null_count = true; break;
      case 4:
        TRY(pq__tr_i64(r, type, &s->distinct_count));
        s->has_distinct_count = true;
        break;
      case 5: TRY(read_bytes(r, type, &s->max_value, &s->has_max_value)); break;
      case 6: TRY(read_bytes(r, type, &s->min_value, &s->has_min_value)); break;
      default: SKIP;
    }
  });
  return 0;
}

/* ---- schema elements ------------------------------------------------------------------ */

static int parse_time_unit(pq__tr *r, pq_time_unit *u) {
  FIELD_LOOP(r, {
    if (id >= 1 && id <= 3 && type == PQ__TT_STRUCT) *u = (pq_time_unit)id;
    SKIP;
  });
  return 0;
}

static int parse_logical_member(pq__tr *r, int16_t member, pq_logical *lt) {
  FIELD_LOOP(r, {
    int32_t v;
    bool b;
    if (member == PQ_LT_DECIMAL && (id == 1 || id == 2)) {
      TRY(pq__tr_i32(r, type, &v));
      if (id == 1) lt->scale = v; else lt->precision = v;
    } else if ((member == PQ_LT_TIME || member == PQ_LT_TIMESTAMP) && id == 1) {
      TRY(pq__tr_bool(r, type, &b));
      lt->adjusted_to_utc = b;
    } else if ((member == PQ_LT_TIME || member == PQ_LT_TIMESTAMP) && id == 2) {
      TRY(pq__tr_struct_begin(r, type));
      TRY(parse_time_unit(r, &lt->unit));
      pq__tr_struct_end(r);
    } else if (member == PQ_LT_INTEGER && id == 1) {
      TRY(pq__tr_i32(r, type, &v));
      lt->bit_width = v;
    } else if (member == PQ_LT_INTEGER && id == 2) {
      TRY(pq__tr_bool(r, type, &b));
      lt->is_signed = b;
    } else {
      SKIP;
    }
  });
  return 0;
}

static int parse_logical(pq__tr *r, pq_logical *lt) {
  FIELD_LOOP(r, {
    if (type == PQ__TT_STRUCT) {
      bool known = (id >= 1 && id <= 8) || (id >= 10 && id <= 16);
      lt->kind = known ? (pq_logical_kind)id : PQ_LT_OTHER;
      TRY(pq__tr_struct_begin(r, type));
      TRY(parse_logical_member(r, id, lt));
      pq__tr_struct_end(r);
    } else {
      SKIP;
    }
  });
  return 0;
}

static int parse_selem(pq__tr *r, pq_file *f, pq__selem *e) {
  int32_t v;
  e->f.converted = PQ_CT_NONE;
  e->f.type = PQ_T_GROUP;
  e->f.name = "";
  FIELD_LOOP(r, {
    switch (id) {
      case 1:
        TRY(pq__tr_i32(r, type, &v));
        if (v < 0 || v > 7) return pq__tr_corrupt(r, "unknown physical type");
        e->f.type = (pq_type)v;
        e->has_type = true;
        break;
      case 2: TRY(pq__tr_i32(r, type, &e->f.type_length)); break;
      case 3:
        TRY(pq__tr_i32(r, type, &v));
        if (v < 0 || v > 2) return pq__tr_corrupt(r, "unknown repetition type");
        e->f.repetition = (pq_repetition)v;
        break;
      case 4: TRY(read_str(r, type, &f->arena, &e->f.name)); break;
      case 5: TRY(pq__tr_i32(r, type, &e->num_children)); break;
      case 6:
        TRY(pq__tr_i32(r, type, &v));
        e->f.converted = (v >= 0 && v <= 21) ? (pq_converted)v : PQ_CT_NONE;
        break;
      case 7: TRY(pq__tr_i32(r, type, &e->f.scale)); break;
      case 8: TRY(pq__tr_i32(r, type, &e->f.precision)); break;
      case 9: TRY(pq__tr_i32(r, type, &e->f.field_id)); e->f.has_field_id = true; break;
      case 10:
        TRY(pq__tr_struct_begin(r, type));
        TRY(parse_logical(r, &e->f.logical));
        pq__tr_struct_end(r);
        break;
      default: SKIP;
    }
  });
  return 0;
}

/* ---- row groups ----------------------------------------------------------------------- */

static int parse_col_meta(pq__tr *r, pq__chunk *c) {
  int32_t v;
  pq_chunk_info *m = &c->info;
  FIELD_LOOP(r, {
    switch (id) {
      case 1: TRY(pq__tr_i32(r, type, &v)); m->type = (pq_type)v; break;
      case 4: TRY(pq__tr_i32(r, type, &v)); m->codec = (pq_codec)v; break;
      case 5: TRY(pq__tr_i64(r, type, &m->num_values)); break;
      case 6: TRY(pq__tr_i64(r, type, &m->total_uncompressed_size)); break;
      case 7: TRY(pq__tr_i64(r, type, &m->total_compressed_size)); break;
      case 9: TRY(pq__tr_i64(r, type, &m->data_page_offset)); break;
      case 11: TRY(pq__tr_i64(r, type, &m->dictionary_page_offset)); break;
      case 12:
        TRY(pq__tr_struct_begin(r, type));
        TRY(pq__parse_stats(r, &m->stats));
        pq__tr_struct_end(r);
        m->has_stats = true;
        break;
      default: SKIP;
    }
  });
  c->has_meta = true;
  return 0;
}

static int parse_chunk(pq__tr *r, pq_file *f, pq__chunk *c) {
  c->info.dictionary_page_offset = -1;
  FIELD_LOOP(r, {
    if (id == 1) {
      TRY(read_str(r, type, &f->arena, &c->file_path));
    } else if (id == 3) {
      TRY(pq__tr_struct_begin(r, type));
      TRY(parse_col_meta(r, c));
      pq__tr_struct_end(r);
    } else {
      SKIP;
    }
  });
  return 0;
}

static int parse_chunks(pq__tr *r, int type, pq_file *f, pq__rowgroup *g) {
  int et;
  TRY(pq__tr_list(r, type, &et, &g->num_chunks));
  if (et != PQ__TT_STRUCT) return pq__tr_corrupt(r, "column chunk list of non-structs");
  g->chunks = pq__arena_alloc(&f->arena, (g->num_chunks + 1) * sizeof *g->chunks);
  if (!g->chunks) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memset(g->chunks, 0, (g->num_chunks + 1) * sizeof *g->chunks);
  for (uint32_t i = 0; i < g->num_chunks; i++) {
    TRY(pq__tr_struct_begin(r, PQ__TT_STRUCT));
    TRY(parse_chunk(r, f, &g->chunks[i]));
    pq__tr_struct_end(r);
  }
  return 0;
}

static int parse_rowgroup(pq__tr *r, pq_file *f, pq__rowgroup *g) {
  FIELD_LOOP(r, {
    if (id == 1) TRY(parse_chunks(r, type, f, g));
    else if (id == 3) TRY(pq__tr_i64(r, type, &g->num_rows));
    else SKIP;
  });
  return 0;
}

/* ---- FileMetaData --------------------------------------------------------------------- */

static void *alloc_zero(pq_file *f, size_t n, size_t size) {
  void *p = pq__arena_alloc(&f->arena, (n + 1) * size);
  if (p) memset(p, 0, (n + 1) * size);
  return p;
}

static int parse_schema_list(pq__tr *r, int type, pq_file *f) {
  int et;
  TRY(pq__tr_list(r, type, &et, &f->num_selems));
  if (et != PQ__TT_STRUCT) return pq__tr_corrupt(r, "schema list of non-structs");
  f->selems = alloc_zero(f, f->num_selems, sizeof *f->selems);
  if (!f->selems) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (uint32_t i = 0; i < f->num_selems; i++) {
    TRY(pq__tr_struct_begin(r, PQ__TT_STRUCT));
    TRY(parse_selem(r, f, &f->selems[i]));
    pq__tr_struct_end(r);
  }
  return 0;
}

static int parse_rowgroup_list(pq__tr *r, int type, pq_file *f) {
  int et;
  uint32_t n;
  TRY(pq__tr_list(r, type, &et, &n));
  if (et != PQ__TT_STRUCT) return pq__tr_corrupt(r, "row group list of non-structs");
  f->num_rgs = n;
  f->rgs = alloc_zero(f, n, sizeof *f->rgs);
  if (!f->rgs) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    TRY(pq__tr_struct_begin(r, PQ__TT_STRUCT));
    TRY(parse_rowgroup(r, f, &f->rgs[i]));
    pq__tr_struct_end(r);
  }
  return 0;
}

static int parse_kv(pq__tr *r, pq_file *f, size_t i) {
  FIELD_LOOP(r, {
    if (id == 1) TRY(read_str(r, type, &f->arena, &f->kv_keys[i]));
    else if (id == 2) TRY(read_str(r, type, &f->arena, &f->kv_vals[i]));
    else SKIP;
  });
  if (!f->kv_keys[i]) return pq__tr_corrupt(r, "key-value entry without a key");
  return 0;
}

static int parse_kv_list(pq__tr *r, int type, pq_file *f) {
  int et;
  uint32_t n;
  TRY(pq__tr_list(r, type, &et, &n));
  if (et != PQ__TT_STRUCT) return pq__tr_corrupt(r, "key-value list of non-structs");
  f->kv_keys = alloc_zero(f, n, sizeof *f->kv_keys);
  f->kv_vals = alloc_zero(f, n, sizeof *f->kv_vals);
  if (!f->kv_keys || !f->kv_vals) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    TRY(pq__tr_struct_begin(r, PQ__TT_STRUCT));
    TRY(parse_kv(r, f, i));
    pq__tr_struct_end(r);
  }
  f->num_kv = n;
  return 0;
}

int pq__footer_parse(pq_file *f, const uint8_t *p, size_t n) {
  pq__tr r = {p, p + n, 0, "footer (FileMetaData)"};
  bool has_schema = false, has_rows = false;
  FIELD_LOOP(&r, {
    switch (id) {
      case 2: TRY(parse_schema_list(&r, type, f)); has_schema = true; break;
      case 3: TRY(pq__tr_i64(&r, type, &f->num_rows)); has_rows = true; break;
      case 4: TRY(parse_rowgroup_list(&r, type, f)); break;
      case 5: TRY(parse_kv_list(&r, type, f)); break;
      case 6: TRY(read_str(&r, type, &f->arena, &f->created_by)); break;
      case 8:
        return dd_err_set(DD_EUNSUPPORTED, "parquet: encrypted files are not supported");
      default: SKIP;
    }
  });
  if (!has_schema || f->num_selems == 0) return pq__tr_corrupt(&r, "no schema");
  if (!has_rows || f->num_rows < 0) return pq__tr_corrupt(&r, "missing or negative num_rows");
  return 0;
}
