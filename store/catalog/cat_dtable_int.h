/* cat_dtable_int.h: what cat_dtable.c and cat_dtable_drop.c share (Delta table records;
 * layout in cat_internal.h, "Delta tables"). */
#ifndef DD_STORE_CATALOG_CAT_DTABLE_INT_H
#define DD_STORE_CATALOG_CAT_DTABLE_INT_H

#include "store/catalog/cat_internal.h"

/* The schema a table lives in, as found by name. root is malloc'ed (the schema's storage
 * root, else the catalog's, "" for none): the caller frees it. */
typedef struct cat__dt_parent {
  char schema_id[CAT__ID_LEN + 1];
  char catalog[CAT__NAME_MAX + 1];
  char schema[CAT__NAME_MAX + 1];
  char *root;
} cat__dt_parent;

/* Finds catalog.schema by name; DD_ENOTFOUND "catalog/schema ... not found". */
int cat__dt_schema(cat_store *s, cat_txn *txn, const char *cat, const char *sch,
                   cat__dt_parent *out);
/* cat__dt_schema in a read transaction of its own, after checking both names. */
int cat__dt_schema_read(cat_store *s, const char *catalog, const char *schema, cat__dt_parent *p);
/* Finds the live table full_name: its schema, record (names filled) and id. */
int cat__dt_find(cat_store *s, cat_txn *txn, const char *full_name, cat__dt_parent *p,
                 cat_dtable **out, char id[CAT__ID_LEN + 1]);
/* Sets catalog_name, schema_name and full_name of a heap record. */
int cat__dt_names(cat_dtable *t, const char *cat, const char *sch);
/* The same from the record's schema_id ("" when the schema is gone). */
int cat__dt_names_by_schema(cat_store *s, cat_txn *txn, cat_dtable *t);
/* Ends a call: commits a write txn on success, else aborts (txn may be NULL); frees a
 * half-made *out on failure. */
int cat__dt_finish(int rc, cat_txn *txn, cat_dtable **out);

#endif
