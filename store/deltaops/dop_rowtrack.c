/* dop_rowtrack.c: turning row tracking on (PROTOCOL.md "Row Tracking", enablement), as
 * CREATE TABLE and ALTER TABLE SET TBLPROPERTIES delta.enableRowTracking=true do: the
 * configuration gets the materialized columns' names as Delta names them
 * (_row-id-col-<uuid>, _row-commit-version-col-<uuid>) unless it has them, and an ALTER of
 * a table with files re-adds (dataChange false) every active file without baseRowId or
 * defaultRowCommitVersion in the same commit, which assigns them (dl_txn_commit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/deltaops/dop_int.h"

static bool enabled(const char *config) {
  const char *v = NULL;
  return config && dl_kv_get(config, "delta.enableRowTracking", &v) && v && !strcasecmp(v, "true");
}

bool dop__rt_enables(const char *old_config, const char *new_config) {
  return enabled(new_config) && !enabled(old_config);
}

int dop__rt_names(char **config) {
  const char *v = NULL;
  if (!enabled(*config) || (dl_kv_get(*config, DL_RT_ID_COLUMN_KEY, &v) &&
                            dl_kv_get(*config, DL_RT_VERSION_COLUMN_KEY, &v)))
    return 0;
  size_t cap = 3;
  for (const char *c = *config, *k, *x; dl_kv_next(&c, &k, &x);) cap++;
  const char **ks = calloc(cap, sizeof *ks), **vs = calloc(cap, sizeof *vs);
  char id[64], ver[64], u[37];
  size_t n = 0;
  int rc = ks && vs ? 0 : DOP_OOM();
  for (const char *c = *config, *k, *x; !rc && dl_kv_next(&c, &k, &x);)
    if (strcmp(k, DL_RT_ID_COLUMN_KEY) && strcmp(k, DL_RT_VERSION_COLUMN_KEY)) ks[n] = k, vs[n++] = x;
  dl_uuid(u);
  snprintf(id, sizeof id, "_row-id-col-%s", u);
  dl_uuid(u);
  snprintf(ver, sizeof ver, "_row-commit-version-col-%s", u);
  char *out = NULL;
  if (!rc) {
    ks[n] = DL_RT_ID_COLUMN_KEY, vs[n++] = id;
    ks[n] = DL_RT_VERSION_COLUMN_KEY, vs[n++] = ver;
    rc = dl_kv_pack(&out, ks, vs, n);
  }
  free(ks);
  free(vs);
  if (!rc) free(*config), *config = out;
  return rc;
}

static int backfill_cb(void *ctx, const dl_file *f) {
  if (f->base_row_id >= 0 && f->default_row_commit_version >= 0) return 0;
  dl_file a = *f;
  a.data_change = false;
  a.base_row_id = -1; /* the commit gives every such file fresh ids */
  a.default_row_commit_version = -1;
  return dl_txn_add_file(ctx, &a);
}

int dop__rt_backfill(dl_txn *txn, const dl_snapshot *s) {
  return dl_snapshot_files(s, backfill_cb, txn);
}
