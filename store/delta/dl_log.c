/* dl_log.c: listing `_delta_log/`: which files are commits, which are (complete) checkpoints
 * of which kind, and what `_last_checkpoint` says. Anything we do not recognise is ignored
 * (Hadoop .crc files, .tmp/, _commits/, _sidecars/, hidden temp files, compactions). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ---------- names ---------- */

static bool digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)s[i])) return false;
  return true;
}

static int64_t num(const char *s, size_t n) {
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

enum { N_OTHER, N_COMMIT, N_CLASSIC, N_MULTI, N_V2 };

/* Classifies a _delta_log entry name. */
static int classify(const char *name, int64_t *version, int *part, int *parts) {
  size_t len = strlen(name);
  if (len < 25 || !digits(name, 20) || name[20] != '.') return N_OTHER;
  *version = num(name, 20);
  if (*version < 0) return N_OTHER;
  const char *rest = name + 21;
  if (!strcmp(rest, "json")) return N_COMMIT;
  if (strncmp(rest, "checkpoint.", 11) != 0) return N_OTHER;
  rest += 11;
  if (!strcmp(rest, "parquet")) return N_CLASSIC;
  size_t rl = strlen(rest);
  if (rl == 29 && digits(rest, 10) && rest[10] == '.' && digits(rest + 11, 10) &&
      !strcmp(rest + 21, ".parquet")) {
    *part = (int)num(rest, 10);
    *parts = (int)num(rest + 11, 10);
    return (*part >= 1 && *parts >= 1 && *part <= *parts) ? N_MULTI : N_OTHER;
  }
  const char *dot = strchr(rest, '.');
  if (dot && dot > rest && (!strcmp(dot, ".json") || !strcmp(dot, ".parquet")) &&
      !strchr(rest, '/'))
    return N_V2;
  return N_OTHER;
}

/* ---------- listing ---------- */

void dl__listing_free(dl__listing *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n_cps; i++) {
    for (size_t j = 0; j < l->cps[i].nfiles; j++) free(l->cps[i].files[j]);
    free(l->cps[i].files);
  }
  free(l->cps);
  free(l->commits);
  memset(l, 0, sizeof *l);
}

ssize_t dl__listing_find(const dl__listing *l, int64_t v) {
  size_t lo = 0, hi = l->n_commits;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (l->commits[mid].version < v) lo = mid + 1;
    else hi = mid;
  }
  return (lo < l->n_commits && l->commits[lo].version == v) ? (ssize_t)lo : -1;
}

static int add_cp(dl__listing *l, int64_t v, int kind, int parts, char **files, size_t n) {
  dl__cp *c = realloc(l->cps, (l->n_cps + 1) * sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  l->cps = c;
  dl__cp *cp = &l->cps[l->n_cps++];
  cp->version = v;
  cp->kind = kind;
  cp->parts = parts;
  cp->nfiles = n;
  cp->files = malloc(n * sizeof *cp->files);
  if (!cp->files) {
    cp->nfiles = 0;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    if (!(cp->files[i] = strdup(files[i]))) {
      cp->nfiles = i;
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
  }
  return 0;
}

/* Adds the complete multi-part checkpoint(s) found in entries [from, to) of one version. */
static int add_multipart(dl__listing *l, const os_list *ls, size_t from, size_t to, int64_t v) {
  for (size_t i = from; i < to; i++) {
    int64_t vv;
    int part, parts;
    if (classify(ls->entries[i].name, &vv, &part, &parts) != N_MULTI || part != 1) continue;
    if ((size_t)parts > to - from) continue; /* cannot be complete: allocate nothing */
    char **names = calloc((size_t)parts, sizeof *names);
    if (!names) return dd_err_set(DD_ENOMEM, "out of memory");
    int found = 0;
    for (size_t j = from; j < to; j++) {
      int p2, ps2;
      if (classify(ls->entries[j].name, &vv, &p2, &ps2) == N_MULTI && ps2 == parts &&
          !names[p2 - 1]) {
        names[p2 - 1] = ls->entries[j].name;
        found++;
      }
    }
    int rc = found == parts ? add_cp(l, v, 2, parts, names, (size_t)parts) : 0;
    free(names);
    if (rc) return rc;
  }
  return 0;
}

int dl__list_log(dl__listing *out, const os_store *st) {
  memset(out, 0, sizeof *out);
  out->last_cp_hint = -1;
  os_list ls = {0};
  int rc = os_list_dir(st, DL__LOG, &ls);
  if (rc == DD_ENOTFOUND)
    return dd_err_set(DD_ENOTFOUND, "%s is not a Delta table (no %s directory)",
                      os_store_location(st), DL__LOG);
  if (!rc) rc = dl__list_entries(out, &ls, st);
  os_list_free(&ls);
  return rc;
}

int dl__list_entries(dl__listing *out, const os_list *ls, const os_store *st) {
  memset(out, 0, sizeof *out);
  out->last_cp_hint = -1;
  int rc = 0;
  size_t cap = 0;
  for (size_t i = 0; i < ls->count && !rc; i++) {
    const os_entry *e = &ls->entries[i];
    if (e->is_dir) continue;
    int64_t v;
    int part = 0, parts = 0;
    int k = classify(e->name, &v, &part, &parts);
    if (k == N_COMMIT) {
      if (out->n_commits == cap) {
        cap = cap ? cap * 2 : 64;
        dl__commit *c = realloc(out->commits, cap * sizeof *c);
        if (!c) { rc = dd_err_set(DD_ENOMEM, "out of memory"); break; }
        out->commits = c;
      }
      out->commits[out->n_commits++] = (dl__commit){v, e->mtime_ms, e->size};
    } else if (k == N_CLASSIC) {
      char *n = e->name;
      rc = add_cp(out, v, 1, 1, &n, 1);
    } else if (k == N_V2) {
      char *n = e->name;
      rc = add_cp(out, v, 3, 1, &n, 1);
    } else if (k == N_MULTI && part == 1) {
      /* entries of one version are adjacent in the sorted listing */
      size_t to = i;
      int64_t v2;
      int p2, ps2;
      while (to < ls->count && classify(ls->entries[to].name, &v2, &p2, &ps2) != N_OTHER && v2 == v)
        to++;
      size_t from = i;
      while (from > 0 && classify(ls->entries[from - 1].name, &v2, &p2, &ps2) != N_OTHER &&
             v2 == v)
        from--;
      bool first = true; /* handle each version's group once */
      for (size_t j = from; j < i; j++)
        if (classify(ls->entries[j].name, &v2, &p2, &ps2) == N_MULTI && p2 == 1) first = false;
      if (first) rc = add_multipart(out, ls, from, to, v);
    } else if (!strcmp(e->name, "_last_checkpoint")) {
      uint8_t *data = NULL;
      size_t len = 0;
      dl__last_cp lc;
      if (os_read_all(st, DL__LOG "/_last_checkpoint", &data, &len) == 0 &&
          dl__last_cp_parse(&lc, (const char *)data, len) == 0)
        out->last_cp_hint = lc.version;
      free(data);
      dd_err_clear();
    }
  }
  if (rc) dl__listing_free(out);
  return rc;
}

/* ---------- _last_checkpoint ---------- */

int dl__last_cp_parse(dl__last_cp *out, const char *data, size_t len) {
  memset(out, 0, sizeof *out);
  out->version = out->size = out->parts = out->size_in_bytes = out->num_add_files = -1;
  json_error_t e;
  json_t *j = json_loadb(data, len, 0, &e);
  if (!j) return dd_err_set(DD_ECORRUPT, "_last_checkpoint: invalid JSON: %s", e.text);
  int rc = 0;
  json_t *v = json_object_get(j, "version");
  if (!json_is_object(j) || !json_is_integer(v) || json_integer_value(v) < 0) {
    rc = dd_err_set(DD_ECORRUPT, "_last_checkpoint: no valid version");
  } else {
    out->version = (int64_t)json_integer_value(v);
    out->size = dl__json_int(j, "size", -1);
    out->parts = dl__json_int(j, "parts", -1);
    out->size_in_bytes = dl__json_int(j, "sizeInBytes", -1);
    out->num_add_files = dl__json_int(j, "numOfAddFiles", -1);
  }
  json_decref(j);
  return rc;
}
