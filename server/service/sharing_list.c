/* sharing_list.c: the list and get calls of deltad.sharing.v1.DeltaSharingService
 * (ListShares, GetShare, ListSchemas, ListTables, ListAllTables): pages of at most
 * maxResults items (0..500, default 500) with a nextPageToken when more remain. Each call
 * reads the catalog through one read view (shr_view_run). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/sharing_int.h"
#include "server/service/svc_util.h"

typedef Deltad__Sharing__V1__Share shr_share_msg;
typedef Deltad__Sharing__V1__Table shr_table_msg;

static void shr_lower(char *dst, const char *src, size_t cap) {
  size_t i = 0;
  for (; src[i] && i + 1 < cap; i++) dst[i] = (char)tolower((unsigned char)src[i]);
  dst[i] = '\0';
}

static int shr_oom(void) { return dd_err_set(DD_ENOMEM, "out of memory"); }

/* ---- ListShares / GetShare ----------------------------------------------------------- */

typedef struct {
  cat_view *view;
  Deltad__Sharing__V1__ListSharesResponse *resp;
  int limit;
  char last[256];
  bool more;
} shr_share_walk;

static int shr_share_new(shr_share_msg **out, const cat_share *sh) {
  shr_share_msg *m = malloc(sizeof *m);
  if (!m) return shr_oom();
  deltad__sharing__v1__share__init(m);
  m->name = strdup(sh->name);
  m->id = strdup(sh->id);
  *out = m;
  if (!m->name || !m->id) return shr_oom();
  return 0;
}

static int shr_share_collect(void *arg, const char *lname, const char *id) {
  shr_share_walk *w = arg;
  if ((int)w->resp->n_items >= w->limit) {
    w->more = true;
    return 1;
  }
  cat_share *sh = NULL;
  int rc = cat_view_share_by_id(w->view, &sh, id);
  if (rc == DD_ENOTFOUND) return 0;
  if (rc) return rc;
  rc = shr_share_new(&w->resp->items[w->resp->n_items], sh);
  if (w->resp->items[w->resp->n_items]) w->resp->n_items++;
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  snprintf(w->last, sizeof w->last, "%s", lname);
  return rc;
}

static int shr_list_shares_run(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                               ProtobufCMessage **out) {
  const Deltad__Sharing__V1__ListSharesRequest *req = (const void *)in;
  char after[256];
  shr_share_walk w = {.view = v};
  int rc = shr_page_limit(&w.limit, req->_max_results_case != 0, req->max_results);
  if (!rc) rc = shr_page_decode('S', "", req->page_token, after, sizeof after);
  if (rc) return rc;
  const char *rid = call->principal->kind == DD_PRINCIPAL_ADMIN ? NULL : call->principal->id;
  /* the answer kept for this state, caller and page, when the store numbers its states */
  shr_list_cache *cache = dd_app_share_list_cache(call->app);
  char who[sizeof call->principal->id + 2];
  snprintf(who, sizeof who, "%s%s", rid ? "R" : "A", rid ? rid : "");
  uint64_t gen = 0;
  bool keyed = cache && cat_view_generation(v, &gen) == 0;
  if (!keyed) dd_err_clear();
  if (keyed && (rc = shr_list_cache_get(cache, gen, who, after, w.limit, &w.resp)) == 0)
    return svc_reply(out, &w.resp->base, 0);
  if (rc != DD_ENOTFOUND && rc) return rc;
  rc = 0;
  w.resp = malloc(sizeof *w.resp);
  if (!w.resp) return shr_oom();
  deltad__sharing__v1__list_shares_response__init(w.resp);
  w.resp->items = calloc((size_t)w.limit + 1, sizeof *w.resp->items);
  if (!w.resp->items) rc = shr_oom();
  if (!rc) rc = cat_view_share_walk(v, rid, after, shr_share_collect, &w);
  if (rc == 1) rc = 0;
  if (!rc && w.more) {
    /* maxResults=0: the next page starts where this one did */
    const char *pos = w.resp->n_items ? w.last : after;
    if (!*pos) pos = "\x01"; /* below every name: nothing is skipped */
    if (!(w.resp->next_page_token = shr_page_token('S', "", pos))) rc = shr_oom();
  }
  if (!rc && keyed) shr_list_cache_put(cache, gen, who, after, w.limit, w.resp);
  return svc_reply(out, &w.resp->base, rc);
}

static int shr_get_share_run(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                             ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetShareRequest *req = (const void *)in;
  cat_share *sh = NULL;
  int rc = shr_share_visible(call, v, req->share, &sh);
  if (rc) return rc;
  Deltad__Sharing__V1__GetShareResponse *resp = malloc(sizeof *resp);
  if (!resp) rc = shr_oom();
  else {
    deltad__sharing__v1__get_share_response__init(resp);
    rc = shr_share_new(&resp->share, sh);
  }
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

/* ---- ListSchemas ---------------------------------------------------------------------- */

static int shr_list_schemas_run(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                                ProtobufCMessage **out) {
  const Deltad__Sharing__V1__ListSchemasRequest *req = (const void *)in;
  cat_share *sh = NULL;
  char after[256], low[256];
  int limit;
  int rc = shr_page_limit(&limit, req->_max_results_case != 0, req->max_results);
  if (!rc) rc = shr_share_visible(call, v, req->share, &sh);
  if (!rc) rc = shr_page_decode('C', sh->id, req->page_token, after, sizeof after);
  if (rc) goto cleanup;
  Deltad__Sharing__V1__ListSchemasResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    rc = shr_oom();
    goto cleanup;
  }
  deltad__sharing__v1__list_schemas_response__init(resp);
  resp->items = calloc(sh->n_schemas + 1, sizeof *resp->items);
  if (!resp->items) rc = shr_oom();
  for (size_t i = 0; !rc && i < sh->n_schemas; i++) {
    shr_lower(low, sh->schemas[i]->name, sizeof low);
    if (*after && strcmp(low, after) <= 0) continue;
    if ((int)resp->n_items >= limit) {
      if (resp->n_items) shr_lower(low, resp->items[resp->n_items - 1]->name, sizeof low);
      const char *pos = resp->n_items ? low : (*after ? after : "\x01");
      if (!(resp->next_page_token = shr_page_token('C', sh->id, pos))) rc = shr_oom();
      break;
    }
    Deltad__Sharing__V1__Schema *m = malloc(sizeof *m);
    if (!m) {
      rc = shr_oom();
      break;
    }
    deltad__sharing__v1__schema__init(m);
    resp->items[resp->n_items++] = m;
    m->name = strdup(sh->schemas[i]->name);
    m->share = strdup(req->share);
    if (!m->name || !m->share) rc = shr_oom();
  }
  rc = svc_reply(out, &resp->base, rc);
cleanup:
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

/* ---- ListTables / ListAllTables --------------------------------------------------------- */

typedef struct {
  Deltad__Sharing__V1__ListTablesResponse *resp;
  const cat_share *sh;
  const char *share_arg; /* the share name as the caller spelled it */
  int limit;
  char kind;
  const char *scope;
  const char *after; /* "schema_lname\x1ftable_lname" (A) or "table_lname" (T) */
  char last[600];
  int rc;
} shr_tables;

static int shr_table_add(shr_tables *t, const cat_share_schema *sc, const cat_shared_table *tb,
                         const char *pos) {
  if ((int)t->resp->n_items >= t->limit) {
    const char *p = t->resp->n_items ? t->last : (*t->after ? t->after : "\x01");
    if (!(t->resp->next_page_token = shr_page_token(t->kind, t->scope, p))) return shr_oom();
    return 1;
  }
  shr_table_msg *m = malloc(sizeof *m);
  shr_table_msg **grown = realloc(t->resp->items, (t->resp->n_items + 1) * sizeof *grown);
  if (grown) t->resp->items = grown;
  if (!m || !grown) {
    free(m);
    return shr_oom();
  }
  deltad__sharing__v1__table__init(m);
  t->resp->items[t->resp->n_items++] = m;
  m->name = strdup(tb->name);
  m->schema = strdup(t->kind == 'T' ? sc->name : sc->name);
  m->share = strdup(t->share_arg);
  m->share_id = strdup(t->sh->id);
  m->id = strdup(tb->id);
  snprintf(t->last, sizeof t->last, "%s", pos);
  if (!m->name || !m->schema || !m->share || !m->share_id || !m->id) return shr_oom();
  return 0;
}

/* Adds the tables of one schema after position `after` (table lnames). */
static int shr_tables_of(shr_tables *t, const cat_share_schema *sc, const char *prefix,
                         const char *after) {
  char low[256], pos[600];
  for (size_t j = 0; j < sc->n_tables; j++) {
    shr_lower(low, sc->tables[j]->name, sizeof low);
    if (after && *after && strcmp(low, after) <= 0) continue;
    snprintf(pos, sizeof pos, "%s%s", prefix, low);
    int rc = shr_table_add(t, sc, sc->tables[j], pos);
    if (rc) return rc;
  }
  return 0;
}

static int shr_tables_reply(ProtobufCMessage **out, shr_tables *t, int rc) {
  if (rc == 1) rc = 0;
  return svc_reply(out, &t->resp->base, rc);
}

static int shr_tables_begin(shr_tables *t, bool has_max, int32_t max) {
  int rc = shr_page_limit(&t->limit, has_max, max);
  if (rc) return rc;
  t->resp = malloc(sizeof *t->resp);
  if (!t->resp) return shr_oom();
  deltad__sharing__v1__list_tables_response__init(t->resp);
  return 0;
}

static int shr_list_tables_run(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                               ProtobufCMessage **out) {
  const Deltad__Sharing__V1__ListTablesRequest *req = (const void *)in;
  cat_share *sh = NULL;
  char after[600], scope[300];
  shr_tables t = {.share_arg = req->share, .kind = 'T', .after = after, .scope = scope};
  int rc = shr_share_visible(call, v, req->share, &sh);
  const cat_share_schema *sc = NULL;
  for (size_t i = 0; !rc && i < sh->n_schemas && !sc; i++)
    if (strcasecmp(sh->schemas[i]->name, req->schema) == 0) sc = sh->schemas[i];
  if (!rc && !sc) rc = dd_err_set(DD_ENOTFOUND, "schema '%s' not found", req->schema);
  if (!rc) {
    char low[256];
    shr_lower(low, sc->name, sizeof low);
    snprintf(scope, sizeof scope, "%s/%s", sh->id, low);
    t.sh = sh;
    rc = shr_page_decode('T', scope, req->page_token, after, sizeof after);
  }
  if (!rc) rc = shr_tables_begin(&t, req->_max_results_case != 0, req->max_results);
  if (!rc) rc = shr_tables_reply(out, &t, shr_tables_of(&t, sc, "", after));
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

static int shr_list_all_tables_run(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                                   ProtobufCMessage **out) {
  const Deltad__Sharing__V1__ListAllTablesRequest *req = (const void *)in;
  cat_share *sh = NULL;
  char after[600];
  shr_tables t = {.share_arg = req->share, .kind = 'A', .after = after};
  int rc = shr_share_visible(call, v, req->share, &sh);
  if (!rc) {
    t.sh = sh;
    t.scope = sh->id;
    rc = shr_page_decode('A', sh->id, req->page_token, after, sizeof after);
  }
  if (!rc) rc = shr_tables_begin(&t, req->_max_results_case != 0, req->max_results);
  if (rc) goto cleanup;
  /* position: "<schema lname>\x1e<table lname>" */
  char *sep = strchr(after, '\x1e');
  int step = 0;
  for (size_t i = 0; !step && i < sh->n_schemas; i++) {
    char low[256], prefix[300];
    shr_lower(low, sh->schemas[i]->name, sizeof low);
    size_t sl = sep ? (size_t)(sep - after) : strlen(after);
    int c = *after ? strncmp(low, after, sl) : 1;
    if (c == 0 && strlen(low) != sl) c = strlen(low) < sl ? -1 : 1;
    if (c < 0) continue;
    snprintf(prefix, sizeof prefix, "%s\x1e", low);
    step = shr_tables_of(&t, sh->schemas[i], prefix, c == 0 && sep ? sep + 1 : NULL);
  }
  rc = shr_tables_reply(out, &t, step);
cleanup:
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

/* ---- what recipients see ---------------------------------------------------------------- */

typedef int (*shr_view_fn)(dd_call *call, cat_view *v, const ProtobufCMessage *in,
                           ProtobufCMessage **out);

/* Runs fn with one read view of the catalog for the whole call (or not at all when the
 * transport answers from its memo). */
static int shr_view_run(shr_view_fn fn, dd_call *call, const ProtobufCMessage *in,
                        ProtobufCMessage **out) {
  cat_view *v = NULL;
  int rc = cat_view_open(svc_store(call), &v);
  if (!rc && svc_memo_hit(call, v, in)) {
    cat_view_close(v);
    return 0;
  }
  if (!rc) rc = fn(call, v, in, out);
  cat_view_close(v);
  return rc;
}

/* Every handler answers through svc_recipient_error: a recipient never sees the server's
 * own failures (storage, corrupt data), only a request id the log holds the detail under. */
#define SHR_RECIPIENT_SAFE(name)                                                           \
  static int name(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {    \
    return svc_recipient_error(call, shr_view_run(name##_run, call, in, out), false);     \
  }
SHR_RECIPIENT_SAFE(shr_list_shares)
SHR_RECIPIENT_SAFE(shr_get_share)
SHR_RECIPIENT_SAFE(shr_list_schemas)
SHR_RECIPIENT_SAFE(shr_list_tables)
SHR_RECIPIENT_SAFE(shr_list_all_tables)

/* ---- method table ------------------------------------------------------------------------ */

#define SHR_M(name, fn, in, o, flags) \
  {"/deltad.sharing.v1.DeltaSharingService/" name, &deltad__sharing__v1__##in##__descriptor, \
   &deltad__sharing__v1__##o##__descriptor, fn, (flags) | DD_METHOD_RECIPIENT}

extern int shr_get_table_version(dd_call *, const ProtobufCMessage *, ProtobufCMessage **);
extern int shr_get_table_metadata(dd_call *, const ProtobufCMessage *, ProtobufCMessage **);
extern int shr_query_table(dd_call *, const ProtobufCMessage *, ProtobufCMessage **);
extern int shr_get_table_changes(dd_call *, const ProtobufCMessage *, ProtobufCMessage **);

const dd_method dd_sharing_methods[] = {
    SHR_M("ListShares", shr_list_shares, list_shares_request,
          list_shares_response, DD_METHOD_QUICK),
    SHR_M("GetShare", shr_get_share, get_share_request, get_share_response, DD_METHOD_QUICK),
    SHR_M("ListSchemas", shr_list_schemas, list_schemas_request,
          list_schemas_response, DD_METHOD_QUICK),
    SHR_M("ListTables", shr_list_tables, list_tables_request,
          list_tables_response, DD_METHOD_QUICK),
    SHR_M("ListAllTables", shr_list_all_tables, list_all_tables_request,
          list_tables_response, DD_METHOD_QUICK),
    SHR_M("GetTableVersion", shr_get_table_version, get_table_version_request,
          get_table_version_response, 0),
    SHR_M("GetTableMetadata", shr_get_table_metadata, get_table_metadata_request, table_line,
          DD_METHOD_STREAMING),
    SHR_M("QueryTable", shr_query_table, query_table_request, table_line, DD_METHOD_STREAMING),
    SHR_M("GetTableChanges", shr_get_table_changes, get_table_changes_request, table_line,
          DD_METHOD_STREAMING),
};
const size_t dd_sharing_methods_len = sizeof dd_sharing_methods / sizeof dd_sharing_methods[0];
