/* connect_arrow.c: see connect_arrow.h. The type text grammar is the one store/deltaops
 * produces: string, bigint, int, double, boolean, binary, date, timestamp,
 * array<T>, map<K,V>, struct<name:T,...>, nested at most CONNECT_TYPE_MAX_DEPTH levels (the
 * bound store/delta puts on a schema; checked before each descent). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_arrow.h"
#include "server/service/connect_plan.h"
#include "store/delta/dl.h"
#include "store/scan/scn.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")
#define CONNECT_TYPE_MAX_DEPTH 64

/* ======================= type text ======================= */

typedef enum { T_STR, T_I64, T_I32, T_F64, T_BOOL, T_BIN, T_DATE, T_TS, T_ARRAY, T_MAP, T_STRUCT } tkind;

typedef struct ttype ttype;
struct ttype {
  tkind k;
  size_t n;          /* children: ARRAY 1, MAP 2, STRUCT n */
  ttype **c;
  char **names;      /* STRUCT field names */
};

static void ttype_free(ttype *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) {
    ttype_free(t->c[i]);
    if (t->names) free(t->names[i]);
  }
  free(t->c);
  free(t->names);
  free(t);
}

static int parse(const char **p, ttype **out, int depth);

static int add_child(ttype *t, ttype *c, char *name) {
  ttype **nc = realloc(t->c, (t->n + 1) * sizeof *nc);
  if (nc) t->c = nc; /* the old block may be gone even if the names' realloc fails */
  char **nn = nc && t->k == T_STRUCT ? realloc(t->names, (t->n + 1) * sizeof *nn) : NULL;
  if (nn) t->names = nn;
  if (!nc || (t->k == T_STRUCT && !nn)) return free(name), ttype_free(c), OOM();
  if (nn) nn[t->n] = name;
  nc[t->n++] = c;
  return 0;
}

/* The type at *p, at nesting level depth (a column's own type is level 1); *out is set even
 * on failure (parse frees it). */
static int parse_one(const char **p, ttype **out, int depth) {
  static const struct { const char *s; tkind k; } prim[] = {
      {"string", T_STR}, {"bigint", T_I64}, {"int", T_I32}, {"double", T_F64}, {"boolean", T_BOOL},
      {"binary", T_BIN}, {"date", T_DATE}, {"timestamp", T_TS}};
  if (depth > CONNECT_TYPE_MAX_DEPTH)
    return dd_err_set(DD_EINTERNAL, "result type nested more than %d levels", CONNECT_TYPE_MAX_DEPTH);
  ttype *t = calloc(1, sizeof *t);
  if (!t) return OOM();
  *out = t;
  int rc = 0;
  if (!strncmp(*p, "array<", 6)) {
    t->k = T_ARRAY, *p += 6;
    ttype *e = NULL;
    if (!(rc = parse(p, &e, depth + 1))) rc = add_child(t, e, NULL);
  } else if (!strncmp(*p, "map<", 4)) {
    t->k = T_MAP, *p += 4;
    ttype *k = NULL, *v = NULL;
    if (!(rc = parse(p, &k, depth + 1))) rc = add_child(t, k, NULL);
    if (!rc && **p == ',') (*p)++;
    if (!rc && !(rc = parse(p, &v, depth + 1))) rc = add_child(t, v, NULL);
  } else if (!strncmp(*p, "struct<", 7)) {
    t->k = T_STRUCT, *p += 7;
    while (!rc && **p && **p != '>') {
      const char *colon = strchr(*p, ':');
      if (!colon) return dd_err_set(DD_EINTERNAL, "bad result type text");
      char *name = strndup(*p, (size_t)(colon - *p));
      *p = colon + 1;
      ttype *f = NULL;
      if (!(rc = parse(p, &f, depth + 1))) rc = add_child(t, f, name);
      else free(name);
      if (**p == ',') (*p)++;
    }
  } else {
    for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++) {
      size_t n = strlen(prim[i].s);
      if (!strncmp(*p, prim[i].s, n) && !((*p)[n] >= 'a' && (*p)[n] <= 'z')) {
        t->k = prim[i].k;
        *p += n;
        return 0;
      }
    }
    return dd_err_set(DD_EINTERNAL, "unknown result type '%s'", *p);
  }
  if (!rc && **p == '>') (*p)++;
  return rc;
}

/* parse_one, *out freed and NULL on failure (so a failing child leaks nothing). */
static int parse(const char **p, ttype **out, int depth) {
  *out = NULL;
  int rc = parse_one(p, out, depth);
  if (rc) ttype_free(*out), *out = NULL;
  return rc;
}

static int parse_type(const char *text, ttype **out) {
  const char *p = text;
  return parse(&p, out, 1);
}

/* ======================= DataType ======================= */

static void *new_msg(const ProtobufCMessageDescriptor *d) {
  void *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

static Spark__Connect__DataType *datatype(const ttype *t, bool nullable) {
  Spark__Connect__DataType *d = new_msg(&spark__connect__data_type__descriptor);
  if (!d) return NULL;
  void *leaf = NULL;
  switch (t->k) {
    case T_STR: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_STRING, leaf = d->string = new_msg(&spark__connect__data_type__string__descriptor); break;
    case T_I64: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_LONG, leaf = d->long_ = new_msg(&spark__connect__data_type__long__descriptor); break;
    case T_I32: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_INTEGER, leaf = d->integer = new_msg(&spark__connect__data_type__integer__descriptor); break;
    case T_F64: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_DOUBLE, leaf = d->double_ = new_msg(&spark__connect__data_type__double__descriptor); break;
    case T_BOOL: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_BOOLEAN, leaf = d->boolean = new_msg(&spark__connect__data_type__boolean__descriptor); break;
    case T_BIN: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_BINARY, leaf = d->binary = new_msg(&spark__connect__data_type__binary__descriptor); break;
    case T_DATE: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_DATE, leaf = d->date = new_msg(&spark__connect__data_type__date__descriptor); break;
    case T_TS: d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP, leaf = d->timestamp = new_msg(&spark__connect__data_type__timestamp__descriptor); break;
    case T_ARRAY:
      d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_ARRAY;
      if ((leaf = d->array = new_msg(&spark__connect__data_type__array__descriptor))) {
        d->array->contains_null = true;
        if (!(d->array->element_type = datatype(t->c[0], true))) leaf = NULL;
      }
      break;
    case T_MAP:
      d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_MAP;
      if ((leaf = d->map = new_msg(&spark__connect__data_type__map__descriptor))) {
        d->map->value_contains_null = true;
        d->map->key_type = datatype(t->c[0], false);
        d->map->value_type = datatype(t->c[1], true);
        if (!d->map->key_type || !d->map->value_type) leaf = NULL;
      }
      break;
    case T_STRUCT:
      d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_STRUCT;
      if ((leaf = d->struct_ = new_msg(&spark__connect__data_type__struct__descriptor))) {
        d->struct_->fields = calloc(t->n + 1, sizeof *d->struct_->fields);
        for (size_t i = 0; d->struct_->fields && i < t->n; i++) {
          Spark__Connect__DataType__StructField *f = new_msg(&spark__connect__data_type__struct_field__descriptor);
          if (!f) { leaf = NULL; break; }
          d->struct_->fields[d->struct_->n_fields++] = f;
          f->name = strdup(t->names[i]);
          f->nullable = true;
          f->data_type = datatype(t->c[i], true);
          if (!f->name || !f->data_type) { leaf = NULL; break; }
        }
        if (!d->struct_->fields) leaf = NULL;
      }
      break;
  }
  (void)nullable;
  if (!leaf) {
    protobuf_c_message_free_unpacked(&d->base, NULL);
    return NULL;
  }
  return d;
}

int connect_result_datatype(Spark__Connect__DataType **out, const dop_result *r) {
  *out = NULL;
  ttype root = {.k = T_STRUCT};
  int rc = 0;
  for (size_t i = 0; i < r->ncols && !rc; i++) {
    ttype *c = NULL;
    char *name = strdup(r->cols[i].name);
    if (!name) rc = OOM();
    else if ((rc = parse_type(r->cols[i].type, &c))) free(name);
    else rc = add_child(&root, c, name);
  }
  if (!rc && !(*out = datatype(&root, false))) rc = OOM();
  for (size_t i = 0; i < root.n; i++) ttype_free(root.c[i]), free(root.names[i]);
  free(root.c);
  free(root.names);
  if (!rc) /* top-level nullability as the result says */
    for (size_t i = 0; i < (*out)->struct_->n_fields; i++) (*out)->struct_->fields[i]->nullable = r->cols[i].nullable;
  return rc;
}

/* ======================= Arrow ======================= */

typedef struct afield {
  int id;
  const ttype *t;
  struct afield *kids; /* children in ttype order */
} afield;

static int add_arrow(arw_schema *s, int parent, const char *name, const ttype *t, bool nullable, afield *f) {
  static const arw_kind kinds[] = {ARW_UTF8, ARW_INT64, ARW_INT32, ARW_FLOAT64, ARW_BOOL, ARW_BINARY,
                                   ARW_DATE32, ARW_TIMESTAMP_UTC, ARW_LIST, ARW_MAP, ARW_STRUCT};
  f->t = t;
  int rc = arw_schema_add(s, parent, name, kinds[t->k], nullable, &f->id);
  if (rc || !t->n) return rc;
  if (!(f->kids = calloc(t->n, sizeof *f->kids))) return OOM();
  for (size_t i = 0; i < t->n && !rc; i++) {
    const char *cn = t->k == T_ARRAY ? "element" : t->k == T_MAP ? (i ? "value" : "key") : t->names[i];
    rc = add_arrow(s, f->id, cn, t->c[i], !(t->k == T_MAP && i == 0), &f->kids[i]);
  }
  return rc;
}

static void afield_free(afield *f) {
  for (size_t i = 0; f->kids && i < f->t->n; i++) afield_free(&f->kids[i]);
  free(f->kids);
}

/* Appends one JSON value (from a nested cell) to field f. */
static int append_json(arw_batch *b, const afield *f, json_t *v) {
  if (!v || json_is_null(v)) return arw_append_null(b, f->id);
  int rc = 0;
  switch (f->t->k) {
    case T_STR:
    case T_BIN:
      if (json_is_string(v)) return arw_append_str(b, f->id, json_string_value(v), json_string_length(v));
      {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        rc = s ? arw_append_str(b, f->id, s, strlen(s)) : OOM();
        free(s);
        return rc;
      }
    case T_I64: case T_TS: return arw_append_i64(b, f->id, json_integer_value(v));
    case T_I32: case T_DATE: return arw_append_i32(b, f->id, (int32_t)json_integer_value(v));
    case T_F64: return arw_append_f64(b, f->id, json_number_value(v));
    case T_BOOL: return arw_append_bool(b, f->id, json_is_true(v));
    case T_ARRAY: {
      size_t i;
      json_t *e;
      json_array_foreach(v, i, e) if ((rc = append_json(b, &f->kids[0], e))) return rc;
      return arw_append_done(b, f->id);
    }
    case T_MAP: {
      const char *k;
      json_t *e;
      json_object_foreach(v, k, e) {
        json_t *ks = json_string(k);
        rc = append_json(b, &f->kids[0], ks);
        json_decref(ks);
        if (!rc) rc = append_json(b, &f->kids[1], e);
        if (rc) return rc;
      }
      return arw_append_done(b, f->id);
    }
    case T_STRUCT:
      for (size_t i = 0; i < f->t->n && !rc; i++) rc = append_json(b, &f->kids[i], json_object_get(v, f->t->names[i]));
      return rc ? rc : arw_append_done(b, f->id);
  }
  return 0;
}

static int append_cell(arw_batch *b, const afield *f, const dop_cell *c) {
  switch (c->kind) {
    case DOP_NULL: return arw_append_null(b, f->id);
    case DOP_BOOL: return arw_append_bool(b, f->id, c->i64 != 0);
    case DOP_I64: return f->t->k == T_I32 ? arw_append_i32(b, f->id, (int32_t)c->i64) : arw_append_i64(b, f->id, c->i64);
    case DOP_F64: return arw_append_f64(b, f->id, c->f64);
    case DOP_TS_MS: /* ms -> us, saturated (a table's log may hold any timestamp) */
      return arw_append_i64(b, f->id, c->i64 > INT64_MAX / 1000   ? INT64_MAX
                                      : c->i64 < INT64_MIN / 1000 ? INT64_MIN
                                                                  : c->i64 * 1000);
    case DOP_STR: return arw_append_str(b, f->id, c->str, strlen(c->str));
    case DOP_JSON: {
      json_t *v = json_loads(c->str, JSON_DECODE_ANY, NULL);
      int rc = append_json(b, f, v);
      json_decref(v);
      return rc;
    }
  }
  return 0;
}

int connect_result_batch(arw_schema **out_schema, arw_batch **out_batch, const dop_result *r) {
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  *out_schema = NULL, *out_batch = NULL;
  afield *cols = calloc(r->ncols + 1, sizeof *cols);
  ttype **types = calloc(r->ncols + 1, sizeof *types);
  int rc = cols && types ? arw_schema_new(&s) : OOM();
  for (size_t i = 0; !rc && i < r->ncols; i++) {
    rc = parse_type(r->cols[i].type, &types[i]);
    if (!rc) rc = add_arrow(s, ARW_ROOT, r->cols[i].name, types[i], true, &cols[i]);
  }
  if (!rc) rc = arw_batch_new(&b, s);
  for (size_t i = 0; !rc && i < r->nrows; i++)
    for (size_t j = 0; !rc && j < r->ncols; j++) rc = append_cell(b, &cols[j], dop_result_cell(r, i, j));
  for (size_t i = 0; cols && types && i < r->ncols; i++) {
    if (cols[i].t) afield_free(&cols[i]);
    ttype_free(types[i]);
  }
  free(cols);
  free(types);
  if (rc) {
    arw_batch_free(b);
    arw_schema_free(s);
    return rc;
  }
  *out_schema = s, *out_batch = b;
  return 0;
}

int connect_result_arrow(arw_buf *out, const dop_result *r) {
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  int rc = connect_result_batch(&s, &b, r);
  if (!rc) rc = arw_write_stream(out, b);
  arw_batch_free(b);
  arw_schema_free(s);
  return rc;
}

int connect_ddl_datatype(Spark__Connect__DataType **out, const char *ddl) {
  *out = NULL;
  char *json = NULL, *wrapped = NULL;
  int rc = dop_ddl_schema_json(&json, ddl);
  if (rc) return rc;
  /* one type: as the column "value" of a struct, whose field type is then the answer */
  bool one = strncmp(json, "{\"type\":\"struct\"", 16) != 0;
  if (one && asprintf(&wrapped, "{\"type\":\"struct\",\"fields\":[{\"name\":\"value\",\"type\":%s,"
                      "\"nullable\":true,\"metadata\":{}}]}", json) < 0) {
    free(json);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  const char *text = one ? wrapped : json;
  dl_schema *ds = NULL;
  arw_schema *as = NULL;
  Spark__Connect__DataType *d = NULL;
  if (!(rc = dl_schema_parse(&ds, text, strlen(text))) && !(rc = arw_schema_new(&as)) &&
      !(rc = scn_arrow_schema(as, dl_schema_root(ds), NULL, 0)))
    rc = connect_plan_datatype(&d, as);
  if (!rc && one) { /* detach the column's type from its struct */
    Spark__Connect__DataType__StructField *f = d->struct_->fields[0];
    *out = f->data_type;
    f->data_type = NULL;
    protobuf_c_message_free_unpacked(&d->base, NULL);
  } else if (!rc) {
    *out = d;
  }
  arw_schema_free(as);
  dl_schema_free(ds);
  free(wrapped), free(json);
  return rc;
}
