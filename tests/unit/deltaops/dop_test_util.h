/* dop_test_util.h: helpers of the deltaops unit tests: copies of fixture tables in
 * temporary directories, file counting, and reading commits with jansson (independently
 * of the engine) to check commitInfo. */
#ifndef DOP_TEST_UTIL_H
#define DOP_TEST_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Copies fixture delta-rs-data/<name> into a new temp dir; returns its path (free()). */
char *tu_copy_fixture(const char *name);
/* A new empty temp dir (free()). */
char *tu_tmpdir(void);
void tu_rmrf(const char *path);
/* Sets the mtime of every file under dir to `days` days ago. */
void tu_age(const char *dir, int days);
bool tu_exists(const char *dir, const char *rel);
/* Number of regular files under dir whose name ends with suffix (recursive; skips
 * _delta_log). */
int tu_count(const char *dir, const char *suffix);
/* The commitInfo object of a version, read from the JSON commit file (new reference). */
json_t *tu_commit_info(const char *dir, int64_t version);
/* Every action line of a commit (array; new reference). */
json_t *tu_commit_actions(const char *dir, int64_t version);
int64_t tu_latest_version(const char *dir);
/* Writes a file of n bytes. */
void tu_write(const char *dir, const char *rel, size_t n);

#endif
