/* call_memotab.c: the transports' reply memo table (dd_call_memo, handler.h; call.h).
 * REST keeps its encodings here, gRPC its packed protobuf replies, each in a table of its
 * own.
 *
 * A handler that knows its reply is a function of a key (the catalog generation, the
 * caller, the page) asks the transport whether it still holds the bytes it sent for that
 * key; a hit skips building the reply message, copying it out of the service's cache,
 * encoding it and freeing it: most of a short list call's CPU. The key the table sees is
 * (for REST) the method's path, the codec's memo tag and the handler's key, so two encodings of one
 * method (the Delta Sharing codec, another codec) never meet. Correctness rests on the
 * handler's key naming everything its reply depends on; an entry is never stale for the
 * key it is found under.
 *
 * The table: DD_CALL__MEMO_SLOTS slots of one entry each, chosen by a hash of the key and
 * replaced by the next put in the slot (entries of older generations are pushed out as
 * newer keys arrive); bodies over DD_CALL__MEMO_MAX_BODY are not kept, so the table holds
 * at most slots x that many bytes. Each slot has a read-write lock: a hit copies the body
 * out under the read lock, a put swaps the entry under the write lock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hash.h"
#include "server/call/call.h"

#define DD_CALL__MEMO_SLOTS 64
#define DD_CALL__MEMO_MAX_BODY (64u << 10)

typedef struct memo_entry {
  size_t klen, blen;
  uint64_t pb_bytes;
  char *key;  /* klen bytes, then the body's blen bytes: one block */
  char *body;
} memo_entry;

typedef struct memo_slot {
  pthread_rwlock_t lock;
  memo_entry *e; /* guarded by lock */
} memo_slot;

struct dd_call_memotab {
  memo_slot slots[DD_CALL__MEMO_SLOTS];
};

int dd_call_memotab_new(dd_call_memotab **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  for (int i = 0; i < DD_CALL__MEMO_SLOTS; i++) pthread_rwlock_init(&(*out)->slots[i].lock, NULL);
  return 0;
}

void dd_call_memotab_free(dd_call_memotab *m) {
  if (!m) return;
  for (int i = 0; i < DD_CALL__MEMO_SLOTS; i++) {
    free(m->slots[i].e);
    pthread_rwlock_destroy(&m->slots[i].lock);
  }
  free(m);
}

static memo_slot *memo_slot_of(dd_call_memotab *m, const void *key, size_t klen) {
  return &m->slots[dd_hash_bytes(key, klen) % DD_CALL__MEMO_SLOTS];
}

int dd_call_memotab_use(dd_call_memotab *m, const void *key, size_t klen,
                        int (*fn)(void *ctx, const void *body, size_t blen, uint64_t pb_bytes), void *ctx) {
  memo_slot *s = memo_slot_of(m, key, klen);
  int hit = 0;
  pthread_rwlock_rdlock(&s->lock);
  const memo_entry *e = s->e;
  if (e && e->klen == klen && memcmp(e->key, key, klen) == 0) hit = fn(ctx, e->body, e->blen, e->pb_bytes) == 0;
  pthread_rwlock_unlock(&s->lock);
  if (!hit) dd_err_clear(); /* out of memory on a hit: answered as a miss */
  return hit;
}

typedef struct memo_copy {
  dd_call_buf *body;
  uint64_t *pb_bytes;
} memo_copy;

static int memo_copy_fn(void *ctx, const void *body, size_t blen, uint64_t pb_bytes) {
  memo_copy *c = ctx;
  c->body->len = 0;
  *c->pb_bytes = pb_bytes;
  return dd_call_buf_append(c->body, body, blen);
}

int dd_call_memotab_get(dd_call_memotab *m, const void *key, size_t klen, dd_call_buf *body,
                        uint64_t *pb_bytes) {
  memo_copy c = {body, pb_bytes};
  return dd_call_memotab_use(m, key, klen, memo_copy_fn, &c);
}

void dd_call_memotab_put(dd_call_memotab *m, const void *key, size_t klen, const void *body,
                       size_t blen, uint64_t pb_bytes) {
  if (blen > DD_CALL__MEMO_MAX_BODY) return;
  memo_entry *e = malloc(sizeof *e + klen + blen);
  if (!e) return; /* nothing kept: the next call builds its reply again */
  e->klen = klen;
  e->blen = blen;
  e->pb_bytes = pb_bytes;
  e->key = (char *)(e + 1);
  e->body = e->key + klen;
  memcpy(e->key, key, klen);
  if (blen) memcpy(e->body, body, blen);
  memo_slot *s = memo_slot_of(m, key, klen);
  pthread_rwlock_wrlock(&s->lock);
  memo_entry *old = s->e;
  s->e = e;
  pthread_rwlock_unlock(&s->lock);
  free(old);
}
