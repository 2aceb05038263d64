/* connect_expr.c: spark.connect Expression -> ex_node (see connect_expr.h). */
#include "server/service/connect_expr.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

static const char *kind_name(Spark__Connect__Expression__ExprTypeCase k) {
  switch (k) {
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_REGEX: return "unresolved_regex";
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE: return "unresolved_extract_value";
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UPDATE_FIELDS: return "update_fields";
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_NAMED_ARGUMENT_EXPRESSION: return "named_argument_expression";
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXTENSION: return "extension";
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE__NOT_SET: return "(none set)";
    default: return "of a kind this server does not know";
  }
}

int connect_expr_type(ex_type *out, const Spark__Connect__DataType *t) {
  if (!t) return dd_err_set(DD_EINVAL, "a cast or typed literal without a type");
  switch (t->kind_case) {
    case SPARK__CONNECT__DATA_TYPE__KIND_NULL: *out = (ex_type){.id = EX_T_NULL}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_BINARY: *out = (ex_type){.id = EX_T_BINARY}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_BOOLEAN: *out = (ex_type){.id = EX_T_BOOLEAN}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_BYTE: *out = (ex_type){.id = EX_T_BYTE}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_SHORT: *out = (ex_type){.id = EX_T_SHORT}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_INTEGER: *out = (ex_type){.id = EX_T_INT}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_LONG: *out = (ex_type){.id = EX_T_LONG}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_FLOAT: *out = (ex_type){.id = EX_T_FLOAT}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_DOUBLE: *out = (ex_type){.id = EX_T_DOUBLE}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_STRING:
    case SPARK__CONNECT__DATA_TYPE__KIND_CHAR:
    case SPARK__CONNECT__DATA_TYPE__KIND_VAR_CHAR: *out = (ex_type){.id = EX_T_STRING}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_DATE: *out = (ex_type){.id = EX_T_DATE}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP: *out = (ex_type){.id = EX_T_TIMESTAMP}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP_NTZ: *out = (ex_type){.id = EX_T_TIMESTAMP_NTZ}; return 0;
    case SPARK__CONNECT__DATA_TYPE__KIND_DECIMAL: {
      const Spark__Connect__DataType__Decimal *d = t->decimal;
      int p = d->_precision_case ? d->precision : 10, s = d->_scale_case ? d->scale : 0;
      if (p < 1 || p > 38 || s < 0 || s > p)
        return dd_err_set(DD_EINVAL, "decimal(%d,%d) is not a valid type", p, s);
      *out = (ex_type){.id = EX_T_DECIMAL, .precision = p, .scale = s};
      return 0;
    }
    case SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED: {
      const char *s = t->unparsed->data_type_string;
      return ex_type_parse(out, s, strlen(s));
    }
    default:
      return dd_err_set(DD_EUNSUPPORTED, "data type (kind %d) is not supported in expressions",
                        (int)t->kind_case);
  }
}

/* Replaces literal *out by the same value of type t (a decimal literal's own precision). */
static int retype(ex_node **out, ex_type t) {
  ex_node *cast = NULL, *bound = NULL;
  arw_schema *none = NULL;
  ex_value v;
  char *storage = NULL;
  int rc = ex_new_cast(&cast, *out, t);
  *out = NULL;
  if (rc || (rc = arw_schema_new(&none)) || (rc = ex_bind(&bound, cast, none, NULL)) ||
      (rc = ex_eval_const(&v, &storage, bound)))
    goto cleanup;
  rc = ex_new_literal(out, &v);
cleanup:
  free(storage);
  ex_free(bound);
  ex_free(cast);
  arw_schema_free(none);
  return rc;
}

static int literal(ex_node **out, const Spark__Connect__Expression__Literal *l) {
  ex_value v = {0};
  switch (l->literal_type_case) {
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL: {
      ex_type t = {.id = EX_T_NULL};
      int rc = l->null ? connect_expr_type(&t, l->null) : 0;
      if (rc) return rc;
      v.type.id = EX_T_NULL;
      v.is_null = true;
      ex_node *n;
      if ((rc = ex_new_literal(&n, &v))) return rc;
      if (t.id == EX_T_NULL) {
        *out = n;
        return 0;
      }
      return ex_new_cast(out, n, t); /* a typed NULL */
    }
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BINARY:
      v.type.id = EX_T_BINARY;
      v.str = (const char *)l->binary.data;
      v.len = l->binary.len;
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN: v.type.id = EX_T_BOOLEAN; v.b = l->boolean; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BYTE: v.type.id = EX_T_BYTE; v.i = l->byte; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_SHORT: v.type.id = EX_T_SHORT; v.i = l->short_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER: v.type.id = EX_T_INT; v.i = l->integer; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG: v.type.id = EX_T_LONG; v.i = l->long_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_FLOAT: v.type.id = EX_T_FLOAT; v.f = l->float_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE: v.type.id = EX_T_DOUBLE; v.f = l->double_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING:
      v.type.id = EX_T_STRING;
      v.str = l->string;
      v.len = strlen(l->string);
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DATE: v.type.id = EX_T_DATE; v.i = l->date; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP: v.type.id = EX_T_TIMESTAMP; v.i = l->timestamp; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP_NTZ:
      v.type.id = EX_T_TIMESTAMP_NTZ;
      v.i = l->timestamp_ntz;
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DECIMAL: {
      /* the text parsed as a SQL decimal literal gives its own precision and scale */
      const Spark__Connect__Expression__Literal__Decimal *d = l->decimal;
      char *text = malloc(strlen(d->value) + 3);
      if (!text) return dd_err_set(DD_ENOMEM, "out of memory");
      strcpy(text, d->value);
      if (!strchr(text, '.') && !strchr(text, 'e') && !strchr(text, 'E')) strcat(text, ".");
      strcat(text, "BD");
      ex_parse_opts po = EX_PARSE_OPTS_INIT;
      po.allow_alias = false;
      int rc = ex_parse(out, text, strlen(text), &po);
      free(text);
      if (rc) return dd_err_wrap(DD_EINVAL, "decimal literal '%s'", d->value);
      if (ex_node_kind(*out) != EX_LITERAL) {
        ex_free(*out);
        return dd_err_set(DD_EINVAL, "decimal literal '%s' is not a number", d->value);
      }
      if (d->_precision_case && d->_scale_case) {
        ex_type t = {.id = EX_T_DECIMAL, .precision = d->precision, .scale = d->scale};
        if (!ex_type_equal(t, ex_literal(*out)->type)) return retype(out, t);
      }
      return 0;
    }
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_CALENDAR_INTERVAL:
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_YEAR_MONTH_INTERVAL:
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DAY_TIME_INTERVAL:
      return dd_err_set(DD_EUNSUPPORTED, "interval literals are not supported");
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_ARRAY:
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_MAP:
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRUCT:
      return dd_err_set(DD_EUNSUPPORTED, "array, map and struct literals are not supported");
    default: return dd_err_set(DD_EINVAL, "a literal without a value");
  }
  return ex_new_literal(out, &v);
}

static int convert(ex_node **out, const Spark__Connect__Expression *m, int depth);

static int call(ex_node **out, const char *name, Spark__Connect__Expression **args, size_t n,
                bool distinct, int depth) {
  ex_node **a = calloc(n ? n : 1, sizeof *a);
  if (!a) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = convert(&a[i], args[i], depth + 1);
  if (rc) {
    for (size_t i = 0; i < n; i++) ex_free(a[i]);
    free(a);
    return rc;
  }
  if (!*name) {
    free(a);
    return dd_err_set(DD_EINVAL, "a function call without a name");
  }
  rc = ex_new_call(out, name, a, n);
  free(a);
  if (!rc && distinct) ex_set_distinct(*out, true);
  return rc;
}

/* col["field"] / col.field (pyspark's getField, __getattr__): a struct field of a column
 * becomes the column's path one part longer. */
static int extract_field(ex_node **out, const Spark__Connect__Expression__UnresolvedExtractValue *x,
                         int depth) {
  const Spark__Connect__Expression *k = x->extraction;
  if (!k || k->expr_type_case != SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL ||
      k->literal->literal_type_case != SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING)
    return dd_err_set(DD_EUNSUPPORTED, "expression 'unresolved_extract_value' is supported for "
                      "struct fields by name only (not array or map elements)");
  ex_node *base;
  int rc = convert(&base, x->child, depth + 1);
  if (rc) return rc;
  size_t n;
  const char *const *parts = ex_column_parts(base, &n);
  if (!parts) {
    ex_free(base);
    return dd_err_set(DD_EUNSUPPORTED, "a field of an expression that is not a column is not supported");
  }
  const char **p2 = malloc((n + 1) * sizeof *p2);
  if (!p2) {
    ex_free(base);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  memcpy(p2, parts, n * sizeof *p2);
  p2[n] = k->literal->string;
  rc = ex_new_column(out, p2, n + 1);
  free(p2);
  ex_free(base);
  return rc;
}

static int convert(ex_node **out, const Spark__Connect__Expression *m, int depth) {
  if (!m) return dd_err_set(DD_EINVAL, "an expression is missing");
  if (depth > EX_MAX_DEPTH)
    return dd_err_set(DD_EINVAL, "expression nested deeper than %d levels", EX_MAX_DEPTH);
  int rc;
  switch (m->expr_type_case) {
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL: return literal(out, m->literal);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE: {
      const char *id = m->unresolved_attribute->unparsed_identifier;
      return ex_new_column_text(out, id, strlen(id));
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION: {
      const Spark__Connect__Expression__UnresolvedFunction *f = m->unresolved_function;
      if (f->is_user_defined_function)
        return dd_err_set(DD_EUNSUPPORTED, "user-defined function `%s` is not supported", f->function_name);
      return call(out, f->function_name, f->arguments, f->n_arguments, f->is_distinct, depth);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CALL_FUNCTION: {
      const Spark__Connect__CallFunction *f = m->call_function;
      return call(out, f->function_name, f->arguments, f->n_arguments, false, depth);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING: {
      const char *s = m->expression_string->expression;
      return ex_parse(out, s, strlen(s), NULL);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_STAR: {
      const Spark__Connect__Expression__UnresolvedStar *s = m->unresolved_star;
      if (!s->_unparsed_target_case) return ex_new_star(out, NULL);
      char *t = strdup(s->unparsed_target);
      if (!t) return dd_err_set(DD_ENOMEM, "out of memory");
      size_t n = strlen(t);
      if (n >= 2 && !strcmp(t + n - 2, ".*")) t[n - 2] = '\0';
      rc = ex_new_star(out, t);
      free(t);
      return rc;
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS: {
      const Spark__Connect__Expression__Alias *a = m->alias;
      if (a->n_name != 1)
        return dd_err_set(DD_EUNSUPPORTED, "an alias with %zu names is not supported", a->n_name);
      ex_node *c = NULL;
      if ((rc = convert(&c, a->expr, depth + 1))) return rc;
      return ex_new_alias(out, c, a->name[0]);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST: {
      const Spark__Connect__Expression__Cast *c = m->cast;
      ex_type t;
      if (c->cast_to_type_case == SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR)
        rc = ex_type_parse(&t, c->type_str, strlen(c->type_str));
      else
        rc = connect_expr_type(&t, c->cast_to_type_case ? c->type : NULL);
      if (rc) return rc;
      ex_node *a = NULL;
      if ((rc = convert(&a, c->expr, depth + 1))) return rc;
      if (c->eval_mode == SPARK__CONNECT__EXPRESSION__CAST__EVAL_MODE__EVAL_MODE_TRY)
        return ex_new_try_cast(out, a, t);
      return ex_new_cast(out, a, t);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE:
      return extract_field(out, m->unresolved_extract_value, depth);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_SORT_ORDER: {
      const Spark__Connect__Expression__SortOrder *s = m->sort_order;
      ex_node *a = NULL;
      if ((rc = convert(&a, s->child, depth + 1))) return rc;
      bool asc = s->direction != SPARK__CONNECT__EXPRESSION__SORT_ORDER__SORT_DIRECTION__SORT_DIRECTION_DESCENDING;
      int nulls = s->null_ordering == SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_FIRST ? 1
                : s->null_ordering == SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_LAST ? 0 : -1;
      return ex_new_sort(out, a, asc, nulls);
    }
    default:
      return dd_err_set(DD_EUNSUPPORTED, "expression '%s' is not supported", kind_name(m->expr_type_case));
  }
}

int connect_expr_from_proto(ex_node **out, const Spark__Connect__Expression *msg) {
  return convert(out, msg, 1);
}
