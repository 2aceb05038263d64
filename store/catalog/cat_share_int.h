/* cat_share_int.h: helpers shared by the Delta Sharing files of the catalog store
 * (cat_share.c, cat_share_table.c, cat_share_grant.c, cat_recipient.c) and nothing else. */
#ifndef DD_STORE_CATALOG_CAT_SHARE_INT_H
#define DD_STORE_CATALOG_CAT_SHARE_INT_H

#include <stddef.h>

#include "store/catalog/cat_internal.h"

/* Loads the share named name (DD_ENOTFOUND "share '...' not found"). */
int cat__share_load(cat_store *s, cat_txn *txn, const char *name, cat_share **out);
/* Edits a loaded share in place; the caller saves it. */
typedef int (*cat__share_edit_fn)(cat_store *s, cat_txn *txn, cat_share *sh, void *arg);
/* Replaces *dst (n_dst entries owned by a heap tree) with deep copies of src. */
int cat__props_copy(void ***dst, size_t *n_dst, const ProtobufCMessageDescriptor *desc,
                    size_t n, void *const *src);
/* Case-insensitive search of a name-sorted array of messages whose char *name is at
 * name_off; returns the index or -1, *at (may be NULL) is the insertion point. */
long cat__find_named(void *const *arr, size_t n, size_t name_off, const char *name, size_t *at);
int cat__insert_at(void ***arr, size_t *n, size_t at, void *item);
/* Frees arr[at] and closes the gap. */
void cat__remove_at(void **arr, size_t *n, size_t at);
/* A heap copy of m. */
int cat__msg_dup(ProtobufCMessage **out, const ProtobufCMessage *m);
/* Runs fn on the share named name in one write transaction and saves it; *out (may be
 * NULL) receives the edited share. */
int cat__share_edit_by_name(cat_store *s, const char *name, cat__share_edit_fn fn, void *arg,
                            cat_share **out);

#endif
