/* http_tls.c: TLS on the REST port, on libmicrohttpd's GnuTLS.
 *
 * The certificate is not given to MHD as fixed PEM: MHD calls tls__retrieve (a GnuTLS
 * certificate callback) at every handshake, which hands out the current key set. A reload
 * (dd_http_server_set_tls) builds a new set and makes it current; handshakes from then on
 * use it, connections already open keep the session they have. GnuTLS keeps the pointers
 * it was handed for the life of a session, so a set that is no longer current is kept
 * (on the `older` list) until the server is freed: a few KB per reload.
 *
 * Client certificates. With a client CA, MHD asks every client for a certificate (GnuTLS
 * "request", not "require"); the check is ours, per request, before anything else:
 * the peer's chain must verify against the CA of the current set (for the TLS client
 * purpose), and with DD_TLS_CLIENT_REQUIRE a request without one is refused. Refusals
 * are 401 with the standard JSON error.
 *
 * The callback has no user pointer, so the server whose keys it hands out is named by
 * one process-wide pointer, tls__server (guarded by tls__mu, as is every server's
 * tls_keys): one TLS REST server per process. */
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/abstract.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/http_int.h"

#define TLS__MAX_CHAIN 16 /* certificates in the server's chain */
#define TLS__MAX_PEER 16  /* certificates a client may present */

struct dd_http__tls_keys {
  gnutls_pcert_st pcert[TLS__MAX_CHAIN];
  unsigned n_pcert;
  gnutls_privkey_t key;
  gnutls_x509_trust_list_t trust; /* client CA; NULL without client authentication */
  dd_http__tls_keys *older;           /* sets retired before this one */
};

static pthread_mutex_t tls__mu = PTHREAD_MUTEX_INITIALIZER;
static dd_http_server *tls__server; /* the server tls__retrieve serves */

/* ---- key sets ------------------------------------------------------------------------ */

static void tls__keys_free(dd_http__tls_keys *k) {
  while (k) {
    dd_http__tls_keys *older = k->older;
    for (unsigned i = 0; i < k->n_pcert; i++) gnutls_pcert_deinit(&k->pcert[i]);
    if (k->key) gnutls_privkey_deinit(k->key);
    if (k->trust) gnutls_x509_trust_list_deinit(k->trust, 1);
    free(k);
    k = older;
  }
}

static gnutls_datum_t tls__datum(const char *pem) {
  gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
  return d;
}

static int tls__keys_new(const dd_tls_pem *pem, const dd_tls_client_auth *serving, dd_http__tls_keys **out) {
  *out = NULL;
  int rc = dd_tls_pem_check(pem, serving), g;
  if (rc) return rc;
  dd_http__tls_keys *k = calloc(1, sizeof *k);
  if (!k) return dd_err_set(DD_ENOMEM, "out of memory");
  gnutls_datum_t d = tls__datum(pem->cert_pem);
  k->n_pcert = TLS__MAX_CHAIN;
  if ((g = gnutls_pcert_list_import_x509_raw(k->pcert, &k->n_pcert, &d, GNUTLS_X509_FMT_PEM, 0)) < 0) {
    k->n_pcert = 0;
    rc = dd_err_set(DD_EINVAL, "REST TLS certificate: %s", gnutls_strerror(g));
    goto cleanup;
  }
  d = tls__datum(pem->key_pem);
  if ((g = gnutls_privkey_init(&k->key)) < 0 ||
      (g = gnutls_privkey_import_x509_raw(k->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    rc = dd_err_set(DD_EINVAL, "REST TLS key: %s", gnutls_strerror(g));
    goto cleanup;
  }
  if (pem->client_auth != DD_TLS_CLIENT_NONE) {
    d = tls__datum(pem->client_ca_pem);
    if ((g = gnutls_x509_trust_list_init(&k->trust, 0)) < 0 ||
        (g = gnutls_x509_trust_list_add_trust_mem(k->trust, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0)) <= 0) {
      rc = dd_err_set(DD_EINVAL, "REST TLS client CA: %s", g < 0 ? gnutls_strerror(g) : "no certificate");
      goto cleanup;
    }
  }
  *out = k;
  k = NULL;
cleanup:
  tls__keys_free(k);
  return rc;
}

/* ---- handshakes and requests --------------------------------------------------------- */

static int tls__retrieve(gnutls_session_t sess, const gnutls_datum_t *req_ca, int n_req,
                         const gnutls_pk_algorithm_t *algos, int n_algos, gnutls_pcert_st **pcert,
                         unsigned int *n_pcert, gnutls_privkey_t *key) {
  (void)sess, (void)req_ca, (void)n_req, (void)algos, (void)n_algos;
  pthread_mutex_lock(&tls__mu);
  dd_http__tls_keys *k = tls__server ? tls__server->tls_keys : NULL;
  pthread_mutex_unlock(&tls__mu);
  if (!k) return -1;
  *pcert = k->pcert;
  *n_pcert = k->n_pcert;
  *key = k->key;
  return 0;
}

/* 0 when the peer's chain verifies against trust for client authentication. */
static int tls__verify_peer(gnutls_x509_trust_list_t trust, const gnutls_datum_t *peers, unsigned n) {
  gnutls_x509_crt_t crts[TLS__MAX_PEER];
  unsigned got = 0, status = 0;
  int rc = 0;
  if (n > TLS__MAX_PEER) return dd_err_set(DD_EUNAUTH, "client certificate chain too long");
  for (; got < n; got++) {
    if (gnutls_x509_crt_init(&crts[got]) < 0) break;
    if (gnutls_x509_crt_import(crts[got], &peers[got], GNUTLS_X509_FMT_DER) < 0) {
      got++;
      rc = dd_err_set(DD_EUNAUTH, "client certificate cannot be read");
      goto cleanup;
    }
  }
  if (got < n) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
  if (gnutls_x509_trust_list_verify_crt2(trust, crts, n, &purpose, 1, 0, &status, NULL) < 0 || status != 0)
    rc = dd_err_set(DD_EUNAUTH, "client certificate not trusted");
cleanup:
  for (unsigned i = 0; i < got; i++) gnutls_x509_crt_deinit(crts[i]);
  return rc;
}

int dd_http__tls_check_client(dd_http_server *s, struct MHD_Connection *c) {
  if (s->tls_client_auth == DD_TLS_CLIENT_NONE) return 0; /* also every plaintext server */
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  gnutls_session_t sess = ci ? (gnutls_session_t)ci->tls_session : NULL;
  unsigned n = 0;
  const gnutls_datum_t *peers = sess ? gnutls_certificate_get_peers(sess, &n) : NULL;
  if (!peers || n == 0)
    return s->tls_client_auth == DD_TLS_CLIENT_REQUIRE
               ? dd_err_set(DD_EUNAUTH, "a client certificate is required")
               : 0;
  pthread_mutex_lock(&tls__mu);
  gnutls_x509_trust_list_t trust = s->tls_keys->trust; /* sets live until the server is freed */
  pthread_mutex_unlock(&tls__mu);
  return tls__verify_peer(trust, peers, n);
}

/* ---- the server's TLS state ---------------------------------------------------------- */

int dd_http__tls_init(dd_http_server *s, const dd_tls_pem *pem) {
  if (!pem) return 0;
  dd_http__tls_keys *k = NULL;
  int rc = tls__keys_new(pem, NULL, &k);
  if (rc) return rc;
  if (pem->client_ca_pem && pem->client_auth != DD_TLS_CLIENT_NONE &&
      !(s->tls_ca_pem = strdup(pem->client_ca_pem))) {
    tls__keys_free(k);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  s->tls_keys = k;
  s->tls_client_auth = pem->client_auth;
  return 0;
}

int dd_http__tls_options(dd_http_server *s, struct MHD_OptionItem *items, unsigned *flags) {
  size_t n = 0;
  if (s->tls_keys) {
    pthread_mutex_lock(&tls__mu);
    int busy = tls__server != NULL && tls__server != s;
    if (!busy) tls__server = s;
    pthread_mutex_unlock(&tls__mu);
    if (busy) return dd_err_set(DD_EINVAL, "only one TLS REST server per process");
    *flags |= MHD_USE_TLS;
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)tls__retrieve};
    if (s->tls_ca_pem) /* makes MHD ask clients for a certificate; we verify it */
      items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, s->tls_ca_pem};
  }
  items[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  return 0;
}

int dd_http_server_set_tls(dd_http_server *s, const dd_tls_pem *pem) {
  if (!s || !s->tls_keys) return dd_err_set(DD_EINVAL, "the REST port runs without TLS");
  dd_http__tls_keys *k = NULL;
  int rc = tls__keys_new(pem, &s->tls_client_auth, &k);
  if (rc) return rc;
  pthread_mutex_lock(&tls__mu);
  k->older = s->tls_keys;
  s->tls_keys = k;
  pthread_mutex_unlock(&tls__mu);
  return 0;
}

void dd_http__tls_stop(dd_http_server *s) {
  pthread_mutex_lock(&tls__mu);
  if (tls__server == s) tls__server = NULL;
  pthread_mutex_unlock(&tls__mu);
}

void dd_http__tls_free(dd_http_server *s) {
  dd_http__tls_stop(s);
  tls__keys_free(s->tls_keys);
  s->tls_keys = NULL;
  free(s->tls_ca_pem);
  s->tls_ca_pem = NULL;
}
