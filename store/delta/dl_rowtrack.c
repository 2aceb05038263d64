/* dl_rowtrack.c: fresh row ids and row commit versions of a commit (PROTOCOL.md "Row
 * Tracking", writer requirements), as dl_txn_commit assigns them at every attempt.
 *
 * When the table supports row tracking (writer feature rowTracking) and does not suspend
 * it (delta.rowTrackingSuspended), every add a writer made fresh (no baseRowId) gets
 * baseRowId = high-water mark + 1, the mark moving by the add's stats.numRecords, and
 * every add without defaultRowCommitVersion gets the version being written. The mark is
 * the `delta.rowTracking` domain's {"rowIdHighWaterMark": N} (-1 when none; written with
 * "domainName" too, as Delta writes it): the read
 * snapshot's, raised by concurrent winners' and by a domain action the caller put in the
 * commit; the commit carries the new mark in one domainMetadata action. Adds that keep
 * their rows' identity (a file re-added with a deletion vector, RESTORE, a shallow clone)
 * arrive with their baseRowId and defaultRowCommitVersion and are left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

int64_t dl__rt_hwm_parse(const char *configuration) {
  if (!configuration) return -1;
  json_t *j = json_loads(configuration, 0, NULL);
  int64_t v = dl__json_int(j, "rowIdHighWaterMark", -1);
  json_decref(j);
  return v;
}

int64_t dl__rt_snapshot_hwm(const dl_snapshot *s) {
  for (size_t i = 0; s && i < dl_snapshot_num_domains(s); i++) {
    const dl_domain *d = dl_snapshot_domain(s, i);
    if (!strcmp(d->domain, DL__RT_DOMAIN)) return dl__rt_hwm_parse(d->configuration);
  }
  return -1;
}

bool dl__rt_supported(const dl_protocol *p) {
  for (size_t i = 0; p->writer_features && i < p->num_writer_features; i++)
    if (!strcmp(p->writer_features[i], "rowTracking")) return true;
  return false;
}

/* The row tracking domain action of the commit (its body), or NULL. */
static json_t *domain_action(json_t *actions) {
  size_t i;
  json_t *a;
  json_array_foreach(actions, i, a) {
    json_t *d = json_object_get(a, "domainMetadata");
    const char *name = dl__json_str(d, "domain");
    if (name && !strcmp(name, DL__RT_DOMAIN)) return d;
  }
  return NULL;
}

static int num_records(const json_t *add, int64_t *out) {
  const char *stats = dl__json_str(add, "stats");
  dl_stats *st = NULL;
  *out = -1;
  if (stats && dl_stats_parse(&st, stats) == 0) *out = dl_stats_num_records(st);
  dl_stats_free(st);
  if (*out < 0)
    return dd_err_set(DD_EINVAL, "row tracking: the add of %s has no stats.numRecords to assign "
                      "row ids from", dl__json_str(add, "path"));
  return 0;
}

int dl__rt_assign(json_t *actions, const uint8_t *flags, size_t nflags, int64_t version,
                  int64_t hwm) {
  json_t *dom = domain_action(actions);
  if (dom && !json_is_true(json_object_get(dom, "removed"))) {
    int64_t h = dl__rt_hwm_parse(dl__json_str(dom, "configuration"));
    if (h > hwm) hwm = h;
  }
  int64_t next = hwm + 1;
  for (size_t i = 0; i < nflags && i < json_array_size(actions); i++) {
    if (!flags[i]) continue;
    json_t *add = json_object_get(json_array_get(actions, i), "add");
    if (!add) continue;
    if (flags[i] & DL__RT_FRESH_ID) {
      int64_t n;
      int rc = num_records(add, &n);
      if (rc) return rc;
      json_object_set_new(add, "baseRowId", json_integer(next));
      next += n;
    }
    if (flags[i] & DL__RT_FRESH_VERSION)
      json_object_set_new(add, "defaultRowCommitVersion", json_integer(version));
  }
  if (next - 1 <= hwm && !dom) return 0;
  char cfg[96];
  snprintf(cfg, sizeof cfg, "{\"rowIdHighWaterMark\":%lld,\"domainName\":\"" DL__RT_DOMAIN "\"}",
           (long long)(next - 1));
  if (dom) {
    json_object_set_new(dom, "configuration", json_string(cfg));
    json_object_set_new(dom, "removed", json_false());
    return 0;
  }
  json_t *o = json_pack("{s:{s:s,s:s,s:b}}", "domainMetadata", "domain", DL__RT_DOMAIN,
                        "configuration", cfg, "removed", 0);
  if (!o || json_array_append_new(actions, o)) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static bool prop_true(const dl_snapshot *s, const char *key) {
  const char *v = dl_snapshot_property(s, key);
  return v && !strcmp(v, "true");
}

bool dl_rowtrack_enabled(const dl_snapshot *s) {
  return dl__rt_supported(dl_snapshot_protocol(s)) && prop_true(s, "delta.enableRowTracking") &&
         !prop_true(s, "delta.rowTrackingSuspended") && dl_snapshot_property(s, DL_RT_ID_COLUMN_KEY) &&
         dl_snapshot_property(s, DL_RT_VERSION_COLUMN_KEY);
}
