/* dl_dv.c: deletion vectors. Descriptors name a serialized row set stored inline (Z85 text
 * in the log, storageType 'i') or in a file ('u': <prefix><20-char Z85 UUID> names
 * <prefix>/deletion_vector_<uuid>.bin under the table; 'p': an absolute path). A file holds
 * a version byte, then per vector: 4-byte big-endian size, the data, a big-endian CRC-32 of
 * the data; the descriptor's offset points at the size field.
 *
 * The data is the magic 1681511377 (little-endian) followed by a 64-bit RoaringBitmap in
 * the "portable" format: an 8-byte bucket count, then per bucket a 4-byte high key and a
 * standard 32-bit Roaring bitmap (cookie, container keys and cardinalities, optional run
 * flags and offsets, then array / bitmap / run containers). We decode it into a sorted
 * array of row indexes; the decoder bounds every read and caps the expansion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

#define DV_MAGIC 1681511377u
#define DV_MAX_ROWS (1u << 24) /* decoded rows cap (fuzzing safety; 128 MiB) */

/* ======================= Z85 ======================= */

static const char Z85[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

static int z85_val(char c) {
  const char *p = c ? strchr(Z85, c) : NULL;
  return p ? (int)(p - Z85) : -1;
}

int dl_z85_decode(uint8_t **out, size_t *out_len, const char *s, size_t len) {
  *out = NULL;
  *out_len = 0;
  if (len % 5) return dd_err_set(DD_ECORRUPT, "Z85 text length %zu is not a multiple of 5", len);
  uint8_t *b = malloc(len / 5 * 4 + 1);
  if (!b) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < len; i += 5) {
    uint64_t v = 0;
    for (int k = 0; k < 5; k++) {
      int d = z85_val(s[i + k]);
      if (d < 0) {
        free(b);
        return dd_err_set(DD_ECORRUPT, "invalid Z85 character at %zu", i + k);
      }
      v = v * 85 + (uint64_t)d;
    }
    if (v > 0xFFFFFFFFu) {
      free(b);
      return dd_err_set(DD_ECORRUPT, "Z85 group at %zu overflows", i);
    }
    uint8_t *w = b + i / 5 * 4;
    w[0] = (uint8_t)(v >> 24);
    w[1] = (uint8_t)(v >> 16);
    w[2] = (uint8_t)(v >> 8);
    w[3] = (uint8_t)v;
  }
  *out = b;
  *out_len = len / 5 * 4;
  return 0;
}

/* ======================= roaring ======================= */

typedef struct rd {
  const uint8_t *p;
  size_t len, pos;
} rd;

static bool need(rd *r, size_t n) { return r->len - r->pos >= n; }
static uint16_t u16le(rd *r) {
  uint16_t v = (uint16_t)(r->p[r->pos] | r->p[r->pos + 1] << 8);
  r->pos += 2;
  return v;
}
static uint32_t u32le(rd *r) {
  uint32_t v = (uint32_t)r->p[r->pos] | (uint32_t)r->p[r->pos + 1] << 8 |
               (uint32_t)r->p[r->pos + 2] << 16 | (uint32_t)r->p[r->pos + 3] << 24;
  r->pos += 4;
  return v;
}

typedef struct rows {
  uint64_t *v;
  size_t n, cap;
  bool have_last;
  uint64_t last;
} rows;

static int push(rows *o, uint64_t x) {
  if (o->have_last && x <= o->last) return dd_err_set(DD_ECORRUPT, "deletion vector is not sorted");
  if (o->n == o->cap) {
    if (o->n >= DV_MAX_ROWS) return dd_err_set(DD_ECORRUPT, "deletion vector exceeds %u rows", DV_MAX_ROWS);
    size_t cap = o->cap ? o->cap * 2 : 64;
    uint64_t *n = realloc(o->v, cap * sizeof *n);
    if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
    o->v = n;
    o->cap = cap;
  }
  o->v[o->n++] = x;
  o->last = x;
  o->have_last = true;
  return 0;
}

static int corrupt(const char *what) { return dd_err_set(DD_ECORRUPT, "deletion vector: %s", what); }

static int read_container(rd *r, rows *o, uint64_t base, bool run, uint32_t card) {
  int rc = 0;
  if (run) {
    if (!need(r, 2)) return corrupt("truncated run container");
    uint16_t nruns = u16le(r);
    if (!need(r, (size_t)nruns * 4)) return corrupt("truncated run container");
    for (uint16_t i = 0; i < nruns && !rc; i++) {
      uint32_t start = u16le(r), len = u16le(r);
      if (start + len > 0xFFFF) return corrupt("run exceeds its container");
      for (uint32_t x = start; x <= start + len && !rc; x++) rc = push(o, base | x);
    }
  } else if (card > 4096) {
    if (!need(r, 8192)) return corrupt("truncated bitmap container");
    for (uint32_t w = 0; w < 1024 && !rc; w++) {
      uint64_t word = 0;
      for (int k = 0; k < 8; k++) word |= (uint64_t)r->p[r->pos + w * 8 + k] << (8 * k);
      while (word && !rc) {
        int bit = __builtin_ctzll(word);
        rc = push(o, base | (w * 64 + (uint32_t)bit));
        word &= word - 1;
      }
    }
    r->pos += 8192;
  } else {
    if (!need(r, (size_t)card * 2)) return corrupt("truncated array container");
    for (uint32_t i = 0; i < card && !rc; i++) rc = push(o, base | u16le(r));
  }
  return rc;
}

static int read_bitmap32(rd *r, rows *o, uint64_t high) {
  if (!need(r, 4)) return corrupt("truncated 32-bit bitmap");
  uint32_t cookie = u32le(r), n;
  const uint8_t *runflags = NULL;
  bool has_runs = (cookie & 0xFFFF) == 12347;
  if (has_runs) {
    n = (cookie >> 16) + 1;
    if (!need(r, (n + 7) / 8)) return corrupt("truncated run flags");
    runflags = r->p + r->pos;
    r->pos += (n + 7) / 8;
  } else if (cookie == 12346) {
    if (!need(r, 4)) return corrupt("truncated container count");
    n = u32le(r);
    if (n > 65536) return corrupt("too many containers");
  } else {
    return corrupt("bad 32-bit bitmap cookie");
  }
  if (!need(r, (size_t)n * 4)) return corrupt("truncated container header");
  size_t hdr = r->pos;
  r->pos += (size_t)n * 4;
  if (!has_runs || n >= 4) {
    if (!need(r, (size_t)n * 4)) return corrupt("truncated offsets");
    r->pos += (size_t)n * 4;
  }
  int rc = 0;
  for (uint32_t i = 0; i < n && !rc; i++) {
    rd h = {r->p, r->len, hdr + (size_t)i * 4};
    uint16_t key = u16le(&h);
    uint32_t card = (uint32_t)u16le(&h) + 1;
    bool run = runflags && (runflags[i / 8] >> (i % 8) & 1);
    rc = read_container(r, o, high << 32 | (uint64_t)key << 16, run, card);
  }
  return rc;
}

static uint32_t u32be(rd *r) {
  uint32_t v = (uint32_t)r->p[r->pos] << 24 | (uint32_t)r->p[r->pos + 1] << 16 |
               (uint32_t)r->p[r->pos + 2] << 8 | (uint32_t)r->p[r->pos + 3];
  r->pos += 4;
  return v;
}

/* The older "native" RoaringBitmapArray layout (magic 1681511376, big-endian header):
 * bitmap count, then per bitmap its byte size and a 32-bit bitmap whose high key is its
 * index. PROTOCOL.md's inline example uses it, so we accept it too. */
static int decode_native(rd *r, rows *o) {
  if (!need(r, 4)) return corrupt("truncated bitmap count");
  uint32_t nb = u32be(r);
  if (nb > r->len) return corrupt("bitmap count exceeds data");
  int rc = 0;
  for (uint32_t b = 0; b < nb && !rc; b++) {
    if (!need(r, 4)) return corrupt("truncated bitmap size");
    uint32_t size = u32be(r);
    if (!need(r, size)) return corrupt("truncated bitmap");
    rd sub = {r->p, r->pos + size, r->pos};
    rc = read_bitmap32(&sub, o, b);
    r->pos += size;
  }
  return rc;
}

static int decode_portable(rd *r, rows *o) {
  if (!need(r, 8)) return corrupt("too short");
  uint64_t nb = u32le(r);
  nb |= (uint64_t)u32le(r) << 32;
  if (nb > r->len) return corrupt("bucket count exceeds data");
  int rc = 0;
  int64_t prev_key = -1;
  for (uint64_t b = 0; b < nb && !rc; b++) {
    if (!need(r, 4)) return corrupt("truncated bucket key");
    uint32_t key = u32le(r);
    if ((int64_t)key <= prev_key || key & 0x80000000u) return corrupt("bad bucket key order");
    prev_key = key;
    rc = read_bitmap32(r, o, key);
  }
  return rc;
}

int dl_dv_decode(dl_rowset *out, const uint8_t *data, size_t len) {
  out->rows = NULL;
  out->count = 0;
  rd r = {data, len, 0};
  if (!need(&r, 4)) return corrupt("too short");
  uint32_t le = u32le(&r);
  rows o = {0};
  int rc;
  if (le == DV_MAGIC) rc = decode_portable(&r, &o);
  else if (le == 0xD0D33964u) rc = decode_native(&r, &o); /* 1681511376 big-endian */
  else rc = corrupt("bad magic number");
  if (rc) {
    free(o.v);
    return rc;
  }
  out->rows = o.v;
  out->count = o.n;
  return 0;
}

void dl_rowset_free(dl_rowset *r) {
  if (!r) return;
  free(r->rows);
  r->rows = NULL;
  r->count = 0;
}

bool dl_rowset_contains(const dl_rowset *r, uint64_t row) {
  size_t lo = 0, hi = r->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r->rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo < r->count && r->rows[lo] == row;
}

/* ======================= descriptors ======================= */

int dl_dv_unique_id(char **out, const dl_dv *dv) {
  int n = dv->offset >= 0 ? asprintf(out, "%c%s@%lld", dv->storage_type, dv->path_or_inline,
                                     (long long)dv->offset)
                          : asprintf(out, "%c%s", dv->storage_type, dv->path_or_inline);
  if (n < 0) {
    *out = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

int dl_dv_path(char **out, const dl_dv *dv) {
  *out = NULL;
  if (dv->storage_type == 'p') {
    char *p = malloc(strlen(dv->path_or_inline) + 1);
    if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
    dl__url_decode(dv->path_or_inline, p);
    *out = p;
    return 0;
  }
  if (dv->storage_type != 'u') return dd_err_set(DD_EINVAL, "an inline deletion vector has no path");
  size_t n = strlen(dv->path_or_inline);
  if (n < 20) return dd_err_set(DD_ECORRUPT, "deletion vector path '%s' is too short", dv->path_or_inline);
  uint8_t *u = NULL;
  size_t ul = 0;
  int rc = dl_z85_decode(&u, &ul, dv->path_or_inline + n - 20, 20);
  if (rc) return dd_err_wrap(rc, "deletion vector UUID");
  int prefix = (int)(n - 20);
  int w = asprintf(out,
                   "%.*s%sdeletion_vector_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                   "%02x%02x%02x%02x%02x%02x.bin",
                   prefix, dv->path_or_inline, prefix ? "/" : "", u[0], u[1], u[2], u[3], u[4],
                   u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  free(u);
  if (w < 0) {
    *out = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int load_file_dv(dl_rowset *out, dl_table *t, const dl_dv *dv) {
  char *path = NULL;
  uint8_t *buf = NULL;
  int rc = dl_dv_path(&path, dv);
  if (rc) return rc;
  const char *p = path;
  if (!strncmp(p, "file://", 7)) p += 7;
  else if (!strncmp(p, "file:", 5)) p += 5;
  if (p[0] != '/' && !dl_rel_path_clean(p, strlen(p))) { /* absolute ('p'): the protocol allows it */
    rc = dd_err_set(DD_ECORRUPT, "deletion vector path '%s' escapes the table", path);
    goto cleanup;
  }
  if (dv->size_in_bytes < 0) {
    rc = dd_err_set(DD_ECORRUPT, "deletion vector has a negative size");
    goto cleanup;
  }
  size_t n = (size_t)dv->size_in_bytes;
  uint64_t off = dv->offset >= 0 ? (uint64_t)dv->offset : 1;
  if (!(buf = malloc(n + 8))) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((rc = os_read_range(t->store, path, off, n + 8, buf))) goto cleanup;
  if (be32(buf) != n) {
    rc = dd_err_set(DD_ECORRUPT, "deletion vector %s@%llu: stored size %u, descriptor says %zu",
                    path, (unsigned long long)off, be32(buf), n);
    goto cleanup;
  }
  uint32_t want = be32(buf + 4 + n);
  uint32_t got = (uint32_t)crc32(0L, buf + 4, (uInt)n);
  if (want != got) {
    rc = dd_err_set(DD_ECORRUPT, "deletion vector %s@%llu: checksum mismatch", path,
                    (unsigned long long)off);
    goto cleanup;
  }
  rc = dl_dv_decode(out, buf + 4, n);
cleanup:
  free(buf);
  free(path);
  return rc;
}

int dl_dv_load(dl_rowset *out, dl_table *t, const dl_dv *dv) {
  out->rows = NULL;
  out->count = 0;
  int rc;
  if (dv->storage_type == 'i') {
    uint8_t *raw = NULL;
    size_t len = 0;
    rc = dl_z85_decode(&raw, &len, dv->path_or_inline, strlen(dv->path_or_inline));
    if (!rc && (dv->size_in_bytes < 0 || (size_t)dv->size_in_bytes > len))
      rc = dd_err_set(DD_ECORRUPT, "inline deletion vector shorter than its sizeInBytes");
    if (!rc) rc = dl_dv_decode(out, raw, (size_t)dv->size_in_bytes);
    free(raw);
  } else {
    rc = load_file_dv(out, t, dv);
  }
  if (!rc && dv->cardinality >= 0 && (uint64_t)dv->cardinality != out->count) {
    rc = dd_err_set(DD_ECORRUPT, "deletion vector holds %zu rows but its cardinality is %lld",
                    out->count, (long long)dv->cardinality);
    dl_rowset_free(out);
  }
  return rc;
}
