/* fuzz_actions.c: a whole commit file through the JSON action parser and the replay rules
 * (state and file set), as replay would apply it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

typedef struct ctx {
  dl__state st;
  dl__fileset *fs;
} ctx;

static int apply(void *vc, dl__action *a) {
  ctx *c = vc;
  if (a->kind == DL__A_ADD) return dl__fileset_apply(c->fs, DL__E_ADD, &a->file, a->has_dv ? &a->dv : NULL);
  if (a->kind == DL__A_REMOVE) return dl__fileset_apply(c->fs, DL__E_REMOVE, &a->file, a->has_dv ? &a->dv : NULL);
  int rc = dl__state_apply(&c->st, a);
  if (!rc && a->kind == DL__A_PROTOCOL) dl_protocol_check(&c->st.proto, true);
  return 0; /* keep going: later lines still get parsed */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ctx c = {0};
  if (dl__fileset_new(&c.fs)) return 0;
  dl__parse_commit((const char *)data, size, "fuzz", apply, &c);
  char buf[4096];
  for (size_t i = 0; i < c.fs->n; i++) {
    if (strlen(c.fs->ents[i].path) >= sizeof buf) continue;
    dl_file f;
    dl__entry_view(&c.fs->ents[i], &f, buf);
    if (f.stats) {
      dl_stats *s = NULL;
      if (dl_stats_parse(&s, f.stats) == 0) {
        char *out = NULL;
        dl_stats_num_records(s);
        if (dl_stats_get(&out, s, DL_STATS_MIN, "a.b") == 0) free(out);
        dl_stats_free(s);
      }
    }
    const char *k, *v, *cur = f.partition_values;
    while (dl_kv_next(&cur, &k, &v)) {
      const dl_field *fl = c.st.schema ? dl_schema_field(c.st.schema, k) : NULL;
      dl_value val;
      if (fl) dl_partition_value_parse(&val, fl->type, v);
    }
  }
  dl__state_free(&c.st);
  dl__fileset_unref(c.fs);
  dd_err_clear();
  return 0;
}
