/* connect_plan_expr.c: spark.connect Expression -> store/expr tree for the relations of
 * connect_plan.c: literals, attributes, functions by Spark's names, SQL text, `*`, alias,
 * cast, sort order. A stand-in until server/service/connect_expr.c (the expression
 * engine's own conversion, which covers every kind) is merged; then connect_plan_expr
 * forwards to it. Depth bounded by EX_MAX_DEPTH. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_plan.h"

static int conv(ex_node **out, const Spark__Connect__Expression *e, int depth);

static int literal(ex_node **out, const Spark__Connect__Expression__Literal *l) {
  ex_value v = {0};
  switch (l->literal_type_case) {
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL: v.is_null = true, v.type.id = EX_T_NULL; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN: v.type.id = EX_T_BOOLEAN, v.b = l->boolean; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BYTE: v.type.id = EX_T_BYTE, v.i = l->byte; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_SHORT: v.type.id = EX_T_SHORT, v.i = l->short_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER: v.type.id = EX_T_INT, v.i = l->integer; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG: v.type.id = EX_T_LONG, v.i = l->long_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_FLOAT: v.type.id = EX_T_FLOAT, v.f = l->float_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE: v.type.id = EX_T_DOUBLE, v.f = l->double_; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING:
      v.type.id = EX_T_STRING, v.str = l->string, v.len = strlen(l->string);
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BINARY:
      v.type.id = EX_T_BINARY, v.str = (const char *)l->binary.data, v.len = l->binary.len;
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DATE: v.type.id = EX_T_DATE, v.i = l->date; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP: v.type.id = EX_T_TIMESTAMP, v.i = l->timestamp; break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP_NTZ:
      v.type.id = EX_T_TIMESTAMP_NTZ, v.i = l->timestamp_ntz;
      break;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DECIMAL: {
      /* a decimal literal is its text: parse it as SQL ("12.345BD" is not needed) */
      const char *t = l->decimal->value;
      return ex_parse(out, t, strlen(t), NULL);
    }
    default: return dd_err_set(DD_EUNSUPPORTED, "literal of kind %d is not supported", (int)l->literal_type_case);
  }
  return ex_new_literal(out, &v);
}

static int call(ex_node **out, const Spark__Connect__Expression__UnresolvedFunction *f, int depth) {
  ex_node **args = calloc(f->n_arguments + 1, sizeof *args);
  if (!args) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; !rc && i < f->n_arguments; i++) rc = conv(&args[i], f->arguments[i], depth + 1);
  if (rc) {
    for (size_t i = 0; i < f->n_arguments; i++) ex_free(args[i]);
    free(args);
    return rc;
  }
  rc = ex_new_call(out, f->function_name, args, f->n_arguments); /* takes the arguments */
  free(args);
  if (!rc && f->is_distinct) ex_set_distinct(*out, true);
  return rc;
}

static int cast_type(ex_type *t, const Spark__Connect__Expression__Cast *c) {
  if (c->cast_to_type_case == SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR)
    return ex_type_parse(t, c->type_str, strlen(c->type_str));
  char *ddl = NULL;
  int rc = c->cast_to_type_case == SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE
               ? connect_datatype_ddl(&ddl, c->type)
               : dd_err_set(DD_EINVAL, "cast: a target type is required");
  if (!rc) rc = ex_type_parse(t, ddl, strlen(ddl));
  free(ddl);
  return rc;
}

static int conv(ex_node **out, const Spark__Connect__Expression *e, int depth) {
  *out = NULL;
  if (!e) return dd_err_set(DD_EINVAL, "expression: required");
  if (depth > EX_MAX_DEPTH) return dd_err_set(DD_EINVAL, "expression nested deeper than %d levels", EX_MAX_DEPTH);
  ex_node *a = NULL;
  int rc;
  switch (e->expr_type_case) {
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL: return literal(out, e->literal);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE: {
      const char *id = e->unresolved_attribute->unparsed_identifier;
      return ex_new_column_text(out, id, strlen(id));
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION: return call(out, e->unresolved_function, depth);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING: {
      const char *t = e->expression_string->expression;
      return ex_parse(out, t, strlen(t), NULL);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_STAR:
      return ex_new_star(out, e->unresolved_star->_unparsed_target_case ? e->unresolved_star->unparsed_target : NULL);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS:
      if (e->alias->n_name != 1) return dd_err_set(DD_EUNSUPPORTED, "an alias with %zu names is not supported", e->alias->n_name);
      if ((rc = conv(&a, e->alias->expr, depth + 1))) return rc;
      return ex_new_alias(out, a, e->alias->name[0]);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST: {
      ex_type t;
      if ((rc = cast_type(&t, e->cast)) || (rc = conv(&a, e->cast->expr, depth + 1))) return rc;
      return ex_new_cast(out, a, t);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_SORT_ORDER: {
      const Spark__Connect__Expression__SortOrder *so = e->sort_order;
      if ((rc = conv(&a, so->child, depth + 1))) return rc;
      int nf = so->null_ordering == SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_FIRST  ? 1
               : so->null_ordering == SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_LAST ? 0
                                                                                                              : -1;
      return ex_new_sort(out, a, so->direction != SPARK__CONNECT__EXPRESSION__SORT_ORDER__SORT_DIRECTION__SORT_DIRECTION_DESCENDING, nf);
    }
    default: {
      const ProtobufCFieldDescriptor *f =
          protobuf_c_message_descriptor_get_field(&spark__connect__expression__descriptor, (unsigned)e->expr_type_case);
      return dd_err_set(DD_EUNSUPPORTED, "Spark expression '%s' is not supported by deltad", f ? f->name : "?");
    }
  }
}

int connect_plan_expr(ex_node **out, const Spark__Connect__Expression *e) { return conv(out, e, 0); }
