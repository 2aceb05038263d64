/* ex_bind.c: binding a tree to an arw_schema: column resolution (Spark's case-insensitive
 * default, struct fields by path, a leading qualifier that names no column is skipped),
 * function lookup, argument checks and the implicit casts each function asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

static int parse_tz(const char *tz, int32_t *off) {
  if (!tz || !*tz || !strcasecmp(tz, "UTC") || !strcasecmp(tz, "Z") || !strcasecmp(tz, "GMT") ||
      !strcasecmp(tz, "Etc/UTC") || !strcasecmp(tz, "UTC0")) {
    *off = 0;
    return 0;
  }
  const char *p = tz;
  if (!strncasecmp(p, "UTC", 3) || !strncasecmp(p, "GMT", 3)) p += 3;
  int h = 0, m = 0, n = 0;
  char sign = *p;
  if ((sign == '+' || sign == '-') &&
      (sscanf(p + 1, "%2d:%2d%n", &h, &m, &n) == 2 || sscanf(p + 1, "%2d%n", &h, &n) == 1) &&
      p[1 + n] == '\0' && h <= 18 && m < 60) {
    *off = (sign == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return 0;
  }
  return dd_err_set(DD_EUNSUPPORTED, "session time zone '%s' is not supported (use UTC or a "
                    "fixed offset such as +02:00)", tz);
}

/* ---- columns ---- */

static int find_child(const arw_schema *s, int parent, const char *name, bool cs) {
  int n = parent == ARW_ROOT ? (int)arw_schema_ncolumns(s) : arw_field_nchildren(s, parent);
  int hit = -1;
  for (int i = 0; i < n; i++) {
    int id = parent == ARW_ROOT ? arw_schema_column(s, (size_t)i) : arw_field_child(s, parent, i);
    const char *fn = arw_field_name(s, id);
    if (!fn) continue;
    if (!strcmp(fn, name)) return id;
    if (!cs && hit < 0 && !strcasecmp(fn, name)) hit = id;
  }
  return hit;
}

static int unresolved(const ex_node *e, const arw_schema *s) {
  char name[256] = "", sugg[512] = "";
  size_t at = 0;
  for (size_t i = 0; i < e->nparts && at < sizeof name - 4; i++)
    at += (size_t)snprintf(name + at, sizeof name - at, "%s`%s`", i ? "." : "", e->parts[i]);
  at = 0;
  for (size_t i = 0; i < arw_schema_ncolumns(s) && i < 5 && at < sizeof sugg - 4; i++)
    at += (size_t)snprintf(sugg + at, sizeof sugg - at, "%s`%s`", i ? ", " : "",
                           arw_field_name(s, arw_schema_column(s, i)));
  return dd_err_set(DD_EINVAL, "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or "
                    "function parameter with name %s cannot be resolved. Did you mean one of the "
                    "following? [%s].", name, sugg);
}

static int bind_column(ex_node *e, const arw_schema *s) {
  bool cs = e->opts.case_sensitive;
  size_t first = 0;
  int id = find_child(s, ARW_ROOT, e->parts[0], cs);
  if (id < 0 && e->nparts > 1 && find_child(s, ARW_ROOT, e->parts[1], cs) >= 0) {
    first = 1; /* a qualifier (table name or alias) */
    id = find_child(s, ARW_ROOT, e->parts[1], cs);
  }
  if (id < 0) return unresolved(e, s);
  size_t depth = e->nparts - first;
  int *path = malloc((depth + 1) * sizeof *path);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  path[0] = id;
  for (size_t k = 1; k < depth; k++) {
    if (arw_field_kind(s, id) != ARW_STRUCT) {
      free(path);
      return dd_err_set(DD_EINVAL, "[INVALID_EXTRACT_BASE_FIELD_TYPE] Can't extract a value from "
                        "`%s`: it is not a struct", arw_field_name(s, id));
    }
    id = find_child(s, id, e->parts[first + k], cs);
    if (id < 0) {
      free(path);
      return dd_err_set(DD_EINVAL, "[FIELD_NOT_FOUND] No such struct field `%s` in the column "
                        "`%s`", e->parts[first + k], e->parts[first]);
    }
    path[k] = id;
  }
  path[depth] = -1;
  /* name parts as the schema spells them */
  for (size_t k = 0; k < depth; k++) {
    char *n = ex__strdup(arw_field_name(s, path[k]));
    if (!n) {
      free(path);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    free(e->parts[k]);
    e->parts[k] = n;
  }
  for (size_t k = depth; k < e->nparts; k++) free(e->parts[k]);
  e->nparts = depth;
  e->fpath = path;
  e->field = id;
  e->type = ex_type_of_arrow(s, id);
  e->nullable = false;
  for (size_t k = 0; k < depth; k++) e->nullable |= arw_field_nullable(s, path[k]);
  return 0;
}

/* ---- implicit casts ---- */

/* Casts literal a to t in place, once at bind time instead of once per batch row. Returns
 * false (a unchanged, no error set) when the cast fails: evaluation then reports it. */
static bool fold_literal(ex_node *a, ex_type t, const ex__opts *o) {
  ex__vec in, out;
  ex_value v;
  char *storage = NULL;
  bool ok = false;
  if (ex__vec_literal(&in, &a->lit, 1)) goto done;
  if (!ex__cast_vec(&out, &in, t, o)) {
    if (!ex__vec_value(&v, &storage, &out, 0)) {
      free((char *)a->lit.str);
      a->lit = v;
      a->type = t;
      a->nullable = v.is_null;
      storage = NULL; /* now the literal's */
      ok = true;
    }
    ex__vec_free(&out);
  }
  ex__vec_free(&in);
done:
  free(storage);
  if (!ok) dd_err_clear();
  return ok;
}

int ex__coerce_arg(ex_node *e, size_t i, ex_type t) {
  ex_node *a = e->args[i];
  if (ex_type_equal(a->type, t)) return 0;
  if (a->kind == EX_LITERAL && !ex__is_nested(t.id) && t.id != EX_T_NULL && fold_literal(a, t, &e->opts))
    return 0;
  ex_node *c = NULL;
  int rc = ex__node_new(&c, EX_CAST);
  if (rc) return rc;
  c->args = malloc(sizeof *c->args);
  if (!c->args) {
    free(c);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  c->args[0] = a;
  c->nargs = 1;
  c->depth = a->depth + 1;
  c->cast_to = t;
  c->implicit = true;
  c->bound = true;
  c->type = t;
  c->nullable = a->nullable;
  c->schema = a->schema;
  c->opts = e->opts;
  e->args[i] = c;
  return 0;
}

bool ex__can_implicit(ex_type from, ex_type to) {
  if (from.id == EX_T_NULL || ex_type_equal(from, to)) return true;
  if (ex__is_numeric(from.id) && ex__is_numeric(to.id)) return true;
  if (from.id == EX_T_STRING) return !ex__is_nested(to.id);
  if (to.id == EX_T_STRING) return !ex__is_nested(from.id) && from.id != EX_T_BINARY;
  if (from.id == EX_T_DATE && (to.id == EX_T_TIMESTAMP || to.id == EX_T_TIMESTAMP_NTZ)) return true;
  if (from.id == EX_T_TIMESTAMP_NTZ && to.id == EX_T_TIMESTAMP) return true;
  if ((from.id == EX_T_TIMESTAMP || from.id == EX_T_TIMESTAMP_NTZ) && to.id == EX_T_DATE) return true;
  return false;
}

/* ---- the walk ---- */

static int bind_node(ex_node *e, const arw_schema *s, const ex__opts *o);

static int bind_call(ex_node *e) {
  const ex__fn *fn = ex__fn_find(e->name);
  if (!fn)
    return dd_err_set(DD_EUNSUPPORTED, "[UNRESOLVED_ROUTINE] Cannot resolve routine `%s` (this "
                      "server does not implement it)", e->name);
  if ((int)e->nargs < fn->min_args || (fn->max_args >= 0 && (int)e->nargs > fn->max_args)) {
    char want[32];
    if (fn->max_args == fn->min_args) snprintf(want, sizeof want, "%d", fn->min_args);
    else if (fn->max_args < 0) snprintf(want, sizeof want, "at least %d", fn->min_args);
    else snprintf(want, sizeof want, "%d to %d", fn->min_args, fn->max_args);
    return dd_err_set(DD_EINVAL, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires %s "
                      "parameters but the actual number is %zu.", e->name, want, e->nargs);
  }
  if (e->distinct)
    return dd_err_set(DD_EUNSUPPORTED, "DISTINCT is only meaningful in an aggregate (`%s`)", e->name);
  for (size_t i = 0; i < e->nargs; i++)
    if (e->args[i]->kind == EX_STAR)
      return dd_err_set(DD_EINVAL, "[INVALID_USAGE_OF_STAR_OR_REGEX] Invalid usage of '*' in `%s`",
                        e->name);
  if (strcmp(e->name, fn->name)) {
    char *canon = ex__strdup(fn->name);
    if (!canon) return dd_err_set(DD_ENOMEM, "out of memory");
    free(e->name);
    e->name = canon;
  }
  e->fn = fn;
  return fn->bind(e);
}

static int bind_node(ex_node *e, const arw_schema *s, const ex__opts *o) {
  int rc;
  e->opts = *o;
  e->schema = s;
  if (e->kind == EX_STAR)
    return dd_err_set(DD_EINVAL, "[INVALID_USAGE_OF_STAR_OR_REGEX] Invalid usage of '*' in an "
                      "expression (expand it first)");
  for (size_t i = 0; i < e->nargs; i++)
    if ((rc = bind_node(e->args[i], s, o))) return rc;
  switch (e->kind) {
    case EX_LITERAL:
      e->type = e->lit.type;
      e->nullable = e->lit.is_null || e->lit.type.id == EX_T_NULL;
      break;
    case EX_COLUMN:
      if ((rc = bind_column(e, s))) return rc;
      break;
    case EX_CAST: {
      ex_type from = e->args[0]->type;
      if (!ex__can_cast(from, e->cast_to, o->ansi || e->try_)) {
        char a[40], b[40];
        ex_type_format(from, a, sizeof a);
        ex_type_format(e->cast_to, b, sizeof b);
        return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast "
                          "\"%s\" to \"%s\"", a, b);
      }
      e->type = e->cast_to;
      e->nullable = e->args[0]->nullable || !o->ansi || e->try_;
      break;
    }
    case EX_ALIAS:
    case EX_SORT:
      e->type = e->args[0]->type;
      e->nullable = e->args[0]->nullable;
      break;
    case EX_CALL:
      if ((rc = bind_call(e))) return rc;
      break;
    default: break;
  }
  e->bound = true;
  return 0;
}

int ex_bind(ex_node **out, const ex_node *e, const arw_schema *s, const ex_bind_opts *opts) {
  ex_bind_opts bo = EX_BIND_OPTS_INIT;
  if (opts) bo = *opts;
  ex__opts o = {.ansi = bo.ansi, .case_sensitive = bo.case_sensitive, .now_us = bo.now_us};
  int rc = parse_tz(bo.time_zone, &o.tz_offset_s);
  if (rc) return rc;
  if (!o.now_us) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    o.now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
  }
  ex_node *c = NULL;
  if ((rc = ex_clone(&c, e))) return rc;
  if ((rc = bind_node(c, s, &o))) {
    ex_free(c);
    return rc;
  }
  *out = c;
  return 0;
}
