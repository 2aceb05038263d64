/* ex_fn_str.c: string and date functions: like, ilike, rlike, contains, startswith,
 * endswith, lower, upper, substring, concat, length, trim, ltrim, rtrim; year, month, day, date_add, date_sub, datediff,
 * current_date, current_timestamp.
 *
 * Differences from Spark, by design: lower/upper use simple (one to one) Unicode case
 * mapping, so 'ß' stays 'ß' where Java makes it "SS"; rlike is POSIX
 * extended regex (regcomp), not java.util.regex: no \d \w \s classes (use [[:digit:]]...),
 * no lazy quantifiers, look-around or back-references; like a Java find(), a match may be
 * anywhere in the value; a value with a NUL byte is matched up to that byte. */
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <wctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

/* The largest {m,n} bound rlike compiles (glibc allows 32767; each copy costs memory). */
#define EX_REGEX_MAX_REPEAT 1000
#define EX_STR2(x) #x
#define EX_STR(x) EX_STR2(x)

static bool any_nullable(const ex_node *e) {
  for (size_t i = 0; i < e->nargs; i++)
    if (e->args[i]->nullable) return true;
  return false;
}

/* Casts every argument from `from` on to t when it can be implicitly. */
static int args_to(ex_node *e, size_t from, size_t to, ex_type t, const char *want) {
  for (size_t i = from; i < to && i < e->nargs; i++) {
    if (!ex__can_implicit(e->args[i]->type, t)) return ex__type_error(e, want);
    int rc = ex__coerce_arg(e, i, t);
    if (rc) return rc;
  }
  return 0;
}

static size_t u8len(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* ---- Unicode case mapping (glibc's C.UTF-8 tables; ASCII only without them) ---- */

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static void utf8_init(void) { utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0); }

/* Decodes one code point at s (n bytes left); *len its bytes; -1 when malformed. */
static int32_t u8dec(const unsigned char *s, size_t n, size_t *len) {
  size_t k = u8len(s[0]);
  if (k > n || (k == 1 && s[0] >= 0x80)) return *len = 1, -1;
  int32_t cp = k == 1 ? s[0] : k == 2 ? s[0] & 0x1F : k == 3 ? s[0] & 0x0F : s[0] & 0x07;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return *len = 1, -1;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  *len = k;
  return cp;
}

static size_t u8enc(char *o, uint32_t cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Appends s with its case changed to row i of out. */
static int push_case(ex__vec *out, size_t i, const char *s, size_t len, bool upper) {
  pthread_once(&utf8_once, utf8_init);
  size_t at = out->data_len;
  int rc = ex__vec_str_push(out, i, s, len); /* reserves len bytes; most mappings keep it */
  if (rc) return rc;
  bool ascii = true;
  for (size_t k = 0; k < len; k++) ascii &= (unsigned char)s[k] < 0x80;
  if (ascii || !utf8_locale) {
    for (size_t k = at; k < at + len; k++)
      out->data[k] = (char)(upper ? toupper((unsigned char)out->data[k]) : tolower((unsigned char)out->data[k]));
    return 0;
  }
  char *tmp = malloc(len * 2 + 4), *o = tmp;
  if (!tmp) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t k = 0; k < len;) {
    size_t n;
    int32_t cp = u8dec((const unsigned char *)s + k, len - k, &n);
    if (cp < 0) {
      *o++ = s[k];
    } else {
      wint_t m = upper ? towupper_l((wint_t)cp, utf8_locale) : towlower_l((wint_t)cp, utf8_locale);
      char enc[4];
      size_t el = u8enc(enc, (uint32_t)m);
      if (el > n) el = u8enc(enc, (uint32_t)cp); /* keep the row's byte budget */
      memcpy(o, enc, el);
      o += el;
    }
    k += n;
  }
  out->data_len = at;
  rc = ex__vec_str_push(out, i, tmp, (size_t)(o - tmp));
  free(tmp);
  return rc;
}

/* ---- like / rlike ---- */

/* esc: the escape character ('\\' unless LIKE ... ESCAPE named another). */
static bool like_match(const char *s, size_t sl, const char *p, size_t pl, bool fold, char esc) {
  size_t si = 0, pi = 0, star_p = (size_t)-1, star_s = 0;
  while (si < sl) {
    if (pi < pl && p[pi] == '%') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < pl && p[pi] == '_') {
      si += u8len((unsigned char)s[si]);
      pi++;
      continue;
    }
    if (pi < pl) {
      size_t k = pi;
      if (p[k] == esc && k + 1 < pl) k++; /* the escaped character as is */
      char a = s[si], b = p[k];
      if (fold) a = (char)tolower((unsigned char)a), b = (char)tolower((unsigned char)b);
      if (a == b) {
        si++;
        pi = k + 1;
        continue;
      }
    }
    if (star_p == (size_t)-1) return false;
    pi = star_p;
    star_s += u8len((unsigned char)s[star_s]);
    si = star_s;
  }
  while (pi < pl && p[pi] == '%') pi++;
  return pi == pl;
}

static void free_regex(void *aux) {
  regfree(aux);
  free(aux);
}

/* glibc's regcomp builds a copy of the tree per stacked quantifier: 60 '+' in a row took over
 * 2 GiB (found by fuzz.expr_parse). Java, whose syntax Spark uses, refuses a third quantifier
 * after an atom (X+ greedy, X++ possessive, then "dangling meta character"), and large
 * bounded repetitions multiply too; both are refused before compiling. NULL when fine. */
static const char *regex_too_costly(const char *p, size_t len) {
  int run = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = p[i];
    if (ch == '\\') {
      i++, run = 0;
    } else if (ch == '[') { /* a bracket expression: ']' first is a member */
      size_t j = i + 1;
      if (j < len && p[j] == '^') j++;
      if (j < len && p[j] == ']') j++;
      while (j < len && p[j] != ']') j += (p[j] == '[' && j + 1 < len && p[j + 1] == ':') ? 2 : 1;
      i = j, run = 0;
    } else if (ch == '*' || ch == '+' || ch == '?' || ch == '{') {
      if (++run > 2) return "a quantifier after two quantifiers";
      if (ch == '{') {
        long n = 0;
        for (i++; i < len && p[i] != '}'; i++) {
          if (p[i] >= '0' && p[i] <= '9') {
            n = n * 10 + (p[i] - '0');
            if (n > EX_REGEX_MAX_REPEAT) return "a repetition count over " EX_STR(EX_REGEX_MAX_REPEAT);
          } else n = 0;
        }
      }
    } else {
      run = 0;
    }
  }
  return NULL;
}

static int compile(regex_t **out, const char *pat, size_t len) {
  const char *costly = regex_too_costly(pat, len);
  if (costly)
    return dd_err_set(DD_EINVAL, "[INVALID_PARAMETER_VALUE.PATTERN] The value of parameter(s) "
                      "`regexp` in `rlike` is invalid: '%.*s' (%s)", (int)(len > 100 ? 100 : len), pat, costly);
  char *z = ex__strndup(pat, len);
  regex_t *re = malloc(sizeof *re);
  int rc = 0;
  if (!z || !re) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  int err = regcomp(re, z, REG_EXTENDED | REG_NOSUB);
  if (err) {
    char msg[128];
    regerror(err, re, msg, sizeof msg);
    rc = dd_err_set(DD_EINVAL, "[INVALID_PARAMETER_VALUE.PATTERN] The value of parameter(s) "
                    "`regexp` in `rlike` is invalid: '%s' (%s; POSIX extended syntax)", z, msg);
    goto cleanup;
  }
  *out = re;
  re = NULL;
cleanup:
  free(re);
  free(z);
  return rc;
}

static int bind_like(ex_node *e) {
  int rc = args_to(e, 0, 2, ex__t(EX_T_STRING), "string arguments");
  if (rc) return rc;
  if (e->nargs > 2) { /* ESCAPE: one character, a literal */
    const ex_node *c = e->args[2];
    if (c->kind != EX_LITERAL || c->lit.is_null || c->lit.type.id != EX_T_STRING || c->lit.len != 1)
      return dd_err_set(DD_EINVAL, "[INVALID_ESC] Found an invalid escape string: the escape string of %s must "
                        "be a literal of only one character", e->name);
  }
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = any_nullable(e);
  const ex_node *p = e->args[1];
  if (!strcmp(e->name, "rlike") && p->kind == EX_LITERAL && !p->lit.is_null) {
    regex_t *re;
    if ((rc = compile(&re, p->lit.str, p->lit.len))) return rc;
    e->aux = re;
  }
  return 0;
}

static int eval_like(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[3]; /* string, pattern and, with ESCAPE, the escape character */
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  bool rlike = !strcmp(e->name, "rlike"), fold = !strcmp(e->name, "ilike");
  char esc = e->nargs > 2 ? e->args[2]->lit.str[0] : '\\';
  char *buf = NULL;
  size_t cap = 0;
  if ((rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n)) || (rc = ex__vec_and_valid(out, &v[0])) ||
      (rc = ex__vec_and_valid(out, &v[1])))
    goto cleanup;
  for (size_t i = 0; i < n; i++) {
    if (!ex__ok(out, i)) continue;
    const char *s = ex__vec_str(&v[0], i), *p = ex__vec_str(&v[1], i);
    size_t sl = v[0].off[i + 1] - v[0].off[i], pl = v[1].off[i + 1] - v[1].off[i];
    if (!rlike) {
      out->b[i] = like_match(s, sl, p, pl, fold, esc);
      continue;
    }
    regex_t *re = e->aux, *own = NULL;
    if (!re) {
      if ((rc = compile(&own, p, pl))) goto cleanup;
      re = own;
    }
    if (sl + 1 > cap) {
      cap = sl + 64;
      char *nb = realloc(buf, cap);
      if (!nb) {
        if (own) free_regex(own);
        rc = dd_err_set(DD_ENOMEM, "out of memory");
        goto cleanup;
      }
      buf = nb;
    }
    if (sl) memcpy(buf, s, sl);
    buf[sl] = '\0';
    out->b[i] = regexec(re, buf, 0, NULL, 0) == 0;
    if (own) free_regex(own);
  }
cleanup:
  if (rc) ex__vec_free(out);
  free(buf);
  ex__free_args(v, e->nargs);
  return rc;
}

/* ---- contains / startswith / endswith ---- */

static int bind_find(ex_node *e) {
  bool bin = e->args[0]->type.id == EX_T_BINARY && e->args[1]->type.id == EX_T_BINARY;
  int rc = bin ? 0 : args_to(e, 0, 2, ex__t(EX_T_STRING), "string arguments");
  if (rc) return rc;
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = any_nullable(e);
  return 0;
}

static bool has_at(const char *s, size_t sl, const char *p, size_t pl, char where) {
  if (pl > sl) return false;
  if (!pl) return true;
  if (where == 's') return memcmp(s, p, pl) == 0;
  if (where == 'e') return memcmp(s + sl - pl, p, pl) == 0;
  for (size_t i = 0; i + pl <= sl; i++)
    if (s[i] == p[0] && memcmp(s + i, p, pl) == 0) return true;
  return false;
}

static int eval_find(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[2];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  char where = e->name[0]; /* contains, startswith, endswith */
  size_t n = v[0].n;
  if (!(rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n)) && !(rc = ex__vec_and_valid(out, &v[0])) &&
      !(rc = ex__vec_and_valid(out, &v[1])))
    for (size_t i = 0; i < n; i++)
      if (ex__ok(out, i))
        out->b[i] = has_at(ex__vec_str(&v[0], i), v[0].off[i + 1] - v[0].off[i],
                           ex__vec_str(&v[1], i), v[1].off[i + 1] - v[1].off[i], where);
  if (rc) ex__vec_free(out);
  ex__free_args(v, 2);
  return rc;
}

/* ---- string -> string ---- */

static int bind_str1(ex_node *e) {
  int rc = args_to(e, 0, 1, ex__t(EX_T_STRING), "a string argument");
  if (rc) return rc;
  e->type = ex__t(EX_T_STRING);
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_str1(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  size_t n = a.n;
  char op = e->name[0] == 'l' && e->name[1] == 'o' ? 'l' : e->name[0] == 'u' ? 'u'
          : e->name[0] == 'l' ? '<' : e->name[0] == 'r' ? '>' : 't';
  if ((rc = ex__vec_init(out, ex__t(EX_T_STRING), n)) || (rc = ex__vec_and_valid(out, &a)))
    goto cleanup;
  for (size_t i = 0; i < n; i++) {
    const char *s = ex__vec_str(&a, i);
    size_t len = a.off[i + 1] - a.off[i];
    if (!ex__ok(&a, i)) len = 0;
    if (op == 't' || op == '<')
      while (len && *s == ' ') s++, len--;
    if (op == 't' || op == '>')
      while (len && s[len - 1] == ' ') len--;
    if (op == 'l' || op == 'u') rc = push_case(out, i, s, len, op == 'u');
    else rc = ex__vec_str_push(out, i, s, len);
    if (rc) goto cleanup;
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__vec_free(&a);
  return rc;
}

/* ---- length, substring, concat ---- */

static int bind_length(ex_node *e) {
  if (e->args[0]->type.id != EX_T_BINARY) {
    int rc = args_to(e, 0, 1, ex__t(EX_T_STRING), "a string or binary argument");
    if (rc) return rc;
  }
  e->type = ex__t(EX_T_INT);
  e->nullable = any_nullable(e);
  return 0;
}

static size_t nchars(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

/* Byte offset of code point k (clamped to len). */
static size_t char_at(const char *s, size_t len, size_t k) {
  size_t i = 0;
  while (i < len && k) {
    i += u8len((unsigned char)s[i]);
    k--;
  }
  return i < len ? i : len;
}

static int eval_length(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool bin = a.type.id == EX_T_BINARY;
  if (!(rc = ex__vec_init(out, ex__t(EX_T_INT), a.n)) && !(rc = ex__vec_and_valid(out, &a)))
    for (size_t i = 0; i < a.n; i++) {
      size_t len = a.off[i + 1] - a.off[i];
      out->i[i] = (int64_t)(bin ? len : nchars(ex__vec_str(&a, i), len));
    }
  ex__vec_free(&a);
  return rc;
}

static int bind_substring(ex_node *e) {
  int rc;
  if (e->args[0]->type.id != EX_T_BINARY &&
      (rc = args_to(e, 0, 1, ex__t(EX_T_STRING), "a string or binary argument")))
    return rc;
  if ((rc = args_to(e, 1, 3, ex__t(EX_T_INT), "integer positions"))) return rc;
  e->type = e->args[0]->type;
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_substring(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[3];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  bool bin = v[0].type.id == EX_T_BINARY;
  if ((rc = ex__vec_init(out, e->type, n))) goto cleanup;
  for (size_t k = 0; k < e->nargs; k++)
    if ((rc = ex__vec_and_valid(out, &v[k]))) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    if (!ex__ok(out, i)) {
      out->off[i + 1] = out->data_len;
      continue;
    }
    const char *s = ex__vec_str(&v[0], i);
    size_t bl = v[0].off[i + 1] - v[0].off[i];
    int64_t len = (int64_t)(bin ? bl : nchars(s, bl));
    int64_t pos = v[1].i[i], cnt = e->nargs > 2 ? v[2].i[i] : INT32_MAX;
    /* UTF8String.substringSQL */
    int64_t start = pos > 0 ? pos - 1 : pos < 0 ? len + pos : 0;
    int64_t end = start + cnt;
    if (end > INT32_MAX) end = INT32_MAX;
    if (start < 0) start = 0;
    if (end > len) end = len;
    size_t a = 0, b = 0;
    if (start < end) {
      a = bin ? (size_t)start : char_at(s, bl, (size_t)start);
      b = bin ? (size_t)end : char_at(s, bl, (size_t)end);
    }
    if ((rc = ex__vec_str_push(out, i, s + a, b - a))) goto cleanup;
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__free_args(v, e->nargs);
  return rc;
}

static int bind_concat(ex_node *e) {
  bool all_bin = e->nargs > 0;
  for (size_t i = 0; i < e->nargs; i++) all_bin &= e->args[i]->type.id == EX_T_BINARY;
  ex_type t = ex__t(all_bin ? EX_T_BINARY : EX_T_STRING);
  int rc = args_to(e, 0, e->nargs, t, "string arguments");
  if (rc) return rc;
  e->type = t;
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_concat(ex__vec *out, const ex_node *e, const arw_batch *in) {
  size_t n = arw_batch_rows(in);
  ex__vec *v;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  if ((rc = ex__vec_init(out, e->type, n))) goto cleanup;
  for (size_t k = 0; k < e->nargs; k++)
    if ((rc = ex__vec_and_valid(out, &v[k]))) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    out->off[i + 1] = out->data_len;
    if (!ex__ok(out, i)) continue;
    for (size_t k = 0; k < e->nargs; k++)
      if ((rc = ex__vec_str_push(out, i, ex__vec_str(&v[k], i), v[k].off[i + 1] - v[k].off[i])))
        goto cleanup;
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__free_all(v, e->nargs);
  return rc;
}

/* ---- dates ---- */

static int bind_date_part(ex_node *e) {
  int rc = args_to(e, 0, 1, ex__t(EX_T_DATE), "a date argument");
  if (rc) return rc;
  e->type = ex__t(EX_T_INT);
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_date_part(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  char which = e->name[0];
  if (!(rc = ex__vec_init(out, ex__t(EX_T_INT), a.n)) && !(rc = ex__vec_and_valid(out, &a)))
    for (size_t i = 0; i < a.n; i++) {
      int64_t y;
      unsigned m, d;
      ex__civil_from_days(a.i[i], &y, &m, &d);
      out->i[i] = which == 'y' ? y : which == 'm' ? (int64_t)m : (int64_t)d;
    }
  ex__vec_free(&a);
  return rc;
}

static int bind_date_add(ex_node *e) {
  int rc = args_to(e, 0, 1, ex__t(EX_T_DATE), "a date");
  if (rc) return rc;
  ex_type_id t = e->args[1]->type.id;
  if (!ex__is_integral(t) && t != EX_T_NULL && t != EX_T_STRING)
    return ex__type_error(e, "(date, int)");
  if (t == EX_T_LONG) return ex__type_error(e, "(date, int)");
  if ((rc = ex__coerce_arg(e, 1, ex__t(EX_T_INT)))) return rc;
  e->type = ex__t(EX_T_DATE);
  e->nullable = any_nullable(e);
  return 0;
}

static int bind_datediff(ex_node *e) {
  int rc = args_to(e, 0, 2, ex__t(EX_T_DATE), "dates");
  if (rc) return rc;
  e->type = ex__t(EX_T_INT);
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_days(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[2];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  int sign = !strcmp(e->name, "date_sub") ? -1 : 1;
  bool diff = !strcmp(e->name, "datediff");
  if ((rc = ex__vec_init(out, e->type, n)) || (rc = ex__vec_and_valid(out, &v[0])) ||
      (rc = ex__vec_and_valid(out, &v[1])))
    goto cleanup;
  for (size_t i = 0; i < n; i++)
    out->i[i] = diff ? v[0].i[i] - v[1].i[i] : v[0].i[i] + sign * v[1].i[i];
  for (size_t i = 0; i < n && !diff; i++)
    if (ex__ok(out, i) && (out->i[i] < INT32_MIN || out->i[i] > INT32_MAX)) {
      rc = dd_err_set(DD_ERANGE, "[ARITHMETIC_OVERFLOW] %s: the date is out of range", e->name);
      goto cleanup;
    }
cleanup:
  if (rc) ex__vec_free(out);
  ex__free_args(v, 2);
  return rc;
}

static int bind_now(ex_node *e) {
  e->type = ex__t(e->name[8] == 'd' ? EX_T_DATE : EX_T_TIMESTAMP);
  e->nullable = false;
  return 0;
}

static int eval_now(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex_value v = {.type = e->type, .i = e->opts.now_us};
  if (e->type.id == EX_T_DATE) {
    int64_t us = e->opts.now_us + (int64_t)e->opts.tz_offset_s * 1000000, day = 86400LL * 1000000;
    v.i = us / day - (us % day < 0);
  }
  return ex__vec_literal(out, &v, arw_batch_rows(in));
}

const ex__fn ex__fns_str[] = {
  {"like", 2, 3, bind_like, eval_like, NULL},
  {"ilike", 2, 3, bind_like, eval_like, NULL},
  {"rlike", 2, 2, bind_like, eval_like, free_regex},
  {"lower", 1, 1, bind_str1, eval_str1, NULL},
  {"upper", 1, 1, bind_str1, eval_str1, NULL},
  {"trim", 1, 1, bind_str1, eval_str1, NULL},
  {"ltrim", 1, 1, bind_str1, eval_str1, NULL},
  {"rtrim", 1, 1, bind_str1, eval_str1, NULL},
  {"length", 1, 1, bind_length, eval_length, NULL},
  {"contains", 2, 2, bind_find, eval_find, NULL},
  {"startswith", 2, 2, bind_find, eval_find, NULL},
  {"endswith", 2, 2, bind_find, eval_find, NULL},
  {"substring", 2, 3, bind_substring, eval_substring, NULL},
  {"concat", 0, -1, bind_concat, eval_concat, NULL},
  {"year", 1, 1, bind_date_part, eval_date_part, NULL},
  {"month", 1, 1, bind_date_part, eval_date_part, NULL},
  {"day", 1, 1, bind_date_part, eval_date_part, NULL},
  {"date_add", 2, 2, bind_date_add, eval_days, NULL},
  {"date_sub", 2, 2, bind_date_add, eval_days, NULL},
  {"datediff", 2, 2, bind_datediff, eval_days, NULL},
  {"current_date", 0, 0, bind_now, eval_now, NULL},
  {"current_timestamp", 0, 0, bind_now, eval_now, NULL},
  {NULL, 0, 0, NULL, NULL, NULL},
};
