/* connect_forward_ops.c: the forwarded operations running now, so that the client's
 * Interrupt can name Spark's: each maps the client's session and operation id to the Spark
 * session and the operation id deltad gave the forwarded ExecutePlan (connect_forward.h).
 * A list under its own mutex; few entries (one per forwarded call in flight). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_forward.h"

typedef struct fwd_op {
  struct fwd_op *next;
  char *session, *client_op;
  char spark_sid[37], spark_op[37];
} fwd_op;

static pthread_mutex_t ops_mu = PTHREAD_MUTEX_INITIALIZER;
static fwd_op *ops;

int connect_fwd_op_add(const char *session, const char *client_op, const char *spark_sid, const char *spark_op) {
  fwd_op *o = calloc(1, sizeof *o);
  if (!o || !(o->session = strdup(session)) || !(o->client_op = strdup(client_op ? client_op : ""))) {
    if (o) free(o->session);
    free(o);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  memcpy(o->spark_sid, spark_sid, 37);
  memcpy(o->spark_op, spark_op, 37);
  pthread_mutex_lock(&ops_mu);
  o->next = ops;
  ops = o;
  pthread_mutex_unlock(&ops_mu);
  return 0;
}

void connect_fwd_op_remove(const char *spark_op) {
  fwd_op *found = NULL;
  pthread_mutex_lock(&ops_mu);
  for (fwd_op **p = &ops; *p; p = &(*p)->next)
    if (!strcmp((*p)->spark_op, spark_op)) {
      found = *p, *p = found->next;
      break;
    }
  pthread_mutex_unlock(&ops_mu);
  if (!found) return;
  free(found->session);
  free(found->client_op);
  free(found);
}

bool connect_fwd_op_find(const char *session, const char *client_op, char spark_sid[37], char spark_op[37]) {
  bool hit = false;
  pthread_mutex_lock(&ops_mu);
  for (fwd_op *o = ops; o && !hit; o = o->next)
    if (!strcmp(o->session, session) && (!client_op || !strcmp(o->client_op, client_op))) {
      memcpy(spark_sid, o->spark_sid, 37);
      memcpy(spark_op, o->spark_op, 37);
      hit = true;
    }
  pthread_mutex_unlock(&ops_mu);
  return hit;
}

int connect_fwd_op_pairs(const char *session, connect_fwd_pair **out, size_t *n) {
  *out = NULL, *n = 0;
  int rc = 0;
  pthread_mutex_lock(&ops_mu);
  size_t want = 0;
  for (fwd_op *o = ops; o; o = o->next) want += !strcmp(o->session, session);
  if (want && !(*out = calloc(want, sizeof **out))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  for (fwd_op *o = ops; o && !rc; o = o->next) {
    if (strcmp(o->session, session)) continue;
    connect_fwd_pair *p = &(*out)[*n];
    memcpy(p->spark_op, o->spark_op, 37);
    if (!(p->client_op = strdup(o->client_op))) rc = dd_err_set(DD_ENOMEM, "out of memory");
    else (*n)++;
  }
  pthread_mutex_unlock(&ops_mu);
  if (rc) connect_fwd_pairs_free(*out, *n), *out = NULL, *n = 0;
  return rc;
}

void connect_fwd_pairs_free(connect_fwd_pair *p, size_t n) {
  for (size_t i = 0; i < n; i++) free(p[i].client_op);
  free(p);
}

char *connect_fwd_op_client(const char *spark_op) {
  char *id = NULL;
  pthread_mutex_lock(&ops_mu);
  for (fwd_op *o = ops; o && !id; o = o->next)
    if (!strcmp(o->spark_op, spark_op)) id = strdup(o->client_op);
  pthread_mutex_unlock(&ops_mu);
  return id;
}
