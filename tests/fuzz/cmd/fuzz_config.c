/* fuzz_config.c: deltad's configuration through dd_config_load, as the server reads it at
 * start. Input: a config file, then optionally "\0\0" and command-line flags separated by
 * NUL bytes (--help and --version are dropped: they only print). Checks: an accepted config
 * has NUL-terminated strings and values inside the documented ranges. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/deltad_config.h"
#include "common/err.h"

#define MAX_ARGS 32

static char path[64];

static void check(const dd_config *c) {
  if (!memchr(c->data_dir, 0, sizeof c->data_dir) || !memchr(c->grpc_listen, 0, sizeof c->grpc_listen) ||
      !memchr(c->http_listen, 0, sizeof c->http_listen) || !memchr(c->base_path, 0, sizeof c->base_path) ||
      !memchr(c->public_url, 0, sizeof c->public_url) ||
      !memchr(c->tls_cert_file, 0, sizeof c->tls_cert_file) ||
      !memchr(c->tls_key_file, 0, sizeof c->tls_key_file) ||
      !memchr(c->tls_client_ca_file, 0, sizeof c->tls_client_ca_file))
    abort();
  if (c->tls_client_auth != DD_TLS_CLIENT_NONE && !c->tls_client_ca_file[0]) abort();
  if (c->threads < 1 || c->threads > 4096 || c->http_threads < 0 || c->http_threads > 256) abort();
  if (c->max_message_bytes < 1024 || c->max_message_bytes > (size_t)1 << 30) abort();
  if (c->shutdown_grace_ms < 0 || c->url_expiry_seconds < 1) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/dd-fuzz-config-%d.conf", (int)getpid());
  }
  if (size > 1 << 16) return 0;
  const uint8_t *sep = NULL;
  for (size_t i = 0; i + 1 < size; i++)
    if (data[i] == 0 && data[i + 1] == 0) { sep = data + i; break; }
  size_t file_len = sep ? (size_t)(sep - data) : size;
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(data, 1, file_len, f);
  fclose(f);
  char *flags = NULL, *argv[MAX_ARGS + 4];
  int argc = 0;
  argv[argc++] = "deltad";
  argv[argc++] = "--config";
  argv[argc++] = path;
  if (sep) {
    size_t n = size - file_len - 2;
    flags = malloc(n + 1);
    if (!flags) return 0;
    memcpy(flags, sep + 2, n);
    flags[n] = '\0';
    for (char *p = flags; p < flags + n && argc < MAX_ARGS; p += strlen(p) + 1)
      if (strcmp(p, "--help") && strcmp(p, "-h") && strcmp(p, "--version")) argv[argc++] = p;
  }
  argv[argc] = NULL;
  dd_config cfg;
  if (dd_config_load(&cfg, argc, argv) == 0) check(&cfg);
  unlink(path); /* after each input: libFuzzer may exit without atexit handlers */
  dd_err_clear();
  free(flags);
  return 0;
}
