/* connect_session.c: the Spark Connect session table (see connect_session.h). Sessions
 * and their operations are small linked lists: a deltad serves few Spark clients at once. */
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_session.h"

typedef struct kv {
  char *key, *value;
  struct kv *next;
} kv;

typedef struct resp {
  char *id;
  uint8_t *data;
  size_t len;
  struct resp *next;
} resp;

typedef struct op {
  char *id;
  resp *head, *tail;
  size_t bytes;  /* kept response bytes, at most CONNECT_REPLAY_MAX_BYTES beyond the newest */
  bool trimmed;  /* older responses were dropped to stay within the bound */
  struct op *next;
} op;

typedef struct plan {
  uint8_t *bytes;
  size_t len;
  dop_result *r;
  struct plan *next;
} plan;

typedef struct session {
  char *id;
  char ssid[37];
  kv *conf;
  op *ops;
  plan *plans;
  struct session *next;
} session;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* guards g_sessions and all below */
static session *g_sessions;

void connect_uuid(char out[37]) {
  uint8_t b[16];
  if (RAND_bytes(b, sizeof b) != 1)
    for (size_t i = 0; i < sizeof b; i++) b[i] = (uint8_t)rand();
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
           b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static session *find(const char *id) {
  for (session *s = g_sessions; s; s = s->next)
    if (!strcmp(s->id, id)) return s;
  return NULL;
}

static session *find_or_create(const char *id) {
  session *s = find(id);
  if (s) return s;
  if (!(s = calloc(1, sizeof *s)) || !(s->id = strdup(id))) return free(s), NULL;
  connect_uuid(s->ssid);
  s->next = g_sessions;
  g_sessions = s;
  return s;
}

int connect_session_touch(const char *session_id, const char *observed, char ssid[37]) {
  if (!session_id || !*session_id) return dd_err_set(DD_EINVAL, "session_id: required");
  pthread_mutex_lock(&g_lock);
  session *s = find_or_create(session_id);
  int rc = s ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (s && observed && *observed && strcmp(observed, s->ssid))
    rc = dd_err_set(DD_EPRECOND, "INVALID_HANDLE.SESSION_CHANGED: the server-side session %s is gone", observed);
  if (!rc) memcpy(ssid, s->ssid, 37);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

static void op_free(op *o) {
  while (o->head) {
    resp *r = o->head;
    o->head = r->next;
    free(r->id), free(r->data), free(r);
  }
  free(o->id);
  free(o);
}

int connect_session_release(const char *session_id, char ssid[37]) {
  pthread_mutex_lock(&g_lock);
  session **pp = &g_sessions, *s;
  while ((s = *pp) && strcmp(s->id, session_id)) pp = &s->next;
  if (s) *pp = s->next;
  pthread_mutex_unlock(&g_lock);
  if (!s) return dd_err_set(DD_ENOTFOUND, "INVALID_HANDLE.SESSION_NOT_FOUND: session %s", session_id);
  memcpy(ssid, s->ssid, 37);
  while (s->conf) {
    kv *k = s->conf;
    s->conf = k->next;
    free(k->key), free(k->value), free(k);
  }
  while (s->ops) {
    op *o = s->ops;
    s->ops = o->next;
    op_free(o);
  }
  while (s->plans) {
    plan *p = s->plans;
    s->plans = p->next;
    dop_result_free(p->r), free(p->bytes), free(p);
  }
  free(s->id);
  free(s);
  return 0;
}

/* ---- config ---- */

char *connect_conf_get(const char *session_id, const char *key) {
  char *v = NULL;
  pthread_mutex_lock(&g_lock);
  session *s = find(session_id);
  for (kv *k = s ? s->conf : NULL; k; k = k->next)
    if (!strcmp(k->key, key)) v = strdup(k->value);
  pthread_mutex_unlock(&g_lock);
  return v;
}

int connect_conf_set(const char *session_id, const char *key, const char *value) {
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  session *s = find_or_create(session_id);
  kv **pp = s ? &s->conf : NULL, *k = NULL;
  while (pp && (k = *pp) && strcmp(k->key, key)) pp = &k->next;
  if (!s) rc = dd_err_set(DD_ENOMEM, "out of memory");
  else if (k && !value) { *pp = k->next; free(k->key), free(k->value), free(k); }
  else if (k) { char *nv = strdup(value); if (nv) free(k->value), k->value = nv; else rc = dd_err_set(DD_ENOMEM, "out of memory"); }
  else if (value) {
    k = calloc(1, sizeof *k);
    if (!k || !(k->key = strdup(key)) || !(k->value = strdup(value))) {
      if (k) free(k->key), free(k);
      rc = dd_err_set(DD_ENOMEM, "out of memory");
    } else k->next = s->conf, s->conf = k;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int connect_conf_all(const char *session_id, const char *prefix, char ***keys, char ***values, size_t *n) {
  *n = 0;
  pthread_mutex_lock(&g_lock);
  session *s = find(session_id);
  size_t cnt = 0;
  for (kv *k = s ? s->conf : NULL; k; k = k->next) cnt++;
  *keys = calloc(cnt + 1, sizeof **keys);
  *values = calloc(cnt + 1, sizeof **values);
  for (kv *k = s ? s->conf : NULL; k && *keys && *values; k = k->next)
    if (!prefix || !strncmp(k->key, prefix, strlen(prefix))) {
      (*keys)[*n] = strdup(k->key);
      (*values)[(*n)++] = strdup(k->value);
    }
  pthread_mutex_unlock(&g_lock);
  return *keys && *values ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* ---- operations ---- */

static op *find_op(session *s, const char *op_id) {
  for (op *o = s ? s->ops : NULL; o; o = o->next)
    if (!strcmp(o->id, op_id)) return o;
  return NULL;
}

int connect_op_start(const char *session_id, const char *op_id) {
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  session *s = find_or_create(session_id);
  if (!s) rc = dd_err_set(DD_ENOMEM, "out of memory");
  else if (find_op(s, op_id))
    rc = dd_err_set(DD_EEXISTS, "INVALID_HANDLE.OPERATION_ALREADY_EXISTS: operation %s", op_id);
  else {
    op *o = calloc(1, sizeof *o);
    if (!o || !(o->id = strdup(op_id))) free(o), rc = dd_err_set(DD_ENOMEM, "out of memory");
    else o->next = s->ops, s->ops = o;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int connect_op_record(const char *session_id, const char *op_id, const char *response_id,
                      const uint8_t *packed, size_t len) {
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  op *o = find_op(find(session_id), op_id);
  resp *r = o ? calloc(1, sizeof *r) : NULL;
  if (r && (r->id = strdup(response_id)) && (r->data = malloc(len ? len : 1))) {
    memcpy(r->data, packed, len);
    r->len = len;
    if (o->tail) o->tail->next = r;
    else o->head = r;
    o->tail = r;
    o->bytes += len;
    /* a long query's stream is not kept whole: the oldest responses go first */
    while (o->bytes > CONNECT_REPLAY_MAX_BYTES && o->head != o->tail) {
      resp *old = o->head;
      o->head = old->next;
      o->bytes -= old->len;
      o->trimmed = true;
      free(old->id), free(old->data), free(old);
    }
  } else if (o) {
    if (r) free(r->id), free(r);
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int connect_op_replay(const char *session_id, const char *op_id, const char *after,
                      uint8_t ***msgs, size_t **lens, size_t *n) {
  *n = 0;
  *msgs = NULL;
  *lens = NULL;
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  op *o = find_op(find(session_id), op_id);
  if (!o) {
    rc = dd_err_set(DD_ENOTFOUND, "INVALID_HANDLE.OPERATION_NOT_FOUND: operation %s", op_id);
  } else {
    resp *r = o->head;
    if (after) {
      resp *x = r;
      while (x && strcmp(x->id, after)) x = x->next;
      r = x ? x->next : o->head;
      if (!x && o->trimmed) o = NULL;
    } else if (o->trimmed) {
      o = NULL;
    }
    if (!o) {
      pthread_mutex_unlock(&g_lock);
      return dd_err_set(DD_EPRECOND, "INVALID_CURSOR.POSITION_NOT_AVAILABLE: operation %s: responses before the "
                        "one asked for were dropped (more than %zu bytes kept)", op_id, (size_t)CONNECT_REPLAY_MAX_BYTES);
    }
    size_t cnt = 0;
    for (resp *x = r; x; x = x->next) cnt++;
    *msgs = calloc(cnt + 1, sizeof **msgs);
    *lens = calloc(cnt + 1, sizeof **lens);
    for (; r && *msgs && *lens; r = r->next) {
      if (!((*msgs)[*n] = malloc(r->len ? r->len : 1))) break;
      memcpy((*msgs)[*n], r->data, r->len);
      (*lens)[(*n)++] = r->len;
    }
    if (!*msgs || !*lens) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int connect_op_release(const char *session_id, const char *op_id, const char *until) {
  pthread_mutex_lock(&g_lock);
  session *s = find(session_id);
  op **pp = s ? &s->ops : NULL, *o = NULL;
  while (pp && (o = *pp) && strcmp(o->id, op_id)) pp = &o->next;
  if (o && !until) {
    *pp = o->next;
    op_free(o);
  } else if (o) {
    bool seen = false;
    for (resp *x = o->head; x && !seen; x = x->next) seen = !strcmp(x->id, until);
    while (seen && o->head) {
      resp *r = o->head;
      o->head = r->next;
      o->bytes -= r->len;
      bool last = !strcmp(r->id, until);
      free(r->id), free(r->data), free(r);
      if (last) break;
    }
    if (!o->head) o->tail = NULL;
  }
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* ---- plans run for AnalyzePlan ---- */

int connect_plan_put(const char *session_id, const uint8_t *bytes, size_t len, dop_result *r) {
  plan *p = calloc(1, sizeof *p);
  if (!p || !(p->bytes = malloc(len ? len : 1))) {
    free(p);
    dop_result_free(r);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  memcpy(p->bytes, bytes, len);
  p->len = len;
  p->r = r;
  pthread_mutex_lock(&g_lock);
  session *s = find_or_create(session_id);
  if (s) p->next = s->plans, s->plans = p;
  pthread_mutex_unlock(&g_lock);
  if (!s) free(p->bytes), free(p), dop_result_free(r);
  return s ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

static plan **find_plan(session *s, const uint8_t *bytes, size_t len) {
  plan **pp = s ? &s->plans : NULL;
  while (pp && *pp && !((*pp)->len == len && !memcmp((*pp)->bytes, bytes, len))) pp = &(*pp)->next;
  return pp && *pp ? pp : NULL;
}

dop_result *connect_plan_take(const char *session_id, const uint8_t *bytes, size_t len) {
  dop_result *r = NULL;
  pthread_mutex_lock(&g_lock);
  plan **pp = find_plan(find(session_id), bytes, len);
  if (pp) {
    plan *p = *pp;
    *pp = p->next;
    r = p->r;
    free(p->bytes);
    free(p);
  }
  pthread_mutex_unlock(&g_lock);
  return r;
}

bool connect_plan_has(const char *session_id, const uint8_t *bytes, size_t len) {
  pthread_mutex_lock(&g_lock);
  bool has = find_plan(find(session_id), bytes, len) != NULL;
  pthread_mutex_unlock(&g_lock);
  return has;
}
