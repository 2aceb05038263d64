/* req_guard.c: the process-wide limits and the protobuf pre-check of req_guard.h.
 *
 * The walk reads the wire format (tag, then a varint, 8 bytes, a length-delimited run or 4
 * bytes) with an explicit stack of nested message frames, so its own stack does not grow
 * with the input. Field numbers are looked up in the frame's descriptor: a length-delimited
 * field of message type is descended (a new frame ending where its bytes end), a string is
 * checked as UTF-8 without NUL, anything else is skipped. The memory estimate follows what
 * protobuf_c_message_unpack allocates: the message struct per (sub)message, one array slot
 * per repeated item, a copy of each string, bytes field and unknown field, each rounded up
 * as malloc does. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/call/req_guard.h"

static rg_limits rg__limits = RG_LIMITS_INIT; /* written by rg_configure before serving */

int rg_configure(const rg_limits *l) {
  if (l->max_depth == 0 || l->max_depth > RG_MAX_DEPTH_LIMIT)
    return dd_err_set(DD_EINVAL, "max-request-depth: expected 1 to %d, got %u", RG_MAX_DEPTH_LIMIT,
                      l->max_depth);
  rg__limits = *l;
  return 0;
}

const rg_limits *rg_limits_get(void) { return &rg__limits; }

/* ---- wire reading ---- */

/* Bytes malloc hands out for n bytes (16-byte header and granule), 0 for 0. */
static size_t rg__alloc(size_t n) { return n ? ((n + 15) & ~(size_t)15) + 16 : 0; }

/* Reads a varint at *p (< end); 0, or -1 when truncated or longer than 10 bytes. */
static int rg__varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned i = 0; i < 10 && *p < end; i++) {
    uint8_t b = *(*p)++;
    v |= (uint64_t)(b & 0x7F) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

/* Whether s[0..n) is UTF-8 (shortest forms, no surrogates) with no NUL. */
static bool rg__utf8_ok(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint8_t c = s[i];
    if (c < 0x80) {
      if (c == 0) return false;
      i++;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || len > n - i) return false;
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

/* Size of one item of a repeated scalar field in the unpacked array. */
static size_t rg__item_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
    return 8;
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  default: return 4;
  }
}

/* Items in a packed run of n bytes of type t. */
static size_t rg__packed_items(ProtobufCType t, const uint8_t *p, size_t n) {
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
    return n / 4;
  case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
    return n / 8;
  default: {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += !(p[i] & 0x80);
    return k;
  }
  }
}

/* ---- the walk ---- */

typedef struct rg__frame {
  const ProtobufCMessageDescriptor *d;
  const uint8_t *end;
} rg__frame;

typedef struct rg__walk {
  rg__frame *st;
  unsigned top; /* st[top] is the message being read; depth is top + 1 */
  size_t elements, memory, len;
  const rg_limits *lim;
} rg__walk;

static int rg__malformed(const rg__walk *w) {
  return dd_err_set(DD_EINVAL, "malformed request: %zu bytes are not a valid %s", w->len,
                    w->st[0].d->name);
}

/* A length-delimited field of n bytes at p; *descend is set when it is a message to enter. */
static int rg__delimited(rg__walk *w, const ProtobufCFieldDescriptor *f, const uint8_t *p, size_t n,
                         bool *descend) {
  *descend = false;
  size_t slot = f && f->label == PROTOBUF_C_LABEL_REPEATED ? rg__item_size(f->type) : 0;
  if (!f) {
    w->memory += rg__alloc(n) + sizeof(ProtobufCMessageUnknownField);
    return 0;
  }
  switch (f->type) {
  case PROTOBUF_C_TYPE_MESSAGE:
    if (w->top + 1 >= w->lim->max_depth)
      return dd_err_set(DD_EINVAL, "request nested too deeply: %s.%s goes past %u levels of messages",
                        w->st[w->top].d->name, f->name, w->lim->max_depth);
    w->memory += slot + rg__alloc(((const ProtobufCMessageDescriptor *)f->descriptor)->sizeof_message);
    *descend = true;
    return 0;
  case PROTOBUF_C_TYPE_STRING:
    if (!rg__utf8_ok(p, n))
      return dd_err_set(DD_EINVAL, "%s.%s: a string must be UTF-8 without NUL characters",
                        w->st[w->top].d->name, f->name);
    w->memory += slot + rg__alloc(n + 1);
    return 0;
  case PROTOBUF_C_TYPE_BYTES:
    w->memory += slot + rg__alloc(n);
    return 0;
  default: { /* a packed repeated scalar */
    size_t k = rg__packed_items(f->type, p, n);
    w->elements += k;
    w->memory += k * rg__item_size(f->type);
    return 0;
  }
  }
}

/* Reads one field of the current frame at *p. */
static int rg__field(rg__walk *w, const uint8_t **p) {
  const uint8_t *end = w->st[w->top].end;
  uint64_t tag = 0, n = 0;
  if (rg__varint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return rg__malformed(w);
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field(w->st[w->top].d, (unsigned)(tag >> 3));
  size_t slot = f && f->label == PROTOBUF_C_LABEL_REPEATED ? rg__item_size(f->type) : 0;
  w->elements++;
  switch (tag & 7) {
  case 0:
    if (rg__varint(p, end, &n)) return rg__malformed(w);
    break;
  case 1:
  case 5: {
    size_t k = (tag & 7) == 1 ? 8 : 4;
    if ((size_t)(end - *p) < k) return rg__malformed(w);
    *p += k;
    break;
  }
  case 2: {
    bool descend = false;
    if (rg__varint(p, end, &n) || n > (uint64_t)(end - *p)) return rg__malformed(w);
    int rc = rg__delimited(w, f, *p, (size_t)n, &descend);
    if (rc) return rc;
    if (descend) {
      w->top++;
      w->st[w->top] = (rg__frame){f->descriptor, *p + n};
    } else {
      *p += n;
    }
    slot = 0; /* counted by rg__delimited */
    break;
  }
  default: /* groups (3, 4) do not exist in proto3; 6 and 7 are not wire types */
    return rg__malformed(w);
  }
  if (!f && (tag & 7) != 2) w->memory += sizeof(ProtobufCMessageUnknownField) + rg__alloc(8);
  w->memory += slot;
  return 0;
}

int rg_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len) {
  const rg_limits *lim = rg_limits_get();
  if (!buf) buf = (const uint8_t *)""; /* an empty bytes field (an Any with no value) */
  if (!len) return 0;
  rg__walk w = {.lim = lim, .memory = rg__alloc(d->sizeof_message), .len = len};
  rg__frame small[RG_DEFAULT_MAX_DEPTH]; /* the default depth's frames: no allocation per request */
  w.st = lim->max_depth <= sizeof small / sizeof small[0] ? small : malloc(lim->max_depth * sizeof *w.st);
  if (!w.st) return dd_err_set(DD_ENOMEM, "out of memory");
  w.st[0] = (rg__frame){d, buf + len};
  const uint8_t *p = buf;
  int rc = 0;
  while (!rc) {
    if (p == w.st[w.top].end) {
      if (w.top == 0) break;
      w.top--;
      continue;
    }
    if ((rc = rg__field(&w, &p))) break;
    if (w.elements > lim->max_elements)
      rc = dd_err_set(DD_EINVAL, "request too large: more than %zu fields and list items in one %s",
                      lim->max_elements, d->name);
    else if (w.memory > lim->max_memory)
      rc = dd_err_set(DD_ENOMEM, "request too large: decoding this %s would take more than %zu bytes",
                      d->name, lim->max_memory);
  }
  if (w.st != small) free(w.st);
  return rc;
}

int rg_pb_unpack(ProtobufCMessage **out, const ProtobufCMessageDescriptor *d, const uint8_t *buf,
                 size_t len) {
  *out = NULL;
  int rc = rg_pb_check(d, buf, len);
  if (rc) return rc;
  *out = protobuf_c_message_unpack(d, NULL, len, buf ? buf : (const uint8_t *)"");
  if (!*out) return dd_err_set(DD_EINVAL, "malformed request: %zu bytes are not a valid %s", len, d->name);
  return 0;
}
