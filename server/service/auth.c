/* auth.c: bearer tokens (auth.h). Only SHA-256 hashes of tokens are stored; a presented
 * token is hashed and looked up by its hash, the stored copy of the hash is compared with
 * CRYPTO_memcmp (by the store), and the expiry is checked. Also the call's read view that
 * the token check and the handler share (dd_auth_view_ops). */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "common/err.h"
#include "server/service/app.h"
#include "server/service/auth.h"

#define AUTH_ENV "DELTAD_ADMIN_TOKEN"

int dd_auth_random_token(char out[DD_AUTH_TOKEN_CHARS + 1]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char b[DD_AUTH_TOKEN_CHARS / 2];
  if (RAND_bytes(b, sizeof b) != 1) return dd_err_set(DD_EINTERNAL, "RAND_bytes failed");
  for (size_t i = 0; i < sizeof b; i++) {
    out[2 * i] = hex[b[i] >> 4];
    out[2 * i + 1] = hex[b[i] & 15];
  }
  out[DD_AUTH_TOKEN_CHARS] = '\0';
  OPENSSL_cleanse(b, sizeof b);
  return 0;
}

/* ---- the admin token file ---------------------------------------------------------------- */

/* Writes token + "\n" to path atomically (temp file, fsync, rename), mode 0600. */
static int auth_write_file(const char *path, const char *token) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return dd_err_set(DD_EIO, "create %s: %s", tmp, strerror(errno));
  size_t n = strlen(token);
  int rc = 0;
  if (fchmod(fd, 0600) != 0 || write(fd, token, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
      fsync(fd) != 0)
    rc = dd_err_set(DD_EIO, "write %s: %s", tmp, strerror(errno));
  close(fd);
  if (!rc && rename(tmp, path) != 0) rc = dd_err_set(DD_EIO, "rename to %s: %s", path, strerror(errno));
  if (rc) unlink(tmp);
  return rc;
}

static int auth_store_admin(cat_store *store, const char *token, size_t len) {
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec = {.kind = CAT_TOKEN_ADMIN, .name = "admin", .id = "", .expiry_ms = 0};
  int rc = cat_token_hash(hash, token, len);
  return rc ? rc : cat_token_put(store, hash, &rec);
}

int dd_auth_bootstrap(cat_store *store, const char *data_dir, char **out_path,
                      int *out_from_env) {
  char token[DD_AUTH_TOKEN_CHARS + 1], path[4096];
  int have = 0;
  if (out_path) *out_path = NULL;
  if (out_from_env) *out_from_env = 0;
  int rc = cat_token_has_kind(store, &have, CAT_TOKEN_ADMIN);
  if (rc || have) return rc;
  const char *env = getenv(AUTH_ENV);
  if (env && *env) {
    rc = auth_store_admin(store, env, strlen(env));
    if (!rc && out_from_env) *out_from_env = 1;
    return rc;
  }
  if ((size_t)snprintf(path, sizeof path, "%s/admin.token", data_dir) >= sizeof path)
    return dd_err_set(DD_EINVAL, "data directory path too long");
  /* The file first: a crash before the hash is stored only means a new token next time. */
  rc = dd_auth_random_token(token);
  if (!rc) rc = auth_write_file(path, token);
  if (!rc) rc = auth_store_admin(store, token, DD_AUTH_TOKEN_CHARS);
  OPENSSL_cleanse(token, sizeof token);
  if (!rc && out_path && !(*out_path = strdup(path))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  return rc;
}

/* ---- checking a token ------------------------------------------------------------------------ */

static int64_t auth_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* src into dst[size], cut to fit and NUL-terminated (snprintf's "%s" without its cost). */
static void auth_copy(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

int dd_auth_check(cat_store *store, const char *token, size_t len, dd_principal *out) {
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec;
  memset(out, 0, sizeof *out);
  if (!token || len == 0) return dd_err_set(DD_EUNAUTH, "invalid or expired token");
  int rc = cat_token_hash(hash, token, len);
  if (!rc) rc = cat_token_lookup(store, &rec, hash);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_EUNAUTH, "invalid or expired token");
  if (rc) return rc;
  if (rec.expiry_ms != 0 && auth_now_ms() >= rec.expiry_ms)
    return dd_err_set(DD_EUNAUTH, "invalid or expired token");
  out->kind = rec.kind == CAT_TOKEN_ADMIN ? DD_PRINCIPAL_ADMIN : DD_PRINCIPAL_RECIPIENT;
  auth_copy(out->name, sizeof out->name, rec.name);
  auth_copy(out->id, sizeof out->id, rec.id);
  return 0;
}

/* ---- the call's read view ----------------------------------------------------------------- */

typedef struct auth_view {
  atomic_int refs;
  cat_view *v;
} auth_view;

static int auth_view_open(void *app, void **out) {
  *out = NULL;
  auth_view *av = malloc(sizeof *av);
  if (!av) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&av->refs, 1);
  int rc = cat_view_open(dd_app_store(app), &av->v);
  if (rc) {
    free(av);
    return rc;
  }
  cat_view_bind(av->v);
  *out = av;
  return 0;
}

static void auth_view_bind(void *view) { cat_view_bind(view ? ((auth_view *)view)->v : NULL); }
static void auth_view_done(void *view) { cat_view_end(((auth_view *)view)->v); }
static void auth_view_ref(void *view) { atomic_fetch_add(&((auth_view *)view)->refs, 1); }

static void auth_view_unref(void *view) {
  auth_view *av = view;
  if (atomic_fetch_sub(&av->refs, 1) != 1) return;
  cat_view_close(av->v);
  free(av);
}

const dd_call_view_ops dd_auth_view_ops = {
    .open = auth_view_open,
    .bind = auth_view_bind,
    .done = auth_view_done,
    .ref = auth_view_ref,
    .unref = auth_view_unref,
};
