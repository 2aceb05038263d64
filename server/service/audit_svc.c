/* audit_svc.c: deltad.admin.v1.AdminService (ListAuditEvents, Backup) and what feeds the
 * audit log: the registry's observer records administrator changes, and the sharing
 * handlers call dd_app_audit_access for every recipient read.
 *
 * An admin_change names its object with the request's name and id fields only (a fixed
 * list below): never a secret, token or credential body, whatever the method carries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/log.h"
#include "deltad/admin/v1/admin.pb-c.h"
#include "server/service/app.h"
#include "store/catalog/cat_store.h"

typedef Deltad__Admin__V1__AuditEvent svc_event;

static void audit__record(const dd_call *call, svc_event *ev) {
  ev->principal = (char *)call->principal->name;
  ev->request_id = (char *)(call->request_id ? call->request_id : "");
  int64_t keep = (int64_t)dd_app_options(call->app)->audit_retention_days * 86400000;
  if (cat_audit_append(dd_app_store(call->app), ev, keep) != 0)
    dd_log(DD_LOG_ERROR, "request %s: audit event %s not recorded: %s", ev->request_id, ev->action,
           dd_err_msg());
}

/* "pkg.Service" and "Method" of a gRPC path, into svc / name (cap bytes each). */
static void audit__split(const char *path, char *svc, char *name, size_t cap) {
  const char *slash = strrchr(path, '/');
  size_t n = slash && slash > path ? (size_t)(slash - path - 1) : 0;
  snprintf(svc, cap, "%.*s", (int)n, path + 1);
  snprintf(name, cap, "%s", slash ? slash + 1 : path);
}

/* Methods whose name starts so change something (reads are Get, List, Describe, ...). */
static bool audit__changes(const char *name) {
  static const char *const verbs[] = {"Create", "Update", "Delete", "Drop",     "Rename",  "Add",
                                      "Remove", "Grant",  "Revoke", "Rotate",   "Register", "Deregister",
                                      "Alter",  "Set",    "Vacuum", "Restore",  "Optimize", "Clone",
                                      "Convert", "Upgrade", "Generate", "Backup", "Merge",  "Insert", "Undrop"};
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) /* asked twice by every call */
    if (verbs[i][0] == name[0] && !strncmp(name, verbs[i], strlen(verbs[i]))) return true;
  return false;
}

/* The string field `field` of msg, or NULL (absent, empty or not a string). */
static const char *audit__str(const ProtobufCMessage *msg, const char *field) {
  const ProtobufCFieldDescriptor *f = msg ? protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, field) : NULL;
  if (!f || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED) return NULL;
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    const uint32_t *qc = (const uint32_t *)((const char *)msg + f->quantifier_offset);
    if (*qc != f->id) return NULL;
  }
  const char *s = *(const char *const *)((const char *)msg + f->offset);
  return s && *s ? s : NULL;
}

/* "name=sales share=s1 ..." from the request's naming fields. */
static void audit__object(dd_buf *b, const ProtobufCMessage *req) {
  static const char *const fields[] = {"full_name", "name", "catalog_name", "schema_name", "share",
                                       "schema", "table", "table_id", "recipient", "id", "location",
                                       "path"};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const char *v = audit__str(req, fields[i]);
    if (v) dd_buf_printf(b, "%s%s=%s", b->len ? " " : "", fields[i], v);
  }
}

/* The admin_change event of a call, without what only its reply can say. *obj holds the
 * object text (the caller frees it). false when the call records nothing. */
static bool audit__change_event(const dd_call *call, const dd_method *m, const ProtobufCMessage *req,
                                svc_event *ev, dd_buf *obj, char svc[256], char name[256]) {
  if (call->principal->kind != DD_PRINCIPAL_ADMIN) return false;
  const char *slash = strrchr(m->path, '/'); /* every call asks: reads copy nothing */
  if (!audit__changes(slash ? slash + 1 : m->path)) return false;
  audit__split(m->path, svc, name, 256);
  *ev = (svc_event)DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  audit__object(obj, req);
  const char *new_name = audit__str(req, "new_name");
  ev->kind = "admin_change";
  ev->action = name;
  ev->service = svc;
  ev->object = obj->p && !obj->oom ? obj->p : "";
  ev->name_after = (char *)(new_name ? new_name : "");
  ev->principal = (char *)call->principal->name;
  ev->request_id = (char *)(call->request_id ? call->request_id : "");
  return true;
}

void dd_app_audit_before(const dd_call *call, const dd_method *m, const ProtobufCMessage *req) {
  svc_event ev;
  dd_buf obj = {0};
  char svc[256], name[256];
  if (audit__change_event(call, m, req, &ev, &obj, svc, name)) {
    int64_t keep = (int64_t)dd_app_options(call->app)->audit_retention_days * 86400000;
    if (cat_audit_arm(dd_app_store(call->app), &ev, keep) != 0) /* then recorded after the call */
      dd_log(DD_LOG_WARN, "request %s: audit event %s not armed: %s", ev.request_id, ev.action,
             dd_err_msg());
  }
  dd_buf_free(&obj);
}

void dd_app_audit_observe(const dd_call *call, const dd_method *m, const ProtobufCMessage *req,
                          const ProtobufCMessage *out, int rc) {
  int written = cat_audit_disarm(); /* written with the change, in its transaction */
  if (rc || written) return;
  /* a change outside the catalog (maintenance of a table, a backup): recorded on its own */
  svc_event ev;
  dd_buf obj = {0};
  char svc[256], name[256];
  if (audit__change_event(call, m, req, &ev, &obj, svc, name)) {
    const char *id_after = audit__str(out, "id");
    ev.id_after = (char *)(id_after ? id_after : "");
    audit__record(call, &ev);
  }
  dd_buf_free(&obj);
}

void dd_app_audit_access(const dd_call *call, const char *share, const char *schema,
                         const char *table, int64_t version, int64_t files) {
  svc_event ev = DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  char svc[256], name[256];
  audit__split(call->method_path ? call->method_path : "/?/?", svc, name, sizeof svc);
  ev.kind = "data_access";
  ev.action = name;
  ev.service = svc;
  ev.share = (char *)share;
  ev.schema = (char *)schema;
  ev.table = (char *)table;
  ev.version = version;
  ev.files = files;
  audit__record(call, &ev);
}

void dd_app_audit_forward(const dd_call *call, const char *op, const char *location, const char *spark) {
  svc_event ev = DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  char svc[256], name[256];
  dd_buf obj = {0};
  audit__split(call->method_path ? call->method_path : "/?/?", svc, name, sizeof svc);
  dd_buf_printf(&obj, "op=%s location=%s spark=%s", op, location, spark);
  ev.kind = "admin_change";
  ev.action = "SparkForward";
  ev.service = svc;
  ev.object = obj.p && !obj.oom ? obj.p : "";
  audit__record(call, &ev);
  dd_buf_free(&obj);
}

/* ---- AdminService ---- */

static int audit__list(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  Deltad__Admin__V1__ListAuditEventsResponse *r = NULL;
  int rc = cat_audit_list(dd_app_store(call->app), (const void *)in, &r);
  if (!rc) *out = &r->base;
  return rc;
}

/* Copies the data directory's URL signing key beside the catalog's files. */
static int audit__copy_key(const char *data_dir, const char *dir) {
  char src[4096], dst[4096];
  snprintf(src, sizeof src, "%s/url_signing.key", data_dir);
  snprintf(dst, sizeof dst, "%s/url_signing.key", dir);
  FILE *in = fopen(src, "rb");
  if (!in) return 1; /* none yet: nothing to copy */
  unsigned char buf[256];
  size_t n = fread(buf, 1, sizeof buf, in);
  fclose(in);
  FILE *o = fopen(dst, "wbx");
  if (o) chmod(dst, 0600);
  int rc = o && fwrite(buf, 1, n, o) == n ? 0 : dd_err_set(DD_EIO, "backup: write %s", dst);
  if (o && fclose(o) != 0 && !rc) rc = dd_err_set(DD_EIO, "backup: write %s", dst);
  return rc;
}

static int audit__backup(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Admin__V1__BackupRequest *req = (const void *)in;
  if (!req->dir[0] || req->dir[0] != '/') return dd_err_set(DD_EINVAL, "dir: an absolute path is needed");
  char **files = NULL;
  size_t n = 0;
  uint64_t bytes = 0;
  int rc = cat_store_backup(dd_app_store(call->app), req->dir, &files, &n, &bytes);
  int krc = rc ? 0 : audit__copy_key(dd_app_options(call->app)->data_dir, req->dir);
  if (krc < 0) rc = krc;
  Deltad__Admin__V1__BackupResponse *r = rc ? NULL : malloc(sizeof *r);
  if (!rc && !r) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) {
    deltad__admin__v1__backup_response__init(r);
    r->dir = strdup(req->dir);
    r->bytes = (int64_t)bytes;
    char **grown = realloc(files, (n + 1) * sizeof *files);
    if (grown) files = grown;
    if (grown && krc == 0) files[n++] = strdup("url_signing.key");
    r->files = files;
    r->n_files = n;
    files = NULL;
    *out = &r->base;
  }
  for (size_t i = 0; files && i < n; i++) free(files[i]);
  free(files);
  return rc;
}

#define ADM_M(name, fn, in, outd) \
  {"/deltad.admin.v1.AdminService/" name, &deltad__admin__v1__##in##__descriptor, \
   &deltad__admin__v1__##outd##__descriptor, fn, 0}

const dd_method dd_admin_methods[] = {
    ADM_M("ListAuditEvents", audit__list, list_audit_events_request, list_audit_events_response),
    ADM_M("Backup", audit__backup, backup_request, backup_response),
};
const size_t dd_admin_methods_len = sizeof dd_admin_methods / sizeof dd_admin_methods[0];
