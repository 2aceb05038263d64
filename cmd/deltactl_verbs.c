/* deltactl_verbs.c: verb bodies that several groups share, driven by a spec: the paged
 * List* verbs and the verbs whose request is just a name (get, delete). Requests are built
 * through the protobuf-c descriptors, so one body serves every service. */
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"

int dctl_parse_page_size(const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  return (end == s || *end || v <= 0 || v > 1000000) ? -1 : (int)v;
}

/* The address of a singular field of msg, checked against the expected type. */
static void *dctl__field(ProtobufCMessage *msg, const char *name, ProtobufCType type) {
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
  if (!f || f->type != type || f->label == PROTOBUF_C_LABEL_REPEATED) return NULL;
  return (char *)msg + f->offset;
}

/* A fresh request message; strings set on it are borrowed, so free it with free(). */
static ProtobufCMessage *dctl__new_msg(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

static int dctl__set_str(ProtobufCMessage *m, const char *field, const char *v) {
  char **p = dctl__field(m, field, PROTOBUF_C_TYPE_STRING);
  if (!p) return dctl_fail(DCTL_EXIT_LOCAL, "%s has no string field %s", m->descriptor->name, field);
  *p = (char *)v;
  return 0;
}

int dctl_run_list(const dctl_list_spec *s, int argc, char **argv) {
  const char *max = NULL, *token = NULL, *pos[1];
  int all = 0, npos;
  const dctl_opt opts[] = {{"--max-results", 1, &max, NULL, NULL},
                           {"--page-token", 1, &token, NULL, NULL},
                           {"--all", 0, NULL, &all, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const int np = s->parent_field ? 1 : 0;
  const dctl_cmd cmd = {s->usage, opts, np, np};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  rc = 0;
  int size = 0;
  if (max && (size = dctl_parse_page_size(max)) < 0)
    return dctl_usage_error(s->usage, "bad --max-results '%s'", max);
  ProtobufCMessage *req = dctl__new_msg(s->req_desc), *resp = NULL;
  if (!req) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  int32_t *max_field = dctl__field(req, "max_results", PROTOBUF_C_TYPE_INT32);
  if (max_field) *max_field = size;
  if (token) rc = dctl__set_str(req, "page_token", token);
  char *copy = np && s->parent_field2 ? strdup(pos[0]) : NULL, *dot = copy ? strchr(copy, '.') : NULL;
  if (np && s->parent_field2 && !dot) rc = dctl_usage_error(s->usage, "'%s' is not CATALOG.SCHEMA", pos[0]);
  else if (dot) {
    *dot = '\0';
    rc = dctl__set_str(req, s->parent_field, copy);
    if (!rc) rc = dctl__set_str(req, s->parent_field2, dot + 1);
  } else if (!rc && np) rc = dctl__set_str(req, s->parent_field, pos[0]);
  if (!rc) rc = dctl_call_list(s->method, req, s->resp_desc, all, &resp);
  if (!rc) rc = dctl_print_list(resp, s->items_field, s->cols);
  free(copy);
  protobuf_c_message_free_unpacked(resp, NULL);
  free(req);
  return rc;
}

int dctl_run_named(const dctl_named_spec *s, int argc, char **argv) {
  const char *pos[1];
  int force = 0, npos;
  const dctl_opt opts[] = {{"--force", 0, NULL, &force, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {s->usage, s->has_force ? opts : opts + 1, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  ProtobufCMessage *req = dctl__new_msg(s->req_desc), *resp = NULL;
  if (!req) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  rc = dctl__set_str(req, s->name_field, pos[0]);
  protobuf_c_boolean *force_field = dctl__field(req, "force", PROTOBUF_C_TYPE_BOOL);
  if (force_field) *force_field = force;
  if (!rc) rc = dctl_call(s->method, req, s->resp_desc, &resp);
  if (!rc) rc = s->done ? dctl_print_done(s->done, pos[0]) : dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  free(req);
  return rc;
}
