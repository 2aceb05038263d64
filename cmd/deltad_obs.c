/* deltad_obs.c: /metrics text, the metrics listener and SIGHUP's config reload (see
 * deltad_obs.h). */
#include "cmd/deltad_obs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/version.h"
#include "common/log.h"
#include "common/metrics.h"
#include "server/http/http_server.h"

void dd_obs_init(dd_obs *o, const dd_call_registry *reg, dd_app *app) {
  memset(o, 0, sizeof *o);
  o->reg = reg;
  o->app = app;
  o->start_s = (int64_t)time(NULL);
  o->on_rest = (dd_native_metrics){.fn = dd_obs_metrics, .ctx = o, .require_admin = true};
  o->open = (dd_native_metrics){.fn = dd_obs_metrics, .ctx = o, .require_admin = false};
}

int dd_obs_metrics(void *ctx, dd_buf *out) {
  dd_obs *o = ctx;
  dd_metrics_head(out, "deltad_build_info", "gauge", "The running deltad's version (value 1).");
  dd_buf l = {0};
  dd_metrics_label(&l, "version", DELTAD_VERSION);
  dd_metrics_label(&l, "compiler", __VERSION__);
  dd_metrics_sample_u64(out, "deltad_build_info", l.p, 1);
  dd_buf_free(&l);
  dd_metrics_head(out, "deltad_process_start_time_seconds", "gauge", "Start of the process, Unix time.");
  dd_metrics_sample_u64(out, "deltad_process_start_time_seconds", NULL, (uint64_t)o->start_s);
  int rc = dd_call_metrics_write(o->reg, out);
  if (!rc) rc = dd_app_metrics_write(o->app, out);
  return rc;
}

int dd_obs_listen(dd_obs *o, const dd_config *cfg) {
  if (!cfg->metrics_listen[0]) return 0;
  int rc = dd_call_registry_new(&o->empty_reg, NULL, 0, NULL, NULL);
  dd_http_opts hopts = DD_HTTP_OPTS_INIT;
  hopts.listen = cfg->metrics_listen;
  hopts.shutdown_grace_ms = 1000;
  hopts.max_connections = 64;
  if (!rc) rc = dd_http_server_new(&o->http, &hopts, o->empty_reg);
  if (!rc) rc = dd_native_metrics_register(o->http, &o->open);
  if (!rc) rc = dd_http_server_start(o->http);
  if (rc) dd_err_wrap(rc, "metrics-listen %s", cfg->metrics_listen);
  return rc;
}

int dd_obs_port(const dd_obs *o) { return o->http ? dd_http_server_port(o->http) : -1; }

void dd_obs_stop(dd_obs *o) {
  if (o->http) {
    dd_http_server_drain(o->http);
    dd_http_server_stop(o->http);
    dd_http_server_free(o->http);
  }
  dd_call_registry_free(o->empty_reg);
  o->http = NULL;
  o->empty_reg = NULL;
}

/* ---- restore ---- */

static int obs__copy(const char *from, const char *to, bool optional) {
  int in = open(from, O_RDONLY);
  if (in < 0 && optional && errno == ENOENT) return 0;
  if (in < 0) return dd_err_set(DD_EIO, "restore: open %s: %s", from, strerror(errno));
  int out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
  int rc = out < 0 ? dd_err_set(DD_EIO, "restore: create %s: %s", to, strerror(errno)) : 0;
  char buf[1 << 16];
  ssize_t n;
  while (!rc && (n = read(in, buf, sizeof buf)) != 0) {
    if (n < 0 || write(out, buf, (size_t)n) != n) rc = dd_err_set(DD_EIO, "restore: copy %s: %s", from, strerror(errno));
  }
  if (!rc && fsync(out) != 0) rc = dd_err_set(DD_EIO, "restore: sync %s: %s", to, strerror(errno));
  if (out >= 0) close(out);
  close(in);
  return rc;
}

static int obs__empty_dir(const char *dir) {
  if (mkdir(dir, 0700) == 0) return 0;
  if (errno != EEXIST) return dd_err_set(DD_EIO, "restore: create %s: %s", dir, strerror(errno));
  DIR *d = opendir(dir);
  if (!d) return dd_err_set(DD_EIO, "restore: open %s: %s", dir, strerror(errno));
  struct dirent *e;
  bool found = false;
  while (!found && (e = readdir(d))) found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return found ? dd_err_set(DD_EEXISTS, "restore: data directory %s is not empty; restore into a new one", dir) : 0;
}

int dd_obs_restore(const dd_config *cfg) {
  if (!cfg->restore_from[0]) return 0;
  if (cfg->catalog[0])
    return dd_err_set(DD_EINVAL, "restore: the catalog is on PostgreSQL (--catalog): restore "
                      "it with pg_restore or psql from a pg_dump; --restore-from is for LMDB");
  const char *b = cfg->restore_from, *d = cfg->data_dir;
  char from[2200], to[2200];
  snprintf(from, sizeof from, "%s/catalog.mdb/data.mdb", b);
  if (access(from, R_OK) != 0)
    return dd_err_set(DD_EINVAL, "restore: %s is not a backup (no catalog.mdb/data.mdb)", b);
  int rc = obs__empty_dir(d);
  snprintf(to, sizeof to, "%s/catalog.mdb", d);
  if (!rc && mkdir(to, 0700) != 0) rc = dd_err_set(DD_EIO, "restore: create %s: %s", to, strerror(errno));
  snprintf(to, sizeof to, "%s/catalog.mdb/data.mdb", d);
  if (!rc) rc = obs__copy(from, to, false);
  static const char *const keys[] = {"secret.key", "url_signing.key"};
  for (int i = 0; !rc && i < 2; i++) {
    snprintf(from, sizeof from, "%s/%s", b, keys[i]);
    snprintf(to, sizeof to, "%s/%s", d, keys[i]);
    rc = obs__copy(from, to, i == 1);
  }
  if (!rc) printf("deltad: restored the backup %s into %s\n", b, d);
  return rc;
}

/* ---- SIGHUP ---- */

/* The options a running server cannot change: a new value is logged and ignored. */
static void obs__fixed(const dd_config *now, const dd_config *next) {
  static const struct {
    const char *name;
    size_t off, len;
  } fixed[] = {
#define OBS_F(n, f) {n, offsetof(dd_config, f), sizeof(((dd_config *)0)->f)}
      OBS_F("data-dir", data_dir),           OBS_F("grpc-listen", grpc_listen),
      OBS_F("http-listen", http_listen),     OBS_F("base-path", base_path),
      OBS_F("public-url", public_url),       OBS_F("threads", threads),
      OBS_F("http-threads", http_threads),   OBS_F("max-message-bytes", max_message_bytes),
      OBS_F("metrics-listen", metrics_listen), OBS_F("url-expiry-seconds", url_expiry_seconds),
      OBS_F("max-requests", req_max_requests), OBS_F("audit-retention-days", audit_retention_days),
      OBS_F("tls-client-auth", tls_client_auth), OBS_F("catalog", catalog),
      OBS_F("catalog-schema", catalog_schema), OBS_F("catalog-pool", catalog_pool),
      OBS_F("catalog-cache", catalog_cache),
      OBS_F("secret-key-file", secret_key_file), OBS_F("url-signing-key-file", url_key_file),
#undef OBS_F
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (memcmp((const char *)now + fixed[i].off, (const char *)next + fixed[i].off, fixed[i].len))
      dd_log(DD_LOG_WARN, "SIGHUP: %s changed in the configuration; it cannot be reloaded: "
                          "restart deltad to apply it (the running value stays)", fixed[i].name);
}

int dd_obs_reload(dd_config *cfg, int argc, char **argv) {
  dd_config next;
  int rc = dd_config_load(&next, argc, argv);
  if (rc) {
    dd_log(DD_LOG_ERROR, "SIGHUP: the configuration does not load, nothing changed: %s", dd_err_msg());
    return rc;
  }
  obs__fixed(cfg, &next);
  if (next.log_level != cfg->log_level || next.log_format != cfg->log_format)
    dd_log(DD_LOG_WARN, "SIGHUP: log level %s, format %s", dd_log_level_name((dd_log_level)next.log_level),
           next.log_format == DD_LOG_JSON ? "json" : "text");
  dd_log_set_format((dd_log_format)next.log_format);
  dd_log_set_level((dd_log_level)next.log_level);
  cfg->log_level = next.log_level;
  cfg->log_format = next.log_format;
  if (!cfg->tls_cert_file[0] != !next.tls_cert_file[0]) {
    dd_log(DD_LOG_WARN, "SIGHUP: turning TLS %s cannot be reloaded: restart deltad to apply it",
           cfg->tls_cert_file[0] ? "off" : "on");
    return 0;
  }
  memcpy(cfg->tls_cert_file, next.tls_cert_file, sizeof cfg->tls_cert_file);
  memcpy(cfg->tls_key_file, next.tls_key_file, sizeof cfg->tls_key_file);
  memcpy(cfg->tls_client_ca_file, next.tls_client_ca_file, sizeof cfg->tls_client_ca_file);
  return 0;
}
