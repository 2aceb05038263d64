/* test_pbjson.c: unit tests of the proto3 JSON codec (server/http/pbjson.h) on the real
 * generated messages: round trips, presence, enums, maps, oneofs, int64 strings, URL
 * text, and every error path. ASan's leak checker covers the frees. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "delta/connect/commands.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "server/http/pbjson.h"

/* ---- helpers ------------------------------------------------------------------------- */

static json_t *load(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
  if (!j) fail_msg("bad test JSON %s: %s", text, e.text);
  return j;
}

/* Parses text as desc; asserts success. */
static ProtobufCMessage *parse_ok(const ProtobufCMessageDescriptor *desc, const char *text) {
  json_t *j = load(text);
  ProtobufCMessage *m = NULL;
  int rc = pbjson_to_msg(&m, desc, j);
  json_decref(j);
  if (rc != 0) fail_msg("parse of %s failed: %s", text, dd_err_msg());
  return m;
}

/* Parses text as desc; asserts DD_EINVAL with exactly msg (or containing it when
 * msg starts with '~'). */
static void parse_fails(const ProtobufCMessageDescriptor *desc, const char *text, const char *msg) {
  json_t *j = load(text);
  ProtobufCMessage *m = (ProtobufCMessage *)1;
  int rc = pbjson_to_msg(&m, desc, j);
  json_decref(j);
  assert_int_equal(rc, DD_EINVAL);
  assert_null(m);
  if (msg[0] == '~') {
    if (!strstr(dd_err_msg(), msg + 1)) fail_msg("message \"%s\" lacks \"%s\"", dd_err_msg(), msg + 1);
  } else {
    assert_string_equal(dd_err_msg(), msg);
  }
}

/* Asserts pbjson_from_msg(m) equals the JSON text want. */
static void assert_emits(const ProtobufCMessage *m, const char *want) {
  json_t *got = pbjson_from_msg(m);
  assert_non_null(got);
  json_t *w = load(want);
  if (!json_equal(got, w)) {
    char *s = json_dumps(got, JSON_SORT_KEYS);
    fail_msg("emitted %s, want %s", s, want);
  }
  json_decref(got);
  json_decref(w);
}

/* Parses text, emits, and compares with text (or with want when not NULL). */
static void round_trip(const ProtobufCMessageDescriptor *desc, const char *text, const char *want) {
  ProtobufCMessage *m = parse_ok(desc, text);
  assert_emits(m, want ? want : text);
  protobuf_c_message_free_unpacked(m, NULL);
}

/* ---- names --------------------------------------------------------------------------- */

static void test_json_name(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(pbjson_json_name("create_at", buf, sizeof buf), "createAt");
  assert_string_equal(pbjson_json_name("name", buf, sizeof buf), "name");
  assert_string_equal(pbjson_json_name("next_page_token", buf, sizeof buf), "nextPageToken");
  assert_string_equal(pbjson_json_name("a__b_c", buf, sizeof buf), "aBC");
  assert_string_equal(pbjson_json_name("x_1", buf, sizeof buf), "x1");
  assert_string_equal(pbjson_json_name("long_name", buf, 5), "long");
  const ProtobufCMessageDescriptor *d = &deltad__catalog__v1__catalog_info__descriptor;
  assert_non_null(pbjson_find_field(d, "createdBy"));
  assert_ptr_equal(pbjson_find_field(d, "created_by"), pbjson_find_field(d, "createdBy"));
  assert_null(pbjson_find_field(d, "createdby"));
  assert_true(pbjson_is_map(pbjson_find_field(d, "properties")));
  assert_false(pbjson_is_map(pbjson_find_field(
      &deltad__catalog__v1__list_catalogs_response__descriptor, "catalogs")));
}

/* ---- emitting ------------------------------------------------------------------------ */

static void test_emit_catalog_info(void **state) {
  (void)state;
  Deltad__Catalog__V1__CatalogInfo ci = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
  Deltad__Catalog__V1__CatalogInfo__PropertiesEntry e1 =
      DELTAD__CATALOG__V1__CATALOG_INFO__PROPERTIES_ENTRY__INIT;
  Deltad__Catalog__V1__CatalogInfo__PropertiesEntry e2 =
      DELTAD__CATALOG__V1__CATALOG_INFO__PROPERTIES_ENTRY__INIT;
  Deltad__Catalog__V1__CatalogInfo__PropertiesEntry *props[] = {&e1, &e2};
  e1.key = "owner";
  e1.value = "data team";
  e2.key = "k";
  e2.value = "";
  ci.name = "main";
  ci.created_by = "admin";
  ci.create_at = 1700000000123;
  ci.update_at = -5;
  ci.n_properties = 2;
  ci.properties = props;
  assert_emits(&ci.base, "{\"name\":\"main\",\"createdBy\":\"admin\",\"createAt\":\"1700000000123\","
                         "\"updateAt\":\"-5\",\"properties\":{\"owner\":\"data team\",\"k\":\"\"}}");
  Deltad__Catalog__V1__CatalogInfo empty = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
  assert_emits(&empty.base, "{}");
}

static void test_emit_enum_and_bad_utf8(void **state) {
  (void)state;
  Deltad__Credentials__V1__StorageLocation sl = DELTAD__CREDENTIALS__V1__STORAGE_LOCATION__INIT;
  sl.type = DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3;
  sl.url = "s3://b/\xff\xc3(x\xe2\x82\xac";
  assert_emits(&sl.base, "{\"type\":\"S3\",\"url\":\"s3://b/\xef\xbf\xbd\xef\xbf\xbd(x\xe2\x82\xac\"}");
  sl.type = 77; /* unknown values stay numbers */
  sl.url = "";
  assert_emits(&sl.base, "{\"type\":77}");
}

static void test_emit_empty_and_any(void **state) {
  (void)state;
  Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
  assert_emits(&e.base, "{}");
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  uint8_t raw[] = {0x08, 0x96, 0x01, 0xff};
  any.type_url = "type.googleapis.com/x.Y";
  any.value.data = raw;
  any.value.len = sizeof raw;
  assert_emits(&any.base, "{\"@type\":\"type.googleapis.com/x.Y\",\"value\":\"CJYB/w==\"}");
  round_trip(&google__protobuf__any__descriptor,
             "{\"@type\":\"type.googleapis.com/x.Y\",\"value\":\"CJYB/w==\"}", NULL);
  round_trip(&google__protobuf__any__descriptor, "{\"value\":\"CJYB_w\"}", "{\"value\":\"CJYB/w==\"}");
  parse_fails(&google__protobuf__any__descriptor, "{\"x\":1}", "~only \"@type\" and \"value\"");
}

/* ---- round trips --------------------------------------------------------------------- */

static void test_round_trip_catalog(void **state) {
  (void)state;
  round_trip(&deltad__catalog__v1__catalog_info__descriptor,
             "{\"id\":\"1\",\"name\":\"main\",\"comment\":\"c\",\"properties\":{\"a\":\"1\",\"b\":\"2\"},"
             "\"owner\":\"o\",\"createAt\":\"1700000000000\",\"createdBy\":\"me\","
             "\"updateAt\":\"9223372036854775807\",\"updatedBy\":\"you\"}",
             NULL);
  /* original names and defaults are accepted; defaults are not emitted */
  round_trip(&deltad__catalog__v1__catalog_info__descriptor,
             "{\"create_at\":12,\"updated_by\":\"\",\"comment\":null,\"properties\":{}}",
             "{\"createAt\":\"12\"}");
  ProtobufCMessage *m = parse_ok(&deltad__catalog__v1__list_catalogs_response__descriptor,
                                 "{\"catalogs\":[{\"name\":\"a\"},{\"name\":\"b\",\"properties\":"
                                 "{\"x\":\"y\"}}],\"nextPageToken\":\"t\"}");
  Deltad__Catalog__V1__ListCatalogsResponse *r = (void *)m;
  assert_int_equal(r->n_catalogs, 2);
  assert_string_equal(r->catalogs[1]->name, "b");
  assert_int_equal(r->catalogs[1]->n_properties, 1);
  assert_string_equal(r->catalogs[1]->properties[0]->key, "x");
  assert_string_equal(r->catalogs[1]->properties[0]->value, "y");
  assert_string_equal(r->next_page_token, "t");
  protobuf_c_message_free_unpacked(m, NULL);
}

static void test_credential_oneofs(void **state) {
  (void)state;
  const char *text = "{\"name\":\"c\",\"azure\":{\"sas\":{\"accountName\":\"acct\",\"sasToken\":\"tok\"}},"
                     "\"createAt\":\"5\"}";
  ProtobufCMessage *m = parse_ok(&deltad__credentials__v1__credential__descriptor, text);
  Deltad__Credentials__V1__Credential *c = (void *)m;
  assert_int_equal(c->credential_case, DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE);
  assert_int_equal(c->azure->credential_case, DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS);
  assert_string_equal(c->azure->sas->account_name, "acct");
  assert_int_equal(c->create_at, 5);
  assert_emits(m, text);
  protobuf_c_message_free_unpacked(m, NULL);
  /* a set member is emitted even when empty */
  round_trip(&deltad__credentials__v1__credential__descriptor, "{\"aws\":{}}", NULL);
  round_trip(&deltad__credentials__v1__credential__descriptor, "{\"aws\":null}", "{}");
  parse_fails(&deltad__credentials__v1__create_credential_request__descriptor,
              "{\"azure\":{\"sas\":{}},\"aws\":{\"region\":\"r\"}}",
              "aws: only one of \"azure\" and \"aws\" may be set (they share a oneof)");
  parse_fails(&deltad__credentials__v1__create_credential_request__descriptor,
              "{\"azure\":{\"sas\":{},\"client\":{\"tenantId\":\"t\"}}}",
              "azure.client: only one of \"sas\" and \"client\" may be set (they share a oneof)");
  parse_fails(&deltad__credentials__v1__create_credential_request__descriptor,
              "{\"azure\":{\"sas\":{\"sasToken\":7}}}", "azure.sas.sasToken: expected string");
  parse_fails(&deltad__credentials__v1__create_credential_request__descriptor,
              "{\"azure\":{\"sas\":{\"bogus\":\"x\"}}}",
              "azure.sas: unknown field \"bogus\" in deltad.credentials.v1.AzureSasCredential");
}

static void test_presence_oneofs(void **state) {
  (void)state;
  ProtobufCMessage *m = parse_ok(&deltad__catalog__v1__update_catalog_request__descriptor,
                                 "{\"name\":\"x\",\"comment\":\"\"}");
  Deltad__Catalog__V1__UpdateCatalogRequest *u = (void *)m;
  assert_int_equal(u->_comment_case, DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT);
  assert_string_equal(u->comment, "");
  assert_int_equal(u->_new_name_case, DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME__NOT_SET);
  assert_emits(m, "{\"name\":\"x\",\"comment\":\"\"}");
  protobuf_c_message_free_unpacked(m, NULL);
  round_trip(&deltad__catalog__v1__update_catalog_request__descriptor,
             "{\"name\":\"x\",\"newName\":\"y\",\"properties\":{\"p\":\"q\"}}", NULL);
  round_trip(&deltad__catalog__v1__update_catalog_request__descriptor, "{\"name\":\"x\"}", NULL);
}

/* Delta Connect: nested oneofs, a `_x` presence oneof holding a double 0, maps. */
static void test_delta_connect(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *d = &delta__connect__delta_command__descriptor;
  const char *text = "{\"vacuumTable\":{\"table\":{\"path\":{\"path\":\"/t\",\"hadoopConf\":"
                     "{\"k\":\"v\"}}},\"retentionHours\":0.0}}";
  ProtobufCMessage *m = parse_ok(d, text);
  Delta__Connect__DeltaCommand *c = (void *)m;
  assert_int_equal(c->command_type_case, DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE);
  assert_int_equal(c->vacuum_table->_retention_hours_case,
                   DELTA__CONNECT__VACUUM_TABLE___RETENTION_HOURS_RETENTION_HOURS);
  assert_true(c->vacuum_table->retention_hours == 0.0);
  assert_emits(m, text);
  protobuf_c_message_free_unpacked(m, NULL);
  round_trip(d, "{\"vacuumTable\":{\"table\":{\"tableOrViewName\":\"a.b.c\"}}}", NULL);
  parse_fails(d, "{\"vacuumTable\":{},\"cloneTable\":{}}", "~may be set (they share a oneof)");
  parse_fails(d, "{\"vacuumTable\":{\"retentionHours\":\"soon\"}}",
              "vacuumTable.retentionHours: expected number, got \"soon\"");
}

static void test_enums(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *d = &deltad__credentials__v1__create_storage_location_request__descriptor;
  ProtobufCMessage *m = parse_ok(d, "{\"type\":\"AZURE\"}");
  assert_int_equal(((Deltad__Credentials__V1__CreateStorageLocationRequest *)m)->type,
                   DELTAD__CREDENTIALS__V1__STORAGE_TYPE__AZURE);
  protobuf_c_message_free_unpacked(m, NULL);
  round_trip(d, "{\"type\":2}", "{\"type\":\"S3\"}");
  round_trip(d, "{\"type\":1234}", NULL);
  round_trip(d, "{\"type\":\"STORAGE_TYPE_UNSPECIFIED\"}", "{}");
  parse_fails(d, "{\"type\":\"s3\"}",
              "type: unknown value \"s3\" for enum deltad.credentials.v1.StorageType");
  parse_fails(d, "{\"type\":true}",
              "type: expected enum name or number for deltad.credentials.v1.StorageType");
  parse_fails(d, "{\"type\":4294967296}", "type: enum value out of range");
}

/* ---- numbers ------------------------------------------------------------------------- */

static void test_int32_and_int64(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *l = &deltad__catalog__v1__list_catalogs_request__descriptor;
  round_trip(l, "{\"maxResults\":5}", NULL);
  round_trip(l, "{\"maxResults\":\"5\"}", "{\"maxResults\":5}");
  round_trip(l, "{\"maxResults\":5.0}", "{\"maxResults\":5}");
  round_trip(l, "{\"maxResults\":-2147483648}", NULL);
  parse_fails(l, "{\"maxResults\":2147483648}", "~maxResults: expected 32-bit integer");
  parse_fails(l, "{\"maxResults\":5.5}", "maxResults: expected integer, got 5.5");
  parse_fails(l, "{\"maxResults\":\"5x\"}", "maxResults: expected 32-bit integer, got \"5x\"");
  parse_fails(l, "{\"maxResults\":\" 5\"}", "~expected 32-bit integer");
  parse_fails(l, "{\"maxResults\":\"\"}", "~expected 32-bit integer");
  parse_fails(l, "{\"maxResults\":true}", "maxResults: expected integer");
  parse_fails(l, "{\"maxResults\":[1]}", "maxResults: expected integer");
  parse_fails(l, "{\"pageToken\":5}", "pageToken: expected string");
  const ProtobufCMessageDescriptor *c = &deltad__catalog__v1__catalog_info__descriptor;
  round_trip(c, "{\"createAt\":1}", "{\"createAt\":\"1\"}");
  round_trip(c, "{\"createAt\":\"-9223372036854775808\"}", NULL);
  round_trip(c, "{\"createAt\":1e3}", "{\"createAt\":\"1000\"}");
  parse_fails(c, "{\"createAt\":\"9223372036854775808\"}", "~createAt: expected 64-bit integer");
  parse_fails(c, "{\"createAt\":\"1.5\"}", "~createAt: expected 64-bit integer");
  parse_fails(c, "{\"createAt\":1.5}", "~createAt: expected integer");
  parse_fails(c, "{\"createAt\":1e300}", "~createAt: expected integer");
  parse_fails(c, "{\"createAt\":{}}", "createAt: expected integer");
}

static void test_proto2_double_uint64_bytes(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *d = &google__protobuf__uninterpreted_option__descriptor;
  round_trip(d, "{\"positiveIntValue\":\"18446744073709551615\",\"negativeIntValue\":\"0\","
                "\"doubleValue\":0.0,\"stringValue\":\"\",\"identifierValue\":\"\"}", NULL);
  round_trip(d, "{\"doubleValue\":\"NaN\"}", NULL);
  round_trip(d, "{\"doubleValue\":\"-Infinity\"}", NULL);
  round_trip(d, "{\"doubleValue\":\"2.5\"}", "{\"doubleValue\":2.5}");
  round_trip(d, "{\"doubleValue\":1}", "{\"doubleValue\":1.0}");
  round_trip(d, "{\"stringValue\":\"aGVsbG8\"}", "{\"stringValue\":\"aGVsbG8=\"}");
  ProtobufCMessage *m = parse_ok(d, "{\"stringValue\":\"-_8=\",\"name\":[{\"namePart\":\"a\",\"isExtension\":true}]}");
  Google__Protobuf__UninterpretedOption *u = (void *)m;
  assert_true(u->has_string_value);
  assert_int_equal(u->string_value.len, 2);
  assert_int_equal(u->string_value.data[0], 0xfb);
  assert_int_equal(u->string_value.data[1], 0xff);
  assert_false(u->has_double_value);
  assert_int_equal(u->n_name, 1);
  assert_true(u->name[0]->is_extension);
  protobuf_c_message_free_unpacked(m, NULL);
  parse_fails(d, "{\"positiveIntValue\":\"-1\"}", "~positiveIntValue: expected unsigned 64-bit");
  parse_fails(d, "{\"positiveIntValue\":-1}", "~positiveIntValue: expected unsigned 64-bit");
  parse_fails(d, "{\"doubleValue\":\"inf\"}", "~doubleValue: expected number");
  parse_fails(d, "{\"doubleValue\":\"1e999\"}", "~doubleValue: expected number");
  parse_fails(d, "{\"doubleValue\":false}", "doubleValue: expected number");
  parse_fails(d, "{\"stringValue\":\"a$==\"}", "stringValue: invalid base64");
  parse_fails(d, "{\"stringValue\":\"a\"}", "stringValue: invalid base64");
  parse_fails(d, "{\"stringValue\":1}", "stringValue: expected base64 string");
  parse_fails(d, "{\"name\":[{\"namePart\":\"a\"},{\"isExtension\":\"yes\"}]}",
              "name[1].isExtension: expected boolean");
  parse_fails(d, "{\"name\":[null]}", "name[0]: null is not allowed in a list");
  parse_fails(d, "{\"name\":{}}", "name: expected array");
}

/* ---- structural errors --------------------------------------------------------------- */

static void test_errors(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *cc = &deltad__catalog__v1__create_catalog_request__descriptor;
  parse_fails(cc, "{\"x\":1}", "unknown field \"x\" in deltad.catalog.v1.CreateCatalogRequest");
  parse_fails(cc, "{\"Name\":\"a\"}", "unknown field \"Name\" in deltad.catalog.v1.CreateCatalogRequest");
  parse_fails(cc, "[]", "expected object (deltad.catalog.v1.CreateCatalogRequest)");
  parse_fails(cc, "\"s\"", "expected object (deltad.catalog.v1.CreateCatalogRequest)");
  parse_fails(cc, "{\"properties\":{\"owner\":5}}", "properties.owner: expected string");
  parse_fails(cc, "{\"properties\":{\"owner\":null}}", "properties.owner: null is not allowed as a map value");
  parse_fails(cc, "{\"properties\":[]}", "properties: expected object (a map)");
  const ProtobufCMessageDescriptor *dc = &deltad__catalog__v1__delete_catalog_request__descriptor;
  parse_fails(dc, "{\"force\":\"true\"}", "force: expected boolean");
  parse_fails(dc, "{\"force\":1}", "force: expected boolean");
  const ProtobufCMessageDescriptor *lc = &deltad__catalog__v1__list_catalogs_request__descriptor;
  parse_fails(lc, "{\"maxResults\":1,\"max_results\":2}", "field \"max_results\" given twice");
  parse_fails(&deltad__catalog__v1__list_catalogs_response__descriptor,
              "{\"catalogs\":[{\"name\":\"a\"},{\"properties\":{\"k\":{}}}]}",
              "catalogs[1].properties.k: expected string");
  /* a string holding NUL cannot become a C string */
  json_t *j = json_pack("{s:s#}", "name", "a\0b", (int)3);
  ProtobufCMessage *m = NULL;
  assert_int_equal(pbjson_to_msg(&m, cc, j), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: string contains NUL");
  json_decref(j);
}

static void test_deep_nesting(void **state) {
  (void)state;
  /* DescriptorProto nests itself: 100 levels must be refused, not overflow the stack. */
  char text[4096] = "";
  for (int i = 0; i < 100; i++) strcat(text, "{\"nestedType\":[");
  strcat(text, "{}");
  for (int i = 0; i < 100; i++) strcat(text, "]}");
  parse_fails(&google__protobuf__descriptor_proto__descriptor, text, "~nested too deep");
}

/* ---- URL text ------------------------------------------------------------------------ */

static void test_set_path_field(void **state) {
  (void)state;
  Deltad__Catalog__V1__ListCatalogsRequest *l = NULL;
  json_t *empty = json_object();
  assert_int_equal(pbjson_to_msg((ProtobufCMessage **)&l, &deltad__catalog__v1__list_catalogs_request__descriptor, empty), 0);
  assert_int_equal(pbjson_set_path_field(&l->base, "maxResults", "5"), 0);
  assert_int_equal(l->max_results, 5);
  assert_int_equal(pbjson_set_path_field(&l->base, "page_token", "x y"), 0);
  assert_int_equal(pbjson_set_path_field(&l->base, "page_token", "again"), 0); /* old freed */
  assert_string_equal(l->page_token, "again");
  assert_int_equal(pbjson_set_path_field(&l->base, "maxResults", "five"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "maxResults: expected 32-bit integer, got \"five\"");
  assert_int_equal(pbjson_set_path_field(&l->base, "nope", "1"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "unknown field \"nope\" in deltad.catalog.v1.ListCatalogsRequest");
  assert_int_equal(pbjson_set_path_field(&l->base, "pageToken.x", "1"), DD_EINVAL);
  assert_int_equal(pbjson_set_path_field(&l->base, "", "1"), DD_EINVAL);
  assert_int_equal(pbjson_set_path_field(&l->base, "a..b", "1"), DD_EINVAL);
  char buf[64];
  assert_int_equal(pbjson_get_path_field(&l->base, "maxResults", buf, sizeof buf), 0);
  assert_string_equal(buf, "5");
  assert_int_equal(pbjson_get_path_field(&l->base, "pageToken", buf, 3), DD_ERANGE);
  protobuf_c_message_free_unpacked(&l->base, NULL);

  Deltad__Catalog__V1__DeleteCatalogRequest *d = NULL;
  assert_int_equal(pbjson_to_msg((ProtobufCMessage **)&d, &deltad__catalog__v1__delete_catalog_request__descriptor, empty), 0);
  assert_int_equal(pbjson_get_path_field(&d->base, "force", buf, sizeof buf), DD_ENOTFOUND);
  assert_int_equal(pbjson_set_path_field(&d->base, "force", "1"), 0);
  assert_true(d->force);
  assert_int_equal(pbjson_get_path_field(&d->base, "force", buf, sizeof buf), 0);
  assert_string_equal(buf, "true");
  assert_int_equal(pbjson_set_path_field(&d->base, "force", "false"), 0);
  assert_false(d->force);
  assert_int_equal(pbjson_set_path_field(&d->base, "force", "yes"), DD_EINVAL);
  protobuf_c_message_free_unpacked(&d->base, NULL);
  json_decref(empty);
}

static void test_set_path_nested_oneof_enum(void **state) {
  (void)state;
  ProtobufCMessage *m = parse_ok(&deltad__credentials__v1__create_credential_request__descriptor, "{}");
  Deltad__Credentials__V1__CreateCredentialRequest *c = (void *)m;
  char buf[64];
  assert_int_equal(pbjson_get_path_field(m, "azure.sas.accountName", buf, sizeof buf), DD_ENOTFOUND);
  assert_int_equal(pbjson_set_path_field(m, "azure.sas.accountName", "acct"), 0);
  assert_int_equal(pbjson_set_path_field(m, "azure.sas.sas_token", "t1"), 0);
  assert_int_equal(c->credential_case, DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE);
  assert_string_equal(c->azure->sas->account_name, "acct");
  assert_int_equal(pbjson_get_path_field(m, "azure.sas.accountName", buf, sizeof buf), 0);
  assert_string_equal(buf, "acct");
  assert_int_equal(pbjson_get_path_field(m, "azure.accountKey.accountName", buf, sizeof buf), DD_ENOTFOUND);
  assert_int_equal(pbjson_set_path_field(m, "aws.region", "r"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "aws: only one of \"azure\" and \"aws\" may be set (they share a oneof)");
  assert_int_equal(pbjson_set_path_field(m, "azure.client.tenantId", "t"), DD_EINVAL);
  assert_int_equal(pbjson_set_path_field(m, "azure", "x"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "azure: is a message; name one of its fields");
  assert_emits(m, "{\"azure\":{\"sas\":{\"accountName\":\"acct\",\"sasToken\":\"t1\"}}}");
  protobuf_c_message_free_unpacked(m, NULL);

  m = parse_ok(&deltad__catalog__v1__update_catalog_request__descriptor, "{\"comment\":\"a\"}");
  assert_int_equal(pbjson_set_path_field(m, "comment", "b"), 0); /* replaces, frees "a" */
  assert_int_equal(pbjson_set_path_field(m, "new_name", ""), 0);
  assert_emits(m, "{\"comment\":\"b\",\"newName\":\"\"}");
  assert_int_equal(pbjson_get_path_field(m, "newName", buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  protobuf_c_message_free_unpacked(m, NULL);

  m = parse_ok(&deltad__credentials__v1__create_storage_location_request__descriptor, "{}");
  assert_int_equal(pbjson_set_path_field(m, "type", "GCS"), 0);
  assert_int_equal(pbjson_get_path_field(m, "type", buf, sizeof buf), 0);
  assert_string_equal(buf, "GCS");
  assert_int_equal(pbjson_set_path_field(m, "type", "3"), 0);
  assert_int_equal(((Deltad__Credentials__V1__CreateStorageLocationRequest *)m)->type, 3);
  assert_int_equal(pbjson_set_path_field(m, "type", "gcs"), DD_EINVAL);
  assert_int_equal(pbjson_set_path_field(m, "properties", "x"), DD_EINVAL);
  protobuf_c_message_free_unpacked(m, NULL);
}

static void test_set_path_repeated(void **state) {
  (void)state;
  ProtobufCMessage *m = parse_ok(&google__protobuf__file_descriptor_proto__descriptor,
                                 "{\"dependency\":[\"a\"]}");
  Google__Protobuf__FileDescriptorProto *f = (void *)m;
  assert_int_equal(pbjson_set_path_field(m, "dependency", "b"), 0);
  assert_int_equal(pbjson_set_path_field(m, "publicDependency", "3"), 0);
  assert_int_equal(pbjson_set_path_field(m, "publicDependency", "4"), 0);
  assert_int_equal(pbjson_set_path_field(m, "publicDependency", "x"), DD_EINVAL);
  assert_int_equal(pbjson_set_path_field(m, "options.javaPackage", "p"), 0);
  assert_int_equal(pbjson_set_path_field(m, "options.optimize_for", "SPEED"), 0);
  assert_int_equal(f->n_dependency, 2);
  assert_string_equal(f->dependency[1], "b");
  assert_true(f->options->has_optimize_for);
  assert_emits(m, "{\"dependency\":[\"a\",\"b\"],\"publicDependency\":[3,4],"
                  "\"options\":{\"javaPackage\":\"p\",\"optimizeFor\":\"SPEED\"}}");
  protobuf_c_message_free_unpacked(m, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_name),
      cmocka_unit_test(test_emit_catalog_info),
      cmocka_unit_test(test_emit_enum_and_bad_utf8),
      cmocka_unit_test(test_emit_empty_and_any),
      cmocka_unit_test(test_round_trip_catalog),
      cmocka_unit_test(test_credential_oneofs),
      cmocka_unit_test(test_presence_oneofs),
      cmocka_unit_test(test_enums),
      cmocka_unit_test(test_delta_connect),
      cmocka_unit_test(test_int32_and_int64),
      cmocka_unit_test(test_proto2_double_uint64_bytes),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_set_path_field),
      cmocka_unit_test(test_set_path_nested_oneof_enum),
      cmocka_unit_test(test_set_path_repeated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
