/* dop_test_util.c: see dop_test_util.h. */
#include "dop_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *tu_tmpdir(void) {
  char tmpl[] = "/tmp/dop_test_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

char *tu_copy_fixture(const char *name) {
  char *d = tu_tmpdir(), cmd[4096];
  snprintf(cmd, sizeof cmd, "cp -r '%s/delta-rs-data/%s/.' '%s/'", DD_FIXTURES, name, d);
  if (system(cmd) != 0) abort();
  return d;
}

void tu_rmrf(const char *path) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) abort();
}

void tu_age(const char *dir, int days) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "find '%s' -not -path '*/_delta_log*' -exec touch -m -d '%d days ago' {} +", dir, days);
  if (system(cmd) != 0) abort();
}

bool tu_exists(const char *dir, const char *rel) {
  char p[4096];
  struct stat sb;
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return stat(p, &sb) == 0;
}

int tu_count(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "_delta_log")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(p, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) n += tu_count(p, suffix);
    else {
      size_t a = strlen(e->d_name), b = strlen(suffix);
      n += a >= b && !strcmp(e->d_name + a - b, suffix);
    }
  }
  closedir(d);
  return n;
}

json_t *tu_commit_actions(const char *dir, int64_t version) {
  char p[4096];
  snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", dir, (long long)version);
  FILE *f = fopen(p, "r");
  if (!f) return NULL;
  json_t *a = json_array();
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    if (o) json_array_append_new(a, o);
  }
  free(line);
  fclose(f);
  return a;
}

json_t *tu_commit_info(const char *dir, int64_t version) {
  json_t *a = tu_commit_actions(dir, version), *o, *ci = NULL;
  size_t i;
  json_array_foreach(a, i, o) if (!ci && json_object_get(o, "commitInfo")) ci = json_incref(json_object_get(o, "commitInfo"));
  json_decref(a);
  return ci;
}

int64_t tu_latest_version(const char *dir) {
  int64_t v = -1;
  for (int64_t i = 0; i < 100000; i++) {
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", dir, (long long)i);
    if (stat(p, &sb) == 0) v = i;
    else if (i > v + 20) break;
  }
  return v;
}

void tu_write(const char *dir, const char *rel, size_t n) {
  char p[4096], cmd[4200];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
  if (system(cmd) != 0) abort();
  FILE *f = fopen(p, "w");
  if (!f) abort();
  for (size_t i = 0; i < n; i++) fputc('x', f);
  fclose(f);
}
