/* deltactl_tablereg.c: the catalog verbs of `deltactl table` over deltad.tables.v1.
 * TablesService: register (EXTERNAL at a location, or --managed under the schema's storage
 * root), get, list, update (without --set: rename, comment, owner, properties; with --set it
 * is the DML update of deltactl_dml.c), drop, undrop, dropped and credentials (temporary
 * credentials for the table's files). Tables are named
 * CATALOG.SCHEMA.TABLE. */
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_tableops.h"
#include "deltad/tables/v1/tables.pb-c.h"

#define TR_SVC "/deltad.tables.v1.TablesService/"

static const dctl_col tr__cols[] = {
    {"NAME", "full_name", NULL},           {"TYPE", "table_type", NULL},
    {"LOCATION", "storage_location", NULL}, {"ID", "table_id", NULL},
    {"COMMENT", "comment", NULL},          {NULL, NULL, NULL},
};

static int tr__print_free(int rc, ProtobufCMessage *resp) {
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static const char TR_REGISTER_USAGE[] =
    "usage: deltactl table register CATALOG.SCHEMA.TABLE LOCATION [--comment C] [--property K=V ...]\n"
    "       deltactl table register CATALOG.SCHEMA.TABLE --managed --column NAME:TYPE[:not null] ...\n"
    "                [--partition COL ...] [--comment C] [--property K=V ...]\n"
    "  Registers the Delta table at LOCATION (a path or URL under a storage location) as an\n"
    "  EXTERNAL table, or creates an empty MANAGED table under the schema's (or catalog's)\n"
    "  storage root.\n";

/* NAME:TYPE[:not null] into a column (pointers into a copy kept by the caller). */
static int tr__column(Deltad__Tables__V1__ColumnInfo *c, char *spec) {
  deltad__tables__v1__column_info__init(c);
  char *colon = strchr(spec, ':');
  if (!colon) return dctl_usage_error(TR_REGISTER_USAGE, "--column wants NAME:TYPE, not '%s'", spec);
  *colon = '\0';
  char *type = colon + 1, *nn = strrchr(type, ':');
  c->nullable = true;
  if (nn && !strcasecmp(nn + 1, "not null")) {
    *nn = '\0';
    c->nullable = false;
  }
  c->name = spec;
  c->type_text = type;
  return 0;
}

static int tr_register(int argc, char **argv) {
  const char *comment = NULL, *pos[2];
  int managed = 0, npos;
  dctl_strv props = {.n = 0}, cols = {.n = 0}, parts = {.n = 0};
  const dctl_opt opts[] = {{"--comment", 1, &comment, NULL, NULL},   {"--property", 1, NULL, NULL, &props},
                           {"--managed", 0, NULL, &managed, NULL},   {"--column", 1, NULL, NULL, &cols},
                           {"--partition", 1, NULL, NULL, &parts},   {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {TR_REGISTER_USAGE, opts, 1, 2};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (managed == (npos == 2)) return dctl_usage_error(TR_REGISTER_USAGE, "give a LOCATION or --managed");
  char *full = strdup(pos[0]), *a = full ? strchr(full, '.') : NULL, *b = a ? strchr(a + 1, '.') : NULL;
  if (!b) {
    free(full);
    return dctl_usage_error(TR_REGISTER_USAGE, "'%s' is not CATALOG.SCHEMA.TABLE", pos[0]);
  }
  *a = *b = '\0';
  Deltad__Tables__V1__CreateTableRequest req = DELTAD__TABLES__V1__CREATE_TABLE_REQUEST__INIT;
  req.catalog_name = full;
  req.schema_name = a + 1;
  req.name = b + 1;
  req.table_type = managed ? "MANAGED" : "EXTERNAL";
  char *loc = npos == 2 ? dctl_tbl_abs_path(pos[1]) : NULL;
  if (loc) req.storage_location = loc;
  if (comment) req.comment = (char *)comment;
  Deltad__Tables__V1__ColumnInfo *cv = calloc(cols.n + 1, sizeof *cv), **cp = calloc(cols.n + 1, sizeof *cp);
  char **hold = calloc(cols.n + 1, sizeof *hold);
  void *block = NULL;
  rc = cv && cp && hold ? 0 : dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  for (size_t i = 0; !rc && i < cols.n; i++) {
    if (!(hold[i] = strdup(cols.v[i]))) rc = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    else rc = tr__column(&cv[i], hold[i]);
    cp[i] = &cv[i];
  }
  req.n_columns = cols.n;
  req.columns = cp;
  req.n_partition_columns = parts.n;
  req.partition_columns = (char **)parts.v;
  if (!rc) rc = dctl_set_map(&req.base, "properties", &props, &block);
  ProtobufCMessage *resp = NULL;
  if (!rc) rc = dctl_call(TR_SVC "CreateTable", &req.base, &deltad__tables__v1__table_info__descriptor, &resp);
  for (size_t i = 0; hold && i < cols.n; i++) free(hold[i]);
  free(hold);
  free(cv);
  free(cp);
  free(block);
  free(loc);
  free(full);
  return rc ? rc : tr__print_free(rc, resp);
}

static int tr_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl table get CATALOG.SCHEMA.TABLE\n"
      "  Shows a catalog table: its record and its current Delta schema, partitioning,\n"
      "  properties and version.\n",
      TR_SVC "GetTable", &deltad__tables__v1__get_table_request__descriptor,
      &deltad__tables__v1__table_info__descriptor, "full_name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int tr_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl table list CATALOG.SCHEMA [--max-results N] [--page-token T] [--all]\n"
      "  Lists the Delta tables of a schema: one page, or every page with --all.\n",
      TR_SVC "ListTables", &deltad__tables__v1__list_tables_request__descriptor,
      &deltad__tables__v1__list_tables_response__descriptor, "catalog_name", "tables", tr__cols,
      "schema_name"};
  return dctl_run_list(&spec, argc, argv);
}

static int tr_dropped(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl table dropped CATALOG.SCHEMA\n"
      "  Lists the dropped MANAGED tables of a schema that can still be undropped.\n",
      TR_SVC "ListDroppedTables", &deltad__tables__v1__list_dropped_tables_request__descriptor,
      &deltad__tables__v1__list_tables_response__descriptor, "catalog_name", "tables", tr__cols,
      "schema_name"};
  return dctl_run_list(&spec, argc, argv);
}

static int tr_update(int argc, char **argv) {
  const char *comment = NULL, *new_name = NULL, *owner = NULL, *pos[1];
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--new-name", 1, &new_name, NULL, NULL}, {"--comment", 1, &comment, NULL, NULL},
                           {"--owner", 1, &owner, NULL, NULL},       {"--property", 1, NULL, NULL, &props},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl table update CATALOG.SCHEMA.TABLE [--new-name N] [--comment C]\n"
                        "                [--owner O] [--property K=V ...]\n"
                        "  Changes a catalog table's record (N is the new table name, same schema;\n"
                        "  given properties replace all of its properties). With --set this verb is\n"
                        "  the DML UPDATE instead (see 'deltactl table update --set').\n",
                        opts, 1, 1};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Tables__V1__UpdateTableRequest req = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST__INIT;
  req.full_name = (char *)pos[0];
  if (new_name) {
    req._new_name_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___NEW_NAME_NEW_NAME;
    req.new_name = (char *)new_name;
  }
  if (comment) {
    req._comment_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___COMMENT_COMMENT;
    req.comment = (char *)comment;
  }
  if (owner) {
    req._owner_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___OWNER_OWNER;
    req.owner = (char *)owner;
  }
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(TR_SVC "UpdateTable", &req.base, &deltad__tables__v1__table_info__descriptor, &resp);
  free(block);
  return tr__print_free(rc, resp);
}

static int tr_drop(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl table drop CATALOG.SCHEMA.TABLE\n"
      "  Drops a catalog table: an EXTERNAL one is deregistered (its data stays); a MANAGED\n"
      "  one can be undropped until the server's managed-table retention passes, then its\n"
      "  data is deleted.\n",
      TR_SVC "DeleteTable", &deltad__tables__v1__delete_table_request__descriptor,
      &google__protobuf__empty__descriptor, "full_name", "dropped table %s", 0};
  return dctl_run_named(&spec, argc, argv);
}

static int tr_undrop(int argc, char **argv) {
  const char *id = NULL, *pos[1];
  const dctl_opt opts[] = {{"--id", 1, &id, NULL, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl table undrop CATALOG.SCHEMA.TABLE [--id TABLE_ID]\n"
                        "  Brings back a dropped MANAGED table (the newest dropped with that name,\n"
                        "  or the one with --id).\n",
                        opts, 1, 1};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Tables__V1__UndropTableRequest req = DELTAD__TABLES__V1__UNDROP_TABLE_REQUEST__INIT;
  req.full_name = (char *)pos[0];
  if (id) req.table_id = (char *)id;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(TR_SVC "UndropTable", &req.base, &deltad__tables__v1__table_info__descriptor, &resp);
  return tr__print_free(rc, resp);
}

static int tr_credentials(int argc, char **argv) {
  const char *pos[1];
  int write = 0, npos;
  const dctl_opt opts[] = {{"--write", 0, NULL, &write, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl table credentials CATALOG.SCHEMA.TABLE [--write]\n"
                        "  Issues temporary credentials for reading the table's files directly (an\n"
                        "  S3 session of the location credential's role, scoped to the table's\n"
                        "  prefix; --write also allows puts and deletes there). They are secrets.\n",
                        opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Tables__V1__GetTableRequest get = DELTAD__TABLES__V1__GET_TABLE_REQUEST__INIT;
  get.full_name = (char *)pos[0];
  ProtobufCMessage *info = NULL, *resp = NULL;
  rc = dctl_call(TR_SVC "GetTable", &get.base, &deltad__tables__v1__table_info__descriptor, &info);
  if (!rc) {
    Deltad__Tables__V1__GenerateTemporaryTableCredentialRequest req =
        DELTAD__TABLES__V1__GENERATE_TEMPORARY_TABLE_CREDENTIAL_REQUEST__INIT;
    req.table_id = ((Deltad__Tables__V1__TableInfo *)info)->table_id;
    req.operation = write ? "READ_WRITE" : "READ";
    rc = dctl_call(TR_SVC "GenerateTemporaryTableCredential", &req.base,
                   &deltad__tables__v1__temporary_credentials__descriptor, &resp);
  }
  if (info) protobuf_c_message_free_unpacked(info, NULL);
  if (rc) return rc;
  return tr__print_free(rc, resp);
}

static const dctl_verb tr__verbs[] = {
    {"register", tr_register, "register an EXTERNAL Delta table, or create a MANAGED one"},
    {"get", tr_get, "show a catalog table with its current Delta schema"},
    {"list", tr_list, "list the Delta tables of a schema"},
    {"update", tr_update, "rename a catalog table or change its comment, owner or properties"},
    {"drop", tr_drop, "drop a catalog table"},
    {"undrop", tr_undrop, "bring back a dropped MANAGED table"},
    {"dropped", tr_dropped, "list dropped MANAGED tables"},
    {"credentials", tr_credentials, "issue temporary credentials for a table in S3"},
    {NULL, NULL, NULL},
};

bool dctl_tablereg_has_verb(const char *verb, int argc, char **argv) {
  if (!strcmp(verb, "update")) { /* DML when it sets columns */
    for (int i = 0; i < argc; i++)
      if (!strcmp(argv[i], "--set") || !strncmp(argv[i], "--set=", 6) || !strcmp(argv[i], "--where")) return false;
    return true;
  }
  for (const dctl_verb *v = tr__verbs; v->name; v++)
    if (!strcmp(v->name, verb)) return true;
  return false;
}

int dctl_tablereg_main(int argc, char **argv) {
  return dctl_group_run("table", "Delta tables in the catalog.", tr__verbs, argc, argv);
}
