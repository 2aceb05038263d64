/* deltactl_common.h: what every deltactl command group shares: the global flags, the one
 * client of the process, exit codes, a small argument parser, verb dispatch, and the two
 * output formats (aligned text, proto3 JSON).
 *
 * Global state (named here, nowhere else): the parsed global flags (dctl_globals) and the
 * lazily opened dd_client. deltactl is single-threaded. */
#ifndef DD_CMD_DELTACTL_COMMON_H
#define DD_CMD_DELTACTL_COMMON_H

#include <stdarg.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/client.h"

/* Exit codes (documented in `deltactl --help`). */
enum {
  DCTL_EXIT_OK = 0,
  DCTL_EXIT_SERVER = 1, /* the call failed: a gRPC status other than OK */
  DCTL_EXIT_USAGE = 2,  /* bad command line */
  DCTL_EXIT_LOCAL = 3,  /* local failure: token file, output encoding, out of memory */
};
/* dctl_parse's "go on" answer; every other value is an exit code to return at once. */
#define DCTL_CONTINUE (-1)

/* --output: table (aligned text), json (one document), jsonl (one object a line), csv. */
typedef enum { DCTL_OUT_TABLE = 0, DCTL_OUT_JSON, DCTL_OUT_JSONL, DCTL_OUT_CSV } dctl_output;
/* Parses an --output value; 0, or -1 when s names no format. */
int dctl_output_parse(const char *s, dctl_output *out);

typedef struct dctl_globals {
  const char *server;     /* --server, else $DELTAD_SERVER, else 127.0.0.1:50051 */
  const char *token;      /* --token (NULL: see token_file) */
  const char *token_file; /* --token-file */
  dctl_output output;     /* --output */
  int64_t timeout_ms;     /* --timeout SECONDS; default 30 s */
  const char *tls_ca_file;   /* --tls-ca-file, else $DELTAD_TLS_CA_FILE: TLS on */
  const char *tls_cert_file; /* --tls-cert-file / --tls-key-file: a client certificate */
  const char *tls_key_file;
} dctl_globals;

/* The process's global flags; main fills them before dispatching. */
dctl_globals *dctl_globals_get(void);

/* ---- the client ---------------------------------------------------------------------- */

/* The process's client, opened on first use from the global flags (the token is resolved
 * then: --token, --token-file, $DELTAD_TOKEN, ./data/admin.token when readable). Returns 0,
 * or an exit code after printing why. The client stays owned by this module. */
int dctl_client_get(dd_client **out);
/* Closes the client (end of main). */
void dctl_client_close(void);
/* A unary call through the process's client. Returns 0, or an exit code after printing
 * `deltactl: <STATUS>: <message>` to stderr. *out as for dd_client_call. */
int dctl_call(const char *method, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out);
/* dctl_call, but NOT_FOUND returns DCTL_CONTINUE quietly (the caller tries elsewhere). */
int dctl_call_quiet(const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out);
/* Like dctl_call for a List* method with page_token/next_page_token fields: with all, it
 * follows next_page_token and returns one response holding every page's items. */
int dctl_call_list(const char *method, ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, int all, ProtobufCMessage **out);
/* Prints a failed dd_client call's status and message; returns DCTL_EXIT_SERVER. */
int dctl_report_call_error(dd_client *c, int rc);
/* msg with the API's field words replaced by deltactl's flags ("use force" -> "use
 * --force"), cut to cap. Returns 0. */
int dctl_error_text(char *out, size_t cap, const char *msg);
/* Prints `deltactl: <message>` to stderr; returns code. */
/* As dctl_fail, with a va_list (for other printf-like reporters). */
int dctl_vfail(int code, const char *fmt, va_list ap);
int dctl_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- arguments ----------------------------------------------------------------------- */

#define DCTL_LIST_MAX 128

/* Values of a repeatable option, in order (pointers into argv). */
typedef struct dctl_strv {
  const char *v[DCTL_LIST_MAX];
  size_t n;
} dctl_strv;

typedef struct dctl_opt {
  const char *name;  /* "--comment"; a NULL name ends a table */
  int nargs;         /* 0: a flag; 1..3: how many values follow */
  const char **vals; /* nargs > 0: receives the values (an array of nargs) */
  int *seen;         /* optional: set to 1 when given */
  dctl_strv *list;   /* nargs == 1 and repeatable: values are appended here instead */
} dctl_opt;

typedef struct dctl_cmd {
  const char *usage;   /* printed by --help (stdout) and after a usage error (stderr) */
  const dctl_opt *opts;
  int min_pos, max_pos; /* positional arguments accepted */
} dctl_cmd;

/* Parses argv[1..] (argv[0] is the verb) against cmd: fills the options, writes the
 * positionals to pos (room for cmd->max_pos) and *out_npos. Returns DCTL_CONTINUE, or 0
 * after printing usage for --help, or DCTL_EXIT_USAGE after printing the problem. */
int dctl_parse(const dctl_cmd *cmd, int argc, char **argv, const char **pos, int *out_npos);
/* Prints "deltactl: <problem>" and the usage to stderr; returns DCTL_EXIT_USAGE. */
int dctl_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct dctl_verb {
  const char *name;
  int (*fn)(int argc, char **argv); /* argv[0] is the verb; returns the exit code */
  const char *summary;
} dctl_verb;

/* Runs argv[1] of a group (argv[0] is the group name) from verbs (ended by a NULL name);
 * handles --help and unknown verbs. */
int dctl_group_run(const char *group, const char *summary, const dctl_verb *verbs, int argc,
                   char **argv);

/* Splits "K=V" strings into a map field (repeated *Entry messages with key and value) of
 * msg, by field name. The entries point into kv's strings and live in one block stored in
 * *out_block, which the caller frees (free()) after the message is no longer used. */
int dctl_set_map(ProtobufCMessage *msg, const char *field, const dctl_strv *kv, void **out_block);

/* Parses a positive page size; -1 when s is not one. */
int dctl_parse_page_size(const char *s);

/* A column of a list: header, and either a field name of the item or a formatter. */
typedef struct dctl_col {
  const char *header;
  const char *field;                          /* e.g. "name"; NULL when fmt is set */
  char *(*fmt)(const ProtobufCMessage *item); /* returns a malloc'ed string */
} dctl_col;

/* ---- generic verbs ------------------------------------------------------------------- */

/* A List* verb: `[PARENT] [--max-results N] [--page-token T] [--all]`. */
typedef struct dctl_list_spec {
  const char *usage;
  const char *method;
  const ProtobufCMessageDescriptor *req_desc;
  const ProtobufCMessageDescriptor *resp_desc;
  const char *parent_field; /* request field taken from the one positional, or NULL */
  const char *items_field;  /* the response's repeated field */
  const dctl_col *cols;
  /* When set, the positional is "A.B": A goes to parent_field, B to this field. */
  const char *parent_field2;
} dctl_list_spec;
int dctl_run_list(const dctl_list_spec *s, int argc, char **argv);

/* A verb whose request is one name (get, delete): `NAME [--force]`. */
typedef struct dctl_named_spec {
  const char *usage;
  const char *method;
  const ProtobufCMessageDescriptor *req_desc;
  const ProtobufCMessageDescriptor *resp_desc;
  const char *name_field; /* "name", "full_name" */
  const char *done;       /* NULL: print the response; else a format with one %s (the name) */
  int has_force;          /* accepts --force, sent as the bool field "force" */
} dctl_named_spec;
int dctl_run_named(const dctl_named_spec *s, int argc, char **argv);

/* ---- output -------------------------------------------------------------------------- */

/* Prints one message: proto3 JSON, or `key: value` lines of its non-empty fields
 * (sub-messages flattened with dotted keys, maps as k=v lists, *_at timestamps in UTC).
 * Returns an exit code. */
int dctl_print_msg(const ProtobufCMessage *msg);
/* Prints a list response: JSON of the whole response, or an aligned table of the items in
 * its repeated field items_field with cols (ended by a NULL header). A non-empty
 * next_page_token is mentioned on stderr in table mode. Returns an exit code. */
int dctl_print_list(const ProtobufCMessage *resp, const char *items_field, const dctl_col *cols);
/* Prints text in table mode, "{}" in JSON mode (for calls that return Empty). */
int dctl_print_done(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints j (pretty, or on one line when compact) to stdout; an exit code. j stays the
 * caller's. */
typedef struct json_t json_t;
int dctl_print_json(json_t *j, int compact);
/* Writes s as one CSV cell (quoted when it holds a comma, quote or line break). */
void dctl_csv_cell(FILE *out, const char *s);
/* Formats epoch ms as ISO 8601 UTC with milliseconds ("2026-01-02T03:04:05.678Z");
 * 0, or -1 for a time that has none. */
int dctl_iso_time(char *buf, size_t cap, int64_t ms);
/* The text form of one field of msg by name (malloc'ed; "" when absent). NULL only when
 * out of memory. */
char *dctl_field_text(const ProtobufCMessage *msg, const char *field);

#endif
