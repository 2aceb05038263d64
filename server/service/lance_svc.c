/* lance_svc.c: deltad.lance.v1.NamespaceService (see lance_svc.h): namespace and table
 * operations for administrators. Each handler checks the caller, parses the Lance mode
 * strings, calls the catalog store (one transaction) and builds the Lance response. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "deltad/lance/v1/lance.pb-c.h"
#include "server/service/lance_svc.h"
#include "server/service/svc_util.h"

#define LS_REQ(type) const Deltad__Lance__V1__##type *req = (const void *)msg
#define LS_PATH(req) (const char *const *)(req)->id, (req)->n_id
#define LS_INIT(type, up, var) Deltad__Lance__V1__##type var = DELTAD__LANCE__V1__##up##__INIT

/* Starts a handler: records what a failure is about by default (a namespace or a table:
 * the call's error detail, which picks Lance's error code) and checks the caller. */
static int ls_begin(dd_call *call, int detail) {
  int rc = svc_require_admin(call);
  dd_call_set_detail(call, rc ? DD_CALL_DETAIL_NONE : detail);
  return rc;
}

/* ---- modes ---------------------------------------------------------------------------------- */

int lance_svc_parse_mode(int *out, const char *field, const char *value, const char *const *names,
                         size_t n, int dflt) {
  char norm[32];
  size_t k = 0;
  *out = dflt;
  if (!value || !*value) return 0;
  for (const char *p = value; *p && k + 1 < sizeof norm; p++)
    if (*p != '_') norm[k++] = (char)tolower((unsigned char)*p);
  norm[k] = '\0';
  for (size_t i = 0; i < n && strlen(value) < sizeof norm; i++)
    if (strcmp(norm, names[i]) == 0) return *out = (int)i, 0;
  return dd_err_set(DD_EINVAL, "%s: unknown value '%.64s'", field, value);
}

/* lance_svc_parse_mode for a handler: a bad value is about the request itself. */
static int ls_mode(dd_call *call, int *out, const char *field, const char *value,
                   const char *const *names, size_t n, int dflt) {
  int rc = lance_svc_parse_mode(out, field, value, names, n, dflt);
  if (rc) dd_call_set_detail(call, DD_CALL_DETAIL_NONE);
  return rc;
}

static const char *const ls_create_modes[] = {"create", "existok", "overwrite"};
static const char *const ls_drop_modes[] = {"fail", "skip"};
static const char *const ls_behaviors[] = {"restrict", "cascade"};
static const char *const ls_register_modes[] = {"create", "overwrite"};

/* ---- building responses ---------------------------------------------------------------------- */

/* The layout every generated map entry has. */
typedef struct ls_kv {
  ProtobufCMessage base;
  char *key;
  char *value;
} ls_kv;

/* Entries of desc viewing src's keys and values (borrowed): one malloc'ed block. */
static int ls_kv_view(void ***out, const ProtobufCMessageDescriptor *desc, size_t n, void *const *src) {
  *out = NULL;
  if (n == 0) return 0;
  void **ptrs = malloc(n * (sizeof(void *) + sizeof(ls_kv)));
  if (!ptrs) return dd_err_set(DD_ENOMEM, "out of memory");
  ls_kv *kv = (ls_kv *)(ptrs + n);
  for (size_t i = 0; i < n; i++) {
    const ls_kv *s = src[i];
    kv[i] = (ls_kv){PROTOBUF_C_MESSAGE_INIT(desc), s->key, s->value};
    ptrs[i] = &kv[i];
  }
  *out = ptrs;
  return 0;
}

/* A heap copy of a view (a message of borrowed pointers), for the transport to free. */
static int ls_copy(ProtobufCMessage **out, const ProtobufCMessage *view) {
  size_t len = protobuf_c_message_get_packed_size(view);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(view, buf);
  *out = protobuf_c_message_unpack(view->descriptor, NULL, len, buf);
  free(buf);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* Sets the map field "properties" of view to a view of (n, src) and copies view to *out. */
static int ls_reply_props(ProtobufCMessage **out, ProtobufCMessage *view, size_t n, void *const *src) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(view->descriptor, "properties");
  void **kv = NULL;
  int rc = ls_kv_view(&kv, f->descriptor, n, src);
  if (rc) return rc;
  *(size_t *)((char *)view + f->quantifier_offset) = n;
  *(void ***)((char *)view + f->offset) = kv;
  rc = ls_copy(out, view);
  free(kv);
  return rc;
}

static int ls_reply_empty(ProtobufCMessage **out, const ProtobufCMessageDescriptor *desc) {
  ProtobufCMessage *m = malloc(desc->sizeof_message);
  if (!m) return dd_err_set(DD_ENOMEM, "out of memory");
  desc->message_init(m);
  *out = m;
  return 0;
}

/* ---- namespaces ------------------------------------------------------------------------------ */

static int ls_create_namespace(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(CreateNamespaceRequest);
  cat_namespace *ns = NULL;
  int mode;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  if (!rc) rc = ls_mode(call, &mode, "mode", req->mode, ls_create_modes, 3, CAT_NS_CREATE);
  if (!rc) rc = cat_ns_create(svc_store(call), &ns, svc_actor(call), LS_PATH(req), mode,
                              req->n_properties, (void *const *)req->properties);
  if (!rc) {
    LS_INIT(CreateNamespaceResponse, CREATE_NAMESPACE_RESPONSE, r);
    rc = ls_reply_props(out, &r.base, ns->n_properties, (void *const *)ns->properties);
  }
  if (ns) protobuf_c_message_free_unpacked(&ns->base, NULL);
  return rc;
}

static int ls_list_namespaces(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(ListNamespacesRequest);
  Deltad__Lance__V1__ListNamespacesResponse *r = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  if (!rc) rc = cat_ns_list(svc_store(call), &r, LS_PATH(req), req->limit, req->page_token);
  return svc_reply(out, r ? &r->base : NULL, rc);
}

static int ls_describe_namespace(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(DescribeNamespaceRequest);
  cat_namespace *ns = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  if (!rc) rc = cat_ns_get(svc_store(call), &ns, LS_PATH(req));
  if (!rc) {
    LS_INIT(DescribeNamespaceResponse, DESCRIBE_NAMESPACE_RESPONSE, r);
    rc = ls_reply_props(out, &r.base, ns->n_properties, (void *const *)ns->properties);
  }
  if (ns) protobuf_c_message_free_unpacked(&ns->base, NULL);
  return rc;
}

static int ls_drop_namespace(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(DropNamespaceRequest);
  cat_namespace *ns = NULL;
  int skip = 0, cascade = 0;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  if (!rc) rc = ls_mode(call, &skip, "mode", req->mode, ls_drop_modes, 2, 0);
  if (!rc) rc = ls_mode(call, &cascade, "behavior", req->behavior, ls_behaviors, 2, 0);
  if (!rc) rc = cat_ns_drop(svc_store(call), &ns, LS_PATH(req), cascade);
  if (rc == DD_ENOTFOUND && skip) { /* Skip: a missing namespace is a success */
    dd_err_clear();
    return ls_reply_empty(out, &deltad__lance__v1__drop_namespace_response__descriptor);
  }
  if (!rc) {
    LS_INIT(DropNamespaceResponse, DROP_NAMESPACE_RESPONSE, r);
    rc = ls_reply_props(out, &r.base, ns->n_properties, (void *const *)ns->properties);
  }
  if (ns) protobuf_c_message_free_unpacked(&ns->base, NULL);
  return rc;
}

static int ls_namespace_exists(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(NamespaceExistsRequest);
  cat_namespace *ns = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  if (!rc) rc = cat_ns_get(svc_store(call), &ns, LS_PATH(req));
  if (ns) protobuf_c_message_free_unpacked(&ns->base, NULL);
  if (rc) return rc;
  return ls_reply_empty(out, &deltad__lance__v1__namespace_exists_response__descriptor);
}

static int ls_list_tables(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(ListTablesRequest);
  Deltad__Lance__V1__ListTablesResponse *r = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_NAMESPACE);
  /* include_declared: every table here is registered at a location, none only declared */
  if (!rc) rc = cat_lance_table_list(svc_store(call), &r, LS_PATH(req), req->limit, req->page_token);
  return svc_reply(out, r ? &r->base : NULL, rc);
}

/* ---- tables ---------------------------------------------------------------------------------- */

/* After a table call failed with rc: a missing namespace makes the failure the namespace's.
 * Keeps the store's message. */
static int ls_table_failed(dd_call *call, int rc, const char *const *path, size_t depth) {
  if (rc != DD_ENOTFOUND || depth == 0) return rc;
  char msg[512];
  cat_namespace *ns = NULL;
  strncpy(msg, dd_err_msg(), sizeof msg - 1);
  msg[sizeof msg - 1] = '\0';
  if (cat_ns_get(svc_store(call), &ns, path, depth - 1) == DD_ENOTFOUND)
    dd_call_set_detail(call, DD_CALL_DETAIL_NAMESPACE);
  if (ns) protobuf_c_message_free_unpacked(&ns->base, NULL);
  return dd_err_set(rc, "%s", msg);
}

static int ls_register_table(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(RegisterTableRequest);
  cat_lance_table *t = NULL;
  int overwrite = 0;
  int rc = ls_begin(call, DD_CALL_DETAIL_TABLE);
  if (!rc) rc = ls_mode(call, &overwrite, "mode", req->mode, ls_register_modes, 2, 0);
  if (!rc) rc = cat_lance_table_register(svc_store(call), &t, svc_actor(call), LS_PATH(req),
                                         req->location, overwrite, req->n_properties,
                                         (void *const *)req->properties);
  if (rc) {
    if (rc == DD_EINVAL) dd_call_set_detail(call, DD_CALL_DETAIL_NONE);
    return ls_table_failed(call, rc, LS_PATH(req));
  }
  LS_INIT(RegisterTableResponse, REGISTER_TABLE_RESPONSE, r);
  r.location = t->location;
  rc = ls_reply_props(out, &r.base, t->n_properties, (void *const *)t->properties);
  protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

/* The table's location as a URI: URLs as they are, absolute paths as file:// URLs. */
static char *ls_table_uri(const char *location) {
  if (strstr(location, "://") || location[0] != '/') return strdup(location);
  size_t n = strlen(location);
  char *u = malloc(n + 8);
  if (u) memcpy(u, "file://", 7), memcpy(u + 7, location, n + 1);
  return u;
}

static int ls_describe_reply(ProtobufCMessage **out, const Deltad__Lance__V1__DescribeTableRequest *req,
                             const cat_lance_table *t) {
  LS_INIT(DescribeTableResponse, DESCRIBE_TABLE_RESPONSE, r);
  char *uri = NULL;
  r.location = t->location;
  if (req->with_table_uri && !(r.table_uri = uri = ls_table_uri(t->location)))
    return dd_err_set(DD_ENOMEM, "out of memory");
  if (req->check_declared) {
    r._is_only_declared_case = DELTAD__LANCE__V1__DESCRIBE_TABLE_RESPONSE___IS_ONLY_DECLARED_IS_ONLY_DECLARED;
    r.is_only_declared = 0;
  }
  int rc = ls_reply_props(out, &r.base, t->n_properties, (void *const *)t->properties);
  free(uri);
  return rc;
}

static int ls_describe_table(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(DescribeTableRequest);
  cat_lance_table *t = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_TABLE);
  if (!rc && req->_load_detailed_metadata_case && req->load_detailed_metadata) {
    dd_call_set_detail(call, DD_CALL_DETAIL_NONE);
    rc = dd_err_set(DD_EUNSUPPORTED, "load_detailed_metadata: deltad does not open Lance datasets; "
                                     "open the table at its location");
  }
  if (!rc) rc = cat_lance_table_get(svc_store(call), &t, LS_PATH(req));
  if (rc) return ls_table_failed(call, rc, LS_PATH(req));
  rc = ls_describe_reply(out, req, t);
  protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

static int ls_table_exists(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  LS_REQ(TableExistsRequest);
  cat_lance_table *t = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_TABLE);
  if (!rc) rc = cat_lance_table_get(svc_store(call), &t, LS_PATH(req));
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  if (rc) return ls_table_failed(call, rc, LS_PATH(req));
  return ls_reply_empty(out, &deltad__lance__v1__table_exists_response__descriptor);
}

/* DropTable and DeregisterTable: both remove the registration and leave the data where it
 * is (deltad does not own a registered table's files); their responses have one shape. */
static int ls_remove_table(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out,
                           const ProtobufCMessageDescriptor *resp_desc) {
  LS_REQ(DeregisterTableRequest); /* DropTableRequest has the same fields */
  cat_lance_table *t = NULL;
  int rc = ls_begin(call, DD_CALL_DETAIL_TABLE);
  if (!rc) rc = cat_lance_table_deregister(svc_store(call), &t, LS_PATH(req));
  if (rc) return ls_table_failed(call, rc, LS_PATH(req));
  LS_INIT(DeregisterTableResponse, DEREGISTER_TABLE_RESPONSE, r);
  r.base.descriptor = resp_desc; /* DropTableResponse has the same fields and numbers */
  r.n_id = req->n_id;
  r.id = req->id;
  r.location = t->location;
  rc = ls_reply_props(out, &r.base, t->n_properties, (void *const *)t->properties);
  protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

static int ls_drop_table(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  return ls_remove_table(call, msg, out, &deltad__lance__v1__drop_table_response__descriptor);
}

static int ls_deregister_table(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  return ls_remove_table(call, msg, out, &deltad__lance__v1__deregister_table_response__descriptor);
}

/* ---- the table ------------------------------------------------------------------------------- */

#define LS_METHOD(idx, name, fn, in, outd)                                                  \
  [idx] = {"/deltad.lance.v1.NamespaceService/" name,                                      \
           &deltad__lance__v1__##in##_request__descriptor,                                 \
           &deltad__lance__v1__##outd##_response__descriptor, fn, 0}

const dd_method dd_lance_methods[LANCE_M_COUNT] = {
    LS_METHOD(LANCE_M_CREATE_NAMESPACE, "CreateNamespace", ls_create_namespace, create_namespace, create_namespace),
    LS_METHOD(LANCE_M_LIST_NAMESPACES, "ListNamespaces", ls_list_namespaces, list_namespaces, list_namespaces),
    LS_METHOD(LANCE_M_DESCRIBE_NAMESPACE, "DescribeNamespace", ls_describe_namespace, describe_namespace, describe_namespace),
    LS_METHOD(LANCE_M_DROP_NAMESPACE, "DropNamespace", ls_drop_namespace, drop_namespace, drop_namespace),
    LS_METHOD(LANCE_M_NAMESPACE_EXISTS, "NamespaceExists", ls_namespace_exists, namespace_exists, namespace_exists),
    LS_METHOD(LANCE_M_LIST_TABLES, "ListTables", ls_list_tables, list_tables, list_tables),
    LS_METHOD(LANCE_M_REGISTER_TABLE, "RegisterTable", ls_register_table, register_table, register_table),
    LS_METHOD(LANCE_M_DESCRIBE_TABLE, "DescribeTable", ls_describe_table, describe_table, describe_table),
    LS_METHOD(LANCE_M_TABLE_EXISTS, "TableExists", ls_table_exists, table_exists, table_exists),
    LS_METHOD(LANCE_M_DROP_TABLE, "DropTable", ls_drop_table, drop_table, drop_table),
    LS_METHOD(LANCE_M_DEREGISTER_TABLE, "DeregisterTable", ls_deregister_table, deregister_table, deregister_table),
};
const size_t dd_lance_methods_len = LANCE_M_COUNT;
