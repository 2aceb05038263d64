/* fb.c: the back-to-front FlatBuffers builder (format notes in fb.h). */
#include "store/arrow/fb.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

void arw_fb_init(arw_fb *b) {
  arw_fb zero = ARW_FB_INIT;
  *b = zero;
}

void arw_fb_free(arw_fb *b) {
  if (!b) return;
  free(b->mem);
  arw_fb_init(b);
}

/* ---- raw space -------------------------------------------------------------------- */

/* Makes room for n more bytes, moving the live bytes to the end of a larger block. */
static int fb_grow(arw_fb *b, size_t n) {
  if (b->cap - b->size >= n) return 0;
  if (b->size + n > UINT32_MAX / 2) return dd_err_set(DD_EINVAL, "flatbuffer too large");
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->size < n) cap *= 2;
  uint8_t *mem = malloc(cap);
  if (!mem) return dd_err_set(DD_ENOMEM, "out of memory building a flatbuffer");
  if (b->size) memcpy(mem + cap - b->size, b->mem + b->cap - b->size, b->size);
  free(b->mem);
  b->mem = mem;
  b->cap = cap;
  return 0;
}

/* Pads with zeros so that, once `after` more bytes are pushed, size is a multiple of
 * align: the object pushed next then starts aligned (relative to the end). */
static int fb_prep(arw_fb *b, size_t align, size_t after) {
  if (align > b->minalign) b->minalign = align;
  size_t pad = (align - ((b->size + after) & (align - 1))) & (align - 1);
  int rc = fb_grow(b, pad + after);
  if (rc) return rc;
  if (pad) memset(b->mem + b->cap - b->size - pad, 0, pad);
  b->size += pad;
  return 0;
}

/* Pushes n bytes (room must have been made by fb_prep). */
static void fb_push(arw_fb *b, const void *p, size_t n) {
  assert(b->cap - b->size >= n);
  b->size += n;
  memcpy(b->mem + b->cap - b->size, p, n);
}

static void le_store(uint8_t *dst, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(v >> (8 * i));
}

/* Pushes an n-byte little-endian scalar, aligned to n. */
static int fb_scalar(arw_fb *b, uint64_t v, size_t n) {
  int rc = fb_prep(b, n, n);
  if (rc) return rc;
  uint8_t le[8];
  le_store(le, v, n);
  fb_push(b, le, n);
  return 0;
}

/* Pushes a uoffset to ref: its value is the distance from where it lands to ref. */
static int fb_uoffset(arw_fb *b, arw_fb_ref ref) {
  int rc = fb_prep(b, 4, 4);
  if (rc) return rc;
  assert(ref <= b->size);
  return fb_scalar(b, (uint32_t)(b->size + 4 - ref), 4);
}

/* ---- strings and vectors -------------------------------------------------------------- */

int arw_fb_string(arw_fb *b, const char *s, size_t len, arw_fb_ref *out) {
  assert(!b->in_table);
  int rc = fb_prep(b, 4, len + 1);
  if (rc) return rc;
  fb_push(b, "", 1);
  fb_push(b, s, len);
  if ((rc = fb_scalar(b, (uint32_t)len, 4))) return rc;
  *out = (arw_fb_ref)b->size;
  return 0;
}

int arw_fb_vec_refs(arw_fb *b, const arw_fb_ref *refs, size_t n, arw_fb_ref *out) {
  assert(!b->in_table);
  int rc = fb_prep(b, 4, 4 * n);
  if (rc) return rc;
  for (size_t i = n; i-- > 0;)
    if ((rc = fb_uoffset(b, refs[i]))) return rc;
  if ((rc = fb_scalar(b, (uint32_t)n, 4))) return rc;
  *out = (arw_fb_ref)b->size;
  return 0;
}

int arw_fb_vec_structs(arw_fb *b, const void *elems, size_t elem_size, size_t n, size_t align,
                       arw_fb_ref *out) {
  assert(!b->in_table);
  size_t bytes = elem_size * n;
  int rc = fb_prep(b, align > 4 ? align : 4, bytes);
  if (rc) return rc;
  if (bytes) fb_push(b, elems, bytes);
  if ((rc = fb_scalar(b, (uint32_t)n, 4))) return rc;
  *out = (arw_fb_ref)b->size;
  return 0;
}

/* ---- tables -------------------------------------------------------------------------------- */

int arw_fb_table_start(arw_fb *b) {
  assert(!b->in_table);
  b->in_table = true;
  b->table_start = b->size;
  memset(b->slot_pos, 0, sizeof b->slot_pos);
  b->nslots = 0;
  return 0;
}

static void fb_mark(arw_fb *b, int slot) {
  assert(b->in_table && slot >= 0 && slot < ARW_FB_MAX_SLOTS);
  b->slot_pos[slot] = (uint32_t)b->size;
  if (slot + 1 > b->nslots) b->nslots = slot + 1;
}

static int fb_field(arw_fb *b, int slot, uint64_t v, size_t n) {
  int rc = fb_scalar(b, v, n);
  if (!rc) fb_mark(b, slot);
  return rc;
}

int arw_fb_add_bool(arw_fb *b, int slot, bool v, bool def) {
  return v == def ? 0 : fb_field(b, slot, v ? 1 : 0, 1);
}

int arw_fb_add_u8(arw_fb *b, int slot, uint8_t v, uint8_t def) {
  return v == def ? 0 : fb_field(b, slot, v, 1);
}

int arw_fb_add_i16(arw_fb *b, int slot, int16_t v, int16_t def) {
  return v == def ? 0 : fb_field(b, slot, (uint16_t)v, 2);
}

int arw_fb_add_i32(arw_fb *b, int slot, int32_t v, int32_t def) {
  return v == def ? 0 : fb_field(b, slot, (uint32_t)v, 4);
}

int arw_fb_add_i64(arw_fb *b, int slot, int64_t v, int64_t def) {
  return v == def ? 0 : fb_field(b, slot, (uint64_t)v, 8);
}

int arw_fb_add_ref(arw_fb *b, int slot, arw_fb_ref ref) {
  int rc = fb_uoffset(b, ref);
  if (!rc) fb_mark(b, slot);
  return rc;
}

/* Closes the table: pushes its soffset, then its vtable right in front of it. */
int arw_fb_table_end(arw_fb *b, arw_fb_ref *out) {
  assert(b->in_table);
  int rc = fb_scalar(b, 0, 4); /* soffset placeholder, patched below */
  if (rc) return rc;
  size_t table = b->size;
  size_t vt_len = 4 + 2 * (size_t)b->nslots;
  if ((rc = fb_prep(b, 2, vt_len))) return rc;
  uint8_t vt[4 + 2 * ARW_FB_MAX_SLOTS];
  le_store(vt, vt_len, 2);
  le_store(vt + 2, table - b->table_start, 2);
  for (int i = 0; i < b->nslots; i++)
    le_store(vt + 4 + 2 * i, b->slot_pos[i] ? table - b->slot_pos[i] : 0, 2);
  fb_push(b, vt, vt_len);
  /* soffset = table address - vtable address (positive: the vtable is in front). */
  le_store(b->mem + b->cap - table, (uint32_t)(b->size - table), 4);
  b->in_table = false;
  *out = (arw_fb_ref)table;
  return 0;
}

int arw_fb_finish(arw_fb *b, arw_fb_ref root, const uint8_t **out, size_t *out_len) {
  assert(!b->in_table);
  int rc = fb_prep(b, b->minalign, 4);
  if (rc) return rc;
  if ((rc = fb_uoffset(b, root))) return rc;
  *out = b->mem + b->cap - b->size;
  *out_len = b->size;
  return 0;
}
