/* api.h: REST routes and reflection index generated from proto/ by tools/gen_api.py.
 * Do not edit; run the `generate` build target. */
#ifndef DD_GENERATED_API_H
#define DD_GENERATED_API_H
#include <stddef.h>

typedef struct dd_api_route {
  const char *method;   /* gRPC method path, "/pkg.Service/Method" */
  const char *verb;     /* GET, POST, PATCH, DELETE, PUT */
  const char *path;     /* template relative to the REST base path, "/catalogs/{name}" */
  const char *body;     /* "" (no body), "*" (whole message) or a field name */
} dd_api_route;

typedef struct dd_api_file {
  const char *name;                /* "deltad/catalog/v1/catalog.proto" */
  const unsigned char *descriptor; /* serialized google.protobuf.FileDescriptorProto */
  size_t descriptor_len;
  const char *const *deps;         /* NULL-terminated file names */
  const char *const *symbols;      /* NULL-terminated fully-qualified names */
} dd_api_file;

extern const dd_api_route dd_api_routes[];
extern const size_t dd_api_routes_len;
extern const dd_api_file dd_api_files[];
extern const size_t dd_api_files_len;
extern const char *const dd_api_services[];
extern const size_t dd_api_services_len;

#endif
