/* app_metrics.c: the engine's metrics in Prometheus' text format (dd_app_metrics_write):
 * the Delta snapshot cache, Delta commits and conflicts, object-store requests and the
 * LMDB catalog map. Each comes from its module's read-only counters. */
#include <string.h>

#include "common/metrics.h"
#include "server/service/app.h"
#include "server/service/connect_forward.h"
#include "store/catalog/cat_store.h"
#include "store/delta/dl.h"
#include "store/objstore/os.h"

static void app__gauge(dd_buf *b, const char *name, const char *type, const char *help, uint64_t v) {
  dd_metrics_head(b, name, type, help);
  dd_metrics_sample_u64(b, name, NULL, v);
}

static void app__cache(dd_buf *b, const dd_app *app) {
  dl_cache_stats st = dl_cache_stats_get(dd_app_delta_cache(app));
  app__gauge(b, "deltad_snapshot_cache_hits_total", "counter",
             "Snapshot cache lookups that found the table (brought up to date when it moved).", st.hits);
  app__gauge(b, "deltad_snapshot_cache_misses_total", "counter",
             "Snapshot cache lookups that loaded the table from its log.", st.misses);
  app__gauge(b, "deltad_snapshot_cache_entries", "gauge", "Tables in the snapshot cache.", st.entries);
  app__gauge(b, "deltad_snapshot_cache_bytes", "gauge",
             "Approximate memory held by the snapshot cache.", st.bytes);
}

static void app__objstore(dd_buf *b) {
  uint64_t n[OS_STATS_BACKENDS][OS_STATS_OUTCOMES];
  os_stats_get(n);
  dd_metrics_head(b, "deltad_objstore_requests_total", "counter",
                  "Object-store requests by backend and outcome.");
  for (int i = 0; i < OS_STATS_BACKENDS; i++)
    for (int o = 0; o < OS_STATS_OUTCOMES; o++) {
      if (!n[i][o]) continue;
      dd_buf l = {0};
      dd_metrics_label(&l, "backend", os_stats_backend_name(i));
      dd_metrics_label(&l, "outcome", os_stats_outcome_name(o));
      dd_metrics_sample_u64(b, "deltad_objstore_requests_total", l.p, n[i][o]);
      dd_buf_free(&l);
    }
}

static void app__objstore_http(dd_buf *b) {
  os_http_stats h;
  os_http_stats_get(&h);
  app__gauge(b, "deltad_objstore_http_requests_total", "counter",
             "HTTP requests sent to object stores and identity endpoints (retries included).",
             h.requests);
  app__gauge(b, "deltad_objstore_http_received_bytes_total", "counter",
             "Body bytes received from object stores.", h.bytes_in);
  app__gauge(b, "deltad_objstore_http_sent_bytes_total", "counter",
             "Body bytes sent to object stores.", h.bytes_out);
}

int dd_app_metrics_write(dd_app *app, dd_buf *b) {
  app__cache(b, app);
  dl_commit_stats cs = dl_commit_stats_get();
  app__gauge(b, "deltad_delta_commits_total", "counter", "Delta commits written.", cs.commits);
  app__gauge(b, "deltad_delta_commit_conflicts_total", "counter",
             "Delta commits refused because a concurrent commit conflicted.", cs.conflicts);
  app__objstore(b);
  app__objstore_http(b);
  if (connect_forward_enabled()) connect_forward_metrics_write(b);
  uint64_t map = 0, used = 0;
  int rc = cat_store_map_usage(dd_app_store(app), &map, &used);
  app__gauge(b, "deltad_catalog_postgresql", "gauge",
             "1 when the catalog is on PostgreSQL (no LMDB gauges then), 0 on LMDB.",
             strcmp(cat_store_backend(dd_app_store(app)), "postgresql") == 0);
  if (rc == DD_EUNSUPPORTED) rc = 0; /* PostgreSQL: no map to report */
  else if (!rc) {
    app__gauge(b, "deltad_lmdb_map_size_bytes", "gauge", "Size of the catalog's LMDB map.", map);
    app__gauge(b, "deltad_lmdb_used_bytes", "gauge", "Bytes of the LMDB map in use (pages up to the last).", used);
  }
  return rc ? rc : b->oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}
