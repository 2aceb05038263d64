#!/usr/bin/python3
"""test_dwrite_spark.py (integration.dwrite_spark): writes through deltad judged by Spark with
Delta. Each case is a list of ops (peers/dwrite_ops.py: a DataFrame write with its mode,
partitionBy and options, or a SQL statement) run twice with the very same pyspark calls: by
the real Spark Connect client against deltad on one copy, and by local Spark (the judge, one
session for the suite) on another. Then Spark reads both and must see the same rows, the
last commits have the same operation, parameters and metric keys (and the same numbers of
rows), the data files lie in the same partition directories, and delta-rs and DuckDB read
deltad's table. Bad input (a schema mismatch, an overflowing cast, a NOT NULL or CHECK
violation, mode error on an existing table, a write to a missing table) fails on both sides
and leaves deltad's table as it was: no file, no commit."""
import json
import os
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "dml"))
import dml_common as c  # noqa: E402
from dml_merge_cases import mapping_ids  # noqa: E402
from dml_common import h, q  # noqa: E402
from spark_judge_client import SparkJudge  # noqa: E402
import test_delta_connect_client as dcc  # noqa: E402

SCHEMA = "x INT, y STRING, p STRING"
ROWS = [[1, "a", "u"], [2, "b", "u"], [3, None, "v"], [None, "d", None]]
MORE = [[7, "g", "w"], [8, "h", "u"]]


class DwriteSpark(dcc.DeltaConnectClient):
    test_real_client = None  # test_delta_connect_client.py's own test runs there

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.judge = SparkJudge()
        cls.base = os.path.join(cls.tmp, "base")
        os.makedirs(cls.base)
        c.make_table(cls.judge, os.path.join(cls.base, "part"), SCHEMA,
                     ["(1, 'a', 'u'), (2, 'b', 'v')"], "PARTITIONED BY (p)")
        c.make_table(cls.judge, os.path.join(cls.base, "plain"), "x BIGINT, y STRING, d DECIMAL(10,2)",
                     ["(1, 'a', 1.50), (2, NULL, NULL)"])
        c.make_table(cls.judge, os.path.join(cls.base, "chk"), "x INT NOT NULL, y STRING", ["(5, 'a')"])
        cls.judge.sql("ALTER TABLE %s ADD CONSTRAINT pos CHECK (x > 0)" % q(os.path.join(cls.base, "chk")))
        c.make_table(cls.judge, os.path.join(cls.base, "gen"), "x INT, y INT GENERATED ALWAYS AS (x * 2)", [])
        c.make_table(cls.judge, os.path.join(cls.base, "cm"), SCHEMA, ["(1, 'a', 'u')"], "PARTITIONED BY (p)",
                     "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
                     "'delta.minWriterVersion' = '5')")
        c.make_table(cls.judge, os.path.join(cls.base, "src"), SCHEMA,
                     ["(10, 'j', 'u'), (11, 'k', 'v'), (12, 'l', 'w')"])
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        try:
            cls.judge.close()
        finally:
            super().tearDownClass()

    def tearDown(self):
        if self.server.proc.poll() is not None:  # deltad died: show why
            sys.stderr.write("deltad exited %s:\n%s\n" % (self.server.proc.returncode,
                                                          "".join(self.server.stderr_lines[-80:])))

    # ---- helpers ----

    def pair(self, name=None):
        """(deltad's path, Spark's path): copies of base table name, or two new paths."""
        DwriteSpark.n += 1
        tag = "%s-%d" % (name or "new", DwriteSpark.n)
        if name:
            return c.copy_pair(os.path.join(self.base, name), self.tmp, tag)
        return os.path.join(self.tmp, tag + "-dd"), os.path.join(self.tmp, tag + "-spark")

    def client(self, ops):
        return c.run_dwrite(self, ops)

    @staticmethod
    def bind(ops, path):
        """ops with {t} (the table path) and {src} filled in."""
        text = json.dumps(ops).replace("{t}", path).replace("{src}", os.path.join(DwriteSpark.base, "src"))
        return json.loads(text)

    def both(self, ops, name=None):
        """Runs ops on deltad and on Spark; the answers (ok / failed) must agree."""
        a, b = self.pair(name)
        got = self.client(self.bind(ops, a))
        want = self.judge.dfwrite(self.bind(ops, b))
        self.assertEqual([g == "ok" for g in got], [w == "ok" for w in want],
                         "deltad %s\nSpark %s" % (got, want))
        return a, b, got, want

    def history(self, path):
        return self.judge.sql("DESCRIBE HISTORY %s" % q(path))

    @staticmethod
    def layout(path):
        """The partition directories of the active data files."""
        return sorted({os.path.dirname(f) for f in c.tree(path) if f.endswith(".parquet") and
                       not f.startswith("_delta_log")})

    def assert_same(self, a, b, what):
        self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), what)
        ha, hb = self.history(a), self.history(b)
        self.assertEqual([(r["version"], r["operation"]) for r in ha],
                         [(r["version"], r["operation"]) for r in hb], what)
        for ra, rb in zip(ha, hb):
            pa, pb = ra["operationParameters"] or {}, rb["operationParameters"] or {}
            self.assertEqual(sorted(pa), sorted(pb), what + ": parameters of v%s: %s %s" % (ra["version"], pa, pb))
            for k in ("mode", "partitionBy"):
                self.assertEqual(pa.get(k), pb.get(k), what + ": %s of v%s" % (k, ra["version"]))
            ma, mb = ra["operationMetrics"] or {}, rb["operationMetrics"] or {}
            what_m = what + ": metrics of v%s: %s %s" % (ra["version"], ma, mb)
            for k in ("numFiles", "numOutputRows", "numOutputBytes"):
                self.assertEqual(k in ma, k in mb, what_m)
            self.assertEqual(ma.get("numOutputRows"), mb.get("numOutputRows"), what_m)
        self.assertEqual(self.layout(a) != [""], self.layout(b) != [""], what)
        if self.layout(b) != [""]:
            self.assertEqual(self.layout(a), self.layout(b), what)
        peer = c.peer_rows(a)
        self.assertEqual(sorted(json.dumps(r, sort_keys=True) for r in peer["deltalake"]),
                         sorted(json.dumps(r, sort_keys=True) for r in peer["duckdb"]), what)
        self.assertEqual(len(peer["deltalake"]), len(self.judge.read(a)), what)

    def assert_refused(self, ops, name, text):
        """ops[-1] fails on both sides; deltad's table files are as before it."""
        a, b = self.pair(name)
        before_ops = ops[:-1]
        if before_ops:
            self.client(self.bind(before_ops, a))
        files = c.tree(a)
        got = self.client(self.bind(ops[-1:], a))[0]
        want = self.judge.dfwrite(self.bind(ops, b))[-1]
        self.assertNotEqual(got, "ok")
        self.assertNotEqual(want, "ok", "Spark accepted what deltad refused: %s" % got)
        self.assertIn(text, got)
        self.assertEqual(c.tree(a), files, "deltad left files behind: %s" % got)
        return got, want

    # ---- DataFrame writes ----

    def test_modes_on_a_new_path(self):
        w = {"kind": "write", "path": "{t}", "rows": ROWS, "schema": SCHEMA, "partitionBy": ["p"]}
        ops = [dict(w), dict(w, rows=MORE, mode="append"), dict(w, rows=MORE, mode="ignore"),
               dict(w, rows=MORE, mode="overwrite"), dict(w, rows=ROWS, mode="append")]
        a, b, got, _ = self.both(ops)
        self.assertEqual(got, ["ok"] * 5)
        self.assert_same(a, b, "modes")
        self.assertEqual(self.history(a)[-1]["operationParameters"]["mode"], "ErrorIfExists")

    def test_mode_error_on_an_existing_table(self):
        got, _ = self.assert_refused([{"kind": "write", "path": "{t}", "rows": MORE, "schema": SCHEMA}],
                                     "part", "DELTA_PATH_EXISTS")

    def test_unpartitioned_sources(self):
        ops = [{"kind": "write", "path": "{t}", "source_path": "{src}", "filter": "x > 10",
                "select": ["x", "upper(y) AS y", "p"]},
               {"kind": "write", "path": "{t}", "mode": "append", "range": 5,
                "select": ["CAST(id AS INT) AS x", "CAST(id AS STRING) AS y", "'r' AS p"]},
               {"kind": "write", "path": "{t}", "mode": "append", "rows": MORE, "schema": SCHEMA,
                "options": {"dataChange": "false"}}]
        a, b, got, _ = self.both(ops)
        self.assertEqual(got, ["ok"] * 3)
        self.assert_same(a, b, "sources")
        with open(os.path.join(a, "_delta_log", "%020d.json" % 2)) as f:
            adds = [json.loads(line)["add"] for line in f if '"add"' in line]
        self.assertTrue(adds)
        self.assertEqual({x["dataChange"] for x in adds}, {False})

    def test_append_fills_missing_columns(self):
        ops = [{"kind": "write", "path": "{t}", "mode": "append", "rows": [[5, "e"]], "schema": "x BIGINT, y STRING"}]
        a, b, got, _ = self.both(ops, "plain")
        self.assertEqual(got, ["ok"])
        self.assert_same(a, b, "missing columns")

    def test_generated_columns_computed(self):
        """A generated column the data lacks is computed from the row (SQL INSERT naming
        only x, a DataFrame without y); one the data has is kept when it agrees."""
        ops = [{"kind": "sql", "sql": "INSERT INTO delta.`{t}` (x) VALUES (1), (NULL), (5)"},
               {"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (2, 4)"},
               {"kind": "write", "path": "{t}", "mode": "append", "rows": [[6], [7]], "schema": "x INT"}]
        a, b, got, _ = self.both(ops, "gen")
        self.assertEqual(got, ["ok", "ok", "ok"])
        self.assert_same(a, b, "generated columns")

    def test_other_type_refused(self):
        self.assert_refused([{"kind": "write", "path": "{t}", "mode": "append", "rows": [[5, "e"]],
                              "schema": "x INT, y STRING"}], "plain", "DELTA_FAILED_TO_MERGE_FIELDS")

    def test_save_as_table_creates_with_ctas(self):
        ops = [{"kind": "write", "method": "saveAsTable", "table": "delta.`{t}`", "rows": ROWS, "schema": SCHEMA},
               {"kind": "write", "method": "saveAsTable", "table": "delta.`{t}`", "rows": MORE,
                "schema": SCHEMA, "mode": "append"}]
        a, b, got, want = self.both(ops)
        self.assertEqual(got, ["ok", "ok"])
        self.assert_same(a, b, "saveAsTable")

    def test_write_to_v2(self):
        w = {"kind": "writeTo", "table": "delta.`{t}`", "rows": ROWS, "schema": SCHEMA}
        ops = [dict(w, mode="create", partitionedBy=["p"]), dict(w, rows=MORE, mode="append"),
               dict(w, rows=MORE, mode="overwrite"), dict(w, mode="createOrReplace"),
               dict(w, rows=MORE, mode="replace")]
        a, b, got, want = self.both(ops)
        self.assertEqual(got, ["ok"] * 5, want)
        self.assert_same(a, b, "writeTo")
        fresh = "delta.`%s-v2`" % a
        got = self.client([dict(w, table=fresh, mode="create")] * 2 +
                          [dict(w, table="delta.`%s-none`" % a, mode="append")])
        self.assertEqual(got[0], "ok")
        self.assertIn("TABLE_OR_VIEW_ALREADY_EXISTS", got[1])
        self.assertIn("TABLE_OR_VIEW_NOT_FOUND", got[2])

    def test_merge_and_overwrite_schema(self):
        ops = [{"kind": "write", "path": "{t}", "mode": "append", "rows": [[9, "i", "u", 1.5]],
                "schema": "x INT, y STRING, p STRING, z DOUBLE", "options": {"mergeSchema": "true"}},
               {"kind": "write", "path": "{t}", "mode": "overwrite", "rows": [[1, "only"]],
                "schema": "k BIGINT, v STRING", "options": {"overwriteSchema": "true"}}]
        a, b, got, _ = self.both(ops, "part")
        self.assertEqual(got, ["ok", "ok"])
        self.assert_same(a, b, "schema options")
        # under column mapping the new column gets the next id and a physical name, as Spark's
        a, b, got, _ = self.both(ops[:1], "cm")
        self.assertEqual(got, ["ok"])
        self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b))
        self.assertEqual(mapping_ids(a), mapping_ids(b))
        self.assertEqual(self.judge.sql("DESCRIBE %s" % q(a)), self.judge.sql("DESCRIBE %s" % q(b)))

    def test_replace_where_partitions(self):
        ops = [{"kind": "write", "path": "{t}", "mode": "overwrite", "rows": [[5, "e", "u"], [6, "f", "u"]],
                "schema": SCHEMA, "options": {"replaceWhere": "p = 'u'"}}]
        a, b, got, _ = self.both(ops, "part")
        self.assertEqual(got, ["ok"])
        self.assert_same(a, b, "replaceWhere")
        self.assert_refused([{"kind": "write", "path": "{t}", "mode": "overwrite", "rows": [[5, "e", "v"]],
                              "schema": SCHEMA, "options": {"replaceWhere": "p = 'u'"}}],
                            "part", "DELTA_REPLACE_WHERE_MISMATCH")

    def test_schema_mismatch_refused(self):
        got, want = self.assert_refused([{"kind": "write", "path": "{t}", "mode": "append",
                                          "rows": [[9, "i", "u", 1.5]], "schema": "x INT, y STRING, p STRING, z DOUBLE"}],
                                        "part", "A schema mismatch detected when writing to the Delta table")

    def test_partition_mismatch_refused(self):
        self.assert_refused([{"kind": "write", "path": "{t}", "mode": "append", "rows": MORE, "schema": SCHEMA,
                              "partitionBy": ["y"]}], "part", "DELTA_PARTITION_COLUMNS_MISMATCH")

    # ---- SQL ----

    def test_sql_insert_and_ctas(self):
        ops = [{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (3, 'c', 'u'), (4, NULL, 'w')"},
               {"kind": "sql", "sql": "INSERT INTO delta.`{t}` (p, x) VALUES ('v', 30)"},
               {"kind": "sql", "sql": "INSERT INTO delta.`{t}` SELECT x + 1, y, p FROM delta.`{src}` WHERE x > 10"}]
        a, b, got, _ = self.both(ops, "part")
        self.assertEqual(got, ["ok"] * 3)
        self.assert_same(a, b, "INSERT INTO")
        ops = [{"kind": "sql", "sql": "INSERT OVERWRITE delta.`{t}` SELECT * FROM delta.`{src}`"}]
        a, b, got, _ = self.both(ops, "part")
        self.assert_same(a, b, "INSERT OVERWRITE")
        ops = [{"kind": "sql", "sql": "CREATE TABLE delta.`{t}` USING DELTA PARTITIONED BY (p) AS "
                                      "SELECT x, y, p FROM delta.`{src}` WHERE x < 12"},
               {"kind": "sql", "sql": "CREATE OR REPLACE TABLE delta.`{t}` USING DELTA AS "
                                      "SELECT x * 2 AS x2, p FROM delta.`{src}`"}]
        a, b, got, _ = self.both(ops)
        self.assertEqual(got, ["ok", "ok"])
        self.assert_same(a, b, "CTAS")

    def test_sql_bad_input_refused(self):
        self.assert_refused([{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (3000000000, 'c', 'u')"}],
                            "part", "CAST_OVERFLOW")
        self.assert_refused([{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (NULL, 'c')"}],
                            "chk", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED")
        self.assert_refused([{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (-1, 'c')"}],
                            "chk", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES")
        self.assert_refused([{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (1, 'c')"}],
                            "part", "INSERT_COLUMN_ARITY_MISMATCH")
        self.assert_refused([{"kind": "sql", "sql": "CREATE TABLE delta.`{t}` USING DELTA AS SELECT 1 AS x"}],
                            "part", "TABLE_OR_VIEW_ALREADY_EXISTS")
        # a generated column given a value its expression does not give (Delta's check)
        self.assert_refused([{"kind": "sql", "sql": "INSERT INTO delta.`{t}` VALUES (3, 7)"}], "gen",
                            "CHECK constraint Generated Column (y <=> (x * 2))")
        a, _ = self.pair()
        got = self.client([{"kind": "sql", "sql": "INSERT INTO delta.`%s` VALUES (1)" % a}])[0]
        self.assertIn("TABLE_OR_VIEW_NOT_FOUND", got)
        self.assertFalse(os.path.exists(a))


if __name__ == "__main__":
    h.main()
