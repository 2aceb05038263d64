"""dml_column_cases.py: tests of integration.dml (a mixin of test_dml.Dml, sharing its
server and Spark) on columns that are more than values: fields inside struct columns
assigned by UPDATE and MERGE, generated columns computed and checked, identity columns
kept. Each statement runs through deltad on one copy of a table and through Spark on
another; then both have the same rows and result, or both refuse it and deltad writes
nothing."""
import json
import os
import shutil

import dml_common as c
from dml_common import h, q
from spark_judge_client import SparkJudgeError


class ColumnCases:
    def assert_plan(self, plan, got, deltalake=False):
        """Each (deltad's copy, Spark's copy, Spark's statement) of plan against deltad's
        result in got: Spark runs the statement, then the same result and rows."""
        for (a, b, spark), res in zip(plan, got):
            self.assertIn("ok", res, "%s: %s" % (spark, res))
            want = self.judge.sql(spark)
            self.assertEqual(c.affected(res["ok"]), c.affected(want), spark)
            self.assert_same(a, b, spark, readers=False)
            if deltalake:
                self.assertEqual(c.peer_rows(a)["deltalake"], c.peer_rows(b)["deltalake"], spark)

    def test_generated_columns(self):
        """Generated columns computed as Delta does: UPDATE and MERGE compute a generated
        column they do not assign from the row's new values, keep one they assign, and
        refuse a row that breaks "Generated Column (g <=> (expr))"; identity columns keep
        their values (assigning one is Delta's error) and a MERGE's inserted rows get the ids
        Spark gives them (integration.identity tests more). Same rows as Spark on a copy.
        DAT's generated_columns (creation = CAST(now() AS DATE), written on another day):
        an UPDATE fails the check, as Spark's does; DELETE copies rows as they are."""
        cols = "x INT, y INT GENERATED ALWAYS AS (x * 2), ts TIMESTAMP, d DATE GENERATED ALWAYS AS (CAST(ts AS DATE))"
        bases = {}
        for name, extra in (("gen", ""), ("ident", ", id BIGINT GENERATED ALWAYS AS IDENTITY")):
            bases[name] = os.path.join(self.tmp, "base-" + name)
            if not os.path.exists(bases[name]):
                self.judge.sql("CREATE TABLE %s (%s%s) USING delta" % (q(bases[name]), cols, extra))
                self.judge.sql("INSERT INTO %s (x, ts) VALUES (1, TIMESTAMP'2024-01-01 10:00:00'), (2, NULL), "
                               "(3, TIMESTAMP'1999-12-31 23:30:00')" % q(bases[name]))
        src = os.path.join(self.tmp, "gen-src")
        if not os.path.exists(src):
            c.make_table(self.judge, src, "x INT, v INT", ["(2, 20), (9, 90)"])
        src2 = os.path.join(self.tmp, "gen-src2")
        if not os.path.exists(src2):
            c.make_table(self.judge, src2, "x INT, y INT, ts TIMESTAMP, d DATE",
                         ["(3, 6, TIMESTAMP'2023-03-03 03:00:00', DATE'2023-03-03'), (8, 16, NULL, NULL), "
                          "(7, 14, TIMESTAMP'2007-07-07 07:00:00', DATE'2007-07-07')"])
        merge = ("MERGE INTO {t} t USING %s s ON t.x = s.x WHEN MATCHED THEN UPDATE SET x = s.v, ts = "
                 "TIMESTAMP'2021-06-01 00:00:00'" % q(src))
        good = [("gen", "UPDATE {t} SET x = 5, ts = TIMESTAMP'2025-05-05 01:00:00' WHERE x = 1"),
                ("gen", "UPDATE {t} SET y = x * 2, x = x"),
                ("gen", merge + " WHEN NOT MATCHED THEN INSERT (x, ts) VALUES (s.x, TIMESTAMP'2020-02-02 02:00:00')"),
                ("gen", "MERGE INTO {t} t USING %s s ON t.x = s.x WHEN MATCHED THEN UPDATE SET * "
                        "WHEN NOT MATCHED THEN INSERT *" % q(src2)),
                ("ident", "UPDATE {t} SET x = x + 10 WHERE x >= 2"),
                ("ident", merge),
                ("ident", merge + " WHEN NOT MATCHED THEN INSERT (x) VALUES (s.x)")]
        bad = [("gen", "UPDATE {t} SET y = 3", "CHECK constraint Generated Column (y <=> (x * 2))", True),
               ("ident", "UPDATE {t} SET id = 7", "DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED", True)]
        ops, plan, befores = [], [], []
        for i, (name, st) in enumerate(good):
            a, b = c.copy_pair(bases[name], self.tmp, "gen%d" % i)
            ops.append({"kind": "sql", "sql": st.format(t=q(a))})
            plan.append((a, b, st.format(t=q(b))))
        for i, (name, st, _, _) in enumerate(bad):
            a, b = c.copy_pair(bases[name], self.tmp, "genbad%d" % i)
            befores.append((a, b, c.tree(a)))
            ops.append({"kind": "sql", "sql": st.format(t=q(a))})
        got = self.client(ops)
        self.assert_plan(plan, got)
        for (name, st, text, spark_fails), (a, b, before), res in zip(bad, befores, got[len(plan):]):
            self.assertIn("error", res, st)
            self.assertIn(text, res["error"], st)
            self.assertEqual(c.tree(a), before, st)
            if spark_fails:
                with self.assertRaises(SparkJudgeError) as e:
                    self.judge.sql(st.format(t=q(b)))
                self.assertIn(text.split(" (")[0], str(e.exception), st)
        fix = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
        dat = os.path.join(fix, "dat", "reader_tests", "generated", "generated_columns", "delta")
        a, b = os.path.join(self.tmp, "gen-a"), os.path.join(self.tmp, "gen-b")
        shutil.copytree(dat, a)
        shutil.copytree(dat, b)
        err = c.deltactl(["update", a, "--set", "creation=date'2000-01-01'", "--where", "int = 25"], expect=1)
        self.assertIn("CHECK constraint Generated Column (creation <=> (CAST(now() AS DATE)))", err)
        # (Spark checks the generation expression on rows it copies too, and this one is
        # CAST(now() AS DATE): its DELETE fails here, so Spark judges the rows instead)
        before = c.spark_rows(self.judge, b)
        self.assertEqual(c.affected(c.deltactl(["delete", a, "--where", "int = 25"])), [1])
        self.assertEqual(c.spark_rows(self.judge, a), [r for r in before if json.loads(r)["int"] != 25])
        self.assertEqual(len(c.spark_rows(self.judge, a)), len(before) - 1)

    def test_nested_fields(self):
        """Assignments to fields inside struct columns (UPDATE SET s.a = ..., s.n.c = ...,
        MERGE ... UPDATE SET t.s.b = ...) through the client and SQL, vs Spark on a copy:
        the struct is rebuilt with the other fields kept, made where it was NULL, and left
        alone in rows the condition does not match. A missing field and conflicting SETs
        are refused as Delta refuses them, nothing written."""
        stmts = [
            "UPDATE {t} SET s.a = 99, s.n.c = 7 WHERE x IN (1, 2)",
            "UPDATE {t} SET s.n = named_struct('c', 10, 'd', 20), s.b = upper(s.b) WHERE x >= 2",
            "UPDATE {t} SET s.b = concat(s.b, '!')",
            # a whole struct under a condition (once refused: `if` of structs)
            "UPDATE {t} SET s = named_struct('a', 0, 'b', 'z', 'n', NULL) WHERE x = 3",
            "MERGE INTO {t} t USING {src} src "
            "ON t.x = src.x WHEN MATCHED AND src.x = 1 THEN UPDATE SET t.s.b = 'merged', s.n.d = src.v "
            "WHEN MATCHED THEN UPDATE SET s.n.c = src.v WHEN NOT MATCHED THEN INSERT (x) VALUES (src.x)",
        ]
        src = os.path.join(self.tmp, "nested-src")
        if not os.path.exists(src):
            c.make_table(self.judge, src, "x INT, v INT", ["(1, 500), (2, 600), (9, 900)"])
        ops, plan = [], []
        for st in stmts:
            a, b = self.pair("st2")
            ops.append({"kind": "sql", "sql": st.format(t=q(a), src=q(src))})
            plan.append((a, b, st.format(t=q(b), src=q(src))))
        a, b = self.pair("st2")
        ops.append({"kind": "update", "path": a, "cond": "x <> 1", "set": {"s.n.d": "x * 100"}})
        plan.append((a, b, "UPDATE {t} SET s.n.d = x * 100 WHERE x <> 1".format(t=q(b))))
        bad = [("UPDATE {t} SET s.zz = 5", "FIELD_NOT_FOUND"),
               ("UPDATE {t} SET s.a = 5, s = NULL", "DELTA_CONFLICT_SET_COLUMN"),
               ("UPDATE {t} SET s.n.c = 1, s.n = NULL", "DELTA_CONFLICT_SET_COLUMN")]
        befores = []
        for st, _ in bad:
            a, b = self.pair("st2")
            befores.append((a, c.tree(a)))
            ops.append({"kind": "sql", "sql": st.format(t=q(a))})
        got = self.client(ops)
        self.assert_plan(plan, got, deltalake=True)
        for (st, text), (a, before), res in zip(bad, befores, got[len(plan):]):
            with self.assertRaises(SparkJudgeError) as e:
                self.judge.sql(st.format(t=q(os.path.join(self.base, "st2"))))
            self.assertIn(text, str(e.exception), st)
            self.assertIn("error", res, st)
            self.assertIn(text, res["error"], st)
            self.assertEqual(c.tree(a), before, st)
