/* deltactl_common.c: deltactl's global flags, its one client (opened lazily, token
 * resolved then), calls that report their own errors, and list paging. */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "common/err.h"

#define DCTL_DEFAULT_TOKEN_FILE "./data/admin.token"
#define DCTL_TOKEN_MAX 4096
#define DCTL_MAX_PAGES 100000

static dctl_globals dctl__globals = {NULL, NULL, NULL, DCTL_OUT_TABLE, 30000, NULL, NULL, NULL};
static dd_client *dctl__client;
static char dctl__token[DCTL_TOKEN_MAX];

dctl_globals *dctl_globals_get(void) { return &dctl__globals; }

int dctl_vfail(int code, const char *fmt, va_list ap) {
  fputs("deltactl: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  return code;
}

int dctl_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dctl_vfail(code, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- token ---------------------------------------------------------------------------- */

/* Reads the first line of path into dctl__token, trimmed. Returns 0, or DD_EIO. */
static int dctl__read_token(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return DD_EIO;
  size_t n = fread(dctl__token, 1, sizeof dctl__token - 1, f);
  fclose(f);
  dctl__token[n] = '\0';
  dctl__token[strcspn(dctl__token, "\r\n")] = '\0';
  n = strlen(dctl__token);
  while (n > 0 && isspace((unsigned char)dctl__token[n - 1])) dctl__token[--n] = '\0';
  return 0;
}

/* The token to send, or NULL for none; sets *out_rc to an exit code when a named token
 * file cannot be read. */
static const char *dctl__token_resolve(int *out_rc) {
  const dctl_globals *g = &dctl__globals;
  *out_rc = 0;
  if (g->token) return g->token;
  if (g->token_file) {
    if (dctl__read_token(g->token_file) == 0) return dctl__token;
    *out_rc = dctl_fail(DCTL_EXIT_LOCAL, "cannot read token file '%s'", g->token_file);
    return NULL;
  }
  const char *env = getenv("DELTAD_TOKEN");
  if (env && env[0]) return env;
  if (dctl__read_token(DCTL_DEFAULT_TOKEN_FILE) == 0) return dctl__token;
  return NULL;
}

/* ---- client --------------------------------------------------------------------------- */

int dctl_client_get(dd_client **out) {
  *out = NULL;
  if (!dctl__client) {
    int rc;
    dd_client_opts opts = DD_CLIENT_OPTS_INIT;
    opts.token = dctl__token_resolve(&rc);
    if (rc) return rc;
    if (!opts.token || !opts.token[0])
      return dctl_fail(DCTL_EXIT_USAGE, "no token to send: export DELTAD_TOKEN=$(cat DATA_DIR/admin.token), "
                                        "or pass --token-file FILE (or --token T)");
    opts.target = dctl__globals.server;
    if (!opts.target || !opts.target[0]) opts.target = getenv("DELTAD_SERVER");
    if (opts.target && !opts.target[0]) opts.target = NULL;
    opts.timeout_ms = dctl__globals.timeout_ms;
    opts.tls_ca_file = dctl__globals.tls_ca_file;
    if (!opts.tls_ca_file || !opts.tls_ca_file[0]) opts.tls_ca_file = getenv("DELTAD_TLS_CA_FILE");
    opts.tls_cert_file = dctl__globals.tls_cert_file;
    opts.tls_key_file = dctl__globals.tls_key_file;
    if (dd_client_open(&dctl__client, &opts) != 0)
      return dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  }
  *out = dctl__client;
  return 0;
}

void dctl_client_close(void) {
  dd_client_free(dctl__client);
  dctl__client = NULL;
}

/* The API's words in error messages, as the flags a deltactl user types. */
static const char *const dctl__flag_words[][2] = {
    {"use force", "use --force"},
    {"set replace", "use --replace"},
    {"needs truncate_history", "needs --truncate-history"},
    {"truncate_history=", "--truncate-history="},
};

int dctl_error_text(char *out, size_t cap, const char *msg) {
  size_t n = 0;
  while (*msg && n + 1 < cap) {
    size_t k = 0;
    while (k < sizeof dctl__flag_words / sizeof dctl__flag_words[0] &&
           strncmp(msg, dctl__flag_words[k][0], strlen(dctl__flag_words[k][0])))
      k++;
    if (k == sizeof dctl__flag_words / sizeof dctl__flag_words[0]) {
      out[n++] = *msg++;
      continue;
    }
    n += (size_t)snprintf(out + n, cap - n, "%s", dctl__flag_words[k][1]);
    if (n >= cap) n = cap - 1;
    msg += strlen(dctl__flag_words[k][0]);
  }
  out[n] = '\0';
  return 0;
}

int dctl_report_call_error(dd_client *c, int rc) {
  (void)rc;
  char msg[2048];
  dctl_error_text(msg, sizeof msg, dd_err_msg());
  return dctl_fail(DCTL_EXIT_SERVER, "%s: %s", dd_client_status_name(dd_client_last_status(c)), msg);
}

/* dctl_call; with quiet, NOT_FOUND is DCTL_CONTINUE and not reported. */
static int dctl__call(const char *method, const ProtobufCMessage *req,
                      const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out, bool quiet) {
  dd_client *c;
  *out = NULL;
  int rc = dctl_client_get(&c);
  if (rc) return rc;
  rc = dd_client_call(c, method, req, resp_desc, out);
  if (rc && quiet && dd_client_code_from_grpc(dd_client_last_status(c)) == DD_ENOTFOUND) return DCTL_CONTINUE;
  return rc ? dctl_report_call_error(c, rc) : 0;
}

int dctl_call(const char *method, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out) {
  return dctl__call(method, req, resp_desc, out, false);
}

int dctl_call_quiet(const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out) {
  return dctl__call(method, req, resp_desc, out, true);
}

/* ---- paging --------------------------------------------------------------------------- */

static char **dctl__str_field(ProtobufCMessage *m, const char *name) {
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
  if (!f || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED) return NULL;
  return (char **)((char *)m + f->offset);
}

static const ProtobufCFieldDescriptor *dctl__items_field(const ProtobufCMessageDescriptor *d) {
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->label == PROTOBUF_C_LABEL_REPEATED && f->type == PROTOBUF_C_TYPE_MESSAGE) return f;
  }
  return NULL;
}

/* Moves page's items to the end of acc's and takes page's next_page_token. */
static int dctl__merge_page(ProtobufCMessage *acc, ProtobufCMessage *page) {
  const ProtobufCFieldDescriptor *f = dctl__items_field(acc->descriptor);
  size_t *n_acc = (size_t *)((char *)acc + f->quantifier_offset);
  size_t *n_page = (size_t *)((char *)page + f->quantifier_offset);
  void ***v_acc = (void ***)((char *)acc + f->offset);
  void ***v_page = (void ***)((char *)page + f->offset);
  if (*n_page > 0) {
    void **grown = realloc(*v_acc, (*n_acc + *n_page) * sizeof *grown);
    if (!grown) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    memcpy(grown + *n_acc, *v_page, *n_page * sizeof *grown);
    *v_acc = grown;
    *n_acc += *n_page;
    *n_page = 0; /* the items now belong to acc */
  }
  char **t_acc = dctl__str_field(acc, "next_page_token");
  char **t_page = dctl__str_field(page, "next_page_token");
  char *tmp = *t_acc;
  *t_acc = *t_page;
  *t_page = tmp;
  return 0;
}

int dctl_call_list(const char *method, ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, int all, ProtobufCMessage **out) {
  ProtobufCMessage *acc = NULL, *page = NULL;
  char **req_token = dctl__str_field(req, "page_token");
  char *saved = req_token ? *req_token : NULL;
  int rc = dctl_call(method, req, resp_desc, &acc);
  if (rc || !all) goto cleanup;
  if (!req_token || !dctl__items_field(resp_desc) || !dctl__str_field(acc, "next_page_token")) {
    rc = dctl_fail(DCTL_EXIT_LOCAL, "%s is not a paged list", resp_desc->name);
    goto cleanup;
  }
  for (int pages = 1; (*dctl__str_field(acc, "next_page_token"))[0]; pages++) {
    if (pages >= DCTL_MAX_PAGES) {
      rc = dctl_fail(DCTL_EXIT_SERVER, "the server keeps returning pages (%d)", pages);
      goto cleanup;
    }
    *req_token = *dctl__str_field(acc, "next_page_token");
    rc = dctl_call(method, req, resp_desc, &page);
    if (rc) goto cleanup;
    rc = dctl__merge_page(acc, page);
    protobuf_c_message_free_unpacked(page, NULL);
    page = NULL;
    if (rc) goto cleanup;
  }
cleanup:
  if (req_token) *req_token = saved;
  if (rc) {
    protobuf_c_message_free_unpacked(acc, NULL);
    acc = NULL;
  }
  *out = acc;
  return rc;
}
