/* deltactl_admin.c: `deltactl audit list` (who changed what, which recipient read which
 * table) and `deltactl admin backup DIR`, over deltad.admin.v1.AdminService. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/admin/v1/admin.pb-c.h"

#define ADM_SVC "/deltad.admin.v1.AdminService/"

static char *adm__time(const ProtobufCMessage *m) {
  char buf[40];
  const Deltad__Admin__V1__AuditEvent *e = (const void *)m;
  if (dctl_iso_time(buf, sizeof buf, e->time_ms) != 0) snprintf(buf, sizeof buf, "%lld", (long long)e->time_ms);
  return strdup(buf);
}

/* What the event is about: the object of a change, or share.schema.table@version. */
static char *adm__what(const ProtobufCMessage *m) {
  const Deltad__Admin__V1__AuditEvent *e = (const void *)m;
  char buf[1024];
  if (!strcmp(e->kind, "data_access"))
    snprintf(buf, sizeof buf, "%s.%s.%s@%lld files=%lld", e->share, e->schema, e->table,
             (long long)e->version, (long long)e->files);
  else
    snprintf(buf, sizeof buf, "%s%s%s%s%s", e->object, *e->id_after ? " id=" : "", e->id_after,
             *e->name_after ? " new_name=" : "", e->name_after);
  return strdup(buf);
}

static const dctl_col adm__cols[] = {
    {"TIME", NULL, adm__time},       {"KIND", "kind", NULL},   {"PRINCIPAL", "principal", NULL},
    {"ACTION", "action", NULL},      {"WHAT", NULL, adm__what}, {"REQUEST", "request_id", NULL},
    {NULL, NULL, NULL},
};

/* --since: ISO 8601 UTC ("2026-12-02T06:00:00Z", date alone allowed) or epoch ms. */
static int adm__since(const char *s, int64_t *out) {
  char *end = NULL;
  long long ms = strtoll(s, &end, 10);
  if (end && !*end && end != s) {
    *out = ms;
    return 0;
  }
  struct tm tm = {0};
  const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) {
    memset(&tm, 0, sizeof tm);
    rest = strptime(s, "%Y-%m-%d", &tm);
  }
  if (!rest || (*rest && strcmp(rest, "Z"))) return -1;
  *out = (int64_t)timegm(&tm) * 1000;
  return 0;
}

static int audit_list(int argc, char **argv) {
  const char *recipient = NULL, *since = NULL, *limit = NULL, *kind = NULL;
  const dctl_opt opts[] = {{"--recipient", 1, &recipient, NULL, NULL},
                           {"--since", 1, &since, NULL, NULL},
                           {"--limit", 1, &limit, NULL, NULL},
                           {"--kind", 1, &kind, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl audit list [--recipient R] [--since T] [--limit N]\n"
                        "         [--kind admin_change|data_access]\n"
                        "  Lists audit events, oldest first: administrator changes and recipient\n"
                        "  reads (share, table, version, files signed). --recipient keeps that\n"
                        "  recipient's reads; --since takes ISO 8601 UTC or epoch ms; --limit\n"
                        "  stops after N events (default: all).\n",
                        opts, 0, 0};
  int npos;
  const char *pos[1];
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Admin__V1__ListAuditEventsRequest req = DELTAD__ADMIN__V1__LIST_AUDIT_EVENTS_REQUEST__INIT;
  long max = 0;
  if (limit && ((max = strtol(limit, NULL, 10)) <= 0 || max > 1000000))
    return dctl_usage_error(cmd.usage, "--limit: expected a number from 1 to 1000000");
  if (since && adm__since(since, &req.since_ms) != 0)
    return dctl_usage_error(cmd.usage, "--since: expected ISO 8601 UTC (2026-12-02T06:00:00Z) or epoch ms");
  if (kind && strcmp(kind, "admin_change") && strcmp(kind, "data_access"))
    return dctl_usage_error(cmd.usage, "--kind: expected admin_change or data_access");
  if (recipient) req.recipient = (char *)recipient;
  if (kind) req.kind = (char *)kind;
  /* every page into one reply, so the output contract prints one list */
  Deltad__Admin__V1__ListAuditEventsResponse all = DELTAD__ADMIN__V1__LIST_AUDIT_EVENTS_RESPONSE__INIT;
  ProtobufCMessage **pages = NULL;
  size_t n_pages = 0;
  char *token = NULL;
  do {
    req.max_results = max && max - (long)all.n_events < 1000 ? (int32_t)(max - (long)all.n_events) : 1000;
    req.page_token = token ? token : (char *)"";
    ProtobufCMessage *resp = NULL;
    rc = dctl_call(ADM_SVC "ListAuditEvents", &req.base,
                   &deltad__admin__v1__list_audit_events_response__descriptor, &resp);
    if (rc) break;
    ProtobufCMessage **grown = realloc(pages, (n_pages + 1) * sizeof *pages);
    Deltad__Admin__V1__AuditEvent **ev = grown ? realloc(all.events, (all.n_events + ((Deltad__Admin__V1__ListAuditEventsResponse *)resp)->n_events + 1) * sizeof *ev) : NULL;
    if (grown) pages = grown;
    if (!grown || !ev) {
      protobuf_c_message_free_unpacked(resp, NULL);
      rc = DCTL_EXIT_LOCAL;
      break;
    }
    pages[n_pages++] = resp;
    all.events = ev;
    Deltad__Admin__V1__ListAuditEventsResponse *r = (void *)resp;
    for (size_t i = 0; i < r->n_events; i++) all.events[all.n_events++] = r->events[i];
    token = *r->next_page_token ? r->next_page_token : NULL;
  } while (token && (!max || (long)all.n_events < max));
  if (!rc) rc = dctl_print_list(&all.base, "events", adm__cols);
  free(all.events);
  for (size_t i = 0; i < n_pages; i++) protobuf_c_message_free_unpacked(pages[i], NULL);
  free(pages);
  return rc;
}

static int admin_backup(int argc, char **argv) {
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl admin backup DIR\n"
                        "  Makes an online, consistent copy of the catalog and its keys into DIR\n"
                        "  (an absolute path on the server's host, new or empty) while writers\n"
                        "  run. Restore with: deltad --restore-from DIR --data-dir NEW_DIR.\n",
                        opts, 1, 1};
  int npos;
  const char *pos[1];
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Admin__V1__BackupRequest req = DELTAD__ADMIN__V1__BACKUP_REQUEST__INIT;
  req.dir = (char *)pos[0];
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(ADM_SVC "Backup", &req.base, &deltad__admin__v1__backup_response__descriptor, &resp);
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static const dctl_verb audit__verbs[] = {
    {"list", audit_list, "list audit events (changes and recipient reads)"},
    {NULL, NULL, NULL},
};

static const dctl_verb admin__verbs[] = {
    {"backup", admin_backup, "online backup of the catalog and its keys"},
    {NULL, NULL, NULL},
};

int dctl_audit_main(int argc, char **argv) {
  return dctl_group_run("audit", "Read the audit log: who changed what, who read which table.", audit__verbs,
                        argc, argv);
}

int dctl_admin_main(int argc, char **argv) {
  return dctl_group_run("admin", "Operate the server: backups.", admin__verbs, argc, argv);
}
