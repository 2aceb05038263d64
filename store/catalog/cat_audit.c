/* cat_audit.c: the audit log in its own sub-database (layout in cat_internal.h): append
 * with retention, and filtered, paged listing in time order. Page tokens are event ids
 * ("<time_ms>-<seq>", decimal), which are also the order of the keys. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__AUDIT_PURGE_MAX 256
typedef Deltad__Admin__V1__AuditEvent cat__event;

static atomic_uint_fast64_t cat__audit_seq;

static void cat__be64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

static uint64_t cat__get_be64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

/* Deletes the oldest events recorded before cutoff_ms, at most CAT__AUDIT_PURGE_MAX. */
static int cat__audit_purge(cat_store *s, MDB_txn *txn, int64_t cutoff_ms) {
  MDB_cursor *cur = NULL;
  int rc = mdb_cursor_open(txn, s->dbi[CAT__DB_AUDIT], &cur);
  MDB_val k, v;
  for (int n = 0; !rc && n < CAT__AUDIT_PURGE_MAX; n++) {
    rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    if (rc || k.mv_size != 16 || (int64_t)cat__get_be64(k.mv_data) >= cutoff_ms) break;
    rc = mdb_cursor_del(cur, 0);
  }
  if (cur) mdb_cursor_close(cur);
  return rc == MDB_NOTFOUND ? 0 : rc ? cat__mdb_err(rc, "audit log: purge") : 0;
}

int cat_audit_append(cat_store *s, const cat__event *ev, int64_t retention_ms) {
  int64_t now = cat__now_ms();
  uint64_t seq = atomic_fetch_add(&cat__audit_seq, 1) + 1;
  unsigned char key[16];
  cat__be64(key, (uint64_t)now);
  cat__be64(key + 8, seq);
  char id[48];
  snprintf(id, sizeof id, "%" PRId64 "-%" PRIu64, now, seq);
  cat__event e = *ev; /* shallow: only id and time change */
  e.id = id;
  e.time_ms = now;
  MDB_txn *txn = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  MDB_val k = {sizeof key, key}, v = {protobuf_c_message_get_packed_size(&e.base), NULL};
  int mrc = mdb_put(txn, s->dbi[CAT__DB_AUDIT], &k, &v, MDB_RESERVE);
  if (mrc) {
    rc = cat__mdb_env_err(s->env, mrc, "audit log: append");
    goto cleanup;
  }
  protobuf_c_message_pack(&e.base, v.mv_data);
  if (retention_ms > 0 && (rc = cat__audit_purge(s, txn, now - retention_ms)) != 0) goto cleanup;
  rc = cat__txn_commit(txn);
  txn = NULL;
cleanup:
  if (txn) mdb_txn_abort(txn);
  return rc;
}

/* ---- listing ---- */

static bool cat__audit_match(const cat__event *e, const Deltad__Admin__V1__ListAuditEventsRequest *q) {
  if (*q->kind && strcmp(e->kind, q->kind)) return false;
  if (*q->recipient && (strcmp(e->kind, "data_access") || strcmp(e->principal, q->recipient))) return false;
  return true;
}

/* The key after which the listing starts: the token's key, else since_ms's first key. */
static int cat__audit_start(const Deltad__Admin__V1__ListAuditEventsRequest *q, unsigned char key[16],
                            bool *skip_equal) {
  *skip_equal = false;
  if (!*q->page_token) {
    cat__be64(key, (uint64_t)(q->since_ms > 0 ? q->since_ms : 0));
    cat__be64(key + 8, 0);
    return 0;
  }
  unsigned long long t = 0, seq = 0;
  int used = 0;
  if (sscanf(q->page_token, "%llu-%llu%n", &t, &seq, &used) != 2 || q->page_token[used])
    return dd_err_set(DD_EINVAL, "page_token: not a token this server gave");
  cat__be64(key, t);
  cat__be64(key + 8, seq);
  *skip_equal = true;
  return 0;
}

static int cat__audit_add(Deltad__Admin__V1__ListAuditEventsResponse *r, cat__event *e, size_t *cap) {
  if (r->n_events == *cap) {
    size_t ncap = *cap ? *cap * 2 : 16;
    cat__event **p = realloc(r->events, ncap * sizeof *p);
    if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
    r->events = p;
    *cap = ncap;
  }
  r->events[r->n_events++] = e;
  return 0;
}

static int cat__audit_walk(cat_view *view, const Deltad__Admin__V1__ListAuditEventsRequest *q, int max,
                           Deltad__Admin__V1__ListAuditEventsResponse *r) {
  unsigned char start[16];
  bool skip_equal;
  int rc = cat__audit_start(q, start, &skip_equal);
  MDB_cursor *cur = NULL;
  int mrc = rc ? 0 : mdb_cursor_open(view->txn, view->s->dbi[CAT__DB_AUDIT], &cur);
  MDB_val k = {16, start}, v;
  size_t cap = 0;
  if (!rc && !mrc) mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
  if (!rc && !mrc && skip_equal && k.mv_size == 16 && !memcmp(k.mv_data, start, 16))
    mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
  while (!rc && !mrc) {
    cat__event *e = (cat__event *)protobuf_c_message_unpack(&deltad__admin__v1__audit_event__descriptor,
                                                           NULL, v.mv_size, v.mv_data);
    if (!e) {
      rc = dd_err_set(DD_ECORRUPT, "audit log: an event does not decode");
      break;
    }
    if (!cat__audit_match(e, q)) {
      protobuf_c_message_free_unpacked(&e->base, NULL);
    } else if ((int)r->n_events == max) { /* one more exists: this page ends here */
      protobuf_c_message_free_unpacked(&e->base, NULL);
      r->next_page_token = cat__strdup(r->events[max - 1]->id);
      if (!r->next_page_token) rc = dd_err_set(DD_ENOMEM, "out of memory");
      break;
    } else if ((rc = cat__audit_add(r, e, &cap)) != 0) {
      protobuf_c_message_free_unpacked(&e->base, NULL);
      break;
    }
    mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
  }
  if (cur) mdb_cursor_close(cur);
  if (!rc && mrc && mrc != MDB_NOTFOUND) rc = cat__mdb_err(mrc, "audit log: list");
  return rc;
}

int cat_audit_list(cat_store *s, const Deltad__Admin__V1__ListAuditEventsRequest *q,
                   Deltad__Admin__V1__ListAuditEventsResponse **out) {
  *out = NULL;
  int max = 0;
  char after[CAT__NAME_MAX + 1];
  int rc = cat__page_args(q->max_results, NULL, &max, after);
  if (rc) return rc;
  Deltad__Admin__V1__ListAuditEventsResponse *r = malloc(sizeof *r);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__admin__v1__list_audit_events_response__init(r);
  cat_view v;
  rc = cat__view_begin(s, &v);
  if (!rc) rc = cat__view_end(&v, cat__audit_walk(&v, q, max, r));
  if (!rc && !r->next_page_token) r->next_page_token = cat__strdup("");
  if (!rc && !r->next_page_token) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return rc;
  }
  *out = r;
  return 0;
}
