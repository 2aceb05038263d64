#!/usr/bin/python3
"""test_identity_spark.py (integration.identity): rows written through deltad into tables
with an identity column, judged by Spark with Delta 4.4. Spark creates the tables (GENERATED
ALWAYS and BY DEFAULT, START WITH 10, INCREMENT BY 1 and by -3) and writes two rows; then
the same writes run through deltad by the real clients (a Spark Connect DataFrame append, a
SQL INSERT naming only v, a SQL MERGE inserting, a Delta Connect DeltaTable.merge inserting)
on one copy and by local Spark on another. Spark reads both: deltad's ids are unique, on the
start + k*step lattice, beyond the old high water mark, the same ids Spark handed out, and
each of deltad's commits carries the new delta.identity.highWaterMark in its metaData (the
extreme id, as Spark's). Spark then appends to deltad's table and its ids do not collide.
Explicit ids: refused on both sides for GENERATED ALWAYS
(DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED, nothing written), kept for BY DEFAULT
with the mark left where it was, as Spark does. A race: deltad's append has read the table
when Spark numbers rows and commits; deltad's commit then fails (ABORTED, the concurrent
metaData change) and the table holds Spark's rows only."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "dml"))
import dml_common as c  # noqa: E402
from dml_common import h, q  # noqa: E402
from spark_judge_client import SparkJudge  # noqa: E402
import test_delta_connect_client as dcc  # noqa: E402

KINDS = {"always_up": ("ALWAYS", 1), "always_down": ("ALWAYS", -3),
         "default_up": ("BY DEFAULT", 1), "default_down": ("BY DEFAULT", -3)}
START = 10


def merge_sql(source):
    return ("MERGE INTO delta.`{t}` t USING delta.`%s` s ON t.v = s.v "
            "WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)" % source)


# The writes that leave the id to the table: DataFrame append, INSERT (v), SQL MERGE.
WRITES = [{"kind": "write", "path": "{t}", "mode": "append", "rows": [["c"], ["d"]], "schema": "v STRING"},
          {"kind": "sql", "sql": "INSERT INTO delta.`{t}` (v) VALUES ('e'), ('f'), ('g')"},
          {"kind": "sql", "sql": merge_sql("{src}")}]  # {src}: rows 'h' and 'a' 
DC_MERGE = {"kind": "merge", "path": "{t}", "source_rows": [["i"], ["j"], ["b"]], "source_schema": "v STRING",
            "target_alias": "t", "source_alias": "s", "on": "t.v = s.v",
            "clauses": [{"when": "not_matched", "action": "insert", "set": {"v": "s.v"}}]}


class IdentitySpark(dcc.DeltaConnectClient):
    test_real_client = None  # test_delta_connect_client.py's own test runs there

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.judge = SparkJudge()
        cls.base = os.path.join(cls.tmp, "base")
        os.makedirs(cls.base)
        for name, (gen, step) in KINDS.items():
            c.make_table(cls.judge, os.path.join(cls.base, name),
                         "id BIGINT GENERATED %s AS IDENTITY (START WITH %d INCREMENT BY %d), v STRING"
                         % (gen, START, step), [])
            cls.judge.sql("INSERT INTO %s (v) VALUES ('a'), ('b')" % q(os.path.join(cls.base, name)))
        c.make_table(cls.judge, os.path.join(cls.base, "src"), "v STRING", ["('h'), ('a')"])
        c.make_table(cls.judge, os.path.join(cls.base, "src2"), "v STRING", ["('i'), ('j'), ('b')"])
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        try:
            cls.judge.close()
        finally:
            super().tearDownClass()

    # ---- helpers ----

    def pair(self, name):
        IdentitySpark.n += 1
        return c.copy_pair(os.path.join(self.base, name), self.tmp, "%s-%d" % (name, IdentitySpark.n))

    @staticmethod
    def bind(ops, path):
        return json.loads(json.dumps(ops).replace("{t}", path).replace("{src}", os.path.join(IdentitySpark.base, "src")))

    @staticmethod
    def log(path):
        """The table's commits: per version, its action names and the id column's metadata
        in its metaData (None without one)."""
        out = []
        d = os.path.join(path, "_delta_log")
        for f in sorted(x for x in os.listdir(d) if x.endswith(".json")):
            acts, ident = [], None
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    a = json.loads(line)
                    acts.append(next(iter(a)))
                    if "metaData" in a:
                        fields = json.loads(a["metaData"]["schemaString"])["fields"]
                        ident = [x["metadata"] for x in fields if x["name"] == "id"][0]
            out.append((int(f[:20]), acts, ident))
        return out

    def hwm(self, path):
        marks = [m for _, _, m in self.log(path) if m is not None]
        return marks[-1].get("delta.identity.highWaterMark")

    def ids(self, path):
        return sorted(r["id"] for r in self.judge.read(path))

    def assert_lattice(self, ids, step, beyond, what):
        """ids unique, start + k*step, each beyond `beyond` in the step's direction."""
        self.assertEqual(len(ids), len(set(ids)), what + ": duplicate ids %s" % ids)
        for i in ids:
            self.assertEqual((i - START) % abs(step), 0, what + ": %d off the lattice" % i)
            self.assertTrue(i > beyond if step > 0 else i < beyond, what + ": %d not beyond %d" % (i, beyond))

    # ---- tests ----

    def test_generated_values(self):
        for name, (gen, step) in KINDS.items():
            with self.subTest(name):
                a, b = self.pair(name)
                old = self.hwm(a)
                self.assertEqual(old, START + step)  # Spark's two rows
                before = self.ids(a)
                nlog = len(self.log(a))
                got = c.run_dwrite(self, self.bind(WRITES, a))
                self.assertEqual(got, ["ok"] * len(WRITES), name)
                dc = c.run_client(self, self.bind([DC_MERGE], a))
                self.assertIn("ok", dc[0], "%s: %s" % (name, dc))
                self.assertEqual(c.merge_counts(dc[0]["ok"])[3], 2, name)
                want = self.judge.dfwrite(self.bind(WRITES, b))
                self.assertEqual(want, ["ok"] * len(WRITES), name)
                self.judge.sql(merge_sql(os.path.join(self.base, "src2")).replace("{t}", b))
                ids = self.ids(a)
                new = sorted(set(ids) - set(before))
                self.assertEqual(len(ids), len(before) + 2 + 3 + 1 + 2, name)
                self.assert_lattice(new, step, old, name)
                self.assertEqual(ids, self.ids(b), name + ": Spark handed out other ids")
                # every deltad commit moved the mark in its metaData, to its extreme id
                commits = self.log(a)[nlog:]
                self.assertEqual(len(commits), 4, name)
                for v, acts, m in commits:
                    self.assertIn("metaData", acts, "%s v%d" % (name, v))
                    self.assertEqual(m["delta.identity.start"], START)
                    self.assertEqual(m["delta.identity.step"], step)
                    self.assertEqual(m["delta.identity.allowExplicitInsert"], gen != "ALWAYS")
                extreme = max(new) if step > 0 else min(new)
                self.assertEqual(self.hwm(a), extreme, name)
                self.assertEqual(self.hwm(a), self.hwm(b), name)
                self.assertEqual([r["operation"] for r in self.judge.sql("DESCRIBE HISTORY %s" % q(a))][:4],
                                 ["MERGE", "MERGE", "WRITE", "WRITE"], name)
                # Spark appends after deltad: no collision, above deltad's mark
                self.judge.sql("INSERT INTO %s (v) VALUES ('k'), ('l')" % q(a))
                after = self.ids(a)
                self.assertEqual(len(after), len(set(after)), name)
                self.assert_lattice(sorted(set(after) - set(ids)), step, extreme, name + " (Spark after deltad)")
                peer = c.peer_rows(a)
                self.assertEqual(len(peer["deltalake"]), len(after), name + ": delta-rs")
                self.assertEqual(peer["deltalake"], peer["duckdb"], name + ": delta-rs / DuckDB")

    def test_explicit_always_refused(self):
        for name in ("always_up", "always_down"):
            for op in ({"kind": "write", "path": "{t}", "mode": "append", "rows": [[100, "x"]],
                        "schema": "id BIGINT, v STRING"},
                       {"kind": "sql", "sql": "INSERT INTO delta.`{t}` (id, v) VALUES (100, 'x')"},
                       {"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (100, 'x')"},
                       {"kind": "sql", "sql": "MERGE INTO delta.`{t}` t USING (SELECT 100L AS id, 'x' AS v) s "
                                              "ON t.v = s.v WHEN NOT MATCHED THEN INSERT *"},
                       {"kind": "sql", "sql": "MERGE INTO delta.`{t}` t USING (SELECT 100L AS id, 'x' AS v) s "
                                              "ON t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)"}):
                with self.subTest(name=name, op=op):
                    a, b = self.pair(name)
                    files = c.tree(a)
                    got = c.run_dwrite(self, self.bind([op], a))[0]
                    want = self.judge.dfwrite(self.bind([op], b))[0]
                    self.assertIn("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", want)
                    self.assertIn("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", got)
                    self.assertEqual(c.tree(a), files, "deltad left files behind: %s" % got)

    def test_explicit_by_default_kept(self):
        ops = [{"kind": "write", "path": "{t}", "mode": "append", "rows": [[100, "x"], [-50, "y"]],
                "schema": "id BIGINT, v STRING"},
               {"kind": "sql", "sql": "INSERT INTO delta.`{t}` (id, v) VALUES (1000, 'z')"},
               {"kind": "sql", "sql": "MERGE INTO delta.`{t}` t USING (SELECT 5000L AS id, 'm' AS v) s "
                                      "ON t.v = s.v WHEN NOT MATCHED THEN INSERT *"},
               {"kind": "sql", "sql": "INSERT INTO delta.`{t}` (v) VALUES ('n')"}]
        for name in ("default_up", "default_down"):
            with self.subTest(name):
                a, b = self.pair(name)
                got = c.run_dwrite(self, self.bind(ops, a))
                want = self.judge.dfwrite(self.bind(ops, b))
                self.assertEqual(got, ["ok"] * len(ops), name)
                self.assertEqual(want, ["ok"] * len(ops), name)
                self.assertEqual(self.ids(a), self.ids(b), name)
                self.assertEqual(self.hwm(a), self.hwm(b), name)
                step = KINDS[name][1]
                self.assertEqual(self.hwm(a), START + 2 * step, name)  # explicit ids left it alone
                self.assertIn(5000, self.ids(a))
                marks = [m for _, _, m in self.log(a)]
                self.assertEqual(marks[-4:-1], [None] * 3, name + ": explicit writes changed the metaData")

    def test_merge_insert_star(self):
        """INSERT * from a source without the id column: refused by both without schema
        evolution, numbered by both with it."""
        star = ("MERGE %sINTO delta.`{t}` t USING delta.`{src}` s ON t.v = s.v "
                "WHEN NOT MATCHED THEN INSERT *")
        for name in ("always_up", "default_down"):
            with self.subTest(name):
                a, b = self.pair(name)
                files = c.tree(a)
                op = {"kind": "sql", "sql": star % ""}
                got = c.run_dwrite(self, self.bind([op], a))[0]
                want = self.judge.dfwrite(self.bind([op], b))[0]
                self.assertNotEqual(want, "ok")
                self.assertIn("DELTA_MERGE_UNRESOLVED_EXPRESSION", got)
                self.assertEqual(c.tree(a), files)
                op = {"kind": "sql", "sql": star % "WITH SCHEMA EVOLUTION "}
                self.assertEqual(c.run_dwrite(self, self.bind([op], a)), ["ok"])
                self.assertEqual(self.judge.dfwrite(self.bind([op], b)), ["ok"])
                self.assertEqual(self.ids(a), self.ids(b), name)
                self.assertEqual(self.hwm(a), self.hwm(b), name)
                self.assertEqual(self.hwm(a), START + 2 * KINDS[name][1], name)

    def test_race(self):
        """deltad's append (dml_race) has read the table when another writer numbers rows
        and commits first: Spark, or deltad itself through the Spark Connect client."""
        for name, winner in (("always_up", "spark"), ("default_down", "spark"), ("always_up", "deltad"),
                             ("default_down", "deltad")):
            with self.subTest(name=name, winner=winner):
                a, _ = self.pair(name)
                p = subprocess.Popen([c.RACE, a, "append", "3"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                try:
                    self.assertEqual(p.stdout.readline().strip(), "ready")
                    ins = "INSERT INTO %s (v) VALUES ('s1'), ('s2')" % q(a)
                    if winner == "spark":
                        self.judge.sql(ins)
                    else:
                        self.assertEqual(c.run_dwrite(self, [{"kind": "sql", "sql": ins}]), ["ok"])
                    out, err = p.communicate("go\n", timeout=300)
                finally:
                    if p.poll() is None:
                        p.kill()
                self.assertEqual(p.returncode, 0, err)
                self.assertTrue(out.startswith("error ABORTED"), out)
                self.assertIn("concurrent metadata change", out)
                rows = self.judge.read(a)
                self.assertEqual(sorted(r["v"] for r in rows), ["a", "b", "s1", "s2"], name)
                ids = self.ids(a)
                self.assertEqual(len(ids), len(set(ids)), name)
                self.assertEqual(self.hwm(a), START + 3 * KINDS[name][1], name)
                # no data file of the loser left behind: every parquet file is in the log
                logged = set()
                d = os.path.join(a, "_delta_log")
                for f in os.listdir(d):
                    if f.endswith(".json"):
                        with open(os.path.join(d, f)) as fh:
                            logged |= {json.loads(x)["add"]["path"] for x in fh if '"add"' in x}
                self.assertEqual({f for f in c.tree(a) if f.endswith(".parquet")}, logged, name)


if __name__ == "__main__":
    h.main()
