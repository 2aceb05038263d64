/* deltactl_share_import.c: `deltactl share import FILE [--dry-run]` reads the Delta Sharing
 * reference server's YAML (shares -> schemas -> tables with name, location, optional id,
 * historyShared, cdfEnabled; the server's own keys such as host and port are ignored) with
 * libyaml, and creates what is missing: shares, their schemas, their tables. What exists
 * already is left as it is, so running it twice changes nothing; --dry-run only says what
 * it would do. Every row printed is one object: action, kind, name, url. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/sharing/v1/sharing.pb-c.h"

#define SHX "/deltad.sharing.v1.DeltaSharingExtensionService/"
#define GRPC_NOT_FOUND 5

static const char USAGE[] =
    "usage: deltactl share import FILE [--dry-run]\n"
    "  Creates the shares, schemas and tables of a Delta Sharing reference server's YAML\n"
    "  (shares: - name, schemas: - name, tables: - name, location, historyShared,\n"
    "  cdfEnabled). What exists is kept (running it twice changes nothing); a location that\n"
    "  is an absolute path becomes a file:// URL; historyShared or cdfEnabled shares the\n"
    "  table's history. --dry-run prints what it would create and calls nothing that writes.\n";

/* ---- the YAML ----------------------------------------------------------------------------- */

typedef struct imp {
  yaml_document_t doc;
  const char *file;
  json_t *rows; /* what was done, for the output */
  int dry_run;
} imp;

static yaml_node_t *node_get(imp *m, yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(&m->doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
      return yaml_document_get_node(&m->doc, p->value);
  }
  return NULL;
}

static const char *scalar(yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int bad(imp *m, yaml_node_t *n, const char *what) {
  return dctl_fail(DCTL_EXIT_USAGE, "%s:%zu: %s", m->file, n ? n->start_mark.line + 1 : 1, what);
}

/* The items of the sequence under key (NULL items and n 0 when absent). */
static int seq_of(imp *m, yaml_node_t *map, const char *key, yaml_node_item_t **items, size_t *n) {
  yaml_node_t *s = node_get(m, map, key);
  *items = NULL, *n = 0;
  if (!s) return 0;
  if (s->type != YAML_SEQUENCE_NODE) return bad(m, s, "expected a list");
  *items = s->data.sequence.items.start;
  *n = (size_t)(s->data.sequence.items.top - s->data.sequence.items.start);
  return 0;
}

static int is_true(imp *m, yaml_node_t *map, const char *key, int *out) {
  const char *v = scalar(node_get(m, map, key));
  *out = v && (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1"));
  if (v && !*out && strcasecmp(v, "false") && strcasecmp(v, "no") && strcmp(v, "0"))
    return bad(m, node_get(m, map, key), "expected true or false");
  return 0;
}

/* ---- what exists -------------------------------------------------------------------------- */

/* The share as it is on the server, or NULL (*out) when there is none. An exit code. */
static int share_now(const char *name, Deltad__Sharing__V1__ShareInfo **out) {
  dd_client *c;
  *out = NULL;
  int rc = dctl_client_get(&c);
  if (rc) return rc;
  Deltad__Sharing__V1__GetShareInfoRequest req = DELTAD__SHARING__V1__GET_SHARE_INFO_REQUEST__INIT;
  req.name = (char *)name;
  ProtobufCMessage *resp = NULL;
  rc = dd_client_call(c, SHX "GetShareInfo", &req.base, &deltad__sharing__v1__share_info__descriptor, &resp);
  if (rc && dd_client_last_status(c) == GRPC_NOT_FOUND) return 0;
  if (rc) return dctl_report_call_error(c, rc);
  *out = (Deltad__Sharing__V1__ShareInfo *)resp;
  return 0;
}

static Deltad__Sharing__V1__SharingSchemaInfo *schema_now(Deltad__Sharing__V1__ShareInfo *s, const char *name) {
  for (size_t i = 0; s && i < s->n_schemas; i++)
    if (!strcasecmp(s->schemas[i]->name, name)) return s->schemas[i];
  return NULL;
}

static int table_now(Deltad__Sharing__V1__SharingSchemaInfo *sc, const char *name) {
  for (size_t i = 0; sc && i < sc->n_tables; i++)
    if (!strcasecmp(sc->tables[i]->name, name)) return 1;
  return 0;
}

/* ---- doing it ----------------------------------------------------------------------------- */

static int row(imp *m, const char *action, const char *kind, const char *name, const char *url) {
  json_t *o = json_pack("{s:s,s:s,s:s,s:s?}", "action", action, "kind", kind, "name", name, "url", url);
  if (!o || json_array_append_new(m->rows, o)) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  return 0;
}

/* Calls method unless this is a dry run, then records the row. */
static int create(imp *m, const char *method, const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rd,
                  const char *kind, const char *name, const char *url) {
  if (!m->dry_run) {
    ProtobufCMessage *resp = NULL;
    int rc = dctl_call(method, req, rd, &resp);
    protobuf_c_message_free_unpacked(resp, NULL);
    if (rc) return rc;
  }
  return row(m, m->dry_run ? "would create" : "created", kind, name, url);
}

static int import_table(imp *m, yaml_node_t *t, const char *share, const char *schema,
                        Deltad__Sharing__V1__SharingSchemaInfo *now) {
  const char *name = scalar(node_get(m, t, "name")), *loc = scalar(node_get(m, t, "location"));
  int hist, cdf;
  if (!name) return bad(m, t, "a table needs a name");
  if (!loc) return bad(m, t, "a table needs a location");
  int rc = is_true(m, t, "historyShared", &hist);
  if (!rc) rc = is_true(m, t, "cdfEnabled", &cdf);
  if (rc) return rc;
  char full[1024], *url = NULL;
  snprintf(full, sizeof full, "%s.%s.%s", share, schema, name);
  if (loc[0] == '/' ? asprintf(&url, "file://%s", loc) < 0 : !(url = strdup(loc)))
    return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  if (table_now(now, name)) {
    rc = row(m, "exists", "table", full, url);
  } else {
    Deltad__Sharing__V1__AddTableRequest req = DELTAD__SHARING__V1__ADD_TABLE_REQUEST__INIT;
    req.share = (char *)share, req.schema = (char *)schema, req.name = (char *)name, req.url = url;
    req.history_shared = hist || cdf;
    rc = create(m, SHX "AddTable", &req.base, &deltad__sharing__v1__shared_table__descriptor, "table", full, url);
  }
  free(url);
  return rc;
}

static int import_share(imp *m, yaml_node_t *sh) {
  const char *name = scalar(node_get(m, sh, "name"));
  if (!name) return bad(m, sh, "a share needs a name");
  yaml_node_item_t *schemas;
  size_t ns;
  int rc = seq_of(m, sh, "schemas", &schemas, &ns);
  Deltad__Sharing__V1__ShareInfo *now = NULL;
  if (!rc) rc = share_now(name, &now);
  if (rc) return rc;
  if (now) {
    rc = row(m, "exists", "share", name, NULL);
  } else {
    Deltad__Sharing__V1__CreateShareRequest req = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
    req.name = (char *)name;
    rc = create(m, SHX "CreateShare", &req.base, &deltad__sharing__v1__share_info__descriptor, "share", name, NULL);
  }
  for (size_t i = 0; !rc && i < ns; i++) {
    yaml_node_t *sc = yaml_document_get_node(&m->doc, schemas[i]);
    const char *sname = scalar(node_get(m, sc, "name"));
    if (!sname) {
      rc = bad(m, sc, "a schema needs a name");
      break;
    }
    char full[1024];
    snprintf(full, sizeof full, "%s.%s", name, sname);
    Deltad__Sharing__V1__SharingSchemaInfo *scnow = schema_now(now, sname);
    if (scnow) {
      rc = row(m, "exists", "schema", full, NULL);
    } else {
      Deltad__Sharing__V1__CreateSharingSchemaRequest req = DELTAD__SHARING__V1__CREATE_SHARING_SCHEMA_REQUEST__INIT;
      req.share = (char *)name, req.name = (char *)sname;
      rc = create(m, SHX "CreateSharingSchema", &req.base, &deltad__sharing__v1__sharing_schema_info__descriptor,
                  "schema", full, NULL);
    }
    yaml_node_item_t *tables;
    size_t nt;
    if (!rc) rc = seq_of(m, sc, "tables", &tables, &nt);
    for (size_t j = 0; !rc && j < nt; j++)
      rc = import_table(m, yaml_document_get_node(&m->doc, tables[j]), name, sname, scnow);
  }
  protobuf_c_message_free_unpacked(now ? &now->base : NULL, NULL);
  return rc;
}

/* ---- output ------------------------------------------------------------------------------- */

static int print_rows(imp *m) {
  dctl_output o = dctl_globals_get()->output;
  size_t i;
  json_t *r;
  if (o == DCTL_OUT_JSON) return dctl_print_json(m->rows, 0);
  if (o == DCTL_OUT_CSV) puts("action,kind,name,url");
  json_array_foreach(m->rows, i, r) {
    const char *url = json_string_value(json_object_get(r, "url"));
    if (o == DCTL_OUT_JSONL) {
      if (dctl_print_json(r, 1)) return DCTL_EXIT_LOCAL;
    } else if (o == DCTL_OUT_CSV) {
      for (int k = 0; k < 4; k++) {
        static const char *const keys[] = {"action", "kind", "name", "url"};
        const char *v = json_string_value(json_object_get(r, keys[k]));
        if (k) putchar(',');
        dctl_csv_cell(stdout, v ? v : "");
      }
      putchar('\n');
    } else {
      printf("%s %s %s%s%s%s\n", json_string_value(json_object_get(r, "action")),
             json_string_value(json_object_get(r, "kind")), json_string_value(json_object_get(r, "name")),
             url ? " (" : "", url ? url : "", url ? ")" : "");
    }
  }
  return 0;
}

int dctl_share_import(int argc, char **argv) {
  const char *pos[1];
  int npos;
  imp m = {.rows = NULL};
  const dctl_opt opts[] = {{"--dry-run", 0, NULL, &m.dry_run, NULL}, {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {USAGE, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  m.file = pos[0];
  FILE *f = fopen(m.file, "rb");
  if (!f) return dctl_fail(DCTL_EXIT_LOCAL, "cannot read '%s'", m.file);
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  int loaded = yaml_parser_load(&p, &m.doc);
  if (!loaded) {
    rc = dctl_fail(DCTL_EXIT_USAGE, "%s:%zu: %s", m.file, p.problem_mark.line + 1,
                   p.problem ? p.problem : "not YAML");
    goto cleanup_parser;
  }
  yaml_node_item_t *shares;
  size_t n;
  yaml_node_t *root = yaml_document_get_root_node(&m.doc);
  if (!root || root->type != YAML_MAPPING_NODE) rc = bad(&m, root, "expected a mapping with 'shares'");
  else if (!(rc = seq_of(&m, root, "shares", &shares, &n)) && n == 0) rc = bad(&m, root, "no shares");
  if (!rc && !(m.rows = json_array())) rc = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  for (size_t i = 0; !rc && i < n; i++) rc = import_share(&m, yaml_document_get_node(&m.doc, shares[i]));
  /* what was done before a failure is printed too */
  if (m.rows && json_array_size(m.rows) && print_rows(&m) && !rc) rc = DCTL_EXIT_LOCAL;
  json_decref(m.rows);
  yaml_document_delete(&m.doc);
cleanup_parser:
  yaml_parser_delete(&p);
  fclose(f);
  return rc;
}
