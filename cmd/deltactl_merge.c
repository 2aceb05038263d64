/* deltactl_merge.c: `deltactl table merge TABLE --source SRC --on EXPR CLAUSE... [--local]`:
 * MERGE INTO TABLE AS t USING SRC AS s ON EXPR WHEN ..., in-process (--local, store/dml) or
 * through DeltaConnectService's MergeIntoTable relation. SRC is a Delta table (a path; over
 * the server also a catalog name), a Parquet file (read here: turned into a Delta table in
 * a temporary directory by CONVERT TO DELTA and scanned) or a CSV / JSON-lines file (read
 * by store/textin, typed by --source-schema or inferred as Spark does); a file is sent to
 * the server as a LocalRelation. The clauses, in the order given, each optionally followed by
 * `--and COND`:
 *   --when-matched-update 'col = expr, ...'   --when-matched-update-all   --when-matched-delete
 *   --when-not-matched-insert 'col = expr, ...'   --when-not-matched-insert-all
 *   --when-not-matched-by-source-update 'col = expr, ...'   --when-not-matched-by-source-delete
 * The result is Delta's row, printed by dctl_print_result. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_common.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/relations.pb-c.h"
#include "store/dml/dml.h"
#include "store/scan/scn.h"
#include "store/textin/txi.h"

#define REL_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteRelation"
#define MAX_CLAUSES 64
#define MAX_SETS 256

static const char USAGE[] =
    "usage: deltactl table merge TABLE --source SRC --on EXPR CLAUSE [--and COND] [CLAUSE...]\n"
    "                            [--target-alias t] [--source-alias s] [--schema-evolution]\n"
    "                            [--source-schema 'col TYPE, ...']\n"
    "                            [--local] [--output FORMAT]\n"
    "Merges the rows of SRC (a Delta table, or a Parquet, CSV or JSON-lines file) into TABLE, as\n"
    "MERGE INTO TABLE AS t\n"
    "USING SRC AS s ON EXPR does. Clauses apply in the order given; --and COND after a clause\n"
    "is its condition:\n"
    "  --when-matched-update 'col = expr, ...'   --when-matched-update-all   --when-matched-delete\n"
    "  --when-not-matched-insert 'col = expr, ...'   --when-not-matched-insert-all\n"
    "  --when-not-matched-by-source-update 'col = expr, ...'   --when-not-matched-by-source-delete\n"
    "--schema-evolution adds the source's columns TABLE lacks (UPDATE SET * / INSERT *, or a SET\n"
    "of a new column), as MERGE WITH SCHEMA EVOLUTION.\n";

static const struct {
  const char *flag;
  dml_merge_kind kind;
  dml_merge_action action;
  bool sets;
} CLAUSES[] = {
    {"--when-matched-update", DML_MERGE_MATCHED, DML_MERGE_UPDATE, true},
    {"--when-matched-update-all", DML_MERGE_MATCHED, DML_MERGE_UPDATE_STAR, false},
    {"--when-matched-delete", DML_MERGE_MATCHED, DML_MERGE_DELETE, false},
    {"--when-not-matched-insert", DML_MERGE_NOT_MATCHED, DML_MERGE_INSERT, true},
    {"--when-not-matched-insert-all", DML_MERGE_NOT_MATCHED, DML_MERGE_INSERT_STAR, false},
    {"--when-not-matched-by-source-update", DML_MERGE_NOT_MATCHED_BY_SOURCE, DML_MERGE_UPDATE, true},
    {"--when-not-matched-by-source-delete", DML_MERGE_NOT_MATCHED_BY_SOURCE, DML_MERGE_DELETE, false},
};

typedef struct clause {
  dml_merge_kind kind;
  dml_merge_action action;
  const char *cond;
  size_t nsets;
  char *cols[MAX_SETS];
  char *vals[MAX_SETS];
} clause;

typedef struct args {
  int local, evolve;
  const char *source, *on, *ta, *sa, *source_schema;
  clause cl[MAX_CLAUSES];
  size_t ncl;
} args;

/* "a = x, b = f(y, z)" split at the top-level commas (quotes and parentheses respected). */
static int split_sets(clause *c, const char *text) {
  const char *p = text;
  while (*p) {
    const char *st = p;
    int depth = 0;
    char q = 0;
    for (; *p && (q || depth || *p != ','); p++) {
      if (q) q = *p == q ? 0 : q;
      else if (*p == '\'' || *p == '"' || *p == '`') q = *p;
      else depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
    }
    const char *eq = memchr(st, '=', (size_t)(p - st));
    if (!eq || c->nsets == MAX_SETS) return dctl_usage_error(USAGE, "assignments want 'col = expr, ...', not '%s'", text);
    const char *ce = eq;
    while (st < ce && (*st == ' ')) st++;
    while (ce > st && ce[-1] == ' ') ce--;
    if (ce == st) return dctl_usage_error(USAGE, "an assignment without a column in '%s'", text);
    c->cols[c->nsets] = strndup(st, (size_t)(ce - st));
    c->vals[c->nsets] = strndup(eq + 1, (size_t)(p - eq - 1));
    if (!c->cols[c->nsets++] || !c->vals[c->nsets - 1]) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    if (*p == ',') p++;
  }
  return DCTL_CONTINUE;
}

/* Takes the clause flags (and their --and) out of argv, in order; *argc shrinks. */
static int take_clauses(args *a, int *argc, char **argv) {
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    size_t k = 0;
    while (k < sizeof CLAUSES / sizeof *CLAUSES && strcmp(argv[i], CLAUSES[k].flag)) k++;
    if (!strcmp(argv[i], "--and")) {
      if (!a->ncl || i + 1 >= *argc) return dctl_usage_error(USAGE, "--and COND follows a clause");
      if (a->cl[a->ncl - 1].cond) return dctl_usage_error(USAGE, "a clause has one --and");
      a->cl[a->ncl - 1].cond = argv[++i];
      continue;
    }
    if (k == sizeof CLAUSES / sizeof *CLAUSES) {
      argv[out++] = argv[i];
      continue;
    }
    if (a->ncl == MAX_CLAUSES) return dctl_usage_error(USAGE, "at most %d clauses", MAX_CLAUSES);
    clause *c = &a->cl[a->ncl++];
    c->kind = CLAUSES[k].kind;
    c->action = CLAUSES[k].action;
    if (CLAUSES[k].sets) {
      if (i + 1 >= *argc) return dctl_usage_error(USAGE, "%s wants 'col = expr, ...'", argv[i]);
      int code = split_sets(c, argv[++i]);
      if (code != DCTL_CONTINUE) return code;
    }
  }
  *argc = out;
  return a->ncl ? DCTL_CONTINUE : dctl_usage_error(USAGE, "merge needs at least one clause");
}

/* ---- the source ---------------------------------------------------------------------- */

typedef struct source {
  char *tmp;          /* the converted Parquet file's directory */
  dl_table *t;
  dl_snapshot *s;
  scn_scan *sc;
  arw_schema *text;   /* a CSV or JSON file's schema (store/textin) */
  arw_batch **b;
  size_t n;
} source;

static const arw_schema *source_schema(const source *s) { return s->text ? s->text : scn_schema(s->sc); }

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}

/* Copies file from to the new file to (when a hard link cannot be made). */
static int copy_file(const char *from, const char *to);
static int link_or_copy(const char *from, const char *to) { return link(from, to) && copy_file(from, to); }

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wbx") : NULL;
  char buf[65536];
  size_t n;
  int ok = in && out;
  while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
  if (in && ferror(in)) ok = 0;
  if (in) fclose(in);
  if (out && fclose(out)) ok = 0;
  return ok ? 0 : -1;
}

/* A Parquet file as a Delta table: linked (or copied) into a new directory and converted. */
static int convert_file(source *s, const char *file, char **loc) {
  char tmpl[] = "/tmp/deltactl-merge-XXXXXX";
  dop_result *r = NULL;
  char *abs = realpath(file, NULL);
  if (!abs || !mkdtemp(tmpl)) return free(abs), dd_err_set(DD_EIO, "merge: cannot stage the source file %s", file);
  s->tmp = strdup(tmpl);
  size_t len = strlen(tmpl) + 32;
  char *link = malloc(len);
  int rc = s->tmp && link ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) snprintf(link, len, "%s/part-00000.parquet", tmpl);
  if (!rc && link_or_copy(abs, link)) rc = dd_err_set(DD_EIO, "merge: cannot stage the source file %s", file);
  if (!rc) rc = dop_convert(&r, tmpl, NULL, NULL, NULL);
  dop_result_free(r);
  free(link);
  free(abs);
  if (!rc && !(*loc = strdup(tmpl))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  return rc ? dd_err_wrap(rc, "merge: reading the Parquet source %s", file) : 0;
}

static int source_open(source *s, const char *src, const char *schema) {
  if (txi_is_text(src)) {
    txi_opts to = {.schema = schema};
    return txi_read(&s->text, &s->b, &s->n, src, &to);
  }
  if (schema) return dd_err_set(DD_EINVAL, "--source-schema is for CSV and JSON sources");
  char *loc = NULL;
  const arw_batch *b = NULL;
  size_t cap = 0;
  int rc = is_file(src) ? convert_file(s, src, &loc) : !(loc = strdup(src)) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc) rc = dl_table_open(&s->t, loc);
  if (!rc) rc = dl_snapshot_open(&s->s, s->t, NULL);
  scn_opts so = SCN_OPTS_INIT;
  if (!rc) rc = scn_open(&s->sc, s->t, s->s, &so);
  while (!rc && !(rc = scn_next(s->sc, &b)) && b) {
    if (s->n == cap) {
      cap = cap ? cap * 2 : 16;
      arw_batch **nb = realloc(s->b, cap * sizeof *nb);
      if (!nb) { rc = dd_err_set(DD_ENOMEM, "out of memory"); break; }
      s->b = nb;
    }
    if (!(rc = arw_batch_slice(&s->b[s->n], b, 0, arw_batch_rows(b)))) s->n++;
  }
  free(loc);
  return rc;
}

static void source_free(source *s) {
  for (size_t i = 0; i < s->n; i++) arw_batch_free(s->b[i]);
  free(s->b);
  scn_free(s->sc);
  arw_schema_free(s->text);
  dl_snapshot_free(s->s);
  dl_table_free(s->t);
  if (s->tmp) nftw(s->tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(s->tmp);
}

/* ---- in-process ------------------------------------------------------------------------ */

static int run_local(const args *a, const char *path) {
  source src = {0};
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dml_merge_result res;
  dop_result *d = NULL;
  ex_node *on = NULL;
  dml_merge_clause mc[MAX_CLAUSES];
  dml_assignment *as[MAX_CLAUSES] = {NULL};
  ex_node **trees[MAX_CLAUSES] = {NULL}, *conds[MAX_CLAUSES] = {NULL};
  int rc = ex_parse(&on, a->on, strlen(a->on), NULL);
  if (rc) rc = dd_err_wrap(rc, "--on");
  for (size_t i = 0; !rc && i < a->ncl; i++) {
    const clause *c = &a->cl[i];
    as[i] = calloc(c->nsets + 1, sizeof *as[i]);
    trees[i] = calloc(c->nsets + 1, sizeof *trees[i]);
    if (!as[i] || !trees[i]) rc = dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc && c->cond && (rc = ex_parse(&conds[i], c->cond, strlen(c->cond), NULL))) rc = dd_err_wrap(rc, "--and");
    for (size_t k = 0; !rc && k < c->nsets; k++) {
      if ((rc = ex_parse(&trees[i][k], c->vals[k], strlen(c->vals[k]), NULL))) rc = dd_err_wrap(rc, "%s =", c->cols[k]);
      as[i][k] = (dml_assignment){c->cols[k], trees[i][k]};
    }
    mc[i] = (dml_merge_clause){c->kind, c->action, conds[i], as[i], c->nsets};
  }
  if (!rc) rc = source_open(&src, a->source, a->source_schema);
  if (!rc) rc = dl_table_open(&t, path);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) {
    dml_merge_opts o = DML_MERGE_OPTS_INIT;
    o.source_schema = source_schema(&src);
    o.source = (const arw_batch *const *)src.b;
    o.num_source = src.n;
    o.target_alias = a->ta;
    o.source_alias = a->sa;
    o.on = on;
    o.clauses = mc;
    o.num_clauses = a->ncl;
    o.schema_evolution = a->evolve;
    rc = dml_merge(&res, t, s, &o);
  }
  if (!rc) rc = dml_merge_result_dop(&d, &res);
  for (size_t i = 0; i < a->ncl; i++) {
    for (size_t k = 0; trees[i] && k < a->cl[i].nsets; k++) ex_free(trees[i][k]);
    free(trees[i]);
    free(as[i]);
    ex_free(conds[i]);
  }
  ex_free(on);
  dl_snapshot_free(s);
  dl_table_free(t);
  source_free(&src);
  return dctl_finish_local(rc, d);
}

/* ---- over the server ------------------------------------------------------------------- */

typedef struct text_expr {
  Spark__Connect__Expression e;
  Spark__Connect__Expression__ExpressionString s;
} text_expr;

static Spark__Connect__Expression *text(text_expr *x, const char *sql) {
  Spark__Connect__Expression e = SPARK__CONNECT__EXPRESSION__INIT;
  Spark__Connect__Expression__ExpressionString s = SPARK__CONNECT__EXPRESSION__EXPRESSION_STRING__INIT;
  x->e = e, x->s = s;
  x->s.expression = (char *)sql;
  x->e.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING;
  x->e.expression_string = &x->s;
  return &x->e;
}

typedef struct wire {
  Spark__Connect__Relation target, tread_rel, source, sinner;
  Spark__Connect__SubqueryAlias talias, salias;
  Spark__Connect__Read tread, sread;
  Spark__Connect__Read__NamedTable tnt, snt;
  Spark__Connect__LocalRelation local;
  arw_buf ipc;
  text_expr on;
  text_expr cond[MAX_CLAUSES];
  Delta__Connect__MergeIntoTable__Action act[MAX_CLAUSES], *pm[MAX_CLAUSES], *pn[MAX_CLAUSES], *ps[MAX_CLAUSES];
  Delta__Connect__MergeIntoTable__Action__UpdateAction up[MAX_CLAUSES];
  Delta__Connect__MergeIntoTable__Action__InsertAction ins[MAX_CLAUSES];
  Delta__Connect__MergeIntoTable__Action__DeleteAction del;
  Delta__Connect__MergeIntoTable__Action__UpdateStarAction ustar;
  Delta__Connect__MergeIntoTable__Action__InsertStarAction istar;
  Delta__Connect__Assignment **asp[MAX_CLAUSES];
} wire;

/* rel named tbl (a Read of a named table) under alias al. */
static void named(Spark__Connect__Relation *outer, Spark__Connect__SubqueryAlias *sa, Spark__Connect__Relation *inner,
                  Spark__Connect__Read *rd, Spark__Connect__Read__NamedTable *nt, const char *tbl, const char *al) {
  Spark__Connect__Read__NamedTable n0 = SPARK__CONNECT__READ__NAMED_TABLE__INIT;
  Spark__Connect__Read r0 = SPARK__CONNECT__READ__INIT;
  *nt = n0, *rd = r0;
  nt->unparsed_identifier = (char *)tbl;
  rd->read_type_case = SPARK__CONNECT__READ__READ_TYPE_NAMED_TABLE;
  rd->named_table = nt;
  inner->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_READ;
  inner->read = rd;
  sa->input = inner;
  sa->alias = (char *)al;
  outer->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS;
  outer->subquery_alias = sa;
}

/* A Parquet source read here and sent whole as Arrow IPC. */
static int local_source(wire *w, const char *file, const char *schema, const char *al) {
  source src = {0};
  int rc = source_open(&src, file, schema);
  if (!rc) rc = arw_write_schema(&w->ipc, source_schema(&src));
  for (size_t i = 0; !rc && i < src.n; i++) rc = arw_write_batch(&w->ipc, src.b[i]);
  if (!rc) rc = arw_write_eos(&w->ipc);
  source_free(&src);
  if (rc) return dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  w->local.data.data = w->ipc.data;
  w->local.data.len = w->ipc.len;
  w->sinner.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION;
  w->sinner.local_relation = &w->local;
  w->salias.input = &w->sinner;
  w->salias.alias = (char *)al;
  w->source.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS;
  w->source.subquery_alias = &w->salias;
  return DCTL_CONTINUE;
}

static Delta__Connect__Assignment **assignments(const clause *c) {
  Delta__Connect__Assignment **v = calloc(c->nsets + 1, sizeof *v);
  for (size_t k = 0; v && k < c->nsets; k++) {
    Delta__Connect__Assignment *as = calloc(1, sizeof *as);
    Spark__Connect__Expression *f = calloc(1, sizeof *f);
    Spark__Connect__Expression__UnresolvedAttribute *at = calloc(1, sizeof *at);
    text_expr *val = calloc(1, sizeof *val);
    if (!as || !f || !at || !val) return free(as), free(f), free(at), free(val), v; /* the server refuses the hole */
    Delta__Connect__Assignment a0 = DELTA__CONNECT__ASSIGNMENT__INIT;
    Spark__Connect__Expression e0 = SPARK__CONNECT__EXPRESSION__INIT;
    Spark__Connect__Expression__UnresolvedAttribute u0 = SPARK__CONNECT__EXPRESSION__UNRESOLVED_ATTRIBUTE__INIT;
    *as = a0, *f = e0, *at = u0;
    at->unparsed_identifier = c->cols[k];
    f->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
    f->unresolved_attribute = at;
    as->field = f;
    as->value = text(val, c->vals[k]);
    v[k] = as;
  }
  return v;
}

static void assignments_free(Delta__Connect__Assignment **v, size_t n) {
  for (size_t k = 0; v && k < n && v[k]; k++) {
    free(v[k]->field->unresolved_attribute);
    free(v[k]->field);
    free((text_expr *)v[k]->value);
    free(v[k]);
  }
  free(v);
}

static void set_action(wire *w, size_t i, const clause *c) {
  Delta__Connect__MergeIntoTable__Action a0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__INIT;
  Delta__Connect__MergeIntoTable__Action__UpdateAction u0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__UPDATE_ACTION__INIT;
  Delta__Connect__MergeIntoTable__Action__InsertAction i0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__INSERT_ACTION__INIT;
  Delta__Connect__MergeIntoTable__Action *a = &w->act[i];
  *a = a0, w->up[i] = u0, w->ins[i] = i0;
  a->condition = c->cond ? text(&w->cond[i], c->cond) : NULL;
  switch (c->action) {
    case DML_MERGE_DELETE: a->action_type_case = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_DELETE_ACTION, a->delete_action = &w->del; break;
    case DML_MERGE_UPDATE_STAR: a->action_type_case = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_STAR_ACTION, a->update_star_action = &w->ustar; break;
    case DML_MERGE_INSERT_STAR: a->action_type_case = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_STAR_ACTION, a->insert_star_action = &w->istar; break;
    case DML_MERGE_UPDATE:
      w->up[i].n_assignments = c->nsets, w->up[i].assignments = w->asp[i] = assignments(c);
      a->action_type_case = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_ACTION, a->update_action = &w->up[i];
      break;
    default:
      w->ins[i].n_assignments = c->nsets, w->ins[i].assignments = w->asp[i] = assignments(c);
      a->action_type_case = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_ACTION, a->insert_action = &w->ins[i];
  }
}

static int run_server(const args *a, const char *path) {
  wire *w = calloc(1, sizeof *w);
  if (!w) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  Spark__Connect__Relation r0 = SPARK__CONNECT__RELATION__INIT;
  Spark__Connect__SubqueryAlias s0 = SPARK__CONNECT__SUBQUERY_ALIAS__INIT;
  Spark__Connect__LocalRelation l0 = SPARK__CONNECT__LOCAL_RELATION__INIT;
  Delta__Connect__MergeIntoTable__Action__DeleteAction d0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__DELETE_ACTION__INIT;
  Delta__Connect__MergeIntoTable__Action__UpdateStarAction us0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__UPDATE_STAR_ACTION__INIT;
  Delta__Connect__MergeIntoTable__Action__InsertStarAction is0 = DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__INSERT_STAR_ACTION__INIT;
  w->target = w->tread_rel = w->source = w->sinner = r0;
  w->talias = w->salias = s0;
  w->local = l0, w->del = d0, w->ustar = us0, w->istar = is0;
  named(&w->target, &w->talias, &w->tread_rel, &w->tread, &w->tnt, path, a->ta);
  int code = DCTL_CONTINUE;
  if (is_file(a->source)) code = local_source(w, a->source, a->source_schema, a->sa);
  else named(&w->source, &w->salias, &w->sinner, &w->sread, &w->snt, a->source, a->sa);
  Delta__Connect__MergeIntoTable m = DELTA__CONNECT__MERGE_INTO_TABLE__INIT;
  size_t nm = 0, nn = 0, ns = 0;
  for (size_t i = 0; i < a->ncl; i++) {
    set_action(w, i, &a->cl[i]);
    if (a->cl[i].kind == DML_MERGE_MATCHED) w->pm[nm++] = &w->act[i];
    else if (a->cl[i].kind == DML_MERGE_NOT_MATCHED) w->pn[nn++] = &w->act[i];
    else w->ps[ns++] = &w->act[i];
  }
  m.target = &w->target;
  m.source = &w->source;
  m.condition = text(&w->on, a->on);
  m.n_matched_actions = nm, m.matched_actions = w->pm;
  m.n_not_matched_actions = nn, m.not_matched_actions = w->pn;
  m.n_not_matched_by_source_actions = ns, m.not_matched_by_source_actions = w->ps;
  if (a->evolve) m._with_schema_evolution_case = DELTA__CONNECT__MERGE_INTO_TABLE___WITH_SCHEMA_EVOLUTION_WITH_SCHEMA_EVOLUTION, m.with_schema_evolution = 1;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_MERGE_INTO_TABLE;
  rel.merge_into_table = &m;
  if (code == DCTL_CONTINUE) code = dctl_tableops_remote(REL_METHOD, &rel.base);
  for (size_t i = 0; i < a->ncl; i++) assignments_free(w->asp[i], a->cl[i].nsets);
  arw_buf_free(&w->ipc);
  free(w);
  return code;
}

int dctl_merge_main(int argc, char **argv) {
  args a;
  memset(&a, 0, sizeof a);
  a.ta = "t", a.sa = "s";
  argc--, argv++;
  int code = take_clauses(&a, &argc, argv);
  const char *pos[1] = {NULL};
  dctl_opt opts[] = {
      {"--local", 0, NULL, &a.local, NULL},
      {"--source", 1, &a.source, NULL, NULL},
      {"--on", 1, &a.on, NULL, NULL},
      {"--target-alias", 1, &a.ta, NULL, NULL},
      {"--source-alias", 1, &a.sa, NULL, NULL},
      {"--schema-evolution", 0, NULL, &a.evolve, NULL},
      {"--source-schema", 1, &a.source_schema, NULL, NULL},
      {NULL, 0, NULL, NULL, NULL},
  };
  dctl_cmd cmd = {USAGE, opts, 1, 1};
  int npos = 0;
  if (code == DCTL_CONTINUE) code = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (code == DCTL_CONTINUE && (!a.source || !a.on)) code = dctl_usage_error(USAGE, "merge needs --source SRC and --on EXPR");
  /* a catalog name as the source goes to the server as it is (it resolves it); --local
   * looks its location up */
  char *srcabs = NULL;
  if (code == DCTL_CONTINUE && (a.source[0] != '/' && (!dctl_tbl_is_catalog_name(a.source) || a.local))) {
    int e = dctl_tbl_data_path(a.source, &srcabs);
    if (e) code = e;
  }
  if (srcabs) a.source = srcabs;
  if (code == DCTL_CONTINUE) {
    char *path = NULL;
    code = dctl_tbl_data_path(pos[0], &path);
    if (!code) code = a.local ? run_local(&a, path) : run_server(&a, path);
    free(path);
  }
  free(srcabs);
  for (size_t i = 0; i < a.ncl; i++)
    for (size_t k = 0; k < a.cl[i].nsets; k++) free(a.cl[i].cols[k]), free(a.cl[i].vals[k]);
  return code;
}
