/* sharing_table.c: the table calls of deltad.sharing.v1.DeltaSharingService
 * (GetTableVersion, GetTableMetadata, QueryTable, GetTableChanges). They find the shared
 * table for the caller, open its Delta log, and let the query engine (store/sharing,
 * shq.h) write the protocol lines; each line goes out as one TableLine. File paths become
 * URLs through shr_sign: local tables get deltad's own HMAC-signed, expiring URLs; tables
 * in object storage (sharing_store.c) get presigned S3 or Azure SAS URLs made with their
 * location's credential. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/err.h"
#include "server/service/sharing_int.h"
#include "server/service/svc_util.h"
#include "store/sharing/shq.h"
#include "store/sign/sign.h"

typedef Deltad__Sharing__V1__TableLine shr_line_msg;

static int64_t shr_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- where a shared table lives ----------------------------------------------------- */

static int shr_is_file_url(const char *u) { return strncasecmp(u, "file://", 7) == 0; }

int shr_table_root(cat_view *v, const cat_shared_table *t, char **out_root, char **remote_url) {
  char *url = NULL;
  *out_root = NULL;
  if (remote_url) *remote_url = NULL;
  if (t->url && *t->url) {
    url = strdup(t->url);
  } else {
    cat_location *loc = NULL;
    int rc = cat_view_location_get(v, &loc, t->location);
    if (rc) return rc;
    size_t n = strlen(loc->url) + strlen(t->path) + 2;
    if ((url = malloc(n)))
      snprintf(url, n, "%s%s%s", loc->url,
               (*t->path && loc->url[strlen(loc->url) - 1] != '/') ? "/" : "", t->path);
    protobuf_c_message_free_unpacked(&loc->base, NULL);
  }
  if (!url) return dd_err_set(DD_ENOMEM, "out of memory");
  /* every shared table lies under a registered storage location, away from the data
   * directory (checked when it is added, and again here: locations can be deleted) */
  int crc = cat_view_location_confine(v, NULL, "shared table", url);
  if (crc) {
    free(url);
    return crc;
  }
  if (!shr_is_file_url(url) && url[0] != '/') {
    if (remote_url) {
      *remote_url = url;
      return 0;
    }
    int rc = dd_err_set(DD_EUNSUPPORTED,
                        "table '%s' is at %s: reading Delta logs from remote storage is not "
                        "supported yet", t->name, url);
    free(url);
    return rc;
  }
  sign_location loc;
  int rc = url[0] == '/' ? 0 : sign_parse_location(&loc, url);
  if (!rc && url[0] != '/') {
    free(url);
    url = strdup(loc.path);
    sign_location_free(&loc);
    if (!url) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (rc) {
    free(url);
    return rc;
  }
  *out_root = url;
  return 0;
}

/* ---- signer --------------------------------------------------------------------------- */

typedef struct shr_signer_ctx {
  const sign_local_key *key;
  char base[700];          /* public URL + base path */
  char table_id[SHR_FILE_TABLE_ID_MAX];
  const char *root;        /* table directory, no trailing '/' */
  int64_t expires_ms;
  int ttl_s;
  const shr_remote *remote; /* set for tables in object storage */
  sign_local_batch *batch;  /* local tables' (read-only: the query's threads share it) */
} shr_signer_ctx;

/* A file's URL: deltad's own signed URL for local tables, a presigned S3 / SAS URL for
 * tables in object storage. Paths are relative to the table; an absolute one must lie under
 * the table (sign_location_under). */
static int shr_sign(void *ctx, const char *path, int64_t size, char **out_url,
                    int64_t *out_expires_ms) {
  shr_signer_ctx *c = ctx;
  (void)size;
  char *rel = NULL;
  int rc = 0;
  /* an absolute URI in the log: only files under this table's root are signed */
  if (strstr(path, "://")) {
    sign_location local = {.kind = SIGN_LOC_FILE, .path = (char *)c->root};
    rc = sign_location_under(&rel, c->remote ? &c->remote->where : &local, path);
    if (rc) return rc;
    path = rel;
  }
  if (c->remote) {
    int64_t now_s = (c->expires_ms - (int64_t)c->ttl_s * 1000) / 1000;
    rc = sign_object_url(out_url, &c->remote->where, path, &c->remote->sc, now_s, c->ttl_s);
  } else {
    rc = sign_local_url(out_url, c->key, c->base, c->table_id, path, c->expires_ms);
  }
  *out_expires_ms = c->expires_ms;
  free(rel);
  return rc;
}

/* A data file's URL as JSON: a local table's through the batch signer (a query's many
 * URLs share its expiry and table id), anything else through shr_sign. Either may run on
 * several threads at once for a local table (shq_signer.concurrent). */
static int shr_sign_json(void *ctx, const char *path, int64_t size, dd_buf *out, int64_t *out_expires_ms) {
  shr_signer_ctx *c = ctx;
  if (c->remote || strstr(path, "://")) {
    char *url = NULL;
    int rc = shr_sign(ctx, path, size, &url, out_expires_ms);
    if (!rc) dd_buf_put_jstr(out, url, strlen(url));
    free(url);
    return rc;
  }
  *out_expires_ms = c->expires_ms;
  return sign_local_batch_put_json(c->batch, out, path);
}

/* ---- one opened table ----------------------------------------------------------------- */

typedef struct shr_open {
  cat_share *share;
  const cat_shared_table *t; /* borrowed from share */
  char *root;     /* local tables */
  shr_remote rem; /* tables in object storage */
  bool is_remote;
  dl_table *dl;
  char name[800];
  shq_table_opts opts;
  shr_signer_ctx sctx;
  shq_signer signer;
} shr_open;

static void shr_close(shr_open *o) {
  sign_local_batch_free(o->sctx.batch);
  dl_table_free(o->dl);
  free(o->root);
  shr_remote_free(&o->rem);
  if (o->share) protobuf_c_message_free_unpacked(&o->share->base, NULL);
}

/* Where the shared table o->t (found and visible) lives: its local root, or its object
 * store (*out_store, the caller's) with the location and credential in o->rem. */
static int shr_open_where(cat_view *v, shr_open *o, os_store **out_store) {
  char *remote_url = NULL;
  *out_store = NULL;
  int rc = shr_table_root(v, o->t, &o->root, &remote_url);
  if (!rc && remote_url) {
    rc = shr_remote_open(v, o->t, remote_url, &o->rem, out_store);
    o->is_remote = true;
    free(remote_url);
  }
  return rc;
}

/* Opens the log of the table located by shr_open_where (taking st) and sets up its
 * signer; o->name and o->sctx.table_id are set by the caller. */
static int shr_open_log(dd_call *call, shr_open *o, os_store *st) {
  int rc = o->is_remote ? dl_table_open_store(&o->dl, st, true) : dl_table_open(&o->dl, o->root);
  if (rc && o->is_remote) os_store_free(st);
  if (rc) return rc;
  const dd_app *app = call->app;
  const dd_app_opts *ao = dd_app_options(app);
  int64_t ttl_ms = (int64_t)dd_app_url_expiry_s(app) * 1000;
  shq_table_opts opts = SHQ_TABLE_OPTS_INIT;
  opts.history_shared = o->t->history_shared;
  opts.start_version = o->t->_start_version_case ? o->t->start_version : -1;
  opts.table_id = o->t->id;
  opts.table_name = o->name;
  opts.token_key = dd_app_url_key(app)->k;
  opts.token_key_len = SIGN_LOCAL_KEY_LEN;
  opts.token_ttl_ms = 0;
  opts.cache = dd_app_delta_cache(app);
  o->opts = opts;
  o->sctx.key = dd_app_url_key(app);
  snprintf(o->sctx.base, sizeof o->sctx.base, "%s%s", ao->public_url ? ao->public_url : "",
           dd_app_base_path(app));
  o->sctx.root = o->root;
  o->sctx.expires_ms = shr_now_ms() + ttl_ms;
  o->sctx.ttl_s = dd_app_url_expiry_s(app);
  o->sctx.remote = o->is_remote ? &o->rem : NULL;
  o->signer.sign = shr_sign;
  o->signer.put_json = shr_sign_json;
  o->signer.ctx = &o->sctx;
  if (o->is_remote) return 0;
  o->signer.concurrent = true;
  return sign_local_batch_new(&o->sctx.batch, o->sctx.key, o->sctx.base, o->sctx.table_id, o->sctx.expires_ms);
}

/* The catalog side of opening a table, all through v: the table for the caller, its grant
 * generation, where it lives. */
static int shr_open_find(dd_call *call, cat_view *v, shr_open *o, const char *share,
                         const char *schema, const char *table, os_store **out_store) {
  int rc = shr_table_visible(call, v, share, schema, table, &o->share, &o->t);
  if (rc) return rc;
  snprintf(o->name, sizeof o->name, "%s.%s.%s", share, schema, table);
  /* file URLs are bound to the recipient and its grant (sharing_files.c checks both) */
  char gen[40] = "-";
  const dd_principal *who = call->principal;
  bool rcpt = who->kind == DD_PRINCIPAL_RECIPIENT;
  if (rcpt && (rc = cat_view_grant_generation(v, o->share->id, who->id, gen)))
    return rc == DD_ENOTFOUND ? dd_err_set(DD_ENOTFOUND, "share '%s' not found", share) : rc;
  snprintf(o->sctx.table_id, sizeof o->sctx.table_id, "%s.%s.%s.%s", o->share->id, o->t->id,
           rcpt ? who->id : "-", gen);
  /* the table was found: what goes wrong reading it is the provider's business */
  return svc_recipient_error(call, shr_open_where(v, o, out_store), true);
}

/* Opens the shared table for the caller: one catalog read view for every lookup, closed
 * before the log is read. */
static int shr_open_table(dd_call *call, shr_open *o, const char *share, const char *schema,
                          const char *table) {
  cat_view *v = NULL;
  os_store *st = NULL;
  memset(o, 0, sizeof *o);
  int rc = cat_view_open(svc_store(call), &v);
  if (!rc) rc = shr_open_find(call, v, o, share, schema, table, &st);
  cat_view_close(v);
  if (rc) {
    os_store_free(st);
    return rc;
  }
  return svc_recipient_error(call, shr_open_log(call, o, st), true);
}

/* ---- streaming lines ------------------------------------------------------------------ */

typedef struct shr_stream {
  dd_call *call;
  shq_result *res;
  bool first;
  int64_t files; /* file lines sent (each a signed URL, or a file action) */
} shr_stream;

/* A line that is not protocol, metaData or endStreamAction carries a file. */
static bool shr_is_file_line(const char *json, size_t len) {
  static const char *const meta[] = {"{\"protocol\"", "{\"metaData\"", "{\"endStreamAction\""};
  for (size_t i = 0; i < 3; i++)
    if (len >= strlen(meta[i]) && !memcmp(json, meta[i], strlen(meta[i]))) return false;
  return true;
}

static int shr_caps_echo(char *buf, size_t cap, const shq_result *r) {
  return snprintf(buf, cap, "responseformat=%s%s",
                  r->format == SHQ_FORMAT_DELTA ? "delta" : "parquet",
                  r->end_stream_action ? ";includeendstreamaction=true" : "");
}

static int shr_send_line(void *ctx, const char *json, size_t len) {
  shr_stream *st = ctx;
  shr_line_msg m = DELTAD__SHARING__V1__TABLE_LINE__INIT;
  char caps[128] = "";
  m.line = (char *)json; /* NUL-terminated at len (shq_line_fn) */
  if (st->first) {
    m.version = st->res->version;
    shr_caps_echo(caps, sizeof caps, st->res);
    m.capabilities = caps;
    st->first = false;
  }
  int rc = st->call->send(st->call, &m.base);
  if (!rc && shr_is_file_line(json, len)) st->files++;
  return rc;
}

static int shr_caps(dd_call *call, shq_caps *caps) {
  const char *h = call->header ? call->header(call, "delta-sharing-capabilities") : NULL;
  return shq_caps_parse(caps, h);
}

/* ---- handlers --------------------------------------------------------------------------- */

/* A failure of the query engine as a recipient may see it. The engine never says NOT_FOUND
 * itself: one from below means the table's data is missing, the provider's business. */
static int shr_engine_error(dd_call *call, int rc) {
  return svc_recipient_error(call, rc, rc == DD_ENOTFOUND);
}

int shr_get_table_version(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetTableVersionRequest *req = (const void *)in;
  shr_open o;
  int64_t v = -1;
  int rc = shr_open_table(call, &o, req->share, req->schema, req->table);
  if (!rc)
    rc = shr_engine_error(call, shq_table_version(&v, o.dl, *req->starting_timestamp
                                                                  ? req->starting_timestamp
                                                                  : NULL, &o.opts));
  shr_close(&o);
  if (rc) return svc_recipient_error(call, rc, false);
  Deltad__Sharing__V1__GetTableVersionResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__get_table_version_response__init(resp);
  resp->version = v;
  *out = &resp->base;
  return 0;
}

int shr_get_table_metadata(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetTableMetadataRequest *req = (const void *)in;
  shr_open o;
  shq_caps caps = SHQ_CAPS_INIT;
  shq_result res = {0};
  shr_stream st = {call, &res, true, 0};
  (void)out;
  int rc = shr_caps(call, &caps);
  if (!rc) rc = shr_open_table(call, &o, req->share, req->schema, req->table);
  else memset(&o, 0, sizeof o);
  if (!rc)
    rc = shr_engine_error(call, shq_table_metadata(o.dl, req->_version_case ? req->version : -1,
                                                   *req->timestamp ? req->timestamp : NULL,
                                                   &caps, &o.opts, &res, shr_send_line, &st));
  shr_close(&o);
  return svc_recipient_error(call, rc, false);
}

/* The QueryTable request as the engine's shq_query (strings borrowed from req). */
static void shr_query_of(shq_query *q, const Deltad__Sharing__V1__QueryTableRequest *r) {
  shq_query init = SHQ_QUERY_INIT;
  *q = init;
  q->predicate_hints = r->predicate_hints;
  q->num_predicate_hints = r->n_predicate_hints;
  q->json_predicate_hints = *r->json_predicate_hints ? r->json_predicate_hints : NULL;
  if (r->_limit_hint_case) q->limit_hint = r->limit_hint;
  if (r->_version_case) q->version = r->version;
  q->timestamp = *r->timestamp ? r->timestamp : NULL;
  if (r->_starting_version_case) q->starting_version = r->starting_version;
  if (r->_ending_version_case) q->ending_version = r->ending_version;
  q->include_historical_metadata = r->include_historical_metadata;
  if (r->_max_files_case) q->max_files = r->max_files;
  q->page_token = *r->page_token ? r->page_token : NULL;
  q->include_refresh_token = r->include_refresh_token;
  q->refresh_token = *r->refresh_token ? r->refresh_token : NULL;
}

int shr_query_table(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__QueryTableRequest *req = (const void *)in;
  shr_open o;
  shq_caps caps = SHQ_CAPS_INIT;
  shq_query q;
  shq_result res = {0};
  shr_stream st = {call, &res, true, 0};
  (void)out;
  shr_query_of(&q, req);
  int rc = shq_query_check_hints(&q); /* before the table is looked up, as a bad body is */
  if (!rc) rc = shr_caps(call, &caps);
  if (!rc) rc = shr_open_table(call, &o, req->share, req->schema, req->table);
  else memset(&o, 0, sizeof o);
  if (!rc && o.is_remote) rc = shr_remote_can_sign(&o.rem, o.sctx.ttl_s);
  if (!rc)
    rc = shr_engine_error(call, shq_query_table(o.dl, &q, &caps, &o.opts, &o.signer, shr_now_ms(),
                                                &res, shr_send_line, &st));
  if (!rc) dd_app_audit_access(call, req->share, req->schema, req->table, res.version, st.files);
  shr_close(&o);
  return svc_recipient_error(call, rc, false);
}

int shr_get_table_changes(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetTableChangesRequest *req = (const void *)in;
  shr_open o;
  shq_caps caps = SHQ_CAPS_INIT;
  shq_changes c = SHQ_CHANGES_INIT;
  shq_result res = {0};
  shr_stream st = {call, &res, true, 0};
  (void)out;
  if (req->_starting_version_case) c.starting_version = req->starting_version;
  if (req->_ending_version_case) c.ending_version = req->ending_version;
  c.starting_timestamp = *req->starting_timestamp ? req->starting_timestamp : NULL;
  c.ending_timestamp = *req->ending_timestamp ? req->ending_timestamp : NULL;
  c.include_historical_metadata = req->include_historical_metadata;
  if (req->_max_files_case) c.max_files = req->max_files;
  c.page_token = *req->page_token ? req->page_token : NULL;
  int rc = shr_caps(call, &caps);
  if (!rc) rc = shr_open_table(call, &o, req->share, req->schema, req->table);
  else memset(&o, 0, sizeof o);
  if (!rc && o.is_remote) rc = shr_remote_can_sign(&o.rem, o.sctx.ttl_s);
  if (!rc)
    rc = shr_engine_error(call, shq_table_changes(o.dl, &c, &caps, &o.opts, &o.signer,
                                                  shr_now_ms(), &res, shr_send_line, &st));
  if (!rc) dd_app_audit_access(call, req->share, req->schema, req->table, res.version, st.files);
  shr_close(&o);
  return svc_recipient_error(call, rc, false);
}
