/* ex_fn_arith.c: + - * / % div, negative, abs with Spark's result types:
 *   integral op integral: the wider integral (overflow: ANSI error, legacy wrap-around);
 *   / of non-decimals: double; div: bigint;
 *   with a float or double: double (float when the other side is float, tinyint or smallint);
 *   decimal op decimal/integral (an integral literal counts with its own digits, a column
 *   as decimal(3|5|10|20,0)): precision and scale by Spark's DecimalPrecision rules with
 *   allowPrecisionLoss (results capped at 38 digits keeping at least 6 fraction digits);
 *   a string operand is cast to bigint (other side integral) or double (ANSI), else double;
 *   date + int, date - int: date_add / date_sub.
 * pmod(a, b): the remainder made non-negative as Spark's Pmod does (r = a % b; r < 0 ?
 *   (r + b) % b : r, in the result type's Java arithmetic), typed as %.
 * Division and remainder by zero: ANSI error, legacy NULL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

static int digits_of(int64_t v) {
  int n = 1;
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  while (u >= 10) u /= 10, n++;
  return n;
}

/* The decimal type an operand takes part in decimal arithmetic as. */
static ex_type as_decimal(const ex_node *a) {
  if (a->type.id == EX_T_DECIMAL) return a->type;
  if (a->kind == EX_LITERAL && !a->lit.is_null && ex__is_integral(a->type.id))
    return ex__dec(digits_of(a->lit.i), 0);
  return ex__dec_of(a->type);
}

static int coerce2(ex_node *e, ex_type a, ex_type b) {
  int rc = ex__coerce_arg(e, 0, a);
  return rc ? rc : ex__coerce_arg(e, 1, b);
}

static int redirect(ex_node *e, const char *fn) {
  const ex__fn *f = ex__fn_find(fn);
  char *n = ex__strdup(fn);
  if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
  free(e->name);
  e->name = n;
  e->fn = f;
  return f->bind(e);
}

static int bind_arith(ex_node *e) {
  const char *op = e->name;
  ex_node **args = e->args;
  ex_type a = args[0]->type, b = args[1]->type;
  bool ansi = e->opts.ansi;
  /* date arithmetic */
  if ((!strcmp(op, "+") || !strcmp(op, "-")) && a.id == EX_T_DATE &&
      (ex__is_integral(b.id) || b.id == EX_T_NULL))
    return redirect(e, op[0] == '+' ? "date_add" : "date_sub");
  if (!strcmp(op, "+") && b.id == EX_T_DATE && ex__is_integral(a.id)) {
    ex_node *t = args[0];
    args[0] = args[1];
    args[1] = t;
    return redirect(e, "date_add");
  }
  if (a.id == EX_T_STRING && b.id == EX_T_STRING) return ex__type_error(e, "numeric operands");
  if (a.id == EX_T_STRING || b.id == EX_T_STRING) {
    ex_type o = a.id == EX_T_STRING ? b : a;
    ex_type s = ansi && ex__is_integral(o.id) ? ex__t(EX_T_LONG) : ex__t(EX_T_DOUBLE);
    int rc = ex__coerce_arg(e, a.id == EX_T_STRING ? 0 : 1, s);
    if (rc) return rc;
    a = args[0]->type, b = args[1]->type;
  }
  if (a.id == EX_T_NULL && b.id == EX_T_NULL) a = b = ex__t(EX_T_DOUBLE);
  else if (a.id == EX_T_NULL) a = b;
  else if (b.id == EX_T_NULL) b = a;
  if (!ex__is_numeric(a.id) || !ex__is_numeric(b.id)) return ex__type_error(e, "numeric operands");
  int rc = coerce2(e, a, b);
  if (rc) return rc;
  e->nullable = args[0]->nullable || args[1]->nullable || !ansi;
  bool fp = a.id == EX_T_FLOAT || a.id == EX_T_DOUBLE || b.id == EX_T_FLOAT || b.id == EX_T_DOUBLE;
  bool dec = a.id == EX_T_DECIMAL || b.id == EX_T_DECIMAL;
  if (!strcmp(op, "div")) {
    e->type = ex__t(EX_T_LONG);
    return coerce2(e, e->type, e->type);
  }
  if (!strcmp(op, "/") && !dec) {
    e->type = ex__t(EX_T_DOUBLE);
    return coerce2(e, e->type, e->type);
  }
  if (fp) {
    bool narrow = (a.id == EX_T_FLOAT || a.id <= EX_T_SHORT) && (b.id == EX_T_FLOAT || b.id <= EX_T_SHORT);
    e->type = ex__t(narrow ? EX_T_FLOAT : EX_T_DOUBLE);
    return coerce2(e, e->type, e->type);
  }
  if (dec) {
    ex_type da = as_decimal(args[0]), db = as_decimal(args[1]);
    int p1 = da.precision, s1 = da.scale, p2 = db.precision, s2 = db.scale;
    int s, p;
    switch (op[0]) {
      case '+':
      case '-':
        s = s1 > s2 ? s1 : s2;
        p = (p1 - s1 > p2 - s2 ? p1 - s1 : p2 - s2) + s + 1;
        break;
      case '*':
        s = s1 + s2;
        p = p1 + p2 + 1;
        break;
      case '/':
        s = 6 > s1 + p2 + 1 ? 6 : s1 + p2 + 1;
        p = p1 - s1 + s2 + s;
        break;
      default: /* % */
        s = s1 > s2 ? s1 : s2;
        p = (p1 - s1 < p2 - s2 ? p1 - s1 : p2 - s2) + s;
        break;
    }
    e->type = ex__dec_bounded(p, s);
    return coerce2(e, da, db);
  }
  ex_type t;
  ex__wider(a, b, &t, ansi);
  e->type = t;
  return coerce2(e, t, t);
}

static int zero_error(const char *op) {
  if (op[0] == '%' || !strcmp(op, "pmod"))
    return dd_err_set(DD_ERANGE, "[REMAINDER_BY_ZERO] Remainder by zero. Use `try_mod` to "
                      "tolerate divisor being 0 and return NULL instead.");
  return dd_err_set(DD_ERANGE, "[DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to tolerate "
                    "divisor being 0 and return NULL instead.");
}

/* Spark names the operands of a tinyint / smallint overflow. */
static int small_overflow(const char *op, int64_t a, int64_t b, ex_type_id t) {
  const char *sfx = t == EX_T_BYTE ? "Y" : "S";
  const char *fn = op[0] == '+' ? "try_add" : op[0] == '-' ? "try_subtract" : "try_multiply";
  return dd_err_set(DD_ERANGE, "[BINARY_ARITHMETIC_OVERFLOW] %lld%s %s %lld%s caused overflow. "
                    "Use `%s` to ignore overflow problem and return NULL.", (long long)a, sfx, op,
                    (long long)b, sfx, fn);
}

static int overflow_error(const char *op) {
  const char *fn = op[0] == '+' ? "try_add" : op[0] == '-' ? "try_subtract"
                 : op[0] == '*' ? "try_multiply" : "try_divide";
  return dd_err_set(DD_ERANGE, "[ARITHMETIC_OVERFLOW] integer overflow. Use '%s' to tolerate "
                    "overflow and return NULL instead.", fn);
}

static int dec_overflow(ex_i128 v, int scale, ex_type t) {
  char buf[64];
  ex__dec_format(buf, v, scale);
  return dd_err_set(DD_ERANGE, "[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] %s cannot be "
                    "represented as Decimal(%d, %d). If necessary set \"spark.sql.ansi.enabled\" "
                    "to \"false\" to bypass this error, and return NULL instead.", buf,
                    t.precision, t.scale);
}

/* v at scale from, rounded HALF_UP to scale to; false on int128 overflow. */
static bool rescale(ex_i128 *v, int from, int to) {
  if (to >= from) return !__builtin_mul_overflow(*v, ex__pow10(to - from), v);
  ex_i128 m = ex__pow10(from - to), q = *v / m, r = *v % m;
  if (r < 0) r = -r;
  if (r * 2 >= m) q += *v < 0 ? -1 : 1;
  *v = q;
  return true;
}

/* One row of decimal arithmetic; 0, 1 for NULL (legacy), or an error. */
static int dec_op(ex_i128 *out, char op, ex_i128 a, int sa, ex_i128 b, int sb, ex_type t, bool ansi,
                  const char *name) {
  ex_i128 r;
  int sr;
  bool ok = true;
  switch (op) {
    case '+':
    case '-': {
      int s = sa > sb ? sa : sb;
      ok = rescale(&a, sa, s) && rescale(&b, sb, s);
      ok = ok && !(op == '+' ? __builtin_add_overflow(a, b, &r) : __builtin_sub_overflow(a, b, &r));
      sr = s;
      break;
    }
    case '*':
      ok = !__builtin_mul_overflow(a, b, &r);
      sr = sa + sb;
      break;
    case '/': {
      if (b == 0) return ansi ? zero_error(name) : 1;
      /* a / b at scale t.scale, one extra digit for rounding */
      int shift = t.scale + 1 - sa + sb;
      ex_i128 num = a;
      /* 10^39 does not fit __int128: a larger shift overflows unless a is 0 (fuzz.expr_parse
       * found ex__pow10(shift) overflowing for 3 / .7777...0721164 with 30 digits) */
      if (shift > 38) ok = num == 0;
      else if (shift >= 0) ok = !__builtin_mul_overflow(num, ex__pow10(shift), &num);
      else num = -shift > 38 ? 0 : num / ex__pow10(-shift);
      if (ok) {
        ex_i128 q = num / b;
        ex_i128 last = q % 10;
        q /= 10;
        if (last >= 5) q += 1;
        else if (last <= -5) q -= 1;
        r = q;
      }
      sr = t.scale;
      break;
    }
    default: { /* % */
      if (b == 0) return ansi ? zero_error(name) : 1;
      int s = sa > sb ? sa : sb;
      ok = rescale(&a, sa, s) && rescale(&b, sb, s);
      if (ok) r = a % b;
      if (ok && op == 'p' && r < 0) r = (r + b) % b; /* |r| < |b|: no overflow */
      sr = s;
      break;
    }
  }
  if (ok) ok = rescale(&r, sr, t.scale);
  if (ok && (r >= ex__pow10(t.precision) || r <= -ex__pow10(t.precision))) {
    if (ansi) return dec_overflow(r, t.scale, t);
    return 1;
  }
  if (!ok) {
    if (ansi)
      return dd_err_set(DD_ERANGE, "[NUMERIC_VALUE_OUT_OF_RANGE] the result of a decimal %s does "
                        "not fit in 38 digits", name);
    return 1;
  }
  *out = r;
  return 0;
}

static int64_t wrap_to(int64_t v, ex_type_id t) {
  switch (t) {
    case EX_T_BYTE: return (int8_t)v;
    case EX_T_SHORT: return (int16_t)v;
    case EX_T_INT: return (int32_t)v;
    default: return v;
  }
}

/* (r + n) % n for a negative remainder r, with Java's arithmetic of type t: int and long
 * additions wrap, tinyint and smallint are added as ints (so never wrap); n is not 0 or -1. */
static int64_t pmod_fix(int64_t r, int64_t n, ex_type_id t) {
  int64_t s = t == EX_T_LONG ? (int64_t)((uint64_t)r + (uint64_t)n)
            : t == EX_T_INT ? (int32_t)(uint32_t)((uint64_t)r + (uint64_t)n) : r + n;
  return s % n;
}

static int eval_arith(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[2];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  const char *name = e->name;
  char op = !strcmp(name, "div") ? 'd' : name[0]; /* 'p': pmod */
  bool ansi = e->opts.ansi;
  ex_type t = e->type;
  if ((rc = ex__vec_init(out, t, n)) || (rc = ex__vec_and_valid(out, &v[0])) ||
      (rc = ex__vec_and_valid(out, &v[1])))
    goto cleanup;
  if (t.id == EX_T_FLOAT || t.id == EX_T_DOUBLE) {
    const double *a = v[0].f, *b = v[1].f;
    double *r = out->f;
    switch (op) {
      case '+': for (size_t i = 0; i < n; i++) r[i] = a[i] + b[i]; break;
      case '-': for (size_t i = 0; i < n; i++) r[i] = a[i] - b[i]; break;
      case '*': for (size_t i = 0; i < n; i++) r[i] = a[i] * b[i]; break;
      default:
        for (size_t i = 0; i < n; i++) {
          if (b[i] == 0 && ex__ok(out, i)) {
            if (ansi) {
              rc = zero_error(name);
              goto cleanup;
            }
            if ((rc = ex__vec_set_null(out, i))) goto cleanup;
            continue;
          }
          r[i] = op == '/' ? a[i] / b[i] : fmod(a[i], b[i]);
          if (op == 'p' && r[i] < 0) { /* Java's (r + n) % n, in float for a float result */
            double s = r[i] + b[i];
            r[i] = fmod(t.id == EX_T_FLOAT ? (float)s : s, b[i]);
          }
        }
        break;
    }
    if (t.id == EX_T_FLOAT)
      for (size_t i = 0; i < n; i++) r[i] = (float)r[i];
  } else if (t.id == EX_T_DECIMAL) {
    for (size_t i = 0; i < n; i++) {
      if (!ex__ok(out, i)) continue;
      rc = dec_op(&out->d[i], op, v[0].d[i], v[0].type.scale, v[1].d[i], v[1].type.scale, t, ansi, name);
      if (rc < 0) goto cleanup;
      if (rc == 1 && (rc = ex__vec_set_null(out, i))) goto cleanup;
      rc = 0;
    }
  } else {
    const int64_t *a = v[0].i, *b = v[1].i;
    int64_t *r = out->i, lo = ex__int_min(t.id), hi = ex__int_max(t.id);
    for (size_t i = 0; i < n; i++) {
      if (!ex__ok(out, i)) continue;
      int64_t x;
      bool of = false;
      switch (op) {
        case '+': of = __builtin_add_overflow(a[i], b[i], &x); break;
        case '-': of = __builtin_sub_overflow(a[i], b[i], &x); break;
        case '*': of = __builtin_mul_overflow(a[i], b[i], &x); break;
        default:
          if (b[i] == 0) {
            if (ansi) {
              rc = zero_error(name);
              goto cleanup;
            }
            if ((rc = ex__vec_set_null(out, i))) goto cleanup;
            continue;
          }
          if (b[i] == -1) { /* INT64_MIN / -1 overflows; x % -1 is 0 */
            of = op == 'd' && a[i] == INT64_MIN;
            x = op == '%' || op == 'p' || of ? (op == 'd' ? a[i] : 0) : -a[i];
          } else if (op == '%' || op == 'p') {
            x = a[i] % b[i];
            if (op == 'p' && x < 0) x = pmod_fix(x, b[i], t.id);
          } else {
            x = a[i] / b[i];
          }
          break;
      }
      if (of || x < lo || x > hi) {
        if (ansi) {
          rc = (t.id == EX_T_BYTE || t.id == EX_T_SHORT) && op != 'd' && op != '%'
                   ? small_overflow(name, a[i], b[i], t.id) : overflow_error(name);
          goto cleanup;
        }
        x = wrap_to(x, t.id); /* the builtins leave the wrapped value in x */
      }
      r[i] = x;
    }
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__free_args(v, 2);
  return rc;
}

/* ---- unary ---- */

static int bind_unary(ex_node *e) {
  ex_type a = e->args[0]->type;
  if (a.id == EX_T_STRING || a.id == EX_T_NULL) {
    int rc = ex__coerce_arg(e, 0, ex__t(EX_T_DOUBLE));
    if (rc) return rc;
    a = ex__t(EX_T_DOUBLE);
  }
  if (!ex__is_numeric(a.id)) return ex__type_error(e, "a numeric argument");
  e->type = a;
  e->nullable = e->args[0]->nullable;
  return 0;
}

static int eval_unary(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool abs_ = !strcmp(e->name, "abs");
  size_t n = a.n;
  ex_type t = e->type;
  if ((rc = ex__vec_init(out, t, n)) || (rc = ex__vec_and_valid(out, &a))) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    if (!ex__ok(out, i)) continue;
    if (t.id == EX_T_FLOAT || t.id == EX_T_DOUBLE) {
      out->f[i] = abs_ ? fabs(a.f[i]) : -a.f[i];
    } else if (t.id == EX_T_DECIMAL) {
      out->d[i] = abs_ && a.d[i] >= 0 ? a.d[i] : -a.d[i];
    } else {
      int64_t x = a.i[i];
      if (abs_ && x >= 0) {
        out->i[i] = x;
        continue;
      }
      if (x == ex__int_min(t.id)) {
        if (e->opts.ansi) {
          rc = dd_err_set(DD_ERANGE, "[ARITHMETIC_OVERFLOW] integer overflow in %s(%lld)",
                          abs_ ? "abs" : "negative", (long long)x);
          goto cleanup;
        }
        out->i[i] = x; /* Java: -MIN == MIN */
        continue;
      }
      out->i[i] = -x;
    }
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__vec_free(&a);
  return rc;
}

/* isnan(x): true for NaN, false otherwise (also for NULL) */
static int bind_isnan(ex_node *e) {
  ex_type_id t = e->args[0]->type.id;
  if (!ex__is_numeric(t) && t != EX_T_NULL && t != EX_T_STRING)
    return ex__type_error(e, "a numeric argument");
  int rc = ex__coerce_arg(e, 0, ex__t(EX_T_DOUBLE));
  if (rc) return rc;
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = false;
  return 0;
}

static int eval_isnan(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  if (!(rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), a.n)))
    for (size_t i = 0; i < a.n; i++) out->b[i] = ex__ok(&a, i) && isnan(a.f[i]);
  ex__vec_free(&a);
  return rc;
}

const ex__fn ex__fns_arith[] = {
  {"isnan", 1, 1, bind_isnan, eval_isnan, NULL},
  {"+", 2, 2, bind_arith, eval_arith, NULL},
  {"-", 2, 2, bind_arith, eval_arith, NULL},
  {"*", 2, 2, bind_arith, eval_arith, NULL},
  {"/", 2, 2, bind_arith, eval_arith, NULL},
  {"%", 2, 2, bind_arith, eval_arith, NULL},
  {"pmod", 2, 2, bind_arith, eval_arith, NULL},
  {"div", 2, 2, bind_arith, eval_arith, NULL},
  {"negative", 1, 1, bind_unary, eval_unary, NULL},
  {"abs", 1, 1, bind_unary, eval_unary, NULL},
  {NULL, 0, 0, NULL, NULL, NULL},
};
