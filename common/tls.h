/* tls.h: the TLS material both transports take: a certificate chain and its private key
 * (PEM text), and optionally the CA that client certificates must chain to, with how
 * strictly a client certificate is asked for. The strings are borrowed: a transport copies
 * what it keeps. Who reads and checks the files is the caller's business (deltad:
 * cmd/deltad_tls.c); a transport assumes the key matches the certificate. */
#ifndef DD_COMMON_TLS_H
#define DD_COMMON_TLS_H

typedef enum dd_tls_client_auth {
  DD_TLS_CLIENT_NONE = 0, /* no client certificate is asked for */
  DD_TLS_CLIENT_OPTIONAL, /* asked for; one that is sent must chain to client_ca_pem */
  DD_TLS_CLIENT_REQUIRE   /* a certificate chaining to client_ca_pem is required */
} dd_tls_client_auth;

typedef struct dd_tls_pem {
  const char *cert_pem;      /* the server's certificate, then any intermediates */
  const char *key_pem;       /* its private key */
  const char *client_ca_pem; /* NULL when client_auth is DD_TLS_CLIENT_NONE */
  dd_tls_client_auth client_auth;
} dd_tls_pem;

/* 0 when pem has a certificate and a key, and a CA when client_auth asks for one; for a
 * reload, serving names the mode the server runs with and client_auth must equal it (NULL
 * at start). Else DD_EINVAL. */
int dd_tls_pem_check(const dd_tls_pem *pem, const dd_tls_client_auth *serving);

#endif
