/* shq.h: the Delta Sharing query engine. Turns an opened Delta table plus a recipient's
 * request (Query Table Version / Metadata / Query Table / Read Change Data Feed of the
 * Delta Sharing protocol, delta-io/delta-sharing PROTOCOL.md) into the exact response lines.
 * Transport-free and store-free: each line is handed to a callback as one complete compact
 * JSON object without the trailing newline (the REST adapter adds "\n" for NDJSON; gRPC
 * wraps it). URLs come from a caller-supplied signer.
 *
 * Errors follow common/err.h; messages are the reference server's where it has one.
 *   DD_EINVAL   bad parameter, malformed jsonPredicateHints, bad page token, a version or
 *               timestamp outside the table's history, CDF not recorded for a requested
 *               version (reference errorCode INVALID_PARAMETER_VALUE, HTTP 400; gRPC
 *               INVALID_ARGUMENT). The query calls never return DD_ERANGE: the protocol
 *               has no separate code for "out of range".
 *   DD_EPRECOND the table needs a capability the client did not declare: "Unsupported Delta
 *               Table Properties" / "Deletion Vector property disabled"
 *               (UNSUPPORTED_OPERATION, 400)
 * Threads: every function is reentrant; a dl_table may be shared. */
#ifndef DD_SERVER_SHARING_SHQ_H
#define DD_SERVER_SHARING_SHQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "store/sharing/shq_request.h"
#include "store/delta/dl.h"

/* ---------------- signing ---------------- */

/* Turns a file path into a URL. path is the URL-decoded path relative to the table root
 * (never absolute, never with a ".." segment: the engine refuses those, as the reference
 * server does); size is the file size or -1. *out_url is malloc'ed (freed by the engine);
 * *out_expires_ms is the URL's expiry (epoch ms) or -1. */
typedef struct shq_signer {
  int (*sign)(void *ctx, const char *path, int64_t size, char **out_url, int64_t *out_expires_ms);
  /* Optional, for the URLs of data files (one a line, so the cost counts): appends the URL
   * as a JSON string to out instead of handing out a malloc'ed one; otherwise as sign. */
  int (*put_json)(void *ctx, const char *path, int64_t size, dd_buf *out, int64_t *out_expires_ms);
  void *ctx;
  bool concurrent; /* sign and put_json may run on several threads at once */
} shq_signer;

/* ---------------- capabilities header ---------------- */

enum { SHQ_FORMAT_PARQUET = 1, SHQ_FORMAT_DELTA = 2 };

typedef struct shq_caps {
  unsigned formats;        /* bit set of SHQ_FORMAT_*; 0 (header absent) means parquet */
  bool rf_deletion_vectors;/* readerfeatures lists deletionVectors */
  bool rf_column_mapping;  /* readerfeatures lists columnMapping */
  size_t num_reader_features; /* how many reader features were listed (any name) */
  bool end_stream_action;  /* includeendstreamaction=true */
} shq_caps;
#define SHQ_CAPS_INIT {0}

/* Parses a delta-sharing-capabilities header value ("responseformat=delta,parquet;
 * readerfeatures=deletionvectors,columnmapping;includeendstreamaction=true"); keys and
 * values are case-insensitive, unknown keys and values are ignored. NULL is "no header".
 * DD_EINVAL only when responseformat names no known format. */
int shq_caps_parse(shq_caps *out, const char *header_value);

/* ---------------- table options (from the share configuration) ---------------- */

typedef struct shq_table_opts {
  bool history_shared;      /* version/timestamp/startingVersion/CDF allowed */
  int64_t start_version;    /* the share's startVersion, or -1 */
  const char *table_id;     /* binds page/refresh tokens to this shared table (required) */
  const char *table_name;   /* "share.schema.table" for messages, may be NULL */
  const uint8_t *token_key; /* HMAC key for tokens; NULL: unkeyed SHA-256 (tamper-evident only) */
  size_t token_key_len;
  int64_t token_ttl_ms;     /* page/refresh token lifetime; 0: page tokens never expire */
  int32_t max_page_size;    /* cap on maxFiles; 0: 10000 */
  dl_cache *cache;          /* latest snapshots come from here when set (else opened) */
} shq_table_opts;
#define SHQ_TABLE_OPTS_INIT {.start_version = -1, .table_id = ""}

/* ---------------- Query Table request: shq_request.h ---------------- */

/* ---------------- responses ---------------- */

/* One line: a complete compact JSON object, no newline, with a NUL at json[len]. Return
 * 0 to go on; any other value stops the engine and is returned. */
typedef int (*shq_line_fn)(void *ctx, const char *json, size_t len);

/* What the response headers need. Filled in before the first line is written, so an
 * adapter may send its headers when the first line arrives. */
typedef struct shq_result {
  int64_t version;          /* Delta-Table-Version */
  int format;               /* SHQ_FORMAT_PARQUET or SHQ_FORMAT_DELTA (responseformat=) */
  bool end_stream_action;   /* an endStreamAction line ends the response
                               (send includeendstreamaction=true) */
} shq_result;

/* Query Table Version: the latest version, or with starting_timestamp the earliest version
 * committed at or after it (0 when earlier than every commit; DD_EINVAL after the last). */
int shq_table_version(int64_t *out, dl_table *t, const char *starting_timestamp,
                      const shq_table_opts *opts);

/* Query Table Metadata: protocol and metaData lines (with size and numFiles), latest or as
 * of version (>= 0) or timestamp (both need history_shared; "version" is then set). */
int shq_table_metadata(dl_table *t, int64_t version, const char *timestamp,
                       const shq_caps *caps, const shq_table_opts *opts, shq_result *out,
                       shq_line_fn fn, void *ctx);

/* Query Table. Snapshot form: protocol, metaData, the files that may match the predicate
 * hints (JSON and SQL, AND-ed), cut after limitHint records; with version/timestamp every
 * file and the metaData carry "version" (and files "timestamp"). startingVersion form: the
 * dataChange add/remove lines of each commit with version and timestamp, plus historical
 * metaData.
 * Predicates: jsonPredicateHints is validated first, in either form: a tree that is not
 * JSON, names an unknown op or valueType, has a literal that does not parse as its
 * valueType, or breaks an op's arity is DD_EINVAL naming the problem. A well-formed tree is
 * applied best effort (a column the table lacks, or values that do not convert, keep the
 * file). SQL predicateHints stay best effort: one that does not parse is skipped.
 * A timestamp after the last commit is DD_EINVAL, as Delta time travel refuses it.
 * Paging: with maxFiles (capped by max_page_size) a page holds the files after the token's
 * position in path order, the nextPageToken names the rest. limitHint then counts records
 * across the pages of one query in path order (the token carries the count so far): a
 * file is sent while fewer than limitHint records (stats numRecords) went before it, and
 * the page that reaches the limit has no nextPageToken. Without maxFiles the limit counts
 * in the snapshot's file order. (The reference server ignores limitHint; the protocol
 * makes it a best-effort hint.) An endStreamAction line ends the response when the client
 * asked for it, sent maxFiles or includeRefreshToken (reference behaviour). now_ms is the
 * clock (token expiry). */
int shq_query_table(dl_table *t, const shq_query *q, const shq_caps *caps,
                    const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
                    shq_result *out, shq_line_fn fn, void *ctx);

/* Read Change Data Feed. Versions or timestamps (exactly one start; end optional). */
typedef struct shq_changes {
  int64_t starting_version;       /* -1: none */
  int64_t ending_version;         /* -1: none */
  const char *starting_timestamp; /* NULL: none */
  const char *ending_timestamp;   /* NULL: none */
  bool include_historical_metadata;
  bool include_historical_protocol; /* delta format only (PROTOCOL.md) */
  int64_t max_files;              /* -1: none */
  const char *page_token;
} shq_changes;
#define SHQ_CHANGES_INIT {.starting_version = -1, .ending_version = -1, .max_files = -1}

int shq_table_changes(dl_table *t, const shq_changes *c, const shq_caps *caps,
                      const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
                      shq_result *out, shq_line_fn fn, void *ctx);

/* ---------------- helpers ---------------- */

/* Parses a protocol timestamp: ISO-8601 ("2022-01-01T00:00:00Z", fraction and offset
 * allowed) or "yyyy-[m]m-[d]d hh:mm:ss[.f...]" (UTC). DD_EINVAL on anything else. */
int shq_parse_timestamp(const char *s, int64_t *out_ms);
/* Writes {"endStreamAction":{"errorMessage":...}}: how a failure after the first line
 * (HTTP 200 already sent) is reported to a client that asked for endStreamAction. */
int shq_write_stream_error(const char *message, shq_line_fn fn, void *ctx);

#endif
