/* deltad_obs.h: deltad's observability glue: the /metrics text (build info, the call core's
 * counters and the engine's), the optional token-less metrics listener, and what a SIGHUP
 * re-reads (the config file, log level and format; TLS is cmd/deltad_tls.c's). */
#ifndef DD_CMD_DELTAD_OBS_H
#define DD_CMD_DELTAD_OBS_H

#include "cmd/deltad_config.h"
#include "common/buf.h"
#include "server/call/call.h"
#include "server/http/native/metrics_rest.h"
#include "server/service/app.h"

typedef struct dd_obs {
  const dd_call_registry *reg; /* borrowed */
  dd_app *app;                 /* borrowed */
  int64_t start_s;             /* process start, epoch seconds */
  dd_native_metrics on_rest;   /* /metrics on the REST port: admin token */
  dd_native_metrics open;      /* /metrics on --metrics-listen: no token */
  dd_call_registry *empty_reg; /* the metrics listener serves no API methods */
  dd_http_server *http;        /* the metrics listener, NULL without --metrics-listen */
} dd_obs;

/* Fills o for reg and app (both must outlive it). */
void dd_obs_init(dd_obs *o, const dd_call_registry *reg, dd_app *app);
/* The whole /metrics text (a dd_native_metrics_fn; ctx is the dd_obs). */
int dd_obs_metrics(void *ctx, dd_buf *out);
/* Starts the token-less listener on cfg->metrics_listen (nothing when it is ""). */
int dd_obs_listen(dd_obs *o, const dd_config *cfg);
int dd_obs_port(const dd_obs *o); /* the listener's port, -1 without one */
void dd_obs_stop(dd_obs *o);      /* stops and frees the listener; accepts an idle o */

/* --restore-from: copies a backup (deltactl admin backup: catalog.mdb/data.mdb, secret.key,
 * url_signing.key) into cfg->data_dir, which must be absent or empty (DD_EEXISTS
 * otherwise: a restore never overwrites). Nothing when restore_from is "". */
int dd_obs_restore(const dd_config *cfg);

/* SIGHUP: reloads the config (file and the same flags) into *cfg: applies the log level
 * and format, keeps the TLS file names for the caller to reload, and logs every other
 * changed option as needing a restart (the running value stays). 0, or the parse error
 * (then nothing changes). */
int dd_obs_reload(dd_config *cfg, int argc, char **argv);

#endif
