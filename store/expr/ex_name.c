/* ex_name.c: Spark's generated column name of an expression (toPrettySQL): "(a + 1)",
 * "upper(s)", "CAST(x AS BIGINT)", "(a IS NULL)", "CASE WHEN c THEN 1 ELSE 2 END", string
 * literals unquoted, implicit casts hidden. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

typedef struct sb {
  char *s;
  size_t len, cap;
  bool oom;
} sb;

static void put(sb *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 64;
    while (nc < b->len + n + 1) nc *= 2;
    char *ns = realloc(b->s, nc);
    if (!ns) {
      b->oom = true;
      return;
    }
    b->s = ns;
    b->cap = nc;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void puts_(sb *b, const char *s) { put(b, s, strlen(s)); }

static void type_sql(sb *b, ex_type t) {
  char buf[40];
  ex_type_format(t, buf, sizeof buf);
  for (char *p = buf; *p; p++)
    if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
  puts_(b, buf);
}

static void lit_sql(sb *b, const ex_value *v) {
  char buf[64];
  if (v->is_null || v->type.id == EX_T_NULL) {
    puts_(b, "NULL");
    return;
  }
  switch (v->type.id) {
    case EX_T_BOOLEAN: puts_(b, v->b ? "true" : "false"); return;
    case EX_T_FLOAT:
    case EX_T_DOUBLE: ex__format_double(buf, v->f, v->type.id == EX_T_FLOAT); break;
    case EX_T_DECIMAL: ex__dec_format(buf, v->dec, v->type.scale); break;
    case EX_T_STRING: put(b, v->str, v->len); return;
    case EX_T_BINARY:
      puts_(b, "X'");
      for (size_t i = 0; i < v->len; i++) {
        snprintf(buf, sizeof buf, "%02X", (unsigned char)v->str[i]);
        puts_(b, buf);
      }
      puts_(b, "'");
      return;
    case EX_T_DATE: {
      char d[16];
      ex__format_date(d, v->i);
      snprintf(buf, sizeof buf, "DATE '%s'", d);
      break;
    }
    case EX_T_TIMESTAMP:
    case EX_T_TIMESTAMP_NTZ: {
      char ts[40];
      ex__format_timestamp(ts, v->i);
      snprintf(buf, sizeof buf, "%s '%s'", v->type.id == EX_T_TIMESTAMP ? "TIMESTAMP" : "TIMESTAMP_NTZ", ts);
      break;
    }
    default: snprintf(buf, sizeof buf, "%lld", (long long)v->i); break;
  }
  puts_(b, buf);
}

static void sql(sb *b, const ex_node *e);

static void args_sql(sb *b, const ex_node *e, size_t from, const char *sep) {
  for (size_t i = from; i < e->nargs; i++) {
    if (i > from) puts_(b, sep);
    sql(b, e->args[i]);
  }
}

static bool is(const ex_node *e, const char *fn) { return !strcmp(e->name, fn); }

static void call_sql(sb *b, const ex_node *e) {
  static const char *infix[] = {"=", "<", "<=", ">", ">=", "<=>", "+", "-", "*", "/", "%",
                                "div", "and", "or", NULL};
  for (size_t k = 0; infix[k]; k++) {
    if (!is(e, infix[k]) || e->nargs != 2) continue;
    puts_(b, "(");
    sql(b, e->args[0]);
    puts_(b, " ");
    if (is(e, "and")) puts_(b, "AND");
    else if (is(e, "or")) puts_(b, "OR");
    else puts_(b, infix[k]);
    puts_(b, " ");
    sql(b, e->args[1]);
    puts_(b, ")");
    return;
  }
  if (is(e, "not") && e->nargs == 1) {
    puts_(b, "(NOT ");
    sql(b, e->args[0]);
    puts_(b, ")");
  } else if (is(e, "negative") && e->nargs == 1) {
    puts_(b, "(- ");
    sql(b, e->args[0]);
    puts_(b, ")");
  } else if ((is(e, "isnull") || is(e, "isnotnull")) && e->nargs == 1) {
    puts_(b, "(");
    sql(b, e->args[0]);
    puts_(b, is(e, "isnull") ? " IS NULL)" : " IS NOT NULL)");
  } else if (is(e, "in") && e->nargs >= 1) {
    puts_(b, "(");
    sql(b, e->args[0]);
    puts_(b, " IN (");
    args_sql(b, e, 1, ", ");
    puts_(b, "))");
  } else if ((is(e, "like") || is(e, "ilike")) && (e->nargs == 2 || e->nargs == 3)) {
    sql(b, e->args[0]);
    puts_(b, is(e, "like") ? " LIKE " : " ILIKE ");
    sql(b, e->args[1]);
    if (e->nargs == 3) {
      puts_(b, " ESCAPE '");
      sql(b, e->args[2]);
      puts_(b, "'");
    }
  } else if ((is(e, "floor") || is(e, "ceil")) && e->nargs == 1) {
    puts_(b, is(e, "floor") ? "FLOOR(" : "CEIL(");
    sql(b, e->args[0]);
    puts_(b, ")");
  } else if (is(e, "rlike") && e->nargs == 2) {
    puts_(b, "RLIKE(");
    args_sql(b, e, 0, ", ");
    puts_(b, ")");
  } else if (is(e, "if") && e->nargs == 3) {
    puts_(b, "(IF(");
    args_sql(b, e, 0, ", ");
    puts_(b, "))");
  } else if (is(e, "when") && e->nargs >= 2) {
    puts_(b, "CASE");
    for (size_t i = 0; i + 1 < e->nargs; i += 2) {
      puts_(b, " WHEN ");
      sql(b, e->args[i]);
      puts_(b, " THEN ");
      sql(b, e->args[i + 1]);
    }
    if (e->nargs % 2) {
      puts_(b, " ELSE ");
      sql(b, e->args[e->nargs - 1]);
    }
    puts_(b, " END");
  } else if (is(e, "current_date") || is(e, "current_timestamp")) {
    puts_(b, e->name);
    puts_(b, "()");
  } else {
    puts_(b, e->name);
    puts_(b, "(");
    if (e->distinct) puts_(b, "DISTINCT ");
    args_sql(b, e, 0, ", ");
    if (is(e, "substring") && e->nargs == 2) puts_(b, ", 2147483647");
    puts_(b, ")");
  }
}

static void sql(sb *b, const ex_node *e) {
  switch (e->kind) {
    case EX_LITERAL: lit_sql(b, &e->lit); break;
    case EX_COLUMN:
      for (size_t i = 0; i < e->nparts; i++) {
        if (i) puts_(b, ".");
        puts_(b, e->parts[i]);
      }
      break;
    case EX_CAST:
      if (e->implicit) {
        sql(b, e->args[0]);
        break;
      }
      puts_(b, e->try_ ? "TRY_CAST(" : "CAST(");
      sql(b, e->args[0]);
      puts_(b, " AS ");
      type_sql(b, e->cast_to);
      puts_(b, ")");
      break;
    case EX_ALIAS: sql(b, e->args[0]); break;
    case EX_STAR:
      if (e->name) {
        puts_(b, e->name);
        puts_(b, ".");
      }
      puts_(b, "*");
      break;
    case EX_SORT:
      sql(b, e->args[0]);
      puts_(b, e->asc ? " ASC" : " DESC");
      puts_(b, e->nulls_first ? " NULLS FIRST" : " NULLS LAST");
      break;
    case EX_CALL: call_sql(b, e); break;
  }
}

int ex_name(char **out, const ex_node *e) {
  sb b = {0};
  while (e->kind == EX_CAST && e->implicit) e = e->args[0];
  if (e->kind == EX_ALIAS) puts_(&b, e->name);
  else if (e->kind == EX_COLUMN) puts_(&b, e->parts[e->nparts - 1]);
  else sql(&b, e);
  if (!b.oom && !b.s) puts_(&b, "");
  if (b.oom) {
    free(b.s);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = b.s;
  return 0;
}
