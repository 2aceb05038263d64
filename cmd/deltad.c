/* deltad.c: the server's main: reads the configuration, opens the application (LMDB store,
 * keys, admin token), starts the gRPC and REST transports on the same method table, prints
 * where they listen, and on SIGINT/SIGTERM shuts down gracefully (stop accepting, finish
 * in-flight calls, flush LMDB) and exits 0. SIGHUP re-reads the config file (log level and
 * format apply at once; other changes are logged as needing a restart) and, with TLS
 * configured, the certificate, key and client CA files; a reload that fails keeps the old
 * ones. Open connections and calls are not touched. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/deltad_config.h"
#include "cmd/deltad_forward.h"
#include "cmd/deltad_demo.h"
#include "cmd/deltad_obs.h"
#include "common/mem.h"
#include "common/log.h"
#include "cmd/deltad_tls.h"
#include "common/err.h"
#include "server/call/call.h"
#include "server/grpc/grpc_server.h"
#include "server/http/http_server.h"
#include "server/http/native/health_rest.h"
#include "server/http/native/lance_rest.h"
#include "server/http/native/sharing_rest.h"
#include "server/service/app.h"
#include "server/service/auth.h"
#include "store/catalog/cat_store.h"
#include "store/objstore/os_remote.h"
#include "server/call/req_guard.h"

static void main_host_of(char *out, size_t cap, const char *listen) {
  const char *colon = strrchr(listen, ':');
  size_t n = colon ? (size_t)(colon - listen) : strlen(listen);
  if (n >= cap) n = cap - 1;
  memcpy(out, listen, n);
  out[n] = '\0';
  if (strcmp(out, "0.0.0.0") == 0 || out[0] == '\0') snprintf(out, cap, "127.0.0.1");
}

/* ---- TLS ---- */

static const char *main_client_auth_name(dd_tls_client_auth a) {
  return a == DD_TLS_CLIENT_REQUIRE ? "required" : a == DD_TLS_CLIENT_OPTIONAL ? "optional" : "not asked for";
}

/* SIGHUP: re-reads the TLS files and hands them to both transports (REST first: it parses
 * them again with GnuTLS and can still refuse them; gRPC's swap does not fail). */
static void main_reload_tls(const dd_config *cfg, dd_http_server *http, dd_grpc_server *grpc) {
  if (!cfg->tls_cert_file[0]) {
    printf("deltad: SIGHUP received; TLS is not configured, nothing to reload\n");
    fflush(stdout);
    return;
  }
  dd_tls_files *f = NULL;
  int rc = dd_tls_files_load(&f, cfg);
  if (!rc) rc = dd_http_server_set_tls(http, &f->pem);
  if (!rc) rc = dd_grpc_server_set_tls(grpc, &f->pem);
  if (rc)
    fprintf(stderr, "deltad: SIGHUP: TLS reload failed, the current certificate stays: %s\n", dd_err_msg());
  else
    printf("deltad: SIGHUP: TLS certificate reloaded (serial %s, expires %s)\n", f->serial, f->not_after);
  fflush(stdout);
  fflush(stderr);
  dd_tls_files_free(f);
}

/* Connection limits and timeouts: the config's seconds into each transport's options. */
static void main_http_limits(dd_http_opts *o, const dd_config *cfg) {
  o->idle_timeout_s = (int)cfg->http_idle_timeout_s;
  o->header_timeout_s = (int)cfg->http_header_timeout_s;
  o->body_timeout_s = (int)cfg->http_body_timeout_s;
  o->max_connections = (unsigned)cfg->http_max_connections;
  o->max_connections_per_ip = (unsigned)cfg->http_max_connections_per_ip;
}

/* Options are at most 1,000,000 s (cfg_limits), so the product fits; saturate anyway. */
static int main_ms(long seconds) { return seconds > INT_MAX / 1000 ? INT_MAX : (int)seconds * 1000; }

static void main_grpc_limits(dd_grpc_opts *o, const dd_config *cfg) {
  o->keepalive_time_ms = main_ms(cfg->grpc_keepalive_time_s);
  o->keepalive_timeout_ms = main_ms(cfg->grpc_keepalive_timeout_s);
  o->handshake_timeout_ms = main_ms(cfg->grpc_handshake_timeout_s);
  o->max_connection_idle_ms = main_ms(cfg->grpc_max_connection_idle_s);
  o->max_connection_age_ms = main_ms(cfg->grpc_max_connection_age_s);
  o->max_connection_age_grace_ms = main_ms(cfg->grpc_max_connection_age_grace_s);
  o->max_concurrent_streams = (int)cfg->grpc_max_concurrent_streams;
}

/* /readyz: both ports serve (set once the gRPC server started, cleared when draining),
 * the catalog opens a read view, and the keys are in place (secret.key, url_signing.key:
 * 32 bytes each, owner-only: what the next start would load). */
typedef struct main_ready {
  atomic_int serving;
  dd_app *app;
  const dd_config *cfg;
} main_ready;

static int main_keys_check(const dd_config *cfg) {
  static const char *const keys[] = {"secret.key", "url_signing.key"};
  const char *files[] = {cfg->secret_key_file, cfg->url_key_file};
  for (int i = 0; i < 2; i++) {
    char path[2048];
    struct stat st;
    if (files[i][0]) snprintf(path, sizeof path, "%s", files[i]);
    else snprintf(path, sizeof path, "%s/%s", cfg->data_dir, keys[i]);
    if (stat(path, &st) != 0) return dd_err_set(DD_EIO, "key %s: %s", keys[i], strerror(errno));
    if (st.st_size != 32 || (st.st_mode & 077))
      return dd_err_set(DD_EIO, "key %s: not 32 bytes readable by its owner only", keys[i]);
  }
  return 0;
}

static int main_ready_check(void *ctx) {
  main_ready *r = ctx;
  if (!atomic_load(&r->serving)) return dd_err_set(DD_EIO, "not serving (starting or shutting down)");
  cat_view *v = NULL;
  int rc = cat_view_open(dd_app_store(r->app), &v);
  if (v) cat_view_close(v);
  if (rc) return dd_err_set(rc, "catalog: %s", dd_err_msg());
  return main_keys_check(r->cfg);
}

static int main_run(dd_config *cfg, const sigset_t *sigs, int argc, char **argv) {
  static dd_obs obs; /* outlives both HTTP servers: read by their threads */
  dd_app *app = NULL;
  static main_ready ready; /* outlives the HTTP server: read by its threads */
  dd_grpc_server *grpc = NULL;
  dd_http_server *http = NULL;
  dd_call_registry *reg = NULL;
  char *token_path = NULL;
  dd_tls_files *tls = NULL;
  char host[256], public_url[600];
  int rc;

  if ((rc = dd_tls_files_load(&tls, cfg)) != 0) goto cleanup; /* before anything opens */
  if ((rc = dd_obs_restore(cfg)) != 0) goto cleanup;           /* --restore-from */
  if ((rc = os_set_ca_file(cfg->storage_ca_file)) != 0) goto cleanup;
  main_host_of(host, sizeof host, cfg->http_listen);
  dd_app_opts aopts = DD_APP_OPTS_INIT;
  aopts.data_dir = cfg->data_dir;
  aopts.public_url = cfg->public_url[0] ? cfg->public_url : NULL;
  aopts.base_path = cfg->base_path;
  aopts.url_expiry_seconds = cfg->url_expiry_seconds;
  aopts.audit_retention_days = (int)cfg->audit_retention_days;
  aopts.managed_retention_s = cfg->managed_retention_s;
  aopts.catalog_url = cfg->catalog[0] ? cfg->catalog : NULL;
  aopts.catalog_schema = cfg->catalog_schema;
  aopts.catalog_pool = cfg->catalog_pool;
  aopts.catalog_push = strcmp(cfg->catalog_cache, "notify") == 0;
  aopts.secret_key_file = cfg->secret_key_file;
  aopts.url_key_file = cfg->url_key_file;
  rg_limits limits = {(unsigned)cfg->req_max_depth, (size_t)cfg->req_max_elements,
                      (size_t)cfg->req_max_memory, (unsigned)cfg->req_max_requests,
                      (unsigned)cfg->req_max_per_principal};
  if ((rc = rg_configure(&limits)) != 0) goto cleanup;
  if ((rc = dd_app_open(&app, &aopts, &token_path)) != 0) goto cleanup;
  if ((rc = dd_forward_start(cfg)) != 0) goto cleanup; /* --spark-connect */
  size_t n_methods = 0;
  const dd_method *methods = dd_app_methods(&n_methods);
  if ((rc = dd_call_registry_new(&reg, methods, n_methods, app, dd_app_auth)) != 0) goto cleanup;
  dd_call_registry_set_observer(reg, dd_app_audit_observe); /* the audit log */
  dd_call_registry_set_view_ops(reg, &dd_auth_view_ops);   /* one read view per call */
  dd_call_registry_set_pre_observer(reg, dd_app_audit_before); /* ... in the change's txn */
  if (cfg->demo && (rc = dd_demo_setup(reg, cfg->data_dir)) != 0) goto cleanup;
  dd_http_opts hopts = DD_HTTP_OPTS_INIT;
  hopts.listen = cfg->http_listen;
  hopts.base_path = cfg->base_path;
  hopts.threads = cfg->http_threads;
  hopts.max_body_bytes = cfg->max_message_bytes;
  hopts.shutdown_grace_ms = cfg->shutdown_grace_ms;
  hopts.tls = tls ? &tls->pem : NULL;
  main_http_limits(&hopts, cfg);
  if ((rc = dd_http_server_new(&http, &hopts, reg)) != 0) goto cleanup;
  if ((rc = dd_native_lance_register(http)) != 0) goto cleanup; /* Lance Namespace REST */
  if ((rc = dd_native_sharing_register(http, cfg->base_path)) != 0) goto cleanup;
  ready.app = app;
  ready.cfg = cfg;
  if ((rc = dd_native_health_register(http, main_ready_check, &ready)) != 0) goto cleanup;
  dd_obs_init(&obs, reg, app);
  if ((rc = dd_native_metrics_register(http, &obs.on_rest)) != 0) goto cleanup;
  /* the public URL is set before the first request can arrive: handlers read it */
  if ((rc = dd_http_server_bind(http)) != 0) goto cleanup;
  if (cfg->public_url[0]) {
    snprintf(public_url, sizeof public_url, "%s", cfg->public_url);
  } else {
    snprintf(public_url, sizeof public_url, "%s://%s:%d", tls ? "https" : "http", host,
             dd_http_server_port(http));
    dd_app_set_public_url(app, public_url);
  }
  if ((rc = dd_http_server_start(http)) != 0) goto cleanup;

  dd_grpc_opts gopts = DD_GRPC_OPTS_INIT;
  gopts.listen = cfg->grpc_listen;
  gopts.threads = cfg->threads;
  gopts.max_message_bytes = cfg->max_message_bytes;
  gopts.shutdown_grace_ms = cfg->shutdown_grace_ms;
  gopts.tls = tls ? &tls->pem : NULL;
  main_grpc_limits(&gopts, cfg);
  if ((rc = dd_grpc_server_start(&grpc, &gopts, reg)) != 0) goto cleanup;
  if ((rc = dd_obs_listen(&obs, cfg)) != 0) goto cleanup;
  atomic_store(&ready.serving, 1);

  printf("deltad: gRPC listening on %s:%d\n", host, dd_grpc_server_port(grpc));
  printf("deltad: REST listening on %s%s\n", public_url, cfg->base_path);
  if (dd_obs_port(&obs) >= 0) {
    char mhost[256];
    main_host_of(mhost, sizeof mhost, cfg->metrics_listen);
    printf("deltad: metrics listening on http://%s:%d/metrics\n", mhost, dd_obs_port(&obs));
  }
  if (tls)
    printf("deltad: TLS on both ports (certificate serial %s, expires %s; client certificates %s)\n",
           tls->serial, tls->not_after, main_client_auth_name(cfg->tls_client_auth));
  if (tls && strncmp(cfg->public_url, "http://", 7) == 0)
    fprintf(stderr, "deltad: warning: TLS is on but public-url is http://: profiles and file URLs "
                    "will point clients at a plaintext address\n");
  dd_tls_files_free(tls); /* the transports keep copies */
  tls = NULL;
  printf("deltad: data directory %s\n", cfg->data_dir);
  printf("deltad: catalog on %s\n", cat_store_backend(dd_app_store(app)));
  if (token_path)
    printf("deltad: admin token written to %s (mode 0600)\n", token_path);
  else if (dd_app_admin_token_from_env(app))
    printf("deltad: admin token taken from DELTAD_ADMIN_TOKEN\n");
  else
    printf("deltad: admin token kept from an earlier start (%s/admin.token when it was "
           "generated)\n", cfg->data_dir);
  printf("deltad: ready\n");
  fflush(stdout);

  int sig = 0;
  while (sigwait(sigs, &sig) == 0 && sig == SIGHUP) {
    dd_log(DD_LOG_INFO, "SIGHUP received: reloading the configuration, log level and TLS files");
    if (dd_obs_reload(cfg, argc, argv) == 0) main_reload_tls(cfg, http, grpc);
  }
  /* Both ports stop taking new calls at the same moment; in-flight ones share one grace. */
  atomic_store(&ready.serving, 0);
  dd_http_server_drain(http);
  dd_grpc_server_drain(grpc);
  printf("deltad: %s received, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  fflush(stdout);

cleanup:
  dd_obs_stop(&obs);
  dd_http_server_drain(http);
  dd_grpc_server_drain(grpc);
  dd_grpc_server_shutdown(grpc);
  dd_http_server_stop(http);
  dd_grpc_server_free(grpc);
  dd_http_server_free(http);
  dd_call_registry_free(reg);
  dd_forward_stop();
  dd_app_close(app);
  dd_tls_files_free(tls);
  free(token_path);
  return rc;
}

int main(int argc, char **argv) {
  dd_mem_tune();
  dd_config cfg;
  int rc = dd_config_load(&cfg, argc, argv);
  if (rc == 1) return 0;
  if (rc != 0) {
    fprintf(stderr, "deltad: %s\n", dd_err_msg());
    return 2;
  }
  /* Block the stop and reload signals in every thread; main waits for them with sigwait. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP); /* reloads the config file, log level and TLS files */
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);

  dd_log_set_format((dd_log_format)cfg.log_format);
  dd_log_set_level((dd_log_level)cfg.log_level);
  dd_log_start_async(); /* request lines cost a copy; flushed at exit */
  rc = main_run(&cfg, &sigs, argc, argv);
  dd_log_flush();
  if (rc != 0) {
    fprintf(stderr, "deltad: %s\n", dd_err_msg());
    return 1;
  }
  printf("deltad: stopped\n");
  return 0;
}
