/* test_wire.c: the hand-written wire vectors of wire_vectors.txt decode with the protoc-c
 * descriptors generated from proto/ into exactly the fields they were written from, and
 * re-encode to the same bytes. Together with test_wire.py this pins the Delta Connect and
 * Spark Connect field numbers on both the C and the Python side. Usage: test_wire VECTORS */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "spark/connect/base.pb-c.h"

static const char *vectors_path;

/* ---- vector file ------------------------------------------------------------------- */

typedef struct {
  uint8_t data[512];
  size_t len;
} vec;

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Loads the vector called name; fails the test when it is missing or malformed. */
static void load(vec *out, const char *name) {
  char line[2048];
  FILE *f = fopen(vectors_path, "r");
  assert_non_null(f);
  out->len = 0;
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    size_t n = strlen(name);
    if (strncmp(line, name, n) != 0 || line[n] != ' ') continue;
    for (const char *p = line + n + 1; hexval(p[0]) >= 0; p += 2) {
      assert_true(hexval(p[1]) >= 0);
      assert_true(out->len < sizeof out->data);
      out->data[out->len++] = (uint8_t)(hexval(p[0]) << 4 | hexval(p[1]));
    }
    found = 1;
  }
  fclose(f);
  assert_true(found);
  assert_true(out->len > 0);
}

/* Packing msg again must give the vector's bytes (protoc-c writes fields in number order,
 * as the Python encoder does for these messages). */
static void assert_repacks(const ProtobufCMessage *msg, const vec *v) {
  uint8_t buf[512];
  size_t n = protobuf_c_message_get_packed_size(msg);
  assert_int_equal(n, v->len);
  assert_int_equal(protobuf_c_message_pack(msg, buf), v->len);
  assert_memory_equal(buf, v->data, v->len);
}

/* ---- tests ----------------------------------------------------------------------------- */

static void check_vacuum(const Delta__Connect__DeltaCommand *c, double hours) {
  assert_int_equal(c->command_type_case, DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE);
  const Delta__Connect__VacuumTable *v = c->vacuum_table;
  assert_non_null(v->table);
  assert_int_equal(v->table->access_type_case, DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH);
  assert_string_equal(v->table->path->path, "/tmp/t");
  assert_int_equal(v->_retention_hours_case,
                   DELTA__CONNECT__VACUUM_TABLE___RETENTION_HOURS_RETENTION_HOURS);
  assert_true(v->retention_hours == hours);
}

static void test_vacuum(void **state) {
  (void)state;
  vec v;
  const char *names[] = {"vacuum", "vacuum0"};
  const double hours[] = {168.0, 0.0};
  for (int i = 0; i < 2; i++) {
    load(&v, names[i]);
    Delta__Connect__DeltaCommand *c = delta__connect__delta_command__unpack(NULL, v.len, v.data);
    assert_non_null(c);
    check_vacuum(c, hours[i]);
    assert_repacks(&c->base, &v);
    delta__connect__delta_command__free_unpacked(c, NULL);
  }
}

static void test_clone(void **state) {
  (void)state;
  vec v;
  load(&v, "clone");
  Delta__Connect__DeltaCommand *c = delta__connect__delta_command__unpack(NULL, v.len, v.data);
  assert_non_null(c);
  assert_int_equal(c->command_type_case, DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CLONE_TABLE);
  const Delta__Connect__CloneTable *ct = c->clone_table;
  assert_int_equal(ct->table->access_type_case,
                   DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_TABLE_OR_VIEW_NAME);
  assert_string_equal(ct->table->table_or_view_name, "main.s.t");
  assert_string_equal(ct->target, "/c");
  assert_int_equal(ct->version_or_timestamp_case,
                   DELTA__CONNECT__CLONE_TABLE__VERSION_OR_TIMESTAMP_VERSION);
  assert_int_equal(ct->version, 3);
  assert_true(ct->is_shallow);
  assert_false(ct->replace);
  assert_int_equal(ct->n_properties, 1);
  assert_string_equal(ct->properties[0]->key, "k");
  assert_string_equal(ct->properties[0]->value, "v");
  assert_repacks(&c->base, &v);
  delta__connect__delta_command__free_unpacked(c, NULL);
}

static void test_plan_extension(void **state) {
  (void)state;
  vec v, inner;
  load(&v, "plan");
  load(&inner, "vacuum");
  Spark__Connect__Plan *p = spark__connect__plan__unpack(NULL, v.len, v.data);
  assert_non_null(p);
  assert_int_equal(p->op_type_case, SPARK__CONNECT__PLAN__OP_TYPE_COMMAND);
  assert_int_equal(p->command->command_type_case,
                   SPARK__CONNECT__COMMAND__COMMAND_TYPE_EXTENSION);
  const Google__Protobuf__Any *any = p->command->extension;
  assert_string_equal(any->type_url, "type.googleapis.com/delta.connect.DeltaCommand");
  assert_int_equal(any->value.len, inner.len);
  Delta__Connect__DeltaCommand *c =
      delta__connect__delta_command__unpack(NULL, any->value.len, any->value.data);
  assert_non_null(c);
  check_vacuum(c, 168.0);
  delta__connect__delta_command__free_unpacked(c, NULL);
  assert_repacks(&p->base, &v);
  spark__connect__plan__free_unpacked(p, NULL);
}

static void test_execute_plan_response(void **state) {
  (void)state;
  vec v;
  load(&v, "response");
  Spark__Connect__ExecutePlanResponse *r =
      spark__connect__execute_plan_response__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_string_equal(r->session_id, "s");
  assert_string_equal(r->operation_id, "op");
  assert_string_equal(r->response_id, "r1");
  assert_string_equal(r->server_side_session_id, "ss");
  assert_int_equal(r->response_type_case,
                   SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH);
  const Spark__Connect__ExecutePlanResponse__ArrowBatch *b = r->arrow_batch;
  assert_int_equal(b->row_count, 2);
  assert_int_equal(b->data.len, 4);
  assert_memory_equal(b->data.data, "\xff\xff\xff\xff", 4);
  assert_int_equal(b->_start_offset_case,
                   SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__ARROW_BATCH___START_OFFSET_START_OFFSET);
  assert_int_equal(b->start_offset, 0);
  assert_repacks(&r->base, &v);
  spark__connect__execute_plan_response__free_unpacked(r, NULL);
}

static void test_restore(void **state) {
  (void)state;
  vec v;
  load(&v, "restore");
  Delta__Connect__DeltaRelation *r = delta__connect__delta_relation__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_int_equal(r->relation_type_case,
                   DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_RESTORE_TABLE);
  assert_string_equal(r->restore_table->table->path->path, "/t");
  assert_int_equal(r->restore_table->version_or_timestamp_case,
                   DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_VERSION);
  assert_int_equal(r->restore_table->version, 5);
  assert_repacks(&r->base, &v);
  delta__connect__delta_relation__free_unpacked(r, NULL);
}

static void test_create(void **state) {
  (void)state;
  vec v;
  load(&v, "create");
  Delta__Connect__DeltaCommand *c = delta__connect__delta_command__unpack(NULL, v.len, v.data);
  assert_non_null(c);
  assert_int_equal(c->command_type_case,
                   DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CREATE_DELTA_TABLE);
  const Delta__Connect__CreateDeltaTable *t = c->create_delta_table;
  assert_int_equal(t->mode, DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE_IF_NOT_EXISTS);
  assert_int_equal(t->_table_name_case, DELTA__CONNECT__CREATE_DELTA_TABLE___TABLE_NAME__NOT_SET);
  assert_int_equal(t->_location_case, DELTA__CONNECT__CREATE_DELTA_TABLE___LOCATION_LOCATION);
  assert_string_equal(t->location, "/d");
  assert_int_equal(t->n_columns, 1);
  const Delta__Connect__CreateDeltaTable__Column *col = t->columns[0];
  assert_string_equal(col->name, "a");
  assert_true(col->nullable);
  assert_int_equal(col->data_type->kind_case, SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED);
  assert_string_equal(col->data_type->unparsed->data_type_string, "decimal(10,2)");
  assert_repacks(&c->base, &v);
  delta__connect__delta_command__free_unpacked(c, NULL);
}

static void test_result_row(void **state) {
  (void)state;
  vec v;
  load(&v, "row");
  Deltad__Connect__V1__ExecuteResult *r =
      deltad__connect__v1__execute_result__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_int_equal(r->result_case, DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_ROW);
  assert_int_equal(r->row->n_values, 3);
  assert_int_equal(r->row->values[0]->kind_case, DELTAD__CONNECT__V1__VALUE__KIND_NULL_VALUE);
  assert_int_equal(r->row->values[1]->kind_case, DELTAD__CONNECT__V1__VALUE__KIND_INT64_VALUE);
  assert_int_equal(r->row->values[1]->int64_value, -1);
  assert_int_equal(r->row->values[2]->kind_case, DELTAD__CONNECT__V1__VALUE__KIND_STRING_VALUE);
  assert_string_equal(r->row->values[2]->string_value, "x");
  assert_repacks(&r->base, &v);
  deltad__connect__v1__execute_result__free_unpacked(r, NULL);
}

static void test_config_optional_value(void **state) {
  (void)state;
  vec v;
  load(&v, "config");
  Spark__Connect__ConfigResponse *r = spark__connect__config_response__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_int_equal(r->n_pairs, 1);
  assert_string_equal(r->pairs[0]->key, "a");
  assert_int_equal(r->pairs[0]->_value_case, SPARK__CONNECT__KEY_VALUE___VALUE_VALUE);
  assert_string_equal(r->pairs[0]->value, "");
  assert_repacks(&r->base, &v);
  spark__connect__config_response__free_unpacked(r, NULL);
}

static void test_delete_with_relation_extension(void **state) {
  (void)state;
  vec v;
  load(&v, "delete");
  Delta__Connect__DeltaRelation *r = delta__connect__delta_relation__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_int_equal(r->relation_type_case,
                   DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE);
  const Spark__Connect__Relation *target = r->delete_from_table->target;
  assert_int_equal(target->rel_type_case, SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION);
  assert_string_equal(target->extension->type_url,
                      "type.googleapis.com/delta.connect.DeltaRelation");
  Delta__Connect__DeltaRelation *inner = delta__connect__delta_relation__unpack(
      NULL, target->extension->value.len, target->extension->value.data);
  assert_non_null(inner);
  assert_int_equal(inner->relation_type_case, DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN);
  assert_string_equal(inner->scan->table->path->path, "/t");
  delta__connect__delta_relation__free_unpacked(inner, NULL);
  const Spark__Connect__Expression *cond = r->delete_from_table->condition;
  assert_int_equal(cond->expr_type_case, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING);
  assert_string_equal(cond->expression_string->expression, "id > 5");
  assert_repacks(&r->base, &v);
  delta__connect__delta_relation__free_unpacked(r, NULL);
}

static void test_analyze_schema(void **state) {
  (void)state;
  vec v;
  load(&v, "analyze");
  Spark__Connect__AnalyzePlanResponse *r =
      spark__connect__analyze_plan_response__unpack(NULL, v.len, v.data);
  assert_non_null(r);
  assert_int_equal(r->result_case, SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SCHEMA);
  const Spark__Connect__DataType *t = r->schema->schema;
  assert_int_equal(t->kind_case, SPARK__CONNECT__DATA_TYPE__KIND_STRUCT);
  assert_int_equal(t->struct_->n_fields, 1);
  assert_string_equal(t->struct_->fields[0]->name, "id");
  assert_true(t->struct_->fields[0]->nullable);
  assert_int_equal(t->struct_->fields[0]->data_type->kind_case,
                   SPARK__CONNECT__DATA_TYPE__KIND_LONG);
  assert_repacks(&r->base, &v);
  spark__connect__analyze_plan_response__free_unpacked(r, NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s wire_vectors.txt\n", argv[0]);
    return 2;
  }
  vectors_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vacuum),
      cmocka_unit_test(test_clone),
      cmocka_unit_test(test_plan_extension),
      cmocka_unit_test(test_execute_plan_response),
      cmocka_unit_test(test_restore),
      cmocka_unit_test(test_create),
      cmocka_unit_test(test_result_row),
      cmocka_unit_test(test_config_optional_value),
      cmocka_unit_test(test_delete_with_relation_extension),
      cmocka_unit_test(test_analyze_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
