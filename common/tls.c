/* tls.c: the checks every transport makes on the TLS material it is given. */
#include "common/tls.h"

#include "common/err.h"

int dd_tls_pem_check(const dd_tls_pem *pem, const dd_tls_client_auth *serving) {
  if (!pem || !pem->cert_pem || !pem->key_pem)
    return dd_err_set(DD_EINVAL, "TLS needs a certificate and a key");
  if (pem->client_auth != DD_TLS_CLIENT_NONE && !pem->client_ca_pem)
    return dd_err_set(DD_EINVAL, "client certificate authentication needs a CA");
  if (serving && pem->client_auth != *serving)
    return dd_err_set(DD_EINVAL, "the client certificate mode cannot change while serving");
  return 0;
}
