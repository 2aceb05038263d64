/* deltactl_share.c: `deltactl share ...`, `deltactl recipient ...` and `deltactl grant
 * ...`, over deltad.sharing.v1.DeltaSharingExtensionService: shares with their schemas and
 * tables, recipients (create writes the profile file a Delta Sharing client reads) and
 * grants of shares to recipients. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/sharing/v1/sharing.pb-c.h"

#define SHX "/deltad.sharing.v1.DeltaSharingExtensionService/"
#define SHD(x) (&deltad__sharing__v1__##x##__descriptor)

/* Calls method with req and prints the reply (or done text for Empty replies). */
static int sh__call(const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *rd, const char *done, const char *name) {
  ProtobufCMessage *resp = NULL;
  int rc = dctl_call(method, req, rd, &resp);
  if (!rc) rc = done ? dctl_print_done(done, name) : dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

/* ---- share ------------------------------------------------------------------------------- */

static const dctl_col sh__cols[] = {
    {"NAME", "name", NULL}, {"ID", "id", NULL}, {"DESCRIPTION", "description", NULL},
    {"CREATED", "created_at", NULL}, {NULL, NULL, NULL}};

static int share_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl share list [--max-results N] [--page-token T] [--all]\n"
      "  Lists shares.\n",
      SHX "ListShareInfos", SHD(list_share_infos_request), SHD(list_share_infos_response),
      NULL, "shares", sh__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

static int share_create(int argc, char **argv) {
  static const char usage[] = "usage: deltactl share create NAME [--description D]\n";
  const char *pos[1], *desc = NULL;
  int npos;
  const dctl_opt opts[] = {{"--description", 1, &desc, NULL, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__CreateShareRequest req = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (desc) req.description = (char *)desc;
  return sh__call(SHX "CreateShare", &req.base, SHD(share_info), NULL, NULL);
}

static int share_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl share get NAME\n  Shows a share with its schemas and tables.\n",
      SHX "GetShareInfo", SHD(get_share_info_request), SHD(share_info), "name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int share_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl share delete NAME [--force]\n  Deletes a share (and its grants).\n",
      SHX "DeleteShare", SHD(delete_share_request), &google__protobuf__empty__descriptor, "name",
      "deleted share %s", 1};
  return dctl_run_named(&spec, argc, argv);
}

static int share_add_schema(int argc, char **argv) {
  static const char usage[] = "usage: deltactl share add-schema SHARE SCHEMA\n";
  const char *pos[2];
  int npos;
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 2, 2};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__CreateSharingSchemaRequest req =
      DELTAD__SHARING__V1__CREATE_SHARING_SCHEMA_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.name = (char *)pos[1];
  return sh__call(SHX "CreateSharingSchema", &req.base, SHD(sharing_schema_info), NULL, NULL);
}

static int share_remove_schema(int argc, char **argv) {
  static const char usage[] = "usage: deltactl share remove-schema SHARE SCHEMA [--force]\n";
  const char *pos[2];
  int npos, force = 0;
  const dctl_opt opts[] = {{"--force", 0, NULL, &force, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 2, 2};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__DeleteSharingSchemaRequest req =
      DELTAD__SHARING__V1__DELETE_SHARING_SCHEMA_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.name = (char *)pos[1];
  req.force = force;
  return sh__call(SHX "DeleteSharingSchema", &req.base, &google__protobuf__empty__descriptor,
                  "removed schema %s", pos[1]);
}

static const char sh__add_table_usage[] =
    "usage: deltactl share add-table SHARE SCHEMA TABLE (--url URL | --location LOC [--path P] |\n"
    "         --table CATALOG.SCHEMA.TABLE) [--history] [--start-version N] [--comment C]\n"
    "  Shares a Delta table: by URL (file:///..., or an absolute path), storage location\n"
    "  + path, or a catalog table (its registered location). The table must exist (a\n"
    "  _delta_log) when it is added.\n"
    "  --history shares its history (time travel, startingVersion, change data feed).\n";

static int share_add_table(int argc, char **argv) {
  const char *pos[3], *url = NULL, *loc = NULL, *path = NULL, *sv = NULL, *comment = NULL, *tbl = NULL;
  int npos, hist = 0;
  const dctl_opt opts[] = {{"--url", 1, &url, NULL, NULL},       {"--location", 1, &loc, NULL, NULL},
                           {"--path", 1, &path, NULL, NULL},     {"--history", 0, NULL, &hist, NULL},
                           {"--start-version", 1, &sv, NULL, NULL}, {"--comment", 1, &comment, NULL, NULL},
                           {"--table", 1, &tbl, NULL, NULL},     {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {sh__add_table_usage, opts, 3, 3};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (!!url + !!loc + !!tbl != 1)
    return dctl_usage_error(sh__add_table_usage, "give one of --url, --location or --table");
  Deltad__Sharing__V1__AddTableRequest req = DELTAD__SHARING__V1__ADD_TABLE_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.schema = (char *)pos[1];
  req.name = (char *)pos[2];
  char *file_url = NULL; /* an absolute path is a file:// URL */
  if (url && url[0] == '/' && asprintf(&file_url, "file://%s", url) < 0)
    return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  if (url) req.url = file_url ? file_url : (char *)url;
  if (loc) req.location = (char *)loc;
  if (tbl) req.table = (char *)tbl;
  if (path) req.path = (char *)path;
  if (comment) req.comment = (char *)comment;
  req.history_shared = hist;
  if (sv) {
    char *end;
    long long v = strtoll(sv, &end, 10);
    if (*end || v < 0) {
      free(file_url);
      return dctl_usage_error(sh__add_table_usage, "bad --start-version");
    }
    req._start_version_case = DELTAD__SHARING__V1__ADD_TABLE_REQUEST___START_VERSION_START_VERSION;
    req.start_version = v;
  }
  rc = sh__call(SHX "AddTable", &req.base, SHD(shared_table), NULL, NULL);
  free(file_url);
  return rc;
}

static int share_remove_table(int argc, char **argv) {
  static const char usage[] = "usage: deltactl share remove-table SHARE SCHEMA TABLE\n";
  const char *pos[3];
  int npos;
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 3, 3};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__RemoveTableRequest req = DELTAD__SHARING__V1__REMOVE_TABLE_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.schema = (char *)pos[1];
  req.name = (char *)pos[2];
  return sh__call(SHX "RemoveTable", &req.base, &google__protobuf__empty__descriptor,
                  "removed table %s", pos[2]);
}

static int share_update(int argc, char **argv) {
  static const char usage[] =
      "usage: deltactl share update NAME [--new-name N] [--description D]\n"
      "  Renames a share (grants follow) or changes its description.\n";
  const char *pos[1], *nn = NULL, *desc = NULL;
  int npos;
  const dctl_opt opts[] = {{"--new-name", 1, &nn, NULL, NULL}, {"--description", 1, &desc, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__UpdateShareRequest req = DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (nn) {
    req._new_name_case = DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST___NEW_NAME_NEW_NAME;
    req.new_name = (char *)nn;
  }
  if (desc) {
    req._description_case = DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST___DESCRIPTION_DESCRIPTION;
    req.description = (char *)desc;
  }
  return sh__call(SHX "UpdateShare", &req.base, SHD(share_info), NULL, NULL);
}

static int share_update_table(int argc, char **argv) {
  static const char usage[] =
      "usage: deltactl share update-table SHARE SCHEMA TABLE [--history true|false]\n"
      "         [--start-version N|-1] [--comment C]\n";
  const char *pos[3], *hist = NULL, *sv = NULL, *comment = NULL;
  int npos;
  const dctl_opt opts[] = {{"--history", 1, &hist, NULL, NULL}, {"--start-version", 1, &sv, NULL, NULL},
                           {"--comment", 1, &comment, NULL, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 3, 3};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__UpdateTableRequest req = DELTAD__SHARING__V1__UPDATE_TABLE_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.schema = (char *)pos[1];
  req.name = (char *)pos[2];
  if (hist) {
    if (strcmp(hist, "true") && strcmp(hist, "false")) return dctl_usage_error(usage, "--history: true or false");
    req._history_shared_case = DELTAD__SHARING__V1__UPDATE_TABLE_REQUEST___HISTORY_SHARED_HISTORY_SHARED;
    req.history_shared = strcmp(hist, "true") == 0;
  }
  if (sv) {
    char *end;
    long long v = strtoll(sv, &end, 10);
    if (!*sv || *end || v < -1) return dctl_usage_error(usage, "bad --start-version");
    req._start_version_case = DELTAD__SHARING__V1__UPDATE_TABLE_REQUEST___START_VERSION_START_VERSION;
    req.start_version = v;
  }
  if (comment) {
    req._comment_case = DELTAD__SHARING__V1__UPDATE_TABLE_REQUEST___COMMENT_COMMENT;
    req.comment = (char *)comment;
  }
  return sh__call(SHX "UpdateTable", &req.base, SHD(shared_table), NULL, NULL);
}

static const dctl_verb share__verbs[] = {
    {"list", share_list, "list shares"},
    {"create", share_create, "create a share"},
    {"get", share_get, "show a share with its schemas and tables"},
    {"delete", share_delete, "delete a share"},
    {"update", share_update, "rename a share or change its description"},
    {"add-schema", share_add_schema, "add a schema to a share"},
    {"remove-schema", share_remove_schema, "remove a schema from a share"},
    {"add-table", share_add_table, "share a Delta table in a schema"},
    {"update-table", share_update_table, "change a shared table's options"},
    {"remove-table", share_remove_table, "stop sharing a table"},
    {"import", dctl_share_import, "create shares from a Delta Sharing server's YAML"},
    {NULL, NULL, NULL},
};

int dctl_share_main(int argc, char **argv) {
  return dctl_group_run("share", "Manage Delta Sharing shares.", share__verbs, argc, argv);
}

/* ---- recipient ---------------------------------------------------------------------------- */

/* Writes the profile (mode 0600: it holds a bearer token) and says where. */
static int rcpt__write_profile(const ProtobufCMessage *resp, const char *path) {
  const Deltad__Sharing__V1__RecipientTokenResponse *r = (const void *)resp;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t n = strlen(r->profile);
  if (fd < 0) return dctl_fail(DCTL_EXIT_LOCAL, "cannot write %s", path);
  int ok = write(fd, r->profile, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
  close(fd);
  if (!ok) return dctl_fail(DCTL_EXIT_LOCAL, "cannot write %s", path);
  fprintf(stderr, "deltactl: profile for %s written to %s (keep it secret)\n",
          r->recipient ? r->recipient->name : "recipient", path);
  return 0;
}

static int rcpt__token_call(const char *method, const ProtobufCMessage *req, const char *name,
                            const char *profile) {
  ProtobufCMessage *resp = NULL;
  char def[300];
  int rc = dctl_call(method, req, SHD(recipient_token_response), &resp);
  if (!rc) {
    snprintf(def, sizeof def, "%s.share", name);
    rc = rcpt__write_profile(resp, profile ? profile : def);
  }
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static int rcpt__lifetime(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || v < 0) return -1;
  *out = v;
  return 0;
}

static int rcpt_create(int argc, char **argv) {
  static const char usage[] =
      "usage: deltactl recipient create NAME [--lifetime SECONDS] [--comment C]\n"
      "         [--profile FILE]\n"
      "  Creates a recipient and writes its profile file (default NAME.share, mode 0600);\n"
      "  the bearer token in it is shown only this once. --lifetime 0: never expires\n"
      "  (default 30 days).\n";
  const char *pos[1], *life = NULL, *comment = NULL, *profile = NULL;
  int npos;
  const dctl_opt opts[] = {{"--lifetime", 1, &life, NULL, NULL}, {"--comment", 1, &comment, NULL, NULL},
                           {"--profile", 1, &profile, NULL, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__CreateRecipientRequest req = DELTAD__SHARING__V1__CREATE_RECIPIENT_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (comment) req.comment = (char *)comment;
  if (life) {
    if (rcpt__lifetime(life, &req.token_lifetime_seconds)) return dctl_usage_error(usage, "bad --lifetime");
    req._token_lifetime_seconds_case =
        DELTAD__SHARING__V1__CREATE_RECIPIENT_REQUEST___TOKEN_LIFETIME_SECONDS_TOKEN_LIFETIME_SECONDS;
  }
  return rcpt__token_call(SHX "CreateRecipient", &req.base, pos[0], profile);
}

static int rcpt_rotate(int argc, char **argv) {
  static const char usage[] =
      "usage: deltactl recipient rotate NAME [--lifetime SECONDS] [--old-valid SECONDS]\n"
      "         [--profile FILE]\n"
      "  Issues a new token (new profile file); old tokens end now or after --old-valid.\n";
  const char *pos[1], *life = NULL, *old = NULL, *profile = NULL;
  int npos;
  const dctl_opt opts[] = {{"--lifetime", 1, &life, NULL, NULL}, {"--old-valid", 1, &old, NULL, NULL},
                           {"--profile", 1, &profile, NULL, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__RotateRecipientTokenRequest req =
      DELTAD__SHARING__V1__ROTATE_RECIPIENT_TOKEN_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (life) {
    if (rcpt__lifetime(life, &req.token_lifetime_seconds)) return dctl_usage_error(usage, "bad --lifetime");
    req._token_lifetime_seconds_case =
        DELTAD__SHARING__V1__ROTATE_RECIPIENT_TOKEN_REQUEST___TOKEN_LIFETIME_SECONDS_TOKEN_LIFETIME_SECONDS;
  }
  if (old && rcpt__lifetime(old, &req.existing_token_expire_in_seconds))
    return dctl_usage_error(usage, "bad --old-valid");
  return rcpt__token_call(SHX "RotateRecipientToken", &req.base, pos[0], profile);
}

static const dctl_col rcpt__cols[] = {
    {"NAME", "name", NULL}, {"ID", "id", NULL}, {"TOKEN_EXPIRES", "token_expiration_time", NULL},
    {"COMMENT", "comment", NULL}, {NULL, NULL, NULL}};

static int rcpt_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl recipient list [--max-results N] [--page-token T] [--all]\n",
      SHX "ListRecipients", SHD(list_recipients_request), SHD(list_recipients_response), NULL,
      "recipients", rcpt__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

static int rcpt_get(int argc, char **argv) {
  static const dctl_named_spec spec = {"usage: deltactl recipient get NAME\n",
                                       SHX "GetRecipient", SHD(get_recipient_request),
                                       SHD(recipient), "name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int rcpt_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl recipient delete NAME\n  Deletes a recipient, its tokens and grants.\n",
      SHX "DeleteRecipient", SHD(delete_recipient_request), &google__protobuf__empty__descriptor,
      "name", "deleted recipient %s", 0};
  return dctl_run_named(&spec, argc, argv);
}

static const dctl_verb rcpt__verbs[] = {
    {"list", rcpt_list, "list recipients"},
    {"create", rcpt_create, "create a recipient and write its profile file"},
    {"get", rcpt_get, "show a recipient"},
    {"delete", rcpt_delete, "delete a recipient"},
    {"rotate", rcpt_rotate, "issue a new token (and profile file)"},
    {NULL, NULL, NULL},
};

int dctl_recipient_main(int argc, char **argv) {
  return dctl_group_run("recipient", "Manage Delta Sharing recipients.", rcpt__verbs, argc, argv);
}

/* ---- grant ---------------------------------------------------------------------------------- */

static int grant__pair(int argc, char **argv, const char *usage, const char *method,
                       const char *done) {
  const char *pos[2];
  int npos;
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 2, 2};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Sharing__V1__GrantShareRequest req = DELTAD__SHARING__V1__GRANT_SHARE_REQUEST__INIT;
  req.share = (char *)pos[0];
  req.recipient = (char *)pos[1];
  return sh__call(method, &req.base, &google__protobuf__empty__descriptor, done, pos[0]);
}

static int grant_add(int argc, char **argv) {
  return grant__pair(argc, argv, "usage: deltactl grant add SHARE RECIPIENT\n",
                     SHX "GrantShare", "granted share %s");
}

static int grant_remove(int argc, char **argv) {
  return grant__pair(argc, argv, "usage: deltactl grant remove SHARE RECIPIENT\n",
                     SHX "RevokeShare", "revoked share %s");
}

static const dctl_col grant__cols[] = {
    {"SHARE", "share", NULL}, {"RECIPIENT", "recipient", NULL}, {NULL, NULL, NULL}};

static int grant_list(int argc, char **argv) {
  static const char usage[] = "usage: deltactl grant list (--share S | --recipient R)\n";
  const char *share = NULL, *rcpt = NULL, *pos[1];
  int npos;
  const dctl_opt opts[] = {{"--share", 1, &share, NULL, NULL}, {"--recipient", 1, &rcpt, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {usage, opts, 0, 0};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (!share == !rcpt) return dctl_usage_error(usage, "give one of --share or --recipient");
  Deltad__Sharing__V1__ListGrantsRequest req = DELTAD__SHARING__V1__LIST_GRANTS_REQUEST__INIT;
  if (share) req.share = (char *)share;
  if (rcpt) req.recipient = (char *)rcpt;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(SHX "ListGrants", &req.base, SHD(list_grants_response), &resp);
  if (!rc) rc = dctl_print_list(resp, "grants", grant__cols);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static const dctl_verb grant__verbs[] = {
    {"add", grant_add, "let a recipient read a share"},
    {"remove", grant_remove, "revoke a recipient's access to a share"},
    {"list", grant_list, "list the grants of a share or a recipient"},
    {NULL, NULL, NULL},
};

int dctl_grant_main(int argc, char **argv) {
  return dctl_group_run("grant", "Grant shares to recipients.", grant__verbs, argc, argv);
}
