/* dl_internal.h: what the files of store/delta share, and how the Delta log is laid out.
 *
 * THE LOG. A table is a directory; `_delta_log/` beside the data holds its history:
 *
 *   00000000000000000000.json                  commit of version 0 (newline-delimited JSON,
 *   00000000000000000001.json                  one action per line), 20-digit versions
 *   00000000000000000010.checkpoint.parquet    classic checkpoint: the state at version 10
 *   0..10.checkpoint.0000000001.0000000003.parquet   multi-part checkpoint, part 1 of 3
 *   0..10.checkpoint.<uuid>.json|parquet       v2 checkpoint (checkpointMetadata + sidecar
 *                                               actions; file actions in _sidecars/ as Parquet)
 *   0..04.0..06.compacted.json                 log compaction of [4,6] (optional; ignored
 *                                               here: the commits themselves are read)
 *   _last_checkpoint                           JSON hint {version,size,parts,...}; may be
 *                                               stale, missing, empty, or point at nothing
 *   anything else (.crc, .tmp/, _commits/, _staged_commits/, _autostats/, hidden files)
 *                                               is not ours and is ignored.
 *
 * A snapshot at version V is built from the newest *complete, readable* checkpoint C <= V
 * (all parts of a multi-part one; a v2 checkpoint with its sidecars) followed by the commits
 * C+1..V, which must all exist: a gap is DD_ECORRUPT naming the first missing version. With
 * no usable checkpoint the replay starts at 0.json. Listing the whole directory (sorted) is
 * the ground truth; _last_checkpoint is only parsed and checked, never trusted.
 *
 * RECONCILIATION (forward replay, dl_fileset.c): every add/remove names a logical file by
 * (URL-decoded path, deletion-vector unique id). Each action upserts that key: the newest
 * action wins, so the final table has the live adds plus remove tombstones (kept with their
 * deletionTimestamp for VACUUM). The newest protocol and metaData win; txn is per appId
 * (newest wins); domainMetadata per domain, and removed=true deletes it. commitInfo, cdc,
 * checkpointMetadata and sidecar do not take part.
 *
 * MEMORY. A file costs one 48-byte dl__entry plus its strings in a chunked arena (path,
 * stats text; tags and a DV descriptor in a dl__extra beside them), partition-value maps
 * are interned (equal maps stored once), and a 4-byte hash slot (index and a tag of the
 * hash; about 8 bytes a file at the table's load factor). No JSON objects outlive the
 * parsing of one line.
 *
 * SNAPSHOT SHARING. A snapshot's files are a `base` fileset (reference counted, shared
 * between snapshots of one table) plus an optional small `over` fileset with the changes of
 * later commits; a key present in `over` hides the same key in `base`. The cache refreshes
 * a snapshot by copying `over` and applying only the new commits; when `over` grows past a
 * fraction of `base` the two are merged into a new base. */
#ifndef DD_STORE_DELTA_DL_INTERNAL_H
#define DD_STORE_DELTA_DL_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "store/delta/dl.h"

#define DL__LOG "_delta_log"
#define DL__NULL_BYTE '\xff'

/* ---------- arena (dl_util.c) ---------- */

typedef struct dl__chunk dl__chunk;
typedef struct dl__arena {
  dl__chunk *head;
  size_t used, cap; /* within head */
  size_t bytes;     /* total reserved */
} dl__arena;

void *dl__arena_alloc(dl__arena *a, size_t n); /* 8-aligned, NULL on OOM */
/* strdup/strndup copies are not aligned (chars): they pack end to end. */
char *dl__arena_strdup(dl__arena *a, const char *s);
/* Starts a chunk of n bytes for the allocations that follow; returns its memory (for a
 * prefault), NULL on OOM (the arena is unchanged). */
void *dl__arena_reserve(dl__arena *a, size_t n);
char *dl__arena_strndup(dl__arena *a, const char *s, size_t n);
void dl__arena_free(dl__arena *a);
/* Moves every chunk of src into dst (dst keeps allocating from its own head); src is
 * left empty. */
void dl__arena_splice(dl__arena *dst, dl__arena *src);

/* madvise(advice) over the align-aligned interior of [p, p + n) (align a power of two);
 * a hint: 0 when there is no whole aligned block, else madvise's result (dl_util.c). */
int dl__madvise_inner(void *p, size_t n, size_t align, int advice);

/* ---------- growable buffer: common/buf.h (dd_buf) ---------- */

/* ---------- helpers (dl_util.c) ---------- */

uint64_t dl__hash(const void *p, size_t n, uint64_t seed);
/* Decodes %XX escapes into out (capacity >= strlen(s)+1). Returns false on none present. */
bool dl__url_decode(const char *s, char *out);
/* Encodes a path for the log (RFC 3986 path characters kept). */
void dl__url_encode_path(dd_buf *b, const char *s);
/* Packs a JSON object of strings (null values allowed) into the arena; NULL on OOM. */
const char *dl__kv_from_json(dl__arena *a, const json_t *obj);
size_t dl__kv_size(const char *packed); /* bytes including the terminator */
/* Writes a packed map as a JSON object. */
json_t *dl__kv_to_json(const char *packed);
int64_t dl__now_ms(void);
/* "interval 30 days" style durations in ms; -1 when unparsable (dl_cleanup.c). */
int64_t dl__parse_interval(const char *s);
char *dl__version_path(int64_t v, const char *suffix); /* "_delta_log/%020lld<suffix>" */
void dl__uuid(char out[37]);
const char *dl__json_str(const json_t *o, const char *key); /* NULL unless a string */
int64_t dl__json_int(const json_t *o, const char *key, int64_t dflt);

/* ---------- schema (dl_schema.c) ---------- */
int dl__schema_from_json(dl_schema **out, const json_t *root);

/* ---------- actions (dl_action.c) ---------- */

typedef enum dl__akind {
  DL__A_ADD, DL__A_REMOVE, DL__A_CDC, DL__A_METADATA, DL__A_PROTOCOL, DL__A_TXN,
  DL__A_DOMAIN, DL__A_COMMITINFO, DL__A_CPMETA, DL__A_SIDECAR, DL__A_UNKNOWN,
} dl__akind;

/* One decoded action. Strings point into the JSON (or parquet row) it came from and are
 * valid only until the next action is decoded; packed maps are in the caller's arena. */
typedef struct dl__action {
  dl__akind kind;
  dl_file file;          /* add, remove, cdc (path = raw path here) */
  dl_dv dv;
  bool has_dv;
  /* sized: file.path and file.stats are path_len / stats_len bytes, not NUL-terminated
   * (the Parquet reader's values in place); else C strings */
  bool sized;
  size_t path_len, stats_len;
  uint64_t path_hash; /* sized: dl__hash of the path bytes when they hold no escape; 0: none */
  /* protocol */
  dl_protocol proto;
  const char *feat_buf[64];
  /* metaData */
  const json_t *md_json; /* the metaData object (JSON path) */
  /* txn */
  dl_app_txn txn;
  /* domainMetadata */
  const char *domain, *domain_config;
  bool domain_removed;
  /* commitInfo */
  const json_t *ci_json;
  int64_t ict;          /* inCommitTimestamp or -1 */
  int64_t ci_timestamp; /* commitInfo.timestamp or -1 */
  /* checkpointMetadata / sidecar */
  int64_t cp_version;
  const char *sidecar_path;
} dl__action;

/* Decodes one action object ({"add":{...}}). DD_ECORRUPT on malformed required fields. */
int dl__action_from_json(dl__action *out, const json_t *line, dl__arena *scratch);

/* A parsed commit file: its lines as JSON (kept for the caller's walk). */
typedef int (*dl__action_cb)(void *ctx, dl__action *a);
/* Parses a whole newline-delimited commit file and calls cb for each action. */
int dl__parse_commit(const char *data, size_t len, const char *what, dl__action_cb cb,
                     void *ctx);

/* ---------- fileset (dl_fileset.c) ---------- */

enum { DL__E_ADD = 1, DL__E_REMOVE = 2 }; /* kind 0: a hole (a checkpoint row of another action) */
/* DL__F_LIQUID: the add's clusteringProvider is "liquid" */
enum { DL__F_DATA_CHANGE = 1, DL__F_EXTRA = 2, DL__F_LIQUID = 4 };
#define DL__LIQUID "liquid"

/* What few files carry (tags, a deletion vector, row tracking's baseRowId and
 * defaultRowCommitVersion) beside their partition map. */
typedef struct dl__extra {
  const char *pv;    /* interned packed map (arena) */
  const char *tags;  /* arena or NULL */
  const dl_dv *dv;   /* arena or NULL */
  int64_t base_row_id, row_commit_version; /* -1 when absent */
} dl__extra;

/* 48 bytes: a million-file snapshot is mostly these and its strings. */
typedef struct dl__entry {
  const char *path;  /* raw path as in the log (arena) */
  const char *stats; /* arena or NULL */
  const void *aux;   /* the interned partition map, or a dl__extra when flags & DL__F_EXTRA */
  int64_t size;
  int64_t time;      /* modificationTime (add) or deletionTimestamp (remove) */
  uint32_t hash;
  uint8_t kind, flags;
} dl__entry;
_Static_assert(sizeof(dl__entry) == 48, "dl__entry is 48 bytes");

static inline const char *dl__entry_pv(const dl__entry *e) {
  return e->flags & DL__F_EXTRA ? ((const dl__extra *)e->aux)->pv : (const char *)e->aux;
}
static inline const char *dl__entry_tags(const dl__entry *e) {
  return e->flags & DL__F_EXTRA ? ((const dl__extra *)e->aux)->tags : NULL;
}
static inline const dl_dv *dl__entry_dv(const dl__entry *e) {
  return e->flags & DL__F_EXTRA ? ((const dl__extra *)e->aux)->dv : NULL;
}
static inline int64_t dl__entry_base_row_id(const dl__entry *e) {
  return e->flags & DL__F_EXTRA ? ((const dl__extra *)e->aux)->base_row_id : -1;
}
static inline int64_t dl__entry_row_commit_version(const dl__entry *e) {
  return e->flags & DL__F_EXTRA ? ((const dl__extra *)e->aux)->row_commit_version : -1;
}
static inline bool dl__entry_data_change(const dl__entry *e) {
  return e->flags & DL__F_DATA_CHANGE;
}

/* Interned partition maps: equal maps stored once (per table, or per loading thread). */
typedef struct dl__pvtab {
  const char **slots;
  size_t n, nslots;
  const char *last; /* the map interned or found last, and its size */
  size_t last_n;
} dl__pvtab;
/* The interned copy of packed map pv (copied into a when new); NULL on OOM. */
const char *dl__pvtab_intern(dl__pvtab *t, dl__arena *a, const char *pv);
void dl__pvtab_free(dl__pvtab *t);

typedef struct dl__fileset {
  atomic_int refs;
  dl__arena arena;
  dl__entry *ents;
  size_t n, cap;
  uint32_t *slots; /* index+1 under the mask, hash bits above it; 0 = empty; power of two */
  size_t nslots;
  dl__pvtab pv;
  size_t n_add, n_remove;
  int64_t add_bytes;
  /* between bulk_begin and bulk_end: entries from bulk_r on are not indexed yet; those
   * indexed were moved down to [bulk_from, bulk_w) (holes and repeats dropped) */
  bool bulk;
  size_t bulk_from, bulk_r, bulk_w;
  /* a thread faulting in reserved memory ahead of the loader (see dl__fileset_reserve);
   * it only populates pages (MADV_POPULATE_WRITE), never writes their contents */
  pthread_t pf_thread;
  bool pf_on;
  atomic_bool pf_stop;
  void *pf_p[2];
  size_t pf_n[2];
} dl__fileset;

int dl__fileset_new(dl__fileset **out);
dl__fileset *dl__fileset_ref(dl__fileset *fs);
void dl__fileset_unref(dl__fileset *fs);
/* Makes room for `extra` more entries (index and array) and `bytes` more string bytes so
 * that many applies neither rehash nor move the entries (a checkpoint's row count and
 * path/stats sizes from its footer). A large reservation is faulted in by a helper thread
 * while the caller fills it (page faults were a third of a million-file load); the thread
 * is joined by bulk_end or unref. */
int dl__fileset_reserve(dl__fileset *fs, size_t extra, size_t bytes);
/* Bulk loading (a checkpoint): between begin and end, apply only appends (no lookup, no
 * totals; find must not be called); end indexes the appended entries in order with the
 * index slots prefetched ahead, folding a repeated key into its first entry exactly as
 * apply would have. The result equals applying the same actions one by one. */
void dl__fileset_bulk_begin(dl__fileset *fs);
int dl__fileset_bulk_end(dl__fileset *fs);
/* Parallel bulk loading (the flat checkpoint reader's threads): room appends `rows`
 * entries, not yet filled, past the last one (*out), for threads to fill each with
 * bulk_fill or as a hole (kind 0). bulk_index indexes the appended entries before `upto`
 * (raw positions, holes included; they must be filled), folding repeated keys into their
 * first entry; it may be called again with a larger upto, from one thread, while others
 * fill entries past upto (it moves entries, below upto only). bulk_end indexes the rest.
 * bulk_commit takes over the threads' arenas (spliced into the set's: entries point into
 * them) and partition maps; with ok false the room's entries not yet indexed are dropped
 * (call it before bulk_end). Between room and commit nothing else may touch fs. */
int dl__fileset_bulk_room(dl__fileset *fs, size_t rows, dl__entry **out);
int dl__fileset_bulk_index(dl__fileset *fs, size_t upto);
void dl__fileset_bulk_commit(dl__fileset *fs, bool ok, dl__arena *arenas, dl__pvtab *pvs,
                             size_t n);
/* Fills e (thread-safe: only a, misc and pv are written) as apply_sized would append it in
 * bulk mode: paths and stats into a, maps, tags and descriptors into misc, the partition
 * map interned in pv (NULL: f->partition_values is a map pv interned before). */
int dl__fileset_bulk_fill(dl__entry *e, dl__arena *a, dl__arena *misc, dl__pvtab *pv, int kind,
                          const dl_file *f, const dl_dv *dv, size_t path_len, size_t stats_len,
                          uint64_t path_hash);
/* Applies a file action (kind ADD/REMOVE): newest wins. */
int dl__fileset_apply(dl__fileset *fs, int kind, const dl_file *f, const dl_dv *dv);
/* The same with path and stats given as path_len / stats_len bytes that need not be
 * NUL-terminated (Parquet values in place; the caller cut them at any NUL); path_hash,
 * when not 0, is dl__hash(path, path_len, 0) of a path without escapes. */
int dl__fileset_apply_sized(dl__fileset *fs, int kind, const dl_file *f, const dl_dv *dv,
                            size_t path_len, size_t stats_len, uint64_t path_hash);
/* Looks up the key of e (from another set); NULL if absent. */
const dl__entry *dl__fileset_find(const dl__fileset *fs, const dl__entry *e);
/* Copies every entry of src into fs (upsert). */
int dl__fileset_merge(dl__fileset *fs, const dl__fileset *src);
size_t dl__fileset_memory(const dl__fileset *fs);
/* Fills a public view of e; pathbuf must hold strlen(e->path)+1 bytes. */
void dl__entry_view(const dl__entry *e, dl_file *out, char *pathbuf);

/* ---------- snapshot state (dl_snapshot.c, dl_replay.c) ---------- */

typedef struct dl__state {
  dl__arena arena;      /* protocol, metadata, txns, domains */
  dl_protocol proto;
  bool has_proto;
  dl_metadata md;
  bool has_md;
  dl_schema *schema;
  dl_app_txn *txns;
  size_t n_txns, cap_txns;
  dl_domain *domains;
  size_t n_domains, cap_domains;
} dl__state;

void dl__state_free(dl__state *st);
int dl__state_copy(dl__state *dst, const dl__state *src);
/* Replaces the metadata (copied into st's arena; the schema parsed again). */
int dl__state_set_metadata(dl__state *st, const dl_metadata *m);
/* Applies a non-file action (protocol, metaData, txn, domainMetadata). */
int dl__state_apply(dl__state *st, const dl__action *a);

struct dl_table {
  os_store *store;
  bool own_store;
};

struct dl_snapshot {
  atomic_int refs;
  dl_table *table;
  int64_t version, timestamp, checkpoint_version;
  dl__state st;
  dl__fileset *base;
  dl__fileset *over; /* may be NULL */
  size_t num_files;
  int64_t size_bytes;
  int64_t last_commit_mtime; /* for refreshes */
  _Atomic(dl_snapshot_ext *) ext; /* dl_snapshot_ext_set; freed with the snapshot */
};

/* ---------- row tracking (dl_rowtrack.c) ---------- */
#define DL__RT_DOMAIN "delta.rowTracking"
#define DL__RT_FRESH_ID 1      /* an add of the commit without baseRowId */
#define DL__RT_FRESH_VERSION 2 /* an add of the commit without defaultRowCommitVersion */
/* rowIdHighWaterMark of a delta.rowTracking domain configuration, or -1. */
int64_t dl__rt_hwm_parse(const char *configuration);
/* The high-water mark of snapshot s (NULL: none), or -1. */
int64_t dl__rt_snapshot_hwm(const dl_snapshot *s);
bool dl__rt_supported(const dl_protocol *p);
/* Gives the adds flagged in flags[0..nflags) (indexes into actions) fresh row ids above
 * hwm and commit version `version`, and sets (or appends) the commit's domain action to
 * the new mark. Reassigns on every call, so a retried commit calls it again. */
int dl__rt_assign(json_t *actions, const uint8_t *flags, size_t nflags, int64_t version,
                  int64_t hwm);

/* ---------- log listing (dl_log.c) ---------- */

typedef struct dl__cp {
  int64_t version;
  int kind;             /* 1 classic, 2 multi-part, 3 v2 uuid */
  int parts;            /* multi-part: p */
  char **files;         /* top-level file names, in part order */
  size_t nfiles;
} dl__cp;

typedef struct dl__commit {
  int64_t version;
  int64_t mtime;
  int64_t size;
} dl__commit;

typedef struct dl__listing {
  dl__commit *commits; /* ascending */
  size_t n_commits;
  dl__cp *cps;         /* complete checkpoints, ascending by version */
  size_t n_cps;
  int64_t last_cp_hint; /* _last_checkpoint version or -1 */
} dl__listing;

int dl__list_log(dl__listing *out, const os_store *st);
/* dl__list_log on a listing already made (sorted by name, as os_list_dir gives it); st is
 * only read for _last_checkpoint. */
int dl__list_entries(dl__listing *out, const os_list *ls, const os_store *st);
void dl__listing_free(dl__listing *l);
/* Index of commit v in l, or -1. */
ssize_t dl__listing_find(const dl__listing *l, int64_t v);

typedef struct dl__last_cp {
  int64_t version, size, parts, size_in_bytes, num_add_files;
} dl__last_cp;
int dl__last_cp_parse(dl__last_cp *out, const char *data, size_t len);

/* ---------- replay (dl_replay.c) ---------- */

/* Loads checkpoint cp into st/fs. */
int dl__checkpoint_load(dl_table *t, const dl__cp *cp, dl__state *st, dl__fileset *fs,
                        bool *lacks_actions);
/* Applies commit file v (read from the store) to st/fs; sets *ict to its inCommitTimestamp. */
int dl__replay_commit(dl_table *t, int64_t v, dl__state *st, dl__fileset *fs, int64_t *ict);
/* Commit timestamps for listing l under the table's ICT settings in st. ts[i] matches
 * l->commits[i]. */
int dl__commit_timestamps(dl_table *t, const dl__listing *l, const dl__state *latest,
                          int64_t **out_ts);
int dl__snapshot_finish(dl_snapshot *s);
int dl__snapshot_new(dl_snapshot **out, dl_table *t);

/* Writes a checkpoint of s in `parts` Parquet files (1: classic naming; >1: the deprecated
 * multi-part naming, kept for tests and compatibility) plus _last_checkpoint. */
int dl__checkpoint_write_parts(dl_table *t, const dl_snapshot *s, int parts);

/* ---------- checkpoint reading via parquet (dl_checkpoint_read.c) ---------- */
/* reserve (may be NULL): made ready for the file's row count before the first action. */
int dl__parquet_actions(dl_table *t, const char *path, dl__action_cb cb, void *ctx,
                        dl__fileset *reserve);

/* ---------- column-at-a-time add/remove reading (dl_checkpoint_flat.c) ---------- */
struct pq_file;
typedef struct dl__flat dl__flat;
/* Plans the add/remove leaves of pf (borrowed). *out = NULL (and 0) when their shape or
 * types are not ones the flat walker handles: the caller then assembles rows. */
int dl__flat_open(dl__flat **out, const struct pq_file *pf);
void dl__flat_free(dl__flat *fl);
/* Rows of row group rg that hold neither an add nor a remove: other[i] != 0. */
typedef int (*dl__other_cb)(void *ctx, size_t rg, const uint8_t *other, size_t nrows);
/* What to reserve in a file set before loading a checkpoint into it (fs NULL: nothing):
 * rows entries, string bytes estimated by the reader, at most max_bytes (the row reader's;
 * the flat reader sizes each row group's memory itself). Failure to reserve is ignored
 * (apply grows the set as usual). buf/len (buf NULL: kept): the file's own bytes, whose
 * pages holding only a consumed row group's column chunks are given back to the system
 * (their contents are then undefined; nothing reads them). */
typedef struct dl__reserve_hint {
  dl__fileset *fs;
  size_t rows, max_bytes;
  uint8_t *buf;
  size_t len;
} dl__reserve_hint;
/* Loads every add and remove of the file into hint->fs (in bulk mode: between
 * dl__fileset_bulk_begin and _end) with one thread per core, each decoding and filling
 * whole row groups (entries in file order, strings in the thread's own arenas, handed to
 * the set at the end); then calls other_cb, in file order, for each row group that has
 * other rows. On error nothing is added to the set. */
int dl__flat_read(dl__flat *fl, dl__other_cb other_cb, void *octx, const dl__reserve_hint *hint);

#endif
