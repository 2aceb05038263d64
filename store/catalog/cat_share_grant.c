/* cat_share_grant.c: which recipient may read which share (share_grants and
 * recipient_grants, kept in step), and the walk over the shares a principal can see. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_share_int.h"

/* ---- walking visible shares ------------------------------------------------------------- */

static int cat__walk_cursor(cat__cur *cur, const char *prefix, size_t plen,
                            const char *after, cat_share_walk_fn fn, void *arg) {
  cat__bytes k, v;
  int mrc = cat__cur_seek_after(cur, prefix, plen, after, &k, &v);
  for (; mrc == 0; mrc = cat__cur_next(cur, &k, &v)) {
    if (!cat__in_prefix(&k, prefix, plen)) break;
    char lname[CAT__NAME_MAX + 1], id[CAT__ID_LEN + 1];
    size_t nl = k.n - plen;
    if (nl > CAT__NAME_MAX || v.n != CAT__ID_LEN)
      return dd_err_set(DD_ECORRUPT, "catalog store: malformed share index entry");
    memcpy(lname, (const char *)k.p + plen, nl);
    lname[nl] = '\0';
    memcpy(id, v.p, CAT__ID_LEN);
    id[CAT__ID_LEN] = '\0';
    int rc = fn(arg, lname, id);
    if (rc) return rc;
  }
  return mrc == DD_ENOTFOUND ? 0 : mrc;
}

int cat_view_share_walk(cat_view *v, const char *recipient_id, const char *after,
                        cat_share_walk_fn fn, void *arg) {
  cat__cur *cur = NULL;
  char prefix[CAT__KEY_MAX];
  size_t plen = recipient_id ? cat__name_key(prefix, recipient_id, "") : 0;
  int db = recipient_id ? CAT__DB_RECIPIENT_GRANTS : CAT__DB_SHARE_NAMES;
  int rc = cat__cur_open(v->txn, db, &cur);
  if (!rc) rc = cat__walk_cursor(cur, prefix, plen, after ? after : "", fn, arg);
  cat__cur_close(cur);
  return rc;
}

int cat_share_walk(cat_store *s, const char *recipient_id, const char *after,
                   cat_share_walk_fn fn, void *arg) {
  cat_view v;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_share_walk(&v, recipient_id, after, fn, arg);
  return cat__view_end(&v, rc);
}

/* ---- grants ---------------------------------------------------------------------------- */

/* Resolves a share name and a recipient name to their ids and the share's display name. */
static int cat__grant_ids(cat_store *s, cat_txn *txn, const char *share, const char *recipient,
                          char sid[CAT__ID_LEN + 1], char rid[CAT__ID_LEN + 1]) {
  int rc = cat_name_check("share", share, 0);
  if (!rc) rc = cat_name_check("recipient", recipient, 1);
  if (rc) return rc;
  rc = cat__name_get(s, txn, CAT__DB_SHARE_NAMES, NULL, share, sid);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "share '%s' not found", share);
  if (!rc) rc = cat__name_get(s, txn, CAT__DB_RECIPIENT_NAMES, NULL, recipient, rid);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "recipient '%s' not found", recipient);
  return rc;
}

int cat_grant_add(cat_store *s, const char *share, const char *recipient) {
  cat_txn *txn = NULL;
  char sid[CAT__ID_LEN + 1], rid[CAT__ID_LEN + 1];
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__grant_ids(s, txn, share, recipient, sid, rid);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_SHARE_GRANTS, sid, rid, rid);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, share, sid);
  char gen[CAT__ID_LEN + 1];
  if (!rc) rc = cat__uuid(gen);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_GRANT_GENS, sid, rid);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_GRANT_GENS, sid, rid, gen);
  if (rc == DD_EEXISTS) { /* granted already: nothing to do */
    cat__txn_abort(txn);
    return 0;
  }
  if (!rc) return cat__txn_commit(txn);
  if (txn) cat__txn_abort(txn);
  return rc;
}

int cat_grant_remove(cat_store *s, const char *share, const char *recipient) {
  cat_txn *txn = NULL;
  char sid[CAT__ID_LEN + 1], rid[CAT__ID_LEN + 1];
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__grant_ids(s, txn, share, recipient, sid, rid);
  char got[CAT__ID_LEN + 1];
  if (!rc) {
    rc = cat__name_get(s, txn, CAT__DB_SHARE_GRANTS, sid, rid, got); /* del ignores absence */
    if (rc == DD_ENOTFOUND)
      rc = dd_err_set(DD_ENOTFOUND, "recipient '%s' has no grant on share '%s'", recipient, share);
  }
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_SHARE_GRANTS, sid, rid);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, share);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_GRANT_GENS, sid, rid);
  if (!rc) return cat__txn_commit(txn);
  if (txn) cat__txn_abort(txn);
  return rc;
}

int cat_view_grant_check(cat_view *v, const char *recipient_id, const char *share_name,
                         char share_id[40]) {
  if (cat_name_check("share", share_name, 1)) return dd_err_set(DD_ENOTFOUND, "share not found");
  int rc = cat__name_get(v->s, v->txn, CAT__DB_RECIPIENT_GRANTS, recipient_id, share_name,
                         share_id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "share '%s' not found", share_name);
  return rc;
}

int cat_grant_check(cat_store *s, const char *recipient_id, const char *share_name,
                    char share_id[40]) {
  cat_view v;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_grant_check(&v, recipient_id, share_name, share_id);
  return cat__view_end(&v, rc);
}

int cat_view_grant_generation(cat_view *v, const char *share_id, const char *recipient_id,
                              char gen[40]) {
  char got[CAT__ID_LEN + 1];
  if (strlen(share_id) != CAT__ID_LEN || strlen(recipient_id) != CAT__ID_LEN)
    return dd_err_set(DD_ENOTFOUND, "no such grant");
  int rc = cat__name_get(v->s, v->txn, CAT__DB_SHARE_GRANTS, share_id, recipient_id, got);
  if (!rc) {
    rc = cat__name_get(v->s, v->txn, CAT__DB_GRANT_GENS, share_id, recipient_id, gen);
    if (rc == DD_ENOTFOUND) rc = 0, strcpy(gen, "0"); /* granted before generations existed */
  }
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "no such grant");
  return rc;
}

int cat_grant_generation(cat_store *s, const char *share_id, const char *recipient_id,
                         char gen[40]) {
  cat_view v;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_grant_generation(&v, share_id, recipient_id, gen);
  return cat__view_end(&v, rc);
}

/* ---- listing grants ---------------------------------------------------------------------- */

typedef struct {
  Deltad__Sharing__V1__ListGrantsResponse *resp;
  int by_share; /* walking share_grants (ids are recipients) or recipient_grants */
  const char *fixed; /* the display name of the fixed side */
} cat__grant_list;

static int cat__grant_collect(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                              void *arg) {
  cat__grant_list *gl = arg;
  ProtobufCMessage *m = NULL;
  (void)lname;
  int rc = cat__rec_get(s, txn, gl->by_share ? CAT__DB_RECIPIENTS : CAT__DB_SHARES, id,
                        gl->by_share ? &deltad__sharing__v1__recipient__descriptor
                                     : &deltad__sharing__v1__share_info__descriptor,
                        &m);
  if (rc == DD_ENOTFOUND) return 0;
  if (rc) return rc;
  const char *other = gl->by_share ? ((cat_recipient *)m)->name : ((cat_share *)m)->name;
  Deltad__Sharing__V1__Grant *g = malloc(sizeof *g);
  Deltad__Sharing__V1__Grant **grown =
      realloc(gl->resp->grants, (gl->resp->n_grants + 1) * sizeof *grown);
  if (grown) gl->resp->grants = grown;
  if (!g || !grown) {
    free(g);
    protobuf_c_message_free_unpacked(m, NULL);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__sharing__v1__grant__init(g);
  g->share = cat__strdup(gl->by_share ? gl->fixed : other);
  g->recipient = cat__strdup(gl->by_share ? other : gl->fixed);
  gl->resp->grants[gl->resp->n_grants++] = g;
  protobuf_c_message_free_unpacked(m, NULL);
  return g->share && g->recipient ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int cat_grant_list(cat_store *s, Deltad__Sharing__V1__ListGrantsResponse **out,
                   const char *share, const char *recipient) {
  cat_txn *txn = NULL;
  char id[CAT__ID_LEN + 1];
  int by_share = share && *share;
  *out = NULL;
  if (by_share == (recipient && *recipient))
    return dd_err_set(DD_EINVAL, "give exactly one of share or recipient");
  const char *name = by_share ? share : recipient;
  Deltad__Sharing__V1__ListGrantsResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__list_grants_response__init(resp);
  int rc = cat__txn_begin(s, &txn, false);
  if (!rc) {
    rc = cat__name_get(s, txn, by_share ? CAT__DB_SHARE_NAMES : CAT__DB_RECIPIENT_NAMES, NULL,
                       name, id);
    if (rc == DD_ENOTFOUND)
      rc = dd_err_set(DD_ENOTFOUND, "%s '%s' not found", by_share ? "share" : "recipient", name);
  }
  cat__grant_list gl = {resp, by_share, name};
  if (!rc)
    rc = cat__scope_walk(s, txn, by_share ? CAT__DB_SHARE_GRANTS : CAT__DB_RECIPIENT_GRANTS, id,
                         cat__grant_collect, &gl);
  if (txn) cat__txn_abort(txn);
  if (rc) protobuf_c_message_free_unpacked(&resp->base, NULL);
  else *out = resp;
  return rc;
}
