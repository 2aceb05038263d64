#!/usr/bin/python3
"""test_rowtrack.py (integration.rowtrack): row tracking kept by deltad's writes, judged by
Spark with Delta. Tables with delta.enableRowTracking=true (made by Spark: copy-on-write,
deletion vectors, partitioned; one made by deltad through SQL over Delta Connect) run the
same steps on two copies, deltad changing one (a DataFrame append by the real Spark Connect
client, DELETE, UPDATE and OPTIMIZE by deltactl, an insert-only MERGE by the real Delta
Connect client) and Spark the other; after each step Spark's
SELECT *, _metadata.row_id, _metadata.row_commit_version gives the same multiset on both
copies (the same rows keep the same ids, and the same commit versions); a MERGE that updates
rows too (copy-on-write table, deltad's table). MERGEs with update, delete and insert
clauses, and with WHEN NOT MATCHED BY SOURCE clauses, run on copy-on-write, deletion vector
and partitioned tables, with and without the change data feed, compared per row (by x):
kept and updated rows keep their row ids (Spark's), inserted rows get fresh unique ids
above the old high-water mark, every row has Spark's commit version; the high-water mark
covers the commit's new files as the protocol says and equals Spark's; the change feed's
rows are Spark's. On the copy-on-write table and deltad's table Spark then writes after
deltad and the copies still agree, DESCRIBE DETAIL works and delta-rs reads deltad's copy. A table enabled later by deltad (ALTER TABLE SET TBLPROPERTIES over
Delta Connect: materialized column names set, existing files backfilled) gets unique ids
that its later rewrites (UPDATE, OPTIMIZE, Z-order) keep."""
import json
import os
import subprocess

import dml_common as c
from dml_common import h, q
from spark_judge_client import SparkJudge
import test_delta_connect_client as dcc

COLS = "x INT, y STRING, p STRING"
RT = "'delta.enableRowTracking' = 'true'"
ROWS = ["(1, 'a', 'u'), (2, 'b', 'u'), (3, NULL, 'v')", "(4, 'd', 'v'), (5, 'e', 'w')"]
TABLES = {
    "cow": ("", "TBLPROPERTIES (%s, 'delta.enableDeletionVectors' = 'false')" % RT),
    "dv": ("", "TBLPROPERTIES (%s, 'delta.enableDeletionVectors' = 'true')" % RT),
    "part": ("PARTITIONED BY (p)", "TBLPROPERTIES (%s, 'delta.enableDeletionVectors' = 'false')" % RT),
}
# one row each: Spark's local session would split a bigger DataFrame into several files
# (deltad writes one), which moves the row id high-water mark differently in later rewrites
APPEND = [{"kind": "write", "mode": "append", "path": "{t}", "schema": COLS, "rows": [r]}
          for r in ([10, "j", "u"], [11, "k", "v"], [12, None, "w"])]
INSERT_ONLY = {"kind": "merge", "on": "t.x = s.x", "target_alias": "t", "source_alias": "s",
               "source_schema": COLS, "source_rows": [[20, "m", "u"], [1, "dup", "u"], [21, "n", "v"]],
               "clauses": [{"when": "not_matched", "action": "insert_all"}]}
UPDATING = dict(INSERT_ONLY, clauses=[{"when": "matched", "action": "update", "set": {"y": "'merged'"}}])
CDF = "'delta.enableChangeDataFeed' = 'true'"
# tables for the MERGEs below (besides TABLES): the change data feed on
MERGE_TABLES = {
    "cow-cdf": ("", "TBLPROPERTIES (%s, %s, 'delta.enableDeletionVectors' = 'false')" % (RT, CDF)),
    "part-dv-cdf": ("PARTITIONED BY (p)", "TBLPROPERTIES (%s, %s, 'delta.enableDeletionVectors' = 'true')"
                    % (RT, CDF)),
}
ORIGINAL = {1, 2, 3, 4, 5}  # the x of ROWS
# x 1..5 at first: 5 deleted, 1 and 3 updated (3 moves from partition v to u), 2 and 4 kept,
# 40 and 41 inserted
MERGE_UDI = {"kind": "merge", "on": "t.x = s.x", "target_alias": "t", "source_alias": "s",
             "source_schema": COLS,
             "source_rows": [[1, "s1", "u"], [3, "s3", "u"], [5, None, "w"], [40, "n", "u"], [41, "o", "v"]],
             "clauses": [{"when": "matched", "cond": "s.y IS NULL", "action": "delete"},
                         {"when": "matched", "action": "update", "set": {"y": "s.y", "p": "s.p"}},
                         {"when": "not_matched", "action": "insert_all"}]}
# then: 2 and 4 updated, 1 deleted and 40, 41 updated by source, 3 kept, 50 inserted
MERGE_NMBS = dict(MERGE_UDI, source_rows=[[2, "s2", "u"], [4, "s4", "v"], [50, "q", "w"]],
                  clauses=[{"when": "matched", "action": "update_all"},
                           {"when": "not_matched", "action": "insert_all"},
                           {"when": "nmbs", "cond": "t.x = 1", "action": "delete"},
                           {"when": "nmbs", "cond": "t.x >= 40", "action": "update", "set": {"y": "'old'"}}])


class RowTrack(dcc.DeltaConnectClient):
    test_real_client = None  # test_delta_connect_client.py's own test runs there

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.judge = SparkJudge()
        cls.base = os.path.join(cls.tmp, "base")
        os.makedirs(cls.base)
        for name, (part, props) in list(TABLES.items()) + list(MERGE_TABLES.items()):
            c.make_table(cls.judge, os.path.join(cls.base, name), COLS, ROWS, part, props)
        c.make_table(cls.judge, os.path.join(cls.base, "late"), COLS, ROWS, "",
                     "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')")

    @classmethod
    def tearDownClass(cls):
        try:
            cls.judge.close()
        finally:
            super().tearDownClass()

    # ---- helpers ----

    def tracked(self, path):
        rows = self.judge.sql("SELECT *, _metadata.row_id AS rid, _metadata.row_commit_version AS rcv "
                              "FROM %s" % q(path))
        return sorted(json.dumps(r, sort_keys=True) for r in rows)

    def assert_ids_sound(self, path, what):
        rows = [json.loads(r) for r in self.tracked(path)]
        ids = [r["rid"] for r in rows]
        self.assertNotIn(None, ids, what)
        self.assertNotIn(None, [r["rcv"] for r in rows], what)
        self.assertEqual(len(set(ids)), len(ids), "%s: duplicate row ids" % what)
        return rows

    def assert_same(self, a, b, what):
        self.assert_ids_sound(a, what)
        self.assertEqual(self.tracked(a), self.tracked(b), what)

    @staticmethod
    def bind(ops, path):
        return json.loads(json.dumps(ops).replace("{t}", path))

    def steps(self, a, b, name, full):
        """The same steps on deltad's copy a and Spark's copy b, compared after each; with
        full also the refused MERGE, Spark writing after deltad, and the other readers."""
        self.assertEqual(c.run_dwrite(self, self.bind(APPEND, a)), ["ok"] * len(APPEND))
        self.assertEqual(self.judge.dfwrite(self.bind(APPEND, b)), ["ok"] * len(APPEND))
        self.assert_same(a, b, name + ": append")
        c.deltactl(["delete", a, "--where", "x = 2 OR x = 11"])
        self.judge.sql("DELETE FROM %s WHERE x = 2 OR x = 11" % q(b))
        self.assert_same(a, b, name + ": delete")
        c.deltactl(["update", a, "--set", "y = 'upd'", "--where", "x IN (1, 4, 12)"])
        self.judge.sql("UPDATE %s SET y = 'upd' WHERE x IN (1, 4, 12)" % q(b))
        self.assert_same(a, b, name + ": update")
        if full:
            got = c.run_client(self, [dict(UPDATING, path=a)])
            self.assertIn("ok", got[0], "%s: %s" % (name, got))
            self.judge.sql(c.merge_sql(q(b) + " t", dict(UPDATING, target_alias="")))
            self.assert_same(a, b, name + ": updating merge")
        got = c.run_client(self, [dict(INSERT_ONLY, path=a)])
        self.assertIn("ok", got[-1], "%s: %s" % (name, got))
        self.judge.sql(c.merge_sql(q(b) + " t", dict(INSERT_ONLY, target_alias="")))
        self.assert_same(a, b, name + ": insert-only merge")
        c.deltactl(["optimize", a])
        self.judge.sql("OPTIMIZE %s" % q(b))
        self.assert_same(a, b, name + ": optimize")
        if not full:
            return
        # Spark writes after deltad: its protocol check takes deltad's commits
        for p in (a, b):
            self.judge.sql("INSERT INTO %s VALUES (30, 'z', 'u')" % q(p))
            self.judge.sql("UPDATE %s SET y = 'spark' WHERE x = 3" % q(p))
        self.assert_same(a, b, name + ": Spark after deltad")
        detail = self.judge.sql("DESCRIBE DETAIL %s" % q(a))[0]
        self.assertIn("rowTracking", detail["tableFeatures"], name)
        got = c.peer_rows(a)
        self.assertIn("deltalake", got, "%s: delta-rs: %s" % (name, got))
        self.assertEqual(len(got["deltalake"]), len(self.judge.read(b)), name)

    @staticmethod
    def log_commits(path):
        d = os.path.join(path, "_delta_log")
        names = sorted(f for f in os.listdir(d) if f.endswith(".json") and f[:-5].isdigit())
        out = []
        for f in names:
            with open(os.path.join(d, f)) as fh:
                out.append([json.loads(line) for line in fh if line.strip()])
        return out

    def hwm(self, path):
        """The table's rowIdHighWaterMark (-1 without one)."""
        mark = -1
        for actions in self.log_commits(path):
            for a in actions:
                dm = a.get("domainMetadata")
                if dm and dm["domain"] == "delta.rowTracking" and not dm.get("removed"):
                    mark = json.loads(dm["configuration"])["rowIdHighWaterMark"]
        return mark

    def fresh_rows(self, path):
        """Rows the last commit's adds took fresh ids for: their numRecords summed."""
        n = 0
        for a in self.log_commits(path)[-1]:
            add = a.get("add")
            if add and add.get("baseRowId") is not None and add["baseRowId"] > self.old_hwm:
                n += json.loads(add["stats"])["numRecords"]
        return n

    def ids(self, path):
        return {r["x"]: r["rid"] for r in self.assert_ids_sound(path, path)}

    def materialized(self, path):
        """x -> (materialized row id, materialized commit version) of the rows in the last
        commit's new files (read by pyarrow: what the writer wrote, not what readers see;
        files re-added with a deletion vector are old ones)."""
        adds = [a["add"]["path"] for a in self.log_commits(path)[-1]
                if a.get("add") and not a["add"].get("deletionVector")]
        conf = {r["key"]: r["value"] for r in self.judge.sql("SHOW TBLPROPERTIES %s" % q(path))}
        cols = [conf["delta.rowTracking.materializedRowIdColumnName"],
                conf["delta.rowTracking.materializedRowCommitVersionColumnName"]]
        prog = ("import json, sys, urllib.parse, pyarrow.parquet as pq\n"
                "a = json.loads(sys.argv[1]); out = {}\n"
                "for f in a['files']:\n"
                "    t = pq.ParquetFile(a['root'] + '/' + urllib.parse.unquote(f)).read().to_pydict()\n"
                "    for i, x in enumerate(t['x']):\n"
                "        out[x] = [t.get(c, [None] * len(t['x']))[i] for c in a['cols']]\n"
                "print(json.dumps(out))\n")
        arg = json.dumps({"root": path, "files": adds, "cols": cols})
        p = subprocess.run([c.PY, "-c", prog, arg], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return {int(x): v for x, v in json.loads(p.stdout).items()}

    def merge_same(self, a, b, what, inserted, before):
        """After the same MERGE: per row (by x) Spark's values and commit version; kept and
        updated rows the ids they had before (before: x -> id on each copy), as on Spark's
        copy, inserted rows fresh ids above the old high-water mark; the mark moved by the
        rows of the commit's new files, to Spark's."""
        got = {r["x"]: r for r in self.assert_ids_sound(a, what)}
        want = {r["x"]: r for r in self.assert_ids_sound(b, what + " (Spark)")}
        self.assertEqual(sorted(got), sorted(want), what)
        for x, r in got.items():
            w = want[x]
            self.assertEqual({k: v for k, v in r.items() if k != "rid"},
                             {k: v for k, v in w.items() if k != "rid"}, "%s: row %s" % (what, x))
            if x in inserted:
                self.assertGreater(r["rid"], self.old_hwm, "%s: inserted row %s has a fresh id" % (what, x))
                self.assertGreater(w["rid"], self.old_hwm, what)
            else:
                if x in ORIGINAL:  # the copies' ids are the same until a MERGE inserts
                    self.assertEqual(r["rid"], w["rid"], "%s: row %s has Spark's id" % (what, x))
                self.assertEqual(r["rid"], before[0][x], "%s: row %s keeps its id" % (what, x))
                self.assertEqual(w["rid"], before[1][x], "%s: row %s keeps its id (Spark)" % (what, x))
        # the materialized columns of the rows both wrote: as Spark's (a copied row keeps
        # both, an updated row its id with a null version, an inserted row neither)
        ma, mb = self.materialized(a), self.materialized(b)
        self.assertTrue(set(ma) & set(mb), what)
        for x in set(ma) & set(mb):
            self.assertEqual([v is None for v in ma[x]], [v is None for v in mb[x]],
                             "%s: row %s materialized %s, Spark's %s" % (what, x, ma[x], mb[x]))
        mark = self.hwm(a)
        self.assertGreaterEqual(mark, max(r["rid"] for r in got.values()), what)
        self.assertEqual(mark, self.old_hwm + self.fresh_rows(a), what + ": high-water mark")
        self.assertEqual(mark, self.hwm(b), what + ": Spark's high-water mark")
        return mark

    def cdf_same(self, a, b, what):
        v = int(c.last_commit(self.judge, a)["version"])
        sql = "SELECT x, y, p, _change_type FROM table_changes_by_path('%s', {v}, {v})".format(v=v)
        rows = [sorted(json.dumps(r, sort_keys=True) for r in self.judge.sql(sql % p)) for p in (a, b)]
        self.assertTrue(rows[0], what + ": no change rows")
        self.assertEqual(rows[0], rows[1], what + ": change data feed")

    def merges(self, a, b, name):
        """MERGE_UDI then MERGE_NMBS by deltad (the Delta Connect client) on a and by Spark
        on b, compared after each."""
        for op, ins in ((MERGE_UDI, {40, 41}), (MERGE_NMBS, {50})):
            what = "%s: merge inserting %s" % (name, sorted(ins))
            self.old_hwm = self.hwm(a)
            self.assertEqual(self.old_hwm, self.hwm(b), what)
            before = (self.ids(a), self.ids(b))
            got = c.run_client(self, [dict(op, path=a)])
            self.assertIn("ok", got[0], "%s: %s" % (what, got))
            self.judge.sql(c.merge_sql(q(b) + " t", dict(op, target_alias="")))
            self.merge_same(a, b, what, ins, before)
            if "cdf" in name:
                self.cdf_same(a, b, what)

    def pair(self, name):
        return c.copy_pair(os.path.join(self.base, name), self.tmp, name)

    # ---- tests ----

    def test_spark_tables(self):
        for name in TABLES:
            a, b = self.pair(name)
            self.steps(a, b, name, name == "cow")

    def test_merge_keeps_row_ids(self):
        for name in list(TABLES) + list(MERGE_TABLES):
            a, b = c.copy_pair(os.path.join(self.base, name), self.tmp, "m-" + name)
            self.merges(a, b, name)

    def test_table_made_by_deltad(self):
        a, b = os.path.join(self.tmp, "dd-dd"), os.path.join(self.tmp, "dd-spark")
        create = "CREATE TABLE {t} (%s) USING delta TBLPROPERTIES (%s)" % (COLS, RT)
        got = c.run_client(self, [{"kind": "sql", "sql": create.replace("{t}", q(a))}])[0]
        self.assertIn("ok", got, got)
        self.judge.sql(create.replace("{t}", q(b)))
        conf = {r["key"]: r["value"] for r in self.judge.sql("SHOW TBLPROPERTIES %s" % q(a))}
        self.assertTrue(conf.get("delta.rowTracking.materializedRowIdColumnName", "").startswith("_row-id-col-"))
        self.assertTrue(conf.get("delta.rowTracking.materializedRowCommitVersionColumnName", "")
                        .startswith("_row-commit-version-col-"))
        for p in (a, b):
            for v in ROWS:
                self.judge.sql("INSERT INTO %s VALUES %s" % (q(p), v))
        self.assert_same(a, b, "deltad's table")
        self.steps(a, b, "deltad's table", True)

    def test_enabled_later_by_deltad(self):
        a, _ = self.pair("late")
        alter = "ALTER TABLE %s SET TBLPROPERTIES (%s)" % (q(a), RT)
        got = c.run_client(self, [{"kind": "sql", "sql": alter}])[0]
        self.assertIn("ok", got, got)
        before = {r["x"]: r for r in self.assert_ids_sound(a, "late: enabled")}
        c.deltactl(["update", a, "--set", "y = 'upd'", "--where", "x = 1"])
        c.deltactl(["optimize", a])
        c.deltactl(["optimize", a, "--zorder-by", "y"])
        after = {r["x"]: r for r in self.assert_ids_sound(a, "late: rewritten")}
        v = int(c.last_commit(self.judge, a)["version"]) - 1
        for x, r in before.items():
            self.assertEqual(after[x]["rid"], r["rid"], "late: row %s kept its id" % x)
            if x != 1:
                self.assertEqual(after[x]["rcv"], r["rcv"], "late: row %s kept its version" % x)
        self.assertEqual(after[1]["rcv"], v - 1, "late: the updated row's version is the UPDATE's")
        self.judge.sql("INSERT INTO %s VALUES (30, 'z', 'u')" % q(a))
        self.assert_ids_sound(a, "late: Spark after deltad")


if __name__ == "__main__":
    h.main()
