/* deltactl_table_print.c: rendering of `deltactl table` results, as JSON (jansson) or as
 * a plain text table. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_table.h"
#include "common/err.h"
#include "store/delta/dl.h"

/* ---------- helpers ---------- */

static json_t *kv_json(const char *packed) {
  json_t *o = json_object();
  const char *k, *v, *c = packed;
  while (c && dl_kv_next(&c, &k, &v)) json_object_set_new(o, k, v ? json_string(v) : json_null());
  return o;
}

static json_t *strv_json(const char *const *v, size_t n) {
  if (!v) return json_null();
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static int dump(json_t *j) {
  if (!j) return dd_err_set(DD_ENOMEM, "out of memory");
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_ENCODE_ANY);
  json_decref(j);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  puts(s);
  free(s);
  return 0;
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

/* ---------- detail ---------- */

static json_t *detail_json(const dl_snapshot *s) {
  const dl_protocol *p = dl_snapshot_protocol(s);
  const dl_metadata *m = dl_snapshot_metadata(s);
  json_t *proto = json_pack("{s:i,s:i,s:o,s:o}", "minReaderVersion", p->min_reader_version,
                            "minWriterVersion", p->min_writer_version, "readerFeatures",
                            strv_json(p->reader_features, p->num_reader_features),
                            "writerFeatures", strv_json(p->writer_features, p->num_writer_features));
  json_t *schema = json_loads(m->schema_string, 0, NULL);
  json_t *md = json_pack(
      "{s:s,s:o,s:o,s:{s:s,s:o},s:s,s:o,s:o,s:o,s:o}", "id", m->id, "name", str_or_null(m->name),
      "description", str_or_null(m->description), "format", "provider", m->format_provider,
      "options", kv_json(m->format_options), "schemaString", m->schema_string, "schema",
      schema ? schema : json_null(), "partitionColumns",
      strv_json(m->partition_columns, m->num_partition_columns), "createdTime",
      m->created_time >= 0 ? json_integer(m->created_time) : json_null(), "configuration",
      kv_json(m->configuration));
  return json_pack("{s:I,s:I,s:o,s:o,s:o,s:I,s:I,s:o}", "version", (json_int_t)dl_snapshot_version(s),
                   "timestamp", (json_int_t)dl_snapshot_timestamp(s), "protocol", proto, "metadata",
                   md, "partitionColumns", strv_json(m->partition_columns, m->num_partition_columns),
                   "numFiles", (json_int_t)dl_snapshot_num_files(s), "sizeInBytes",
                   (json_int_t)dl_snapshot_size_bytes(s), "properties", kv_json(m->configuration));
}

int dctl_print_detail(const dl_snapshot *s, bool json) {
  if (json) return dump(detail_json(s));
  const dl_protocol *p = dl_snapshot_protocol(s);
  const dl_metadata *m = dl_snapshot_metadata(s);
  printf("version:          %" PRId64 "\n", dl_snapshot_version(s));
  printf("timestamp:        %" PRId64 "\n", dl_snapshot_timestamp(s));
  printf("id:               %s\n", m->id);
  printf("name:             %s\n", m->name ? m->name : "-");
  printf("description:      %s\n", m->description ? m->description : "-");
  printf("format:           %s\n", m->format_provider);
  printf("protocol:         reader %d, writer %d\n", p->min_reader_version, p->min_writer_version);
  printf("reader features:  ");
  for (size_t i = 0; i < p->num_reader_features; i++) printf("%s%s", i ? "," : "", p->reader_features[i]);
  printf("%s\nwriter features:  ", p->num_reader_features ? "" : "-");
  for (size_t i = 0; i < p->num_writer_features; i++) printf("%s%s", i ? "," : "", p->writer_features[i]);
  printf("%s\npartition columns: ", p->num_writer_features ? "" : "-");
  for (size_t i = 0; i < m->num_partition_columns; i++) printf("%s%s", i ? "," : "", m->partition_columns[i]);
  printf("%s\nnum files:        %zu\n", m->num_partition_columns ? "" : "-", dl_snapshot_num_files(s));
  printf("size in bytes:    %" PRId64 "\n", dl_snapshot_size_bytes(s));
  printf("schema:           %s\n", m->schema_string);
  printf("properties:       ");
  print_kv_text(m->configuration);
  printf("\n");
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
  json_t *o = json_pack("{s:s,s:I,s:I,s:o,s:o,s:o}", "path", f->path, "size", (json_int_t)f->size,
                        "modificationTime", (json_int_t)f->modification_time, "partitionValues",
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
  if (!json) {
    printf("%-70s %12s %s\n", "PATH", "SIZE", "PARTITION VALUES");
    return dl_snapshot_files(s, file_text_cb, NULL);
  }
  json_t *arr = json_array();
  int rc = dl_snapshot_files(s, file_json_cb, arr);
  if (rc) {
    json_decref(arr);
    return rc;
  }
  return dump(arr);
}

/* ---------- history ---------- */

typedef struct hist_ctx {
  bool json;
  json_t *arr;
} hist_ctx;

static int hist_cb(void *vctx, const dl_commit_entry *e) {
  hist_ctx *c = vctx;
  if (!c->json) {
    printf("%-8" PRId64 " %-15" PRId64 " %s\n", e->version, e->timestamp,
           e->operation ? e->operation : "-");
    return 0;
  }
  json_t *ci = e->commit_info ? json_loads(e->commit_info, 0, NULL) : NULL;
  json_t *o = json_pack("{s:I,s:I,s:o,s:o}", "version", (json_int_t)e->version, "timestamp",
                        (json_int_t)e->timestamp, "operation", str_or_null(e->operation),
                        "commitInfo", ci ? ci : json_null());
  return json_array_append_new(c->arr, o) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

int dctl_print_history(dl_table *t, bool json) {
  hist_ctx c = {json, json ? json_array() : NULL};
  if (!json) printf("%-8s %-15s %s\n", "VERSION", "TIMESTAMP", "OPERATION");
  int rc = dl_history(t, 0, hist_cb, &c);
  if (rc) {
    json_decref(c.arr);
    return rc;
  }
  return json ? dump(c.arr) : 0;
}

/* ---------- changes ---------- */

static const char *change_name(dl_change_kind k) {
  return k == DL_CHANGE_CDC ? "cdc" : (k == DL_CHANGE_ADD ? "add" : "remove");
}

static int change_cb(void *vctx, const dl_change *ch) {
  hist_ctx *c = vctx;
  if (!c->json) {
    printf("%-8" PRId64 " %-15" PRId64 " %-7s %s\n", ch->version, ch->timestamp,
           change_name(ch->kind), ch->file->path);
    return 0;
  }
  json_t *o = json_pack("{s:I,s:I,s:s,s:s,s:I,s:o}", "version", (json_int_t)ch->version,
                        "timestamp", (json_int_t)ch->timestamp, "kind", change_name(ch->kind),
                        "path", ch->file->path, "size", (json_int_t)ch->file->size,
                        "partitionValues", kv_json(ch->file->partition_values));
  return json_array_append_new(c->arr, o) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

int dctl_print_changes(dl_table *t, int64_t from, int64_t to, bool json) {
  hist_ctx c = {json, json ? json_array() : NULL};
  if (!json) printf("%-8s %-15s %-7s %s\n", "VERSION", "TIMESTAMP", "KIND", "PATH");
  int rc = dl_changes(t, from, to, change_cb, &c);
  if (rc) {
    json_decref(c.arr);
    return rc;
  }
  return json ? dump(c.arr) : 0;
}
