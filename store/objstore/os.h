/* os.h: the small file-system interface the Delta engine reads and writes tables through.
 *
 * An os_store is a vtable plus an implementation pointer, rooted at a table location. Paths
 * given to every function are relative to that root ("_delta_log/00..0.json"); the local
 * implementation also reads absolute paths ("/x/y" or "file:///x/y") so deletion vectors
 * with absolute paths can be read, but writes, deletes, mkdirs and listings only below its
 * root and never through a symlink or ".." (DD_EPERM; see os_local.c). Object stores
 * (S3, Azure, GCS) implement the same vtable.
 *
 * Guarantees every backend must give:
 *  - os_put_if_absent: the object appears whole or not at all and is never overwritten;
 *    DD_EEXISTS when the path already exists (the optimistic-commit primitive).
 *  - os_put: atomic replace (readers see the old or the new content, never a mix).
 *  - os_list: entries of one directory (not recursive), sorted by name (byte order).
 *
 * Thread safety: an os_store may be used from many threads at once; it holds no mutable
 * state after creation. */
#ifndef DD_STORE_OBJSTORE_OS_H
#define DD_STORE_OBJSTORE_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct os_store os_store;

typedef struct os_stat {
  int64_t size;     /* bytes */
  int64_t mtime_ms; /* modification time, epoch milliseconds */
  bool is_dir;
} os_stat;

typedef struct os_entry {
  char *name; /* base name, owned by the list */
  int64_t size;
  int64_t mtime_ms;
  bool is_dir;
  bool is_link; /* a symlink (local store; never also is_dir): not followed */
} os_entry;

typedef struct os_list {
  os_entry *entries; /* sorted by name */
  size_t count;
} os_list;

/* A backend. Every function returns 0 or a negative DD_E* code with dd_err_set called. */
typedef struct os_vtable {
  int (*read_all)(void *impl, const char *path, uint8_t **out, size_t *out_len);
  int (*read_range)(void *impl, const char *path, uint64_t offset, size_t len, uint8_t *out);
  int (*stat)(void *impl, const char *path, os_stat *out);
  int (*list)(void *impl, const char *dir, os_list *out);
  int (*put_if_absent)(void *impl, const char *path, const void *data, size_t len);
  int (*put)(void *impl, const char *path, const void *data, size_t len);
  int (*del)(void *impl, const char *path);
  int (*mkdirs)(void *impl, const char *dir);
  int (*rmdir)(void *impl, const char *dir);
  void (*free)(void *impl);
  /* Optional (NULL: del per path): deletes paths[0..n) (at most OS_DELETE_BATCH) in as few
   * requests as the store allows; an absent object counts as deleted. *out_done gets the
   * number deleted before any error. */
  int (*del_many)(void *impl, const char *const *paths, size_t n, size_t *out_done);
  /* Optional (NULL: os_store.c gathers the pieces and puts them whole): a streamed
   * put-if-absent (os_put_stream_open below). commit and abort free the stream. */
  int (*put_stream_open)(void *impl, const char *path, void **out);
  int (*put_stream_write)(void *ps, const void *data, size_t len);
  int (*put_stream_commit)(void *ps);
  void (*put_stream_abort)(void *ps);
} os_vtable;

/* Process-wide request counters for metrics: every call through an os_store, by backend
 * (local, s3, azure, gcs: from the location's scheme) and outcome (ok, not_found, error). */
enum { OS_STATS_BACKENDS = 4, OS_STATS_OUTCOMES = 3 };
void os_stats_get(uint64_t out[OS_STATS_BACKENDS][OS_STATS_OUTCOMES]);
const char *os_stats_backend_name(int i);
const char *os_stats_outcome_name(int i);

/* HTTP requests the object-store backends sent (every attempt, retries included) and the
 * body bytes they received and sent, for the process (relaxed atomics). */
typedef struct os_http_stats {
  uint64_t requests, bytes_in, bytes_out;
} os_http_stats;
void os_http_stats_get(os_http_stats *out);

/* The most paths one del_many call gets (S3 DeleteObjects takes 1,000 keys). */
#define OS_DELETE_BATCH 1000

/* Wraps a backend. `location` is copied and names the root (for messages and cache keys). */
int os_store_new(os_store **out, const os_vtable *vt, void *impl, const char *location);
/* Opens the local directory `root` (need not exist yet; created on first write). */
int os_local_open(os_store **out, const char *root);
void os_store_free(os_store *st);
/* Opens the directory named by the first len bytes of rel below the local directory root,
 * one segment at a time with O_NOFOLLOW|O_DIRECTORY (so never through a symlink), creating
 * missing ones (0777 before umask) when create. rel must be relative with no empty, "."
 * or ".." segment (EINVAL); len 0 opens root itself (followed by name; created when
 * missing and create). 0 and a descriptor the caller closes, or -1 with errno (ELOOP: a
 * symlink on the way). */
int os_local_open_dir(int *out_fd, const char *root, const char *rel, size_t len, bool create);
/* The root this store was opened at; valid while the store lives. */
const char *os_store_location(const os_store *st);

/* Reads a whole object; *out (NUL-terminated for convenience, not counted in *out_len) is
 * the caller's to free(). DD_ENOTFOUND when absent. */
int os_read_all(const os_store *st, const char *path, uint8_t **out, size_t *out_len);
/* Reads exactly len bytes at offset into out; DD_ECORRUPT if the object is shorter. */
int os_read_range(const os_store *st, const char *path, uint64_t offset, size_t len,
                  uint8_t *out);
int os_stat_path(const os_store *st, const char *path, os_stat *out);
/* Lists one directory, sorted. DD_ENOTFOUND when the directory does not exist. */
int os_list_dir(const os_store *st, const char *dir, os_list *out);
void os_list_free(os_list *l);
/* For backends: appends a copy of name to l (capacity in *cap, 0 for an empty list). */
int os_list_add(os_list *l, size_t *cap, const char *name, int64_t size, int64_t mtime_ms,
                bool is_dir);
/* For backends: sorts l by name (byte order). */
void os_list_sort(os_list *l);
int os_put_if_absent(const os_store *st, const char *path, const void *data, size_t len);
/* A put-if-absent written in pieces: the object appears whole at commit (DD_EEXISTS when
 * path exists by then), never half-written. Local stores write a hidden temp file beside
 * path as the pieces come (so a large object needs no memory of its size) and link it
 * into place at commit. S3, Azure and GCS hold one part (8 MiB, $DD_OBJSTORE_PART_BYTES)
 * at a time: an object that never fills one is one put-if-absent at commit; a larger one
 * is an upload in parts (S3 multipart upload completed with If-None-Match: *, Azure
 * blocks and a Put Block List with If-None-Match: *, GCS a resumable upload with
 * ifGenerationMatch=0) that a failure or an abort cancels. A backend without streams gets
 * the pieces gathered and put whole at commit, in room for size_hint bytes reserved at
 * once (address space only; 0: none). commit and abort free the stream (abort accepts
 * NULL and leaves nothing behind); a failed write leaves the stream to abort. */
typedef struct os_put_stream os_put_stream;
int os_put_stream_open(const os_store *st, const char *path, size_t size_hint,
                       os_put_stream **out);
int os_put_stream_write(os_put_stream *ps, const void *data, size_t len);
int os_put_stream_commit(os_put_stream *ps);
void os_put_stream_abort(os_put_stream *ps);
/* Writes the whole object path of src into ps, one part size at a time (os_read_range),
 * so a copy between stores holds one piece in memory. DD_EPERM when src refuses path (an
 * absolute URL outside its root); the stream is the caller's to commit or abort. */
int os_put_stream_copy(os_put_stream *ps, const os_store *src, const char *path);
int os_put(const os_store *st, const char *path, const void *data, size_t len);
/* Deletes one object; DD_ENOTFOUND when absent. */
int os_delete(const os_store *st, const char *path);
/* Deletes n objects, in batches where the store has them (S3 DeleteObjects); absent ones
 * count as deleted. *out_done (may be NULL) gets the number deleted, also on error;
 * progress(ctx, done, n) (may be NULL) is called after each batch. */
int os_delete_many(const os_store *st, const char *const *paths, size_t n, size_t *out_done,
                   void (*progress)(void *ctx, size_t done, size_t total), void *ctx);
int os_mkdirs(const os_store *st, const char *dir);
/* Removes an empty directory; DD_EPRECOND when not empty. */
int os_rmdir(const os_store *st, const char *dir);

/* ---- opening a table location (os_open.c) ----
 * The one way an engine opens the store of a table location. A local path or a file: URL
 * opens the local backend (os_local_open, its rules unchanged); any other URL (s3://,
 * abfss://, wasbs://, gs://, ...) goes to the process's opener, which the server installs
 * once at start to find the storage location and credential covering the URL (longest
 * prefix) and open the backend (os_open_url). Without an opener (deltactl --local, tools)
 * an object-store URL is DD_EUNSUPPORTED saying so. The opener is the one piece of global
 * state in this module: os_set_opener replaces it (under a lock), os_clear_opener(ctx)
 * removes it when it is still the one installed with ctx (an app closing); fn must be
 * callable from any thread while installed. */
typedef int (*os_open_fn)(void *ctx, const char *url, os_store **out);
void os_set_opener(os_open_fn fn, void *ctx);
void os_clear_opener(void *ctx);
int os_open(os_store **out, const char *location);
/* os_read_all, and for an absolute object-store URL that st refuses as outside its root
 * (a shallow clone's file in its source table), a read through os_open of the URL's
 * directory (so only under a location the opener covers). */
int os_read_any(const os_store *st, const char *path, uint8_t **out, size_t *out_len);
/* True for a local path ("/x", "x/y") or a file: URL; false for "<scheme>://..." URLs. */
bool os_is_local(const char *location);

#endif
