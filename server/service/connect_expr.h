/* connect_expr.h: spark.connect Expression messages -> store/expr trees (ex_node), for the
 * relations that carry expressions (Filter, Project, Sort, Aggregate, ...). Literals of
 * every atomic kind, unresolved_attribute (plan_id ignored), unresolved_function and
 * call_function (Spark's names; is_distinct kept), alias, cast (type or type_str),
 * expression_string (parsed with ex_parse), unresolved_star, sort_order, and
 * unresolved_extract_value of a struct field by name (col.field). Any other kind
 * is DD_EUNSUPPORTED naming it; nesting deeper than EX_MAX_DEPTH is DD_EINVAL, checked
 * before recursing. */
#ifndef DD_SERVER_SERVICE_CONNECT_EXPR_H
#define DD_SERVER_SERVICE_CONNECT_EXPR_H

#include "spark/connect/expressions.pb-c.h"
#include "spark/connect/types.pb-c.h"
#include "store/expr/ex.h"

/* The tree of msg (the caller's: ex_free). */
int connect_expr_from_proto(ex_node **out, const Spark__Connect__Expression *msg);
/* An atomic DataType (unparsed text included) as an ex_type; DD_EUNSUPPORTED otherwise. */
int connect_expr_type(ex_type *out, const Spark__Connect__DataType *t);

#endif
