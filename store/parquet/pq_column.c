/* pq_column.c: reads one column chunk: walks its pages, decompresses them, decodes the
 * repetition/definition levels and hands the values section to pq_values.c. Also the
 * public flat-column API (pq_column_read). */
#include "store/parquet/pq_internal.h"

#include <stdlib.h>
#include <string.h>

#define PQ__MAX_PAGE_VALUES (1u << 26)

static int col_bad(const pq__col *c, const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt column chunk '%s': %s", c->field->name,
                    why);
}

uint32_t *pq__col_tmp(pq__col *c, size_t n) {
  if (n + 1 > c->tmpcap) {
    uint32_t *t = realloc(c->tmp, (n + 1) * sizeof *t);
    if (!t) return NULL;
    c->tmp = t;
    c->tmpcap = n + 1;
  }
  return c->tmp;
}

static int grow_levels(pq__col *c, size_t n) {
  if (c->caplev && c->nlev + n <= c->caplev) return 0;
  size_t cap = c->caplev ? c->caplev : 1024;
  if (c->want > 0 && (size_t)c->want > cap) /* the chunk's declared size, up to 1M */
    cap = c->want < (1 << 20) ? (size_t)c->want : (size_t)1 << 20;
  while (cap < c->nlev + n) cap *= 2;
  if (c->field->max_def > 0) {
    int16_t *d = realloc(c->def, cap * sizeof *d);
    if (!d) return dd_err_set(DD_ENOMEM, "parquet: out of memory for levels");
    c->def = d;
  }
  if (c->field->max_rep > 0) {
    int16_t *r = realloc(c->rep, cap * sizeof *r);
    if (!r) return dd_err_set(DD_ENOMEM, "parquet: out of memory for levels");
    c->rep = r;
  }
  c->caplev = cap;
  pq__hugepage_hint(c->def, cap * sizeof *c->def);
  pq__hugepage_hint(c->rep, cap * sizeof *c->rep);
  return 0;
}

/* Decodes n levels (max `max`) into dst. v1 pages prefix RLE data with its length
 * (prefixed = true); *used receives the bytes consumed. */
static int levels(pq__col *c, int enc, bool prefixed, const uint8_t *p, size_t len,
                  int max, int16_t *dst, size_t n, size_t *used, uint32_t *tmp) {
  int w = pq__bit_width((uint32_t)max), rc;
  if (enc == PQ__ENC_BIT_PACKED) {
    rc = pq__bitpacked_decode(p, len, w, tmp, n, used);
  } else if (enc == PQ__ENC_RLE) {
    size_t l = len, off = 0;
    if (prefixed) {
      if (len < 4) return col_bad(c, "truncated level length");
      l = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
      if (l > len - 4) return col_bad(c, "level data past end of page");
      off = 4;
    }
    *used = off + l;
    uint32_t v;
    if (pq__rle_one_run(p + off, l, w, n, &v)) { /* every entry alike: no per-entry pass */
      if (v > (uint32_t)max) return col_bad(c, "level above the column's maximum");
      for (size_t i = 0; i < n; i++) dst[i] = (int16_t)v;
      return 0;
    }
    rc = pq__rle_decode(p + off, l, w, tmp, n);
  } else {
    return dd_err_set(DD_EUNSUPPORTED, "parquet: column '%s' uses level encoding %d, "
                      "which is not supported", c->field->name, enc);
  }
  for (size_t i = 0; !rc && i < n; i++) {
    if (tmp[i] > (uint32_t)max) return col_bad(c, "level above the column's maximum");
    dst[i] = (int16_t)tmp[i];
  }
  return rc;
}

static size_t count_defined(const pq__col *c, size_t from, size_t n) {
  if (c->field->max_def == 0) return n;
  size_t k = 0;
  int16_t max = c->field->max_def;
  for (size_t i = from; i < from + n; i++) k += c->def[i] == max;
  return k;
}

typedef struct page {
  const pq__pagehdr *h;
  const uint8_t *body;   /* compressed_size bytes */
  pq_codec codec;
} page;

static int inflate_to(pq__col *c, pq_codec codec, const uint8_t *src, size_t n, size_t un,
                      const uint8_t **out) {
  if (codec == PQ_CODEC_UNCOMPRESSED) {
    if (n != un) return col_bad(c, "uncompressed page sizes disagree");
    *out = src;
    return 0;
  }
  if (un > PQ__MAX_PAGE) return col_bad(c, "page larger than 1 GiB");
  int rc = pq__decompress_check(codec, src, n, un);
  if (rc) return dd_err_wrap(rc, "column '%s'", c->field->name);
  uint8_t *dst;
  if (c->field->type == PQ_T_BYTE_ARRAY || !c->dict_done) { /* values point into it */
    dst = pq__arena_alloc(&c->mem, un);
  } else {
    c->scratch.len = 0;
    dst = pq__buf_reserve(&c->scratch, un ? un : 1) ? NULL : c->scratch.data;
  }
  if (!dst) return dd_err_set(DD_ENOMEM, "parquet: out of memory for page");
  *out = dst;
  rc = pq__decompress(codec, src, n, dst, un);
  return rc ? dd_err_wrap(rc, "column '%s'", c->field->name) : 0;
}

static int page_levels(pq__col *c, const page *pg, const uint8_t *p, size_t len, bool v2,
                       size_t *used) {
  const pq__pagehdr *h = pg->h;
  size_t n = (size_t)h->num_values, u = 0, pos = 0;
  int rc = grow_levels(c, n);
  uint32_t *tmp = rc ? NULL : pq__col_tmp(c, n);
  if (!rc && !tmp) rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
  if (!rc && c->field->max_rep > 0) {
    size_t l = v2 ? (size_t)h->rep_len : len;
    rc = levels(c, v2 ? PQ__ENC_RLE : h->rep_encoding, !v2, p, l, c->field->max_rep,
                c->rep + c->nlev, n, &u, tmp);
    pos = v2 ? l : u;
  }
  if (!rc && c->field->max_def > 0) {
    size_t l = v2 ? (size_t)h->def_len : len - pos;
    rc = levels(c, v2 ? PQ__ENC_RLE : h->def_encoding, !v2, p + pos, l, c->field->max_def,
                c->def + c->nlev, n, &u, tmp);
    pos += v2 ? l : u;
  }
  *used = pos;
  return rc;
}

static int data_page(pq__col *c, const page *pg, bool v2) {
  const pq__pagehdr *h = pg->h;
  size_t n = (size_t)h->num_values, csize = (size_t)h->compressed_size, used = 0;
  if (n > PQ__MAX_PAGE_VALUES || (int64_t)n > c->want - (int64_t)c->nlev)
    return col_bad(c, "page holds more values than the chunk");
  const uint8_t *p = pg->body;
  size_t len = csize;
  int rc;
  c->dict_done = true;
  if (!v2) {
    if ((rc = inflate_to(c, pg->codec, pg->body, csize, (size_t)h->uncompressed_size, &p)))
      return rc;
    len = (size_t)h->uncompressed_size;
  } else if (h->rep_len < 0 || h->def_len < 0 ||
             (size_t)h->rep_len + (size_t)h->def_len > csize ||
             (size_t)h->rep_len + (size_t)h->def_len > (size_t)h->uncompressed_size) {
    return col_bad(c, "v2 level lengths exceed the page");
  }
  if ((rc = page_levels(c, pg, p, len, v2, &used))) return rc;
  const uint8_t *vals = p + used;
  size_t vlen = len - used;
  if (v2 && h->is_compressed && pg->codec != PQ_CODEC_UNCOMPRESSED) {
    size_t un = (size_t)h->uncompressed_size - used;
    if ((rc = inflate_to(c, pg->codec, vals, vlen, un, &vals))) return rc;
    vlen = un;
  }
  size_t nv = count_defined(c, c->nlev, n);
  c->nlev += n;
  return pq__values_decode(c, h->encoding, vals, vlen, nv);
}

static int dict_page(pq__col *c, const page *pg) {
  const pq__pagehdr *h = pg->h;
  const uint8_t *p;
  int rc = inflate_to(c, pg->codec, pg->body, (size_t)h->compressed_size,
                      (size_t)h->uncompressed_size, &p);
  if (rc) return rc;
  return pq__dict_decode(c, h->encoding, p, (size_t)h->uncompressed_size,
                         (size_t)h->num_values);
}

static int chunk_range(pq__col *c, const pq_file *f, const pq_chunk_info *m, size_t *start,
                       size_t *end) {
  int64_t s = m->data_page_offset;
  if (m->dictionary_page_offset >= 4 && m->dictionary_page_offset < s)
    s = m->dictionary_page_offset;
  if (s < 4 || (uint64_t)s >= f->len || m->total_compressed_size < 0 ||
      (uint64_t)m->total_compressed_size > f->len - (uint64_t)s)
    return col_bad(c, "chunk offsets outside the file");
  *start = (size_t)s;
  *end = (size_t)s + (size_t)m->total_compressed_size;
  return 0;
}

/* The chunk's bytes [start, end) of f: in the file's memory, or read into c->raw. */
static int chunk_bytes(pq__col *c, const pq_file *f, size_t start, size_t end,
                       const uint8_t **out) {
  if (f->buf) {
    *out = f->buf + start;
    return 0;
  }
  c->raw.len = 0;
  int rc = pq__buf_reserve(&c->raw, end - start ? end - start : 1);
  if (!rc) rc = f->read(f->read_ctx, start, end - start, c->raw.data);
  if (rc) return dd_err_wrap(rc, "parquet: reading column chunk '%s'", c->field->name);
  c->raw.len = end - start;
  *out = c->raw.data;
  return 0;
}

/* One page at data + *pos of the chunk's end bytes. */
static int one_page(pq__col *c, const uint8_t *data, pq_codec codec, size_t *pos, size_t end) {
  pq__pagehdr h;
  size_t hl;
  int rc = pq__pagehdr_parse(&h, data + *pos, end - *pos, &hl);
  if (rc) return dd_err_wrap(rc, "column '%s'", c->field->name);
  *pos += hl;
  if ((size_t)h.compressed_size > end - *pos) return col_bad(c, "page extends past chunk");
  page pg = {&h, data + *pos, codec};
  *pos += (size_t)h.compressed_size;
  if (h.type == PQ__PAGE_DICT && h.has_dict) return dict_page(c, &pg);
  if (h.type == PQ__PAGE_DATA && h.has_data) return data_page(c, &pg, false);
  if (h.type == PQ__PAGE_DATA_V2 && h.has_v2) return data_page(c, &pg, true);
  if (h.type == PQ__PAGE_DICT || h.type == PQ__PAGE_DATA || h.type == PQ__PAGE_DATA_V2)
    return col_bad(c, "page header lacks its type-specific header");
  return 0; /* index pages and unknown page types are skipped */
}

int pq__col_decode(pq__col *c, const pq_file *f, size_t rg, size_t col) {
  const pq__chunk *ch = &f->rgs[rg].chunks[col];
  c->field = f->leaves[col];
  c->elem = pq__type_elem(c->field);
  c->last_type = c->field->type;
  c->last_def = c->field->max_def > 0;
  c->last_rep = c->field->max_rep > 0;
  c->decoded = true;
  /* Blocks hold several pages and are reused across row groups; size them after the
   * chunk (a hint only) so a small file with many columns stays small. */
  int64_t hint = ch->info.total_uncompressed_size;
  c->mem.min_block = hint <= 0 ? 0 : hint >= (4 << 20) ? (4u << 20) : (size_t)hint;
  if (ch->file_path)
    return dd_err_set(DD_EUNSUPPORTED, "parquet: column chunk '%s' lives in another file "
                      "(%s), which is not supported", c->field->name, ch->file_path);
  if (!ch->has_meta) return col_bad(c, "no ColumnMetaData");
  size_t start = 0, end = 0, pos = 0;
  const uint8_t *data = NULL;
  int rc = chunk_range(c, f, &ch->info, &start, &end);
  int64_t want = ch->info.num_values;
  if (!rc && (want < 0 || (c->field->max_rep == 0 && want != f->rgs[rg].num_rows)))
    rc = col_bad(c, "value count disagrees with the row group's row count");
  c->want = want;
  if (!rc) rc = chunk_bytes(c, f, start, end, &data);
  end -= start; /* positions are in the chunk from here */
  while (!rc && (int64_t)c->nlev < want && pos < end)
    rc = one_page(c, data, ch->info.codec, &pos, end);
  if (!rc && (int64_t)c->nlev != want)
    rc = dd_err_set(DD_ECORRUPT, "parquet: corrupt column chunk '%s': pages hold %zu "
                    "values, metadata says %lld", c->field->name, c->nlev, (long long)want);
  /* The level/index scratch (4 bytes a value) and the inflated fixed-width pages serve
   * this chunk's decoding only: held on, they were a third of a checkpoint load's peak
   * memory (two row groups' worth of every decoded leaf). The allocator reuses them. */
  free(c->tmp);
  c->tmp = NULL;
  c->tmpcap = 0;
  pq__buf_free(&c->scratch);
  return rc;
}

void pq__col_clear(pq__col *c) {
  free(c->def);
  free(c->rep);
  free(c->vals);
  free(c->dict);
  free(c->tmp);
  pq__buf_free(&c->scratch);
  pq__buf_free(&c->raw);
  pq__arena_free(&c->mem);
  memset(c, 0, sizeof *c);
}

void pq__col_reset(pq__col *c) {
  c->nlev = 0;
  c->nvals = 0;
  c->ndict = 0;
  c->want = 0;
  c->dict_done = false;
  pq__arena_rewind(&c->mem);
}

/* ---- public flat API ------------------------------------------------------------------ */

static void fill_pub(pq__col *c) {
  pq_column *p = &c->pub;
  p->field = c->field;
  p->num_levels = c->nlev;
  p->def = c->def;
  p->rep = c->rep;
  p->num_values = c->nvals;
  const void *v = c->vals;
  switch (c->field->type) {
    case PQ_T_BOOLEAN: p->b = v; break;
    case PQ_T_INT32: p->i32 = v; break;
    case PQ_T_INT64: p->i64 = v; break;
    case PQ_T_FLOAT: p->f = v; break;
    case PQ_T_DOUBLE: p->d = v; break;
    case PQ_T_BYTE_ARRAY: p->ba = v; break;
    default: p->fixed = v;
  }
}

int pq_column_read(pq_column **out, const pq_file *f, size_t rg, size_t col) {
  *out = NULL;
  if (rg >= f->num_rgs || col >= f->num_leaves)
    return dd_err_set(DD_EINVAL, "parquet: no column %zu in row group %zu", col, rg);
  pq__col *c = calloc(1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  int rc = pq__col_decode(c, f, rg, col);
  if (rc) {
    pq__col_clear(c);
    free(c);
    return rc;
  }
  fill_pub(c);
  *out = &c->pub;
  return 0;
}

/* Whether leaf b decodes into buffers of the same layout as the last leaf c decoded (the
 * same leaf of another file with the same schema, typically): then c's memory serves it.
 * Only what c recorded is compared: the last leaf's file may be gone. */
static bool same_shape(const pq__col *c, const pq_field *b) {
  return c->decoded && c->last_type == b->type && c->elem == pq__type_elem(b) &&
         c->last_def == (b->max_def > 0) && c->last_rep == (b->max_rep > 0);
}

int pq_column_reread(pq_column *pc, const pq_file *f, size_t rg, size_t col) {
  if (rg >= f->num_rgs || col >= f->num_leaves)
    return dd_err_set(DD_EINVAL, "parquet: no column %zu in row group %zu", col, rg);
  pq__col *c = (pq__col *)pc;
  if (same_shape(c, f->leaves[col])) pq__col_reset(c);
  else pq__col_clear(c); /* another kind of leaf: nothing to reuse */
  int rc = pq__col_decode(c, f, rg, col);
  fill_pub(c);
  return rc;
}

void pq_column_free(pq_column *pc) {
  if (!pc) return;
  pq__col *c = (pq__col *)pc; /* pub is the first member */
  pq__col_clear(c);
  free(c);
}

void pq_column_swap_values(pq_column *pc, void **buf, size_t *cap) {
  pq__col *c = (pq__col *)pc;
  uint8_t *v = c->vals;
  size_t vc = c->capvals;
  c->vals = *buf;
  c->capvals = c->vals ? *cap : 0;
  *buf = v;
  *cap = v ? vc : 0;
  fill_pub(c);
}
