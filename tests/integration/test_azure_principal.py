"""test_azure_principal.py: tables in Azure read with a service principal (client secret).

Azurite (Microsoft's emulator, tests/js/azure) runs over HTTPS with OAuth on: it accepts a
bearer token after checking its issuer, audience and lifetime (not its signature), answers
Get User Delegation Key, and checks user delegation SAS signatures with Microsoft's code.
The Microsoft identity platform cannot run here, so a small token endpoint in this test
stands in for it (the one mock: it checks the client-credentials form as the platform does
and issues an unsigned JWT with the claims Azurite checks). deltad trusts the test's CA with
--storage-ca-file and finds the endpoint through AZURE_AUTHORITY_HOST.

Checked: a recipient's query of a shared table in Azure answers the same lines as the local
copy; every file URL is a user delegation SAS (skoid/sktid of the principal) that Azurite
serves with the fixture's bytes and refuses once altered; the official delta-sharing client
loads the same rows as from the local share; deltactl reads the table's detail through the
server (the log read with bearer tokens); tokens and delegation keys are fetched once for
many calls; a wrong client secret is PERMISSION_DENIED-like (403) naming the tenant, and the
server stays up."""
import base64
import http.server
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

import requests

import dd_harness as h
import tls_certs
from dd_stores import admin, ndjson, strip_lines

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
TABLE = os.path.join(FIX, "delta-rs-data", "delta-0.8.0-partitioned")
AZJS = os.path.join(h.ROOT, "tests", "js", "azure")
VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
ACCOUNT = "devstoreaccount1"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT = "0d5d0f5e-1111-4222-8333-944444444444"
SECRET = "s3cr3t~value.with-chars"
OID = "6c1f1c3e-5555-4666-8777-988888888888"


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class TokenEndpoint(http.server.BaseHTTPRequestHandler):
    """POST /<tenant>/oauth2/v2.0/token with the client-credentials form."""
    calls = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        TokenEndpoint.calls.append((self.path, form))
        ok = (self.path == "/%s/oauth2/v2.0/token" % TENANT and
              form.get("grant_type") == ["client_credentials"] and
              form.get("client_id") == [CLIENT] and form.get("client_secret") == [SECRET] and
              form.get("scope") == ["https://storage.azure.com/.default"])
        if ok:
            now = int(time.time())
            claims = {"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/%s/" % TENANT,
                      "iat": now - 10, "nbf": now - 10, "exp": now + 3600, "oid": OID, "tid": TENANT,
                      "appid": CLIENT}
            jwt = ".".join([b64url(json.dumps({"alg": "RS256", "typ": "JWT"}).encode()),
                            b64url(json.dumps(claims).encode()), b64url(b"not-checked")])
            body, code = {"token_type": "Bearer", "expires_in": 3599, "access_token": jwt}, 200
        else:
            body, code = {"error": "invalid_client",
                          "error_description": "AADSTS7000215: Invalid client secret provided."}, 401
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def node(env, *args):
    r = subprocess.run(["node", os.path.join(AZJS, "blobs.mjs")] + list(args), env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("blobs.mjs %s failed: %s" % (args[0], r.stderr))
    return r.stdout.strip()


class AzurePrincipal(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(os.path.join(AZJS, "node_modules", "azurite")):
            raise AssertionError("azurite is not installed (run scripts/setup.sh)")
        cls.tmp = tempfile.mkdtemp(prefix="dd-azad-")
        certs = tls_certs.Certs(cls.tmp)
        cls.ca = certs.ca_cert
        cert, key = certs.server("srv", 7)
        env = dict(os.environ, AZURITE_CERT=cert, AZURITE_KEY=key, AZURITE_OAUTH="basic",
                   NODE_EXTRA_CA_CERTS=cls.ca)
        cls.azurite = subprocess.Popen(["node", os.path.join(AZJS, "azurite.mjs"),
                                        os.path.join(cls.tmp, "store")], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = cls.azurite.stdout.readline()
        if not line.startswith("PORT "):
            cls.azurite.kill()
            raise RuntimeError("azurite did not start: %r %r" % (line, cls.azurite.stderr.read()))
        cls.endpoint = "https://127.0.0.1:%s/%s" % (line.split()[1], ACCOUNT)
        cls.tokens = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        cls.tokens.socket = ctx.wrap_socket(cls.tokens.socket, server_side=True)
        threading.Thread(target=cls.tokens.serve_forever, daemon=True).start()
        cls.authority = "https://127.0.0.1:%d" % cls.tokens.server_address[1]
        try:
            node(env, "upload", cls.endpoint, "lake", "tables", "parts=" + TABLE, "work=" + TABLE)
            cls.uploaded = time.time()
            cls.server_env = dict(os.environ, AZURE_AUTHORITY_HOST=cls.authority)
            cls.server_args = ["--storage-ca-file", cls.ca, "--url-expiry-seconds", "600"]
            super().setUpClass()
            cls.setup_shares()
        except BaseException:
            cls.cleanup()
            raise

    @classmethod
    def cleanup(cls):
        cls.azurite.kill()
        cls.azurite.wait()
        cls.azurite.stdout.close()
        cls.azurite.stderr.close()
        cls.tokens.shutdown()
        cls.tokens.server_close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls.cleanup()
        super().tearDownClass()

    @classmethod
    def admin(cls, method, path, body, expect=200):
        return admin(cls.server, method, path, body, expect)

    @classmethod
    def setup_shares(cls):
        for name, secret in (("sp", SECRET), ("spwrong", "not-the-secret")):
            cls.admin("POST", "/credentials", {"name": name, "azure": {"client": {
                "tenantId": TENANT, "clientId": CLIENT, "clientSecret": secret}}})
        for name, cred, path in (("lake", "sp", "tables"), ("wrong", "spwrong", "tables2")):
            cls.admin("POST", "/locations", {
                "name": name, "type": "AZURE", "credential": cred,
                "url": "abfss://lake@%s.dfs.core.windows.net/%s" % (ACCOUNT, path),
                "properties": {"endpoint": cls.endpoint}})
        for share in ("az", "local"):
            cls.admin("POST", "/shares", {"name": share})
            cls.admin("POST", "/shares/%s/schemas" % share, {"name": "main"})
        cls.admin("POST", "/shares/az/schemas/main/tables",
                  {"name": "parts", "location": "lake", "path": "parts"})
        cls.admin("POST", "/shares/az/schemas/main/tables",
                  {"name": "wrong", "location": "wrong", "path": "parts"})
        cls.admin("POST", "/shares/local/schemas/main/tables",
                  {"name": "parts", "url": "file://" + TABLE})
        r = cls.admin("POST", "/recipients", {"name": "bob"})
        cls.bearer = r["bearerToken"]
        cls.R = {"Authorization": "Bearer " + cls.bearer}
        for share in ("az", "local"):
            cls.admin("POST", "/recipients/bob/grants/%s" % share, None)

    def query(self, share, table="parts"):
        url = "%s/shares/%s/schemas/main/tables/%s/query" % (self.server.rest, share, table)
        return requests.post(url, data="{}", headers=self.R)

    def test_query_urls_are_user_delegation_sas(self):
        TokenEndpoint.calls.clear()
        a, b = self.query("az"), self.query("local")
        self.assertEqual(a.status_code, 200, a.text)
        self.assertEqual(b.status_code, 200, b.text)
        self.assertEqual(strip_lines(ndjson(a.text), True), strip_lines(ndjson(b.text), True))
        files = [l["file"] for l in ndjson(a.text) if "file" in l]
        self.assertGreater(len(files), 3)
        for f in files:
            u = urllib.parse.urlparse(f["url"])
            self.assertEqual("%s://%s/%s" % (u.scheme, u.netloc, ACCOUNT), self.endpoint)
            q = urllib.parse.parse_qs(u.query)
            self.assertEqual(q["skoid"], [OID])
            self.assertEqual(q["sktid"], [TENANT])
            self.assertEqual((q["sr"], q["sp"], q["sks"]), (["b"], ["r"], ["b"]))
            got = requests.get(f["url"], verify=self.ca)
            self.assertEqual(got.status_code, 200, got.text[:300])
            rel = urllib.parse.unquote(u.path.split("/lake/tables/parts/", 1)[1])
            with open(os.path.join(TABLE, rel), "rb") as fh:
                self.assertEqual(got.content, fh.read())
        # an altered signature or a widened permission is refused by Azurite
        bad = files[0]["url"].replace("sp=r", "sp=rw")
        self.assertEqual(requests.get(bad, verify=self.ca).status_code, 403)
        # the cached token and delegation key serve a second query without a new sign-in
        before = len(TokenEndpoint.calls)
        self.assertEqual(self.query("az").status_code, 200)
        self.assertEqual(len(TokenEndpoint.calls), before)
        self.assertLessEqual(len(TokenEndpoint.calls), 1)

    def test_official_client_reads_same_rows(self):
        prof = os.path.join(self.tmp, "bob.share")
        with open(prof, "w") as f:
            json.dump({"shareCredentialsVersion": 1, "endpoint": self.server.rest + "/",
                       "bearerToken": self.bearer}, f)
        script = ("import json,sys,delta_sharing\n"
                  "p=sys.argv[1]\n"
                  "a=delta_sharing.load_as_pandas(p+'#az.main.parts')\n"
                  "b=delta_sharing.load_as_pandas(p+'#local.main.parts')\n"
                  "k=lambda d: sorted(map(str, d[sorted(d.columns)].astype(str).values.tolist()))\n"
                  "print(json.dumps({'az': len(a), 'local': len(b), 'same': k(a) == k(b)}))\n")
        env = dict(os.environ, SSL_CERT_FILE=self.ca, REQUESTS_CA_BUNDLE=self.ca)
        r = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", script, prof], env=env,
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        got = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertGreater(got["local"], 0)
        self.assertEqual(got, {"az": got["local"], "local": got["local"], "same": True})

    def test_maintenance_reads_log_with_tokens(self):
        r = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token, "--output", "json", "table", "detail",
                            "abfss://lake@%s.dfs.core.windows.net/tables/parts" % ACCOUNT],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual(d["numFiles"], 6, d)

    def test_delete_commits_with_tokens(self):
        url = "abfss://lake@%s.dfs.core.windows.net/tables/work" % ACCOUNT
        def cli(*args):
            r = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                                "--token", self.server.token, "--output", "json"] + list(args),
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            return json.loads(r.stdout)
        before = cli("table", "detail", url)
        # a row of a file holding two: the file is read, rewritten and replaced on Azure
        out = cli("table", "delete", url, "--where", "value = '6'")
        self.assertEqual(out["numAffectedRows"], 1, out)
        after = cli("table", "detail", url)
        self.assertEqual(after["numFiles"], before["numFiles"])
        self.assertEqual(after["version"], before["version"] + 1)
        r = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token, "--output", "jsonl", "table", "scan", url],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(json.loads(l)["value"] for l in r.stdout.splitlines() if l),
                         ["1", "2", "3", "4", "5", "7"])
        hist = cli("table", "history", url, "--limit", "1")
        self.assertEqual(hist[0]["operation"], "DELETE", hist)
        # vacuum deletes the replaced file in a Blob Batch whose subrequests carry bearer
        # tokens (Azurite checks each one)
        time.sleep(max(0.0, self.uploaded + 11 - time.time()))  # files younger than 10 s stay
        vac = ["table", "vacuum", url, "--retain", "0", "--allow-short-retention"]
        self.assertEqual(len(cli(*vac, "--dry-run")), 1)
        cli(*vac)
        self.assertEqual(cli(*vac, "--dry-run"), [])
        self.assertEqual(cli("table", "detail", url)["numFiles"], after["numFiles"])

    def test_wrong_secret_is_refused_and_server_stays_up(self):
        r = self.query("az", "wrong")
        self.assertEqual(r.status_code, 403, r.text)
        self.assertEqual(r.json()["errorCode"], "PERMISSION_DENIED")
        self.assertNotIn("not-the-secret", r.text)
        # the provider's log says why (the platform's refusal, naming the tenant), no secret
        deadline = time.time() + 5
        while time.time() < deadline and not any("AADSTS7000215" in l for l in self.server.stderr_lines):
            time.sleep(0.1)
        why = [l for l in self.server.stderr_lines if "AADSTS7000215" in l]
        self.assertTrue(why, "".join(self.server.stderr_lines)[-2000:])
        self.assertIn(TENANT, why[0])
        self.assertFalse(any("not-the-secret" in l for l in self.server.stderr_lines))
        self.assertEqual(self.query("az").status_code, 200)


if __name__ == "__main__":
    h.main()
