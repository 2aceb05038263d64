/* deltactl_args.c: deltactl's command-line plumbing: verb options and positionals
 * (`--name value`, `--name=value`, multi-value options, `--` ends options), verb dispatch
 * inside a group, --help at every level, and K=V lists turned into protobuf map fields. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"

static int dctl__is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

int dctl_usage_error(const char *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dctl_vfail(DCTL_EXIT_USAGE, fmt, ap);
  va_end(ap);
  fputs(usage, stderr);
  return DCTL_EXIT_USAGE;
}

static const dctl_opt *dctl__find_opt(const dctl_opt *opts, const char *arg, size_t len) {
  for (const dctl_opt *o = opts; o && o->name; o++)
    if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0) return o;
  return NULL;
}

/* Consumes one option at argv[*i]; returns DCTL_CONTINUE or DCTL_EXIT_USAGE. */
static int dctl__take_opt(const dctl_cmd *cmd, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  const dctl_opt *o = dctl__find_opt(cmd->opts, arg, len);
  if (!o) return dctl_usage_error(cmd->usage, "unknown option '%.*s'", (int)len, arg);
  if (o->seen) *o->seen = 1;
  if (o->nargs == 0) {
    if (eq) return dctl_usage_error(cmd->usage, "option %s takes no value", o->name);
    return DCTL_CONTINUE;
  }
  const char *vals[3];
  int k = 0;
  if (eq) {
    if (o->nargs != 1) return dctl_usage_error(cmd->usage, "option %s needs %d values", o->name, o->nargs);
    vals[k++] = eq + 1;
  }
  while (k < o->nargs) {
    if (*i + 1 >= argc) return dctl_usage_error(cmd->usage, "option %s needs %d value%s", o->name, o->nargs, o->nargs > 1 ? "s" : "");
    vals[k++] = argv[++*i];
  }
  if (o->list) {
    if (o->list->n >= DCTL_LIST_MAX) return dctl_usage_error(cmd->usage, "too many %s options", o->name);
    o->list->v[o->list->n++] = vals[0];
  } else {
    for (int j = 0; j < o->nargs; j++) o->vals[j] = vals[j];
  }
  return DCTL_CONTINUE;
}

int dctl_parse(const dctl_cmd *cmd, int argc, char **argv, const char **pos, int *out_npos) {
  int npos = 0, options_done = 0;
  *out_npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!options_done && dctl__is_help(a)) {
      fputs(cmd->usage, stdout);
      return 0;
    }
    if (!options_done && strcmp(a, "--") == 0) {
      options_done = 1;
    } else if (!options_done && a[0] == '-' && a[1] != '\0') {
      int rc = dctl__take_opt(cmd, argc, argv, &i);
      if (rc != DCTL_CONTINUE) return rc;
    } else {
      if (npos >= cmd->max_pos) return dctl_usage_error(cmd->usage, "unexpected argument '%s'", a);
      pos[npos++] = a;
    }
  }
  if (npos < cmd->min_pos) return dctl_usage_error(cmd->usage, "missing arguments");
  *out_npos = npos;
  return DCTL_CONTINUE;
}

static void dctl__group_usage(FILE *out, const char *group, const char *summary,
                              const dctl_verb *verbs) {
  fprintf(out, "usage: deltactl [GLOBAL FLAGS] %s VERB [ARGS...]\n  %s\nverbs:\n", group, summary);
  for (const dctl_verb *v = verbs; v->name; v++) fprintf(out, "  %-8s %s\n", v->name, v->summary);
  fprintf(out, "Run 'deltactl %s VERB --help' for a verb's arguments.\n", group);
}

int dctl_group_run(const char *group, const char *summary, const dctl_verb *verbs, int argc,
                   char **argv) {
  if (argc >= 2 && dctl__is_help(argv[1])) {
    dctl__group_usage(stdout, group, summary, verbs);
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "deltactl: %s: missing verb\n", group);
    dctl__group_usage(stderr, group, summary, verbs);
    return DCTL_EXIT_USAGE;
  }
  for (const dctl_verb *v = verbs; v->name; v++)
    if (strcmp(v->name, argv[1]) == 0) return v->fn(argc - 1, argv + 1);
  fprintf(stderr, "deltactl: %s: unknown verb '%s'\n", group, argv[1]);
  dctl__group_usage(stderr, group, summary, verbs);
  return DCTL_EXIT_USAGE;
}

/* ---- map fields ----------------------------------------------------------------------- */

int dctl_set_map(ProtobufCMessage *msg, const char *field, const dctl_strv *kv, void **out_block) {
  *out_block = NULL;
  if (kv->n == 0) return 0;
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, field);
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
    return dctl_fail(DCTL_EXIT_LOCAL, "%s has no map field %s", msg->descriptor->name, field);
  const ProtobufCMessageDescriptor *ed = f->descriptor;
  const ProtobufCFieldDescriptor *fk = protobuf_c_message_descriptor_get_field_by_name(ed, "key");
  const ProtobufCFieldDescriptor *fv = protobuf_c_message_descriptor_get_field_by_name(ed, "value");
  if (!fk || !fv) return dctl_fail(DCTL_EXIT_LOCAL, "%s is not a map", field);
  size_t esz = (ed->sizeof_message + 15) & ~(size_t)15;
  size_t head = (kv->n * sizeof(void *) + 15) & ~(size_t)15;
  char *block = calloc(1, head + kv->n * esz);
  if (!block) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  void **entries = (void **)block;
  for (size_t i = 0; i < kv->n; i++) {
    const char *eq = strchr(kv->v[i], '=');
    if (!eq || eq == kv->v[i]) {
      free(block);
      return dctl_fail(DCTL_EXIT_USAGE, "property '%s' is not KEY=VALUE", kv->v[i]);
    }
    ProtobufCMessage *e = (ProtobufCMessage *)(block + head + i * esz);
    protobuf_c_message_init(ed, e);
    /* The key is cut at '=' in place: argv strings are writable. */
    *(char **)((char *)e + fk->offset) = (char *)kv->v[i];
    *(char **)((char *)e + fv->offset) = (char *)eq + 1;
    *(char *)eq = '\0';
    entries[i] = e;
  }
  *(size_t *)((char *)msg + f->quantifier_offset) = kv->n;
  *(void ***)((char *)msg + f->offset) = entries;
  *out_block = block;
  return 0;
}
