/* replay_main.c: runs a fuzz target over every file of a corpus directory, once each.
 * Built in place of libFuzzer's main when DD_FUZZ is off, so the committed corpus (and any
 * crash reproducer added to it) runs as a regression test in every ctest run. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return -1; }
  long n = ftell(f);
  rewind(f);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!buf) return -1;
  LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  return 0;
}

static int replay_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) return replay_file(dir) == 0 ? (++*count, 0) : -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) replay_dir(path, count);
    else if (replay_file(path) == 0) ++*count;
  }
  closedir(d);
  return 0;
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; i++) {
    if (replay_dir(argv[i], &count) != 0) {
      fprintf(stderr, "cannot read corpus %s\n", argv[i]);
      return 1;
    }
  }
  printf("replayed %d inputs\n", count);
  return count > 0 ? 0 : 1;
}
