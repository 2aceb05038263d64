/* fb.h: a minimal FlatBuffers builder, just enough to encode Arrow's Message, Schema,
 * Field and RecordBatch headers (Message.fbs, Schema.fbs). Internal to dd_arrow.
 *
 * How a flatbuffer is laid out (all little-endian):
 *   - the buffer starts with a uoffset (u32) to the root table;
 *   - a uoffset stored at address A pointing to object O holds O - A (always forward);
 *   - a table starts with an soffset (i32) S; its vtable is at table - S. A vtable is
 *     u16 vtable_size, u16 table_size, then one u16 per field slot: the field's byte
 *     offset from the table start, 0 when absent (the reader then uses the default);
 *   - a string is u32 length, the bytes, a NUL; a vector is u32 count then elements,
 *     where table/string elements are uoffsets and struct elements are inline;
 *   - every scalar is aligned to its size, relative to the buffer start.
 *
 * Like the reference builders this one writes back to front: children are built first and
 * referred to by their distance from the buffer's end (an arw_fb_ref), so every offset
 * points forward. Objects are aligned relative to the end; arw_fb_finish pads the front
 * so the total size is a multiple of the largest alignment used, which makes end-relative
 * alignment equal start-relative alignment. */
#ifndef DD_ARROW_FB_H
#define DD_ARROW_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An object already in the builder: its distance in bytes from the buffer's end. */
typedef uint32_t arw_fb_ref;

#define ARW_FB_MAX_SLOTS 16

typedef struct arw_fb {
  uint8_t *mem;      /* bytes live in mem[cap - size, cap) */
  size_t cap;
  size_t size;
  size_t minalign;   /* largest alignment requested so far */
  bool in_table;
  size_t table_start;                   /* size when the open table began */
  uint32_t slot_pos[ARW_FB_MAX_SLOTS];  /* per slot: field position (size after it), 0 = unset */
  int nslots;                           /* highest used slot + 1 */
} arw_fb;

#define ARW_FB_INIT {NULL, 0, 0, 1, false, 0, {0}, 0}

/* Leaves and vectors (not while a table is open). */
int arw_fb_string(arw_fb *b, const char *s, size_t len, arw_fb_ref *out);
/* A vector of uoffsets to tables or strings; refs[0] becomes element 0. */
int arw_fb_vec_refs(arw_fb *b, const arw_fb_ref *refs, size_t n, arw_fb_ref *out);
/* A vector of n inline structs of elem_size bytes each (already little-endian), aligned
 * to align (a power of two). */
int arw_fb_vec_structs(arw_fb *b, const void *elems, size_t elem_size, size_t n, size_t align,
                       arw_fb_ref *out);

/* Tables: start, add fields (a scalar equal to its schema default is left out, as
 * readers supply the default), end. Only one table may be open at a time. */
int arw_fb_table_start(arw_fb *b);
int arw_fb_add_bool(arw_fb *b, int slot, bool v, bool def);
int arw_fb_add_u8(arw_fb *b, int slot, uint8_t v, uint8_t def);
int arw_fb_add_i16(arw_fb *b, int slot, int16_t v, int16_t def);
int arw_fb_add_i32(arw_fb *b, int slot, int32_t v, int32_t def);
int arw_fb_add_i64(arw_fb *b, int slot, int64_t v, int64_t def);
int arw_fb_add_ref(arw_fb *b, int slot, arw_fb_ref ref);
int arw_fb_table_end(arw_fb *b, arw_fb_ref *out);

/* Writes the root offset. *out / *out_len then describe the finished buffer, which stays
 * owned by b (valid until arw_fb_free); its length is a multiple of its alignment. */
int arw_fb_finish(arw_fb *b, arw_fb_ref root, const uint8_t **out, size_t *out_len);

/* Releases the memory; b may be reused after arw_fb_init. Accepts NULL. */
void arw_fb_free(arw_fb *b);
void arw_fb_init(arw_fb *b);

#endif
