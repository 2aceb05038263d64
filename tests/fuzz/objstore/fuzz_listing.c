/* fuzz_listing.c: the bodies and headers an object store answers, which deltad parses
 * without trusting the store: S3 ListObjectsV2 and Azure List Blobs pages (XML, entities and
 * character references), GCS objects.list pages and object metadata (JSON), a GCP service
 * account's key, their RFC 3339 and RFC 1123 dates. The first byte picks the parser
 * (low 3 bits) and the listed prefix (next 2 bits). Checks: every listed name is non-empty,
 * has no '/', and a date is -1 or a time after 1970. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/objstore/os.h"
#include "store/objstore/os_gcs.h"
#include "store/objstore/os_http.h"

static void check_list(os_list *l) {
  for (size_t i = 0; i < l->count; i++) {
    const os_entry *e = &l->entries[i];
    if (!e->name[0] || strchr(e->name, '/') || e->mtime_ms < -1) abort();
  }
  os_list_sort(l);
  os_list_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *prefixes[] = {"", "t/_delta_log/", "a b/&/", "x/"};
  if (size < 1 || size > 1 << 20) return 0;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  const char *pfx = prefixes[(data[0] >> 3) & 3];
  char next[1024], out[64];
  os_list l = {0};
  size_t cap = 0;
  switch (data[0] & 7) {
    case 0:
      os__s3_list_page(&l, &cap, text, pfx, next, sizeof next);
      check_list(&l);
      break;
    case 1:
      os__gcs_list_page(&l, &cap, text, pfx, next, sizeof next);
      if (strnlen(next, sizeof next) == sizeof next) abort();
      check_list(&l);
      break;
    case 2:
      os__azure_list_page(&l, &cap, text, pfx, next, sizeof next);
      check_list(&l);
      break;
    case 3: {
      int64_t sz = 0, mt = 0;
      if (os__gcs_object_meta(text, &sz, &mt) == 0 && mt < -1) abort();
      os__gcs_key k;
      if (os__gcs_key_parse(&k, text) == 0 && (!k.client_email || !k.private_key || !k.token_uri)) abort();
      os__gcs_key_free(&k);
      break;
    }
    case 4:
      if (os__iso8601_ms(text) < -1) abort();
      break;
    case 5:
      if (os__http_date_ms(text) < -1) abort();
      break;
    default: {
      size_t cap_out = (size_t)data[0] % sizeof out + 1;
      const char *end = os__xml_text(text, "Key", out, cap_out);
      if (end && strnlen(out, cap_out) == cap_out) abort(); /* not NUL-terminated */
      break;
    }
  }
  dd_err_clear();
  free(text);
  return 0;
}
