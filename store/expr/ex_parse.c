/* ex_parse.c: Spark SQL expression text -> ex_node tree.
 *
 * Precedence, loosest first (Spark's SqlBaseParser booleanExpression / predicate /
 * valueExpression):
 *   OR;  AND;  NOT (prefix);  predicates on a value: [NOT] BETWEEN, [NOT] IN (...),
 *   [NOT] LIKE / RLIKE / REGEXP, IS [NOT] NULL / TRUE / FALSE, IS [NOT] DISTINCT FROM;
 *   comparisons = == <> != < <= > >= <=>;  |;  ^;  &;  + - ||;  * / % DIV;
 *   prefix - + ~;  postfix ::type;  primaries.
 * Binary operators associate to the left. Every recursive step counts against
 * opts->max_depth before it recurses. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

typedef enum { T_END, T_IDENT, T_QIDENT, T_NUM, T_STR, T_OP } tok_kind;

typedef struct tok {
  tok_kind kind;
  size_t at, len; /* span in the text */
} tok;

typedef struct parser {
  const char *s;
  size_t len;
  tok t;        /* current token */
  int depth, max_depth;
  bool allow_alias;
} parser;

/* ---- lexer ---- */

static int syntax(parser *p, const char *what) {
  if (p->t.kind == T_END)
    return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input: %s",
                      what);
  return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near '%.*s' (offset %zu): %s",
                    (int)(p->t.len > 40 ? 40 : p->t.len), p->s + p->t.at, p->t.at, what);
}

static int lex(parser *p) {
  const char *s = p->s;
  size_t i = p->t.at + p->t.len;
  for (;;) {
    while (i < p->len && isspace((unsigned char)s[i])) i++;
    if (i + 1 < p->len && s[i] == '-' && s[i + 1] == '-') {
      while (i < p->len && s[i] != '\n') i++;
      continue;
    }
    if (i + 1 < p->len && s[i] == '/' && s[i + 1] == '*') {
      size_t j = i + 2;
      while (j + 1 < p->len && !(s[j] == '*' && s[j + 1] == '/')) j++;
      if (j + 1 >= p->len) {
        p->t = (tok){T_OP, i, 2};
        return syntax(p, "unclosed comment");
      }
      i = j + 2;
      continue;
    }
    break;
  }
  p->t.at = i;
  if (i >= p->len) {
    p->t.kind = T_END;
    p->t.len = 0;
    return 0;
  }
  unsigned char c = (unsigned char)s[i];
  size_t j = i;
  if (isalpha(c) || c == '_' || c >= 0x80) {
    while (j < p->len && (isalnum((unsigned char)s[j]) || s[j] == '_' || (unsigned char)s[j] >= 0x80)) j++;
    p->t.kind = T_IDENT;
  } else if (isdigit(c) || (c == '.' && i + 1 < p->len && isdigit((unsigned char)s[i + 1]))) {
    while (j < p->len && isdigit((unsigned char)s[j])) j++;
    if (j < p->len && s[j] == '.') {
      j++;
      while (j < p->len && isdigit((unsigned char)s[j])) j++;
    }
    if (j < p->len && (s[j] == 'e' || s[j] == 'E')) {
      size_t k = j + 1;
      if (k < p->len && (s[k] == '+' || s[k] == '-')) k++;
      if (k < p->len && isdigit((unsigned char)s[k])) {
        j = k;
        while (j < p->len && isdigit((unsigned char)s[j])) j++;
      }
    }
    while (j < p->len && isalpha((unsigned char)s[j])) j++; /* suffix L, S, Y, D, F, BD */
    p->t.kind = T_NUM;
  } else if (c == '\'' || c == '"' || c == '`') {
    j++;
    for (;;) {
      if (j >= p->len) {
        p->t = (tok){T_OP, i, 1};
        return syntax(p, c == '`' ? "unclosed backquote" : "unclosed string literal");
      }
      if (c != '`' && s[j] == '\\' && j + 1 < p->len) {
        j += 2;
        continue;
      }
      if ((unsigned char)s[j] == c) {
        if (j + 1 < p->len && (unsigned char)s[j + 1] == c) {
          j += 2;
          continue;
        }
        j++;
        break;
      }
      j++;
    }
    p->t.kind = c == '`' ? T_QIDENT : T_STR;
  } else {
    static const char *ops[] = {"<=>", "<>", "!=", "<=", ">=", "==", "||", "::",
                                "=", "<", ">", "+", "-", "*", "/", "%", "(", ")",
                                ",", ".", "&", "|", "^", "~", "!", "[", "]"};
    p->t.kind = T_OP;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      size_t n = strlen(ops[k]);
      if (i + n <= p->len && memcmp(s + i, ops[k], n) == 0) {
        p->t.len = n;
        return 0;
      }
    }
    p->t.len = 1;
    return syntax(p, "unexpected character");
  }
  p->t.len = j - i;
  return 0;
}

static bool is_op(const parser *p, const char *op) {
  return p->t.kind == T_OP && p->t.len == strlen(op) && memcmp(p->s + p->t.at, op, p->t.len) == 0;
}

static bool is_kw(const parser *p, const char *kw) {
  return p->t.kind == T_IDENT && p->t.len == strlen(kw) &&
         strncasecmp(p->s + p->t.at, kw, p->t.len) == 0;
}

static int expect_op(parser *p, const char *op) {
  if (!is_op(p, op)) {
    char what[32];
    snprintf(what, sizeof what, "expected '%s'", op);
    return syntax(p, what);
  }
  return lex(p);
}

static int expect_kw(parser *p, const char *kw) {
  if (!is_kw(p, kw)) {
    char what[40];
    snprintf(what, sizeof what, "expected %s", kw);
    return syntax(p, what);
  }
  return lex(p);
}

/* Words that end an expression (never a column name or an implicit alias). */
static bool is_reserved(const parser *p) {
  static const char *words[] = {
    "from", "where", "group", "order", "by", "having", "limit", "offset", "and", "or",
    "not", "as", "is", "in", "like", "rlike", "regexp", "ilike", "between", "case", "when",
    "then", "else", "end", "join", "on", "union", "except", "intersect", "asc", "desc",
    "nulls", "sort", "cluster", "distribute", "window", "inner", "left", "right", "full",
    "cross", "lateral", "zorder", "using", "select", "distinct", "all", "div", "escape",
    "minus", "natural", "anti", "semi", "qualify", "retain", "dry", "with", "into", "set",
  };
  if (p->t.kind != T_IDENT) return false;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (is_kw(p, words[i])) return true;
  return false;
}

/* Words that cannot be a column name where an expression starts (Spark reserves few:
 * `by`, `asc`, `left`, `sort` ... are fine column names). */
static bool starts_nothing(const parser *p) {
  static const char *words[] = {"from", "where", "group", "order", "having", "limit", "and",
                                "or", "when", "then", "else", "end", "select", "union",
                                "except", "intersect", "is", "in", "like", "rlike", "between",
                                "as", "on", "join", "distinct"};
  if (p->t.kind != T_IDENT) return false;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (is_kw(p, words[i])) return true;
  return false;
}

/* ---- literals ---- */

/* Decodes a quoted string token (Spark escapes: \n \t \0 \b \r \Z \\ \' \" \% \_ \uXXXX,
 * doubled quotes) into a malloc'ed buffer. */
static int unquote(parser *p, char **out, size_t *out_len) {
  const char *s = p->s + p->t.at + 1;
  size_t n = p->t.len - 2;
  char q = p->s[p->t.at];
  char *d = malloc(n + 1);
  size_t k = 0;
  if (!d) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == q && i + 1 < n && s[i + 1] == q) {
      d[k++] = q;
      i++;
    } else if (c == '\\' && i + 1 < n) {
      char e = s[++i];
      switch (e) {
        case 'n': d[k++] = '\n'; break;
        case 't': d[k++] = '\t'; break;
        case 'r': d[k++] = '\r'; break;
        case 'b': d[k++] = '\b'; break;
        case '0': d[k++] = '\0'; break;
        case 'Z': d[k++] = 26; break;
        case '%': d[k++] = '\\'; d[k++] = '%'; break;
        case '_': d[k++] = '\\'; d[k++] = '_'; break;
        case 'u':
          if (i + 4 < n) {
            char hex[5] = {s[i + 1], s[i + 2], s[i + 3], s[i + 4], 0};
            char *end;
            unsigned long cp = strtoul(hex, &end, 16);
            if (*end == '\0') {
              if (cp < 0x80) d[k++] = (char)cp;
              else if (cp < 0x800) {
                d[k++] = (char)(0xC0 | (cp >> 6));
                d[k++] = (char)(0x80 | (cp & 0x3F));
              } else {
                d[k++] = (char)(0xE0 | (cp >> 12));
                d[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                d[k++] = (char)(0x80 | (cp & 0x3F));
              }
              i += 4;
              break;
            }
          }
          d[k++] = 'u';
          break;
        default: d[k++] = e; break;
      }
    } else {
      d[k++] = c;
    }
  }
  d[k] = '\0';
  *out = d;
  *out_len = k;
  return 0;
}

/* One or more adjacent string literals ('a' 'b' is 'ab'). */
static int string_lit(parser *p, char **out, size_t *out_len) {
  char *acc = NULL;
  size_t alen = 0;
  int rc;
  while (p->t.kind == T_STR) {
    char *s;
    size_t n;
    if ((rc = unquote(p, &s, &n))) goto fail;
    char *na = realloc(acc, alen + n + 1);
    if (!na) {
      free(s);
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      goto fail;
    }
    acc = na;
    memcpy(acc + alen, s, n + 1);
    alen += n;
    free(s);
    if ((rc = lex(p))) goto fail;
  }
  *out = acc;
  *out_len = alen;
  return 0;
fail:
  free(acc);
  return rc;
}

static int lit_node(ex_node **out, ex_value v) { return ex_new_literal(out, &v); }

/* Numbers with Spark's literal typing. */
static int number(parser *p, ex_node **out, bool negate) {
  const char *s = p->s + p->t.at;
  size_t n = p->t.len, body = n;
  while (body && isalpha((unsigned char)s[body - 1]) && !(s[body - 1] == 'e' || s[body - 1] == 'E'))
    body--;
  /* an exponent letter at the end with no digits is a suffix error */
  char suffix[4] = {0};
  if (n - body > 2) return syntax(p, "bad number suffix");
  for (size_t i = body; i < n; i++) suffix[i - body] = (char)toupper((unsigned char)s[i]);
  bool has_dot = memchr(s, '.', body) != NULL;
  bool has_exp = false;
  for (size_t i = 0; i < body; i++)
    if (s[i] == 'e' || s[i] == 'E') has_exp = true;
  char buf[128];
  if (body + 2 > sizeof buf) return syntax(p, "number too long");
  buf[0] = '-';
  memcpy(buf + 1, s, body);
  buf[body + 1] = '\0';
  const char *num = negate ? buf : buf + 1;
  ex_value v = {0};
  int rc;
  if (!strcmp(suffix, "D") || !strcmp(suffix, "F") || (!suffix[0] && has_exp)) {
    errno = 0;
    double d = strtod(num, NULL);
    v.type = ex__t(!strcmp(suffix, "F") ? EX_T_FLOAT : EX_T_DOUBLE);
    v.f = !strcmp(suffix, "F") ? (double)(float)d : d;
    if (errno == ERANGE && (d > 1 || d < -1))
      return syntax(p, "numeric literal out of range of double");
  } else if (!strcmp(suffix, "BD") || (!suffix[0] && has_dot)) {
    /* decimal: digits and a scale (exponent moves it) */
    ex_i128 unscaled = 0;
    int digits = 0, scale = 0, exp = 0;
    bool frac = false, lead = true;
    size_t i = 0;
    for (; i < body && s[i] != 'e' && s[i] != 'E'; i++) {
      if (s[i] == '.') {
        frac = true;
        continue;
      }
      if (frac) scale++;
      if (lead && s[i] == '0') continue;
      lead = false;
      if (++digits > 38) return syntax(p, "decimal literal has more than 38 digits");
      unscaled = unscaled * 10 + (s[i] - '0');
    }
    if (i < body) exp = atoi(s + i + 1);
    scale -= exp;
    while (scale < 0) {
      if (++digits > 38) return syntax(p, "decimal literal has more than 38 digits");
      unscaled *= 10;
      scale++;
    }
    if (digits == 0) digits = 1;
    int prec = digits > scale ? digits : scale;
    if (prec > 38) return syntax(p, "decimal literal has more than 38 digits");
    v.type = ex__dec(prec, scale);
    v.dec = negate ? -unscaled : unscaled;
  } else if (has_dot || has_exp) {
    return syntax(p, "bad number suffix");
  } else {
    /* integral */
    ex_i128 x = 0;
    int digits = 0;
    for (size_t i = 0; i < body; i++) {
      if (digits > 0 || s[i] != '0') digits++;
      if (digits > 38) return syntax(p, "integer literal has more than 38 digits");
      x = x * 10 + (s[i] - '0');
    }
    if (negate) x = -x;
    ex_type_id t;
    if (!strcmp(suffix, "L")) t = EX_T_LONG;
    else if (!strcmp(suffix, "S")) t = EX_T_SHORT;
    else if (!strcmp(suffix, "Y")) t = EX_T_BYTE;
    else if (suffix[0]) return syntax(p, "bad number suffix");
    else if (x >= INT32_MIN && x <= INT32_MAX) t = EX_T_INT;
    else if (x >= INT64_MIN && x <= INT64_MAX) t = EX_T_LONG;
    else {
      v.type = ex__dec(digits ? digits : 1, 0);
      v.dec = x;
      goto make;
    }
    if (x < ex__int_min(t) || x > ex__int_max(t))
      return syntax(p, "numeric literal out of range of its type");
    v.type = ex__t(t);
    v.i = (int64_t)x;
  }
make:
  if ((rc = lex(p))) return rc;
  return lit_node(out, v);
}

static int typed_literal(parser *p, ex_node **out, ex_type_id t) {
  char *s;
  size_t n;
  int rc = string_lit(p, &s, &n);
  if (rc) return rc;
  ex_value v = {.type = ex__t(t)};
  bool ok;
  if (t == EX_T_DATE) {
    ok = ex__parse_date(s, n, &v.i);
  } else {
    ok = ex__parse_timestamp(s, n, t == EX_T_TIMESTAMP_NTZ, 0, &v.i);
  }
  if (!ok) {
    rc = dd_err_set(DD_EINVAL, "[INVALID_TYPED_LITERAL] The value of the typed literal \"%s\" "
                    "is invalid: '%s'", t == EX_T_DATE ? "DATE" : "TIMESTAMP", s);
    free(s);
    return rc;
  }
  free(s);
  return lit_node(out, v);
}

static int hex_literal(parser *p, ex_node **out) {
  char *s;
  size_t n;
  int rc = string_lit(p, &s, &n);
  if (rc) return rc;
  size_t m = (n + 1) / 2;
  uint8_t *b = malloc(m + 1);
  if (!b) {
    free(s);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  size_t k = 0, i = 0;
  for (; i < n; k++) { /* an odd length has a leading 0 nibble */
    int hi = 0, lo;
    if (!(n % 2 && i == 0)) {
      if (!isxdigit((unsigned char)s[i])) goto bad;
      hi = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
      i++;
    }
    if (!isxdigit((unsigned char)s[i])) goto bad;
    lo = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
    i++;
    b[k] = (uint8_t)(hi << 4 | lo);
  }
  ex_value v = {.type = ex__t(EX_T_BINARY), .str = (const char *)b, .len = k};
  rc = lit_node(out, v);
  free(b);
  free(s);
  return rc;
bad:
  rc = dd_err_set(DD_EINVAL, "[INVALID_TYPED_LITERAL] The value of the typed literal \"X\" is "
                  "invalid: '%s'", s);
  free(b);
  free(s);
  return rc;
}

/* ---- the grammar ---- */

static int expr(parser *p, ex_node **out);
static int value(parser *p, ex_node **out, int level);

static int enter(parser *p) {
  if (++p->depth > p->max_depth)
    return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] expression nested deeper than %d levels",
                      p->max_depth);
  return 0;
}

static int call(ex_node **out, const char *fn, ex_node **args, size_t n) {
  return ex_new_call(out, fn, args, n);
}

static int call1(ex_node **out, const char *fn, ex_node *a) { return call(out, fn, &a, 1); }
static int call2(ex_node **out, const char *fn, ex_node *a, ex_node *b) {
  ex_node *args[2] = {a, b};
  return call(out, fn, args, 2);
}

/* A comma-separated argument list up to ')' (consumed). */
typedef struct nodes {
  ex_node **v;
  size_t n, cap;
} nodes;

static int nodes_push(nodes *l, ex_node *e) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 4;
    ex_node **nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) {
      ex_free(e);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = e;
  return 0;
}

static void nodes_free(nodes *l) {
  for (size_t i = 0; i < l->n; i++) ex_free(l->v[i]);
  free(l->v);
}

static int arg_list(parser *p, nodes *l, bool star_ok) {
  int rc;
  if (is_op(p, ")")) return lex(p);
  for (;;) {
    ex_node *a = NULL;
    if (star_ok && is_op(p, "*")) {
      if ((rc = lex(p)) || (rc = ex_new_star(&a, NULL))) return rc;
    } else if ((rc = expr(p, &a))) {
      return rc;
    }
    if ((rc = nodes_push(l, a))) return rc;
    if (is_op(p, ",")) {
      if ((rc = lex(p))) return rc;
      continue;
    }
    return expect_op(p, ")");
  }
}

static int parse_type(parser *p, ex_type *out) {
  size_t start = p->t.at;
  int rc;
  if (p->t.kind != T_IDENT) return syntax(p, "expected a type name");
  if ((rc = lex(p))) return rc;
  if (is_op(p, "(")) {
    while (!is_op(p, ")")) {
      if (p->t.kind == T_END) return syntax(p, "expected ')'");
      if ((rc = lex(p))) return rc;
    }
    if ((rc = lex(p))) return rc;
  }
  size_t end = p->t.kind == T_END ? p->len : p->t.at;
  return ex_type_parse(out, p->s + start, end - start);
}

static int case_when(parser *p, ex_node **out) {
  nodes l = {0};
  ex_node *subject = NULL;
  int rc;
  if ((rc = lex(p))) return rc; /* CASE */
  if (!is_kw(p, "when") && (rc = expr(p, &subject))) goto fail;
  if (!is_kw(p, "when")) {
    rc = syntax(p, "expected WHEN");
    goto fail;
  }
  while (is_kw(p, "when")) {
    ex_node *c, *v;
    if ((rc = lex(p)) || (rc = expr(p, &c))) goto fail;
    if (subject) {
      ex_node *s2;
      if ((rc = ex_clone(&s2, subject))) {
        ex_free(c);
        goto fail;
      }
      if ((rc = call2(&c, "=", s2, c))) goto fail;
    }
    if ((rc = nodes_push(&l, c))) goto fail;
    if ((rc = expect_kw(p, "then")) || (rc = expr(p, &v)) || (rc = nodes_push(&l, v))) goto fail;
  }
  if (is_kw(p, "else")) {
    ex_node *v;
    if ((rc = lex(p)) || (rc = expr(p, &v)) || (rc = nodes_push(&l, v))) goto fail;
  }
  if ((rc = expect_kw(p, "end"))) goto fail;
  ex_free(subject);
  rc = call(out, "when", l.v, l.n);
  free(l.v);
  return rc;
fail:
  ex_free(subject);
  nodes_free(&l);
  return rc;
}

/* identifier [. identifier]* [. *] [( args )] */
static int name_or_call(parser *p, ex_node **out) {
  nodes parts = {0};
  char **names = NULL;
  size_t n = 0;
  int rc = 0;
  for (;;) {
    char *part;
    if (p->t.kind == T_QIDENT) {
      size_t len;
      if ((rc = unquote(p, &part, &len))) goto done;
    } else {
      part = ex__strndup(p->s + p->t.at, p->t.len);
      if (!part) {
        rc = dd_err_set(DD_ENOMEM, "out of memory");
        goto done;
      }
    }
    char **nn = realloc(names, (n + 1) * sizeof *nn);
    if (!nn) {
      free(part);
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      goto done;
    }
    names = nn;
    names[n++] = part;
    if ((rc = lex(p))) goto done;
    if (!is_op(p, ".")) break;
    if ((rc = lex(p))) goto done;
    if (is_op(p, "*")) {
      if ((rc = lex(p))) goto done;
      size_t tl = 1;
      for (size_t i = 0; i < n; i++) tl += strlen(names[i]) + 1;
      char *target = malloc(tl);
      if (!target) {
        rc = dd_err_set(DD_ENOMEM, "out of memory");
        goto done;
      }
      target[0] = '\0';
      for (size_t i = 0; i < n; i++) {
        if (i) strcat(target, ".");
        strcat(target, names[i]);
      }
      rc = ex_new_star(out, target);
      free(target);
      goto done;
    }
    if (p->t.kind != T_IDENT && p->t.kind != T_QIDENT) {
      rc = syntax(p, "expected a field name after '.'");
      goto done;
    }
  }
  if (is_op(p, "(") && n == 1) {
    bool distinct = false;
    if ((rc = lex(p))) goto done;
    if (is_kw(p, "distinct")) {
      distinct = true;
      if ((rc = lex(p))) goto done;
    } else if (is_kw(p, "all")) {
      if ((rc = lex(p))) goto done;
    }
    if ((rc = arg_list(p, &parts, true))) goto done;
    rc = call(out, names[0], parts.v, parts.n);
    free(parts.v);
    parts = (nodes){0};
    if (!rc && distinct) ex_set_distinct(*out, true);
    goto done;
  }
  /* bare function words Spark accepts without parentheses */
  if (n == 1 &&
      (!strcasecmp(names[0], "current_date") || !strcasecmp(names[0], "current_timestamp"))) {
    rc = call(out, names[0], NULL, 0);
    goto done;
  }
  rc = ex_new_column(out, (const char *const *)names, n);
done:
  nodes_free(&parts);
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

static int primary(parser *p, ex_node **out) {
  int rc;
  if (p->t.kind == T_NUM) return number(p, out, false);
  if (p->t.kind == T_STR) {
    char *s;
    size_t n;
    if ((rc = string_lit(p, &s, &n))) return rc;
    ex_value v = {.type = ex__t(EX_T_STRING), .str = s, .len = n};
    rc = lit_node(out, v);
    free(s);
    return rc;
  }
  if (is_op(p, "(")) {
    if ((rc = lex(p)) || (rc = expr(p, out))) return rc;
    if ((rc = expect_op(p, ")"))) {
      ex_free(*out);
      *out = NULL;
      return rc;
    }
    return 0;
  }
  if (is_op(p, "*")) {
    if ((rc = lex(p))) return rc;
    return ex_new_star(out, NULL);
  }
  if (p->t.kind == T_QIDENT) return name_or_call(p, out);
  if (p->t.kind != T_IDENT) return syntax(p, "expected an expression");
  if (is_kw(p, "null")) {
    if ((rc = lex(p))) return rc;
    return lit_node(out, (ex_value){.type = ex__t(EX_T_NULL), .is_null = true});
  }
  if (is_kw(p, "true") || is_kw(p, "false")) {
    bool b = is_kw(p, "true");
    if ((rc = lex(p))) return rc;
    return lit_node(out, (ex_value){.type = ex__t(EX_T_BOOLEAN), .b = b});
  }
  if (is_kw(p, "case")) return case_when(p, out);
  if (is_kw(p, "cast") || is_kw(p, "try_cast")) {
    size_t save = p->t.at;
    bool try_ = is_kw(p, "try_cast");
    if ((rc = lex(p))) return rc;
    if (!is_op(p, "(")) {
      p->t = (tok){T_IDENT, save, try_ ? 8 : 4};
      return name_or_call(p, out);
    }
    ex_node *a = NULL;
    ex_type t;
    if ((rc = lex(p)) || (rc = expr(p, &a))) return rc;
    if ((rc = expect_kw(p, "as")) || (rc = parse_type(p, &t)) || (rc = expect_op(p, ")"))) {
      ex_free(a);
      return rc;
    }
    return try_ ? ex_new_try_cast(out, a, t) : ex_new_cast(out, a, t);
  }
  /* typed literals: DATE '...', TIMESTAMP '...', X'...' */
  static const struct { const char *kw; ex_type_id t; } typed[] = {
    {"date", EX_T_DATE}, {"timestamp", EX_T_TIMESTAMP}, {"timestamp_ltz", EX_T_TIMESTAMP},
    {"timestamp_ntz", EX_T_TIMESTAMP_NTZ},
  };
  for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
    if (!is_kw(p, typed[i].kw)) continue;
    parser look = *p;
    if (lex(&look) == 0 && look.t.kind == T_STR) {
      *p = look;
      return typed_literal(p, out, typed[i].t);
    }
  }
  if (is_kw(p, "x")) {
    parser look = *p;
    if (lex(&look) == 0 && look.t.kind == T_STR && look.t.at == p->t.at + 1) {
      *p = look;
      return hex_literal(p, out);
    }
  }
  if (is_kw(p, "interval")) return dd_err_set(DD_EUNSUPPORTED, "INTERVAL literals are not supported");
  if (starts_nothing(p)) return syntax(p, "expected an expression");
  return name_or_call(p, out);
}

static int postfix(parser *p, ex_node **out) {
  int rc = primary(p, out);
  if (rc) return rc; /* primary leaves nothing behind on failure */
  while (is_op(p, "::")) {
    ex_type t;
    if ((rc = lex(p)) || (rc = parse_type(p, &t))) {
      ex_free(*out);
      return rc;
    }
    if ((rc = ex_new_cast(out, *out, t))) return rc; /* the cast freed its argument */
  }
  return 0;
}

/* Levels of valueExpression, loosest first. */
enum { L_CMP, L_BOR, L_XOR, L_BAND, L_ADD, L_MUL, L_UNARY };

static const char *binop_at(parser *p, int level) {
  static const char *cmp[] = {"<=>", "=", "==", "<>", "!=", "<", "<=", ">", ">=", NULL};
  static const char *add[] = {"+", "-", "||", NULL};
  static const char *mul[] = {"*", "/", "%", NULL};
  const char *const *ops = NULL;
  switch (level) {
    case L_CMP: ops = cmp; break;
    case L_BOR: return is_op(p, "|") ? "|" : NULL;
    case L_XOR: return is_op(p, "^") ? "^" : NULL;
    case L_BAND: return is_op(p, "&") ? "&" : NULL;
    case L_ADD: ops = add; break;
    case L_MUL:
      if (is_kw(p, "div")) return "div";
      ops = mul;
      break;
    default: return NULL;
  }
  for (size_t i = 0; ops[i]; i++)
    if (is_op(p, ops[i])) return ops[i];
  return NULL;
}

static int unary(parser *p, ex_node **out) {
  int rc;
  if ((rc = enter(p))) return rc;
  if (is_op(p, "-") || is_op(p, "+") || is_op(p, "~") || is_op(p, "!")) {
    char op = p->s[p->t.at];
    if ((rc = lex(p))) return rc;
    if (op == '-' && p->t.kind == T_NUM) {
      rc = number(p, out, true);
    } else {
      ex_node *a = NULL;
      if ((rc = unary(p, &a))) return rc;
      if (op == '+') *out = a;
      else rc = call1(out, op == '-' ? "negative" : op == '~' ? "~" : "not", a);
    }
  } else {
    rc = postfix(p, out);
  }
  p->depth--;
  return rc;
}

static int value(parser *p, ex_node **out, int level) {
  if (level == L_UNARY) return unary(p, out);
  ex_node *left;
  int rc = value(p, &left, level + 1);
  if (rc) return rc;
  const char *op;
  while ((op = binop_at(p, level))) {
    ex_node *right;
    if ((rc = lex(p)) || (rc = value(p, &right, level + 1))) {
      ex_free(left);
      return rc;
    }
    const char *fn = op;
    bool negate = false;
    if (!strcmp(op, "==")) fn = "=";
    else if (!strcmp(op, "<>") || !strcmp(op, "!=")) fn = "=", negate = true;
    else if (!strcmp(op, "||")) fn = "concat";
    if ((rc = call2(&left, fn, left, right))) return rc;
    if (negate && (rc = call1(&left, "not", left))) return rc;
  }
  *out = left;
  return 0;
}

/* valueExpression followed by predicates. */
static int predicate(parser *p, ex_node **out) {
  ex_node *v;
  int rc = value(p, &v, L_CMP);
  if (rc) return rc;
  for (;;) {
    bool negate = false;
    parser save = *p;
    if (is_kw(p, "not")) {
      if ((rc = lex(p))) goto fail;
      if (!is_kw(p, "between") && !is_kw(p, "in") && !is_kw(p, "like") && !is_kw(p, "rlike") &&
          !is_kw(p, "regexp") && !is_kw(p, "ilike")) {
        *p = save;
        break;
      }
      negate = true;
    }
    if (is_kw(p, "between")) {
      ex_node *lo, *hi;
      if ((rc = lex(p)) || (rc = value(p, &lo, L_CMP))) goto fail;
      if ((rc = expect_kw(p, "and")) || (rc = value(p, &hi, L_CMP))) {
        ex_free(lo);
        goto fail;
      }
      ex_node *args[3] = {v, lo, hi};
      if ((rc = call(&v, "between", args, 3))) return rc;
    } else if (is_kw(p, "in")) {
      nodes l = {0};
      if ((rc = lex(p)) || (rc = expect_op(p, "("))) goto fail;
      if ((rc = nodes_push(&l, v))) return rc;
      if (is_op(p, ")")) {
        rc = syntax(p, "IN needs at least one value");
        nodes_free(&l);
        return rc;
      }
      if ((rc = arg_list(p, &l, false))) {
        nodes_free(&l);
        return rc;
      }
      rc = call(&v, "in", l.v, l.n);
      free(l.v);
      if (rc) return rc;
    } else if (is_kw(p, "like") || is_kw(p, "rlike") || is_kw(p, "regexp") || is_kw(p, "ilike")) {
      const char *fn = is_kw(p, "like") ? "like" : is_kw(p, "ilike") ? "ilike" : "rlike";
      ex_node *pat;
      if ((rc = lex(p)) || (rc = value(p, &pat, L_CMP))) goto fail;
      if (is_kw(p, "escape") && strcmp(fn, "rlike")) { /* x LIKE pat ESCAPE 'c' */
        ex_node *esc;
        if ((rc = lex(p)) || (rc = value(p, &esc, L_CMP))) {
          ex_free(pat);
          goto fail;
        }
        ex_node *args[3] = {v, pat, esc};
        if ((rc = call(&v, fn, args, 3))) return rc;
      } else if ((rc = call2(&v, fn, v, pat))) {
        return rc;
      }
    } else if (is_kw(p, "is")) {
      if ((rc = lex(p))) goto fail;
      if (is_kw(p, "not")) {
        negate = true;
        if ((rc = lex(p))) goto fail;
      }
      if (is_kw(p, "null")) {
        if ((rc = lex(p))) goto fail; /* the token after NULL is bad: v is still ours */
        if ((rc = call1(&v, negate ? "isnotnull" : "isnull", v))) return rc;
        negate = false;
      } else if (is_kw(p, "true") || is_kw(p, "false")) {
        /* x IS TRUE is (x <=> true) */
        ex_value b = {.type = ex__t(EX_T_BOOLEAN), .b = is_kw(p, "true")};
        ex_node *lit;
        if ((rc = lex(p)) || (rc = ex_new_literal(&lit, &b))) goto fail;
        if ((rc = call2(&v, "<=>", v, lit))) return rc;
      } else if (is_kw(p, "distinct")) {
        ex_node *r;
        if ((rc = lex(p)) || (rc = expect_kw(p, "from")) || (rc = value(p, &r, L_CMP))) goto fail;
        if ((rc = call2(&v, "<=>", v, r))) return rc;
        negate = !negate;
      } else {
        rc = syntax(p, "expected NULL, TRUE, FALSE or DISTINCT FROM after IS");
        goto fail;
      }
    } else {
      break;
    }
    if (negate && (rc = call1(&v, "not", v))) return rc;
  }
  *out = v;
  return 0;
fail:
  ex_free(v);
  return rc;
}

static int not_expr(parser *p, ex_node **out) {
  int rc;
  if (is_kw(p, "not") || is_op(p, "!")) {
    if ((rc = enter(p)) || (rc = lex(p))) return rc;
    ex_node *a = NULL;
    if ((rc = not_expr(p, &a))) return rc;
    p->depth--;
    return call1(out, "not", a);
  }
  return predicate(p, out);
}

static int bool_level(parser *p, ex_node **out, bool or_level) {
  ex_node *left;
  int rc = or_level ? bool_level(p, &left, false) : not_expr(p, &left);
  if (rc) return rc;
  const char *kw = or_level ? "or" : "and";
  while (is_kw(p, kw)) {
    ex_node *right;
    if ((rc = lex(p)) || (rc = or_level ? bool_level(p, &right, false) : not_expr(p, &right))) {
      ex_free(left);
      return rc;
    }
    if ((rc = call2(&left, kw, left, right))) return rc;
  }
  *out = left;
  return 0;
}

static int expr(parser *p, ex_node **out) {
  int rc = enter(p);
  if (rc) return rc;
  rc = bool_level(p, out, true);
  p->depth--;
  return rc;
}

static int with_alias(parser *p, ex_node **out) {
  int rc = expr(p, out);
  if (rc || !p->allow_alias) return rc;
  bool as = is_kw(p, "as");
  if (as && (rc = lex(p))) goto fail;
  if (p->t.kind == T_QIDENT || (p->t.kind == T_IDENT && (as || !is_reserved(p)))) {
    char *name;
    if (p->t.kind == T_QIDENT) {
      size_t n;
      if ((rc = unquote(p, &name, &n))) goto fail;
    } else if (!(name = ex__strndup(p->s + p->t.at, p->t.len))) {
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      goto fail;
    }
    if ((rc = lex(p))) {
      free(name);
      goto fail;
    }
    rc = ex_new_alias(out, *out, name);
    free(name);
    return rc;
  }
  if (as) {
    rc = syntax(p, "expected an alias after AS");
    goto fail;
  }
  return 0;
fail:
  ex_free(*out);
  *out = NULL;
  return rc;
}

static int run(ex_node **out, const char *text, size_t len, size_t *consumed,
               const ex_parse_opts *opts) {
  ex_parse_opts o = EX_PARSE_OPTS_INIT;
  if (opts) o = *opts;
  if (o.max_depth <= 0 || o.max_depth > EX_MAX_DEPTH) o.max_depth = EX_MAX_DEPTH;
  parser p = {.s = text, .len = len, .max_depth = o.max_depth, .allow_alias = o.allow_alias};
  ex_node *e = NULL;
  int rc = lex(&p);
  if (rc) return rc;
  if (p.t.kind == T_END) return syntax(&p, "empty expression");
  if ((rc = with_alias(&p, &e))) return rc;
  if (consumed) {
    *consumed = p.t.kind == T_END ? len : p.t.at;
  } else if (p.t.kind != T_END) {
    rc = syntax(&p, "unexpected text after the expression");
    ex_free(e);
    return rc;
  }
  *out = e;
  return 0;
}

int ex_parse(ex_node **out, const char *text, size_t len, const ex_parse_opts *opts) {
  return run(out, text, len, NULL, opts);
}

int ex_parse_prefix(ex_node **out, const char *text, size_t len, size_t *consumed,
                    const ex_parse_opts *opts) {
  size_t c = 0;
  int rc = run(out, text, len, &c, opts);
  if (!rc) *consumed = c;
  return rc;
}
