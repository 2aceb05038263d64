/* call_registry.c: the method registry (gRPC paths in an open-addressing hash, REST
 * routes through the router), authentication with admission, and method authorization. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/call/call.h"
#include "server/call/call_obs.h"

struct dd_call_registry {
  const dd_method *methods;
  size_t n;
  void *app;
  dd_auth_fn auth;
  const dd_method **slots; /* hash of paths, n_slots a power of two, NULL: empty */
  size_t n_slots;
  dd_api_route *routes;       /* served routes (those whose method is in the table) */
  const dd_method **route_of; /* route_of[i] serves routes[i] */
  size_t n_routes;
  dd_call_router *router;
  dd_call__obs *obs; /* metrics of the calls run through this registry */
  dd_call_observe_fn observer;
  dd_call_pre_observe_fn pre_observer;
  const dd_call_view_ops *view_ops; /* NULL: calls get no read view */
};

void dd_call_registry_set_view_ops(dd_call_registry *r, const dd_call_view_ops *ops) {
  r->view_ops = ops;
}

const dd_call_view_ops *dd_call_registry_view_ops(const dd_call_registry *r) {
  return r->view_ops;
}

dd_call__obs *dd_call__registry_obs(const dd_call_registry *r) { return r->obs; }
dd_call_observe_fn dd_call__registry_observer(const dd_call_registry *r) { return r->observer; }
void dd_call_registry_set_observer(dd_call_registry *r, dd_call_observe_fn fn) { r->observer = fn; }
dd_call_pre_observe_fn dd_call__registry_pre_observer(const dd_call_registry *r) { return r->pre_observer; }
void dd_call_registry_set_pre_observer(dd_call_registry *r, dd_call_pre_observe_fn fn) {
  r->pre_observer = fn;
}

size_t dd_call__method_index(const dd_call_registry *r, const dd_method *m) {
  if (m >= r->methods && m < r->methods + r->n) return (size_t)(m - r->methods);
  const dd_method *found = dd_call_find(r, m->path, strlen(m->path));
  return found ? (size_t)(found - r->methods) : SIZE_MAX;
}

static uint64_t reg__hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int reg__index(dd_call_registry *r) {
  for (r->n_slots = 16; r->n_slots < 2 * r->n; r->n_slots *= 2) {}
  if (!(r->slots = calloc(r->n_slots, sizeof *r->slots))) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < r->n; i++) {
    const char *p = r->methods[i].path;
    size_t len = strlen(p), at = reg__hash(p, len) & (r->n_slots - 1);
    while (r->slots[at]) {
      if (strcmp(r->slots[at]->path, p) == 0) return dd_err_set(DD_EINVAL, "method %s is registered twice", p);
      at = (at + 1) & (r->n_slots - 1);
    }
    r->slots[at] = &r->methods[i];
  }
  return 0;
}

static int reg__routes(dd_call_registry *r) {
  size_t cap = dd_api_routes_len ? dd_api_routes_len : 1;
  r->routes = calloc(cap, sizeof *r->routes);
  r->route_of = calloc(cap, sizeof *r->route_of);
  if (!r->routes || !r->route_of) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < dd_api_routes_len; i++) {
    const dd_method *m = dd_call_find(r, dd_api_routes[i].method, strlen(dd_api_routes[i].method));
    if (!m) continue;
    r->routes[r->n_routes] = dd_api_routes[i];
    r->route_of[r->n_routes++] = m;
  }
  return dd_call_router_new(&r->router, r->routes, r->n_routes);
}

int dd_call_registry_new(dd_call_registry **out, const dd_method *methods, size_t n, void *app,
                         dd_auth_fn auth) {
  *out = NULL;
  dd_call_registry *r = calloc(1, sizeof *r);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  *r = (dd_call_registry){.methods = methods, .n = n, .app = app, .auth = auth};
  int rc = reg__index(r);
  if (!rc) rc = reg__routes(r);
  if (!rc) rc = dd_call__obs_new(&r->obs, n);
  if (rc) {
    dd_call_registry_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

void dd_call_registry_free(dd_call_registry *r) {
  if (!r) return;
  dd_call_router_free(r->router);
  free(r->routes);
  free(r->route_of);
  free(r->slots);
  dd_call__obs_free(r->obs);
  free(r);
}

void *dd_call_registry_app(const dd_call_registry *r) { return r->app; }
size_t dd_call_registry_count(const dd_call_registry *r) { return r->n; }
const dd_method *dd_call_registry_method(const dd_call_registry *r, size_t i) {
  return i < r->n ? &r->methods[i] : NULL;
}

const dd_method *dd_call_find(const dd_call_registry *r, const char *path, size_t len) {
  for (size_t at = reg__hash(path, len) & (r->n_slots - 1); r->slots[at]; at = (at + 1) & (r->n_slots - 1)) {
    const char *p = r->slots[at]->path;
    if (strncmp(p, path, len) == 0 && p[len] == '\0') return r->slots[at];
  }
  return NULL;
}

int dd_call_route_match(const dd_call_registry *r, const char *verb, const char *path,
                        dd_call_route *out) {
  memset(out, 0, sizeof *out);
  int rc = dd_call_router_match(r->router, verb, path, &out->match);
  if (rc) return rc;
  out->method = r->route_of[out->match.route];
  out->route = &r->routes[out->match.route];
  return 0;
}

void dd_call_route_clear(dd_call_route *rt) { dd_call_match_clear(&rt->match); }

/* ---- authentication ---- */

int dd_method_authorize(const dd_method *m, const dd_principal *p) {
  if (m->flags & DD_METHOD_PUBLIC) return 0;
  if ((m->flags & DD_METHOD_RECIPIENT) && p->kind == DD_PRINCIPAL_RECIPIENT) return 0;
  switch (p->kind) {
  case DD_PRINCIPAL_ADMIN: return 0;
  case DD_PRINCIPAL_NONE: return dd_err_set(DD_EUNAUTH, "authentication required");
  default: return dd_err_set(DD_EPERM, "permission denied: '%s' is not an administrator", p->name);
  }
}

const char *dd_call_bearer(const char *v, size_t *len) {
  if (!v || strncasecmp(v, "Bearer ", 7) != 0) return NULL;
  v += 7;
  while (*v == ' ') v++;
  size_t n = strlen(v);
  while (n && v[n - 1] == ' ') n--;
  *len = n;
  return n ? v : NULL;
}

/* x-api-key: the whole value, spaces trimmed. */
static const char *reg__api_key(const char *v, size_t *len) {
  if (!v) return NULL;
  while (*v == ' ') v++;
  size_t n = strlen(v);
  while (n && v[n - 1] == ' ') n--;
  *len = n;
  return n ? v : NULL;
}

/* The token of the call, or DD_EUNAUTH with the transport's wording. */
static int reg__token(dd_call_auth_kind kind, const char *authorization, const char *api_key,
                      const char **tok, size_t *len) {
  *tok = dd_call_bearer(authorization, len);
  if (kind == DD_CALL_AUTH_GRPC) {
    if (!authorization) return dd_err_set(DD_EUNAUTH, "missing 'authorization' metadata (expected 'Bearer <token>')");
    if (!*tok) return dd_err_set(DD_EUNAUTH, "'authorization' metadata is not 'Bearer <token>'");
    return 0;
  }
  if (!*tok) *tok = reg__api_key(api_key, len);
  if (!*tok) return dd_err_set(DD_EUNAUTH, "missing bearer token (Authorization: Bearer or x-api-key)");
  return 0;
}

/* The token check, in a read view kept for the call when view is not NULL (*view: the
 * view's one reference, or NULL; set on failure too). */
static int reg__check_token(const dd_call_registry *r, dd_call_auth_kind kind,
                            const char *authorization, const char *api_key, dd_principal *who,
                            void **view) {
  memset(who, 0, sizeof *who);
  who->kind = DD_PRINCIPAL_NONE;
  const char *tok = NULL;
  size_t len = 0;
  int rc = reg__token(kind, authorization, api_key, &tok, &len);
  if (rc) return rc;
  if (!r->auth) return dd_err_set(DD_EUNAUTH, "this server accepts no tokens");
  dd_err_clear();
  if (view && r->view_ops && (rc = r->view_ops->open(r->app, view)) != 0) return rc;
  rc = r->auth(r->app, tok, len, who);
  if (view && *view) r->view_ops->bind(NULL);
  if (!rc) {
    if (view) who->view = *view;
    return 0;
  }
  memset(who, 0, sizeof *who);
  /* the store could not be asked (its database is down): UNAVAILABLE, not a bad token */
  if (rc == DD_EIO) return rc;
  /* gRPC keeps the reason auth gave; REST says only that the token is invalid */
  if (kind == DD_CALL_AUTH_REST) return dd_err_set(DD_EUNAUTH, "invalid token");
  return *dd_err_msg() ? rc : dd_err_set(rc, "invalid bearer token");
}

int dd_call_authenticate_token(const dd_call_registry *r, dd_call_auth_kind kind,
                               const char *authorization, const char *api_key, dd_principal *who) {
  return reg__check_token(r, kind, authorization, api_key, who, NULL);
}

/* The token check with the call's read view given to ticket (also when the check fails). */
static int reg__check_keep(const dd_call_registry *r, dd_call_auth_kind kind,
                           const char *authorization, const char *api_key, dd_principal *who,
                           rg_ticket *ticket) {
  void *view = NULL;
  int rc = reg__check_token(r, kind, authorization, api_key, who, &view);
  if (ticket->view) ticket->view_ops->unref(ticket->view); /* authenticated twice */
  ticket->view = view;
  ticket->view_ops = r->view_ops;
  return rc;
}

int dd_call_authenticate_admit(const dd_call_registry *r, dd_call_auth_kind kind,
                               const char *authorization, const char *api_key, dd_principal *who,
                               rg_ticket *ticket) {
  int rc = reg__check_keep(r, kind, authorization, api_key, who, ticket);
  return rc ? rc : rg_admit(ticket, who);
}

int dd_call_authenticate(const dd_call_registry *r, const dd_method *m, dd_call_auth_kind kind,
                         const char *authorization, const char *api_key, dd_principal *who,
                         rg_ticket *ticket, const char *request_id) {
  if (m->flags & DD_METHOD_PUBLIC) {
    memset(who, 0, sizeof *who);
    who->kind = DD_PRINCIPAL_NONE;
    return 0;
  }
  int rc = reg__check_keep(r, kind, authorization, api_key, who, ticket);
  if (!rc) rc = dd_method_authorize(m, who);
  if (!rc) rc = rg_admit(ticket, who);
  if (rc) { /* refused before a handler ran: counted and logged here */
    dd_call__span sp;
    dd_call__obs_begin(r, &sp, request_id);
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", dd_err_msg());
    dd_call__obs_end(r, m, who, rc, &sp, 0, 0);
    dd_err_set(rc, "%s", keep);
  }
  return rc;
}
