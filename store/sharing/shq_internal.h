/* shq_internal.h: what the files of the sharing query engine share: a JSON line buffer,
 * the predicate tree (JSON predicate hints and the SQL predicateHints subset compile to it),
 * page/refresh tokens, and the line writers for both response formats.
 *
 * Predicate evaluation is a "may match" analysis over one file: every node yields two bits,
 * can_true (some row of the file may satisfy it) and can_false (some row may not). Column
 * values come from partition values (one value per file) or from stats (min/max/nullCount);
 * anything unknown sets both bits, so a file is skipped only when the root's can_true is
 * provably false. AND/OR/NOT combine the bits soundly (NOT swaps them). */
#ifndef DD_SERVER_SHARING_SHQ_INTERNAL_H
#define DD_SERVER_SHARING_SHQ_INTERNAL_H

#include <jansson.h>

#include "common/buf.h"
#include "store/sharing/shq.h"

/* ======================= line buffer ======================= */

/* The text buffer is common/buf.h's dd_buf; the JSON helpers below add to it. */
typedef dd_buf shq_buf;

void shq__put_i64(shq_buf *b, int64_t v);
/* A JSON string literal with escaping (s of n bytes). */
static inline void shq__put_jstr(shq_buf *b, const char *s, size_t n) { dd_buf_put_jstr(b, s, n); }
static inline void shq__put_jstrz(shq_buf *b, const char *s) { shq__put_jstr(b, s, __builtin_strlen(s)); }
/* A packed dl map as a JSON object (null values as null). */
void shq__put_kvmap(shq_buf *b, const char *packed);
/* Compact dump of a jansson value. */
void shq__put_json(shq_buf *b, const json_t *v);
/* Sends the buffer as one line; DD_ENOMEM when it ran out of memory. */
int shq__emit(shq_buf *b, shq_line_fn fn, void *ctx);

/* ======================= small utilities ======================= */

/* Lowercase hex MD5 of s (33 bytes out). */
void shq__md5_hex(const char *s, size_t n, char out[33]);
void shq__md5(const char *s, size_t n, unsigned char out[16]); /* the raw digest */
void shq__hex16(const unsigned char md[16], char out[33]);      /* 32 hex digits */
/* URL-decodes a log path into a malloc'ed string. */
char *shq__url_decode(const char *s);
/* Micros since epoch from a date, ISO-8601 or "yyyy-m-d h:mm:ss[.f]" text; -1 on error. */
int shq__parse_ts_us(const char *s, size_t n, int64_t *out_us);
/* Days since epoch from "yyyy-[m]m-[d]d"; -1 on error. */
int shq__parse_date(const char *s, size_t n, int64_t *out_days);
/* The protocol has one errorCode (INVALID_PARAMETER_VALUE) for a version or timestamp
 * outside the table's history and for any other bad parameter, so the public calls turn
 * DD_ERANGE into DD_EINVAL (message kept): every transport then answers alike (HTTP 400,
 * gRPC INVALID_ARGUMENT). Other codes pass unchanged. */
int shq__param_rc(int rc);
/* Base64url without padding. */
char *shq__b64url_enc(const uint8_t *d, size_t n);
int shq__b64url_dec(const char *s, uint8_t **out, size_t *out_n);

/* ======================= predicates ======================= */

typedef enum {
  SHQ_OP_COLUMN, SHQ_OP_LITERAL, SHQ_OP_ISNULL, SHQ_OP_EQ, SHQ_OP_LT, SHQ_OP_LE, SHQ_OP_GT,
  SHQ_OP_GE, SHQ_OP_AND, SHQ_OP_OR, SHQ_OP_NOT,
} shq_op;

typedef enum {
  SHQ_VT_BOOL, SHQ_VT_INT, SHQ_VT_LONG, SHQ_VT_STRING, SHQ_VT_DATE, SHQ_VT_FLOAT,
  SHQ_VT_DOUBLE, SHQ_VT_TIMESTAMP,
} shq_vtype;

/* A typed scalar: bool/int/long/date(days)/timestamp(micros) in i, float/double in d. */
typedef struct shq_val {
  bool is_null;
  int64_t i;
  double d;
  const char *s;
  size_t n;
} shq_val;

typedef struct shq_pred shq_pred;
struct shq_pred {
  shq_op op;
  shq_vtype vt;          /* COLUMN and LITERAL */
  char *name;            /* COLUMN: logical name; LITERAL: the text */
  shq_val lit;           /* LITERAL parsed per vt */
  size_t nkids;
  shq_pred **kids;
  /* bound per table (shq__pred_bind) */
  const char *part_key;  /* partition column key in partitionValues (physical), or NULL */
  char *stats_path;      /* dotted physical path in stats, or NULL */
};

/* Parses and validates a jsonPredicateHints tree (ops, arity, value types, literals). */
int shq__pred_parse_json(shq_pred **out, const char *json, size_t len);
/* Parses one SQL predicateHints expression; column types come from schema. */
int shq__pred_parse_sql(shq_pred **out, const char *sql, const dl_schema *schema);
/* AND of the given trees (takes ownership; NULL entries dropped). NULL when none. */
shq_pred *shq__pred_and(shq_pred **kids, size_t n);
void shq__pred_free(shq_pred *p);
/* Binds column names to partition keys / stats paths of this table. */
int shq__pred_bind(shq_pred *p, const dl_metadata *md, const dl_schema *schema);
/* Whether a file (partition values packed map, stats JSON or NULL) may hold matching rows. */
bool shq__pred_keep(const shq_pred *p, const char *partition_values, const char *stats);
/* Any column of the tree that is not a partition column (needs stats). */
bool shq__pred_needs_stats(const shq_pred *p);

/* ======================= file statistics ======================= */

typedef enum {
  SHQ_TOK_NONE, SHQ_TOK_INT, SHQ_TOK_REAL, SHQ_TOK_STRING, SHQ_TOK_ESCSTRING, SHQ_TOK_TRUE,
  SHQ_TOK_FALSE, SHQ_TOK_NULL, SHQ_TOK_OTHER,
} shq_tok_kind;

/* A JSON value inside a stats text (borrowed): numbers as written, strings without their
 * quotes and still escaped (SHQ_TOK_ESCSTRING when they hold escapes), containers OTHER. */
typedef struct shq_tok {
  shq_tok_kind kind;
  const char *p;
  size_t n;
} shq_tok;

/* What a predicate needs of one column; kind NONE when absent. */
typedef struct shq_col_stats {
  shq_tok num_records, tight_bounds, null_count, min, max;
} shq_col_stats;

/* Looks up numRecords, tightBounds and the column at the dotted path (NULL: none) in
 * minValues, maxValues and nullCount of a stats JSON text, in one pass without building a
 * tree. false (everything NONE) when the text is not one JSON object. Tokens point into
 * stats. */
bool shq__stats_lookup(const char *stats, const char *path, shq_col_stats *out);

/* ======================= tokens ======================= */

typedef struct shq_token {
  char kind;               /* 'p' page, 'r' refresh */
  char *table_id;
  char *checksum;          /* query checksum (hex) */
  int64_t version;         /* snapshot version (snapshot paging, refresh) */
  char *after;             /* snapshot paging: last raw path of the previous pages */
  int64_t records;         /* snapshot paging: records sent by the previous pages (limitHint) */
  int64_t start_version, action_index, end_version, latest_version; /* change paging */
  int64_t expires_ms;      /* 0: never */
} shq_token;

char *shq__token_encode(const shq_token *t, const shq_table_opts *o);
/* Decodes and checks MAC, table id, checksum and expiry; DD_EINVAL "invalid page token: ...". */
int shq__token_decode(shq_token *out, const char *s, char kind, const char *checksum,
                      const shq_table_opts *o, int64_t now_ms);
void shq__token_clear(shq_token *t);

/* ======================= line writers ======================= */

/* State of one response: format, signer, expiry tracking. */
typedef struct shq_out {
  int format;
  const shq_signer *signer;
  const shq_table_opts *opts;
  bool client_dv;          /* the client reads deletion vectors */
  bool declared_features;  /* the client listed reader features */
  int64_t min_expiry;      /* INT64_MAX when no URL had an expiry */
  shq_line_fn fn;
  void *ctx;
  shq_buf b;
  shq_buf url;             /* a data file's URL as a JSON string (shq__write_file) */
  size_t num_files;
  const char *location;    /* the table's location (absolute paths under it are allowed) */
  int64_t protocol_version;/* delta format: "version" of the head protocol line, or -1 */
  /* File ids kept with the snapshot (shq_par.c): the rendering chunk's MD5s by the file's
   * ordinal in the chunk (id_at), filled as files are seen when ids_fill; id is the
   * current file's, or NULL: shq__write_file computes it. */
  unsigned char (*ids)[16];
  bool ids_fill;
  size_t id_at, ids_cap;
  const unsigned char *id;
  /* A rendering thread's chunk (shq_par.c): each file line stays in b after the ones
   * before it, NUL-terminated, from line_start (shq__out_emit). */
  bool keep_lines;
  size_t line_start;
} shq_out;

void shq__out_init(shq_out *o, dl_table *t, const shq_table_opts *opts, const shq_signer *signer,
                   shq_line_fn fn, void *ctx);
void shq__out_free(shq_out *o);
/* Sends o->b's line as shq__emit does, or with keep_lines the line from line_start,
 * keeping it (and a NUL after it) in b; a refused line is dropped. */
int shq__out_emit(shq_out *o);

/* Parallel rendering of a snapshot's file lines (shq_par.c). fn renders the files of slots
 * [from, to) (dl_snapshot_files_range) into wo, a copy of the query's shq_out with buffers,
 * counters and line sink of its own; several run at once. shq__par_render sends their lines
 * through o->fn in slot order and adds the counters to o: the lines and the result of the
 * sequential loop. Worth it for a signer that allows it (shq_signer.concurrent) and many
 * slots, with more than one core. */
typedef int (*shq_par_render_fn)(void *ud, shq_out *wo, size_t from, size_t to);
bool shq__par_worth(const shq_out *o, size_t slots);
/* snap (NULL: none): the snapshot whose file ids the chunks keep and reuse (a query after
 * the first renders no MD5); fn's callback calls shq__par_file_seen for every file of its
 * range, before any filter. */
int shq__par_render(shq_out *o, const dl_snapshot *snap, size_t slots, shq_par_render_fn fn, void *ud);
/* For every file of a chunk's range, in order: sets wo->id from the kept ids. */
void shq__par_file_seen(shq_out *wo, const dl_file *f);
/* Whether shq__check_paths passed on snap before (kept with the snapshot), and noting it. */
bool shq__kept_paths_ok(const dl_snapshot *snap);
void shq__kept_set_paths_ok(const dl_snapshot *snap);

/* Chooses the response format and checks table properties against the client (reference
 * rules); sets o->format and o->client_dv. */
int shq__choose_format(shq_out *o, const dl_snapshot *s, const shq_caps *caps);
int shq__write_protocol(shq_out *o, const dl_snapshot *s);
/* Checks that every file of the snapshot (and its on-disk deletion vector) would be
 * signable, i.e. lies in the table: done before the first line, so a log with an escaping
 * path gives an error reply instead of a stream cut short. */
int shq__check_paths(const shq_out *o, const dl_snapshot *s);
/* version < 0: no "version" field; with_size adds size/numFiles. */
int shq__write_metadata(shq_out *o, const dl_snapshot *s, int64_t version, bool with_size);
/* Historical protocol (delta format) from a commit's protocol action JSON. */
int shq__write_protocol_json(shq_out *o, const json_t *p, int64_t version);
/* Historical metadata from a commit's metaData action JSON. */
int shq__write_metadata_json(shq_out *o, const json_t *md, int64_t version);
/* A snapshot file: {"file":...}; version/ts < 0 are left out. */
int shq__write_file(shq_out *o, const dl_file *f, int64_t version, int64_t ts);
/* A change action from a commit: key "add", "remove" or "cdc" (wire "cdf" in parquet). */
int shq__write_change(shq_out *o, const char *key, const json_t *action, int64_t version,
                      int64_t ts);
int shq__write_end(shq_out *o, const char *next_page_token, const char *refresh_token);

/* ======================= shared by query and changes ======================= */

/* Opens the snapshot for a version (>=0) / timestamp / latest, mapping errors to the
 * reference messages. */
int shq__open_snapshot(dl_snapshot **out, dl_table *t, int64_t version, const char *timestamp,
                       const shq_table_opts *opts);
/* Streams data-change lines for versions [start, end]. cdf: the CDF rules (cdc files
 * exclusive, CDF must stay enabled); else the streaming rules (dataChange add/remove).
 * Historical metadata is written for versions > meta_after when with_meta. */
typedef struct shq_range {
  int64_t start, end, latest;
  bool cdf, with_meta, with_protocol;
  int64_t max_files;        /* -1: all */
  int64_t resume_version, resume_index; /* -1: from the start */
  const char *checksum;
} shq_range;
int shq__write_changes(shq_out *o, dl_table *t, const shq_range *r, int64_t now_ms,
                       char **out_next_token);
/* Query Table with startingVersion (checks already made; checksum binds page tokens). */
int shq__query_changes(dl_table *t, const shq_query *q, const shq_caps *caps,
                       const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
                       const char *checksum, shq_result *res, shq_line_fn fn, void *ctx);

#endif
