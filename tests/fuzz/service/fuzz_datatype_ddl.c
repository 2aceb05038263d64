/* fuzz_datatype_ddl.c: the path of a CreateDeltaTable column from a client's
 * spark.connect.DataType to the table's schema: the type is built from the input (a small
 * program: each byte picks a kind; struct field names are read from the input, so they hold
 * backticks, spaces, commas...), turned into DDL by connect_datatype_ddl and parsed back by
 * store/deltaops. Nesting within the DDL bound must always parse, and every struct field
 * name must come back unchanged; deeper nesting, and a name that is not UTF-8 (a length byte
 * with its top bit set adds a 0xff byte), must be refused as DD_EINVAL, never crash. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_exec.h"
#include "store/deltaops/dop_int.h"

typedef struct prog {
  const uint8_t *p, *end;
  int max_depth; /* deepest level built */
  bool bad_utf8;  /* some name is not UTF-8 */
} prog;

static uint8_t next(prog *g) { return g->p < g->end ? *g->p++ : 0; }

static void *msg(const ProtobufCMessageDescriptor *d) {
  void *m = calloc(1, d->sizeof_message);
  if (!m) abort();
  protobuf_c_message_init(d, m);
  return m;
}

/* A field name: a length byte (low 4 bits: 1..16 characters, top bit: append 0xff) then
 * that many bytes as ASCII; NUL bytes become 'n'. */
static char *name(prog *g) {
  uint8_t len = next(g);
  size_t n = len % 16 + 1;
  char *s = malloc(n + 2);
  if (!s) abort();
  for (size_t i = 0; i < n; i++) {
    uint8_t c = next(g) & 0x7f;
    s[i] = (char)(c ? c : 'n');
  }
  if (len & 0x80) s[n++] = (char)0xff, g->bad_utf8 = true;
  s[n] = '\0';
  return s;
}

static Spark__Connect__DataType *build(prog *g, int depth) {
  Spark__Connect__DataType *t = msg(&spark__connect__data_type__descriptor);
  if (depth > g->max_depth) g->max_depth = depth;
  uint8_t op = g->p < g->end && depth < 100 ? next(g) % 8 : 0;
  switch (op) {
    case 0: t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_INTEGER; t->integer = msg(&spark__connect__data_type__integer__descriptor); break;
    case 1: t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_STRING; t->string = msg(&spark__connect__data_type__string__descriptor); break;
    case 2: t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP_NTZ; t->timestamp_ntz = msg(&spark__connect__data_type__timestamp_ntz__descriptor); break;
    case 3:
      t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_DECIMAL;
      t->decimal = msg(&spark__connect__data_type__decimal__descriptor);
      t->decimal->_precision_case = SPARK__CONNECT__DATA_TYPE__DECIMAL___PRECISION_PRECISION;
      t->decimal->precision = next(g) % 38 + 1;
      break;
    case 4:
      t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_ARRAY;
      t->array = msg(&spark__connect__data_type__array__descriptor);
      t->array->element_type = build(g, depth + 1);
      break;
    case 5:
      t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_MAP;
      t->map = msg(&spark__connect__data_type__map__descriptor);
      t->map->key_type = build(g, depth + 1);
      t->map->value_type = build(g, depth + 1);
      break;
    default: {
      t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_STRUCT;
      t->struct_ = msg(&spark__connect__data_type__struct__descriptor);
      size_t n = next(g) % 4;
      t->struct_->fields = calloc(n + 1, sizeof *t->struct_->fields);
      if (!t->struct_->fields) abort();
      for (size_t i = 0; i < n; i++) {
        Spark__Connect__DataType__StructField *f = msg(&spark__connect__data_type__struct_field__descriptor);
        f->name = name(g);
        f->nullable = true;
        f->data_type = build(g, depth + 1);
        t->struct_->fields[t->struct_->n_fields++] = f;
      }
    }
  }
  return t;
}

/* The names of t's struct fields, depth first, must be those of the parsed JSON type j. */
static void same_names(const Spark__Connect__DataType *t, const json_t *j) {
  switch (t->kind_case) {
    case SPARK__CONNECT__DATA_TYPE__KIND_ARRAY: same_names(t->array->element_type, json_object_get(j, "elementType")); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_MAP:
      same_names(t->map->key_type, json_object_get(j, "keyType"));
      same_names(t->map->value_type, json_object_get(j, "valueType"));
      break;
    case SPARK__CONNECT__DATA_TYPE__KIND_STRUCT: {
      json_t *fields = json_object_get(j, "fields");
      if (json_array_size(fields) != t->struct_->n_fields) abort();
      for (size_t i = 0; i < t->struct_->n_fields; i++) {
        json_t *f = json_array_get(fields, i);
        if (strcmp(json_string_value(json_object_get(f, "name")), t->struct_->fields[i]->name)) abort();
        same_names(t->struct_->fields[i]->data_type, json_object_get(f, "type"));
      }
      break;
    }
    default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 14) return 0;
  prog g = {data, data + size, 0, false};
  Spark__Connect__DataType *t = build(&g, 1);
  char *ddl = NULL;
  if (connect_datatype_ddl(&ddl, t) != 0) abort();
  json_t *j = NULL;
  int rc = dop__ddl_type(&j, ddl);
  if (g.max_depth <= DOP__DDL_MAX_DEPTH && !g.bad_utf8) {
    if (rc != 0) fprintf(stderr, "DDL %s: %s\n", ddl, dd_err_msg()), abort(); /* must round-trip */
    same_names(t, j);
  } else if (rc != DD_EINVAL) {
    abort();
  }
  json_decref(j);
  free(ddl);
  protobuf_c_message_free_unpacked(&t->base, NULL);
  dd_err_clear();
  return 0;
}
