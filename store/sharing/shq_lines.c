/* shq_lines.c: the response lines of both formats (PROTOCOL.md "API Response Actions in
 * Parquet Format" and "... in Delta Format"): protocol, metaData, file / add / cdf /
 * remove, and endStreamAction. Also the choice of format and the check of table
 * properties against what the client declared it can read (reference server rules). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

#define UNSUPPORTED_PROPS "Unsupported Delta Table Properties"
#define DV_DISABLED "Deletion Vector property disabled"

/* ======================= format choice ======================= */

static bool prop_enabled(const dl_snapshot *s, const char *key, const char *off) {
  const char *v = dl_snapshot_property(s, key);
  return v && strcmp(v, off);
}

int shq__choose_format(shq_out *o, const dl_snapshot *s, const shq_caps *caps) {
  unsigned req = caps->formats ? caps->formats : SHQ_FORMAT_PARQUET;
  const dl_protocol *p = dl_snapshot_protocol(s);
  int min_reader = caps->num_reader_features ? p->min_reader_version : 1;
  if (req == SHQ_FORMAT_DELTA) o->format = SHQ_FORMAT_DELTA;
  else if (req == SHQ_FORMAT_PARQUET) o->format = SHQ_FORMAT_PARQUET;
  else o->format = min_reader == 1 ? SHQ_FORMAT_PARQUET : SHQ_FORMAT_DELTA;
  bool delta = o->format == SHQ_FORMAT_DELTA;
  bool cm = delta && caps->rf_column_mapping;
  o->client_dv = delta && caps->rf_deletion_vectors;
  o->declared_features = delta && caps->num_reader_features > 0;
  /* the reference server's message, then what the client must declare to read the table */
  if (prop_enabled(s, "delta.columnMapping.mode", "none") && !cm)
    return dd_err_set(DD_EPRECOND, UNSUPPORTED_PROPS ": the table uses column mapping; a client that reads "
                                   "it declares responseformat=delta;readerfeatures=columnmapping "
                                   "(delta-sharing-capabilities header)");
  if (prop_enabled(s, "delta.enableDeletionVectors", "false") && !o->client_dv)
    return dd_err_set(DD_EPRECOND, UNSUPPORTED_PROPS ": the table has deletion vectors; a client that reads "
                                   "them declares responseformat=delta;readerfeatures=deletionvectors "
                                   "(delta-sharing-capabilities header)");
  return 0;
}

/* ======================= protocol and metadata ======================= */

static void put_str_array(shq_buf *b, const char *const *v, size_t n) {
  dd_buf_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) dd_buf_putc(b, ',');
    shq__put_jstrz(b, v[i]);
  }
  dd_buf_putc(b, ']');
}

int shq__write_protocol(shq_out *o, const dl_snapshot *s) {
  shq_buf *b = &o->b;
  const dl_protocol *p = dl_snapshot_protocol(s);
  if (o->format == SHQ_FORMAT_PARQUET) {
    dd_buf_puts(b, "{\"protocol\":{\"minReaderVersion\":1}}");
    return shq__emit(b, o->fn, o->ctx);
  }
  dd_buf_puts(b, "{\"protocol\":{");
  if (o->protocol_version >= 0) {
    dd_buf_puts(b, "\"version\":");
    shq__put_i64(b, o->protocol_version);
    dd_buf_putc(b, ',');
  }
  dd_buf_puts(b, "\"deltaProtocol\":{\"minReaderVersion\":");
  if (!o->declared_features) {
    /* The client declared no reader features: after the property check the table reads as
     * a plain one (reference server behaviour). */
    dd_buf_puts(b, "1,\"minWriterVersion\":");
    shq__put_i64(b, p->min_writer_version < 7 ? p->min_writer_version : 2);
  } else {
    shq__put_i64(b, p->min_reader_version);
    dd_buf_puts(b, ",\"minWriterVersion\":");
    shq__put_i64(b, p->min_writer_version);
    if (p->reader_features && p->num_reader_features) {
      dd_buf_puts(b, ",\"readerFeatures\":");
      put_str_array(b, p->reader_features, p->num_reader_features);
    }
    if (p->writer_features && p->num_writer_features) {
      dd_buf_puts(b, ",\"writerFeatures\":");
      put_str_array(b, p->writer_features, p->num_writer_features);
    }
  }
  dd_buf_puts(b, "}}}");
  return shq__emit(b, o->fn, o->ctx);
}

/* Spark schema with each top-level field's metadata reduced to its comment. */
static void put_clean_schema(shq_buf *b, const char *schema) {
  json_t *j = json_loads(schema, 0, NULL);
  json_t *fields = json_object_get(j, "fields");
  if (!json_is_array(fields)) {
    shq__put_jstrz(b, schema);
    json_decref(j);
    return;
  }
  size_t i;
  json_t *f;
  json_array_foreach(fields, i, f) {
    json_t *md = json_object_get(f, "metadata");
    json_t *comment = json_object_get(md, "comment");
    json_t *nm = json_object();
    if (json_is_string(comment)) json_object_set(nm, "comment", comment);
    json_object_set_new(f, "metadata", nm);
  }
  char *txt = json_dumps(j, JSON_COMPACT);
  if (txt) shq__put_jstrz(b, txt);
  else b->oom = true;
  free(txt);
  json_decref(j);
}

static void put_parquet_config(shq_out *o, bool cdf) {
  dd_buf_puts(&o->b, ",\"configuration\":{");
  if (cdf && o->opts->history_shared) dd_buf_puts(&o->b, "\"enableChangeDataFeed\":\"true\"");
  dd_buf_putc(&o->b, '}');
}

static void put_opt_str(shq_buf *b, const char *key, const char *v) {
  if (!v) return;
  dd_buf_puts(b, key);
  shq__put_jstrz(b, v);
}

static void put_tail(shq_out *o, const dl_snapshot *s, int64_t version, bool with_size,
                     bool version_first) {
  shq_buf *b = &o->b;
  if (version >= 0 && !version_first) {
    dd_buf_puts(b, ",\"version\":");
    shq__put_i64(b, version);
  }
  if (with_size) {
    dd_buf_puts(b, ",\"size\":");
    shq__put_i64(b, dl_snapshot_size_bytes(s));
    dd_buf_puts(b, ",\"numFiles\":");
    shq__put_i64(b, (int64_t)dl_snapshot_num_files(s));
  }
}

int shq__write_metadata(shq_out *o, const dl_snapshot *s, int64_t version, bool with_size) {
  shq_buf *b = &o->b;
  const dl_metadata *md = dl_snapshot_metadata(s);
  if (o->format == SHQ_FORMAT_PARQUET) {
    dd_buf_puts(b, "{\"metaData\":{\"id\":");
    shq__put_jstrz(b, md->id);
    put_opt_str(b, ",\"name\":", md->name);
    put_opt_str(b, ",\"description\":", md->description);
    dd_buf_puts(b, ",\"format\":{\"provider\":\"parquet\"},\"schemaString\":");
    put_clean_schema(b, md->schema_string);
    const char *cdf = dl_snapshot_property(s, "delta.enableChangeDataFeed");
    put_parquet_config(o, cdf && !strcmp(cdf, "true"));
    dd_buf_puts(b, ",\"partitionColumns\":");
    put_str_array(b, md->partition_columns, md->num_partition_columns);
    put_tail(o, s, version, with_size, false);
    dd_buf_puts(b, "}}");
    return shq__emit(b, o->fn, o->ctx);
  }
  dd_buf_puts(b, "{\"metaData\":{");
  if (version >= 0) {
    dd_buf_puts(b, "\"version\":");
    shq__put_i64(b, version);
    dd_buf_putc(b, ',');
  }
  dd_buf_puts(b, "\"deltaMetadata\":{\"id\":");
  shq__put_jstrz(b, md->id);
  put_opt_str(b, ",\"name\":", md->name);
  put_opt_str(b, ",\"description\":", md->description);
  dd_buf_puts(b, ",\"format\":{\"provider\":");
  shq__put_jstrz(b, md->format_provider ? md->format_provider : "parquet");
  dd_buf_puts(b, ",\"options\":");
  shq__put_kvmap(b, md->format_options);
  dd_buf_puts(b, "},\"schemaString\":");
  shq__put_jstrz(b, md->schema_string);
  dd_buf_puts(b, ",\"partitionColumns\":");
  put_str_array(b, md->partition_columns, md->num_partition_columns);
  dd_buf_puts(b, ",\"configuration\":");
  shq__put_kvmap(b, md->configuration);
  if (md->created_time >= 0) {
    dd_buf_puts(b, ",\"createdTime\":");
    shq__put_i64(b, md->created_time);
  }
  dd_buf_putc(b, '}');
  put_tail(o, s, version, with_size, true);
  dd_buf_puts(b, "}}");
  return shq__emit(b, o->fn, o->ctx);
}

int shq__write_protocol_json(shq_out *o, const json_t *p, int64_t version) {
  shq_buf *b = &o->b;
  dd_buf_puts(b, "{\"protocol\":{\"version\":");
  shq__put_i64(b, version);
  dd_buf_puts(b, ",\"deltaProtocol\":");
  shq__put_json(b, p);
  dd_buf_puts(b, "}}");
  return shq__emit(b, o->fn, o->ctx);
}

int shq__write_metadata_json(shq_out *o, const json_t *md, int64_t version) {
  shq_buf *b = &o->b;
  if (o->format == SHQ_FORMAT_DELTA) {
    dd_buf_puts(b, "{\"metaData\":{\"version\":");
    shq__put_i64(b, version);
    dd_buf_puts(b, ",\"deltaMetadata\":");
    shq__put_json(b, md);
    dd_buf_puts(b, "}}");
    return shq__emit(b, o->fn, o->ctx);
  }
  const char *id = json_string_value(json_object_get(md, "id"));
  const char *schema = json_string_value(json_object_get(md, "schemaString"));
  const char *cdf = json_string_value(
      json_object_get(json_object_get(md, "configuration"), "delta.enableChangeDataFeed"));
  json_t *pcols = json_object_get(md, "partitionColumns");
  dd_buf_puts(b, "{\"metaData\":{\"id\":");
  shq__put_jstrz(b, id ? id : "");
  put_opt_str(b, ",\"name\":", json_string_value(json_object_get(md, "name")));
  put_opt_str(b, ",\"description\":", json_string_value(json_object_get(md, "description")));
  dd_buf_puts(b, ",\"format\":{\"provider\":\"parquet\"},\"schemaString\":");
  put_clean_schema(b, schema ? schema : "{}");
  put_parquet_config(o, cdf && !strcmp(cdf, "true"));
  dd_buf_puts(b, ",\"partitionColumns\":");
  if (json_is_array(pcols)) shq__put_json(b, pcols);
  else dd_buf_puts(b, "[]");
  dd_buf_puts(b, ",\"version\":");
  shq__put_i64(b, version);
  dd_buf_puts(b, "}}");
  return shq__emit(b, o->fn, o->ctx);
}

/* ======================= signing ======================= */

void shq__out_init(shq_out *o, dl_table *t, const shq_table_opts *opts, const shq_signer *signer,
                   shq_line_fn fn, void *ctx) {
  *o = (shq_out){.signer = signer, .opts = opts, .min_expiry = INT64_MAX, .fn = fn, .ctx = ctx,
                 .location = t ? dl_table_location(t) : NULL, .protocol_version = -1};
}

void shq__out_free(shq_out *o) {
  dd_buf_free(&o->b);
  dd_buf_free(&o->url);
}

static const char *strip_file_scheme(const char *p) {
  if (!strncmp(p, "file://", 7)) return p + 7;
  if (!strncmp(p, "file:", 5)) return p + 5;
  return p;
}

/* The table-relative form of a path from the log. Like the reference server, a path
 * outside the table is refused (an absolute one under the table's own location is made
 * relative), and so is any ".." segment: a log must not make the engine sign other files. */
static int table_relative(const shq_out *o, const char *path, const char **out) {
  const char *rel = path;
  if (path[0] == '/' || strstr(path, "://") || !strncmp(path, "file:", 5)) {
    const char *a = strip_file_scheme(path), *l = o->location ? strip_file_scheme(o->location) : "";
    size_t n = strlen(l);
    while (n && l[n - 1] == '/') n--;
    if (!n || strncmp(a, l, n) || a[n] != '/')
      return dd_err_set(DD_EPRECOND, "table containing absolute paths cannot be shared");
    rel = a + n + 1;
  }
  for (const char *seg = rel; seg;) {
    const char *slash = strchr(seg, '/');
    size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
    if (len == 2 && seg[0] == '.' && seg[1] == '.')
      return dd_err_set(DD_EPRECOND,
                        "table containing paths that leave the table cannot be shared");
    seg = slash ? slash + 1 : NULL;
  }
  if (!*rel) return dd_err_set(DD_ECORRUPT, "empty file path in the log");
  *out = rel;
  return 0;
}

static int sign(shq_out *o, const char *path, int64_t size, char **url, int64_t *exp) {
  *url = NULL;
  *exp = -1;
  if (!o->signer || !o->signer->sign) return dd_err_set(DD_EINTERNAL, "no URL signer configured");
  int rc = table_relative(o, path, &path);
  if (rc) return rc;
  rc = o->signer->sign(o->signer->ctx, path, size, url, exp);
  if (rc) return rc;
  if (!*url) return dd_err_set(DD_EINTERNAL, "the URL signer returned no URL");
  if (*exp >= 0 && *exp < o->min_expiry) o->min_expiry = *exp;
  return 0;
}

/* A data file's URL as a JSON string in o->url. */
static int sign_json(shq_out *o, const char *path, int64_t size, int64_t *exp) {
  o->url.len = 0;
  *exp = -1;
  if (!o->signer || !o->signer->put_json) {
    char *url = NULL;
    int rc = sign(o, path, size, &url, exp);
    if (!rc) shq__put_jstrz(&o->url, url);
    free(url);
    return rc;
  }
  int rc = table_relative(o, path, &path);
  if (!rc) rc = o->signer->put_json(o->signer->ctx, path, size, &o->url, exp);
  if (rc) return rc;
  if (o->url.oom || !o->url.len) return dd_err_set(DD_ENOMEM, "out of memory building a URL");
  if (*exp >= 0 && *exp < o->min_expiry) o->min_expiry = *exp;
  return 0;
}

static void put_exp(shq_buf *b, int64_t exp) {
  if (exp < 0) return;
  dd_buf_puts(b, ",\"expirationTimestamp\":");
  shq__put_i64(b, exp);
}

static void put_vt(shq_buf *b, int64_t version, int64_t ts) {
  if (ts >= 0) {
    dd_buf_puts(b, ",\"timestamp\":");
    shq__put_i64(b, ts);
  }
  if (version >= 0) {
    dd_buf_puts(b, ",\"version\":");
    shq__put_i64(b, version);
  }
}

/* ======================= snapshot files ======================= */

static int check_cb(void *ctx, const dl_file *f) {
  const shq_out *o = ctx;
  const char *rel;
  int rc = table_relative(o, f->path, &rel);
  if (rc || !f->dv || f->dv->storage_type == 'i') return rc;
  char *path = NULL;
  if (!(rc = dl_dv_path(&path, f->dv))) rc = table_relative(o, path, &rel);
  free(path);
  return rc;
}

int shq__check_paths(const shq_out *o, const dl_snapshot *s) {
  return dl_snapshot_files(s, check_cb, (void *)o);
}

/* The DV descriptor with an on-disk DV's location replaced by a signed URL. */
static int put_dv(shq_out *o, const dl_dv *dv) {
  shq_buf *b = &o->b;
  char *url = NULL, *path = NULL;
  int64_t exp;
  int rc = 0;
  dd_buf_puts(b, ",\"deletionVector\":{\"storageType\":");
  if (dv->storage_type == 'i') {
    dd_buf_puts(b, "\"i\",\"pathOrInlineDv\":");
    shq__put_jstrz(b, dv->path_or_inline);
  } else {
    if ((rc = dl_dv_path(&path, dv)) || (rc = sign(o, path, dv->size_in_bytes, &url, &exp)))
      goto cleanup;
    dd_buf_puts(b, "\"p\",\"pathOrInlineDv\":");
    shq__put_jstrz(b, url);
  }
  if (dv->offset >= 0) {
    dd_buf_puts(b, ",\"offset\":");
    shq__put_i64(b, dv->offset);
  }
  dd_buf_puts(b, ",\"sizeInBytes\":");
  shq__put_i64(b, dv->size_in_bytes);
  dd_buf_puts(b, ",\"cardinality\":");
  shq__put_i64(b, dv->cardinality);
  if (dv->max_row_index >= 0) {
    dd_buf_puts(b, ",\"maxRowIndex\":");
    shq__put_i64(b, dv->max_row_index);
  }
  dd_buf_putc(b, '}');
cleanup:
  free(url);
  free(path);
  return rc;
}

static int put_delta_add(shq_out *o, const dl_file *f) {
  shq_buf *b = &o->b;
  dd_buf_puts(b, ",\"deltaSingleAction\":{\"add\":{\"path\":");
  dd_buf_put(b, o->url.p, o->url.len);
  dd_buf_puts(b, ",\"partitionValues\":");
  shq__put_kvmap(b, f->partition_values);
  dd_buf_puts(b, ",\"size\":");
  shq__put_i64(b, f->size);
  dd_buf_puts(b, ",\"modificationTime\":");
  shq__put_i64(b, f->modification_time);
  dd_buf_puts(b, f->data_change ? ",\"dataChange\":true" : ",\"dataChange\":false");
  put_opt_str(b, ",\"stats\":", f->stats);
  if (f->tags) {
    dd_buf_puts(b, ",\"tags\":");
    shq__put_kvmap(b, f->tags);
  }
  int rc = f->dv ? put_dv(o, f->dv) : 0;
  if (f->base_row_id >= 0) {
    dd_buf_puts(b, ",\"baseRowId\":");
    shq__put_i64(b, f->base_row_id);
  }
  if (f->default_row_commit_version >= 0) {
    dd_buf_puts(b, ",\"defaultRowCommitVersion\":");
    shq__put_i64(b, f->default_row_commit_version);
  }
  dd_buf_puts(b, "}}");
  return rc;
}

int shq__write_file(shq_out *o, const dl_file *f, int64_t version, int64_t ts) {
  shq_buf *b = &o->b;
  char id[33];
  int64_t exp;
  if (f->dv && !o->client_dv) return dd_err_set(DD_EPRECOND, DV_DISABLED);
  int rc = sign_json(o, f->path, f->size, &exp);
  if (rc) return rc;
  if (o->id) shq__hex16(o->id, id);
  else shq__md5_hex(f->raw_path, strlen(f->raw_path), id);
  if (o->format == SHQ_FORMAT_PARQUET) {
    dd_buf_puts(b, "{\"file\":{\"url\":");
    dd_buf_put(b, o->url.p, o->url.len);
    dd_buf_puts(b, ",\"id\":\"");
    dd_buf_puts(b, id);
    dd_buf_puts(b, "\",\"partitionValues\":");
    shq__put_kvmap(b, f->partition_values);
    dd_buf_puts(b, ",\"size\":");
    shq__put_i64(b, f->size);
    put_opt_str(b, ",\"stats\":", f->stats);
    put_exp(b, exp);
    put_vt(b, version, ts);
    dd_buf_puts(b, "}}");
  } else {
    dd_buf_puts(b, "{\"file\":{\"id\":\"");
    dd_buf_puts(b, id);
    dd_buf_putc(b, '"');
    put_vt(b, version, ts);
    put_exp(b, exp);
    rc = put_delta_add(o, f);
    dd_buf_puts(b, "}}");
  }
  if (!rc) rc = shq__out_emit(o);
  b->len = o->keep_lines ? o->line_start : 0; /* a failed line's bytes go */
  if (b->p) b->p[b->len] = '\0';
  if (!rc) o->num_files++;
  return rc;
}

/* ======================= change actions ======================= */

/* The action JSON of a commit with path (and an on-disk DV's path) signed. */
static int signed_action(shq_out *o, const json_t *a, const char *url, json_t **out) {
  json_t *c = json_copy((json_t *)a);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  json_object_set_new(c, "path", json_string(url));
  json_t *dv = json_object_get(c, "deletionVector");
  const char *st = json_string_value(json_object_get(dv, "storageType"));
  int rc = 0;
  if (dv && !o->client_dv) rc = dd_err_set(DD_EPRECOND, DV_DISABLED);
  else if (st && (st[0] == 'u' || st[0] == 'p')) {
    dl_dv d = {.storage_type = st[0],
               .path_or_inline = json_string_value(json_object_get(dv, "pathOrInlineDv")),
               .size_in_bytes = (int32_t)json_integer_value(json_object_get(dv, "sizeInBytes"))};
    char *path = NULL, *dvurl = NULL;
    int64_t exp;
    if (!d.path_or_inline) rc = dd_err_set(DD_ECORRUPT, "deletion vector without pathOrInlineDv");
    if (!rc) rc = dl_dv_path(&path, &d);
    if (!rc) rc = sign(o, path, d.size_in_bytes, &dvurl, &exp);
    if (!rc) {
      json_object_set_new(dv, "storageType", json_string("p"));
      json_object_set_new(dv, "pathOrInlineDv", json_string(dvurl));
    }
    free(path);
    free(dvurl);
  }
  if (rc) json_decref(c);
  else *out = c;
  return rc;
}

int shq__write_change(shq_out *o, const char *key, const json_t *a, int64_t version, int64_t ts) {
  shq_buf *b = &o->b;
  const char *raw = json_string_value(json_object_get(a, "path"));
  if (!raw) return dd_err_set(DD_ECORRUPT, "a %s action without path at version %lld", key,
                              (long long)version);
  const json_t *js = json_object_get(a, "size");
  int64_t size = json_is_integer(js) ? json_integer_value(js) : -1;
  char id[33], *url = NULL, *path = shq__url_decode(raw);
  int64_t exp;
  int rc = path ? sign(o, path, size, &url, &exp) : dd_err_set(DD_ENOMEM, "out of memory");
  free(path);
  if (rc) return rc;
  shq__md5_hex(raw, strlen(raw), id);
  json_t *pv = json_object_get(a, "partitionValues");
  if (o->format == SHQ_FORMAT_PARQUET) {
    if (json_object_get(a, "deletionVector") && !o->client_dv) {
      free(url);
      return dd_err_set(DD_EPRECOND, DV_DISABLED);
    }
    dd_buf_puts(b, "{\"");
    dd_buf_puts(b, strcmp(key, "cdc") ? key : "cdf");
    dd_buf_puts(b, "\":{\"url\":");
    shq__put_jstrz(b, url);
    dd_buf_puts(b, ",\"id\":\"");
    dd_buf_puts(b, id);
    dd_buf_puts(b, "\",\"partitionValues\":");
    if (json_is_object(pv)) shq__put_json(b, pv);
    else dd_buf_puts(b, "{}");
    dd_buf_puts(b, ",\"size\":");
    shq__put_i64(b, size < 0 ? 0 : size);
    const char *stats = json_string_value(json_object_get(a, "stats"));
    if (!strcmp(key, "add")) put_opt_str(b, ",\"stats\":", stats);
    put_exp(b, exp);
    put_vt(b, version, ts);
    dd_buf_puts(b, "}}");
  } else {
    json_t *c = NULL;
    if ((rc = signed_action(o, a, url, &c))) {
      free(url);
      return rc;
    }
    dd_buf_puts(b, "{\"file\":{\"id\":\"");
    dd_buf_puts(b, id);
    dd_buf_putc(b, '"');
    put_vt(b, version, ts);
    put_exp(b, exp);
    dd_buf_puts(b, ",\"deltaSingleAction\":{\"");
    dd_buf_puts(b, key);
    dd_buf_puts(b, "\":");
    shq__put_json(b, c);
    dd_buf_puts(b, "}}}");
    json_decref(c);
  }
  free(url);
  rc = shq__emit(b, o->fn, o->ctx);
  if (!rc) o->num_files++;
  return rc;
}

/* ======================= end of stream ======================= */

int shq__write_end(shq_out *o, const char *next_page_token, const char *refresh_token) {
  shq_buf *b = &o->b;
  bool first = true;
  dd_buf_puts(b, "{\"endStreamAction\":{");
  if (refresh_token) {
    dd_buf_puts(b, "\"refreshToken\":");
    shq__put_jstrz(b, refresh_token);
    first = false;
  }
  if (next_page_token) {
    dd_buf_puts(b, first ? "\"nextPageToken\":" : ",\"nextPageToken\":");
    shq__put_jstrz(b, next_page_token);
    first = false;
  }
  if (o->min_expiry != INT64_MAX) {
    dd_buf_puts(b, first ? "\"minUrlExpirationTimestamp\":" : ",\"minUrlExpirationTimestamp\":");
    shq__put_i64(b, o->min_expiry);
  }
  dd_buf_puts(b, "}}");
  return shq__emit(b, o->fn, o->ctx);
}

int shq_write_stream_error(const char *message, shq_line_fn fn, void *ctx) {
  shq_buf b = {0};
  dd_buf_puts(&b, "{\"endStreamAction\":{\"errorMessage\":");
  shq__put_jstrz(&b, message ? message : "");
  dd_buf_puts(&b, "}}");
  int rc = shq__emit(&b, fn, ctx);
  dd_buf_free(&b);
  return rc;
}
