/* deltactl_optimize.c: `deltactl table optimize PATH [--where EXPR] [--zorder-by c1,c2]
 * [--target-size BYTES] [--full] [--local]`: OPTIMIZE in-process (--local, store/optimize) or
 * through DeltaConnectService's OptimizeTable relation. The result is Delta's row (path,
 * metrics), printed by dctl_print_result. On a terminal, --local shows its progress (bins,
 * files, bytes) on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_common.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/relations.pb-c.h"
#include "store/optimize/opt.h"
#include "store/optimize/opt_filter.h"

#define REL_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteRelation"

static const char USAGE[] =
    "usage: deltactl table optimize PATH [--where EXPR] [--zorder-by COL[,COL...]]\n"
    "                               [--target-size BYTES] [--full] [--local] [--output FORMAT]\n"
    "Compacts files smaller than the target size (delta.targetFileSize, else 1 GiB) per\n"
    "partition, or with --zorder-by rewrites each partition ordered by those columns.\n"
    "A clustered table is clustered by its clustering columns instead (incrementally;\n"
    "--full also reclusters files clustered by other columns).\n"
    "--where limits the partitions (a predicate on partition columns).\n";

typedef struct args {
  int local, full;
  const char *where, *zorder, *target;
  char *zcopy;
  const char *zcols[64];
  size_t nz;
  int64_t target_size;
} args;

static void progress(void *ctx, const opt_progress *p) {
  (void)ctx;
  fprintf(stderr, "\roptimize: bin %zu/%zu, files %zu/%zu, %lld/%lld MiB ", p->bins_done,
          p->bins_total, p->files_done, p->files_total, (long long)(p->bytes_done >> 20),
          (long long)(p->bytes_total >> 20));
  fflush(stderr);
}

static int parse(args *a, int argc, char **argv, const char **path) {
  dctl_opt opts[] = {
      {"--local", 0, NULL, &a->local, NULL},
      {"--full", 0, NULL, &a->full, NULL},
      {"--where", 1, &a->where, NULL, NULL},
      {"--zorder-by", 1, &a->zorder, NULL, NULL},
      {"--target-size", 1, &a->target, NULL, NULL},
      {NULL, 0, NULL, NULL, NULL},
  };
  dctl_cmd cmd = {USAGE, opts, 1, 1};
  int npos = 0;
  int code = dctl_parse(&cmd, argc, argv, path, &npos);
  if (code != DCTL_CONTINUE) return code;
  if (a->target) {
    char *end;
    long long n = strtoll(a->target, &end, 10);
    if (*end || n <= 0) return dctl_usage_error(USAGE, "--target-size wants bytes, not '%s'", a->target);
    a->target_size = n;
  }
  if (a->zorder) {
    if (!(a->zcopy = strdup(a->zorder))) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    for (char *save = NULL, *t = strtok_r(a->zcopy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      while (*t == ' ') t++;
      if (!*t) continue;
      if (a->nz == 64) return dctl_usage_error(USAGE, "--zorder-by: at most 64 columns");
      a->zcols[a->nz++] = t;
    }
    if (!a->nz) return dctl_usage_error(USAGE, "--zorder-by needs column names");
  }
  return DCTL_CONTINUE;
}

static int run_local(const args *a, const char *path) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  opt_filter *flt = NULL;
  opt_result res;
  dop_result *d = NULL;
  int rc = dl_table_open(&t, path);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) rc = opt_check_where(s, a->where);
  if (!rc && a->where) rc = opt_filter_new(&flt, s, a->where);
  if (!rc) {
    opt_opts o = OPT_OPTS_INIT;
    o.target_size = a->target_size;
    o.zorder_by = a->zcols;
    o.num_zorder = a->nz;
    o.full = a->full;
    if (flt) {
      o.keep_file = opt_filter_keep;
      o.keep_ctx = flt;
      o.predicate = opt_filter_sql(flt);
    }
    if (isatty(2)) o.progress = progress;
    rc = opt_run(&res, t, s, &o);
    if (isatty(2)) fputs("\r\033[K", stderr);
  }
  if (!rc) rc = opt_result_dop(&d, &res, dl_table_location(t));
  opt_filter_free(flt);
  dl_snapshot_free(s);
  dl_table_free(t);
  return dctl_finish_local(rc, d);
}

static int run_server(const args *a, const char *path) {
  Delta__Connect__DeltaTable tbl = DELTA__CONNECT__DELTA_TABLE__INIT;
  Delta__Connect__DeltaTable__Path p = DELTA__CONNECT__DELTA_TABLE__PATH__INIT;
  Delta__Connect__DeltaTable__Path__HadoopConfEntry e[2] = {
      DELTA__CONNECT__DELTA_TABLE__PATH__HADOOP_CONF_ENTRY__INIT,
      DELTA__CONNECT__DELTA_TABLE__PATH__HADOOP_CONF_ENTRY__INIT};
  Delta__Connect__DeltaTable__Path__HadoopConfEntry *ep[2];
  tbl.access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH;
  tbl.path = &p;
  p.path = (char *)path;
  p.hadoop_conf = ep;
  if (a->target) {
    e[p.n_hadoop_conf].key = OPT_TARGET_SIZE_CONF;
    e[p.n_hadoop_conf].value = (char *)a->target;
    ep[p.n_hadoop_conf] = &e[p.n_hadoop_conf];
    p.n_hadoop_conf++;
  }
  if (a->full) {
    e[p.n_hadoop_conf].key = OPT_FULL_CONF;
    e[p.n_hadoop_conf].value = "true";
    ep[p.n_hadoop_conf] = &e[p.n_hadoop_conf];
    p.n_hadoop_conf++;
  }
  Delta__Connect__OptimizeTable ot = DELTA__CONNECT__OPTIMIZE_TABLE__INIT;
  ot.table = &tbl;
  char *where = (char *)a->where;
  if (a->where) {
    ot.n_partition_filters = 1;
    ot.partition_filters = &where;
  }
  ot.n_zorder_columns = a->nz;
  ot.zorder_columns = (char **)a->zcols;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_OPTIMIZE_TABLE;
  rel.optimize_table = &ot;
  return dctl_tableops_remote(REL_METHOD, &rel.base);
}

int dctl_optimize_main(int argc, char **argv) {
  args a;
  memset(&a, 0, sizeof a);
  const char *pos[1] = {NULL};
  int code = parse(&a, argc - 1, argv + 1, pos);
  if (code == DCTL_CONTINUE) {
    char *path = NULL;
    code = dctl_tbl_data_path(pos[0], &path);
    if (!code) code = a.local ? run_local(&a, path) : run_server(&a, path);
    free(path);
  }
  free(a.zcopy);
  return code;
}
