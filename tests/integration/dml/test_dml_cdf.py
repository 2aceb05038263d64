#!/usr/bin/python3
"""test_dml_cdf.py: the change data feed of DELETE, UPDATE and MERGE by deltad, judged by
Spark with Delta. Tables made by Spark with delta.enableChangeDataFeed=true (plain,
partitioned, deletion vectors, column mapping); every operation runs on two copies, deltad
changing one (the real Delta Connect client: DeltaTable.delete / update / merge, spark.sql
through deltad), Spark the other. Then table_changes_by_path of the operation's version
gives the same rows on both copies (_commit_timestamp left out), delta-rs's load_cdf reads
deltad's copy the same way (not the DV and column mapping tables, which it does not read), the cdc actions sit under _change_data/ (in the partition
directories, partition columns only in partitionValues), their count is the commit's
numAddedChangeFiles / numTargetChangeFilesAdded, and deltad writes change data files
exactly when Spark does (not for a DELETE of whole partitions, nor for an inserts-only
MERGE, whose readers take the adds and removes), except that a DELETE by deletion vector
writes them where Spark leaves readers to compare the vectors."""
import json
import os
import subprocess

import requests

import dml_common as c
from dml_merge_cases import CL, MERGES
from dml_common import h, q
from spark_judge_client import SparkJudge
import test_delta_connect_client as dcc

CDF_PEER = os.path.join(c.HERE, "dml_cdf_peer.py")
CDF = "'delta.enableChangeDataFeed' = 'true'"
ROWS = ["(1, 'a', 'u'), (2, 'b', 'u'), (3, NULL, 'v')",
        "(4, 'd', 'v'), (5, 'e', NULL), (NULL, 'f', 'u'), (7, 'g', 'w')"]
COLS = "x INT, y STRING, p STRING"
TABLES = {
    "plain": (ROWS, "", "TBLPROPERTIES (%s)" % CDF),
    "part": (ROWS, "PARTITIONED BY (p)", "TBLPROPERTIES (%s)" % CDF),
    "dvm": (["SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a', 'u'), (2, 'b', 'u'), (3, NULL, 'v'), "
             "(4, 'd', 'v'), (7, 'g', 'w') AS v(x, y, p)"], "",
            "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', %s)" % CDF),
    "chk": (["(5, 'a', 'u'), (6, 'b', 'v')", "(1, 'c', 'u'), (2, 'd', 'v')"], "PARTITIONED BY (p)",
            "TBLPROPERTIES (%s)" % CDF),
    "cm": (ROWS, "PARTITIONED BY (p)",
           "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
           "'delta.minWriterVersion' = '5', %s)" % CDF),
}
INSERT_ONLY = {"on": "t.x = s.x", "rows": [[20, "T", "u"], [1, "dup", "u"], [21, None, None]],
               "clauses": [CL("not_matched", "insert_all")]}
# (deltad's op without its path, Spark's statement with {t}, the table kinds it runs on)
DEL = ({"kind": "delete", "cond": "x > 3"}, "DELETE FROM {t} WHERE x > 3")
UPD = ({"kind": "update", "cond": "x < 3", "set": {"y": "concat(y, '!')"}},
       "UPDATE {t} SET y = concat(y, '!') WHERE x < 3")
PART_DEL = ({"kind": "sql", "sql": "DELETE FROM {t} WHERE p = 'u'"}, "DELETE FROM {t} WHERE p = 'u'")
SQL_UPD = ({"kind": "sql", "sql": "UPDATE {t} SET x = x + 100 WHERE y IS NULL OR p = 'w'"},
           "UPDATE {t} SET x = x + 100 WHERE y IS NULL OR p = 'w'")
PLAN = {
    "plain": [DEL, UPD, ("merge", MERGES[1]), ("merge", INSERT_ONLY)],
    "part": [PART_DEL, SQL_UPD, ("merge", MERGES[2])],
    "dvm": [DEL, UPD, ("merge", MERGES[1])],
    "cm": [UPD, ("merge", MERGES[0])],
}


def log_actions(path, version):
    with open(os.path.join(path, "_delta_log", "%020d.json" % version)) as f:
        return [json.loads(line) for line in f]


def last_version(path):
    return max(int(f[:20]) for f in os.listdir(os.path.join(path, "_delta_log")) if f.endswith(".json"))


class DmlCdf(dcc.DeltaConnectClient):
    test_real_client = None  # test_delta_connect_client.py's own test runs there

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.judge = SparkJudge()
        cls.base = os.path.join(cls.tmp, "base")
        os.makedirs(cls.base)
        for name, (vals, part, props) in TABLES.items():
            c.make_table(cls.judge, os.path.join(cls.base, name), COLS, vals, part, props)
        cls.judge.sql("DELETE FROM %s WHERE x = 2" % q(os.path.join(cls.base, "dvm")))
        cls.judge.sql("ALTER TABLE %s ADD CONSTRAINT pos CHECK (x > 0)" % q(os.path.join(cls.base, "chk")))
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        try:
            cls.judge.close()
        finally:
            super().tearDownClass()

    def pair(self, name):
        DmlCdf.n += 1
        return c.copy_pair(os.path.join(self.base, name), self.tmp, "%s-%d" % (name, DmlCdf.n))

    def changes(self, a, b, version):
        """Spark's change rows of version in tables a and b (one query)."""
        part = "SELECT '%s' AS _side, * FROM table_changes_by_path('%s', {v}, {v})".format(v=version)
        rows = self.judge.sql(part % ("a", a) + " UNION ALL " + part % ("b", b))
        out = {"a": [], "b": []}
        for r in rows:
            side = r.pop("_side")
            r.pop("_commit_timestamp")
            out[side].append(json.dumps(r, sort_keys=True))
        return sorted(out["a"]), sorted(out["b"])

    def check_log(self, a, b, name, what):
        """deltad's cdc actions against its metrics and Spark's choice to write them."""
        v = last_version(a)
        acts = log_actions(a, v)
        ha = [x["commitInfo"] for x in acts if "commitInfo" in x][0]
        cdc = [x["cdc"] for x in acts if "cdc" in x]
        key = "numTargetChangeFilesAdded" if ha["operation"] == "MERGE" else "numAddedChangeFiles"
        self.assertEqual(int(ha["operationMetrics"][key]), len(cdc), what)
        for f in cdc:
            self.assertTrue(f["path"].startswith("_change_data/"), f)
            self.assertTrue(os.path.basename(f["path"]).startswith("cdc-"), f)
            self.assertFalse(f["dataChange"], f)
            self.assertTrue(os.path.isfile(os.path.join(a, f["path"])), f)
            if name in ("part", "cm"):
                self.assertEqual(len(f["partitionValues"]), 1, f)
                pv = list(f["partitionValues"].items())[0]
                d = "%s=%s" % (pv[0], pv[1] if pv[1] is not None else "__HIVE_DEFAULT_PARTITION__")
                self.assertEqual(f["path"].split("/")[1], d, f)
        spark_cdc = [x for x in log_actions(b, v) if "cdc" in x]
        dv_delete = name == "dvm" and ha["operation"] == "DELETE"
        if not dv_delete:
            self.assertEqual(bool(cdc), bool(spark_cdc), "%s: cdc files written by deltad %d, Spark %d"
                             % (what, len(cdc), len(spark_cdc)))
        return v

    def test_cdf(self):
        """Every operation on every table kind: the same change data as Spark's."""
        plan = []
        for name, ops in PLAN.items():
            for op, spark in ops:
                a, b = self.pair(name)
                if op == "merge":
                    m = spark
                    mop = {"kind": "merge", "path": a, "source_rows": m["rows"], "source_schema": COLS,
                           "target_alias": "t", "source_alias": "s", "on": m["on"], "clauses": m["clauses"]}
                    stmt = c.merge_sql(q(b) + " t", dict(mop, path=b, target_alias=""))
                    plan.append((mop, b, stmt, name))
                    continue
                mine = dict(op, path=a)
                if "sql" in mine:
                    mine["sql"] = mine["sql"].format(t=q(a))
                plan.append((mine, b, spark.format(t=q(b)), name))
        got = c.run_client(self, [p[0] for p in plan])
        self.assertEqual(len(got), len(plan))
        peer, shared = [], None
        for (op, b, stmt, name), res in zip(plan, got):
            a, what = op["path"], "%s: %s" % (name, stmt)
            self.assertIn("ok", res, "%s: %s" % (what, res))
            self.judge.sql(stmt)
            v = self.check_log(a, b, name, what)
            self.assertEqual(last_version(b), v, what)
            got_a, want = self.changes(a, b, v)
            self.assertTrue(want, what)
            self.assertEqual(got_a, want, what)
            if name == "plain" and op["kind"] == "update":
                shared = (a, v, len([x for x in log_actions(a, v) if "cdc" in x]))
            # delta-rs reads neither the deletionVectors reader feature nor, in load_cdf,
            # column mapping
            if name not in ("dvm", "cm"):
                peer.append(({"path": a, "version": v}, want, name, what))
        p = subprocess.run([c.PY, CDF_PEER, json.dumps([x[0] for x in peer])],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        for (req, want, name, what), res in zip(peer, json.loads(p.stdout)):
            self.assertIn("rows", res, "%s: %s" % (what, res))
            rows = sorted(json.dumps(r, sort_keys=True) for r in res["rows"])
            self.assertEqual(rows, want, "delta-rs load_cdf, " + what)
            if name == "plain":
                for cols in res["cdc_columns"]:
                    self.assertEqual(cols, ["x", "y", "p", "_change_type"], what)
            elif name == "part":
                for cols in res["cdc_columns"]:
                    self.assertEqual(cols, ["x", "y", "_change_type"], what)
        self.check_sharing(*shared)

    def test_failed_leaves_nothing(self):
        """An UPDATE whose second file breaks a CHECK constraint after the first file's change
        data was written: refused, and no change data (nor any other file) is left."""
        a, _ = self.pair("chk")
        before = c.tree(a)
        err = c.deltactl(["update", a, "--set", "x = x - 3"], expect=1)
        self.assertIn("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", err)
        self.assertEqual(c.tree(a), before)

    def check_sharing(self, path, v, ncdc):
        """deltad's Delta Sharing changes of a version deltad wrote: its cdc files, readable."""
        auth = {"Authorization": "Bearer " + self.server.token}
        base = self.server.rest
        for sub, body in (("/shares", {"name": "cdf"}), ("/shares/cdf/schemas", {"name": "m"}),
                          ("/shares/cdf/schemas/m/tables", {"name": "t", "url": "file://" + path,
                                                            "historyShared": True})):
            r = requests.post(base + sub, json=body, headers=auth, verify=self.certs.ca_cert)
            self.assertEqual(r.status_code, 200, r.text)
        r = requests.get(base + "/shares/cdf/schemas/m/tables/t/changes?startingVersion=%d&endingVersion=%d"
                         % (v, v), headers=auth, verify=self.certs.ca_cert)
        self.assertEqual(r.status_code, 200, r.text)
        lines = [json.loads(x) for x in r.text.splitlines() if x.strip()]
        cdf = [x["cdf"] for x in lines if "cdf" in x]
        self.assertEqual(len(cdf), ncdc, lines)
        self.assertFalse([x for x in lines if "add" in x or "remove" in x], lines)
        self.assertEqual({x["version"] for x in cdf}, {v})


if __name__ == "__main__":
    h.main()
