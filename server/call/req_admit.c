/* req_admit.c: the admission counts of req_guard.h: requests in flight in the process and
 * per principal. The per-principal counts live in a table of RG__SLOTS slots, one per
 * principal with a request in flight, keyed by a 64-bit hash of the principal's kind and
 * name and found by open addressing (a full table refuses, like a cap); one mutex, held
 * only to count, guards both. */
#include <pthread.h>
#include <string.h>

#include "common/err.h"
#include "server/call/call.h"
#include "server/call/req_guard.h"

#define RG__SLOTS 1024

typedef struct rg__slot {
  uint64_t key;
  unsigned n; /* 0: free */
} rg__slot;

static pthread_mutex_t rg__mu = PTHREAD_MUTEX_INITIALIZER;
static rg__slot rg__slots[RG__SLOTS]; /* guarded by rg__mu */
static unsigned rg__total;             /* guarded by rg__mu */

static uint64_t rg__key(const dd_principal *p) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)p->kind; /* FNV-1a */
  for (const char *s = p->name; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h ? h : 1; /* 0 marks a slot never used */
}

/* The slot of key, or a free one; -1 when the table is full. Under rg__mu.
 * Open addressing from key % RG__SLOTS: a slot keeps the key it was given when its count
 * drops to 0 (so the probe for a key passes it), until another key reuses it; the probe
 * ends at a slot never used (key 0). The first free slot met is the one handed out. */
static int rg__find(uint64_t key) {
  int free_slot = -1;
  for (unsigned k = 0; k < RG__SLOTS; k++) {
    int i = (int)((key + k) % RG__SLOTS);
    if (rg__slots[i].key == key && (rg__slots[i].n || free_slot < 0)) return i;
    if (!rg__slots[i].n && free_slot < 0) free_slot = i;
    if (!rg__slots[i].key) break; /* never used: key is nowhere further */
  }
  return free_slot;
}

int rg_admit(rg_ticket *t, const dd_principal *p) {
  if (t->slot1) return 0;
  const rg_limits *lim = rg_limits_get();
  uint64_t key = rg__key(p);
  int rc = 0;
  pthread_mutex_lock(&rg__mu);
  int i = rg__find(key);
  if (lim->max_requests && rg__total >= lim->max_requests)
    rc = dd_err_set(DD_ENOMEM, "server busy: %u requests in flight (max-requests); retry later",
                    rg__total);
  else if (i < 0 || (lim->max_requests_per_principal && p->kind != DD_PRINCIPAL_ADMIN &&
                     rg__slots[i].n >= lim->max_requests_per_principal))
    rc = dd_err_set(DD_ENOMEM, "too many concurrent requests from '%s' (max-requests-per-principal "
                    "is %u); retry later", p->name, lim->max_requests_per_principal);
  if (!rc) {
    rg__slots[i].key = key;
    rg__slots[i].n++;
    rg__total++;
    t->slot1 = (unsigned)i + 1;
  }
  pthread_mutex_unlock(&rg__mu);
  return rc;
}

void rg_release(rg_ticket *t) {
  if (t->view) t->view_ops->unref(t->view);
  t->view = NULL;
  if (!t->slot1) return;
  pthread_mutex_lock(&rg__mu);
  rg__slots[t->slot1 - 1].n--;
  rg__total--;
  pthread_mutex_unlock(&rg__mu);
  t->slot1 = 0;
}

unsigned rg_in_flight(void) {
  pthread_mutex_lock(&rg__mu);
  unsigned n = rg__total;
  pthread_mutex_unlock(&rg__mu);
  return n;
}
