/* reader.c: the Arrow IPC stream reader (arrow_read.h). A bounds-checked flatbuffer
 * walker (layout notes in fb.h) reads the Message, Schema, Field and RecordBatch tables;
 * the batch's buffers are validated and copied into arw_col buffers (arrow_int.h), with
 * offsets rebased to start at 0 and validity bitmaps kept even when nothing is null. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"
#include "store/arrow/arrow_read.h"

/* Facts from the Arrow format's Schema.fbs and Message.fbs. */
enum {
  T_NULL = 1, T_INT = 2, T_FLOAT = 3, T_BINARY = 4, T_UTF8 = 5, T_BOOL = 6, T_DECIMAL = 7,
  T_DATE = 8, T_TIMESTAMP = 10,
  T_LIST = 12, T_STRUCT = 13, T_MAP = 17,
  H_SCHEMA = 1, H_DICTIONARY = 2, H_RECORD_BATCH = 3,
  F_NAME = 0, F_NULLABLE = 1, F_TYPE_TYPE = 2, F_TYPE = 3, F_DICTIONARY = 4, F_CHILDREN = 5,
  S_ENDIANNESS = 0, S_FIELDS = 1,
  M_VERSION = 0, M_HEADER_TYPE = 1, M_HEADER = 2, M_BODY_LENGTH = 3,
  B_LENGTH = 0, B_NODES = 1, B_BUFFERS = 2, B_COMPRESSION = 3,
};

#define BAD(...) dd_err_set(DD_EINVAL, "arrow stream: " __VA_ARGS__)

struct arw_reader {
  const uint8_t *data;
  size_t len, pos;
  arw_schema *schema;
  bool done;
};

/* ======================= flatbuffers ======================= */

typedef struct fbt {
  const uint8_t *b;
  size_t n;
  size_t pos;     /* table start */
  size_t vt;      /* vtable start */
  uint16_t vtlen; /* vtable bytes */
} fbt;

static uint64_t le(const uint8_t *p, size_t w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static int tab_at(fbt *t, const uint8_t *b, size_t n, size_t pos) {
  if (pos > n || n - pos < 4) return BAD("table outside the message");
  int64_t soff = (int32_t)le(b + pos, 4);
  int64_t vt = (int64_t)pos - soff;
  if (vt < 0 || (uint64_t)vt > n || n - (size_t)vt < 4) return BAD("vtable outside the message");
  uint16_t vtlen = (uint16_t)le(b + vt, 2);
  if (vtlen < 4 || vtlen % 2 || n - (size_t)vt < vtlen) return BAD("bad vtable");
  *t = (fbt){b, n, pos, (size_t)vt, vtlen};
  return 0;
}

/* Absolute position of a field holding w bytes, or 0 when absent. */
static size_t tab_field(const fbt *t, int slot, size_t w, int *rc) {
  size_t at = 4 + 2 * (size_t)slot;
  if (at + 2 > t->vtlen) return 0;
  size_t off = (size_t)le(t->b + t->vt + at, 2);
  if (!off) return 0;
  if (t->pos + off > t->n || t->n - (t->pos + off) < w) return *rc = BAD("field outside the message"), 0;
  return t->pos + off;
}

static int64_t tab_int(const fbt *t, int slot, size_t w, int64_t def, int *rc) {
  size_t p = tab_field(t, slot, w, rc);
  if (!p) return def;
  uint64_t v = le(t->b + p, w);
  if (w < 8 && (v >> (8 * w - 1)) & 1) v |= ~(uint64_t)0 << (8 * w); /* sign-extend */
  return (int64_t)v;
}

/* The object a uoffset field points to; 0 when absent. */
static size_t tab_ref(const fbt *t, int slot, int *rc) {
  size_t p = tab_field(t, slot, 4, rc);
  if (!p) return 0;
  size_t to = p + (size_t)le(t->b + p, 4);
  if (to < p || to >= t->n) return *rc = BAD("offset outside the message"), 0;
  return to;
}

static int tab_sub(const fbt *t, int slot, fbt *out, bool *present) {
  int rc = 0;
  size_t to = tab_ref(t, slot, &rc);
  *present = to != 0;
  if (rc || !to) return rc;
  return tab_at(out, t->b, t->n, to);
}

/* A vector field: its element count and the position of element 0. */
static int tab_vec(const fbt *t, int slot, size_t elem, size_t *count, size_t *first) {
  int rc = 0;
  size_t to = tab_ref(t, slot, &rc);
  *count = 0, *first = 0;
  if (rc || !to) return rc;
  if (t->n - to < 4) return BAD("vector outside the message");
  size_t c = (size_t)le(t->b + to, 4);
  if (c > (t->n - to - 4) / elem) return BAD("vector longer than the message");
  *count = c, *first = to + 4;
  return 0;
}

/* Element i of a vector of uoffsets, as a table. */
static int vec_table(const fbt *t, size_t first, size_t i, fbt *out) {
  size_t p = first + 4 * i;
  size_t to = p + (size_t)le(t->b + p, 4);
  if (to < p || to >= t->n) return BAD("offset outside the message");
  return tab_at(out, t->b, t->n, to);
}

/* ======================= schema ======================= */

static int field_kind(const fbt *f, arw_kind *k, int *prec, int *scale, const char *name) {
  int rc = 0;
  uint8_t tt = (uint8_t)tab_int(f, F_TYPE_TYPE, 1, 0, &rc);
  fbt ty = {0};
  bool has = false;
  if (!rc) rc = tab_sub(f, F_TYPE, &ty, &has);
  if (rc) return rc;
  if (!has && tt != T_UTF8 && tt != T_BINARY && tt != T_BOOL && tt != T_LIST && tt != T_STRUCT &&
      tt != T_NULL)
    return BAD("field '%s' has no type", name);
  switch (tt) {
    case T_NULL: *k = ARW_NULL; return 0;
    case T_DECIMAL:
      *prec = (int)tab_int(&ty, 0, 4, 0, &rc);
      *scale = (int)tab_int(&ty, 1, 4, 0, &rc);
      if (!rc && tab_int(&ty, 2, 4, 128, &rc) != 128) rc = BAD("field '%s': only 128-bit decimals are supported", name);
      if (!rc && (*prec < 1 || *prec > ARW_DECIMAL_MAX_PRECISION || *scale < 0 || *scale > *prec))
        rc = BAD("field '%s': decimal(%d,%d) is out of range", name, *prec, *scale);
      *k = ARW_DECIMAL128;
      return rc;
    case T_UTF8: *k = ARW_UTF8; return 0;
    case T_BINARY: *k = ARW_BINARY; return 0;
    case T_BOOL: *k = ARW_BOOL; return 0;
    case T_LIST: *k = ARW_LIST; return 0;
    case T_STRUCT: *k = ARW_STRUCT; return 0;
    case T_MAP: *k = ARW_MAP; return 0;
    case T_INT: {
      int64_t bits = tab_int(&ty, 0, 4, 0, &rc);
      bool is_signed = tab_int(&ty, 1, 1, 0, &rc) != 0;
      if (rc) return rc;
      if (!is_signed || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        return BAD("field '%s': int%s%d is not supported (signed 8 to 64 bits are)", name,
                   is_signed ? "" : " unsigned ", (int)bits);
      *k = bits == 8 ? ARW_INT8 : bits == 16 ? ARW_INT16 : bits == 32 ? ARW_INT32 : ARW_INT64;
      return 0;
    }
    case T_FLOAT: {
      int64_t prec = tab_int(&ty, 0, 2, 0, &rc);
      if (rc) return rc;
      if (prec != 1 && prec != 2) return BAD("field '%s': half floats are not supported", name);
      *k = prec == 1 ? ARW_FLOAT32 : ARW_FLOAT64;
      return 0;
    }
    case T_DATE:
      if (tab_int(&ty, 0, 2, 1, &rc) != 0 || rc)
        return rc ? rc : BAD("field '%s': only Date32 (days) is supported", name);
      *k = ARW_DATE32;
      return 0;
    case T_TIMESTAMP: {
      if (tab_int(&ty, 0, 2, 0, &rc) != 2 || rc)
        return rc ? rc : BAD("field '%s': only microsecond timestamps are supported", name);
      *k = tab_field(&ty, 1, 4, &rc) ? ARW_TIMESTAMP_UTC : ARW_TIMESTAMP;
      return rc;
    }
    default: return BAD("field '%s': Arrow type %u is not supported", name, (unsigned)tt);
  }
}

static int add_field(arw_schema *s, int parent, const fbt *f, int depth, bool force_non_null);

static int add_children(arw_schema *s, int id, const fbt *f, arw_kind k, const char *name, int depth) {
  size_t n, first;
  int rc = tab_vec(f, F_CHILDREN, 4, &n, &first);
  if (rc) return rc;
  if (k == ARW_LIST && n != 1) return BAD("list '%s' must have one child", name);
  if (k == ARW_MAP) { /* one entries struct holding key and value */
    fbt e;
    size_t en, efirst;
    if (n != 1) return BAD("map '%s' must have one entries child", name);
    if ((rc = vec_table(f, first, 0, &e)) || (rc = tab_vec(&e, F_CHILDREN, 4, &en, &efirst))) return rc;
    if (en != 2) return BAD("map '%s' entries must have key and value", name);
    for (size_t i = 0; i < 2 && !rc; i++) {
      fbt c;
      if (!(rc = vec_table(&e, efirst, i, &c))) rc = add_field(s, id, &c, depth + 2, i == 0);
    }
    return rc;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    fbt c;
    if (!(rc = vec_table(f, first, i, &c))) rc = add_field(s, id, &c, depth + 1, false);
  }
  return rc;
}

static int add_field(arw_schema *s, int parent, const fbt *f, int depth, bool force_non_null) {
  if (depth > ARW_READ_MAX_DEPTH) return BAD("fields nested deeper than %d levels", ARW_READ_MAX_DEPTH);
  int rc = 0;
  size_t np = tab_ref(f, F_NAME, &rc);
  if (rc) return rc;
  char *name = NULL;
  if (np) {
    if (f->n - np < 4) return BAD("field name outside the message");
    size_t len = (size_t)le(f->b + np, 4);
    if (len > f->n - np - 4) return BAD("field name outside the message");
    name = strndup((const char *)f->b + np + 4, len);
  } else {
    name = strdup("");
  }
  if (!name) return dd_err_set(DD_ENOMEM, "out of memory");
  arw_kind k = ARW_UTF8;
  int id = -1, prec = 0, scale = 0;
  bool nullable = tab_int(f, F_NULLABLE, 1, 0, &rc) != 0 && !force_non_null;
  if (!rc && tab_field(f, F_DICTIONARY, 4, &rc)) rc = BAD("field '%s' is dictionary-encoded (not supported)", name);
  if (!rc) rc = field_kind(f, &k, &prec, &scale, name);
  if (!rc && k == ARW_NULL) nullable = true;
  if (!rc) rc = k == ARW_DECIMAL128 ? arw_schema_add_decimal(s, parent, name, prec, scale, nullable, &id)
                                    : arw_schema_add(s, parent, name, k, nullable, &id);
  if (!rc && (k == ARW_LIST || k == ARW_MAP || k == ARW_STRUCT)) rc = add_children(s, id, f, k, name, depth);
  free(name);
  return rc;
}

/* ======================= messages ======================= */

/* The next message: its Message table, body and body length; *eos at the end. */
static int next_message(arw_reader *r, fbt *msg, const uint8_t **body, size_t *body_len, bool *eos) {
  *eos = false;
  if (r->len - r->pos < 4) return *eos = true, 0;
  size_t p = r->pos;
  uint32_t meta = (uint32_t)le(r->data + p, 4);
  if (meta == 0xFFFFFFFFu) {
    if (r->len - p < 8) return BAD("truncated message length");
    meta = (uint32_t)le(r->data + p + 4, 4);
    p += 8;
  } else {
    p += 4; /* pre-0.15 framing: the length alone */
  }
  if (meta == 0) return *eos = true, 0;
  if (meta > r->len - p) return BAD("message metadata beyond the end of the stream");
  const uint8_t *m = r->data + p;
  int rc = 0;
  if (meta < 4) return BAD("message metadata too short");
  if ((rc = tab_at(msg, m, meta, (size_t)le(m, 4)))) return rc;
  int64_t blen = tab_int(msg, M_BODY_LENGTH, 8, 0, &rc);
  if (rc) return rc;
  if (blen < 0 || (uint64_t)blen > r->len - p - meta) return BAD("message body beyond the end of the stream");
  *body = m + meta;
  *body_len = (size_t)blen;
  r->pos = p + meta + (size_t)blen;
  return 0;
}

int arw_reader_open(arw_reader **out, const uint8_t *data, size_t len) {
  *out = NULL;
  arw_reader *r = calloc(1, sizeof *r);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  r->data = data, r->len = len;
  fbt msg, sch;
  const uint8_t *body;
  size_t blen, n, first;
  bool eos, has;
  int rc = next_message(r, &msg, &body, &blen, &eos);
  if (!rc && eos) rc = BAD("no schema message");
  if (!rc && tab_int(&msg, M_HEADER_TYPE, 1, 0, &rc) != H_SCHEMA && !rc) rc = BAD("the first message is not a schema");
  if (!rc) rc = tab_sub(&msg, M_HEADER, &sch, &has);
  if (!rc && !has) rc = BAD("schema message without a schema");
  if (!rc && tab_int(&sch, S_ENDIANNESS, 2, 0, &rc) != 0 && !rc) rc = BAD("big-endian data is not supported");
  if (!rc) rc = tab_vec(&sch, S_FIELDS, 4, &n, &first);
  if (!rc) rc = arw_schema_new(&r->schema);
  for (size_t i = 0; !rc && i < n; i++) {
    fbt f;
    if (!(rc = vec_table(&sch, first, i, &f))) rc = add_field(r->schema, ARW_ROOT, &f, 1, false);
  }
  if (rc) {
    arw_reader_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

const arw_schema *arw_reader_schema(const arw_reader *r) { return r->schema; }

void arw_reader_free(arw_reader *r) {
  if (!r) return;
  arw_schema_free(r->schema);
  free(r);
}

/* ======================= record batches ======================= */

typedef struct bread {
  const fbt *rb;
  const uint8_t *body;
  size_t body_len;
  size_t nodes, node0, nbufs, buf0;
  size_t next_node, next_buf;
} bread;

/* The next body buffer, bounds-checked. */
static int take_buffer(bread *d, const uint8_t **p, size_t *len, const char *name) {
  if (d->next_buf >= d->nbufs) return BAD("field '%s': fewer buffers than fields need", name);
  const uint8_t *e = d->rb->b + d->buf0 + 16 * d->next_buf++;
  uint64_t off = le(e, 8), n = le(e + 8, 8);
  if (off > d->body_len || n > d->body_len - off) return BAD("field '%s': buffer beyond the body", name);
  *p = d->body + off, *len = (size_t)n;
  return 0;
}

static size_t popcount_bits(const uint8_t *p, size_t nbits) {
  size_t c = 0;
  for (size_t i = 0; i < nbits; i++) c += (p[i / 8] >> (i % 8)) & 1;
  return c;
}

static int read_validity(bread *d, arw_col *c, const arw_field *f) {
  const uint8_t *p;
  size_t n, need = (c->length + 7) / 8;
  int rc = take_buffer(d, &p, &n, f->name);
  if (rc) return rc;
  if (n == 0) {
    if (c->null_count) return BAD("field '%s': nulls without a validity bitmap", f->name);
    if ((rc = arw_buf_zeros(&c->validity, need))) return rc;
    if (need) memset(c->validity.data, 0xFF, need);
    return 0;
  }
  if (n < need) return BAD("field '%s': validity bitmap too short", f->name);
  if ((rc = arw_buf_put(&c->validity, p, need))) return rc;
  c->null_count = c->length - popcount_bits(p, c->length);
  if (!f->nullable && c->null_count) return BAD("field '%s' is not nullable but holds nulls", f->name);
  return 0;
}

/* Offsets, rebased to 0; *span gets last - first. */
static int read_offsets(bread *d, arw_col *c, const arw_field *f, int32_t *first, size_t *span) {
  const uint8_t *p;
  size_t n;
  int rc = take_buffer(d, &p, &n, f->name);
  if (rc) return rc;
  if (c->length == 0 && n == 0) return *first = 0, *span = 0, 0;
  if (n / 4 < c->length + 1) return BAD("field '%s': offsets buffer too short", f->name);
  *first = (int32_t)le(p, 4);
  int32_t prev = *first;
  if (prev < 0) return BAD("field '%s': negative offset", f->name);
  for (size_t i = 0; i <= c->length; i++) {
    int32_t o = (int32_t)le(p + 4 * i, 4);
    if (o < prev) return BAD("field '%s': offsets decrease", f->name);
    prev = o;
    if ((rc = arw_buf_put_u32(&c->offsets, (uint32_t)(o - *first)))) return rc;
  }
  *span = (size_t)(prev - *first);
  return 0;
}

static int read_field(bread *d, arw_batch *b, int id, size_t want_len) {
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  if (d->next_node >= d->nodes) return BAD("fewer field nodes than fields");
  const uint8_t *node = d->rb->b + d->node0 + 16 * d->next_node++;
  int64_t length = (int64_t)le(node, 8), nulls = (int64_t)le(node + 8, 8);
  if (length < 0 || (size_t)length != want_len)
    return BAD("field '%s' has %lld values, expected %zu", f->name, (long long)length, want_len);
  if (nulls < 0 || nulls > length) return BAD("field '%s': bad null count", f->name);
  c->offsets.len = 0; /* the empty batch's leading 0 is rewritten below */
  c->length = (size_t)length, c->null_count = (size_t)nulls;
  if (f->kind == ARW_NULL) { /* no buffers; every slot null */
    c->null_count = c->length;
    return arw_buf_zeros(&c->validity, (c->length + 7) / 8);
  }
  int rc = read_validity(d, c, f);
  int32_t first = 0;
  size_t span = 0, w = arw__width(f->kind);
  const uint8_t *p;
  size_t n;
  if (!rc && arw__has_offsets(f->kind)) rc = read_offsets(d, c, f, &first, &span);
  if (!rc && arw__has_offsets(f->kind) && !c->offsets.len) rc = arw_buf_put_u32(&c->offsets, 0);
  if (rc) return rc;
  switch (f->kind) {
    case ARW_UTF8:
    case ARW_BINARY:
      if ((rc = take_buffer(d, &p, &n, f->name))) return rc;
      if ((size_t)first > n || span > n - (size_t)first) return BAD("field '%s': offsets beyond the data", f->name);
      return arw_buf_put(&c->values, p + first, span);
    case ARW_BOOL:
      if ((rc = take_buffer(d, &p, &n, f->name))) return rc;
      if (n < (c->length + 7) / 8) return BAD("field '%s': values buffer too short", f->name);
      return arw_buf_put(&c->values, p, (c->length + 7) / 8);
    case ARW_LIST:
    case ARW_MAP:
      if (first != 0) return BAD("field '%s': a list whose offsets do not start at 0", f->name);
      return read_field(d, b, f->first_child, span);
    case ARW_STRUCT:
    case ARW__ENTRIES:
      for (int ch = f->first_child; !rc && ch >= 0; ch = b->schema->fields[ch].next_sibling)
        rc = read_field(d, b, ch, c->length);
      return rc;
    default:
      if ((rc = take_buffer(d, &p, &n, f->name))) return rc;
      if (n / w < c->length) return BAD("field '%s': values buffer too short", f->name);
      return arw_buf_put(&c->values, p, w * c->length);
  }
}

static int read_batch(arw_reader *r, const fbt *msg, const uint8_t *body, size_t blen, arw_batch **out) {
  fbt rb;
  bool has;
  int rc = tab_sub(msg, M_HEADER, &rb, &has);
  if (!rc && !has) rc = BAD("record batch message without a header");
  if (!rc && tab_field(&rb, B_COMPRESSION, 4, &rc)) rc = BAD("compressed bodies are not supported");
  int64_t rows = rc ? 0 : tab_int(&rb, B_LENGTH, 8, 0, &rc);
  if (!rc && rows < 0) rc = BAD("negative row count");
  bread d = {.rb = &rb, .body = body, .body_len = blen};
  if (!rc) rc = tab_vec(&rb, B_NODES, 16, &d.nodes, &d.node0);
  if (!rc) rc = tab_vec(&rb, B_BUFFERS, 16, &d.nbufs, &d.buf0);
  arw_batch *b = NULL;
  if (!rc) rc = arw_batch_new(&b, r->schema);
  for (int c = r->schema->first_column; !rc && c >= 0; c = r->schema->fields[c].next_sibling)
    rc = read_field(&d, b, c, (size_t)rows);
  if (rc) {
    arw_batch_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

int arw_reader_next(arw_reader *r, arw_batch **out) {
  *out = NULL;
  while (!r->done) {
    fbt msg;
    const uint8_t *body;
    size_t blen;
    bool eos;
    int rc = next_message(r, &msg, &body, &blen, &eos);
    if (rc) return rc;
    if (eos) {
      r->done = true;
      break;
    }
    int64_t h = tab_int(&msg, M_HEADER_TYPE, 1, 0, &rc);
    if (rc) return rc;
    if (h == H_RECORD_BATCH) return read_batch(r, &msg, body, blen, out);
    if (h == H_DICTIONARY) return BAD("dictionary batches are not supported");
    if (h == H_SCHEMA) return BAD("a second schema message");
    /* other header kinds (tensors) are not part of a stream: refuse */
    return BAD("unexpected message type %lld", (long long)h);
  }
  return 0;
}
