/* deltad_tls.h: deltad's TLS files, read and checked before a transport sees them. */
#ifndef DD_CMD_DELTAD_TLS_H
#define DD_CMD_DELTAD_TLS_H

#include "cmd/deltad_config.h"
#include "common/tls.h"

typedef struct dd_tls_files {
  dd_tls_pem pem;      /* points into the strings below; give it to the transports */
  char *cert_pem, *key_pem, *ca_pem;
  char serial[80];     /* the leaf certificate's serial number, hex */
  char not_after[40];  /* its expiry, "Jan  1 00:00:00 2027 GMT" */
} dd_tls_files;

/* Reads cfg's tls-cert-file, tls-key-file and tls-client-ca-file and checks them with
 * OpenSSL: a certificate chain that parses, a private key (unencrypted) that matches the
 * first certificate, a CA file with at least one certificate. *out is NULL when TLS is not
 * configured. DD_EINVAL names the file and what is wrong with it. */
int dd_tls_files_load(dd_tls_files **out, const dd_config *cfg);
void dd_tls_files_free(dd_tls_files *f); /* accepts NULL */

#endif
