/* dop_ddl.c: Spark SQL DDL type text to Delta's JSON schema types. Accepts the primitive
 * names and their aliases (int/integer, bigint/long, smallint/short, tinyint/byte, real/
 * float, varchar(n)/char(n) -> string, decimal/dec/numeric(p,s)), array<T>, map<K,V>,
 * struct<name:T,...>, and column lists "a INT, b STRING NOT NULL COMMENT 'x'". Names may be
 * `quoted`, a doubled backtick standing for one (Spark's rule). Nesting is bounded by
 * DOP__DDL_MAX_DEPTH, checked before each descent, so hostile text cannot exhaust the stack. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"

typedef struct lex {
  const char *p, *start;
} lex;

static void ws(lex *l) {
  while (isspace((unsigned char)*l->p)) l->p++;
}

static bool eat(lex *l, char c) {
  ws(l);
  if (*l->p != c) return false;
  l->p++;
  return true;
}

/* An identifier (letters, digits, '_') or a `quoted` name (`` inside is one backtick) into
 * buf; false when there is none, it is unterminated or it does not fit. */
static bool ident(lex *l, char *buf, size_t cap) {
  ws(l);
  size_t n = 0;
  bool fits = true;
  if (*l->p == '`') {
    for (l->p++; *l->p; l->p++) {
      if (*l->p == '`' && l->p[1] != '`') break;
      if (*l->p == '`') l->p++; /* `` -> ` */
      if (n + 1 < cap) buf[n++] = *l->p;
      else fits = false;
    }
    if (*l->p != '`') return false;
    l->p++;
  } else {
    while (isalnum((unsigned char)*l->p) || *l->p == '_') {
      if (n + 1 < cap) buf[n++] = *l->p;
      else fits = false;
      l->p++;
    }
  }
  buf[n] = '\0';
  return n > 0 && fits;
}

static int bad(lex *l, const char *what) {
  return dd_err_set(DD_EINVAL, "bad type '%s': %s at offset %d", l->start, what, (int)(l->p - l->start));
}

static int parse_type(lex *l, json_t **out, int depth);

/* A field whose type sits at nesting level depth. */
static int parse_field(lex *l, json_t **out, bool colon, int depth) {
  char name[DOP__DDL_MAX_NAME + 1];
  if (!ident(l, name, sizeof name)) return bad(l, "expected a field name (of at most 255 bytes)");
  json_t *nm = json_string(name);
  if (!nm) return bad(l, "field name is not valid UTF-8");
  if (colon) eat(l, ':');
  json_t *t = NULL;
  int rc = parse_type(l, &t, depth);
  if (rc) return json_decref(nm), rc;
  bool nullable = true;
  json_t *md = json_object();
  for (;;) {
    ws(l);
    if (!strncasecmp(l->p, "not null", 8)) l->p += 8, nullable = false;
    else if (!strncasecmp(l->p, "comment", 7)) {
      l->p += 7;
      ws(l);
      char q = *l->p;
      json_t *c = NULL;
      if (q == '\'' || q == '"') {
        const char *s = ++l->p;
        while (*l->p && *l->p != q) l->p++;
        c = json_stringn(s, (size_t)(l->p - s));
      }
      if (!c) {
        json_decref(nm), json_decref(t), json_decref(md);
        return bad(l, q == '\'' || q == '"' ? "comment is not valid UTF-8" : "expected a quoted comment");
      }
      json_object_set_new(md, "comment", c);
      if (*l->p) l->p++;
    } else break;
  }
  *out = json_pack("{s:o,s:o,s:b,s:o}", "name", nm, "type", t, "nullable", nullable, "metadata", md);
  return *out ? 0 : DOP_OOM();
}

static int parse_int(lex *l, int *v) {
  ws(l);
  if (!isdigit((unsigned char)*l->p)) return bad(l, "expected a number");
  *v = (int)strtol(l->p, (char **)&l->p, 10);
  return 0;
}

/* A type at nesting level depth (a column's type is at level 1, its element at 2...). */
static int parse_type(lex *l, json_t **out, int depth) {
  static const struct { const char *ddl, *delta; } prim[] = {
      {"int", "integer"}, {"integer", "integer"}, {"bigint", "long"}, {"long", "long"},
      {"smallint", "short"}, {"short", "short"}, {"tinyint", "byte"}, {"byte", "byte"},
      {"float", "float"}, {"real", "float"}, {"double", "double"}, {"string", "string"},
      {"boolean", "boolean"}, {"bool", "boolean"}, {"binary", "binary"}, {"date", "date"},
      {"timestamp", "timestamp"}, {"timestamp_ltz", "timestamp"}, {"timestamp_ntz", "timestamp_ntz"},
      {"variant", "variant"}, {"void", "void"},
  };
  char name[64];
  int rc;
  if (depth > DOP__DDL_MAX_DEPTH)
    return dd_err_set(DD_EINVAL, "bad type: nested more than %d levels deep at offset %d", DOP__DDL_MAX_DEPTH,
                      (int)(l->p - l->start));
  if (!ident(l, name, sizeof name)) return bad(l, "expected a type");
  if (!strcasecmp(name, "array")) {
    json_t *e = NULL;
    if (!eat(l, '<')) return bad(l, "expected '<'");
    if ((rc = parse_type(l, &e, depth + 1))) return rc;
    if (!eat(l, '>')) return json_decref(e), bad(l, "expected '>'");
    *out = json_pack("{s:s,s:o,s:b}", "type", "array", "elementType", e, "containsNull", 1);
    return *out ? 0 : DOP_OOM();
  }
  if (!strcasecmp(name, "map")) {
    json_t *k = NULL, *v = NULL;
    if (!eat(l, '<')) return bad(l, "expected '<'");
    if ((rc = parse_type(l, &k, depth + 1))) return rc;
    if (!eat(l, ',')) return json_decref(k), bad(l, "expected ','");
    if ((rc = parse_type(l, &v, depth + 1))) return json_decref(k), rc;
    if (!eat(l, '>')) return json_decref(k), json_decref(v), bad(l, "expected '>'");
    *out = json_pack("{s:s,s:o,s:o,s:b}", "type", "map", "keyType", k, "valueType", v, "valueContainsNull", 1);
    return *out ? 0 : DOP_OOM();
  }
  if (!strcasecmp(name, "struct")) {
    json_t *fields = json_array();
    if (!eat(l, '<')) return json_decref(fields), bad(l, "expected '<'");
    if (!eat(l, '>')) {
      do {
        json_t *f = NULL;
        if ((rc = parse_field(l, &f, true, depth + 1))) return json_decref(fields), rc;
        json_array_append_new(fields, f);
      } while (eat(l, ','));
      if (!eat(l, '>')) return json_decref(fields), bad(l, "expected '>'");
    }
    *out = json_pack("{s:s,s:o}", "type", "struct", "fields", fields);
    return *out ? 0 : DOP_OOM();
  }
  if (!strcasecmp(name, "decimal") || !strcasecmp(name, "dec") || !strcasecmp(name, "numeric")) {
    int p = 10, s = 0;
    if (eat(l, '(')) {
      if ((rc = parse_int(l, &p))) return rc;
      if (eat(l, ',') && (rc = parse_int(l, &s))) return rc;
      if (!eat(l, ')')) return bad(l, "expected ')'");
    }
    if (p < 1 || p > 38 || s < 0 || s > p) return bad(l, "decimal precision 1..38, scale 0..precision");
    char b[32];
    snprintf(b, sizeof b, "decimal(%d,%d)", p, s);
    return (*out = json_string(b)) ? 0 : DOP_OOM();
  }
  if (!strcasecmp(name, "varchar") || !strcasecmp(name, "char")) {
    int n;
    if (!eat(l, '(') || parse_int(l, &n) || !eat(l, ')')) return bad(l, "expected (length)");
    return (*out = json_string("string")) ? 0 : DOP_OOM();
  }
  for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
    if (!strcasecmp(name, prim[i].ddl)) return (*out = json_string(prim[i].delta)) ? 0 : DOP_OOM();
  return dd_err_set(DD_EINVAL, "unknown type '%s' in '%s'", name, l->start);
}

int dop__ddl_type(json_t **out, const char *ddl) {
  *out = NULL;
  lex l = {ddl ? ddl : "", ddl ? ddl : ""};
  int rc = parse_type(&l, out, 1);
  ws(&l);
  if (!rc && *l.p) {
    json_decref(*out);
    *out = NULL;
    rc = bad(&l, "trailing text");
  }
  return rc;
}

int dop__ddl_fields(json_t **out, const char *ddl) {
  lex l = {ddl, ddl};
  json_t *a = json_array();
  int rc = 0;
  do {
    json_t *f = NULL;
    if ((rc = parse_field(&l, &f, false, 1))) break;
    json_array_append_new(a, f);
  } while (eat(&l, ','));
  ws(&l);
  if (!rc && *l.p) rc = bad(&l, "trailing text");
  if (rc) json_decref(a), a = NULL;
  *out = a;
  return rc;
}

int dop_ddl_type_json(char **out, const char *ddl) {
  json_t *t = NULL;
  int rc = dop__ddl_type(&t, ddl);
  if (rc) return rc;
  *out = json_dumps(t, JSON_COMPACT | JSON_ENCODE_ANY);
  json_decref(t);
  return *out ? 0 : DOP_OOM();
}

int dop_ddl_schema_json(char **out, const char *ddl) {
  *out = NULL;
  json_t *fields = NULL;
  if (dop__ddl_fields(&fields, ddl ? ddl : "")) {
    dd_err_clear(); /* not a column list: one type (its own error if it is not one either) */
    return dop_ddl_type_json(out, ddl);
  }
  json_t *st = json_pack("{s:s, s:o}", "type", "struct", "fields", fields);
  if (!st) return DOP_OOM();
  *out = json_dumps(st, JSON_COMPACT);
  json_decref(st);
  return *out ? 0 : DOP_OOM();
}
