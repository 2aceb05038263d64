/* scn_stub.c: placeholders of the scan API until the reader lands (every entry point
 * answers DD_EUNSUPPORTED). */
#include "common/err.h"
#include "store/scan/scn.h"

int scn_open(scn_scan **out, dl_table *t, dl_snapshot *s, const scn_opts *opts) {
  (void)t, (void)s, (void)opts;
  *out = NULL;
  return dd_err_set(DD_EUNSUPPORTED, "scan: not implemented yet");
}

const arw_schema *scn_schema(const scn_scan *s) { (void)s; return NULL; }

int scn_next(scn_scan *s, const arw_batch **out) {
  (void)s;
  *out = NULL;
  return dd_err_set(DD_EUNSUPPORTED, "scan: not implemented yet");
}

void scn_stats_get(const scn_scan *s, scn_stats *out) { (void)s; *out = (scn_stats){0}; }

void scn_free(scn_scan *s) { (void)s; }

int scn_arrow_field(arw_schema *out, int parent, const char *name, const dl_type *t,
                    bool nullable, int *out_id) {
  (void)out, (void)parent, (void)name, (void)t, (void)nullable, (void)out_id;
  return dd_err_set(DD_EUNSUPPORTED, "scan: not implemented yet");
}

int scn_arrow_schema(arw_schema *out, const dl_type *root, const char *const *columns,
                     size_t n) {
  (void)out, (void)root, (void)columns, (void)n;
  return dd_err_set(DD_EUNSUPPORTED, "scan: not implemented yet");
}
