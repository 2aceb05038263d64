/* cat_location.c: storage locations in the store: a named URL, its storage type and the
 * credential that reaches it (recorded in credential_uses so that credential cannot be
 * deleted while the location exists). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__LOC_DESC (&deltad__credentials__v1__storage_location__descriptor)
#define CAT__LOC_PROPS (&deltad__credentials__v1__storage_location__properties_entry__descriptor)

typedef Deltad__Credentials__V1__StorageType cat__stype;

static int cat__has_scheme(const char *url, const char *scheme) {
  size_t n = strlen(scheme);
  return strncasecmp(url, scheme, n) == 0 && strncmp(url + n, "://", 3) == 0;
}

/* The storage type a url implies; UNSPECIFIED when its scheme is unknown. */
static cat__stype cat__type_of_url(const char *url) {
  if (cat__has_scheme(url, "file")) return DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL;
  if (cat__has_scheme(url, "s3") || cat__has_scheme(url, "s3a"))
    return DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3;
  if (cat__has_scheme(url, "abfss") || cat__has_scheme(url, "abfs") ||
      cat__has_scheme(url, "az") || cat__has_scheme(url, "wasbs"))
    return DELTAD__CREDENTIALS__V1__STORAGE_TYPE__AZURE;
  if (cat__has_scheme(url, "gs")) return DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS;
  return DELTAD__CREDENTIALS__V1__STORAGE_TYPE__STORAGE_TYPE_UNSPECIFIED;
}

/* The authority of url ("scheme://authority/...") carries user information: any '@' for
 * an http(s) endpoint, "user:password@" elsewhere (Azure URLs name container@account). */
static bool cat__has_userinfo(const char *url, bool http) {
  const char *p = strstr(url, "://");
  if (!p) return false;
  p += 3;
  size_t n = strcspn(p, "/?#");
  const char *at = memchr(p, '@', n);
  if (!at) return false;
  return http || memchr(p, ':', (size_t)(at - p)) != NULL;
}

/* Credentials belong in a credential object, never in a URL (which is listed, logged and
 * echoed in errors). */
static int cat__location_userinfo_check(
    const Deltad__Credentials__V1__CreateStorageLocationRequest *req) {
  if (cat__has_userinfo(req->url, false))
    return dd_err_set(DD_EINVAL, "url: must not carry a user name or password "
                      "(user:password@); put secrets in a credential");
  for (size_t i = 0; i < req->n_properties; i++)
    if (!strcasecmp(req->properties[i]->key, "endpoint") && req->properties[i]->value &&
        cat__has_userinfo(req->properties[i]->value, true))
      return dd_err_set(DD_EINVAL, "properties.endpoint: must not carry a user name or "
                        "password (user:password@); put secrets in a credential");
  return 0;
}

static int cat__location_check(const Deltad__Credentials__V1__CreateStorageLocationRequest *req,
                               cat__stype *type) {
  int rc = cat_name_check("name", req->name, 1);
  if (rc) return rc;
  if (!req->url || !*req->url) return dd_err_set(DD_EINVAL, "url: must not be empty");
  *type = req->type;
  if (!strstr(req->url, "://") && *type != DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL)
    return dd_err_set(DD_EINVAL, "url: '%s' has no scheme", req->url);
  if ((int)*type < 0 || *type > DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS)
    return dd_err_set(DD_EINVAL, "type: unknown storage type %d", (int)req->type);
  if (*type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__STORAGE_TYPE_UNSPECIFIED)
    *type = cat__type_of_url(req->url);
  if (*type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__STORAGE_TYPE_UNSPECIFIED)
    return dd_err_set(DD_EINVAL, "type: required (cannot tell it from url '%s')", req->url);
  bool local = *type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL ||
               cat__has_scheme(req->url, "file");
  if (!local && (!req->credential || !*req->credential))
    return dd_err_set(DD_EINVAL, "credential: required for a non-local storage location");
  if (req->credential && *req->credential && (rc = cat_name_check("credential", req->credential, 1)))
    return rc;
  if ((rc = cat__location_userinfo_check(req))) return rc;
  return cat__props_check("properties", req->n_properties, (void *const *)req->properties);
}

/* Checks the credential kind suits the storage type (aws for S3, azure for AZURE, gcp for
 * GCS). */
static int cat__credential_fits(const cat_credential *c, cat__stype type) {
  if (type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3 &&
      c->credential_case != DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS)
    return dd_err_set(DD_EINVAL, "credential: '%s' is not an aws credential (needed for S3)",
                      c->name);
  if (type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__AZURE &&
      c->credential_case != DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE)
    return dd_err_set(DD_EINVAL, "credential: '%s' is not an azure credential (needed for AZURE)",
                      c->name);
  if (type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS &&
      c->credential_case != DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_GCP)
    return dd_err_set(DD_EINVAL, "credential: '%s' is not a gcp credential (needed for GCS)",
                      c->name);
  return 0;
}

/* ---- create ---------------------------------------------------------------------------------- */

/* Resolves req->credential (if any) to its id and display name and records the use. */
static int cat__location_use(cat_store *s, cat_txn *txn, const char *loc_id, const char *name,
                             cat__stype type, cat_credential **cred) {
  char cred_id[CAT__ID_LEN + 1];
  int rc = cat__get_by_name(s, txn, CAT__DB_CREDENTIAL_NAMES, CAT__DB_CREDENTIALS, NULL, name,
                            &deltad__credentials__v1__credential__descriptor,
                            (ProtobufCMessage **)cred, cred_id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "credential '%s' not found", name);
  if (!rc) rc = cat__credential_fits(*cred, type);
  if (rc) return rc;
  rc = cat__name_put(s, txn, CAT__DB_CREDENTIAL_USES, cred_id, loc_id, loc_id);
  return rc == DD_EEXISTS ? dd_err_set(DD_EINTERNAL, "duplicate location id") : rc;
}

static int cat__location_insert(cat_store *s, cat_txn *txn, cat_location **out, const char *actor,
                                const Deltad__Credentials__V1__CreateStorageLocationRequest *req,
                                cat__stype type) {
  char id[CAT__ID_LEN + 1];
  cat__kv **props = NULL;
  cat_credential *cred = NULL;
  int rc = cat__uuid(id);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_LOCATION_NAMES, NULL, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "storage location '%s' already exists", req->name);
  if (!rc && req->credential && *req->credential)
    rc = cat__location_use(s, txn, id, req->credential, type, &cred);
  if (!rc) rc = cat__props_view(&props, CAT__LOC_PROPS, req->n_properties,
                                (void *const *)req->properties);
  if (rc) goto cleanup;
  cat_location rec = DELTAD__CREDENTIALS__V1__STORAGE_LOCATION__INIT;
  rec.id = id;
  rec.name = req->name;
  rec.url = req->url;
  rec.type = type;
  rec.credential = cred ? cred->name : (char *)protobuf_c_empty_string;
  rec.description = req->description;
  rec.n_properties = req->n_properties;
  rec.properties = (Deltad__Credentials__V1__StorageLocation__PropertiesEntry **)props;
  rec.owner = rec.created_by = (char *)actor;
  rec.create_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_LOCATIONS, id, &rec.base, (ProtobufCMessage **)out);
cleanup:
  free(props);
  if (cred) protobuf_c_message_free_unpacked(&cred->base, NULL);
  return rc;
}

int cat_location_create(cat_store *s, cat_location **out, const char *actor,
                        const Deltad__Credentials__V1__CreateStorageLocationRequest *req) {
  cat_txn *txn = NULL;
  cat__stype type = DELTAD__CREDENTIALS__V1__STORAGE_TYPE__STORAGE_TYPE_UNSPECIFIED;
  *out = NULL;
  int rc = cat__location_check(req, &type);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__location_insert(s, txn, out, actor, req, type);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- get / list / delete ------------------------------------------------------------------- */

static int cat__location_find(cat_store *s, cat_txn *txn, const char *name, cat_location **out,
                              char id[CAT__ID_LEN + 1]) {
  int rc = cat__get_by_name(s, txn, CAT__DB_LOCATION_NAMES, CAT__DB_LOCATIONS, NULL, name,
                            CAT__LOC_DESC, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "storage location '%s' not found", name);
  return rc;
}

int cat_view_location_get(cat_view *v, cat_location **out, const char *name) {
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat_name_check("name", name, 1);
  return rc ? rc : cat__location_find(v->s, v->txn, name, out, id);
}

int cat_location_get(cat_store *s, cat_location **out, const char *name) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_location_get(&v, out, name);
  return cat__view_end(&v, rc);
}

int cat_location_list(cat_store *s,
                      Deltad__Credentials__V1__ListStorageLocationsResponse **out,
                      const Deltad__Credentials__V1__ListStorageLocationsRequest *req) {
  cat__page page;
  *out = NULL;
  int rc = cat__list(s, CAT__DB_LOCATION_NAMES, CAT__DB_LOCATIONS, NULL, CAT__LOC_DESC,
                     req->max_results, req->page_token, &page);
  if (rc) return rc;
  Deltad__Credentials__V1__ListStorageLocationsResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__credentials__v1__list_storage_locations_response__init(resp);
  resp->n_storage_locations = page.n;
  resp->storage_locations = (cat_location **)page.items;
  resp->next_page_token = page.next;
  *out = resp;
  return 0;
}

/* Removes the credential_uses entry of location id (credential named cred, may be ""). */
static int cat__location_unuse(cat_store *s, cat_txn *txn, const char *id, const char *cred) {
  char cred_id[CAT__ID_LEN + 1];
  if (!cred || !*cred) return 0;
  int rc = cat__name_get(s, txn, CAT__DB_CREDENTIAL_NAMES, NULL, cred, cred_id);
  if (rc == DD_ENOTFOUND) return 0;
  return rc ? rc : cat__name_del(s, txn, CAT__DB_CREDENTIAL_USES, cred_id, id);
}

int cat_location_delete(cat_store *s, const char *name) {
  cat_txn *txn = NULL;
  cat_location *cur = NULL;
  char id[CAT__ID_LEN + 1];
  int rc = cat_name_check("name", name, 1);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__location_find(s, txn, name, &cur, id);
  if (!rc) rc = cat__location_unuse(s, txn, id, cur->credential);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_LOCATION_NAMES, NULL, name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_LOCATIONS, id, CAT__ID_LEN);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (cur) protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}

/* ---- walking every location ------------------------------------------------------------- */

typedef struct {
  cat_location_walk_fn fn;
  void *arg;
} cat__loc_walk;

static int cat__loc_walk_one(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                             void *arg) {
  cat__loc_walk *w = arg;
  cat_location *loc = NULL;
  (void)lname;
  int rc = cat__rec_get(s, txn, CAT__DB_LOCATIONS, id, CAT__LOC_DESC, (ProtobufCMessage **)&loc);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ECORRUPT, "catalog store: dangling index %s", id);
  if (rc) return rc;
  rc = w->fn(w->arg, loc);
  protobuf_c_message_free_unpacked(&loc->base, NULL);
  return rc;
}

int cat_view_location_walk(cat_view *v, cat_location_walk_fn fn, void *arg) {
  cat__loc_walk w = {fn, arg};
  return cat__scope_walk(v->s, v->txn, CAT__DB_LOCATION_NAMES, NULL, cat__loc_walk_one, &w);
}

int cat_location_walk(cat_store *s, cat_location_walk_fn fn, void *arg) {
  cat_view v;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_location_walk(&v, fn, arg);
  return cat__view_end(&v, rc);
}
