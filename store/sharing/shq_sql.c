/* shq_sql.c: the SQL predicateHints subset of PROTOCOL.md ("SQL Expressions for
 * Filtering"): comparisons (=, <>, !=, <, <=, >, >=) between a column and a literal, IS
 * [NOT] NULL, AND / OR / NOT and parentheses. Columns take their value type from the
 * table schema; a literal is read in its column's type. Compiles to the predicate tree of
 * shq_pred.c; anything else fails and the caller skips that hint (best effort). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

#define SQL_MAX_DEPTH 64

typedef enum { T_END, T_IDENT, T_STR, T_NUM, T_OP, T_LP, T_RP, T_BAD } tkind;

typedef struct lexer {
  const char *s;
  size_t pos;
  tkind kind;
  const char *tok;
  size_t n;
  char *text; /* unquoted string / identifier text (malloc'ed) */
  const dl_schema *schema;
  int depth;
} lexer;

static int serr(const char *what) {
  return dd_err_set(DD_EINVAL, "unsupported predicateHint: %s", what);
}

static void lex_text(lexer *L, const char *b, size_t n, char quote) {
  free(L->text);
  L->text = malloc(n + 1);
  if (!L->text) return;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    L->text[w++] = b[i];
    if (quote && b[i] == quote && i + 1 < n && b[i + 1] == quote) i++;
  }
  L->text[w] = 0;
  L->n = w;
}

static void lex_quoted(lexer *L, char q, tkind kind) {
  size_t b = ++L->pos;
  for (;;) {
    if (!L->s[L->pos]) {
      L->kind = T_BAD;
      return;
    }
    if (L->s[L->pos] == q) {
      if (L->s[L->pos + 1] == q) {
        L->pos += 2;
        continue;
      }
      break;
    }
    L->pos++;
  }
  lex_text(L, L->s + b, L->pos - b, q);
  L->pos++;
  L->kind = L->text ? kind : T_BAD;
}

static void next(lexer *L) {
  const char *s = L->s;
  while (isspace((unsigned char)s[L->pos])) L->pos++;
  char c = s[L->pos];
  L->tok = s + L->pos;
  if (!c) {
    L->kind = T_END;
  } else if (c == '(' || c == ')') {
    L->kind = c == '(' ? T_LP : T_RP;
    L->pos++;
  } else if (c == '\'' || c == '"') {
    lex_quoted(L, c, T_STR);
  } else if (c == '`') {
    lex_quoted(L, '`', T_IDENT);
  } else if (strchr("=<>!", c)) {
    size_t b = L->pos++;
    if (s[L->pos] == '=' || (c == '<' && s[L->pos] == '>')) L->pos++;
    L->n = L->pos - b;
    L->kind = (c == '!' && L->n == 1) ? T_BAD : T_OP;
  } else if (isdigit((unsigned char)c) || ((c == '-' || c == '.') && isdigit((unsigned char)s[L->pos + 1]))) {
    size_t b = L->pos++;
    while (isalnum((unsigned char)s[L->pos]) || s[L->pos] == '.' ||
           ((s[L->pos] == '-' || s[L->pos] == '+') && tolower((unsigned char)s[L->pos - 1]) == 'e'))
      L->pos++;
    lex_text(L, s + b, L->pos - b, 0);
    L->kind = L->text ? T_NUM : T_BAD;
  } else if (isalpha((unsigned char)c) || c == '_') {
    size_t b = L->pos;
    while (isalnum((unsigned char)s[L->pos]) || s[L->pos] == '_' || s[L->pos] == '.') L->pos++;
    lex_text(L, s + b, L->pos - b, 0);
    L->kind = L->text ? T_IDENT : T_BAD;
  } else {
    L->kind = T_BAD;
  }
}

static bool kw(const lexer *L, const char *word) {
  return L->kind == T_IDENT && L->tok[0] != '`' && !strcasecmp(L->text, word);
}

static shq_pred *node(shq_op op, size_t nkids) {
  shq_pred *p = calloc(1, sizeof *p);
  if (p && nkids && !(p->kids = calloc(nkids, sizeof *p->kids))) {
    free(p);
    return NULL;
  }
  if (p) p->op = op;
  return p;
}

static int vtype_of(const dl_type *t, shq_vtype *out) {
  switch (t->kind) {
  case DL_TYPE_STRING: *out = SHQ_VT_STRING; return 0;
  case DL_TYPE_LONG: *out = SHQ_VT_LONG; return 0;
  case DL_TYPE_INTEGER:
  case DL_TYPE_SHORT:
  case DL_TYPE_BYTE: *out = SHQ_VT_INT; return 0;
  case DL_TYPE_FLOAT: *out = SHQ_VT_FLOAT; return 0;
  case DL_TYPE_DOUBLE: *out = SHQ_VT_DOUBLE; return 0;
  case DL_TYPE_BOOLEAN: *out = SHQ_VT_BOOL; return 0;
  case DL_TYPE_DATE: *out = SHQ_VT_DATE; return 0;
  case DL_TYPE_TIMESTAMP:
  case DL_TYPE_TIMESTAMP_NTZ: *out = SHQ_VT_TIMESTAMP; return 0;
  default: return -1;
  }
}

/* An operand: a column (typed by the schema) or a literal (typed later). */
static int operand(lexer *L, shq_pred **out) {
  shq_pred *p = NULL;
  if (kw(L, "date") || kw(L, "timestamp")) { /* DATE '2021-01-01' is the literal */
    size_t q = L->pos;
    while (isspace((unsigned char)L->s[q])) q++;
    if (L->s[q] == '\'') next(L);
  }
  if (L->kind == T_IDENT && !kw(L, "null") && !kw(L, "true") && !kw(L, "false")) {
    const dl_field *f = L->schema ? dl_schema_field(L->schema, L->text) : NULL;
    if (!f) return serr("unknown column");
    if (!(p = node(SHQ_OP_COLUMN, 0))) return dd_err_set(DD_ENOMEM, "out of memory");
    if (vtype_of(f->type, &p->vt)) {
      free(p);
      return serr("column type not supported");
    }
  } else if (L->kind == T_STR || L->kind == T_NUM || kw(L, "true") || kw(L, "false")) {
    if (!(p = node(SHQ_OP_LITERAL, 0))) return dd_err_set(DD_ENOMEM, "out of memory");
  } else {
    return serr("expected a column or a literal");
  }
  p->name = L->text;
  L->text = NULL;
  next(L);
  *out = p;
  return 0;
}

static int cmp_op(const lexer *L, shq_op *op, bool *negate) {
  *negate = false;
  const char *t = L->tok;
  size_t n = L->n;
  if ((n == 1 && t[0] == '=') || (n == 2 && !strncmp(t, "==", 2))) *op = SHQ_OP_EQ;
  else if (n == 2 && (!strncmp(t, "<>", 2) || !strncmp(t, "!=", 2))) *op = SHQ_OP_EQ, *negate = true;
  else if (n == 1 && t[0] == '<') *op = SHQ_OP_LT;
  else if (n == 2 && !strncmp(t, "<=", 2)) *op = SHQ_OP_LE;
  else if (n == 1 && t[0] == '>') *op = SHQ_OP_GT;
  else if (n == 2 && !strncmp(t, ">=", 2)) *op = SHQ_OP_GE;
  else return serr("unknown comparison");
  return 0;
}

/* Gives the literal its column's type and parses it. */
static int type_literal(shq_pred *col, shq_pred *lit) {
  lit->vt = col->vt;
  shq_pred *tmp = NULL;
  json_t *j = json_pack("{s:s, s:s, s:s}", "op", "literal", "value", lit->name, "valueType",
                        (const char *[]){"bool", "int", "long", "string", "date", "float",
                                         "double", "timestamp"}[lit->vt]);
  if (!j) return dd_err_set(DD_ENOMEM, "out of memory");
  char *txt = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  int rc = txt ? shq__pred_parse_json(&tmp, txt, strlen(txt)) : dd_err_set(DD_ENOMEM, "out of memory");
  free(txt);
  if (rc) return serr("literal does not match the column type");
  lit->lit = tmp->lit;
  free(lit->name);
  lit->name = tmp->name; /* lit.s points into this text */
  tmp->name = NULL;
  shq__pred_free(tmp);
  return 0;
}

static int comparison(lexer *L, shq_pred **out) {
  shq_pred *a = NULL, *b = NULL, *p = NULL;
  int rc = operand(L, &a);
  if (rc) return rc;
  if (kw(L, "is")) {
    next(L);
    bool neg = kw(L, "not");
    if (neg) next(L);
    if (!kw(L, "null") || a->op != SHQ_OP_COLUMN) {
      rc = serr("IS needs a column and NULL");
      goto fail;
    }
    next(L);
    p = node(SHQ_OP_ISNULL, 1);
    if (!p) goto oom;
    p->kids[p->nkids++] = a;
    a = NULL;
    if (neg) {
      shq_pred *n = node(SHQ_OP_NOT, 1);
      if (!n) goto oom;
      n->kids[n->nkids++] = p;
      p = n;
    }
    *out = p;
    return 0;
  }
  shq_op op = SHQ_OP_EQ;
  bool negate;
  if (L->kind != T_OP || (rc = cmp_op(L, &op, &negate))) {
    rc = rc ? rc : serr("expected a comparison");
    goto fail;
  }
  next(L);
  if ((rc = operand(L, &b))) goto fail;
  if ((a->op == SHQ_OP_COLUMN) == (b->op == SHQ_OP_COLUMN)) {
    rc = serr("a comparison needs one column and one literal");
    goto fail;
  }
  if ((rc = type_literal(a->op == SHQ_OP_COLUMN ? a : b, a->op == SHQ_OP_COLUMN ? b : a))) goto fail;
  if (!(p = node(op, 2))) goto oom;
  p->kids[0] = a;
  p->kids[1] = b;
  p->nkids = 2;
  a = b = NULL;
  if (negate) {
    shq_pred *n = node(SHQ_OP_NOT, 1);
    if (!n) goto oom;
    n->kids[n->nkids++] = p;
    p = n;
  }
  *out = p;
  return 0;
oom:
  rc = dd_err_set(DD_ENOMEM, "out of memory");
fail:
  shq__pred_free(a);
  shq__pred_free(b);
  shq__pred_free(p);
  return rc;
}

static int expr_or(lexer *L, shq_pred **out);

static int unary(lexer *L, shq_pred **out) {
  if (++L->depth > SQL_MAX_DEPTH) return serr("too deeply nested");
  int rc;
  if (kw(L, "not")) {
    next(L);
    shq_pred *k = NULL, *n;
    if ((rc = unary(L, &k))) return rc;
    if (!(n = node(SHQ_OP_NOT, 1))) {
      shq__pred_free(k);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    n->kids[n->nkids++] = k;
    *out = n;
  } else if (L->kind == T_LP) {
    next(L);
    if ((rc = expr_or(L, out))) return rc;
    if (L->kind != T_RP) {
      shq__pred_free(*out);
      return serr("missing )");
    }
    next(L);
  } else if ((rc = comparison(L, out))) {
    return rc;
  }
  L->depth--;
  return 0;
}

/* A left-deep chain of one logical op. */
static int chain(lexer *L, shq_pred **out, const char *word, shq_op op,
                 int (*sub)(lexer *, shq_pred **)) {
  shq_pred *acc = NULL, *k = NULL;
  int rc = sub(L, &acc);
  if (rc) return rc;
  while (kw(L, word)) {
    next(L);
    if ((rc = sub(L, &k))) break;
    shq_pred *n = node(op, 2);
    if (!n) {
      shq__pred_free(k);
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      break;
    }
    n->kids[0] = acc;
    n->kids[1] = k;
    n->nkids = 2;
    acc = n;
  }
  if (rc) {
    shq__pred_free(acc);
    return rc;
  }
  *out = acc;
  return 0;
}

static int expr_and(lexer *L, shq_pred **out) { return chain(L, out, "and", SHQ_OP_AND, unary); }
static int expr_or(lexer *L, shq_pred **out) { return chain(L, out, "or", SHQ_OP_OR, expr_and); }

int shq__pred_parse_sql(shq_pred **out, const char *sql, const dl_schema *schema) {
  *out = NULL;
  lexer L = {.s = sql, .schema = schema};
  next(&L);
  int rc = expr_or(&L, out);
  if (!rc && L.kind != T_END) {
    shq__pred_free(*out);
    *out = NULL;
    rc = serr("trailing text");
  }
  free(L.text);
  return rc;
}
