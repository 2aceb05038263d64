/* deltad_tls.c: reads deltad's TLS files and checks them with OpenSSL (the chain parses,
 * the key is the certificate's, the client CA holds a certificate), so a bad file stops
 * start-up, or makes a SIGHUP reload fail and keep the old certificate, with a message
 * naming the file, before either transport is handed anything. */
#include "cmd/deltad_tls.h"

#include <errno.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define TLS_FILE_MAX (1u << 20) /* a PEM file larger than this is not a certificate */

static int tls_read_file(char **out, const char *path) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return dd_err_set(DD_EINVAL, "cannot read %s: %s", path, strerror(errno));
  char *buf = malloc(TLS_FILE_MAX + 1);
  int rc = 0;
  if (!buf) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  size_t n = fread(buf, 1, TLS_FILE_MAX + 1, f);
  if (ferror(f)) rc = dd_err_set(DD_EINVAL, "cannot read %s: %s", path, strerror(errno));
  else if (n > TLS_FILE_MAX) rc = dd_err_set(DD_EINVAL, "%s: larger than %u bytes", path, TLS_FILE_MAX);
  else if (n == 0 || memchr(buf, '\0', n)) rc = dd_err_set(DD_EINVAL, "%s: not a PEM file", path);
  if (rc) goto cleanup;
  buf[n] = '\0';
  *out = buf;
  buf = NULL;
cleanup:
  free(buf);
  fclose(f);
  return rc;
}

/* OpenSSL's reason for the last failure (and the queue cleared). */
static const char *tls_ossl_reason(void) {
  unsigned long e = ERR_peek_last_error();
  const char *r = e ? ERR_reason_error_string(e) : NULL;
  ERR_clear_error();
  return r ? r : "no PEM data";
}

/* Never prompt for a pass phrase: encrypted keys are refused. */
static int tls_no_passphrase(char *buf, int size, int rwflag, void *u) {
  (void)buf, (void)size, (void)rwflag, (void)u;
  return -1;
}

static int tls_describe(dd_tls_files *f, X509 *leaf) {
  BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
  char *hex = bn ? BN_bn2hex(bn) : NULL;
  snprintf(f->serial, sizeof f->serial, "%s", hex ? hex : "?");
  OPENSSL_free(hex);
  BN_free(bn);
  BIO *b = BIO_new(BIO_s_mem());
  if (b && ASN1_TIME_print(b, X509_get0_notAfter(leaf)) > 0) {
    int n = BIO_read(b, f->not_after, (int)sizeof f->not_after - 1);
    f->not_after[n > 0 ? n : 0] = '\0';
  }
  BIO_free(b);
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0)
    fprintf(stderr, "deltad: warning: the TLS certificate expired on %s\n", f->not_after);
  return 0;
}

/* The chain's first certificate must be the key's. */
static int tls_check_pair(dd_tls_files *f, const dd_config *cfg) {
  BIO *cb = BIO_new_mem_buf(f->cert_pem, -1), *kb = BIO_new_mem_buf(f->key_pem, -1);
  X509 *leaf = NULL;
  EVP_PKEY *key = NULL;
  int rc = 0;
  if (!cb || !kb) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  if (!(leaf = PEM_read_bio_X509(cb, NULL, tls_no_passphrase, NULL))) {
    rc = dd_err_set(DD_EINVAL, "%s: not a PEM certificate (%s)", cfg->tls_cert_file, tls_ossl_reason());
    goto cleanup;
  }
  for (X509 *more; (more = PEM_read_bio_X509(cb, NULL, tls_no_passphrase, NULL)) != NULL;) X509_free(more);
  ERR_clear_error(); /* the end of the chain */
  if (!(key = PEM_read_bio_PrivateKey(kb, NULL, tls_no_passphrase, NULL))) {
    rc = dd_err_set(DD_EINVAL, "%s: not an unencrypted PEM private key (%s)", cfg->tls_key_file,
                    tls_ossl_reason());
    goto cleanup;
  }
  if (X509_check_private_key(leaf, key) != 1) {
    ERR_clear_error();
    rc = dd_err_set(DD_EINVAL, "%s does not match the certificate in %s", cfg->tls_key_file,
                    cfg->tls_cert_file);
    goto cleanup;
  }
  rc = tls_describe(f, leaf);
cleanup:
  EVP_PKEY_free(key);
  X509_free(leaf);
  BIO_free(cb);
  BIO_free(kb);
  return rc;
}

static int tls_check_ca(const char *pem, const char *path) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  if (!b) return dd_err_set(DD_ENOMEM, "out of memory");
  X509 *ca = PEM_read_bio_X509(b, NULL, tls_no_passphrase, NULL);
  int rc = ca ? 0 : dd_err_set(DD_EINVAL, "%s: no PEM certificate (%s)", path, tls_ossl_reason());
  X509_free(ca);
  BIO_free(b);
  return rc;
}

int dd_tls_files_load(dd_tls_files **out, const dd_config *cfg) {
  *out = NULL;
  if (!cfg->tls_cert_file[0]) return 0;
  dd_tls_files *f = calloc(1, sizeof *f);
  if (!f) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = tls_read_file(&f->cert_pem, cfg->tls_cert_file);
  if (!rc) rc = tls_read_file(&f->key_pem, cfg->tls_key_file);
  if (!rc && cfg->tls_client_ca_file[0]) rc = tls_read_file(&f->ca_pem, cfg->tls_client_ca_file);
  if (!rc) rc = tls_check_pair(f, cfg);
  if (!rc && f->ca_pem) rc = tls_check_ca(f->ca_pem, cfg->tls_client_ca_file);
  if (rc) {
    dd_tls_files_free(f);
    return rc;
  }
  f->pem = (dd_tls_pem){f->cert_pem, f->key_pem, f->ca_pem, cfg->tls_client_auth};
  *out = f;
  return 0;
}

void dd_tls_files_free(dd_tls_files *f) {
  if (!f) return;
  if (f->key_pem) OPENSSL_cleanse(f->key_pem, strlen(f->key_pem));
  free(f->cert_pem);
  free(f->key_pem);
  free(f->ca_pem);
  free(f);
}
