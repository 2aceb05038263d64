/* deltad_config.h: the server's configuration: defaults, the config file, and flags.
 * Precedence: built-in defaults < config file (--config) < command-line flags. */
#ifndef DD_CMD_DELTAD_CONFIG_H
#define DD_CMD_DELTAD_CONFIG_H

#include <stddef.h>

#include "common/tls.h"

typedef struct dd_config {
  char data_dir[1024];
  char grpc_listen[256];
  char http_listen[256];
  char base_path[128];
  char public_url[512];   /* "" = derived from http_listen */
  int threads;            /* gRPC worker threads; 0 = number of cores */
  int http_threads;       /* REST: 0 = a thread per connection (fastest), N = epoll pool */
  size_t max_message_bytes;
  int demo;               /* create the demo catalog and table on start */
  int shutdown_grace_ms;
  int url_expiry_seconds; /* Delta Sharing file URLs (default 3600) */
  /* TLS on both ports (cmd/deltad_tls.c reads the files); "" = off */
  char tls_cert_file[1024];
  char tls_key_file[1024];
  char tls_client_ca_file[1024];
  dd_tls_client_auth tls_client_auth;
  /* request limits (server/call/req_guard.h) */
  long req_max_depth, req_max_elements, req_max_memory, req_max_requests, req_max_per_principal;
  /* Connection limits and timeouts (cfg_limits in deltad_config.c; 0 = none), in seconds. */
  long http_idle_timeout_s, http_header_timeout_s, http_body_timeout_s;
  long http_max_connections, http_max_connections_per_ip;
  long grpc_keepalive_time_s, grpc_keepalive_timeout_s, grpc_handshake_timeout_s;
  long grpc_max_connection_idle_s, grpc_max_connection_age_s, grpc_max_connection_age_grace_s;
  long grpc_max_concurrent_streams;
  /* Observability and operations (docs/configuration.md, docs/operations.md) */
  int log_format;            /* dd_log_format: text (default) or json */
  int log_level;             /* dd_log_level: info by default */
  char metrics_listen[256];  /* "" = /metrics only on the REST port, behind the admin token */
  long audit_retention_days; /* audit events older than this are purged (default 90) */
  long managed_retention_s;  /* a dropped MANAGED table's data is kept this long (7 days) */
  char restore_from[1024];   /* a backup directory to restore into data_dir before start */
  /* The catalog on PostgreSQL (docs/scaling.md); "" = LMDB in data_dir */
  char catalog[1024];          /* postgresql://user@host:port/db?libpq-options */
  char catalog_schema[128];    /* schema of the deltad_* tables; "" = search_path */
  int catalog_pool;            /* connections per process (default 8) */
  char catalog_cache[16];      /* "notify" (default): trust the generation LISTEN/NOTIFY
                                * pushes; "check": one round trip per read view */
  char secret_key_file[1024];  /* shared keys of replicas; "" = data_dir/secret.key ... */
  char url_key_file[1024];     /* ... and data_dir/url_signing.key */
  char config_file[1024];    /* --config, re-read on SIGHUP */
  char storage_ca_file[1024]; /* CA bundle for object-store and identity endpoints ("" = system's) */
  /* Forwarding Delta Connect work to Spark (docs/scaling.md); "" = off */
  char spark_connect[512];         /* sc://host:port */
  char spark_forward[256];         /* optimize,delete,update,merge,vacuum,scan or all ("" = all) */
  long long spark_forward_min_bytes; /* only tables whose snapshot is larger (0 = any) */
  long spark_forward_timeout_s;    /* deadline of a forwarded call (default 3600) */
} dd_config;

/* Fills *cfg with defaults, then the config file named by --config (if any), then flags.
 * Returns 0, 1 when --help/--version was printed (caller exits 0), or DD_EINVAL. */
int dd_config_load(dd_config *cfg, int argc, char **argv);
/* The --help text. */
void dd_config_usage(void);

#endif
