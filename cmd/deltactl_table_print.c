/* deltactl_table_print.c: rendering of `deltactl table` results, as JSON (jansson) or as
 * plain text: the engine's operation results (dop_result: detail and the maintenance verbs,
 * from the server or --local alike), and the active files, history and change feed read
 * in this process. */
#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_table.h"
#include "common/err.h"
#include "server/http/pbjson.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

/* ---------- helpers ---------- */

static json_t *kv_json(const char *packed) {
  json_t *o = json_object();
  const char *k, *v, *c = packed;
  while (c && dl_kv_next(&c, &k, &v)) json_object_set_new(o, k, v ? json_string(v) : json_null());
  return o;
}


static json_t *iso_or_null(int64_t ms) {
  char b[48];
  return dctl_iso_time(b, sizeof b, ms) ? json_null() : json_string(b);
}

/* The text of one JSON value in a CSV cell: strings bare, null empty, the rest as JSON. */
static void csv_value(json_t *v) {
  if (json_is_string(v)) {
    dctl_csv_cell(stdout, json_string_value(v));
  } else if (!json_is_null(v)) {
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    dctl_csv_cell(stdout, t ? t : "");
    free(t);
  }
}

/* Prints rows (an array of objects, taken) as --output json (one array; one object when
 * one), jsonl (a line each) or csv (a header of the first row's keys, then the rows). */
static int dump_rows(json_t *arr, bool one) {
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  dctl_output o = dctl_globals_get()->output;
  int rc = 0;
  if (o == DCTL_OUT_JSONL) {
    for (size_t i = 0; i < json_array_size(arr) && !rc; i++) rc = dctl_print_json(json_array_get(arr, i), 1);
  } else if (o == DCTL_OUT_CSV) {
    json_t *first = json_array_get(arr, 0);
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach(first, k, v) {
      if (n++) putchar(',');
      dctl_csv_cell(stdout, k);
    }
    if (first) putchar('\n');
    for (size_t i = 0; i < json_array_size(arr); i++) {
      n = 0;
      json_object_foreach(json_array_get(arr, i), k, v) {
        if (n++) putchar(',');
        csv_value(v);
      }
      putchar('\n');
    }
  } else {
    rc = dctl_print_json(one && json_array_size(arr) == 1 ? json_array_get(arr, 0) : arr, 0);
  }
  json_decref(arr);
  return rc ? dd_err_set(DD_ENOMEM, "cannot print the output") : 0;
}



static void print_kv_text(const char *packed) {
  const char *k, *v, *c = packed;
  bool first = true;
  while (c && dl_kv_next(&c, &k, &v)) {
    printf("%s%s=%s", first ? "" : ",", k, v ? v : "null");
    first = false;
  }
  if (first) printf("-");
}

/* ---------- results of the engine's operations (dop_result) ---------- */

static void cell_text(FILE *f, const dop_cell *c) {
  switch (c->kind) {
    case DOP_NULL: fputs("NULL", f); break;
    case DOP_BOOL: fputs(c->i64 ? "true" : "false", f); break;
    case DOP_I64: fprintf(f, "%lld", (long long)c->i64); break;
    case DOP_F64: fprintf(f, "%g", c->f64); break;
    case DOP_TS_MS: {
      time_t s = (time_t)(c->i64 / 1000);
      struct tm tm;
      char b[40];
      gmtime_r(&s, &tm);
      strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
      fprintf(f, "%s.%03dZ", b, (int)(c->i64 % 1000));
      break;
    }
    default: fputs(c->str ? c->str : "", f);
  }
}

static json_t *cell_json(const dop_cell *c) {
  switch (c->kind) {
    case DOP_NULL: return json_null();
    case DOP_BOOL: return json_boolean(c->i64);
    case DOP_I64: return json_integer(c->i64);
    case DOP_F64: return json_real(c->f64);
    case DOP_JSON: {
      json_t *j = json_loads(c->str, JSON_DECODE_ANY, NULL);
      return j ? j : json_string(c->str);
    }
    case DOP_TS_MS: {
      char *b = NULL;
      size_t n = 0;
      FILE *f = open_memstream(&b, &n);
      if (!f) return json_null();
      cell_text(f, c);
      fclose(f);
      json_t *j = json_string(b);
      free(b);
      return j;
    }
    default: return json_string(c->str ? c->str : "");
  }
}

/* A column name as a text label: camelCase humps become words ("numFiles" -> "num files:");
 * other names (snake_case metrics) keep their spelling. */
static void label_text(char *buf, size_t cap, const char *name) {
  size_t n = 0;
  for (const char *p = name; *p && n + 3 < cap; p++) {
    if (p != name && isupper((unsigned char)*p)) {
      buf[n++] = ' ';
      buf[n++] = (char)tolower((unsigned char)*p);
    } else {
      buf[n++] = *p;
    }
  }
  buf[n++] = ':';
  buf[n] = '\0';
}

int dctl_finish_local(int rc, dop_result *r) {
  if (rc) {
    dop_result_free(r);
    fprintf(stderr, "deltactl: %s: %s\n", dd_err_name(rc), dd_err_msg());
    return DCTL_EXIT_SERVER;
  }
  int code = dctl_print_result(r, dctl_globals_get()->output == DCTL_OUT_JSON)
                 ? dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg()) : 0;
  dop_result_free(r);
  return code;
}

int dctl_print_result(const dop_result *r, bool json) {
  return dctl_print_result_as(r, json, r->nrows != 1);
}

int dctl_print_result_as(const dop_result *r, bool json, bool list) {
  if (json || dctl_globals_get()->output != DCTL_OUT_TABLE) {
    if (json && dctl_globals_get()->output == DCTL_OUT_TABLE) dctl_globals_get()->output = DCTL_OUT_JSON;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < r->nrows; i++) {
      json_t *o = json_object();
      for (size_t j = 0; o && j < r->ncols; j++) {
        char key[128]; /* snake_case names (Spark's operation metrics) in the API's camelCase */
        json_object_set_new(o, pbjson_json_name(r->cols[j].name, key, sizeof key), cell_json(dop_result_cell(r, i, j)));
      }
      if (!o || json_array_append_new(arr, o)) {
        json_decref(arr);
        return dd_err_set(DD_ENOMEM, "out of memory");
      }
    }
    if (!r->ncols && json_array_append_new(arr, json_object())) arr = NULL;
    return dump_rows(arr, !list);
  }
  if (!r->ncols) {
    puts("OK");
    return 0;
  }
  /* One row with many columns (DESCRIBE DETAIL, operation metrics) reads better as
   * "label: value" lines. */
  if (r->nrows == 1 && r->ncols > 4 && !list) {
    for (size_t j = 0; j < r->ncols; j++) {
      char label[128];
      label_text(label, sizeof label, r->cols[j].name);
      printf("%-17s ", label);
      cell_text(stdout, dop_result_cell(r, 0, j));
      putchar('\n');
    }
    return 0;
  }
  for (size_t j = 0; j < r->ncols; j++) printf("%s%s", j ? "\t" : "", r->cols[j].name);
  putchar('\n');
  for (size_t i = 0; i < r->nrows; i++) {
    for (size_t j = 0; j < r->ncols; j++) {
      if (j) putchar('\t');
      cell_text(stdout, dop_result_cell(r, i, j));
    }
    putchar('\n');
  }
  return 0;
}

/* ---------- files ---------- */

static int64_t num_records(const dl_file *f) {
  dl_stats *st = NULL;
  if (!f->stats || dl_stats_parse(&st, f->stats) != 0) return -1;
  int64_t n = dl_stats_num_records(st);
  dl_stats_free(st);
  return n;
}

static int file_json_cb(void *ctx, const dl_file *f) {
  int64_t nr = num_records(f);
  json_t *o = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o}", "path", f->path, "size", (json_int_t)f->size,
                        "modificationTime", iso_or_null(f->modification_time), "partitionValues",
                        kv_json(f->partition_values), "numRecords",
                        nr >= 0 ? json_integer(nr) : json_null(), "deletionVectorCardinality",
                        f->dv ? json_integer(f->dv->cardinality) : json_null());
  return json_array_append_new(ctx, o) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

static int file_text_cb(void *ctx, const dl_file *f) {
  (void)ctx;
  printf("%-70s %12" PRId64 " ", f->path, f->size);
  print_kv_text(f->partition_values);
  if (f->dv) printf(" dv:%" PRId64, f->dv->cardinality);
  printf("\n");
  return 0;
}

int dctl_print_files(const dl_snapshot *s, bool json) {
  if (!json && dctl_globals_get()->output == DCTL_OUT_TABLE) {
    printf("%-70s %12s %s\n", "PATH", "SIZE", "PARTITION VALUES");
    return dl_snapshot_files(s, file_text_cb, NULL);
  }
  json_t *arr = json_array();
  int rc = dl_snapshot_files(s, file_json_cb, arr);
  if (rc) {
    json_decref(arr);
    return rc;
  }
  return dump_rows(arr, false);
}

typedef struct hist_ctx {
  bool json;
  json_t *arr;
} hist_ctx;

/* ---------- changes ---------- */

static const char *change_name(dl_change_kind k) {
  return k == DL_CHANGE_CDC ? "cdc" : (k == DL_CHANGE_ADD ? "add" : "remove");
}

static int change_cb(void *vctx, const dl_change *ch) {
  hist_ctx *c = vctx;
  if (!c->json) {
    char ts[48];
    if (dctl_iso_time(ts, sizeof ts, ch->timestamp)) snprintf(ts, sizeof ts, "%" PRId64, ch->timestamp);
    printf("%-8" PRId64 " %-24s %-7s %s\n", ch->version, ts, change_name(ch->kind), ch->file->path);
    return 0;
  }
  json_t *o = json_pack("{s:I,s:o,s:s,s:s,s:I,s:o}", "version", (json_int_t)ch->version,
                        "timestamp", iso_or_null(ch->timestamp), "kind", change_name(ch->kind),
                        "path", ch->file->path, "size", (json_int_t)ch->file->size,
                        "partitionValues", kv_json(ch->file->partition_values));
  return json_array_append_new(c->arr, o) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

int dctl_print_changes(dl_table *t, int64_t from, int64_t to, bool json) {
  json |= dctl_globals_get()->output != DCTL_OUT_TABLE;
  hist_ctx c = {json, json ? json_array() : NULL};
  if (!json) printf("%-8s %-24s %-7s %s\n", "VERSION", "TIMESTAMP", "KIND", "PATH");
  int rc = dl_changes(t, from, to, change_cb, &c);
  if (rc) {
    json_decref(c.arr);
    return rc;
  }
  return json ? dump_rows(c.arr, false) : 0;
}
