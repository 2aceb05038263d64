/* cat_audit.c: the audit log in its own sub-database (layout in cat_internal.h): append
 * with retention, and filtered, paged listing in time order. Page tokens are event ids
 * ("<time_ms>-<seq>", decimal), which are also the order of the keys. seq is a process
 * counter from a random start, so replicas sharing a catalog do not collide. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__AUDIT_PURGE_MAX 256
typedef Deltad__Admin__V1__AuditEvent cat__event;

static atomic_uint_fast64_t cat__audit_seq;
static pthread_once_t cat__audit_once = PTHREAD_ONCE_INIT;

/* The sequence starts at a random multiple of 2^40 in each process: replicas appending to
 * one catalog (PostgreSQL) in the same millisecond get distinct keys. */
static void cat__audit_seq_init(void) {
  unsigned char r[3] = {0, 0, 0};
  RAND_bytes(r, sizeof r);
  atomic_store(&cat__audit_seq, ((uint64_t)r[0] << 56 | (uint64_t)r[1] << 48 | (uint64_t)r[2] << 40) >> 1);
}

static void cat__be64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

static uint64_t cat__get_be64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

/* Deletes the oldest events recorded before cutoff_ms, at most CAT__AUDIT_PURGE_MAX. */
static int cat__audit_purge(cat_store *s, cat_txn *txn, int64_t cutoff_ms) {
  cat__cur *cur = NULL;
  cat__bytes k, v;
  unsigned char key[16];
  (void)s;
  int rc = cat__cur_open(txn, CAT__DB_AUDIT, &cur);
  for (int n = 0; !rc && n < CAT__AUDIT_PURGE_MAX; n++) {
    rc = cat__cur_seek(cur, "", 0, &k, &v);
    if (rc || k.n != 16 || (int64_t)cat__get_be64(k.p) >= cutoff_ms) break;
    memcpy(key, k.p, 16);
    rc = cat__kv_del(txn, CAT__DB_AUDIT, key, 16);
  }
  cat__cur_close(cur);
  return rc == DD_ENOTFOUND ? 0 : rc;
}

/* The event's key (be64 time | be64 seq) and packed value, with its id and time set. */
static int cat__audit_pack(const cat__event *ev, unsigned char key[16], unsigned char **buf,
                           size_t *n) {
  int64_t now = cat__now_ms();
  pthread_once(&cat__audit_once, cat__audit_seq_init);
  uint64_t seq = atomic_fetch_add(&cat__audit_seq, 1) + 1;
  cat__be64(key, (uint64_t)now);
  cat__be64(key + 8, seq);
  char id[48];
  snprintf(id, sizeof id, "%" PRId64 "-%" PRIu64, now, seq);
  cat__event e = *ev; /* shallow: only id and time change */
  e.id = id;
  e.time_ms = now;
  *n = protobuf_c_message_get_packed_size(&e.base);
  if (!(*buf = malloc(*n ? *n : 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(&e.base, *buf);
  return 0;
}

int cat__audit_put(cat_txn *txn, const cat__event *ev, int64_t retention_ms) {
  unsigned char key[16], *buf = NULL;
  size_t n = 0;
  int rc = cat__audit_pack(ev, key, &buf, &n);
  if (rc) return rc;
  rc = cat__kv_put(txn, CAT__DB_AUDIT, key, sizeof key, buf, n, false);
  free(buf);
  if (!rc && retention_ms > 0)
    rc = cat__audit_purge(txn->s, txn, (int64_t)cat__get_be64(key) - retention_ms);
  return rc;
}

/* An event of its own (a data access, not a catalog change): where the backend can append
 * outside the serialized writers (PostgreSQL), it does, so replicas serving recipients do
 * not take turns on the writer lock nor invalidate each other's read caches per query. */
int cat_audit_append(cat_store *s, const cat__event *ev, int64_t retention_ms) {
  if (s->be->append) {
    unsigned char key[16], below[16] = {0}, *buf = NULL;
    size_t n = 0;
    int rc = cat__audit_pack(ev, key, &buf, &n);
    if (rc) return rc;
    if (retention_ms > 0) cat__be64(below, cat__get_be64(key) - (uint64_t)retention_ms);
    rc = s->be->append(s, CAT__DB_AUDIT, (cat__bytes){key, sizeof key}, (cat__bytes){buf, n},
                       (cat__bytes){below, retention_ms > 0 ? 8 : 0});
    free(buf);
    return rc;
  }
  cat_txn *txn = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  cat__audit_hold(true); /* this transaction is the event's own: no armed event joins it */
  rc = cat__audit_put(txn, ev, retention_ms);
  if (!rc) {
    rc = cat__txn_commit(txn);
    txn = NULL;
  }
  cat__audit_hold(false);
  if (txn) cat__txn_abort(txn);
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
  cat__cur *cur = NULL;
  int mrc = rc ? 0 : cat__cur_open(view->txn, CAT__DB_AUDIT, &cur);
  cat__bytes k, v;
  size_t cap = 0;
  if (!rc && !mrc) mrc = cat__cur_seek(cur, start, 16, &k, &v);
  if (!rc && !mrc && skip_equal && k.n == 16 && !memcmp(k.p, start, 16))
    mrc = cat__cur_next(cur, &k, &v);
  while (!rc && !mrc) {
    cat__event *e = (cat__event *)protobuf_c_message_unpack(&deltad__admin__v1__audit_event__descriptor,
                                                           NULL, v.n, v.p);
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
    mrc = cat__cur_next(cur, &k, &v);
  }
  cat__cur_close(cur);
  if (!rc && mrc && mrc != DD_ENOTFOUND) rc = mrc;
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
