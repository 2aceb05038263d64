/* cat_secret.c: encryption of credential secrets at rest: the 32-byte key file
 * <data_dir>/secret.key (created 0600 on first open, refused when group/other can read it)
 * and AES-256-GCM sealing with a random 12-byte nonce per value and the record id as AAD.
 * A key file given by the caller (cat_store_opts.secret_key_file: replicas on one PostgreSQL
 * share it) is read with the same checks and never created.
 * Sealed value: 0x01 | nonce[12] | ciphertext | tag[16]. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__SEAL_VERSION 0x01
#define CAT__NONCE_LEN 12
#define CAT__TAG_LEN 16
#define CAT__KEY_LEN 32

/* ---- the key file --------------------------------------------------------------------------- */

/* Writes a fresh key to a private temporary file, then links it into place: a crash never
 * leaves a short secret.key behind, and of two processes starting at once the first link
 * wins (*raced is set for the loser, which then reads the winner's key). */
static int cat__key_create(cat_store *s, const char *path, int *raced) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  *raced = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return dd_err_set(DD_EIO, "create %s: %s", tmp, strerror(errno));
  int rc = 0;
  if (RAND_bytes(s->key, CAT__KEY_LEN) != 1) {
    rc = dd_err_set(DD_EINTERNAL, "RAND_bytes failed");
  } else if (fchmod(fd, 0600) != 0 || write(fd, s->key, CAT__KEY_LEN) != CAT__KEY_LEN ||
             fsync(fd) != 0) {
    rc = dd_err_set(DD_EIO, "write %s: %s", tmp, strerror(errno));
  }
  close(fd);
  if (!rc && link(tmp, path) != 0) {
    if (errno == EEXIST) *raced = 1;
    else rc = dd_err_set(DD_EIO, "link %s: %s", path, strerror(errno));
  }
  unlink(tmp);
  return rc;
}

static int cat__key_read(cat_store *s, const char *path, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return dd_err_set(DD_EIO, "stat %s: %s", path, strerror(errno));
  if (st.st_mode & 077)
    return dd_err_set(DD_EPRECOND, "%s is accessible by group or others (mode %04o); "
                      "run chmod 600 on it", path, (unsigned)(st.st_mode & 07777));
  if (st.st_size != CAT__KEY_LEN)
    return dd_err_set(DD_ECORRUPT, "%s: expected %d bytes, found %lld", path, CAT__KEY_LEN,
                      (long long)st.st_size);
  if (read(fd, s->key, CAT__KEY_LEN) != CAT__KEY_LEN)
    return dd_err_set(DD_EIO, "read %s: %s", path, strerror(errno));
  return 0;
}

int cat__secret_key_load(cat_store *s, const char *data_dir, const char *key_file) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s%s", key_file ? key_file : data_dir,
                       key_file ? "" : "/secret.key") >= sizeof path)
    return dd_err_set(DD_EINVAL, "secret key path too long");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && !key_file) {
    int raced = 0, rc = cat__key_create(s, path, &raced);
    if (rc || !raced) return rc;
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return dd_err_set(DD_EIO, "open %s: %s", path, strerror(errno));
  int rc = cat__key_read(s, path, fd);
  close(fd);
  return rc;
}

/* ---- AES-256-GCM ------------------------------------------------------------------------------ */

int cat__seal(const cat_store *s, unsigned char **out, size_t *out_len, const void *plain,
              size_t len, const void *aad, size_t aad_len) {
  size_t total = 1 + CAT__NONCE_LEN + len + CAT__TAG_LEN;
  unsigned char *buf = malloc(total);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  int n = 0, rc = dd_err_set(DD_EINTERNAL, "secret encryption failed");
  if (!buf || !ctx) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  buf[0] = CAT__SEAL_VERSION;
  unsigned char *nonce = buf + 1, *ct = nonce + CAT__NONCE_LEN, *tag = ct + len;
  if (RAND_bytes(nonce, CAT__NONCE_LEN) != 1) goto cleanup;
  if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, s->key, nonce) != 1) goto cleanup;
  if (EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len) != 1) goto cleanup;
  if (EVP_EncryptUpdate(ctx, ct, &n, plain, (int)len) != 1) goto cleanup;
  if (EVP_EncryptFinal_ex(ctx, ct + n, &n) != 1) goto cleanup;
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, CAT__TAG_LEN, tag) != 1) goto cleanup;
  *out = buf;
  *out_len = total;
  buf = NULL;
  rc = 0;
cleanup:
  EVP_CIPHER_CTX_free(ctx);
  free(buf);
  return rc;
}

int cat__open_sealed(const cat_store *s, unsigned char **out, size_t *out_len,
                     const void *sealed, size_t len, const void *aad, size_t aad_len) {
  const unsigned char *in = sealed;
  if (len < 1 + CAT__NONCE_LEN + CAT__TAG_LEN || in[0] != CAT__SEAL_VERSION)
    return dd_err_set(DD_ECORRUPT, "sealed secret: bad header");
  size_t ct_len = len - 1 - CAT__NONCE_LEN - CAT__TAG_LEN;
  const unsigned char *nonce = in + 1, *ct = nonce + CAT__NONCE_LEN, *tag = ct + ct_len;
  unsigned char *buf = malloc(ct_len ? ct_len : 1);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  int n = 0, rc = dd_err_set(DD_ECORRUPT, "sealed secret does not authenticate");
  if (!buf || !ctx) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, s->key, nonce) != 1) goto cleanup;
  if (EVP_DecryptUpdate(ctx, NULL, &n, aad, (int)aad_len) != 1) goto cleanup;
  if (EVP_DecryptUpdate(ctx, buf, &n, ct, (int)ct_len) != 1) goto cleanup;
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, CAT__TAG_LEN, (void *)tag) != 1) goto cleanup;
  if (EVP_DecryptFinal_ex(ctx, buf + n, &n) != 1) goto cleanup;
  *out = buf;
  *out_len = ct_len;
  buf = NULL;
  rc = 0;
cleanup:
  EVP_CIPHER_CTX_free(ctx);
  if (buf) OPENSSL_cleanse(buf, ct_len ? ct_len : 1);
  free(buf);
  return rc;
}
