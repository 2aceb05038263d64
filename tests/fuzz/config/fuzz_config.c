/* fuzz_config.c: feeds arbitrary bytes to deltad's config file parser (cmd/deltad_config.c)
 * as the file named by --config (a memfd). Whatever the bytes, the parser returns 0 or
 * DD_EINVAL/DD_EIO with a message, and on success every string option is terminated
 * within its field and the values are within their documented ranges. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/deltad_config.h"
#include "common/err.h"

#define FUZZ_TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("deltad.conf", 0);
  if (fd < 0) abort();
  if (size && write(fd, data, size) != (ssize_t)size) abort();
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  char *argv[] = {"deltad", "--config", path, NULL};
  dd_config cfg;
  int rc = dd_config_load(&cfg, 3, argv);
  close(fd);
  if (rc != 0) {
    if (rc != DD_EINVAL && rc != DD_EIO) abort();
    if (!dd_err_msg()[0]) abort();
    return 0;
  }
  if (!FUZZ_TERMINATED(cfg.data_dir) || !FUZZ_TERMINATED(cfg.grpc_listen) ||
      !FUZZ_TERMINATED(cfg.http_listen) || !FUZZ_TERMINATED(cfg.base_path) ||
      !FUZZ_TERMINATED(cfg.public_url) || !FUZZ_TERMINATED(cfg.tls_cert_file) ||
      !FUZZ_TERMINATED(cfg.tls_key_file) || !FUZZ_TERMINATED(cfg.tls_client_ca_file))
    abort();
  if (cfg.base_path[0] != '/' || cfg.threads < 1 || cfg.threads > 256 || cfg.http_threads < 0 ||
      cfg.max_message_bytes < 1024 || cfg.url_expiry_seconds < 1 ||
      (cfg.tls_client_auth != DD_TLS_CLIENT_NONE && !cfg.tls_client_ca_file[0]))
    abort();
  return 0;
}
