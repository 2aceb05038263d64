"""test_tables_sts.py: temporary table credentials for a catalog table in S3, against moto's
S3, IAM and STS with authentication on (tests/integration/peers/moto_iam.py). deltad holds an
IAM user's keys and the ARN of a role the user may assume; GenerateTemporaryTableCredential
assumes the role through STS (moto checks the SigV4 signature of the AssumeRole call, the
user's permission and the role's trust) with a session policy on the table's prefix. The
session's keys then read the table with delta-rs and boto3 as a client would, and their
identity is the role's: the user's own keys read nothing. moto does not evaluate session
policies, so the policy deltad sent is read back from moto's model data and checked
statement by statement. A credential without a role, a local table and an unknown operation
are refused with their reasons."""
import json
import os
import shutil
import subprocess
import tempfile

import requests

import dd_harness as h
from dd_stores import admin, stop_procs, stores_venv

PEERS = os.path.join(h.ROOT, "tests", "integration", "peers")


class TablesSts(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-tables-sts-")
        people = os.path.join(cls.tmp, "people")
        h.write_people_table(people)
        py = os.path.join(stores_venv(), "bin", "python")
        cls.moto = subprocess.Popen([py, os.path.join(PEERS, "moto_iam.py"), "lake/tables/people=" + people,
                                     "lake/other/t=" + people, "lake/bad/t=" + people,
                                     "lake/tables/star*t=" + people],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        try:
            lines = [cls.moto.stdout.readline().split() for _ in range(3)]
            assert [l[0] for l in lines if l] == ["PORT", "USER", "ROLE"], lines
            cls.s3 = "http://127.0.0.1:%s" % lines[0][1]
            cls.user = (lines[1][1], lines[1][2])
            cls.role = lines[2][1]
            super().setUpClass()
            aws = {"accessKeyId": cls.user[0], "secretAccessKey": cls.user[1], "region": "us-east-1"}
            admin(cls.server, "POST", "/credentials", {"name": "role", "aws": dict(aws, roleArn=cls.role)})
            admin(cls.server, "POST", "/credentials", {"name": "keys", "aws": aws})
            props = {"endpoint": cls.s3, "path_style": "true"}
            admin(cls.server, "POST", "/locations", {"name": "tables", "url": "s3://lake/tables",
                                                     "credential": "role", "properties": props})
            admin(cls.server, "POST", "/locations", {"name": "other", "url": "s3://lake/other",
                                                     "credential": "keys", "properties": props})
            admin(cls.server, "POST", "/credentials", {"name": "badkey", "aws": dict(
                aws, secretAccessKey="not-" + cls.user[1], roleArn=cls.role)})
            admin(cls.server, "POST", "/locations", {"name": "bad", "url": "s3://lake/bad",
                                                     "credential": "badkey", "properties": props})
            admin(cls.server, "POST", "/catalogs", {"name": "c"})
            admin(cls.server, "POST", "/schemas", {"name": "s", "catalogName": "c"})
            code, t = cls.server.curl("POST", "/tables", {"name": "people", "catalogName": "c", "schemaName": "s",
                                                          "storageLocation": "s3://lake/tables/people"})
            assert code == 200, t
            cls.table_id = t["tableId"]
            code, t = cls.server.curl("POST", "/tables", {"name": "o", "catalogName": "c", "schemaName": "s",
                                                          "storageLocation": "s3://lake/other/t"})
            assert code == 200, t
            cls.keys_table_id = t["tableId"]
            code, t = cls.server.curl("POST", "/tables", {"name": "b", "catalogName": "c", "schemaName": "s",
                                                          "storageLocation": "s3://lake/bad/t"})
            assert code == 200, t
            cls.bad_table_id = t["tableId"]
            code, t = cls.server.curl("POST", "/tables", {"name": "star", "catalogName": "c", "schemaName": "s",
                                                          "storageLocation": "s3://lake/tables/star*t"})
            assert code == 200, t
            cls.star_table_id = t["tableId"]
            cls.moto.stdin.write("auth\n")  # from here on moto checks every signature
            cls.moto.stdin.flush()
            assert cls.moto.stdout.readline().strip() == "AUTH"
        except BaseException:
            cls.moto.kill()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            stop_procs([cls.moto])
            cls.moto.stdin.close()
            shutil.rmtree(cls.tmp, True)

    def creds(self, operation, expect=200, table_id=None):
        code, body = self.server.curl("POST", "/temporary-table-credentials",
                                      {"tableId": table_id or self.table_id, "operation": operation})
        self.assertEqual(code, expect, body)
        return body

    def boto(self, *keys, op, **kw):
        """Runs one S3 call with boto3 in the stores venv: ("ok", ...) or ("error", code)."""
        script = ("import boto3, json, sys\n"
                  "a = json.loads(sys.argv[1])\n"
                  "s3 = boto3.client('s3', endpoint_url=a['ep'], region_name='us-east-1',"
                  " aws_access_key_id=a['k'][0], aws_secret_access_key=a['k'][1],"
                  " aws_session_token=a['k'][2] if len(a['k']) > 2 else None)\n"
                  "try:\n"
                  "    r = getattr(s3, a['op'])(**a['kw'])\n"
                  "    out = r['Body'].read().decode() if 'Body' in r else sorted(o['Key'] for o in r.get('Contents', []))\n"
                  "    print(json.dumps(['ok', out]))\n"
                  "except s3.exceptions.ClientError as e:\n"
                  "    print(json.dumps(['error', e.response['Error']['Code']]))\n")
        py = os.path.join(stores_venv(), "bin", "python")
        p = subprocess.run([py, "-c", script, json.dumps({"ep": self.s3, "k": keys, "op": op, "kw": kw})],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def session_policy(self, access_key_id):
        roles = requests.get(self.s3 + "/moto-api/data.json").json()["sts"]["AssumedRole"]
        mine = [r for r in roles if r["access_key_id"] == access_key_id]
        self.assertEqual(len(mine), 1, roles)
        self.assertTrue(mine[0]["session_name"].startswith("deltad-"), mine[0])
        self.assertEqual(mine[0]["role_arn"], self.role)
        return json.loads(mine[0]["policy"])

    def test_read_credentials_read_the_table(self):
        c = self.creds("READ")
        self.assertEqual(c["url"], "s3://lake/tables/people")
        a = c["awsTempCredentials"]
        keys = (a["accessKeyId"], a["secretAccessKey"], a["sessionToken"])
        self.assertNotEqual(keys[0], self.user[0])
        self.assertGreater(int(c["expirationTime"]), 0)
        # delta-rs reads the table with the session, as a client of the catalog would
        venv = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
        opts = {"AWS_ENDPOINT_URL": self.s3, "AWS_ACCESS_KEY_ID": keys[0], "AWS_SECRET_ACCESS_KEY": keys[1],
                "AWS_SESSION_TOKEN": keys[2], "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
        p = subprocess.run([os.path.join(venv, "bin", "python"), os.path.join(PEERS, "delta_rs_stores.py")],
                           input=json.dumps({"tables": [["s3://lake/tables/people", opts]]}),
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)["s3://lake/tables/people"]
        self.assertEqual((got.get("version"), got.get("rows")), (0, 3), got)
        log = self.boto(*keys, op="get_object", Bucket="lake", Key="tables/people/_delta_log/00000000000000000000.json")
        self.assertEqual(log[0], "ok", log)
        self.assertIn('"protocol"', log[1])
        # the session is the role's; the user's own keys read nothing
        self.assertEqual(self.boto(*self.user, op="get_object", Bucket="lake",
                                   Key="tables/people/_delta_log/00000000000000000000.json"), ["error", "AccessDenied"])
        # a wrong session token is refused: moto checks the session as AWS does
        self.assertEqual(self.boto(keys[0], keys[1], keys[2][:-4] + "AAAA", op="get_object", Bucket="lake",
                                   Key="tables/people/_delta_log/00000000000000000000.json")[0], "error")
        pol = self.session_policy(keys[0])
        self.assertEqual(pol["Version"], "2012-10-17")
        by_action = {json.dumps(s["Action"]): s for s in pol["Statement"]}
        self.assertEqual(sorted(by_action), sorted(['["s3:GetObject", "s3:GetObjectVersion"]', '"s3:ListBucket"']))
        get = by_action['["s3:GetObject", "s3:GetObjectVersion"]']
        self.assertEqual((get["Effect"], get["Resource"]), ("Allow", "arn:aws:s3:::lake/tables/people/*"))
        lst = by_action['"s3:ListBucket"']
        self.assertEqual(lst["Resource"], "arn:aws:s3:::lake")
        self.assertEqual(lst["Condition"], {"StringLike": {"s3:prefix": ["tables/people/*", "tables/people"]}})

    def test_issuing_is_audited_without_secrets(self):
        c = self.creds("READ")["awsTempCredentials"]
        code, body = self.server.curl("GET", "/audit/events?kind=admin_change&max_results=1000")
        self.assertEqual(code, 200, body)
        mine = [e for e in body.get("events", []) if e.get("action") == "GenerateTemporaryTableCredential"]
        self.assertTrue(mine, body)
        self.assertIn("table_id=" + self.table_id, mine[-1]["object"])
        text = json.dumps(body)
        for secret in (c["secretAccessKey"], c["sessionToken"], self.user[1]):
            self.assertNotIn(secret, text)

    def test_deltactl_table_credentials(self):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target, "--token",
                            self.server.token, "table", "credentials", "c.s.people", "--write", "--output", "json"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        self.assertEqual(got["url"], "s3://lake/tables/people")
        pol = self.session_policy(got["awsTempCredentials"]["accessKeyId"])
        self.assertTrue([s for s in pol["Statement"] if "s3:PutObject" in s["Action"]], pol)
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target, "--token",
                            self.server.token, "table", "credentials", "c.s.nope"],
                           capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("not found", p.stderr)

    def test_read_write_adds_put_and_delete_on_the_prefix(self):
        a = self.creds("READ_WRITE")["awsTempCredentials"]
        pol = self.session_policy(a["accessKeyId"])
        puts = [s for s in pol["Statement"] if "s3:PutObject" in s["Action"]]
        self.assertEqual(len(puts), 1, pol)
        self.assertEqual(sorted(puts[0]["Action"]), ["s3:DeleteObject", "s3:PutObject"])
        self.assertEqual(puts[0]["Resource"], "arn:aws:s3:::lake/tables/people/*")
        keys = (a["accessKeyId"], a["secretAccessKey"], a["sessionToken"])
        self.assertEqual(self.boto(*keys, op="put_object", Bucket="lake", Key="tables/people/x.txt", Body="x")[0], "ok")
        self.assertEqual(self.boto(*keys, op="delete_object", Bucket="lake", Key="tables/people/x.txt")[0], "ok")

    def test_refusals(self):
        body = self.creds("DROP", expect=400)
        self.assertIn("READ or READ_WRITE", body["message"])
        # a location whose credential names no role: static keys cannot be narrowed
        body = self.creds("READ", expect=400, table_id=self.keys_table_id)
        self.assertIn("has no role_arn", body["message"])
        # a '*' in the prefix would be a pattern in the session policy: refused
        body = self.creds("READ", expect=400, table_id=self.star_table_id)
        self.assertIn("pattern", body["message"])
        # STS refuses a request signed with a wrong secret (moto checks the signature)
        body = self.creds("READ", expect=403, table_id=self.bad_table_id)
        self.assertIn("SignatureDoesNotMatch", body["message"])
        local = os.path.join(self.tmp, "local")
        h.write_people_table(local)
        admin(self.server, "POST", "/locations", {"name": "local", "url": "file://" + local})
        code, t = self.server.curl("POST", "/tables", {"name": "l", "catalogName": "c", "schemaName": "s",
                                                       "storageLocation": local})
        self.assertEqual(code, 200, t)
        body = self.creds("READ", expect=400, table_id=t["tableId"])
        self.assertIn("is local", body["message"])


if __name__ == "__main__":
    h.main()
