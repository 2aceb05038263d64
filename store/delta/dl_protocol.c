/* dl_protocol.c: which protocol versions and table features this engine supports, for
 * reading and for writing. Reading needs every reader feature understood; writing needs
 * every writer feature honoured by dl_txn_commit (features whose rules live in the data,
 * like invariants or generated columns, are the caller's to honour). */
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

static const char *const READER_FEATURES[] = {
    "deletionVectors", "columnMapping", "timestampNtz", "v2Checkpoint",
    "vacuumProtocolCheck", "typeWidening", "typeWidening-preview", "variantType",
    "variantType-preview", "variantShredding-preview", "variantShredding",
};

static const char *const WRITER_FEATURES[] = {
    "appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
    "columnMapping", "deletionVectors", "timestampNtz", "domainMetadata", "v2Checkpoint",
    "vacuumProtocolCheck", "inCommitTimestamp", "typeWidening", "typeWidening-preview",
    "variantType", "variantType-preview", "clustering", "allowColumnDefaults",
    "identityColumns", "rowTracking",
};

static bool known(const char *f, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(f, list[i])) return true;
  return false;
}

int dl_protocol_check(const dl_protocol *p, bool for_write) {
  /* Features first: an unknown feature is the more useful thing to name. */
  for (size_t i = 0; i < p->num_reader_features; i++) {
    if (!known(p->reader_features[i], READER_FEATURES,
               sizeof READER_FEATURES / sizeof READER_FEATURES[0]))
      return dd_err_set(DD_EUNSUPPORTED, "table requires unsupported reader feature '%s'",
                        p->reader_features[i]);
  }
  if (p->min_reader_version < 1 || p->min_reader_version > 3)
    return dd_err_set(DD_EUNSUPPORTED, "table requires reader version %d; this engine supports 1 to 3",
                      p->min_reader_version);
  if (!for_write) return 0;
  if (p->min_writer_version < 1 || p->min_writer_version > 7)
    return dd_err_set(DD_EUNSUPPORTED, "table requires writer version %d; this engine writes 1 to 7",
                      p->min_writer_version);
  if (p->min_writer_version == 7) {
    for (size_t i = 0; i < p->num_writer_features; i++) {
      if (!known(p->writer_features[i], WRITER_FEATURES,
                 sizeof WRITER_FEATURES / sizeof WRITER_FEATURES[0]))
        return dd_err_set(DD_EUNSUPPORTED,
                          "cannot write: table requires unsupported writer feature '%s'",
                          p->writer_features[i]);
    }
  }
  return 0;
}
