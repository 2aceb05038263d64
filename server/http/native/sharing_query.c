/* sharing_query.c: the Delta Sharing QueryTable body (PROTOCOL.md, "Read Data from a
 * Table") decoded in one pass into a QueryTableRequest: strict JSON types (an int64 may also
 * be a string holding one, as proto3 JSON writes it), unknown fields ignored, the reference
 * server's messages for negative values. What needs the engine (the bounds on predicate
 * hints, combinations of versions and tokens) is checked by the QueryTable handler, for
 * gRPC and REST alike. */
#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/native/native_int.h"

typedef Deltad__Sharing__V1__QueryTableRequest dd_native__qreq;

static int qd_bad_type(const char *field, const char *want) {
  return dd_err_set(DD_EINVAL, "Invalid QueryTable request: field '%s' must be %s", field, want);
}

/* A JSON integer, or a string holding one. */
static int qd_int(const json_t *v, const char *field, int64_t *out) {
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end = NULL;
    if (*s && (isdigit((unsigned char)*s) || *s == '-')) {
      long long x = strtoll(s, &end, 10);
      if (end && !*end && !(x == LLONG_MAX || x == LLONG_MIN)) {
        *out = x;
        return 0;
      }
    }
  }
  return qd_bad_type(field, "an integer");
}

/* A string into a message field (the previous value, the empty default, is not owned). */
static int qd_str(const json_t *v, const char *field, char **out) {
  if (!json_is_string(v)) return qd_bad_type(field, "a string");
  char *s = strdup(json_string_value(v));
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  if (*out && *out != protobuf_c_empty_string) free(*out);
  *out = s;
  return 0;
}

static int qd_bool(const json_t *v, const char *field, protobuf_c_boolean *out) {
  if (!json_is_boolean(v)) return qd_bad_type(field, "a boolean");
  *out = json_is_true(v);
  return 0;
}

static int qd_hints(const json_t *v, dd_native__qreq *m) {
  if (!json_is_array(v)) return qd_bad_type("predicateHints", "an array of strings");
  size_t n = json_array_size(v);
  for (size_t i = 0; i < m->n_predicate_hints; i++) free(m->predicate_hints[i]);
  free(m->predicate_hints);
  m->predicate_hints = NULL;
  m->n_predicate_hints = 0;
  if (n && !(m->predicate_hints = calloc(n, sizeof(char *))))
    return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    int rc = qd_str(json_array_get(v, i), "predicateHints", &m->predicate_hints[i]);
    if (rc) return rc;
    m->n_predicate_hints++;
  }
  return 0;
}

/* jsonPredicateHints is a string in PROTOCOL.md; an object is accepted and re-serialized. */
static int qd_json_hints(const json_t *v, dd_native__qreq *m) {
  if (!json_is_object(v)) return qd_str(v, "jsonPredicateHints", &m->json_predicate_hints);
  char *s = json_dumps(v, JSON_COMPACT);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  if (m->json_predicate_hints != protobuf_c_empty_string) free(m->json_predicate_hints);
  m->json_predicate_hints = s;
  return 0;
}

/* The optional int64 fields: JSON name, where the value and its oneof case live, the
 * least value accepted and the reference server's message below it. */
typedef struct qd_opt {
  const char *name;
  size_t value, cse; /* offsets */
  int set;           /* the oneof case meaning "present" (its field number) */
  int64_t min;
  const char *msg;
} qd_opt;

#define QD_CASE(F) DELTAD__SHARING__V1__QUERY_TABLE_REQUEST___##F##_##F
#define QD_OPT(json, f, F, min, msg)                                                       \
  {json, offsetof(dd_native__qreq, f), offsetof(dd_native__qreq, _##f##_case), QD_CASE(F), \
   min, msg}
static const qd_opt qd_opts[] = {
    QD_OPT("limitHint", limit_hint, LIMIT_HINT, 0, "limitHint cannot be negative."),
    QD_OPT("version", version, VERSION, 0, "table version cannot be negative."),
    QD_OPT("startingVersion", starting_version, STARTING_VERSION, 0,
           "startingVersion cannot be negative."),
    QD_OPT("endingVersion", ending_version, ENDING_VERSION, 0, "endingVersion cannot be negative."),
    QD_OPT("maxFiles", max_files, MAX_FILES, 1, "maxFiles must be positive."),
};
#undef QD_OPT
#undef QD_CASE

static int qd_opt_field(dd_native__qreq *m, const qd_opt *o, const json_t *v) {
  int64_t x = 0;
  int rc = qd_int(v, o->name, &x);
  if (rc) return rc;
  if (x < o->min) return dd_err_set(DD_EINVAL, "%s", o->msg);
  /* the case members are enums (int-sized, as protobuf-c lays them out) */
  _Static_assert(sizeof(m->_limit_hint_case) == sizeof(int), "oneof case is an int");
  memcpy((char *)m + o->value, &x, sizeof x);
  memcpy((char *)m + o->cse, &o->set, sizeof o->set);
  return 0;
}

static int qd_field(dd_native__qreq *m, const char *k, const json_t *v) {
  if (json_is_null(v)) return 0;
  for (size_t i = 0; i < sizeof qd_opts / sizeof qd_opts[0]; i++)
    if (!strcmp(k, qd_opts[i].name)) return qd_opt_field(m, &qd_opts[i], v);
  if (!strcmp(k, "predicateHints")) return qd_hints(v, m);
  if (!strcmp(k, "jsonPredicateHints")) return qd_json_hints(v, m);
  if (!strcmp(k, "timestamp")) return qd_str(v, k, &m->timestamp);
  if (!strcmp(k, "includeHistoricalMetadata")) return qd_bool(v, k, &m->include_historical_metadata);
  if (!strcmp(k, "pageToken")) return qd_str(v, k, &m->page_token);
  if (!strcmp(k, "includeRefreshToken")) return qd_bool(v, k, &m->include_refresh_token);
  if (!strcmp(k, "refreshToken")) return qd_str(v, k, &m->refresh_token);
  if (!strcmp(k, "includeHistoricalProtocol")) { /* typed, but QueryTable does not take it */
    protobuf_c_boolean ignored;
    return qd_bool(v, k, &ignored);
  }
  return 0;
}

int dd_native__query_decode(Deltad__Sharing__V1__QueryTableRequest **out, const char *body,
                            size_t len) {
  dd_native__qreq *m = malloc(sizeof *m);
  json_t *root = NULL;
  json_error_t jerr;
  size_t i = 0;
  int rc = 0;
  *out = NULL;
  if (!m) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__query_table_request__init(m);
  while (i < len && isspace((unsigned char)body[i])) i++;
  if (i == len) goto cleanup; /* "" is an empty query */
  if (!(root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr))) {
    rc = dd_err_set(DD_EINVAL, "Invalid QueryTable request: %s", jerr.text);
    goto cleanup;
  }
  if (!json_is_object(root)) {
    rc = dd_err_set(DD_EINVAL, "Invalid QueryTable request: the body must be a JSON object");
    goto cleanup;
  }
  const char *k;
  json_t *v;
  json_object_foreach(root, k, v) {
    if ((rc = qd_field(m, k, v))) goto cleanup;
  }
cleanup:
  json_decref(root);
  if (rc) protobuf_c_message_free_unpacked(&m->base, NULL);
  else *out = m;
  return rc;
}
