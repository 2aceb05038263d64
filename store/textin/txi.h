/* txi.h: CSV and JSON-lines files read into Arrow batches, for sources that are not
 * tables (`deltactl table merge --source FILE.csv | FILE.json`), read as Spark reads them:
 *
 * - CSV (.csv): the first line names the columns (header=true); RFC 4180 quoting ("" is a
 *   quote inside a quoted field; quoted fields may hold commas and line breaks, as
 *   Spark's multiLine=true reads them); an
 *   empty field, quoted or not, is NULL (Spark's default nullValue); CRLF or LF. Without
 *   a schema every column is a string (Spark without inferSchema).
 * - JSON lines (.json, .jsonl, .ndjson): one object per line (blank lines skipped); the
 *   columns are every key seen, in alphabetical order (Spark's inference); a column is
 *   bigint when every non-null value is an integer, double when every one is a number,
 *   boolean when every one is a boolean, else string (objects and arrays as their compact
 *   JSON text).
 * - With a schema ("x INT, y STRING, ..."), the file's columns of those names (case-
 *   insensitive) are cast to those types (ANSI: a value that does not parse is an error),
 *   in the schema's order; a column missing from the file is DD_EINVAL.
 *
 * The whole file is read (sources are small next to tables). Errors name the file, line
 * and column. */
#ifndef DD_STORE_TEXTIN_TXI_H
#define DD_STORE_TEXTIN_TXI_H

#include <stdbool.h>
#include <stddef.h>

#include "store/arrow/arrow.h"

typedef struct txi_opts {
  const char *schema; /* "name TYPE, ..." or NULL: inferred (see above) */
  size_t batch_rows;  /* rows per batch; 0: 65536 */
} txi_opts;

/* True when path names a file this module reads (by its extension). */
bool txi_is_text(const char *path);
/* Reads path: *schema (the batches' schema) and *batches[0..*n) (malloc'ed array); the
 * caller frees every batch, then the schema. */
int txi_read(arw_schema **schema, arw_batch ***batches, size_t *n, const char *path, const txi_opts *opts);
/* The same over text[0..len) already in memory: JSON lines when json, else CSV. */
int txi_read_text(arw_schema **schema, arw_batch ***batches, size_t *n, const char *text, size_t len, bool json,
                  const txi_opts *opts);

#endif
