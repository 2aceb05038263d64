/* fuzz_request_decode.c: decodes arbitrary bytes as the request of one served method, the
 * way both transports do: the first byte picks the method of dd_app_methods(), the rest is
 * the encoded request, checked by rg_pb_check and then unpacked. A Spark Connect plan whose
 * root or command is an extension has its Any unpacked too (the DeltaRelation or
 * DeltaCommand bytes connect_spark_svc.c decodes). Properties: nothing crashes or leaks,
 * and a message the guard let through packs again into bytes the guard lets through. */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "server/service/app.h"
#include "server/call/req_guard.h"
#include "spark/connect/base.pb-c.h"

/* The guard accepts a repacked copy of what it accepted (merging can only shrink it). */
static void fuzz_recheck(const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf || protobuf_c_message_pack(m, buf) != n) abort();
  if (rg_pb_check(m->descriptor, buf, n) != 0) abort();
  free(buf);
}

static void fuzz_any(const Google__Protobuf__Any *a, const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = NULL;
  if (!a || rg_pb_unpack(&m, d, a->value.data, a->value.len) != 0) return;
  fuzz_recheck(m);
  protobuf_c_message_free_unpacked(m, NULL);
}

static void fuzz_plan(const Spark__Connect__Plan *p) {
  if (!p) return;
  if (p->op_type_case == SPARK__CONNECT__PLAN__OP_TYPE_ROOT && p->root &&
      p->root->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION)
    fuzz_any(p->root->extension, &delta__connect__delta_relation__descriptor);
  if (p->op_type_case == SPARK__CONNECT__PLAN__OP_TYPE_COMMAND && p->command &&
      p->command->command_type_case == SPARK__CONNECT__COMMAND__COMMAND_TYPE_EXTENSION)
    fuzz_any(p->command->extension, &delta__connect__delta_command__descriptor);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t n = 0;
  const dd_method *methods = dd_app_methods(&n);
  if (size < 1 || n == 0) return 0;
  const dd_method *m = &methods[data[0] % n];
  ProtobufCMessage *req = NULL;
  if (rg_pb_unpack(&req, m->input, data + 1, size - 1) != 0) return 0;
  fuzz_recheck(req);
  if (m->input == &spark__connect__execute_plan_request__descriptor)
    fuzz_plan(((Spark__Connect__ExecutePlanRequest *)req)->plan);
  if (m->input == &spark__connect__analyze_plan_request__descriptor) {
    const Spark__Connect__AnalyzePlanRequest *a = (const void *)req;
    if (a->analyze_case == SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SCHEMA && a->schema)
      fuzz_plan(a->schema->plan);
  }
  protobuf_c_message_free_unpacked(req, NULL);
  dd_err_clear();
  return 0;
}
