/* ex_fn_round.c: round (HALF_UP) and bround (HALF_EVEN) with Spark's RoundBase rules.
 *
 * The scale (default 0) must be a constant integer; a NULL scale makes every row NULL. The
 * result keeps the argument's type, except a decimal(p,s): decimal(min(p-s+1+min(s,d), 38),
 * min(s,d)) for d >= 0 and decimal(min(max(p-s+1, 1-d), 38), 0) for d < 0. A string or NULL
 * argument is a double. Doubles and floats round their shortest decimal text (Java's
 * BigDecimal.valueOf, so round(2.675, 2) is 2.68), NaN and infinities pass through; an
 * integral value rounded to a negative scale that leaves its type is [ARITHMETIC_OVERFLOW]
 * under ANSI and wraps to its low bits otherwise, as Spark's does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

typedef struct round_aux {
  int scale;
  bool null_scale;
} round_aux;

static int bind_round(ex_node *e) {
  ex_type a = e->args[0]->type;
  int rc;
  if (a.id == EX_T_STRING || a.id == EX_T_NULL) {
    if ((rc = ex__coerce_arg(e, 0, ex__t(EX_T_DOUBLE)))) return rc;
    a = ex__t(EX_T_DOUBLE);
  }
  if (!ex__is_numeric(a.id)) return ex__type_error(e, "a numeric argument");
  round_aux *x = calloc(1, sizeof *x);
  if (!x) return dd_err_set(DD_ENOMEM, "out of memory");
  e->aux = x;
  if (e->nargs == 2) {
    const ex_node *s = e->args[1];
    if (ex_uses_columns(s))
      return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] the scale of %s "
                        "must be a constant integer", e->name);
    if (!ex__is_integral(s->type.id) && s->type.id != EX_T_NULL) return ex__type_error(e, "an INT scale");
    ex_value v;
    char *storage = NULL;
    if ((rc = ex_eval_const(&v, &storage, s))) return rc;
    free(storage);
    if (v.is_null || s->type.id == EX_T_NULL) x->null_scale = true;
    else if (v.i < INT32_MIN || v.i > INT32_MAX) return ex__type_error(e, "an INT scale");
    else x->scale = (int)v.i;
  }
  int d = x->scale;
  if (a.id == EX_T_DECIMAL) {
    int least = a.precision - a.scale + 1;
    if (d < 0) {
      int64_t p = least > 1 - (int64_t)d ? least : 1 - (int64_t)d;
      e->type = ex__dec(p > 38 ? 38 : (int)p, 0);
    } else {
      int s = a.scale < d ? a.scale : d;
      e->type = ex__dec(least + s > 38 ? 38 : least + s, s);
    }
  } else {
    e->type = a;
  }
  e->nullable = true;
  return 0;
}

/* ---- doubles: rounding the shortest decimal text ---- */

/* Rounds x to d fraction digits as BigDecimal.valueOf(x).setScale(d, mode) does, and
 * converts back (to float when is_float). x is finite. */
static double round_text(double x, int d, bool even, bool is_float) {
  char txt[48], g[48];
  ex__format_double(txt, x, false);
  /* txt: [-]digits[.digits][E[-]exp]; value = G * 10^q with G the digits as an integer */
  bool neg = txt[0] == '-';
  size_t k = 0;
  long q = 0;
  bool frac = false;
  const char *c = txt + neg;
  for (; *c && *c != 'E'; c++) {
    if (*c == '.') {
      frac = true;
      continue;
    }
    if (k || *c != '0') g[k++] = *c; /* leading zeros do not count */
    if (frac) q--;
  }
  if (*c == 'E') q += strtol(c + 1, NULL, 10);
  if (!k) return 0.0;
  long m = -(long)d - q; /* digits to drop */
  if (m <= 0) return x;
  if (m > (long)k) return 0.0;
  size_t keep = k - (size_t)m;
  char f = g[keep];
  bool rest = false;
  for (size_t i = keep + 1; i < k; i++) rest |= g[i] != '0';
  bool odd = keep && (g[keep - 1] - '0') % 2;
  bool up = even ? (f > '5' || (f == '5' && (rest || odd))) : f >= '5';
  char out[64];
  size_t n = 0;
  if (neg) out[n++] = '-';
  size_t start = n;
  memcpy(out + n, g, keep);
  n += keep;
  if (up) {
    size_t i = n;
    while (i > start && out[i - 1] == '9') out[--i] = '0';
    if (i > start) {
      out[i - 1]++;
    } else { /* every kept digit was 9 (or none was kept): a new leading 1 */
      memmove(out + start + 1, out + start, n - start);
      out[start] = '1';
      n++;
    }
  }
  bool zero = true;
  for (size_t i = start; i < n; i++) zero &= out[i] == '0';
  if (zero) return 0.0; /* BigDecimal has no negative zero */
  snprintf(out + n, sizeof out - n, "e%ld", q + m);
  return is_float ? (double)strtof(out, NULL) : strtod(out, NULL);
}

/* ---- integers and decimals: v rounded at 10^p (p > 0) ---- */

static ex_i128 round_at(ex_i128 v, int p, bool even) {
  if (p > 38) return 0; /* |v| < 10^38 < half of 10^39 */
  ex_i128 m = ex__pow10(p), q = v / m, r = v % m;
  if (r < 0) r = -r;
  bool up = even ? (r * 2 > m || (r * 2 == m && (q % 2 != 0))) : r * 2 >= m;
  if (up) q += v < 0 ? -1 : 1;
  return q;
}

static int eval_round(ex__vec *out, const ex_node *e, const arw_batch *in) {
  const round_aux *x = e->aux;
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool even = e->name[0] == 'b';
  ex_type at = e->args[0]->type, t = e->type;
  if ((rc = ex__vec_init(out, t, a.n)) || (rc = ex__vec_and_valid(out, &a))) goto done;
  if (x->null_scale) {
    if (a.n && !(rc = ex__vec_valid_alloc(out))) memset(out->valid, 0, a.n);
    goto done;
  }
  int d = x->scale;
  for (size_t i = 0; i < a.n; i++) {
    if (!ex__ok(&a, i)) continue;
    if (at.id == EX_T_FLOAT || at.id == EX_T_DOUBLE) {
      double v = a.f[i];
      out->f[i] = isnan(v) || isinf(v) ? v : round_text(v, d, even, at.id == EX_T_FLOAT);
    } else if (at.id == EX_T_DECIMAL) {
      int drop = at.scale - (d < 0 ? 0 : d); /* fraction digits to drop */
      ex_i128 r = a.d[i];
      if (d < 0) {
        r = at.scale - d > 38 ? 0 : round_at(r, at.scale - d, even) * ex__pow10(-d);
      } else if (drop > 0) {
        r = round_at(r, drop, even);
      }
      if (r >= ex__pow10(t.precision) || r <= -ex__pow10(t.precision)) {
        rc = dd_err_set(DD_ERANGE, "[NUMERIC_VALUE_OUT_OF_RANGE] %s does not fit in "
                        "decimal(%d, %d)", e->name, t.precision, t.scale);
        goto done;
      }
      out->d[i] = r;
    } else if (d >= 0) {
      out->i[i] = a.i[i];
    } else {
      ex_i128 r = -d > 38 ? 0 : round_at(a.i[i], -d, even) * ex__pow10(-d);
      if (r < ex__int_min(t.id) || r > ex__int_max(t.id)) {
        if (e->opts.ansi) {
          rc = dd_err_set(DD_ERANGE, "[ARITHMETIC_OVERFLOW] Overflow. Use 'try_%s' to tolerate "
                          "overflow and return NULL instead.", e->name);
          goto done;
        }
        /* BigDecimal's intValue/longValue: the low bits */
        uint64_t low = (uint64_t)(unsigned __int128)r;
        int64_t w = (int64_t)low;
        out->i[i] = t.id == EX_T_BYTE ? (int8_t)w : t.id == EX_T_SHORT ? (int16_t)w
                  : t.id == EX_T_INT ? (int32_t)w : w;
      } else {
        out->i[i] = (int64_t)r;
      }
    }
  }
done:
  if (rc) ex__vec_free(out);
  ex__vec_free(&a);
  return rc;
}

const ex__fn ex__fns_round[] = {
  {"round", 1, 2, bind_round, eval_round, free},
  {"bround", 1, 2, bind_round, eval_round, free},
  {NULL, 0, 0, NULL, NULL, NULL},
};
