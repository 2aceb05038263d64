/* shq_request.h: the Query Table request of the Delta Sharing query engine (shq.h) and
 * its JSON body decoder, apart from the engine so the REST adapter can decode a body
 * without seeing Delta types (the transport knows no Delta: see DESIGN.md). */
#ifndef DD_SERVER_SHARING_SHQ_REQUEST_H
#define DD_SERVER_SHARING_SHQ_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shq_query {
  char **predicate_hints;   /* SQL strings */
  size_t num_predicate_hints;
  char *json_predicate_hints;
  int64_t limit_hint;       /* -1: none */
  int64_t version;          /* -1: none */
  char *timestamp;          /* NULL: none */
  int64_t starting_version; /* -1: none */
  int64_t ending_version;   /* -1: none */
  bool include_historical_metadata;
  bool include_historical_protocol; /* delta format, with startingVersion */
  int64_t max_files;        /* -1: none */
  char *page_token;
  bool include_refresh_token;
  char *refresh_token;
} shq_query;
#define SHQ_QUERY_INIT {.limit_hint = -1, .version = -1, .starting_version = -1, \
                        .ending_version = -1, .max_files = -1}

/* Bounds on the hints of one query, so a request cannot make the engine hold or parse
 * more than a few hundred KiB of them: at most SHQ_MAX_PREDICATE_HINTS SQL hints of at
 * most SHQ_MAX_HINT_BYTES each, and a jsonPredicateHints text of at most
 * SHQ_MAX_JSON_HINTS_BYTES. (Hints are optional: clients send a handful.) */
#define SHQ_MAX_PREDICATE_HINTS 100
#define SHQ_MAX_HINT_BYTES 4096
#define SHQ_MAX_JSON_HINTS_BYTES (64 * 1024)

/* 0, or DD_EINVAL naming the bound q's hints exceed. */
int shq_query_check_hints(const shq_query *q);

/* Parses QueryTable's JSON body ("" or "{}" is an empty query). Strict types; unknown
 * fields ignored. DD_EINVAL with a message on bad JSON or a wrong type. */
int shq_query_parse_json(shq_query *out, const char *body, size_t len);
void shq_query_clear(shq_query *q);

#endif
