/* grpc_tls.c: TLS on the gRPC port. The SSL server credentials take their certificate
 * config from a fetcher, which gRPC calls before every new handshake: it hands over the
 * config set last, once, and otherwise answers "unchanged". So dd_grpc_server_set_tls
 * changes the certificate for the next connection while open ones keep theirs. gRPC owns
 * (and destroys) a config once the fetcher has handed it over; if it cannot use it, it
 * logs why and keeps the certificate it had. */
#include <string.h>

#include "common/err.h"
#include "server/grpc/grpc_int.h"

static grpc_ssl_client_certificate_request_type tls__request_type(dd_tls_client_auth a) {
  switch (a) {
    case DD_TLS_CLIENT_OPTIONAL: return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    case DD_TLS_CLIENT_REQUIRE: return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    default: return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
}

static int tls__config(const dd_tls_pem *pem, const dd_tls_client_auth *serving,
                       grpc_ssl_server_certificate_config **out) {
  int rc = dd_tls_pem_check(pem, serving);
  if (rc) return rc;
  grpc_ssl_pem_key_cert_pair pair = {pem->key_pem, pem->cert_pem};
  /* gRPC 1.51 asserts that a fetched config has root certificates even when no client
   * certificate is requested; then they are never used, so the server's own chain serves. */
  const char *roots = pem->client_auth != DD_TLS_CLIENT_NONE ? pem->client_ca_pem : pem->cert_pem;
  if (!(*out = grpc_ssl_server_certificate_config_create(roots, &pair, 1)))
    return dd_err_set(DD_ENOMEM, "cannot create the gRPC certificate config");
  return 0;
}

/* Sets the config the next handshake picks up, dropping one not yet picked up. */
static void tls__offer(dd_grpc_server *s, grpc_ssl_server_certificate_config *cfg) {
  pthread_mutex_lock(&s->tls_mu);
  grpc_ssl_server_certificate_config *old = s->tls_next;
  s->tls_next = cfg;
  pthread_mutex_unlock(&s->tls_mu);
  if (old) grpc_ssl_server_certificate_config_destroy(old);
}

static grpc_ssl_certificate_config_reload_status tls__fetch(void *user,
                                                            grpc_ssl_server_certificate_config **config) {
  dd_grpc_server *s = user;
  pthread_mutex_lock(&s->tls_mu);
  grpc_ssl_server_certificate_config *next = s->tls_next;
  s->tls_next = NULL;
  pthread_mutex_unlock(&s->tls_mu);
  if (!next) return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
  *config = next;
  return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
}

int dd_grpc__credentials(dd_grpc_server *s, const dd_tls_pem *tls, grpc_server_credentials **out) {
  *out = NULL;
  if (!tls) {
    *out = grpc_insecure_server_credentials_create();
    return *out ? 0 : dd_err_set(DD_EINTERNAL, "cannot create gRPC credentials");
  }
  grpc_ssl_server_certificate_config *cfg = NULL;
  int rc = tls__config(tls, NULL, &cfg);
  if (rc) return rc;
  tls__offer(s, cfg); /* the first fetch, when the port is added, takes it */
  s->tls_on = true;
  s->tls_client_auth = tls->client_auth;
  grpc_ssl_server_credentials_options *o = grpc_ssl_server_credentials_create_options_using_config_fetcher(
      tls__request_type(tls->client_auth), tls__fetch, s);
  if (!o) return dd_err_set(DD_ENOMEM, "cannot create gRPC TLS options");
  if (!(*out = grpc_ssl_server_credentials_create_with_options(o))) /* takes o */
    return dd_err_set(DD_EINTERNAL, "cannot create gRPC TLS credentials");
  return 0;
}

int dd_grpc_server_set_tls(dd_grpc_server *s, const dd_tls_pem *pem) {
  if (!s || !s->tls_on) return dd_err_set(DD_EINVAL, "the gRPC port runs without TLS");
  grpc_ssl_server_certificate_config *cfg = NULL;
  int rc = tls__config(pem, &s->tls_client_auth, &cfg);
  if (rc) return rc;
  tls__offer(s, cfg);
  return 0;
}

void dd_grpc__tls_free(dd_grpc_server *s) {
  if (s->tls_next) grpc_ssl_server_certificate_config_destroy(s->tls_next);
  s->tls_next = NULL;
  pthread_mutex_destroy(&s->tls_mu);
}
