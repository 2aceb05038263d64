/* shq_stats.c: reads what a predicate needs from one file's statistics (the add action's
 * "stats" JSON text: numRecords, tightBounds, and one column's minValues / maxValues /
 * nullCount) in a single pass over the text, without building a JSON tree. Predicate
 * evaluation runs this once per column reference per file, so skipping the allocation of
 * a whole jansson tree is what makes stats pruning of large tables cheap.
 *
 * The reader is strict about structure (a text it cannot read as one JSON object is "no
 * stats": every value unknown, the file kept), follows jansson's rule that the last of
 * duplicate keys wins, and returns raw tokens; shq_pred.c converts them. The rare key with
 * escape sequences is decoded with jansson before it is compared. */
#include <string.h>

#include "store/sharing/shq_internal.h"

#define STATS_MAX_DEPTH 64

static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* p at '"': the end of the string (after the closing quote) or NULL; *esc when it holds
 * an escape sequence. Control characters (NUL included) are refused, as in JSON. */
static const char *str_end(const char *p, bool *esc) {
  for (p++;;) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c == '\\') {
      *esc = true;
      if ((unsigned char)p[1] < 0x20) return NULL;
      p += 2;
    } else {
      p++;
    }
  }
}

static const char *digits(const char *p) {
  if (!is_digit(*p)) return NULL;
  while (is_digit(*p)) p++;
  return p;
}

/* A JSON number at p: its end or NULL; *real when it has a fraction or an exponent. */
static const char *num_end(const char *p, bool *real) {
  *real = false;
  if (*p == '-') p++;
  if (!(p = digits(p))) return NULL;
  if (*p == '.') {
    *real = true;
    if (!(p = digits(p + 1))) return NULL;
  }
  if (*p == 'e' || *p == 'E') {
    *real = true;
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!(p = digits(p))) return NULL;
  }
  return p;
}

static const char *lit_end(const char *p, const char *word, shq_tok *t, shq_tok_kind kind) {
  size_t n = strlen(word);
  if (strncmp(p, word, n)) return NULL;
  *t = (shq_tok){kind, p, n};
  return p + n;
}

static const char *value(const char *p, shq_tok *t, int depth);

/* Skips a container at p ('{' or '['); its end or NULL. */
static const char *container(const char *p, int depth) {
  char close = *p == '{' ? '}' : ']';
  bool obj = close == '}';
  if (depth > STATS_MAX_DEPTH) return NULL;
  p = ws(p + 1);
  if (*p == close) return p + 1;
  for (;;) {
    shq_tok t;
    if (obj) {
      bool esc = false;
      if (*p != '"' || !(p = str_end(p, &esc))) return NULL;
      p = ws(p);
      if (*p != ':') return NULL;
      p = ws(p + 1);
    }
    if (!(p = value(p, &t, depth + 1))) return NULL;
    p = ws(p);
    if (*p == close) return p + 1;
    if (*p != ',') return NULL;
    p = ws(p + 1);
  }
}

/* One value at p: its end or NULL. Scalars set *t to their token (strings without the
 * quotes); containers set kind SHQ_TOK_OTHER. */
static const char *value(const char *p, shq_tok *t, int depth) {
  bool flag = false;
  const char *e;
  switch (*p) {
  case '"':
    if (!(e = str_end(p, &flag))) return NULL;
    *t = (shq_tok){flag ? SHQ_TOK_ESCSTRING : SHQ_TOK_STRING, p + 1, (size_t)(e - p - 2)};
    return e;
  case '{':
  case '[':
    *t = (shq_tok){SHQ_TOK_OTHER, p, 0};
    return container(p, depth);
  case 't': return lit_end(p, "true", t, SHQ_TOK_TRUE);
  case 'f': return lit_end(p, "false", t, SHQ_TOK_FALSE);
  case 'n': return lit_end(p, "null", t, SHQ_TOK_NULL);
  default:
    if (!(e = num_end(p, &flag))) return NULL;
    *t = (shq_tok){flag ? SHQ_TOK_REAL : SHQ_TOK_INT, p, (size_t)(e - p)};
    return e;
  }
}

/* Reads one member key at p ('"') and the ':' after it; the raw key is k, kn bytes (without
 * quotes), *esc when it has escapes. Returns the start of the member's value or NULL. */
static const char *key(const char *p, const char **k, size_t *kn, bool *esc) {
  *esc = false;
  if (*p != '"') return NULL;
  const char *e = str_end(p, esc);
  if (!e) return NULL;
  *k = p + 1;
  *kn = (size_t)(e - p - 2);
  p = ws(e);
  return *p == ':' ? ws(p + 1) : NULL;
}

/* Whether the raw key k (escaped when esc) is the n bytes of s. */
static bool key_is(const char *k, size_t kn, bool esc, const char *s, size_t n) {
  if (!esc) return kn == n && !memcmp(k, s, n);
  json_t *j = json_loadb(k - 1, kn + 2, JSON_DECODE_ANY, NULL);
  bool same = json_is_string(j) && json_string_length(j) == n && !memcmp(json_string_value(j), s, n);
  json_decref(j);
  return same;
}

/* p at '{': finds the dotted path in this object into *slot (cleared first: a later
 * duplicate key replaces what an earlier one said). Its end or NULL. */
static const char *path_object(const char *p, int depth, const char *path, shq_tok *slot) {
  const char *dot = strchr(path, '.');
  size_t seg = dot ? (size_t)(dot - path) : strlen(path);
  *slot = (shq_tok){0};
  if (depth > STATS_MAX_DEPTH) return NULL;
  p = ws(p + 1);
  if (*p == '}') return p + 1;
  for (;;) {
    const char *k;
    size_t kn;
    bool esc;
    if (!(p = key(p, &k, &kn, &esc))) return NULL;
    bool hit = key_is(k, kn, esc, path, seg);
    shq_tok t;
    if (hit && dot && *p == '{') {
      p = path_object(p, depth + 1, dot + 1, slot);
    } else {
      p = value(p, &t, depth + 1);
      if (hit) *slot = dot ? (shq_tok){0} : t;
    }
    if (!p) return NULL;
    p = ws(p);
    if (*p == '}') return p + 1;
    if (*p != ',') return NULL;
    p = ws(p + 1);
  }
}

bool shq__stats_lookup(const char *stats, const char *path, shq_col_stats *out) {
  *out = (shq_col_stats){0};
  const char *p = ws(stats);
  if (*p != '{' || (path && !*path)) return false;
  p = ws(p + 1);
  if (*p == '}') return !*ws(p + 1);
  for (;;) {
    const char *k;
    size_t kn;
    bool esc;
    if (!(p = key(p, &k, &kn, &esc))) goto bad;
    shq_tok *slot = NULL, t;
    if (key_is(k, kn, esc, "minValues", 9)) slot = &out->min;
    else if (key_is(k, kn, esc, "maxValues", 9)) slot = &out->max;
    else if (key_is(k, kn, esc, "nullCount", 9)) slot = &out->null_count;
    if (slot && path && *p == '{') {
      p = path_object(p, 1, path, slot);
    } else {
      p = value(p, &t, 1);
      if (slot) *slot = (shq_tok){0};
      else if (key_is(k, kn, esc, "numRecords", 10)) out->num_records = t;
      else if (key_is(k, kn, esc, "tightBounds", 11)) out->tight_bounds = t;
    }
    if (!p) goto bad;
    p = ws(p);
    if (*p == '}') {
      if (*ws(p + 1)) goto bad;
      return true;
    }
    if (*p != ',') goto bad;
    p = ws(p + 1);
  }
bad:
  *out = (shq_col_stats){0};
  return false;
}
