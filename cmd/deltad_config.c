/* deltad_config.c: parses deltad's config file (`key = value` lines, `#` comments; keys
 * are the long flag names without dashes, e.g. `grpc-listen = 127.0.0.1:50051`) and its
 * command-line flags into a dd_config. */
#include "cmd/deltad_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "cmd/version.h"
#include "server/http/http_server.h"

void dd_config_usage(void) {
  printf(
      "usage: deltad [OPTIONS]\n"
      "\n"
      "deltad serves a catalog, Delta Sharing and Delta maintenance over gRPC and REST.\n"
      "\n"
      "options (each may also be set in the config file as `name = value`):\n"
      "  --data-dir DIR         where LMDB, keys and the admin token live (default ./data)\n"
      "  --grpc-listen ADDR     gRPC address (default 127.0.0.1:50051)\n"
      "  --http-listen ADDR     REST address (default 127.0.0.1:8080)\n"
      "  --base-path PATH       REST base path (default /api/v1)\n"
      "  --public-url URL       URL clients reach the REST port at (default http://ADDR)\n"
      "  --threads N            gRPC worker threads (default: number of cores)\n"
      "  --http-threads N       REST threads: 0 = one per connection (default), N = a pool\n"
      "  --max-message-bytes N  largest request or response message (default 16777216)\n"
      "  --shutdown-grace-ms N  how long in-flight calls may finish on SIGTERM (default 5000)\n"
      "  --url-expiry-seconds N lifetime of Delta Sharing file URLs (default 3600)\n"
      "  --demo                 create the demo catalog, schema and table on start\n"
      "  --tls-cert-file FILE   serve TLS on both ports with this PEM certificate chain\n"
      "  --tls-key-file FILE    the certificate's PEM private key (re-read on SIGHUP)\n"
      "  --tls-client-ca-file FILE  CA that client certificates must chain to\n"
      "  --tls-client-auth MODE none (default), optional or require\n"
      "request limits (docs/configuration.md):\n"
      "  --max-request-depth N           message / JSON nesting levels (default 128)\n"
      "  --max-request-elements N        fields and list items per request (default 1000000)\n"
      "  --max-request-memory N          decoded bytes per request (default 268435456)\n"
      "  --max-requests N                requests in flight, 0 = no cap (default 256)\n"
      "  --max-requests-per-principal N  in flight per recipient, 0 = no cap (default 32)\n"
      "connection limits and timeouts (seconds; 0 = none; see docs/configuration.md):\n"
      "  --http-idle-timeout-seconds N     no byte moved on a connection (default 30)\n"
      "  --http-header-timeout-seconds N   request line and headers (default 30)\n"
      "  --http-body-timeout-seconds N     request body (default 60)\n"
      "  --http-max-connections N          open REST connections (default 512)\n"
      "  --http-max-connections-per-ip N   from one address (default 128)\n"
      "  --grpc-keepalive-time-seconds N   ping an idle transport after (default 120)\n"
      "  --grpc-keepalive-timeout-seconds N  close when the ping is not acked (default 20)\n"
      "  --grpc-handshake-timeout-seconds N  HTTP/2 preface and settings (default 20)\n"
      "  --grpc-max-connection-idle-seconds N  no call in flight (default 300)\n"
      "  --grpc-max-connection-age-seconds N   any connection (default 0 = none)\n"
      "  --grpc-max-connection-age-grace-seconds N  calls after the age (default 60)\n"
      "  --grpc-max-concurrent-streams N   calls at once on one connection (default 128)\n"
      "observability and operations (docs/configuration.md, docs/operations.md):\n"
      "  --log-format FMT       text (default) or json: one line per request either way\n"
      "  --log-level LEVEL      debug, info (default), warn or error (re-read on SIGHUP)\n"
      "  --metrics-listen ADDR  also serve /metrics without a token on ADDR (default: only\n"
      "                         on the REST port, for the admin token)\n"
      "  --audit-retention-days N  keep audit events N days (default 90)\n"
      "  --managed-table-retention-seconds N  a dropped MANAGED table can be undropped for N\n"
      "                         seconds, then its data is deleted (default 604800: 7 days)\n"
      "  --storage-ca-file FILE trust the CAs in FILE (PEM) for object stores and identity\n"
      "                         endpoints instead of the system's (a private endpoint)\n"
      "the catalog on PostgreSQL, for replicas (docs/scaling.md):\n"
      "  --catalog URL          postgresql://user@host:port/db (libpq URL; options pass\n"
      "                         through): keep the catalog there instead of LMDB\n"
      "  --catalog-schema NAME  PostgreSQL schema of the deltad_* tables (created if absent)\n"
      "  --catalog-pool N       PostgreSQL connections per replica (default 8)\n"
      "  --catalog-cache MODE   notify (default): trust the generation LISTEN/NOTIFY\n"
      "                         pushes (no round trip; another replica's change is seen\n"
      "                         once its notification arrived, milliseconds; a round trip\n"
      "                         per call while the listener is down); check: each call\n"
      "                         reads the catalog generation (one round trip, never stale)\n"
      "  --secret-key-file FILE     credentials' encryption key (32 bytes, 0600; required\n"
      "                             with --catalog, the same file on every replica)\n"
      "  --url-signing-key-file FILE  key of signed file URLs (same rules)\n"
      "forwarding Delta Connect work to Spark (docs/scaling.md):\n"
      "  --spark-connect sc://HOST:PORT  a Spark Connect server with Delta that runs the\n"
      "                         operations below instead of deltad\n"
      "  --spark-forward OPS    comma list of optimize, delete, update, merge, vacuum,\n"
      "                         scan, or all (default all)\n"
      "  --spark-forward-min-bytes N  forward only tables whose snapshot is larger than N\n"
      "  --spark-forward-timeout-s N  deadline of a forwarded call (default 3600)\n"
      "  --restore-from DIR     restore a backup (deltactl admin backup) into an empty\n"
      "                         --data-dir, then serve it\n"
      "  --config FILE          read options from FILE first; flags override it (re-read\n"
      "                         on SIGHUP)\n"
      "  --help, --version\n"
      "\n"
      "environment:\n"
      "  DELTAD_ADMIN_TOKEN     at first start, the admin token to create (else random,\n"
      "                         written to DATA_DIR/admin.token, mode 0600)\n");
}

static int cfg_copy(char *dst, size_t cap, const char *key, const char *val) {
  if (strlen(val) >= cap) return dd_err_set(DD_EINVAL, "%s: value too long", key);
  memcpy(dst, val, strlen(val) + 1);
  return 0;
}

static int cfg_int(long *out, const char *key, const char *val, long lo, long hi) {
  char *end = NULL;
  errno = 0;
  long v = strtol(val, &end, 10);
  if (errno || !end || *end || end == val || v < lo || v > hi)
    return dd_err_set(DD_EINVAL, "%s: expected a whole number from %ld to %ld, got '%s'", key,
                      lo, hi, val);
  *out = v;
  return 0;
}

/* ---- TLS options ---- */

static int cfg_set_tls(dd_config *cfg, const char *key, const char *val) {
  if (strcmp(key, "tls-cert-file") == 0)
    return cfg_copy(cfg->tls_cert_file, sizeof cfg->tls_cert_file, key, val);
  if (strcmp(key, "tls-key-file") == 0)
    return cfg_copy(cfg->tls_key_file, sizeof cfg->tls_key_file, key, val);
  if (strcmp(key, "tls-client-ca-file") == 0)
    return cfg_copy(cfg->tls_client_ca_file, sizeof cfg->tls_client_ca_file, key, val);
  if (strcmp(key, "tls-client-auth") == 0) {
    static const char *const modes[] = {"none", "optional", "require"}; /* dd_tls_client_auth */
    for (int i = 0; i < 3; i++)
      if (strcmp(val, modes[i]) == 0) {
        cfg->tls_client_auth = (dd_tls_client_auth)i;
        return 0;
      }
    return dd_err_set(DD_EINVAL, "tls-client-auth: expected none, optional or require, got '%s'", val);
  }
  return dd_err_set(DD_EINVAL, "unknown option '%s' (see --help)", key);
}

/* The TLS options make sense together (the files themselves are read at start). */
static int cfg_check_tls(const dd_config *cfg) {
  if (!cfg->tls_cert_file[0] != !cfg->tls_key_file[0])
    return dd_err_set(DD_EINVAL, "tls-cert-file and tls-key-file go together: set both or neither");
  if (!cfg->tls_cert_file[0] && (cfg->tls_client_ca_file[0] || cfg->tls_client_auth != DD_TLS_CLIENT_NONE))
    return dd_err_set(DD_EINVAL, "client certificates need TLS: set tls-cert-file and tls-key-file");
  if (cfg->tls_client_auth != DD_TLS_CLIENT_NONE && !cfg->tls_client_ca_file[0])
    return dd_err_set(DD_EINVAL, "tls-client-auth = %s needs tls-client-ca-file",
                      cfg->tls_client_auth == DD_TLS_CLIENT_REQUIRE ? "require" : "optional");
  if (cfg->tls_client_auth == DD_TLS_CLIENT_NONE && cfg->tls_client_ca_file[0])
    return dd_err_set(DD_EINVAL, "tls-client-ca-file is set but tls-client-auth is none "
                                 "(set it to optional or require)");
  return 0;
}

/* ---- numeric limits: request limits (req_guard.h), connection limits and timeouts ---- */

/* One row per option: its field (a long in dd_config), range and default. */
static const struct {
  const char *key;
  size_t off;
  long lo, hi, def;
} cfg_limits[] = {
    {"max-request-depth", offsetof(dd_config, req_max_depth), 1, 1000, 128},
    {"max-request-elements", offsetof(dd_config, req_max_elements), 16, 1L << 30, 1000000},
    {"max-request-memory", offsetof(dd_config, req_max_memory), 1L << 16, 1L << 40, 256L << 20},
    {"max-requests", offsetof(dd_config, req_max_requests), 0, 1L << 20, 256},
    {"max-requests-per-principal", offsetof(dd_config, req_max_per_principal), 0, 1L << 20, 32},
    {"http-idle-timeout-seconds", offsetof(dd_config, http_idle_timeout_s), 0, 86400, DD_HTTP_IDLE_TIMEOUT_S},
    {"http-header-timeout-seconds", offsetof(dd_config, http_header_timeout_s), 0, 86400, DD_HTTP_HEADER_TIMEOUT_S},
    {"http-body-timeout-seconds", offsetof(dd_config, http_body_timeout_s), 0, 86400, DD_HTTP_BODY_TIMEOUT_S},
    {"http-max-connections", offsetof(dd_config, http_max_connections), 0, 1000000, DD_HTTP_MAX_CONNECTIONS},
    {"http-max-connections-per-ip", offsetof(dd_config, http_max_connections_per_ip), 0, 1000000,
     DD_HTTP_MAX_CONNECTIONS_PER_IP},
    {"grpc-keepalive-time-seconds", offsetof(dd_config, grpc_keepalive_time_s), 0, 86400, 120},
    {"grpc-keepalive-timeout-seconds", offsetof(dd_config, grpc_keepalive_timeout_s), 0, 86400, 20},
    {"grpc-handshake-timeout-seconds", offsetof(dd_config, grpc_handshake_timeout_s), 0, 86400, 20},
    {"grpc-max-connection-idle-seconds", offsetof(dd_config, grpc_max_connection_idle_s), 0, 1000000, 300},
    {"grpc-max-connection-age-seconds", offsetof(dd_config, grpc_max_connection_age_s), 0, 1000000, 0},
    {"grpc-max-connection-age-grace-seconds", offsetof(dd_config, grpc_max_connection_age_grace_s), 0,
     1000000, 60},
    {"grpc-max-concurrent-streams", offsetof(dd_config, grpc_max_concurrent_streams), 0, 1000000, 128},
    {"audit-retention-days", offsetof(dd_config, audit_retention_days), 1, 36500, 90},
    {"managed-table-retention-seconds", offsetof(dd_config, managed_retention_s), 0, 315360000, 604800},
};
#define CFG_N_LIMITS (sizeof cfg_limits / sizeof cfg_limits[0])

static long *cfg_limit_field(dd_config *cfg, size_t i) { return (long *)((char *)cfg + cfg_limits[i].off); }

/* Sets the limit named key; 1 when key is not a limit. */
static int cfg_set_limit(dd_config *cfg, const char *key, const char *val) {
  for (size_t i = 0; i < CFG_N_LIMITS; i++)
    if (strcmp(key, cfg_limits[i].key) == 0)
      return cfg_int(cfg_limit_field(cfg, i), key, val, cfg_limits[i].lo, cfg_limits[i].hi);
  return 1;
}

static void cfg_limit_defaults(dd_config *cfg) {
  for (size_t i = 0; i < CFG_N_LIMITS; i++) *cfg_limit_field(cfg, i) = cfg_limits[i].def;
}

/* Logging, metrics and restore; 1 when key is none of them. */
static int cfg_set_obs(dd_config *cfg, const char *key, const char *val) {
  if (strcmp(key, "log-format") == 0) {
    if (strcmp(val, "text") && strcmp(val, "json"))
      return dd_err_set(DD_EINVAL, "log-format: expected text or json, got '%s'", val);
    cfg->log_format = strcmp(val, "json") == 0 ? DD_LOG_JSON : DD_LOG_TEXT;
    return 0;
  }
  if (strcmp(key, "log-level") == 0) {
    dd_log_level l;
    if (dd_log_level_parse(val, &l) != 0)
      return dd_err_set(DD_EINVAL, "log-level: expected debug, info, warn or error, got '%s'", val);
    cfg->log_level = (int)l;
    return 0;
  }
  if (strcmp(key, "metrics-listen") == 0)
    return cfg_copy(cfg->metrics_listen, sizeof cfg->metrics_listen, key, val);
  if (strcmp(key, "restore-from") == 0)
    return cfg_copy(cfg->restore_from, sizeof cfg->restore_from, key, val);
  if (strcmp(key, "storage-ca-file") == 0)
    return cfg_copy(cfg->storage_ca_file, sizeof cfg->storage_ca_file, key, val);
  return 1;
}

/* The Spark forwarding options; 1 when key is not one of them. */
static int cfg_set_spark(dd_config *cfg, const char *key, const char *val) {
  long n = 0;
  int rc;
  if (strcmp(key, "spark-connect") == 0) {
    if (*val && strncmp(val, "sc://", 5))
      return dd_err_set(DD_EINVAL, "spark-connect: expected sc://host:port, got '%s'", val);
    return cfg_copy(cfg->spark_connect, sizeof cfg->spark_connect, key, val);
  }
  if (strcmp(key, "spark-forward") == 0)
    return cfg_copy(cfg->spark_forward, sizeof cfg->spark_forward, key, val);
  if (strcmp(key, "spark-forward-min-bytes") == 0) {
    if ((rc = cfg_int(&n, key, val, 0, LONG_MAX)) == 0) cfg->spark_forward_min_bytes = n;
    return rc;
  }
  if (strcmp(key, "spark-forward-timeout-s") == 0) {
    if ((rc = cfg_int(&n, key, val, 1, 7 * 24 * 3600)) == 0) cfg->spark_forward_timeout_s = n;
    return rc;
  }
  return 1;
}

/* The catalog options; 1 when key is not one of them. */
static int cfg_set_catalog(dd_config *cfg, const char *key, const char *val) {
  long n = 0;
  int rc;
  if (strcmp(key, "catalog") == 0) {
    if (*val && strncmp(val, "postgresql://", 13) && strncmp(val, "postgres://", 11))
      return dd_err_set(DD_EINVAL, "catalog: expected a postgresql:// URL, got '%s'", val);
    return cfg_copy(cfg->catalog, sizeof cfg->catalog, key, val);
  }
  if (strcmp(key, "catalog-schema") == 0)
    return cfg_copy(cfg->catalog_schema, sizeof cfg->catalog_schema, key, val);
  if (strcmp(key, "catalog-pool") == 0) {
    if ((rc = cfg_int(&n, key, val, 1, 256)) == 0) cfg->catalog_pool = (int)n;
    return rc;
  }
  if (strcmp(key, "catalog-cache") == 0) {
    if (strcmp(val, "check") && strcmp(val, "notify"))
      return dd_err_set(DD_EINVAL, "catalog-cache: expected check or notify, got '%s'", val);
    return cfg_copy(cfg->catalog_cache, sizeof cfg->catalog_cache, key, val);
  }
  if (strcmp(key, "secret-key-file") == 0)
    return cfg_copy(cfg->secret_key_file, sizeof cfg->secret_key_file, key, val);
  if (strcmp(key, "url-signing-key-file") == 0)
    return cfg_copy(cfg->url_key_file, sizeof cfg->url_key_file, key, val);
  return cfg_set_spark(cfg, key, val);
}

/* Applies one setting; key has no leading dashes. */
static int cfg_set(dd_config *cfg, const char *key, const char *val) {
  long n = 0;
  int rc = cfg_set_limit(cfg, key, val);
  if (rc != 1) return rc;
  if ((rc = cfg_set_obs(cfg, key, val)) != 1) return rc;
  if ((rc = cfg_set_catalog(cfg, key, val)) != 1) return rc;
  rc = 0;
  if (strncmp(key, "tls-", 4) == 0) return cfg_set_tls(cfg, key, val);
  if (strcmp(key, "data-dir") == 0) return cfg_copy(cfg->data_dir, sizeof cfg->data_dir, key, val);
  if (strcmp(key, "grpc-listen") == 0)
    return cfg_copy(cfg->grpc_listen, sizeof cfg->grpc_listen, key, val);
  if (strcmp(key, "http-listen") == 0)
    return cfg_copy(cfg->http_listen, sizeof cfg->http_listen, key, val);
  if (strcmp(key, "base-path") == 0) {
    if (val[0] != '/') return dd_err_set(DD_EINVAL, "base-path must start with '/'");
    return cfg_copy(cfg->base_path, sizeof cfg->base_path, key, val);
  }
  if (strcmp(key, "public-url") == 0)
    return cfg_copy(cfg->public_url, sizeof cfg->public_url, key, val);
  if (strcmp(key, "threads") == 0) {
    if ((rc = cfg_int(&n, key, val, 0, 256)) == 0) cfg->threads = (int)n;
    return rc;
  }
  if (strcmp(key, "http-threads") == 0) {
    if ((rc = cfg_int(&n, key, val, 0, 256)) == 0) cfg->http_threads = (int)n;
    return rc;
  }
  if (strcmp(key, "max-message-bytes") == 0) {
    if ((rc = cfg_int(&n, key, val, 1024, 1L << 30)) == 0) cfg->max_message_bytes = (size_t)n;
    return rc;
  }
  if (strcmp(key, "shutdown-grace-ms") == 0) {
    if ((rc = cfg_int(&n, key, val, 0, 600000)) == 0) cfg->shutdown_grace_ms = (int)n;
    return rc;
  }
  if (strcmp(key, "url-expiry-seconds") == 0) { /* Delta Sharing file URLs */
    if ((rc = cfg_int(&n, key, val, 1, 7 * 24 * 3600)) == 0) cfg->url_expiry_seconds = (int)n;
    return rc;
  }
  if (strcmp(key, "demo") == 0) {
    if (strcmp(val, "true") == 0 || strcmp(val, "1") == 0) cfg->demo = 1;
    else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0) cfg->demo = 0;
    else return dd_err_set(DD_EINVAL, "demo: expected true or false");
    return 0;
  }
  return dd_err_set(DD_EINVAL, "unknown option '%s' (see --help)", key);
}

static char *cfg_trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

static int cfg_read_file(dd_config *cfg, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return dd_err_set(DD_EINVAL, "cannot read config file %s: %s", path, strerror(errno));
  char *line = NULL; /* any length: getline grows it */
  size_t cap = 0;
  ssize_t len;
  int lineno = 0, rc = 0;
  while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    if (memchr(line, '\0', (size_t)len)) {
      rc = dd_err_set(DD_EINVAL, "%s:%d: NUL byte in the line", path, lineno);
      break;
    }
    char *s = cfg_trim(line);
    if (*s == '\0' || *s == '#') continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      rc = dd_err_set(DD_EINVAL, "%s:%d: expected `name = value`", path, lineno);
      break;
    }
    *eq = '\0';
    if ((rc = cfg_set(cfg, cfg_trim(s), cfg_trim(eq + 1))) != 0)
      rc = dd_err_wrap(rc, "%s:%d", path, lineno);
  }
  if (rc == 0 && ferror(f)) rc = dd_err_set(DD_EIO, "cannot read config file %s: %s", path, strerror(errno));
  free(line);
  fclose(f);
  return rc;
}

static void cfg_defaults(dd_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  strcpy(cfg->data_dir, "./data");
  strcpy(cfg->grpc_listen, "127.0.0.1:50051");
  strcpy(cfg->http_listen, "127.0.0.1:8080");
  strcpy(cfg->base_path, "/api/v1");
  cfg->max_message_bytes = 16u << 20;
  cfg->shutdown_grace_ms = 5000;
  cfg->url_expiry_seconds = 3600;
  cfg->log_format = DD_LOG_TEXT;
  cfg->log_level = DD_LOG_INFO;
  cfg->catalog_pool = 8;
  snprintf(cfg->catalog_cache, sizeof cfg->catalog_cache, "notify");
  cfg->spark_forward_timeout_s = 3600;
  cfg_limit_defaults(cfg);
}

int dd_config_load(dd_config *cfg, int argc, char **argv) {
  cfg_defaults(cfg);
  /* First pass: --help, --version, --config. */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      dd_config_usage();
      return 1;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("deltad %s\n", DELTAD_VERSION);
      return 1;
    }
    if (strcmp(argv[i], "--config") == 0) {
      if (i + 1 >= argc) return dd_err_set(DD_EINVAL, "--config needs a file");
      int rc = cfg_copy(cfg->config_file, sizeof cfg->config_file, "config", argv[i + 1]);
      if (!rc) rc = cfg_read_file(cfg, argv[i + 1]);
      if (rc) return rc;
    }
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--config") == 0) { i++; continue; }
    if (strncmp(a, "--", 2) != 0) return dd_err_set(DD_EINVAL, "unexpected argument '%s'", a);
    const char *key = a + 2;
    const char *eq = strchr(key, '=');
    char name[64];
    const char *val;
    if (eq) {
      size_t n = (size_t)(eq - key);
      if (n >= sizeof name) return dd_err_set(DD_EINVAL, "unknown option '%s'", a);
      memcpy(name, key, n);
      name[n] = '\0';
      val = eq + 1;
    } else {
      if (strlen(key) >= sizeof name) return dd_err_set(DD_EINVAL, "unknown option '%s'", a);
      strcpy(name, key);
      if (strcmp(name, "demo") == 0) val = "true";
      else if (i + 1 < argc) val = argv[++i];
      else return dd_err_set(DD_EINVAL, "--%s needs a value", name);
    }
    int rc = cfg_set(cfg, name, val);
    if (rc) return rc;
  }
  int rc = cfg_check_tls(cfg);
  if (rc) return rc;
  if (cfg->catalog[0] && (!cfg->secret_key_file[0] || !cfg->url_key_file[0]))
    return dd_err_set(DD_EINVAL, "--catalog %s needs --secret-key-file and "
                      "--url-signing-key-file (every replica must load the same keys)",
                      "postgresql://...");
  if (cfg->threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->threads = n > 0 ? (int)n : 2;
  }
  return 0;
}
