/* sign_local.c: signed URLs for table files that deltad serves itself. The key is 32
 * random bytes in a 0600 file of the data directory; a URL carries its expiry and an
 * HMAC-SHA256 over (table id, relative path, expiry); the format is in sign_int.h. */
#include "store/sign/sign_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

#define SIGN__LOCAL_SIG_LEN 43 /* base64url of 32 bytes, no padding */

/* ===================== key file ===================== */

/* Reads exactly the key from an open key file after checking its type and mode. */
static int sign__key_read(sign_local_key *out, int fd, const char *path) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return dd_err_set(DD_EIO, "key file '%s': %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return dd_err_set(DD_EPRECOND, "key file '%s' is not a regular file", path);
  if (st.st_mode & 077)
    return dd_err_set(DD_EPRECOND,
                      "key file '%s' is accessible by group or others (mode %03o); "
                      "run chmod 600 on it",
                      path, (unsigned)(st.st_mode & 0777));
  if (st.st_size != SIGN_LOCAL_KEY_LEN)
    return dd_err_set(DD_ECORRUPT, "key file '%s' has %lld bytes, expected %d", path,
                      (long long)st.st_size, SIGN_LOCAL_KEY_LEN);
  size_t got = 0;
  while (got < SIGN_LOCAL_KEY_LEN) {
    ssize_t n = read(fd, out->k + got, SIGN_LOCAL_KEY_LEN - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      OPENSSL_cleanse(out, sizeof *out);
      return dd_err_set(DD_EIO, "reading key file '%s': %s", path,
                        n < 0 ? strerror(errno) : "short file");
    }
    got += (size_t)n;
  }
  return 0;
}

static int sign__key_open_read(sign_local_key *out, const char *path) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return DD_ENOTFOUND;
    if (errno == ELOOP)
      return dd_err_set(DD_EPRECOND, "key file '%s' is a symlink", path);
    return dd_err_set(DD_EIO, "opening key file '%s': %s", path, strerror(errno));
  }
  int rc = sign__key_read(out, fd, path);
  close(fd);
  return rc;
}

static int sign__write_all(int fd, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Creates the key: a fresh 0600 temporary file beside path, fsynced, then link()ed into
 * place so a concurrent creator either wins (EEXIST: we load its key) or loses. */
static int sign__key_create(sign_local_key *out, const char *path) {
  char *tmp = NULL;
  int fd = -1, rc = 0;
  sign_local_key k;
  if (RAND_bytes(k.k, SIGN_LOCAL_KEY_LEN) != 1)
    return dd_err_set(DD_EINTERNAL, "no random bytes from OpenSSL for the URL signing key");
  if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
    tmp = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
  if (fd < 0) {
    rc = dd_err_set(DD_EIO, "creating key file '%s': %s", tmp, strerror(errno));
    free(tmp);
    tmp = NULL;
    goto cleanup;
  }
  if (fchmod(fd, 0600) < 0 || sign__write_all(fd, k.k, SIGN_LOCAL_KEY_LEN) < 0 ||
      fsync(fd) < 0) {
    rc = dd_err_set(DD_EIO, "writing key file '%s': %s", tmp, strerror(errno));
    goto cleanup;
  }
  if (link(tmp, path) < 0) {
    if (errno != EEXIST) {
      rc = dd_err_set(DD_EIO, "installing key file '%s': %s", path, strerror(errno));
      goto cleanup;
    }
    rc = sign__key_open_read(out, path); /* lost the race: use the winner's key */
    if (rc == DD_ENOTFOUND)
      rc = dd_err_set(DD_EIO, "key file '%s' vanished while being created", path);
    goto cleanup;
  }
  *out = k;
cleanup:
  if (fd >= 0)
    close(fd);
  if (tmp) {
    unlink(tmp);
    free(tmp);
  }
  OPENSSL_cleanse(&k, sizeof k);
  return rc;
}

static int sign__key_load(sign_local_key *out, const char *path, bool create) {
  if (!out || !path || !*path)
    return dd_err_set(DD_EINVAL, "no key file path");
  memset(out, 0, sizeof *out);
  int rc = sign__key_open_read(out, path);
  if (rc == DD_ENOTFOUND && create)
    rc = sign__key_create(out, path);
  else if (rc == DD_ENOTFOUND)
    rc = dd_err_set(DD_EPRECOND, "key file %s does not exist (create it with 32 random "
                    "bytes, mode 0600: head -c 32 /dev/urandom > FILE)", path);
  return rc;
}

int sign_local_key_load_or_create(sign_local_key *out, const char *path) {
  return sign__key_load(out, path, true);
}

int sign_local_key_load(sign_local_key *out, const char *path) {
  return sign__key_load(out, path, false);
}

/* ===================== canonical string and signature ===================== */

int sign__local_canonical(char **out, const char *table_id, const char *rel_path,
                          int64_t expires_ms) {
  sign__buf b = SIGN__BUF_INIT;
  size_t tl = strlen(table_id), rl = strlen(rel_path);
  /* built by hand, not printf, in one allocation: this runs once per file of every query */
  (void)sign__buf_reserve(&b, 16 + 3 * 21 + tl + rl + 4); /* a failure shows at finish */
  sign__buf_puts(&b, "deltad-local-v1\n");
  sign__buf_i64(&b, (int64_t)tl);
  sign__buf_puts(&b, ":");
  sign__buf_put(&b, table_id, tl);
  sign__buf_puts(&b, "\n");
  sign__buf_i64(&b, (int64_t)rl);
  sign__buf_puts(&b, ":");
  sign__buf_put(&b, rel_path, rl);
  sign__buf_puts(&b, "\n");
  sign__buf_i64(&b, expires_ms);
  return sign__buf_finish(&b, out);
}

/* sig (44 bytes with the NUL) for the triple; rel_path already normalised. */
static int sign__local_sig(char sig[SIGN__LOCAL_SIG_LEN + 2], const sign_local_key *key,
                           const char *table_id, const char *rel_path, int64_t expires_ms) {
  char *canon = NULL;
  uint8_t mac[SIGN__SHA256_LEN];
  int rc = sign__local_canonical(&canon, table_id, rel_path, expires_ms);
  if (rc < 0)
    return rc;
  rc = sign__hmac_sha256(mac, key->k, SIGN_LOCAL_KEY_LEN, canon, strlen(canon));
  free(canon);
  if (rc < 0)
    return rc;
  sign__b64(sig, mac, sizeof mac, 1);
  return 0;
}

static int sign__table_id_ok(const char *table_id) {
  return table_id && *table_id && !strchr(table_id, '/');
}

int sign_local_url(char **out, const sign_local_key *key, const char *base_url,
                   const char *table_id, const char *rel_path, int64_t expires_at_ms) {
  char *norm = NULL;
  char sig[SIGN__LOCAL_SIG_LEN + 2];
  sign__buf b = SIGN__BUF_INIT;
  *out = NULL;
  if (!key || !base_url || !*base_url)
    return dd_err_set(DD_EINVAL, "local URL needs a key and a base URL");
  if (!sign__table_id_ok(table_id))
    return dd_err_set(DD_EINVAL, "bad table id '%s'", table_id ? table_id : "");
  if (expires_at_ms < 0)
    return dd_err_set(DD_EINVAL, "negative expiry");
  int rc = sign__rel_normalize(&norm, rel_path);
  if (rc < 0)
    return rc;
  rc = sign__local_sig(sig, key, table_id, norm, expires_at_ms);
  if (rc < 0)
    goto cleanup;
  size_t base_len = strlen(base_url);
  while (base_len > 0 && base_url[base_len - 1] == '/')
    base_len--;
  /* one allocation: the escapes' worst case, the query and the signature */
  (void)sign__buf_reserve(&b, base_len + 8 + 3 * (strlen(table_id) + strlen(norm)) + 30 + sizeof sig);
  sign__buf_put(&b, base_url, base_len);
  sign__buf_puts(&b, "/files/");
  sign__buf_pct(&b, table_id, 0);
  sign__buf_puts(&b, "/");
  sign__buf_pct(&b, norm, 1);
  sign__buf_puts(&b, "?expires=");
  sign__buf_i64(&b, expires_at_ms);
  sign__buf_puts(&b, "&sig=");
  sign__buf_puts(&b, sig);
  rc = sign__buf_finish(&b, out);
cleanup:
  free(norm);
  return rc;
}

int sign_local_split_path(char **out_table_id, char **out_rel_path, const char *path) {
  char *tid_enc = NULL;
  *out_table_id = *out_rel_path = NULL;
  const char *slash = path ? strchr(path, '/') : NULL;
  if (!slash || slash == path || slash[1] == '\0')
    return dd_err_set(DD_EINVAL, "local file URL path must be <table id>/<file path>");
  tid_enc = strndup(path, (size_t)(slash - path));
  if (!tid_enc)
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = sign_pct_decode(out_table_id, tid_enc);
  if (rc == 0)
    rc = sign_pct_decode(out_rel_path, slash + 1);
  free(tid_enc);
  if (rc < 0) {
    free(*out_table_id);
    *out_table_id = NULL;
  }
  return rc;
}

/* Canonical decimal only: digits, no sign, no leading zero, fits int64. */
static int sign__parse_ms(int64_t *out, const char *s) {
  if (!s || !*s || strlen(s) > 19 || (s[0] == '0' && s[1]))
    return -1;
  int64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    if (v > (INT64_MAX - (*p - '0')) / 10)
      return -1;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return 0;
}

int sign_local_verify(const sign_local_key *key, const char *table_id, const char *rel_path,
                      const char *expires, const char *sig, int64_t now_ms) {
  char *norm = NULL;
  char want[SIGN__LOCAL_SIG_LEN + 2];
  int64_t exp_ms = 0;
  if (!key)
    return dd_err_set(DD_EINVAL, "no key");
  if (!sign__table_id_ok(table_id) || sign__parse_ms(&exp_ms, expires) < 0 || !sig ||
      strlen(sig) != SIGN__LOCAL_SIG_LEN)
    return dd_err_set(DD_EPERM, "bad signature");
  int rc = sign__rel_normalize(&norm, rel_path);
  if (rc == DD_EPERM) /* a path that could never have been signed */
    return dd_err_set(DD_EPERM, "bad signature");
  if (rc < 0)
    return rc;
  rc = sign__local_sig(want, key, table_id, norm, exp_ms);
  free(norm);
  if (rc < 0)
    return rc;
  if (CRYPTO_memcmp(want, sig, SIGN__LOCAL_SIG_LEN) != 0)
    return dd_err_set(DD_EPERM, "bad signature");
  if (now_ms >= exp_ms)
    return dd_err_set(DD_EPERM, "URL expired");
  return 0;
}
