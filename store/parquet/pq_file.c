/* pq_file.c: opening a Parquet file (memory buffer or memory-mapped path), locating and
 * parsing the footer, and the read-only accessors over the footer model. */
#include "store/parquet/pq_internal.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The footer length from the last 8 bytes t of a file of n bytes (the trailing magic
 * checked); head is the first 4 bytes when known (else NULL). */
static int footer_len(const uint8_t *head, const uint8_t *t, size_t n, uint32_t *out) {
  if (n < 12) return dd_err_set(DD_ECORRUPT, "parquet: file too small (%zu bytes)", n);
  if ((head && memcmp(head, "PAR1", 4) != 0) || memcmp(t + 4, "PAR1", 4) != 0) {
    if (memcmp(t + 4, "PARE", 4) == 0)
      return dd_err_set(DD_EUNSUPPORTED, "parquet: encrypted footer (PARE) not supported");
    return dd_err_set(DD_ECORRUPT, "parquet: missing PAR1 magic");
  }
  uint32_t flen = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                  (uint32_t)t[3] << 24;
  if (flen > n - 12)
    return dd_err_set(DD_ECORRUPT, "parquet: footer length %u exceeds file size %zu", flen,
                      n);
  *out = flen;
  return 0;
}

static int open_footer(pq_file *f) {
  const uint8_t *b = f->buf;
  size_t n = f->len;
  uint32_t flen = 0;
  int rc = n < 12 ? footer_len(b, b, n, &flen) : footer_len(b, b + n - 8, n, &flen);
  if (!rc) rc = pq__footer_parse(f, b + n - 8 - flen, flen);
  return rc ? rc : pq__schema_build(f);
}

/* What the first read of a reader file takes from its end. */
#define PQ__TAIL_GUESS (64u << 10)

int pq_file_open_reader(pq_file **out, pq_read_fn read, void *ctx, uint64_t size) {
  *out = NULL;
  if (size > SIZE_MAX / 2) return dd_err_set(DD_ECORRUPT, "parquet: file of %llu bytes", (unsigned long long)size);
  size_t n = (size_t)size, take = n < PQ__TAIL_GUESS ? n : PQ__TAIL_GUESS;
  pq_file *f = calloc(1, sizeof *f);
  if (!f) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  f->len = n;
  uint32_t flen = 0;
  int rc = n < 12 ? footer_len(NULL, (const uint8_t *)"", n, &flen) : 0;
  if (!rc && !(f->tail = malloc(take))) rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
  if (!rc) rc = read(ctx, n - take, take, f->tail);
  if (!rc) rc = footer_len(take == n ? f->tail : NULL, f->tail + take - 8, n, &flen);
  if (!rc && (size_t)flen + 8 > take) { /* a longer footer: read it whole */
    uint8_t *t = malloc((size_t)flen + 8);
    if (!t) rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
    else memcpy(t + flen + 8 - take, f->tail, take);
    free(f->tail);
    f->tail = t;
    if (!rc) rc = read(ctx, n - flen - 8, flen + 8 - take, t);
    take = (size_t)flen + 8;
  }
  if (!rc && take == n) f->buf = f->tail; /* the whole file came: read from memory */
  f->read = read;
  f->read_ctx = ctx;
  if (!rc) rc = pq__footer_parse(f, f->tail + take - 8 - flen, flen);
  if (!rc) rc = pq__schema_build(f);
  if (rc) {
    pq_file_free(f);
    return rc;
  }
  *out = f;
  return 0;
}

int pq_file_open_mem(pq_file **out, const uint8_t *buf, size_t len) {
  *out = NULL;
  if (!buf && len) return dd_err_set(DD_EINVAL, "parquet: NULL buffer");
  pq_file *f = calloc(1, sizeof *f);
  if (!f) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  f->buf = buf;
  f->len = len;
  int rc = open_footer(f);
  if (rc) {
    pq_file_free(f);
    return rc;
  }
  *out = f;
  return 0;
}

int pq_file_open_path(pq_file **out, const char *path) {
  int rc = 0;
  void *map = NULL;
  size_t len = 0;
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return dd_err_set(errno == ENOENT ? DD_ENOTFOUND : DD_EIO, "parquet: open %s: %s", path,
                      strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    rc = dd_err_set(DD_EIO, "parquet: stat %s: %s", path, strerror(errno));
    goto cleanup;
  }
  len = (size_t)st.st_size;
  if (len > 0) {
    map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
      map = NULL;
      rc = dd_err_set(DD_EIO, "parquet: mmap %s: %s", path, strerror(errno));
      goto cleanup;
    }
  }
  rc = pq_file_open_mem(out, map, len);
  if (rc) {
    dd_err_wrap(rc, "%s", path);
    goto cleanup;
  }
  (*out)->map = map;
  (*out)->map_len = len;
  map = NULL;
cleanup:
  if (map) munmap(map, len);
  close(fd);
  return rc;
}

void pq_file_free(pq_file *f) {
  if (!f) return;
  if (f->map) munmap(f->map, f->map_len);
  free(f->tail);
  pq__arena_free(&f->arena);
  free(f);
}

int64_t pq_file_num_rows(const pq_file *f) { return f->num_rows; }
const char *pq_file_created_by(const pq_file *f) { return f->created_by; }
size_t pq_file_kv_count(const pq_file *f) { return f->num_kv; }

void pq_file_kv(const pq_file *f, size_t i, const char **key, const char **value) {
  *key = i < f->num_kv ? f->kv_keys[i] : NULL;
  *value = i < f->num_kv ? f->kv_vals[i] : NULL;
}

const pq_field *pq_file_schema(const pq_file *f) { return f->root; }
size_t pq_file_num_columns(const pq_file *f) { return f->num_leaves; }

const pq_field *pq_file_column(const pq_file *f, size_t col) {
  return col < f->num_leaves ? f->leaves[col] : NULL;
}

const pq_field *pq_file_find(const pq_file *f, const char *path) {
  const pq_field *n = f->root;
  while (n && *path) {
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    const pq_field *next = NULL;
    for (uint32_t i = 0; i < n->num_children; i++) {
      const char *nm = n->children[i].name;
      if (strncmp(nm, path, len) == 0 && nm[len] == '\0') {
        next = &n->children[i];
        break;
      }
    }
    n = next;
    path = dot ? dot + 1 : path + len;
  }
  return n;
}

size_t pq_file_num_row_groups(const pq_file *f) { return f->num_rgs; }

int64_t pq_row_group_num_rows(const pq_file *f, size_t rg) {
  return rg < f->num_rgs ? f->rgs[rg].num_rows : 0;
}

int pq_chunk_get(pq_chunk_info *out, const pq_file *f, size_t rg, size_t col) {
  if (rg >= f->num_rgs || col >= f->rgs[rg].num_chunks)
    return dd_err_set(DD_EINVAL, "parquet: no column chunk %zu in row group %zu", col, rg);
  *out = f->rgs[rg].chunks[col].info;
  return 0;
}
