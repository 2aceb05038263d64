/* dl_cleanup.c: metadata cleanup. Commits, checkpoints and checksum files older than
 * delta.logRetentionDuration (default 30 days, counted from midnight UTC) are deleted, but
 * only below the newest checkpoint that is itself old enough, so every retained version
 * stays reconstructable. Compaction files starting at or below that checkpoint go too.
 * Stale temp files of killed writers go once older than DL_STALE_TMP_MS (dl.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

#define DAY_MS 86400000LL

/* "interval 30 days", "30 days", "12 hours" -> milliseconds; -1 when unparsable. */
int64_t dl__parse_interval(const char *s) {
  if (!strncasecmp(s, "interval", 8)) s += 8;
  while (isspace((unsigned char)*s)) s++;
  char *end;
  long long n = strtoll(s, &end, 10);
  if (end == s || n < 0) return -1;
  while (isspace((unsigned char)*end)) end++;
  static const struct {
    const char *unit;
    int64_t ms;
  } U[] = {{"week", 7 * DAY_MS}, {"day", DAY_MS}, {"hour", 3600000}, {"minute", 60000},
           {"second", 1000}, {"millisecond", 1}};
  int64_t ms;
  for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
    if (!strncasecmp(end, U[i].unit, strlen(U[i].unit)))
      return __builtin_mul_overflow((int64_t)n, U[i].ms, &ms) ? INT64_MAX : ms;
  return -1;
}

static bool deletable(const char *name, int64_t below, int64_t cp_version) {
  size_t n = strlen(name);
  if (n < 21) return false;
  for (int i = 0; i < 20; i++)
    if (!isdigit((unsigned char)name[i])) return false;
  int64_t v = strtoll(name, NULL, 10);
  const char *rest = name + 20;
  if (strstr(rest, ".compacted.json")) return v <= cp_version;
  if (v >= below) return false;
  return !strcmp(rest, ".json") || !strcmp(rest, ".crc") || !strncmp(rest, ".checkpoint.", 12);
}

/* True for a log file name: 20 digits then .json, .crc, .checkpoint...; or _last_checkpoint. */
static bool log_name(const char *s, size_t n) {
  if (n == 16 && !strncmp(s, "_last_checkpoint", 16)) return true;
  if (n < 21) return false;
  for (int i = 0; i < 20; i++)
    if (!isdigit((unsigned char)s[i])) return false;
  return s[20] == '.';
}

/* Walks back over ".<digits>" ending at end; returns where it starts or NULL. */
static const char *digits_back(const char *start, const char *end) {
  const char *p = end;
  while (p > start && isdigit((unsigned char)p[-1])) p--;
  return p < end && p > start && p[-1] == '.' ? p - 1 : NULL;
}

/* ".<log name>.<pid>.<counter>.tmp", as os_local.c's write_temp names them. */
static bool stale_temp_name(const char *name) {
  size_t n = strlen(name);
  if (n < 6 || name[0] != '.' || strcmp(name + n - 4, ".tmp")) return false;
  const char *c = digits_back(name + 1, name + n - 4), *p = c ? digits_back(name + 1, c) : NULL;
  return p && log_name(name + 1, (size_t)(p - name - 1));
}

int dl_log_clean_temps(dl_table *t, int64_t now_ms, size_t *out_deleted) {
  if (out_deleted) *out_deleted = 0;
  int64_t before;
  if (__builtin_sub_overflow(now_ms, DL_STALE_TMP_MS, &before)) return 0;
  os_list ls = {0};
  int rc = os_list_dir(t->store, DL__LOG, &ls);
  if (rc) return rc;
  size_t deleted = 0;
  for (size_t i = 0; i < ls.count; i++) {
    const os_entry *e = &ls.entries[i];
    if (e->is_dir || e->mtime_ms > before || !stale_temp_name(e->name)) continue;
    char *path = NULL;
    if (asprintf(&path, DL__LOG "/%s", e->name) < 0) continue;
    if (os_delete(t->store, path) == 0) deleted++;
    free(path);
  }
  os_list_free(&ls);
  dd_err_clear();
  if (out_deleted) *out_deleted = deleted;
  return 0;
}

int dl_log_cleanup(dl_table *t, const dl_snapshot *s, int64_t now_ms, size_t *out_deleted) {
  if (out_deleted) *out_deleted = 0;
  dl_log_clean_temps(t, now_ms, NULL);
  const char *ret = dl_snapshot_property(s, "delta.logRetentionDuration");
  int64_t retention = ret ? dl__parse_interval(ret) : 30 * DAY_MS;
  if (retention < 0) return dd_err_set(DD_EINVAL, "bad delta.logRetentionDuration '%s'", ret);
  int64_t cutoff;
  if (__builtin_sub_overflow(now_ms, retention, &cutoff)) cutoff = INT64_MIN; /* keeps everything */
  cutoff = cutoff / DAY_MS * DAY_MS;
  dl__listing l;
  int64_t *ts = NULL;
  int rc = dl__list_log(&l, t->store);
  if (rc) return rc;
  if ((rc = dl__commit_timestamps(t, &l, &s->st, &ts))) goto cleanup;
  int64_t cutoff_commit = -1;
  for (size_t i = 0; i < l.n_commits; i++)
    if (ts[i] <= cutoff && l.commits[i].version <= s->version) cutoff_commit = l.commits[i].version;
  int64_t cp = -1;
  for (size_t i = 0; i < l.n_cps; i++)
    if (l.cps[i].version <= cutoff_commit && l.cps[i].version > cp) cp = l.cps[i].version;
  if (cp <= 0) goto cleanup; /* nothing can go */
  os_list ls = {0};
  if ((rc = os_list_dir(t->store, DL__LOG, &ls))) goto cleanup;
  size_t deleted = 0;
  for (size_t i = 0; i < ls.count; i++) {
    if (ls.entries[i].is_dir || !deletable(ls.entries[i].name, cp, cp)) continue;
    char *path = NULL;
    if (asprintf(&path, DL__LOG "/%s", ls.entries[i].name) < 0) continue;
    if (os_delete(t->store, path) == 0) deleted++;
    free(path);
  }
  os_list_free(&ls);
  dd_err_clear();
  if (out_deleted) *out_deleted = deleted;
cleanup:
  free(ts);
  dl__listing_free(&l);
  return rc;
}
