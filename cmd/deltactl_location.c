/* deltactl_location.c: `deltactl location list|create|get|delete`, over the storage
 * location methods of deltad.credentials.v1.CredentialService. */
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/credentials/v1/credentials.pb-c.h"

#define LOC_SVC "/deltad.credentials.v1.CredentialService/"

static const dctl_col loc__cols[] = {
    {"NAME", "name", NULL},       {"TYPE", "type", NULL},      {"URL", "url", NULL},
    {"CREDENTIAL", "credential", NULL}, {"CREATED", "create_at", NULL}, {NULL, NULL, NULL},
};

static int loc_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl location list [--max-results N] [--page-token T] [--all]\n"
      "  Lists storage locations.\n",
      LOC_SVC "ListStorageLocations", &deltad__credentials__v1__list_storage_locations_request__descriptor,
      &deltad__credentials__v1__list_storage_locations_response__descriptor, NULL,
      "storage_locations", loc__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

/* local|s3|azure|gcs -> StorageType; -1 when unknown. */
static int loc__type(const char *s) {
  static const struct {
    const char *name;
    int type;
  } types[] = {{"local", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL},
               {"s3", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3},
               {"azure", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__AZURE},
               {"gcs", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(types[i].name, s) == 0) return types[i].type;
  return -1;
}

/* The --type a URL's scheme implies (file, s3, abfss/az, gs); NULL when none does. */
static const char *loc__scheme_type(const char *url) {
  static const struct {
    const char *prefix, *type;
  } schemes[] = {{"file:", "local"},     {"/", "local"},      {"s3://", "s3"},   {"s3a://", "s3"},
                 {"abfss://", "azure"}, {"abfs://", "azure"}, {"az://", "azure"}, {"wasbs://", "azure"},
                 {"gs://", "gcs"}};
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
    if (!strncmp(url, schemes[i].prefix, strlen(schemes[i].prefix))) return schemes[i].type;
  return NULL;
}

static int loc_create(int argc, char **argv) {
  const char *type = NULL, *cred = NULL, *desc = NULL, *pos[2];
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--type", 1, &type, NULL, NULL},
                           {"--credential", 1, &cred, NULL, NULL},
                           {"--description", 1, &desc, NULL, NULL},
                           {"--property", 1, NULL, NULL, &props},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl location create NAME URL [--type local|s3|azure|gcs]\n"
                        "         [--credential C] [--description D] [--property K=V ...]\n"
                        "  Registers a storage location; C names the credential that reaches it.\n"
                        "  --type defaults to the URL's scheme: file:// local, s3:// s3, abfss:// azure,\n"
                        "  gs:// gcs.\n",
                        opts, 2, 2};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (!type) type = loc__scheme_type(pos[1]);
  if (!type) return dctl_usage_error(cmd.usage, "--type is required: the URL's scheme does not say it");
  int t = loc__type(type);
  if (t < 0) return dctl_usage_error(cmd.usage, "unknown --type '%s'", type);
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  req.name = (char *)pos[0];
  req.url = (char *)pos[1];
  req.type = (Deltad__Credentials__V1__StorageType)t;
  if (cred) req.credential = (char *)cred;
  if (desc) req.description = (char *)desc;
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(LOC_SVC "CreateStorageLocation", &req.base,
                 &deltad__credentials__v1__storage_location__descriptor, &resp);
  free(block);
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static int loc_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl location get NAME\n  Shows a storage location.\n",
      LOC_SVC "GetStorageLocation", &deltad__credentials__v1__get_storage_location_request__descriptor,
      &deltad__credentials__v1__storage_location__descriptor, "name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int loc_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl location delete NAME\n  Deletes a storage location.\n",
      LOC_SVC "DeleteStorageLocation", &deltad__credentials__v1__delete_storage_location_request__descriptor,
      &google__protobuf__empty__descriptor, "name", "deleted location %s", 0};
  return dctl_run_named(&spec, argc, argv);
}

static const dctl_verb loc__verbs[] = {
    {"list", loc_list, "list storage locations"},
    {"create", loc_create, "register a storage location"},
    {"get", loc_get, "show a storage location"},
    {"delete", loc_delete, "delete a storage location"},
    {NULL, NULL, NULL},
};

int dctl_location_main(int argc, char **argv) {
  return dctl_group_run("location", "Manage storage locations (where table data lives).", loc__verbs, argc, argv);
}
