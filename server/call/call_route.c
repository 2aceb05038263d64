/* call_route.c: compiles google.api.http path templates and matches request paths
 * against them (see call_route.h for the rules). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/call/call_route.h"

#define ROUTE_MAX_SEGS 32

enum { SEG_MULTI = 0, SEG_VAR = 1, SEG_LIT = 2 }; /* also the rank: higher is more specific */

typedef struct route_seg {
  int kind;
  char *text; /* the literal, or the variable's field path */
} route_seg;

typedef struct route_tmpl {
  const dd_api_route *route;
  size_t n_segs;
  route_seg segs[ROUTE_MAX_SEGS];
  char *verb; /* custom ":verb" suffix or NULL */
} route_tmpl;

struct dd_call_router {
  size_t n;
  route_tmpl *tmpls;
};

/* ---- percent-decoding ---------------------------------------------------------------- */

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int dd_call_pct_decode(char *s, int plus_is_space) {
  char *o = s;
  for (const char *i = s; *i; i++) {
    if (*i == '%') {
      int hi = hex_value(i[1]), lo = hi < 0 ? -1 : hex_value(i[2]);
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return -1;
      *o++ = (char)(hi * 16 + lo);
      i += 2;
    } else {
      *o++ = (plus_is_space && *i == '+') ? ' ' : *i;
    }
  }
  *o = '\0';
  return 0;
}

/* ---- compiling ----------------------------------------------------------------------- */

static char *dup_range(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* One segment s[0..n) of a template: "lit", "{f}", "{f=*}" or "{f=**}". */
static int compile_seg(route_seg *seg, const char *s, size_t n) {
  if (n == 0) return -1;
  if (s[0] != '{') {
    if (memchr(s, '{', n) || memchr(s, '}', n)) return -1;
    seg->kind = SEG_LIT;
    seg->text = dup_range(s, n);
    return seg->text ? 0 : -1;
  }
  if (s[n - 1] != '}' || n < 3) return -1;
  const char *eq = memchr(s, '=', n);
  size_t flen = eq ? (size_t)(eq - s - 1) : n - 2;
  seg->kind = SEG_VAR;
  if (eq) {
    size_t plen = n - 1 - (size_t)(eq + 1 - s);
    if (plen == 2 && memcmp(eq + 1, "**", 2) == 0) seg->kind = SEG_MULTI;
    else if (!(plen == 1 && eq[1] == '*')) return -1;
  }
  if (flen == 0) return -1;
  seg->text = dup_range(s + 1, flen);
  return seg->text ? 0 : -1;
}

static int compile_tmpl(route_tmpl *t, const dd_api_route *route) {
  const char *p = route->path;
  t->route = route;
  if (p[0] != '/') return -1;
  const char *colon = strrchr(p, ':');
  const char *end = p + strlen(p);
  if (colon && !strchr(colon, '}') && !strchr(colon, '/')) {
    if (!(t->verb = dup_range(colon + 1, strlen(colon + 1)))) return -1;
    end = colon;
  }
  for (const char *s = p + 1;;) {
    const char *slash = memchr(s, '/', (size_t)(end - s));
    const char *e = slash ? slash : end;
    if (t->n_segs == ROUTE_MAX_SEGS) return -1;
    if (compile_seg(&t->segs[t->n_segs++], s, (size_t)(e - s)) != 0) return -1;
    if (t->segs[t->n_segs - 1].kind == SEG_MULTI && slash) return -1; /* ** only last */
    if (!slash) break;
    s = slash + 1;
  }
  return 0;
}

void dd_call_router_free(dd_call_router *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    for (size_t j = 0; j < r->tmpls[i].n_segs; j++) free(r->tmpls[i].segs[j].text);
    free(r->tmpls[i].verb);
  }
  free(r->tmpls);
  free(r);
}

int dd_call_router_new(dd_call_router **out, const dd_api_route *routes, size_t n) {
  *out = NULL;
  dd_call_router *r = calloc(1, sizeof *r);
  if (!r || !(r->tmpls = calloc(n ? n : 1, sizeof *r->tmpls))) {
    free(r);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    r->n = i + 1;
    if (compile_tmpl(&r->tmpls[i], &routes[i]) != 0) {
      dd_call_router_free(r);
      return dd_err_set(DD_EINVAL, "bad path template \"%s\"", routes[i].path);
    }
  }
  *out = r;
  return 0;
}

/* ---- matching ------------------------------------------------------------------------ */

typedef struct split_path {
  size_t n;
  char *segs[ROUTE_MAX_SEGS + 1]; /* decoded */
  char *buf;
} split_path;

static void split_free(split_path *sp) { free(sp->buf); }

/* Splits path on '/' (raw), decodes each segment. -1: bad escape; 1: too many. */
static int split(split_path *sp, const char *path) {
  sp->n = 0;
  if (!(sp->buf = strdup(path[0] == '/' ? path + 1 : path))) return -1;
  for (char *s = sp->buf;;) {
    if (sp->n == ROUTE_MAX_SEGS + 1) return 1;
    sp->segs[sp->n++] = s;
    char *slash = strchr(s, '/');
    if (slash) *slash = '\0';
    if (dd_call_pct_decode(s, 0) != 0) return -1;
    if (!slash) return 0;
    s = slash + 1;
  }
}

/* Whether t matches the path; fills rank[] with the kind of each matched segment. The
 * last segment may carry ":verb"; `last` is that segment with the verb removed. */
static int tmpl_matches(const route_tmpl *t, const split_path *sp, int *rank) {
  size_t n = sp->n;
  char last[1024];
  const char *lastseg = sp->segs[n - 1];
  if (t->verb) {
    size_t ll = strlen(lastseg), vl = strlen(t->verb);
    if (ll < vl + 1 || ll - vl - 1 >= sizeof last || lastseg[ll - vl - 1] != ':' ||
        strcmp(lastseg + ll - vl, t->verb) != 0)
      return 0;
    memcpy(last, lastseg, ll - vl - 1);
    last[ll - vl - 1] = '\0';
    lastseg = last;
  }
  size_t i = 0;
  for (; i < t->n_segs; i++) {
    const route_seg *g = &t->segs[i];
    rank[i] = g->kind;
    if (i >= n) return 0;
    const char *s = i == n - 1 ? lastseg : sp->segs[i];
    if (g->kind == SEG_MULTI) return s[0] != '\0' || i < n - 1;
    if (g->kind == SEG_LIT && strcmp(g->text, s) != 0) return 0;
    if (g->kind == SEG_VAR && s[0] == '\0') return 0;
  }
  return i == n;
}

static int rank_cmp(const int *a, const int *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] - b[i];
  return 0;
}

static int fill_vars(const route_tmpl *t, const split_path *sp, dd_call_match *out) {
  for (size_t i = 0; i < t->n_segs; i++) {
    const route_seg *g = &t->segs[i];
    if (g->kind == SEG_LIT) continue;
    if (out->n_vars == DD_CALL_MAX_VARS) return dd_err_set(DD_EINVAL, "too many path variables");
    size_t len = 0, end = g->kind == SEG_MULTI ? sp->n : i + 1;
    for (size_t k = i; k < end; k++) len += strlen(sp->segs[k]) + 1;
    char *v = malloc(len + 1);
    if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
    v[0] = '\0';
    for (size_t k = i; k < end; k++) {
      if (k > i) strcat(v, "/");
      strcat(v, sp->segs[k]);
    }
    if (t->verb && end == sp->n) v[strlen(v) - strlen(t->verb) - 1] = '\0';
    out->vars[out->n_vars].field = g->text;
    out->vars[out->n_vars++].value = v;
  }
  return 0;
}

/* Adds verb to the comma-separated list in allow unless it is there already. */
static void add_allowed(char *allow, size_t cap, const char *verb) {
  size_t vl = strlen(verb);
  for (const char *p = allow; (p = strstr(p, verb)) != NULL; p += vl)
    if ((p == allow || p[-1] == ' ') && (p[vl] == ',' || p[vl] == '\0')) return;
  size_t n = strlen(allow);
  if (n + vl + 3 > cap) return;
  if (n) {
    memcpy(allow + n, ", ", 2);
    n += 2;
  }
  memcpy(allow + n, verb, vl + 1);
}

int dd_call_router_match(const dd_call_router *r, const char *verb, const char *path,
                         dd_call_match *out) {
  memset(out, 0, sizeof *out);
  split_path sp;
  int rc = split(&sp, path);
  if (rc != 0) {
    split_free(&sp);
    return rc < 0 ? dd_err_set(DD_EINVAL, "malformed percent-escape in path")
                  : dd_err_set(DD_ENOTFOUND, "no route for %.200s", path);
  }
  int best_rank[ROUTE_MAX_SEGS], rank[ROUTE_MAX_SEGS], path_matched = 0;
  const route_tmpl *best = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const route_tmpl *t = &r->tmpls[i];
    memset(rank, 0, sizeof rank);
    if (!tmpl_matches(t, &sp, rank)) continue;
    path_matched = 1;
    if (strcmp(t->route->verb, verb) != 0) {
      add_allowed(out->allow, sizeof out->allow, t->route->verb);
      continue;
    }
    if (!best || rank_cmp(rank, best_rank, ROUTE_MAX_SEGS) > 0) {
      best = t;
      memcpy(best_rank, rank, sizeof rank);
    }
  }
  if (!best) {
    split_free(&sp);
    if (path_matched) return dd_err_set(DD_EUNSUPPORTED, "method %s not allowed on %.200s", verb, path);
    return dd_err_set(DD_ENOTFOUND, "no route for %.200s", path);
  }
  out->route = (size_t)(best - r->tmpls);
  rc = fill_vars(best, &sp, out);
  split_free(&sp);
  if (rc != 0) dd_call_match_clear(out);
  return rc;
}

void dd_call_match_clear(dd_call_match *m) {
  for (size_t i = 0; i < m->n_vars; i++) free(m->vars[i].value);
  m->n_vars = 0;
}
