/* tables_int.h: what tables_svc.c (the TablesService handlers) and tables_delta.c (the work
 * on the Delta table itself) share. All return 0 or a DD_E* code with a message. */
#ifndef DD_SERVER_SERVICE_TABLES_INT_H
#define DD_SERVER_SERVICE_TABLES_INT_H

#include <stdbool.h>

#include "deltad/tables/v1/tables.pb-c.h"
#include "store/catalog/cat_store.h"

/* Adds what t's latest snapshot says (columns, partition columns, table_properties,
 * version). A table that cannot be read is not an error: snapshot_error says why. */
int ts_snapshot_fill(cat_dtable *t);
/* DD_EINVAL "storage_location: no readable Delta table at ..." unless loc holds one. */
int ts_check_delta(const char *loc);
/* Creates the empty Delta table of a MANAGED table at loc from req's columns and
 * partition_columns (DD_EINVAL without columns; DD_EEXISTS when loc holds a table). */
int ts_create_empty(const Deltad__Tables__V1__CreateTableRequest *req, const char *loc);
/* Deletes every file under loc (a purged MANAGED table); an absent loc is not an error. */
int ts_delete_files(const char *loc);

/* Temporary credentials for t (tables_cred.c): an STS session narrowed to t's prefix for
 * S3 tables whose credential names a role; write adds PutObject and DeleteObject. Local
 * tables DD_EPRECOND, other stores DD_EUNSUPPORTED, STS refusing DD_EPERM. *out is the
 * caller's. */
int ts_temporary_credentials(Deltad__Tables__V1__TemporaryCredentials **out, cat_store *store,
                             const cat_dtable *t, bool write);

#endif
