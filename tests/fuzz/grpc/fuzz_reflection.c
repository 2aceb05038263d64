/* fuzz_reflection.c: fuzz target for the reflection request handler
 * (dd_grpc__reflection_reply): any bytes either fail with DD_EINVAL or produce a
 * response that parses back as a ServerReflectionResponse. Corpus: corpus_reflection. */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "server/grpc/grpc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *out = NULL;
  size_t len = 0;
  int rc = dd_grpc__reflection_reply(data, size, &out, &len);
  if (rc != 0 && rc != DD_EINVAL) abort();
  if (rc == 0) {
    Grpc__Reflection__V1alpha__ServerReflectionResponse *r =
        grpc__reflection__v1alpha__server_reflection_response__unpack(NULL, len, out);
    if (!r) abort();
    grpc__reflection__v1alpha__server_reflection_response__free_unpacked(r, NULL);
  }
  free(out);
  return 0;
}
