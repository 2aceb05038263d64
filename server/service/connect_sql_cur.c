/* connect_sql_cur.c: the cursor of connect_sql.c's statements (connect_sql_int.h): white
 * space and -- comments, keywords, identifiers, names, literals and expressions (handed to
 * store/expr's prefix parser). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_sql_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")


void connect_sql__ws(connect_sql_cur *c) {
  for (;;) {
    while (c->pos < c->len && isspace((unsigned char)c->s[c->pos])) c->pos++;
    if (c->pos + 1 < c->len && c->s[c->pos] == '-' && c->s[c->pos + 1] == '-') {
      while (c->pos < c->len && c->s[c->pos] != '\n') c->pos++;
      continue;
    }
    return;
  }
}

bool connect_sql__ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

int connect_sql__syntax(const connect_sql_cur *c) {
  size_t n = 0;
  while (c->pos + n < c->len && n < 24 && !isspace((unsigned char)c->s[c->pos + n])) n++;
  if (c->pos >= c->len)
    return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601");
  return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near '%.*s' (offset %zu). SQLSTATE: 42601",
                    (int)n, c->s + c->pos, c->pos);
}

/* Consumes keyword kw (case-insensitive, a whole word) when it is next. */
bool connect_sql__kw(connect_sql_cur *c, const char *k) {
  connect_sql__ws(c);
  size_t n = strlen(k);
  if (c->len - c->pos < n || strncasecmp(c->s + c->pos, k, n)) return false;
  if (c->pos + n < c->len && connect_sql__ident_char(c->s[c->pos + n])) return false;
  c->pos += n;
  return true;
}

bool connect_sql__peek_kw(connect_sql_cur *c, const char *k) {
  size_t p = c->pos;
  bool ok = connect_sql__kw(c, k);
  c->pos = p;
  return ok;
}

bool connect_sql__punct(connect_sql_cur *c, char ch) {
  connect_sql__ws(c);
  if (c->pos < c->len && c->s[c->pos] == ch) return c->pos++, true;
  return false;
}

bool connect_sql__at_end(connect_sql_cur *c) {
  connect_sql__punct(c, ';');
  connect_sql__ws(c);
  return c->pos >= c->len;
}

/* An identifier (plain or `backquoted`, `` inside is one backquote); *out malloc'ed. */
int connect_sql__ident(connect_sql_cur *c, char **out) {
  connect_sql__ws(c);
  *out = NULL;
  if (c->pos < c->len && c->s[c->pos] == '`') {
    size_t len = 0;
    char *b = NULL;
    FILE *f = open_memstream(&b, &len);
    if (!f) return OOM();
    for (c->pos++; c->pos < c->len; c->pos++) {
      if (c->s[c->pos] == '`') {
        if (c->pos + 1 < c->len && c->s[c->pos + 1] == '`') {
          fputc('`', f), c->pos++;
          continue;
        }
        break;
      }
      fputc(c->s[c->pos], f);
    }
    fclose(f);
    if (c->pos >= c->len) return free(b), connect_sql__syntax(c);
    c->pos++;
    *out = b;
    return b ? 0 : OOM();
  }
  size_t st = c->pos;
  while (c->pos < c->len && connect_sql__ident_char(c->s[c->pos])) c->pos++;
  if (c->pos == st) return connect_sql__syntax(c);
  return (*out = strndup(c->s + st, c->pos - st)) ? 0 : OOM();
}

int connect_sql__path_text(char **out, const char *const *parts, size_t n) {
  size_t len = 0;
  char *b = NULL;
  FILE *f = open_memstream(&b, &len);
  if (!f) return OOM();
  for (size_t k = 0; k < n; k++) {
    const char *part = parts[k];
    bool plain = n == 1 || (*part && !isdigit((unsigned char)*part));
    for (const char *q = part; *q && plain && n > 1; q++) plain = connect_sql__ident_char(*q);
    if (k) fputc('.', f);
    if (plain) {
      fputs(part, f);
      continue;
    }
    fputc('`', f);
    for (const char *q = part; *q; q++) {
      if (*q == '`') fputc('`', f);
      fputc(*q, f);
    }
    fputc('`', f);
  }
  fclose(f);
  return (*out = b) ? 0 : OOM();
}

int connect_sql__column_path(connect_sql_cur *c, char **out) {
  char *parts[64];
  size_t n = 0;
  int rc = 0;
  *out = NULL;
  do {
    if (n == sizeof parts / sizeof parts[0]) rc = connect_sql__syntax(c);
    else rc = connect_sql__ident(c, &parts[n]), n += !rc;
  } while (!rc && c->pos < c->len && c->s[c->pos] == '.' && ++c->pos);
  if (!rc) rc = connect_sql__path_text(out, (const char *const *)parts, n);
  for (size_t k = 0; k < n; k++) free(parts[k]);
  return rc;
}

/* A string literal: '...' or "..." (backslash escapes and doubled quotes). */
int connect_sql__string_lit(connect_sql_cur *c, char **out) {
  connect_sql__ws(c);
  *out = NULL;
  if (c->pos >= c->len || (c->s[c->pos] != '\'' && c->s[c->pos] != '"')) return connect_sql__syntax(c);
  char q = c->s[c->pos++];
  size_t len = 0;
  char *b = NULL;
  FILE *f = open_memstream(&b, &len);
  if (!f) return OOM();
  bool closed = false;
  for (; c->pos < c->len; c->pos++) {
    char ch = c->s[c->pos];
    if (ch == '\\' && c->pos + 1 < c->len) ch = c->s[++c->pos];
    else if (ch == q && c->pos + 1 < c->len && c->s[c->pos + 1] == q) c->pos++;
    else if (ch == q) { closed = true; c->pos++; break; }
    fputc(ch, f);
  }
  fclose(f);
  if (!closed) return free(b), connect_sql__syntax(c);
  *out = b;
  return b ? 0 : OOM();
}

int connect_sql__number(connect_sql_cur *c, double *out) {
  connect_sql__ws(c);
  char *end = NULL;
  const char *st = c->s + c->pos;
  if (c->pos >= c->len || !(isdigit((unsigned char)*st) || *st == '.')) return connect_sql__syntax(c);
  *out = strtod(st, &end);
  if (end == st || (size_t)(end - c->s) > c->len) return connect_sql__syntax(c);
  c->pos = (size_t)(end - c->s);
  return 0;
}

int connect_sql__integer(connect_sql_cur *c, int64_t *out) {
  double d = 0;
  size_t st = c->pos;
  int rc = connect_sql__number(c, &d);
  if (rc) return rc;
  if (!(d >= 0 && d <= 9.2e18) || d != (double)(int64_t)d) return c->pos = st, connect_sql__syntax(c);
  *out = (int64_t)d;
  return 0;
}

/* A table name as written: connect_sql__ident(.ident)*, e.g. delta.`/path` or cat.sch.tbl (raw text). */
int connect_sql__table_name(connect_sql_cur *c, char **out) {
  connect_sql__ws(c);
  size_t st = c->pos;
  char *part = NULL;
  int rc = connect_sql__ident(c, &part);
  free(part);
  while (!rc && c->pos < c->len && c->s[c->pos] == '.') {
    c->pos++;
    rc = connect_sql__ident(c, &part);
    free(part);
  }
  if (rc) return rc;
  return (*out = strndup(c->s + st, c->pos - st)) ? 0 : OOM();
}

int connect_sql__table_loc(connect_sql_cur *c, char **loc, const connect_exec_opts *o) {
  char *name = NULL;
  int rc = connect_sql__table_name(c, &name);
  if (!rc) rc = connect_exec_name_location(loc, name, o);
  free(name);
  return rc;
}

/* An expression at the cursor (store/expr's prefix parser). */
int connect_sql__expr(connect_sql_cur *c, ex_node **out, bool allow_alias) {
  connect_sql__ws(c);
  ex_parse_opts po = EX_PARSE_OPTS_INIT;
  po.allow_alias = allow_alias;
  size_t used = 0;
  int rc = ex_parse_prefix(out, c->s + c->pos, c->len - c->pos, &used, &po);
  if (!rc) c->pos += used;
  return rc;
}
