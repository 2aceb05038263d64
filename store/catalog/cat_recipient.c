/* cat_recipient.c: Delta Sharing recipients. A recipient record lists the SHA-256 of its
 * live bearer tokens; the tokens themselves are entries of the `tokens` sub-DB (kind
 * RECIPIENT), written in the same transaction, so authentication needs one lookup. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_share_int.h"

#define RCPT_DESC (&deltad__sharing__v1__recipient__descriptor)

/* Writes a RECIPIENT token entry: the same bytes cat_token_put writes (cat_token.c). */
static int cat__rcpt_token_put(cat_store *s, cat_txn *txn, const cat_recipient *r,
                               const unsigned char *hash, int64_t expiry_ms) {
  unsigned char buf[1 + 1 + 8 + CAT_TOKEN_HASH_LEN + 1 + 255 + 1 + 40];
  size_t o = 0, nl = strlen(r->name), il = strlen(r->id);
  if (nl > 255 || il > 39) return dd_err_set(DD_EINVAL, "recipient name too long");
  buf[o++] = 1;
  buf[o++] = CAT_TOKEN_RECIPIENT;
  for (int i = 7; i >= 0; i--) buf[o++] = (unsigned char)((uint64_t)expiry_ms >> (8 * i));
  memcpy(buf + o, hash, CAT_TOKEN_HASH_LEN);
  o += CAT_TOKEN_HASH_LEN;
  buf[o++] = (unsigned char)nl;
  memcpy(buf + o, r->name, nl);
  o += nl;
  buf[o++] = (unsigned char)il;
  memcpy(buf + o, r->id, il);
  o += il;
  (void)s;
  return cat__kv_put(txn, CAT__DB_TOKENS, hash, CAT_TOKEN_HASH_LEN, buf, o, false);
}

static int cat__rcpt_add_hash(cat_recipient *r, const unsigned char *hash) {
  ProtobufCBinaryData *grown = realloc(r->token_hashes, (r->n_token_hashes + 1) * sizeof *grown);
  uint8_t *copy = malloc(CAT_TOKEN_HASH_LEN);
  if (grown) r->token_hashes = grown;
  if (!grown || !copy) {
    free(copy);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  memcpy(copy, hash, CAT_TOKEN_HASH_LEN);
  r->token_hashes[r->n_token_hashes].data = copy;
  r->token_hashes[r->n_token_hashes++].len = CAT_TOKEN_HASH_LEN;
  return 0;
}

/* Blanks the token hashes of a record about to be returned. */
static void cat__rcpt_public(cat_recipient *r) {
  for (size_t i = 0; i < r->n_token_hashes; i++) free(r->token_hashes[i].data);
  free(r->token_hashes);
  r->token_hashes = NULL;
  r->n_token_hashes = 0;
}

int cat_recipient_create(cat_store *s, cat_recipient **out, const char *actor,
                         const char *name, const char *comment,
                         const unsigned char hash[CAT_TOKEN_HASH_LEN], int64_t expiry_ms) {
  cat_txn *txn = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat_name_check("name", name, 1);
  if (rc) return rc;
  cat_recipient *r = malloc(sizeof *r);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__recipient__init(r);
  rc = cat__uuid(id);
  r->id = cat__strdup(id);
  r->name = cat__strdup(name);
  r->comment = cat__strdup(comment);
  r->created_by = cat__strdup(actor);
  r->created_at = cat__now_ms();
  r->token_expiration_time = expiry_ms;
  if (!rc && (!r->id || !r->name || !r->comment || !r->created_by))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = cat__rcpt_add_hash(r, hash);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_RECIPIENT_NAMES, NULL, name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "recipient '%s' already exists", name);
  if (!rc) rc = cat__rec_put(s, txn, CAT__DB_RECIPIENTS, id, &r->base, NULL);
  if (!rc) rc = cat__rcpt_token_put(s, txn, r, hash, expiry_ms);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return rc;
  }
  cat__rcpt_public(r);
  *out = r;
  return 0;
}

static int cat__rcpt_load(cat_store *s, cat_txn *txn, const char *name, cat_recipient **out,
                          char id[CAT__ID_LEN + 1]) {
  int rc = cat_name_check("name", name, 1);
  if (rc) return rc;
  rc = cat__get_by_name(s, txn, CAT__DB_RECIPIENT_NAMES, CAT__DB_RECIPIENTS, NULL, name,
                        RCPT_DESC, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "recipient '%s' not found", name);
  return rc;
}

int cat_recipient_get(cat_store *s, cat_recipient **out, const char *name) {
  cat_txn *txn = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__rcpt_load(s, txn, name, out, id);
  cat__txn_abort(txn);
  if (!rc) cat__rcpt_public(*out);
  return rc;
}

int cat_recipient_list(cat_store *s, Deltad__Sharing__V1__ListRecipientsResponse **out,
                       const Deltad__Sharing__V1__ListRecipientsRequest *req) {
  cat__page page;
  *out = NULL;
  int rc = cat__list(s, CAT__DB_RECIPIENT_NAMES, CAT__DB_RECIPIENTS, NULL, RCPT_DESC,
                     req->max_results, req->page_token, &page);
  if (rc) return rc;
  Deltad__Sharing__V1__ListRecipientsResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__sharing__v1__list_recipients_response__init(resp);
  resp->n_recipients = page.n;
  resp->recipients = (cat_recipient **)page.items;
  resp->next_page_token = page.next;
  for (size_t i = 0; i < page.n; i++) cat__rcpt_public(resp->recipients[i]);
  *out = resp;
  return 0;
}

static int cat__rcpt_ungrant_one(cat_store *s, cat_txn *txn, const char *lname, const char *sid,
                                 void *arg) {
  const char *rid = arg;
  int rc = cat__name_del(s, txn, CAT__DB_SHARE_GRANTS, sid, rid);
  if (rc && rc != DD_ENOTFOUND) return rc;
  return cat__name_del(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, lname);
}

static int cat__rcpt_drop_tokens(cat_store *s, cat_txn *txn, const cat_recipient *r) {
  for (size_t i = 0; i < r->n_token_hashes; i++) {
    int rc = cat__key_del(s, txn, CAT__DB_TOKENS, r->token_hashes[i].data, r->token_hashes[i].len);
    if (rc) return rc;
  }
  return 0;
}

int cat_recipient_delete(cat_store *s, const char *name) {
  cat_txn *txn = NULL;
  cat_recipient *r = NULL;
  char id[CAT__ID_LEN + 1];
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__rcpt_load(s, txn, name, &r, id);
  if (!rc) rc = cat__rcpt_drop_tokens(s, txn, r);
  if (!rc) rc = cat__scope_walk(s, txn, CAT__DB_RECIPIENT_GRANTS, id, cat__rcpt_ungrant_one, id);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_RECIPIENT_NAMES, NULL, r->name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_RECIPIENTS, id, CAT__ID_LEN);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (r) protobuf_c_message_free_unpacked(&r->base, NULL);
  return rc;
}

/* Old tokens: deleted when old_expiry_ms <= now, else re-written with that expiry (never
 * extended past their own expiry). */
static int cat__rcpt_age_tokens(cat_store *s, cat_txn *txn, cat_recipient *r,
                                int64_t old_expiry_ms) {
  int64_t now = cat__now_ms();
  if (old_expiry_ms <= now) {
    int rc = cat__rcpt_drop_tokens(s, txn, r);
    cat__rcpt_public(r);
    return rc;
  }
  size_t keep = 0;
  for (size_t i = 0; i < r->n_token_hashes; i++) {
    cat__bytes v;
    const unsigned char *kp = r->token_hashes[i].data;
    size_t kn = r->token_hashes[i].len;
    int mrc = cat__kv_get(txn, CAT__DB_TOKENS, kp, kn, &v);
    int64_t exp = 0;
    if (mrc == 0 && v.n >= 10)
      for (int b = 0; b < 8; b++) exp = exp << 8 | ((const unsigned char *)v.p)[2 + b];
    if (mrc == 0 && exp != 0 && exp <= now) mrc = DD_ENOTFOUND; /* expired already */
    if (mrc == DD_ENOTFOUND) {
      int rc = cat__key_del(s, txn, CAT__DB_TOKENS, kp, kn);
      free(r->token_hashes[i].data);
      if (rc) return rc;
      continue;
    }
    if (mrc) return mrc;
    int64_t e = (exp != 0 && exp < old_expiry_ms) ? exp : old_expiry_ms;
    int rc = cat__rcpt_token_put(s, txn, r, r->token_hashes[i].data, e);
    r->token_hashes[keep++] = r->token_hashes[i];
    if (rc) return rc;
  }
  r->n_token_hashes = keep;
  return 0;
}

int cat_recipient_rotate(cat_store *s, cat_recipient **out, const char *name,
                         const unsigned char hash[CAT_TOKEN_HASH_LEN], int64_t expiry_ms,
                         int64_t old_expiry_ms) {
  cat_txn *txn = NULL;
  cat_recipient *r = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__rcpt_load(s, txn, name, &r, id);
  if (!rc) rc = cat__rcpt_age_tokens(s, txn, r, old_expiry_ms);
  if (!rc) rc = cat__rcpt_add_hash(r, hash);
  if (!rc) rc = cat__rcpt_token_put(s, txn, r, hash, expiry_ms);
  if (!rc) {
    r->token_expiration_time = expiry_ms;
    rc = cat__rec_put(s, txn, CAT__DB_RECIPIENTS, id, &r->base, NULL);
  }
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc) {
    if (r) protobuf_c_message_free_unpacked(&r->base, NULL);
    return rc;
  }
  cat__rcpt_public(r);
  *out = r;
  return 0;
}
