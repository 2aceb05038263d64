/* cat_audit_armed.c: an audit event written in the same transaction as the change it
 * records (cat_store.h, cat_audit_arm). The event armed on a thread waits in thread-local
 * state; the first write transaction of the same store that this thread commits puts it
 * (cat__audit_on_commit, called by cat__txn_commit) and it is marked written once that
 * commit succeeds, so the change and its record commit together or not at all. While armed,
 * the record layer notes the first record id written (id_after) and deleted (id_before).
 *
 * Threads: the state is per thread, and a handler's transactions run on its thread (the
 * call core runs a handler on one thread from start to end). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

typedef Deltad__Admin__V1__AuditEvent cat__event;

typedef struct cat__armed {
  cat_store *s;            /* the store it waits for; NULL when nothing is armed */
  cat__event *ev;          /* a heap copy */
  int64_t retention_ms;
  bool put;                /* put in the transaction being committed */
  bool written;            /* committed with a change */
  int hold;                /* > 0 inside cat_audit_append: its own transaction */
  char id_before[CAT__ID_LEN + 1], id_after[CAT__ID_LEN + 1];
} cat__armed;

static _Thread_local cat__armed cat__arm;

static void cat__arm_clear(void) {
  if (cat__arm.ev) protobuf_c_message_free_unpacked(&cat__arm.ev->base, NULL);
  int hold = cat__arm.hold;
  memset(&cat__arm, 0, sizeof cat__arm);
  cat__arm.hold = hold;
}

int cat_audit_arm(cat_store *s, const Deltad__Admin__V1__AuditEvent *ev, int64_t retention_ms) {
  cat__arm_clear();
  size_t n = protobuf_c_message_get_packed_size(&ev->base);
  unsigned char *buf = malloc(n ? n : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(&ev->base, buf);
  cat__arm.ev = (cat__event *)protobuf_c_message_unpack(ev->base.descriptor, NULL, n, buf);
  free(buf);
  if (!cat__arm.ev) return dd_err_set(DD_ENOMEM, "out of memory");
  cat__arm.s = s;
  cat__arm.retention_ms = retention_ms;
  return 0;
}

int cat_audit_disarm(void) {
  int written = cat__arm.s && cat__arm.written;
  cat__arm_clear();
  return written;
}

void cat__audit_hold(bool on) { cat__arm.hold += on ? 1 : -1; }

static bool cat__armed_for(const cat_txn *t) {
  return cat__arm.s && cat__arm.s == t->s && !cat__arm.written && !cat__arm.hold;
}

int cat__audit_on_commit(cat_txn *t) {
  cat__arm.put = false;
  if (!t->write || !cat__armed_for(t)) return 0;
  cat__event e = *cat__arm.ev; /* shallow: the ids noted while armed fill the gaps */
  if (!*e.id_after && cat__arm.id_after[0]) e.id_after = cat__arm.id_after;
  if (!*e.id_before && cat__arm.id_before[0]) e.id_before = cat__arm.id_before;
  int rc = cat__audit_put(t, &e, cat__arm.retention_ms);
  if (!rc) cat__arm.put = true;
  return rc;
}

void cat__audit_committed(const cat_txn *t, int rc) {
  if (cat__arm.put && !rc && cat__arm.s == t->s) cat__arm.written = true;
  cat__arm.put = false;
}

/* The databases whose keys are record ids (36-character UUIDs). */
static bool cat__record_db(int db) {
  switch (db) {
    case CAT__DB_CATALOGS: case CAT__DB_SCHEMAS: case CAT__DB_CREDENTIALS:
    case CAT__DB_LOCATIONS: case CAT__DB_SHARES: case CAT__DB_RECIPIENTS:
    case CAT__DB_NAMESPACES: case CAT__DB_LANCE_TABLES: case CAT__DB_DELTA_TABLES:
      return true;
    default:
      return false;
  }
}

void cat__audit_note(const cat_txn *t, int db, const void *key, size_t len, bool deleted) {
  if (!cat__armed_for(t) || !cat__record_db(db) || len != CAT__ID_LEN) return;
  char *slot = deleted ? cat__arm.id_before : cat__arm.id_after;
  if (slot[0]) return;
  memcpy(slot, key, CAT__ID_LEN);
  slot[CAT__ID_LEN] = '\0';
}
