/* shq_parse.c: decoding what a recipient sends: the delta-sharing-capabilities header and
 * the Query Table JSON body (strict types, unknown fields ignored). */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

/* ======================= capabilities header ======================= */

/* Trims [b, e) in place; returns the trimmed length and moves *b. */
static size_t trim(const char **b, const char *e) {
  while (*b < e && isspace((unsigned char)**b)) (*b)++;
  while (e > *b && isspace((unsigned char)e[-1])) e--;
  return (size_t)(e - *b);
}

static bool eq_ci(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && !strncasecmp(s, lit, n);
}

static void caps_value(shq_caps *c, const char *key, size_t kn, const char *v, size_t vn,
                       bool *fmt_seen) {
  if (eq_ci(key, kn, "responseformat")) {
    *fmt_seen = true;
    if (eq_ci(v, vn, "parquet")) c->formats |= SHQ_FORMAT_PARQUET;
    else if (eq_ci(v, vn, "delta")) c->formats |= SHQ_FORMAT_DELTA;
  } else if (eq_ci(key, kn, "readerfeatures")) {
    if (!vn) return;
    c->num_reader_features++;
    if (eq_ci(v, vn, "deletionvectors")) c->rf_deletion_vectors = true;
    if (eq_ci(v, vn, "columnmapping")) c->rf_column_mapping = true;
  } else if (eq_ci(key, kn, "includeendstreamaction")) {
    c->end_stream_action = eq_ci(v, vn, "true");
  }
}

int shq_caps_parse(shq_caps *out, const char *hv) {
  *out = (shq_caps)SHQ_CAPS_INIT;
  bool fmt_seen = false;
  for (const char *p = hv; p && *p;) {
    const char *semi = strchr(p, ';'), *end = semi ? semi : p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (eq) {
      const char *k = p;
      size_t kn = trim(&k, eq);
      for (const char *v = eq + 1; v <= end;) {
        const char *comma = memchr(v, ',', (size_t)(end - v)), *ve = comma ? comma : end;
        const char *vb = v;
        size_t vn = trim(&vb, ve);
        caps_value(out, k, kn, vb, vn, &fmt_seen);
        v = ve + 1;
      }
    }
    p = semi ? semi + 1 : end;
  }
  if (fmt_seen && !out->formats)
    return dd_err_set(DD_EINVAL, "responseformat names no supported format (parquet, delta)");
  return 0;
}

/* ======================= Query Table body ======================= */

static int bad_type(const char *field, const char *want) {
  return dd_err_set(DD_EINVAL, "Invalid QueryTable request: field '%s' must be %s", field, want);
}

/* A JSON integer, or a string holding one (proto3 JSON writes int64 as a string). */
static int get_int(const json_t *v, const char *field, int64_t *out) {
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
  return bad_type(field, "an integer");
}

static int get_str(const json_t *v, const char *field, char **out) {
  if (!json_is_string(v)) return bad_type(field, "a string");
  if (!(*out = strdup(json_string_value(v)))) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static int get_bool(const json_t *v, const char *field, bool *out) {
  if (!json_is_boolean(v)) return bad_type(field, "a boolean");
  *out = json_is_true(v);
  return 0;
}

static int too_many_hints(size_t n) {
  return dd_err_set(DD_EINVAL, "predicateHints: %zu hints; at most %d are accepted", n,
                    SHQ_MAX_PREDICATE_HINTS);
}

int shq_query_check_hints(const shq_query *q) {
  if (q->num_predicate_hints > SHQ_MAX_PREDICATE_HINTS) return too_many_hints(q->num_predicate_hints);
  for (size_t i = 0; i < q->num_predicate_hints; i++)
    if (strlen(q->predicate_hints[i]) > SHQ_MAX_HINT_BYTES)
      return dd_err_set(DD_EINVAL, "predicateHints: a hint of more than %d bytes", SHQ_MAX_HINT_BYTES);
  if (q->json_predicate_hints && strlen(q->json_predicate_hints) > SHQ_MAX_JSON_HINTS_BYTES)
    return dd_err_set(DD_EINVAL, "jsonPredicateHints: more than %d bytes", SHQ_MAX_JSON_HINTS_BYTES);
  return 0;
}

static int get_hints(const json_t *v, shq_query *q) {
  if (!json_is_array(v)) return bad_type("predicateHints", "an array of strings");
  size_t n = json_array_size(v);
  if (n > SHQ_MAX_PREDICATE_HINTS) return too_many_hints(n);
  if (n && !(q->predicate_hints = calloc(n, sizeof(char *))))
    return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    int rc = get_str(json_array_get(v, i), "predicateHints", &q->predicate_hints[i]);
    if (rc) return rc;
    q->num_predicate_hints++;
  }
  return 0;
}

/* jsonPredicateHints is a string in PROTOCOL.md; an object is accepted and re-serialized. */
static int get_jph(const json_t *v, shq_query *q) {
  if (json_is_object(v)) {
    q->json_predicate_hints = json_dumps(v, JSON_COMPACT);
    return q->json_predicate_hints ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  }
  return get_str(v, "jsonPredicateHints", &q->json_predicate_hints);
}

/* A non-negative integer field; msg is the reference server's message for a negative one. */
static int get_nonneg(const json_t *v, const char *field, int64_t *out, int64_t min,
                      const char *msg) {
  int rc = get_int(v, field, out);
  if (!rc && *out < min) return dd_err_set(DD_EINVAL, "%s", msg);
  return rc;
}

static int query_field(shq_query *q, const char *k, const json_t *v) {
  if (json_is_null(v)) return 0;
  if (!strcmp(k, "predicateHints")) return get_hints(v, q);
  if (!strcmp(k, "jsonPredicateHints")) return get_jph(v, q);
  if (!strcmp(k, "limitHint")) return get_nonneg(v, k, &q->limit_hint, 0, "limitHint cannot be negative.");
  if (!strcmp(k, "version")) return get_nonneg(v, k, &q->version, 0, "table version cannot be negative.");
  if (!strcmp(k, "timestamp")) return get_str(v, k, &q->timestamp);
  if (!strcmp(k, "startingVersion"))
    return get_nonneg(v, k, &q->starting_version, 0, "startingVersion cannot be negative.");
  if (!strcmp(k, "endingVersion"))
    return get_nonneg(v, k, &q->ending_version, 0, "endingVersion cannot be negative.");
  if (!strcmp(k, "includeHistoricalMetadata")) return get_bool(v, k, &q->include_historical_metadata);
  if (!strcmp(k, "includeHistoricalProtocol")) return get_bool(v, k, &q->include_historical_protocol);
  if (!strcmp(k, "maxFiles")) return get_nonneg(v, k, &q->max_files, 1, "maxFiles must be positive.");
  if (!strcmp(k, "pageToken")) return get_str(v, k, &q->page_token);
  if (!strcmp(k, "includeRefreshToken")) return get_bool(v, k, &q->include_refresh_token);
  if (!strcmp(k, "refreshToken")) return get_str(v, k, &q->refresh_token);
  return 0;
}

int shq_query_parse_json(shq_query *out, const char *body, size_t len) {
  *out = (shq_query)SHQ_QUERY_INIT;
  size_t i = 0;
  while (i < len && isspace((unsigned char)body[i])) i++;
  if (i == len) return 0;
  json_error_t jerr;
  json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) return dd_err_set(DD_EINVAL, "Invalid QueryTable request: %s", jerr.text);
  int rc = 0;
  if (!json_is_object(root)) {
    rc = dd_err_set(DD_EINVAL, "Invalid QueryTable request: the body must be a JSON object");
    goto cleanup;
  }
  const char *k;
  json_t *v;
  json_object_foreach(root, k, v) {
    if ((rc = query_field(out, k, v))) goto cleanup;
  }
  rc = shq_query_check_hints(out);
cleanup:
  json_decref(root);
  if (rc) shq_query_clear(out);
  return rc;
}

void shq_query_clear(shq_query *q) {
  if (!q) return;
  for (size_t i = 0; i < q->num_predicate_hints; i++) free(q->predicate_hints[i]);
  free(q->predicate_hints);
  free(q->json_predicate_hints);
  free(q->timestamp);
  free(q->page_token);
  free(q->refresh_token);
  *q = (shq_query)SHQ_QUERY_INIT;
}
