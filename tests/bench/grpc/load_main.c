/* load_main.c: dd_grpc_load, a gRPC load generator for deltad on gRPC core. For each call
 * (by default the no-op SystemService/Ping, then CatalogService/GetCatalog of --catalog)
 * it keeps threads x concurrency unary calls in flight for --duration seconds after a
 * warm-up, and prints one Markdown table row (QPS, p50, p99, errors) per call plus the QPS
 * ratio of every call to the first. With --rounds R the calls run alternately R times and
 * the rounds are pooled (QPS = all counted calls / all measured time; percentiles over all
 * of them), so slow drift of the machine hits every call alike; the row also lists each
 * round's QPS to show the spread.
 *
 * usage: dd_grpc_load [--server HOST:PORT] [--token T | --token-file F] [--threads N]
 *          [--concurrency N] [--duration S] [--warmup S] [--rounds R] [--catalog NAME]
 *          [--call LABEL:/pkg.Service/Method[:field=value,...]]... [--no-header]
 *          [--server-pid PID] [--base-server HOST:PORT [--base-pid PID] [--base-label L]]
 * With --base-server (a baseline deltad with the same token and catalog) every call also
 * runs against the baseline, right before or after the candidate in each round (the order
 * flips every round), each side pooled on its own; the report adds a row per call for the
 * baseline and the ratios candidate / baseline of QPS, server CPU per call, p50 and p99.
 * With --server-pid (deltad on the same host) it also reports the server's CPU time per
 * call, read from /proc during the measured window: on a shared or small machine that is
 * steadier than QPS, and Ping's CPU per call over another call's is the QPS ratio the
 * server would reach when CPU-bound. Requests are built from the method's input message by field name (string, int32, int64
 * and bool fields). Exit status: 0, 1 when a call failed, 2 on a usage error. */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "deltad/sharing/v1/sharing.pb-c.h"
#include "deltad/system/v1/system.pb-c.h"
#include "load.h"

#define LOAD_MAX_CALLS 16
#define LOAD_MAX_ROUNDS 64

typedef struct load_call {
  char label[64];
  char method[256];
  uint8_t *req;
  size_t len;
  load_result total; /* pooled over rounds */
  double round_qps[LOAD_MAX_ROUNDS];
  int rounds;
  int base; /* 1: runs against --base-server (the mirror of calls[i - n_calls / 2]) */
} load_call;

static const ProtobufCServiceDescriptor *const load__services[] = {
    &deltad__system__v1__system_service__descriptor,
    &deltad__catalog__v1__catalog_service__descriptor,
    &deltad__credentials__v1__credential_service__descriptor,
    &deltad__sharing__v1__delta_sharing_service__descriptor,
};

static int load__usage(const char *why) {
  fprintf(stderr, "dd_grpc_load: %s\n"
          "usage: dd_grpc_load [--server HOST:PORT] [--token T | --token-file F] [--threads N]\n"
          "         [--concurrency N] [--duration S] [--warmup S] [--rounds R] [--catalog NAME]\n"
          "         [--call LABEL:/pkg.Service/Method[:field=value,...]]... [--no-header]\n"
          "         [--server-pid PID] [--base-server HOST:PORT [--base-pid PID] [--base-label L]]\n",
          why);
  return 2;
}

/* ---- requests ------------------------------------------------------------------------- */

static const ProtobufCMessageDescriptor *load__input(const char *path) {
  const char *slash = path[0] == '/' ? strchr(path + 1, '/') : NULL;
  if (!slash) return NULL;
  for (size_t i = 0; i < sizeof load__services / sizeof load__services[0]; i++) {
    const ProtobufCServiceDescriptor *sd = load__services[i];
    if (strlen(sd->name) != (size_t)(slash - path - 1) || strncmp(sd->name, path + 1, strlen(sd->name)))
      continue;
    const ProtobufCMethodDescriptor *md = protobuf_c_service_descriptor_get_method_by_name(sd, slash + 1);
    return md ? md->input : NULL;
  }
  return NULL;
}

/* Sets field=value on m (the value string is borrowed). Returns 0 or -1. */
static int load__set(ProtobufCMessage *m, char *assign) {
  char *eq = strchr(assign, '=');
  if (!eq) return -1;
  *eq = '\0';
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, assign);
  if (!f || f->label == PROTOBUF_C_LABEL_REPEATED || (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return -1;
  void *p = (char *)m + f->offset;
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: *(char **)p = eq + 1; return 0;
  case PROTOBUF_C_TYPE_INT32: *(int32_t *)p = (int32_t)strtol(eq + 1, NULL, 10); return 0;
  case PROTOBUF_C_TYPE_INT64: *(int64_t *)p = strtoll(eq + 1, NULL, 10); return 0;
  case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = strcmp(eq + 1, "true") == 0; return 0;
  default: return -1;
  }
}

/* Parses LABEL:METHOD[:f=v,...] into c (packing the request). Returns 0 or an exit code. */
static int load__parse_call(load_call *c, const char *spec) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", spec);
  char *method = strchr(buf, ':');
  if (!method) return load__usage("--call needs LABEL:METHOD");
  *method++ = '\0';
  char *fields = strchr(method, ':');
  if (fields) *fields++ = '\0';
  if (strlen(buf) >= sizeof c->label || strlen(method) >= sizeof c->method)
    return load__usage("--call label or method too long");
  memcpy(c->label, buf, strlen(buf) + 1);
  memcpy(c->method, method, strlen(method) + 1);
  const ProtobufCMessageDescriptor *d = load__input(method);
  if (!d) return load__usage("unknown method (want /deltad.<pkg>.v1.<Service>/<Method>)");
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  if (!m) return 1;
  protobuf_c_message_init(d, m);
  for (char *save = NULL, *a = fields ? strtok_r(fields, ",", &save) : NULL; a;
       a = strtok_r(NULL, ",", &save)) {
    if (load__set(m, a) != 0) {
      free(m);
      return load__usage("bad field=value (string, int32, int64 or bool fields)");
    }
  }
  c->len = protobuf_c_message_get_packed_size(m);
  c->req = malloc(c->len ? c->len : 1);
  if (c->req) protobuf_c_message_pack(m, c->req);
  free(m); /* field strings point into buf, which is gone now: already packed */
  return c->req ? 0 : 1;
}

/* ---- results -------------------------------------------------------------------------- */

static int load__cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double load__pct_ms(const uint64_t *sorted, uint64_t n, double p) {
  if (n == 0) return 0;
  uint64_t i = (uint64_t)(p * (double)(n - 1) + 0.5);
  return (double)sorted[i] / 1e6;
}

/* Adds one round's result to the pooled total (taking r's latencies). */
static int load__pool(load_result *t, load_result *r) {
  uint64_t *lat = realloc(t->lat_ns, (t->ok + r->ok + 1) * sizeof *lat);
  if (!lat) return -1;
  if (r->ok) memcpy(lat + t->ok, r->lat_ns, r->ok * sizeof *lat);
  t->lat_ns = lat;
  t->ok += r->ok;
  t->errors += r->errors;
  t->seconds += r->seconds;
  t->server_cpu_s = t->server_cpu_s < 0 || r->server_cpu_s < 0 ? -1 : t->server_cpu_s + r->server_cpu_s;
  if (!t->first_error[0]) memcpy(t->first_error, r->first_error, sizeof t->first_error);
  free(r->lat_ns);
  return 0;
}

static double load__qps(const load_result *r) { return r->seconds > 0 ? (double)r->ok / r->seconds : 0; }

/* Server CPU microseconds per counted call; 0 when not measured. */
static double load__cpu_us(const load_result *r) {
  return r->server_cpu_s > 0 && r->ok ? r->server_cpu_s * 1e6 / (double)r->ok : 0;
}

static void load__row(load_call *c, const load_opts *o, const char *base_label) {
  load_result *r = &c->total;
  qsort(r->lat_ns, r->ok, sizeof *r->lat_ns, load__cmp);
  printf("| %s%s%s | gRPC `%s` | %d x %d | %.0f | %.3f | %.3f | %llu | ", c->label,
         c->base ? " @" : "", c->base ? base_label : "", c->method,
         o->threads, o->concurrency, load__qps(r), load__pct_ms(r->lat_ns, r->ok, 0.50),
         load__pct_ms(r->lat_ns, r->ok, 0.99), (unsigned long long)r->errors);
  if (load__cpu_us(r) > 0) printf("%.1f | ", load__cpu_us(r));
  else printf("- | ");
  for (int i = 0; i < c->rounds; i++) printf("%s%.0f", i ? " / " : "", c->round_qps[i]);
  printf(" |\n");
}

/* ---- options -------------------------------------------------------------------------- */

typedef struct load_cli {
  load_opts o;
  const char *token, *token_file, *catalog;
  const char *base_target, *base_label; /* --base-server, --base-label */
  int base_pid;
  int rounds, header;
  load_call calls[LOAD_MAX_CALLS];
  int n_calls;
} load_cli;

static int load__token(load_cli *cli, char *buf, size_t cap) {
  const char *t = cli->token;
  if (cli->token_file) {
    FILE *f = fopen(cli->token_file, "r");
    char line[512] = "";
    if (!f || !fgets(line, sizeof line, f)) {
      if (f) fclose(f);
      fprintf(stderr, "dd_grpc_load: cannot read %s\n", cli->token_file);
      return 1;
    }
    fclose(f);
    line[strcspn(line, "\r\n \t")] = '\0';
    snprintf(buf, cap, "Bearer %s", line);
    cli->o.auth = buf;
    return 0;
  }
  if (t) {
    snprintf(buf, cap, "Bearer %s", t);
    cli->o.auth = buf;
  }
  return 0;
}

static int load__parse(load_cli *cli, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--no-header") == 0) {
      cli->header = 0;
      continue;
    }
    if (i + 1 >= argc) return load__usage("missing value");
    const char *v = argv[++i];
    if (strcmp(a, "--server") == 0) cli->o.target = v;
    else if (strcmp(a, "--token") == 0) cli->token = v;
    else if (strcmp(a, "--token-file") == 0) cli->token_file = v;
    else if (strcmp(a, "--threads") == 0) cli->o.threads = atoi(v);
    else if (strcmp(a, "--concurrency") == 0) cli->o.concurrency = atoi(v);
    else if (strcmp(a, "--duration") == 0) cli->o.duration_s = atof(v);
    else if (strcmp(a, "--warmup") == 0) cli->o.warmup_s = atof(v);
    else if (strcmp(a, "--rounds") == 0) cli->rounds = atoi(v);
    else if (strcmp(a, "--catalog") == 0) cli->catalog = v;
    else if (strcmp(a, "--server-pid") == 0) cli->o.server_pid = atoi(v);
    else if (strcmp(a, "--base-server") == 0) cli->base_target = v;
    else if (strcmp(a, "--base-pid") == 0) cli->base_pid = atoi(v);
    else if (strcmp(a, "--base-label") == 0) cli->base_label = v;
    else if (strcmp(a, "--call") == 0) {
      if (cli->n_calls == LOAD_MAX_CALLS) return load__usage("too many --call");
      int rc = load__parse_call(&cli->calls[cli->n_calls++], v);
      if (rc) return rc;
    } else return load__usage("unknown option");
  }
  if (cli->o.threads < 1 || cli->o.concurrency < 1 || cli->o.duration_s <= 0 ||
      cli->o.warmup_s < 0 || cli->rounds < 1 || cli->rounds > LOAD_MAX_ROUNDS)
    return load__usage("threads, concurrency, duration and rounds (<= 64) must be positive");
  return 0;
}

static int load__default_calls(load_cli *cli) {
  char spec[512];
  int rc = load__parse_call(&cli->calls[0], "Ping:/deltad.system.v1.SystemService/Ping");
  snprintf(spec, sizeof spec, "GetCatalog:/deltad.catalog.v1.CatalogService/GetCatalog:name=%s", cli->catalog);
  if (!rc) rc = load__parse_call(&cli->calls[1], spec);
  cli->n_calls = 2;
  return rc;
}

/* With --base-server: appends to every call its mirror against the baseline (the same
 * request, copied). Returns 0 or an exit code. */
static int load__add_base(load_cli *cli) {
  if (!cli->base_target) return 0;
  if (2 * cli->n_calls > LOAD_MAX_CALLS) return load__usage("too many --call for --base-server");
  int n = cli->n_calls;
  for (int i = 0; i < n; i++) {
    load_call *c = &cli->calls[n + i];
    *c = cli->calls[i];
    c->base = 1;
    c->req = malloc(c->len ? c->len : 1);
    if (!c->req) return 1;
    memcpy(c->req, cli->calls[i].req, c->len);
  }
  cli->n_calls = 2 * n;
  return 0;
}

/* One measured run of c (against the baseline when c->base), pooled into c->total. */
static int load__run_one(load_cli *cli, load_call *c, int round) {
  load_opts o = cli->o;
  if (c->base) o.target = cli->base_target, o.server_pid = cli->base_pid;
  load_result res;
  if (load_run(&res, &o, c->method, c->req, c->len) != 0) {
    fprintf(stderr, "dd_grpc_load: %s: %s\n", c->label, res.first_error);
    free(res.lat_ns);
    return 1;
  }
  fprintf(stderr, "dd_grpc_load: round %d %s%s%s: %.0f QPS, %llu errors\n", round + 1, c->label,
          c->base ? " @" : "", c->base ? cli->base_label : "", load__qps(&res),
          (unsigned long long)res.errors);
  c->round_qps[c->rounds++] = load__qps(&res);
  return load__pool(&c->total, &res) != 0;
}

/* Runs every call round by round; a call and its baseline mirror run back to back, the
 * candidate first in odd rounds. Returns 0, or 1 when a run failed or calls errored. */
static int load__run_all(load_cli *cli) {
  int failed = 0, n = cli->base_target ? cli->n_calls / 2 : cli->n_calls;
  for (int r = 0; r < cli->rounds; r++) {
    for (int i = 0; i < n; i++) {
      int first = cli->base_target && r % 2 ? n + i : i;
      if (load__run_one(cli, &cli->calls[first], r)) return 1;
      if (cli->base_target && load__run_one(cli, &cli->calls[first == i ? n + i : i], r)) return 1;
    }
  }
  for (int i = 0; i < cli->n_calls; i++) {
    load_result *t = &cli->calls[i].total;
    if (t->errors) {
      fprintf(stderr, "dd_grpc_load: %s: %llu failed calls, first: %s\n", cli->calls[i].label,
              (unsigned long long)t->errors, t->first_error);
      failed = 1;
    }
  }
  return failed;
}

/* The ratios of calls[from + i] to calls[from] (the no-op), for n calls of one side. */
static void load__call_ratios(load_cli *cli, int from, int n, const char *side) {
  load_call *c0 = &cli->calls[from];
  double base = load__qps(&c0->total);
  for (int i = 1; i < n && base > 0; i++) {
    load_call *c = &cli->calls[from + i];
    double q = load__qps(&c->total);
    printf("\n%s / %s QPS (gRPC%s): %.3f (%.1f%%)\n", c->label, c0->label, side, q / base,
           100.0 * q / base);
    double cb = load__cpu_us(&c0->total), ci = load__cpu_us(&c->total);
    if (cb > 0 && ci > 0)
      printf("%s / %s by server CPU per call (gRPC%s): %.3f (%.1f%%)\n", c->label, c0->label,
             side, cb / ci, 100.0 * cb / ci);
  }
}

/* Candidate / baseline per call (after load__row sorted the latencies). */
static void load__base_ratios(load_cli *cli, int n) {
  printf("\n");
  for (int i = 0; i < n; i++) {
    load_result *c = &cli->calls[i].total, *b = &cli->calls[n + i].total;
    double bq = load__qps(b), bc = load__cpu_us(b), b50 = load__pct_ms(b->lat_ns, b->ok, 0.50),
           b99 = load__pct_ms(b->lat_ns, b->ok, 0.99);
    printf("%s candidate / %s (gRPC): QPS %.3f, server CPU per call %.3f, p50 %.3f, p99 %.3f\n",
           cli->calls[i].label, cli->base_label, bq > 0 ? load__qps(c) / bq : 0,
           bc > 0 ? load__cpu_us(c) / bc : 0,
           b50 > 0 ? load__pct_ms(c->lat_ns, c->ok, 0.50) / b50 : 0,
           b99 > 0 ? load__pct_ms(c->lat_ns, c->ok, 0.99) / b99 : 0);
  }
}

static void load__report(load_cli *cli) {
  if (cli->header) {
    printf("| call | transport | threads x in flight | QPS | p50 (ms) | p99 (ms) | errors | server CPU µs/call | QPS per round |\n");
    printf("|---|---|---|---:|---:|---:|---:|---:|---|\n");
  }
  for (int i = 0; i < cli->n_calls; i++) load__row(&cli->calls[i], &cli->o, cli->base_label);
  if (!cli->base_target) {
    load__call_ratios(cli, 0, cli->n_calls, "");
    return;
  }
  int n = cli->n_calls / 2;
  char side[80];
  load__call_ratios(cli, 0, n, "");
  snprintf(side, sizeof side, " @%s", cli->base_label);
  load__call_ratios(cli, n, n, side);
  load__base_ratios(cli, n);
}

int main(int argc, char **argv) {
  static load_cli cli;
  char auth[600];
  load_opts def = {"127.0.0.1:50051", NULL, 2, 32, 2.0, 10.0, 0};
  cli.o = def;
  cli.catalog = "bench";
  cli.rounds = 1;
  cli.header = 1;
  cli.base_label = "base";
  int rc = load__parse(&cli, argc, argv);
  if (!rc) rc = load__token(&cli, auth, sizeof auth);
  if (!rc && cli.n_calls == 0) rc = load__default_calls(&cli);
  if (!rc) rc = load__add_base(&cli);
  if (rc) return rc;
  grpc_init();
  rc = load__run_all(&cli);
  load__report(&cli);
  for (int i = 0; i < cli.n_calls; i++) {
    free(cli.calls[i].req);
    free(cli.calls[i].total.lat_ns);
  }
  grpc_shutdown();
  return rc;
}
