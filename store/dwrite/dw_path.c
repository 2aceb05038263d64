/* dw_path.c: where data files go: Delta's partition directories (Hive's path escaping:
 * control characters, DEL and the characters " # % ' * / : = ? \\ { [ ] ^ as %XX; null as
 * __HIVE_DEFAULT_PARTITION__) and file names part-NNNNN-<uuid>.c000.<codec>.parquet
 * (cdc-NNNNN-... for change data files). */
#include "store/dwrite/dw_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static bool must_escape(unsigned char c) {
  return c < 0x20 || c == 0x7F || strchr("\"#%'*/:=?\\{[]^", c) != NULL;
}

void dw__escape_partition(dd_buf *b, const char *value) {
  if (!value || !*value) {
    dd_buf_puts(b, "__HIVE_DEFAULT_PARTITION__");
    return;
  }
  for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
    if (must_escape(*p)) dd_buf_printf(b, "%%%02X", *p);
    else dd_buf_putc(b, (char)*p);
  }
}

int dw__partition_dir(dd_buf *b, const char *const *cols, size_t ncols, const char *values) {
  for (size_t i = 0; i < ncols; i++) {
    const char *v = NULL;
    if (!values || !dl_kv_get(values, cols[i], &v))
      return dd_err_set(DD_EINVAL, "dwrite: no value for partition column '%s'", cols[i]);
    dw__escape_partition(b, cols[i]);
    dd_buf_putc(b, '=');
    dw__escape_partition(b, v);
    dd_buf_putc(b, '/');
  }
  return b->oom ? dd_err_set(DD_ENOMEM, "dwrite: out of memory") : 0;
}

static const char *codec_name(pq_codec c) {
  switch (c) {
    case PQ_CODEC_SNAPPY: return "snappy.";
    case PQ_CODEC_ZSTD: return "zstd.";
    case PQ_CODEC_GZIP: return "gz.";
    default: return "";
  }
}

int dw__file_name(dd_buf *b, const char *prefix, unsigned seq, pq_codec codec) {
  uint8_t r[16];
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = getrandom(r + got, sizeof r - got, 0);
    if (n <= 0) return dd_err_set(DD_EIO, "dwrite: no random bytes for a file name");
    got += (size_t)n;
  }
  r[6] = (uint8_t)((r[6] & 0x0f) | 0x40); /* version 4 */
  r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
  dd_buf_printf(b, "%s-%05u-", prefix, seq % 100000);
  for (int i = 0; i < 16; i++) {
    dd_buf_printf(b, "%02x", r[i]);
    if (i == 3 || i == 5 || i == 7 || i == 9) dd_buf_putc(b, '-');
  }
  dd_buf_printf(b, ".c000.%sparquet", codec_name(codec));
  return b->oom ? dd_err_set(DD_ENOMEM, "dwrite: out of memory") : 0;
}
