/* connect_session.h: Spark Connect sessions of the process: per session id, the
 * server-side session id, the session's Config (key/value), the responses of each
 * operation (kept until released, for ReattachExecute), and results of mutating relations
 * already run for an AnalyzePlan (so the ExecutePlan that follows does not run them
 * again). One global table (the only one), guarded by one mutex; every function copies in
 * and out, so nothing returned points into the table. */
#ifndef DD_SERVER_SERVICE_CONNECT_SESSION_H
#define DD_SERVER_SERVICE_CONNECT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/deltaops/dop.h"

/* Gets or creates the session; copies its server-side id into ssid (37 bytes). A client
 * that names a different server-side session than the current one gets DD_EPRECOND
 * (the session was released and recreated). */
int connect_session_touch(const char *session_id, const char *observed_ssid, char ssid[37]);
/* Drops a session and everything kept for it; DD_ENOTFOUND when unknown. */
int connect_session_release(const char *session_id, char ssid[37]);

/* Config: a copy of the value (malloc'ed) or NULL when unset. */
char *connect_conf_get(const char *session_id, const char *key);
int connect_conf_set(const char *session_id, const char *key, const char *value); /* NULL unsets */
/* Every key with the prefix: parallel malloc'ed arrays (free each and the arrays). */
int connect_conf_all(const char *session_id, const char *prefix, char ***keys, char ***values, size_t *n);

/* Operations: the packed responses of one operation, appended as they are sent. At most
 * CONNECT_REPLAY_MAX_BYTES are kept per operation (besides the newest response): a query's
 * stream drops its oldest responses beyond it (clients release them as they read), and a
 * reattach that needs a dropped one is FAILED_PRECONDITION. */
#define CONNECT_REPLAY_MAX_BYTES ((size_t)64 << 20)
int connect_op_start(const char *session_id, const char *op_id);
int connect_op_record(const char *session_id, const char *op_id, const char *response_id,
                      const uint8_t *packed, size_t len);
/* Copies the packed responses after after_response_id (NULL: all). DD_ENOTFOUND for an
 * unknown operation. */
int connect_op_replay(const char *session_id, const char *op_id, const char *after_response_id,
                      uint8_t ***msgs, size_t **lens, size_t *n);
/* Releases responses up to and including until_response_id, or the whole operation when
 * it is NULL. */
int connect_op_release(const char *session_id, const char *op_id, const char *until_response_id);

/* Results of a plan already run (key: the serialized plan). take removes it. */
int connect_plan_put(const char *session_id, const uint8_t *plan, size_t len, dop_result *r); /* takes r */
dop_result *connect_plan_take(const char *session_id, const uint8_t *plan, size_t len);
/* Borrowed view valid until the next call on this table: the result's columns only. */
bool connect_plan_has(const char *session_id, const uint8_t *plan, size_t len);

/* A random UUID string (37 bytes with NUL). */
void connect_uuid(char out[37]);

#endif
