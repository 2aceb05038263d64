/* grpc_reflection.c: answers grpc.reflection.v1alpha.ServerReflection requests (and v1's,
 * the same messages on the wire, at their own path) from the
 * generated index of the API (generated/api.h: dd_api_files, dd_api_services), so generic
 * clients (grpcurl, Postman, grpc_cli) can list and call deltad's services without .proto
 * files. A file is answered with all its transitive imports (the file first, each once);
 * a symbol may be a message, enum, service or method name, or anything inside one (a
 * field, a nested name), which resolves to the file of the enclosing symbol. Extensions
 * are found by decoding the FileDescriptorProtos. Errors are ErrorResponse messages, the
 * stream goes on. The transport (grpc_astream.c) feeds one request message at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "generated/api.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "server/grpc/grpc_int.h"

typedef Grpc__Reflection__V1alpha__ServerReflectionRequest refl_req;
typedef Grpc__Reflection__V1alpha__ServerReflectionResponse refl_resp;

/* Everything a response points to; freed after packing. */
typedef struct refl__out {
  const dd_api_file **files;
  size_t n_files;
  ProtobufCBinaryData *blobs;
  Grpc__Reflection__V1alpha__FileDescriptorResponse fdr;
  Grpc__Reflection__V1alpha__ServiceResponse *svc;
  Grpc__Reflection__V1alpha__ServiceResponse **svc_ptrs;
  Grpc__Reflection__V1alpha__ListServiceResponse list;
  int32_t *nums;
  size_t n_nums;
  Grpc__Reflection__V1alpha__ExtensionNumberResponse ext;
  Grpc__Reflection__V1alpha__ErrorResponse err;
  char err_msg[512];
} refl__out;

/* ---- the index ---- */

static const dd_api_file *refl__file_named(const char *name) {
  for (size_t i = 0; i < dd_api_files_len; i++)
    if (strcmp(dd_api_files[i].name, name) == 0) return &dd_api_files[i];
  return NULL;
}

static const dd_api_file *refl__file_defining(const char *sym, size_t len) {
  for (size_t i = 0; i < dd_api_files_len; i++)
    for (const char *const *s = dd_api_files[i].symbols; *s; s++)
      if (strlen(*s) == len && memcmp(*s, sym, len) == 0) return &dd_api_files[i];
  return NULL;
}

/* The file of sym or, failing that, of the nearest enclosing symbol. */
static const dd_api_file *refl__file_containing(const char *sym) {
  if (*sym == '.') sym++;
  for (size_t len = strlen(sym); len > 0;) {
    const dd_api_file *f = refl__file_defining(sym, len);
    if (f) return f;
    const char *dot = memrchr(sym, '.', len);
    if (!dot) break;
    len = (size_t)(dot - sym);
  }
  return NULL;
}

static void refl__add_file(refl__out *o, const dd_api_file *f) {
  for (size_t i = 0; i < o->n_files; i++)
    if (o->files[i] == f) return;
  o->files[o->n_files++] = f;
  for (const char *const *d = f->deps; *d; d++) {
    const dd_api_file *dep = refl__file_named(*d);
    if (dep) refl__add_file(o, dep);
  }
}

/* ---- extensions ---- */

typedef struct refl__ext_query {
  const char *type; /* fully-qualified, no leading dot */
  int32_t number;   /* for find: the number wanted */
  bool find;        /* find one (number) or collect all numbers */
  const dd_api_file *file;
  const dd_api_file *found;
  refl__out *o;
} refl__ext_query;

static int refl__ext_fields(refl__ext_query *q, Google__Protobuf__FieldDescriptorProto **f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *e = f[i]->extendee;
    if (!e) continue;
    if (*e == '.') e++;
    if (strcmp(e, q->type) != 0) continue;
    if (q->find) {
      if (f[i]->number == q->number) q->found = q->file;
      continue;
    }
    int32_t *nums = realloc(q->o->nums, (q->o->n_nums + 1) * sizeof *nums);
    if (!nums) return dd_err_set(DD_ENOMEM, "out of memory");
    q->o->nums = nums;
    nums[q->o->n_nums++] = f[i]->number;
  }
  return 0;
}

static int refl__ext_messages(refl__ext_query *q, Google__Protobuf__DescriptorProto **m, size_t n) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    rc = refl__ext_fields(q, m[i]->extension, m[i]->n_extension);
    if (!rc) rc = refl__ext_messages(q, m[i]->nested_type, m[i]->n_nested_type);
  }
  return rc;
}

static int refl__ext_scan(refl__ext_query *q) {
  int rc = 0;
  for (size_t i = 0; i < dd_api_files_len && !rc; i++) {
    const dd_api_file *f = &dd_api_files[i];
    Google__Protobuf__FileDescriptorProto *fd =
        google__protobuf__file_descriptor_proto__unpack(NULL, f->descriptor_len, f->descriptor);
    if (!fd) return dd_err_set(DD_ECORRUPT, "descriptor of %s does not parse", f->name);
    q->file = f;
    rc = refl__ext_fields(q, fd->extension, fd->n_extension);
    if (!rc) rc = refl__ext_messages(q, fd->message_type, fd->n_message_type);
    google__protobuf__file_descriptor_proto__free_unpacked(fd, NULL);
  }
  return rc;
}

/* ---- the answers ---- */

static void refl__error(refl_resp *r, refl__out *o, int code, const char *what, const char *name) {
  snprintf(o->err_msg, sizeof o->err_msg, "%s not found: %s", what, name);
  grpc__reflection__v1alpha__error_response__init(&o->err);
  o->err.error_code = code;
  o->err.error_message = o->err_msg;
  r->message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
  r->error_response = &o->err;
}

static int refl__files(refl_resp *r, refl__out *o, const dd_api_file *f, const char *what, const char *name) {
  if (!f) {
    refl__error(r, o, GRPC_STATUS_NOT_FOUND, what, name);
    return 0;
  }
  o->files = calloc(dd_api_files_len, sizeof *o->files);
  o->blobs = calloc(dd_api_files_len, sizeof *o->blobs);
  if (!o->files || !o->blobs) return dd_err_set(DD_ENOMEM, "out of memory");
  refl__add_file(o, f);
  for (size_t i = 0; i < o->n_files; i++) {
    o->blobs[i].len = o->files[i]->descriptor_len;
    o->blobs[i].data = (uint8_t *)o->files[i]->descriptor;
  }
  grpc__reflection__v1alpha__file_descriptor_response__init(&o->fdr);
  o->fdr.n_file_descriptor_proto = o->n_files;
  o->fdr.file_descriptor_proto = o->blobs;
  r->message_response_case =
      GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
  r->file_descriptor_response = &o->fdr;
  return 0;
}

static int refl__services(refl_resp *r, refl__out *o) {
  static const char *const builtin[] = {"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection",
                                        "grpc.reflection.v1.ServerReflection"};
  size_t cap = dd_api_services_len + 3, n = 0;
  o->svc = calloc(cap, sizeof *o->svc);
  o->svc_ptrs = calloc(cap, sizeof *o->svc_ptrs);
  if (!o->svc || !o->svc_ptrs) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < cap; i++) {
    const char *name = i < dd_api_services_len ? dd_api_services[i] : builtin[i - dd_api_services_len];
    bool dup = false;
    for (size_t j = 0; j < n && !dup; j++) dup = strcmp(o->svc[j].name, name) == 0;
    if (dup) continue;
    grpc__reflection__v1alpha__service_response__init(&o->svc[n]);
    o->svc[n].name = (char *)name;
    o->svc_ptrs[n] = &o->svc[n];
    n++;
  }
  grpc__reflection__v1alpha__list_service_response__init(&o->list);
  o->list.n_service = n;
  o->list.service = o->svc_ptrs;
  r->message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
  r->list_services_response = &o->list;
  return 0;
}

static int refl__extension_file(refl_resp *r, refl__out *o, const Grpc__Reflection__V1alpha__ExtensionRequest *e) {
  refl__ext_query q = {.type = e->containing_type, .number = e->extension_number, .find = true, .o = o};
  if (*q.type == '.') q.type++;
  int rc = refl__ext_scan(&q);
  if (rc) return rc;
  char name[300];
  snprintf(name, sizeof name, "%s(%d)", e->containing_type, (int)e->extension_number);
  return refl__files(r, o, q.found, "extension", name);
}

static int refl__extension_numbers(refl_resp *r, refl__out *o, const char *type) {
  refl__ext_query q = {.type = type, .o = o};
  if (*q.type == '.') q.type++;
  if (!refl__file_defining(q.type, strlen(q.type))) {
    refl__error(r, o, GRPC_STATUS_NOT_FOUND, "type", type);
    return 0;
  }
  int rc = refl__ext_scan(&q);
  if (rc) return rc;
  grpc__reflection__v1alpha__extension_number_response__init(&o->ext);
  o->ext.base_type_name = (char *)q.type;
  o->ext.n_extension_number = o->n_nums;
  o->ext.extension_number = o->nums;
  r->message_response_case =
      GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ALL_EXTENSION_NUMBERS_RESPONSE;
  r->all_extension_numbers_response = &o->ext;
  return 0;
}

static int refl__answer(const refl_req *q, refl_resp *r, refl__out *o) {
  switch (q->message_request_case) {
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
    return refl__files(r, o, refl__file_named(q->file_by_filename), "file", q->file_by_filename);
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
    return refl__files(r, o, refl__file_containing(q->file_containing_symbol), "symbol",
                       q->file_containing_symbol);
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
    return refl__extension_file(r, o, q->file_containing_extension);
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
    return refl__extension_numbers(r, o, q->all_extension_numbers_of_type);
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
    return refl__services(r, o);
  default:
    refl__error(r, o, GRPC_STATUS_INVALID_ARGUMENT, "request", "(no request set)");
    return 0;
  }
}

int dd_grpc__reflection_reply(const uint8_t *req, size_t len, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  refl__out o;
  memset(&o, 0, sizeof o);
  ProtobufCMessage *m = NULL; /* bounded like every request (req_guard.h) */
  int rc = rg_pb_unpack(&m, &grpc__reflection__v1alpha__server_reflection_request__descriptor, req, len);
  if (rc) return rc;
  refl_req *q = (refl_req *)m;
  /* The echoed request leaves out fields we do not know: protobuf-c keeps them as they
   * came, and re-sending junk (a field number 0, say) would make the reply unparsable. */
  refl_req echo = *q;
  Grpc__Reflection__V1alpha__ExtensionRequest echo_ext;
  echo.base.n_unknown_fields = 0;
  echo.base.unknown_fields = NULL;
  if (q->message_request_case ==
      GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION) {
    echo_ext = *q->file_containing_extension;
    echo_ext.base.n_unknown_fields = 0;
    echo_ext.base.unknown_fields = NULL;
    echo.file_containing_extension = &echo_ext;
  }
  refl_resp r = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__INIT;
  r.valid_host = q->host;
  r.original_request = &echo;
  rc = refl__answer(q, &r, &o);
  if (!rc) {
    size_t n = grpc__reflection__v1alpha__server_reflection_response__get_packed_size(&r);
    if (!(*out = malloc(n ? n : 1))) rc = dd_err_set(DD_ENOMEM, "out of memory");
    else *out_len = grpc__reflection__v1alpha__server_reflection_response__pack(&r, *out);
  }
  grpc__reflection__v1alpha__server_reflection_request__free_unpacked(q, NULL);
  free(o.files);
  free(o.blobs);
  free(o.svc);
  free(o.svc_ptrs);
  free(o.nums);
  return rc;
}
