/* dop_props.c: table properties as Delta on Spark checks and applies them: the delta.* keys
 * it knows and their value rules (dop__check_property), the protocol a property needs
 * (dop__apply_properties: change data feed, deletion vectors, column mapping, ...), and
 * ALTER TABLE ... SET / UNSET TBLPROPERTIES (a metaData commit, with a protocol action
 * when a property needs a higher one, operation "SET TBLPROPERTIES" / "UNSET TBLPROPERTIES"
 * with Delta's parameters). Keys outside delta.* are free-form. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/deltaops/dop_int.h"

typedef enum { V_ANY, V_BOOL, V_POS_INT, V_INT_MIN1, V_INTERVAL, V_MODE, V_LEVEL, V_POLICY } value_rule;

/* The delta.* table properties Delta knows (DeltaConfigs), with the rule for each value. */
static const struct {
  const char *key;
  value_rule rule;
} KNOWN[] = {
    {"delta.appendOnly", V_BOOL},
    {"delta.autoOptimize.autoCompact", V_ANY},
    {"delta.autoOptimize.optimizeWrite", V_BOOL},
    {"delta.checkpoint.writeStatsAsJson", V_BOOL},
    {"delta.checkpoint.writeStatsAsStruct", V_BOOL},
    {"delta.checkpointInterval", V_POS_INT},
    {"delta.checkpointPolicy", V_POLICY},
    {"delta.checkpointRetentionDuration", V_INTERVAL},
    {"delta.columnMapping.maxColumnId", V_ANY},
    {"delta.columnMapping.mode", V_MODE},
    {"delta.compatibility.symlinkFormatManifest.enabled", V_BOOL},
    {"delta.dataSkippingNumIndexedCols", V_INT_MIN1},
    {"delta.dataSkippingStatsColumns", V_ANY},
    {"delta.deletedFileRetentionDuration", V_INTERVAL},
    {"delta.enableChangeDataFeed", V_BOOL},
    {"delta.enableDeletionVectors", V_BOOL},
    {"delta.enableExpiredLogCleanup", V_BOOL},
    {"delta.enableIcebergCompatV1", V_BOOL},
    {"delta.enableIcebergCompatV2", V_BOOL},
    {"delta.enableInCommitTimestamps", V_BOOL},
    {"delta.enableRowTracking", V_BOOL},
    {"delta.enableTypeWidening", V_BOOL},
    {"delta.isolationLevel", V_LEVEL},
    {"delta.logRetentionDuration", V_INTERVAL},
    {"delta.minReaderVersion", V_POS_INT},
    {"delta.minWriterVersion", V_POS_INT},
    {"delta.randomPrefixLength", V_POS_INT},
    {"delta.randomizeFilePrefixes", V_BOOL},
    {"delta.setTransactionRetentionDuration", V_INTERVAL},
    {"delta.targetFileSize", V_ANY},
    {"delta.tuneFileSizesForRewrites", V_BOOL},
    {"delta.universalFormat.enabledFormats", V_ANY},
};

static int bad_value(const char *why) {
  return dd_err_set(DD_EINVAL, "[UNSUPPORTED_TABLE_CHANGE] Unsupported table change: %s", why);
}

static bool whole_number(const char *v, long long *out) {
  char *end = NULL;
  while (isspace((unsigned char)*v)) v++;
  long long n = strtoll(v, &end, 10);
  if (end == v || *end) return false;
  *out = n;
  return true;
}

int dop__check_property(const char *key, const char *value) {
  if (strncasecmp(key, "delta.", 6) || !strncmp(key, "delta.feature.", 14) || !strncmp(key, "delta.constraints.", 18))
    return 0;
  for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++) {
    if (strcasecmp(key, KNOWN[i].key)) continue;
    char why[320];
    long long n = 0;
    int64_t ms;
    switch (KNOWN[i].rule) {
      case V_BOOL:
        if (strcasecmp(value, "true") && strcasecmp(value, "false")) {
          snprintf(why, sizeof why, "For input string: \"%.200s\"", value);
          return bad_value(why);
        }
        return 0;
      case V_POS_INT:
      case V_INT_MIN1:
        if (!whole_number(value, &n) || (KNOWN[i].rule == V_POS_INT ? n <= 0 : n < -1)) {
          snprintf(why, sizeof why, "requirement failed: %s needs to be %s", KNOWN[i].key,
                   KNOWN[i].rule == V_POS_INT ? "a positive integer" : "larger than or equal to -1");
          return bad_value(why);
        }
        return 0;
      case V_INTERVAL:
        if (dop_parse_interval_ms(value, &ms) || ms < 0)
          return dd_err_set(DD_EINVAL, "[DELTA_INVALID_INTERVAL] %s is not a valid INTERVAL.", value);
        return 0;
      case V_MODE:
        if (strcasecmp(value, "none") && strcasecmp(value, "name") && strcasecmp(value, "id"))
          return dd_err_set(DD_EINVAL, "[DELTA_MODE_NOT_SUPPORTED] Specified mode '%s' is not supported. "
                            "Supported modes are: none, name, id", value);
        return 0;
      case V_LEVEL:
        if (strcmp(value, "Serializable") && strcmp(value, "WriteSerializable")) {
          snprintf(why, sizeof why, "requirement failed: %s must be Serializable or WriteSerializable", KNOWN[i].key);
          return bad_value(why);
        }
        return 0;
      case V_POLICY:
        if (strcasecmp(value, "classic") && strcasecmp(value, "v2")) {
          snprintf(why, sizeof why, "requirement failed: %s must be classic or v2", KNOWN[i].key);
          return bad_value(why);
        }
        return 0;
      default: return 0;
    }
  }
  return dd_err_set(DD_EINVAL, "[DELTA_UNKNOWN_CONFIGURATION] Unknown configuration was specified: %s", key);
}

int dop__apply_properties(dop__proto *p, const char *const *in_keys, const char *const *in_vals, size_t n,
                          const char **keys, const char **vals, size_t *nout) {
  int rc = 0, rv = 0, wv = 0;
  *nout = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const char *k = in_keys[i], *v = in_vals[i];
    if ((rc = dop__check_property(k, v))) return rc;
    if (!strncmp(k, "delta.feature.", 14)) {
      if (strcmp(v, "supported") && strcmp(v, "enabled"))
        return dd_err_set(DD_EINVAL, "%s must be 'supported', not '%s'", k, v);
      rc = dop__proto_add_feature(p, k + 14);
      continue;
    }
    if (!strcmp(k, "delta.minReaderVersion")) { rv = atoi(v); continue; }
    if (!strcmp(k, "delta.minWriterVersion")) { wv = atoi(v); continue; }
    keys[*nout] = k;
    vals[(*nout)++] = v;
    bool on = !strcasecmp(v, "true");
    if (!strcmp(k, "delta.enableChangeDataFeed") && on) rc = dop__proto_raise(p, p->reader, p->writer > 4 ? p->writer : 4);
    else if (!strcmp(k, "delta.enableDeletionVectors") && on) rc = dop__proto_add_feature(p, "deletionVectors");
    else if (!strcmp(k, "delta.enableInCommitTimestamps") && on) rc = dop__proto_add_feature(p, "inCommitTimestamp");
    else if (!strcmp(k, "delta.enableRowTracking") && on) rc = dop__proto_add_feature(p, "rowTracking");
    else if (!strcmp(k, "delta.appendOnly") && on) rc = dop__proto_raise(p, p->reader, p->writer > 2 ? p->writer : 2);
    else if (!strncmp(k, "delta.constraints.", 18)) rc = dop__proto_raise(p, p->reader, p->writer > 3 ? p->writer : 3);
    else if (!strcmp(k, "delta.columnMapping.mode") && strcmp(v, "none")) {
      if (p->writer >= 7) rc = dop__proto_add_feature(p, "columnMapping");
      else rc = dop__proto_raise(p, p->reader > 2 ? p->reader : 2, p->writer > 5 ? p->writer : 5);
    }
  }
  if (!rc && (rv || wv)) rc = dop__proto_raise(p, rv > p->reader ? rv : p->reader, wv > p->writer ? wv : p->writer);
  return rc;
}

/* ---- ALTER TABLE ... SET / UNSET TBLPROPERTIES ---- */

static const dop_col NO_COLS[1] = {{"", "", true}};

static char *dump(json_t *j) {
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

/* The configuration after the change: the old entries (minus those unset or replaced),
 * then the ones set, packed (dl_kv_pack). */
static int new_config(char **out, const char *old, const char *const *keys, const char *const *vals, size_t n,
                      bool unset) {
  size_t cap = n + 1;
  for (const char *cur = old, *k, *v; cur && dl_kv_next(&cur, &k, &v);) cap++;
  const char **nk = calloc(cap, sizeof *nk), **nv = calloc(cap, sizeof *nv);
  size_t m = 0;
  int rc = nk && nv ? 0 : DOP_OOM();
  for (const char *cur = old, *k, *v; !rc && cur && dl_kv_next(&cur, &k, &v);) {
    bool drop = false;
    for (size_t i = 0; i < n && !drop; i++) drop = !strcmp(k, keys[i]);
    if (!drop) nk[m] = k, nv[m++] = v;
  }
  for (size_t i = 0; !rc && !unset && i < n; i++) nk[m] = keys[i], nv[m++] = vals[i];
  if (!rc) rc = dl_kv_pack(out, nk, nv, m);
  free(nk);
  free(nv);
  return rc;
}

static int commit_props(dl_table *t, dl_snapshot *s, const dop__proto *p, bool proto_changed, const char *config,
                        const char *op, json_t *params) {
  const dl_metadata *md = dl_snapshot_metadata(s);
  dl_metadata_spec spec = {md->id, md->name, md->description, md->schema_string, md->num_partition_columns,
                           md->partition_columns, config, md->created_time};
  dl_txn *txn = NULL;
  char **rf = NULL, **wf = NULL;
  dl_protocol np;
  int rc = dl_txn_begin(&txn, t, s);
  if (!rc && proto_changed && !(rc = dop__proto_to(p, &np, &rf, &wf))) rc = dl_txn_set_protocol(txn, &np);
  if (!rc) rc = dl_txn_set_metadata(txn, &spec);
  if (!rc && dop__rt_enables(md->configuration, config)) rc = dop__rt_backfill(txn, s);
  if (!rc) rc = dop__commit(txn, op, params, json_object(), NULL);
  else json_decref(params);
  dl_txn_free(txn);
  free(rf);
  free(wf);
  return rc;
}

int dop_set_properties(dop_result **out, const char *location, const char *const *keys, const char *const *values,
                       size_t n) {
  *out = NULL;
  if (!n) return dd_err_set(DD_EINVAL, "SET TBLPROPERTIES: at least one property is required");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop__proto p, old;
  char *config = NULL;
  const char **k = calloc(n + 1, sizeof *k), **v = calloc(n + 1, sizeof *v);
  size_t m = 0;
  int rc = k && v ? dop__open_latest(&t, &s, location) : DOP_OOM();
  if (rc) goto done;
  dop__proto_from(&p, dl_snapshot_protocol(s));
  dop__proto_from(&old, dl_snapshot_protocol(s));
  rc = dop__apply_properties(&p, keys, values, n, k, v, &m);
  if (!rc) rc = new_config(&config, dl_snapshot_metadata(s)->configuration, k, v, m, false);
  if (!rc) rc = dop__rt_names(&config);
  if (!rc) {
    json_t *props = json_object();
    for (size_t i = 0; i < n; i++) json_object_set_new(props, keys[i], json_string(values[i]));
    char *text = dump(props);
    json_t *old_j = dop__proto_json(&old), *new_j = dop__proto_json(&p);
    bool changed = !json_equal(old_j, new_j);
    json_decref(old_j), json_decref(new_j);
    rc = text ? commit_props(t, s, &p, changed, config, "SET TBLPROPERTIES", json_pack("{s:s}", "properties", text))
              : DOP_OOM();
    free(text);
  }
  dop__proto_free(&p);
  dop__proto_free(&old);
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
done:
  free(config);
  free(k);
  free(v);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

int dop_unset_properties(dop_result **out, const char *location, const char *const *keys, size_t n) {
  *out = NULL;
  if (!n) return dd_err_set(DD_EINVAL, "UNSET TBLPROPERTIES: at least one property is required");
  for (size_t i = 0; i < n; i++)
    if (!strncmp(keys[i], "delta.feature.", 14))
      return dd_err_set(DD_EINVAL, "[DELTA_CANNOT_UNSET_FEATURE] %s: a table feature is removed with ALTER TABLE ... "
                        "DROP FEATURE", keys[i]);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  char *config = NULL;
  int rc = dop__open_latest(&t, &s, location);
  if (!rc) rc = new_config(&config, dl_snapshot_metadata(s)->configuration, keys, NULL, n, true);
  if (!rc) {
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, json_string(keys[i]));
    char *text = dump(arr);
    /* Delta on Spark writes ifExists "true" whether or not the statement said IF EXISTS (a
     * missing key is no error either way) */
    rc = text ? commit_props(t, s, NULL, false, config, "UNSET TBLPROPERTIES",
                             json_pack("{s:s,s:s}", "ifExists", "true", "properties", text))
              : DOP_OOM();
    free(text);
  }
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
  free(config);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
