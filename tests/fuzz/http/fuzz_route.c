/* fuzz_route.c: feeds arbitrary bytes as a request path (and verb) to the REST router
 * over the generated route table plus a few templates with `**` and a custom verb. The
 * first byte picks the verb. A match must name a route of that verb and free cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/call/call_route.h"

static const dd_api_route fuzz_extra[] = {
    {"/x.X/File", "GET", "/files/{path=**}", ""},
    {"/x.X/Vacuum", "POST", "/tables/{name}:vacuum", "*"},
    {"/x.X/Deep", "GET", "/a/{b}/c/{d.e=*}/f", ""},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *verbs[] = {"GET", "POST", "PATCH", "DELETE", "PUT"};
  static dd_call_router *gen, *extra;
  if (!gen && (dd_call_router_new(&gen, dd_api_routes, dd_api_routes_len) != 0 ||
               dd_call_router_new(&extra, fuzz_extra, 3) != 0))
    abort();
  if (size < 1) return 0;
  const char *verb = verbs[data[0] % 5];
  char *path = malloc(size);
  memcpy(path, data + 1, size - 1);
  path[size - 1] = '\0';
  dd_call_router *routers[] = {gen, extra};
  const dd_api_route *tables[] = {dd_api_routes, fuzz_extra};
  for (int i = 0; i < 2; i++) {
    dd_call_match m;
    if (dd_call_router_match(routers[i], verb, path, &m) == 0) {
      if (strcmp(tables[i][m.route].verb, verb) != 0) abort();
      for (size_t k = 0; k < m.n_vars; k++)
        if (!m.vars[k].value || !m.vars[k].field) abort();
      dd_call_match_clear(&m);
    }
  }
  free(path);
  return 0;
}
