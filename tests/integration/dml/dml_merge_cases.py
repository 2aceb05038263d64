"""dml_merge_cases.py: MERGE tests of integration.dml (a mixin of test_dml.Dml, sharing its
server and Spark). Every merge runs on two copies of a table made by Spark: deltad merges one
(the real Delta Connect client's DeltaTable.merge with a createDataFrame or Delta table
source, spark.sql MERGE through deltad), Spark runs the same MERGE statement on the other.
Then both have the same rows, the same result row and a MERGE commit with the same
parameter and metric keys and counts. Bad input is refused with nothing written."""
import json
import os

import dml_common as c
from dml_common import q
from spark_judge_client import SparkJudgeError

SRC = "x INT, y STRING, p STRING"
CL = lambda w, a, cond=None, st=None: {"when": w, "action": a, "cond": cond, "set": st}  # noqa: E731
MERGES = [
    # upsert, a NULL key (never matches: inserted)
    {"on": "t.x = s.x", "rows": [[1, "A", "u"], [4, "D", "v"], [8, "H", "w"], [None, "N", "u"]],
     "clauses": [CL("matched", "update", None, {"y": "s.y"}), CL("not_matched", "insert_all")]},
    # conditions, every clause kind, clause order
    {"on": "t.x = s.x", "rows": [[1, "del", "u"], [2, "B", "u"], [5, "E", "v"], [11, "K", "w"], [9, "I", None]],
     "clauses": [CL("matched", "delete", "s.y = 'del'"), CL("matched", "update_all", "t.x < 5"),
                 CL("matched", "update", None, {"y": "concat(t.y, '+', s.y)", "x": "t.x * 10"}),
                 CL("not_matched", "insert", "s.x > 10", {"x": "s.x", "y": "'new'"}),
                 CL("not_matched", "insert_all"),
                 CL("nmbs", "delete", "t.x > 5"), CL("nmbs", "update", None, {"y": "'gone'"})]},
    # updates moving rows between partitions, a residual condition
    {"on": "t.x = s.x AND t.p <> s.p", "rows": [[1, "a", "w"], [3, "c", "u"], [4, "d", "v"]],
     "clauses": [CL("matched", "update", None, {"p": "s.p", "y": "upper(t.y)"}), CL("not_matched", "insert_all")]},
    # several source rows on one target row, only an unconditional DELETE: allowed
    {"on": "t.x = s.x", "rows": [[1, "a", "u"], [1, "b", "u"], [7, "x", "w"]],
     "clauses": [CL("matched", "delete")]},
]


def mapping_ids(path):
    """The last metaData's (field path, column mapping id) pairs and maxColumnId."""
    log = os.path.join(path, "_delta_log")
    md = None
    for f in sorted(x for x in os.listdir(log) if x.endswith(".json")):
        with open(os.path.join(log, f)) as fh:
            for line in fh:
                md = json.loads(line).get("metaData", md)

    def walk(t, pre):
        out = []
        for fl in (t.get("fields", []) if isinstance(t, dict) else []):
            out.append((pre + fl["name"], fl.get("metadata", {}).get("delta.columnMapping.id")))
            out += walk(fl["type"], pre + fl["name"] + ".")
        return out
    return walk(json.loads(md["schemaString"]), ""), md["configuration"].get("delta.columnMapping.maxColumnId")


class MergeCases:
    def merge_op(self, path, m, **kw):
        op = {"kind": "merge", "path": path, "source_rows": m["rows"], "source_schema": m.get("schema", SRC),
              "target_alias": m.get("ta", "t"), "source_alias": m.get("sa", "s"), "on": m["on"],
              "clauses": m["clauses"], "evolve": m.get("evolve", False)}
        op.update(kw)
        return op

    def assert_merged(self, a, b, res, want, what, readers):
        self.assertIn("ok", res, "%s: %s" % (what, res))
        self.assertEqual(c.merge_counts(res["ok"]), c.merge_counts(want), what)
        self.assert_same(a, b, what, readers=readers)
        ha, hb = c.last_commit(self.judge, a), c.last_commit(self.judge, b)
        self.assertEqual(ha["operation"], "MERGE", what)
        for k in ("numSourceRows", "numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted",
                  "numTargetRowsMatchedUpdated", "numTargetRowsMatchedDeleted",
                  "numTargetRowsNotMatchedBySourceUpdated", "numTargetRowsNotMatchedBySourceDeleted"):
            self.assertEqual(ha["operationMetrics"][k], hb["operationMetrics"][k], "%s: %s" % (what, k))

    def test_merge_client(self):
        """DeltaTable.merge (createDataFrame source) on plain, partitioned and DV tables."""
        plan = []
        for name in ("plain", "part", "dvm"):
            for i, m in enumerate(MERGES):
                a, b = self.pair(name)
                plan.append((self.merge_op(a, m), b, c.merge_sql(q(b) + " t", dict(self.merge_op(b, m), target_alias="")),
                             "%s #%d" % (name, i)))
        got = self.client([p[0] for p in plan])
        for (op, b, spark, what), res in zip(plan, got):
            want = self.judge.sql(spark)
            self.assert_merged(op["path"], b, res, want, what, readers=not what.startswith("dv"))

    def test_merge_sql_and_table_source(self):
        """spark.sql MERGE through deltad (table and subquery sources, no aliases) and a Delta
        table source read with a filter through the client."""
        src = os.path.join(self.tmp, "merge-src")
        if not os.path.exists(src):
            c.make_table(self.judge, src, "k INT, z STRING, p STRING",
                         ["(1, 'one', 'u'), (4, 'four', 'v'), (20, 'twenty', 'w'), (NULL, 'nul', 'u')"])
        stmts = [
            "MERGE INTO {t} USING %s ON x = k WHEN MATCHED THEN UPDATE SET y = z "
            "WHEN NOT MATCHED THEN INSERT (x, y, p) VALUES (k, z, p)" % q(src),
            "MERGE INTO {t} AS t USING (SELECT k, z FROM %s WHERE k > 1) AS s ON t.x = s.k "
            "WHEN MATCHED AND t.y IS NOT NULL THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.x = 1 "
            "THEN UPDATE SET t.y = 'src-less'" % q(src),
        ]
        ops, plan = [], []
        for i, st in enumerate(stmts):
            a, b = self.pair("part")
            ops.append({"kind": "sql", "sql": st.format(t=q(a))})
            plan.append((a, b, st.format(t=q(b)), "sql #%d" % i))
        a, b = self.pair("plain")
        m = {"on": "t.x = s.k", "schema": None, "rows": None,
             "clauses": [CL("matched", "update", None, {"y": "s.z"}),
                         CL("not_matched", "insert", None, {"x": "s.k", "y": "s.z", "p": "s.p"})]}
        ops.append(self.merge_op(a, m, source_path=src, source_filter="k < 10"))
        plan.append((a, b, c.merge_sql(q(b) + " t", dict(self.merge_op(b, m, source_filter="k < 10"),
                                                          target_alias=""), source=q(src)), "table source"))
        got = self.client(ops)
        for (a, b, spark, what), res in zip(plan, got):
            want = self.judge.sql(spark)
            self.assert_merged(a, b, res, want, what, readers=True)

    def test_merge_bad_input(self):
        """Each refused with a clear error and no new file: missing column, type error,
        duplicate matches, CHECK and NOT NULL violations, append-only."""
        up = [CL("matched", "update", None, {"y": "s.y"})]
        cases = [
            ("plain", {"on": "t.x = s.nope", "rows": [[1, "a", "u"]], "clauses": up}, "UNRESOLVED_COLUMN"),
            ("plain", {"on": "t.x = s.x", "rows": [[1, "a", "u"]],
                       "clauses": [CL("matched", "update", None, {"x": "'abc'"})]}, "CAST_INVALID_INPUT"),
            ("plain", {"on": "t.x = s.x", "rows": [[1, "a", "u"], [1, "b", "u"]], "clauses": up},
             "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"),
            ("plain", {"on": "t.x + 1", "rows": [[1, "a", "u"]], "clauses": up}, "FILTER_NOT_BOOLEAN"),
            ("chk", {"on": "t.x = s.x", "rows": [[5, "a", "u"]], "schema": SRC,
                     "clauses": [CL("matched", "update", None, {"x": "0 - s.x"})]}, "DELTA_VIOLATE_CONSTRAINT"),
            ("chk", {"on": "t.x = s.x", "rows": [[50, "a", "u"]],
                     "clauses": [CL("not_matched", "insert", None, {"y": "s.y"})]},
             "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
            ("ao", {"on": "t.x = s.x", "rows": [[1, "a", "u"]], "clauses": up}, "DELTA_CANNOT_MODIFY_APPEND_ONLY"),
            ("plain", {"on": "t.x = s.x", "rows": [[1, "a", "u", 5]], "schema": SRC + ", z INT", "evolve": True,
                       "clauses": [CL("matched", "update", None, {"z": "s.z + 1"})]}, "from a source column"),
        ]
        ops, befores = [], []
        for name, m, _ in cases:
            a, _b = self.pair(name)
            befores.append((a, c.tree(a)))
            ops.append(self.merge_op(a, m))
        got = self.client(ops)
        for (name, m, text), (a, before), res in zip(cases, befores, got):
            self.assertIn("error", res, "%s: %s" % (m, res))
            self.assertIn(text, res["error"], m)
            self.assertEqual(c.tree(a), before, "%s left files behind" % m)
        # an insert-only MERGE is allowed on an append-only table (as Delta)
        a, b = self.pair("ao")
        m = {"on": "t.x = s.x", "rows": [[1, "a", "u"], [2, "b", "u"]], "clauses": [CL("not_matched", "insert_all")]}
        got = self.client([self.merge_op(a, dict(m, schema="x INT, y STRING"),
                                         source_rows=[[1, "a"], [2, "b"]])])
        want = self.judge.sql(c.merge_sql(q(b) + " t", dict(self.merge_op(b, m, source_rows=[[1, "a"], [2, "b"]],
                                                                          source_schema="x INT, y STRING"),
                                                           target_alias="")))
        self.assert_merged(a, b, got[0], want, "append-only insert", readers=True)

    def test_merge_schema_evolution(self):
        """MERGE WITH SCHEMA EVOLUTION (withSchemaEvolution(), the SQL form and the session's
        autoMerge conf): new source columns added by UPDATE SET * / INSERT * and by
        assignments to new columns, on plain, partitioned, column-mapping and deletion-vector
        tables; same rows, schema, result and metrics as Spark's on a copy."""
        wide = SRC + ", z INT, w STRING"  # (VALUES 1.5 is a decimal in Spark: no doubles)
        stars = [CL("matched", "update_all"), CL("not_matched", "insert_all")]
        cases = [
            ("plain", {"on": "t.x = s.x", "schema": wide, "evolve": True, "clauses": stars,
                       "rows": [[1, "A", "u", 10, "w1"], [4, "D", "v", 40, None], [9, "I", "w", 90, "w9"]]}),
            ("part", {"on": "t.x = s.x", "schema": SRC + ", z INT", "evolve": True,
                      "rows": [[1, "A", "u", 10], [12, "L", "w", 120]],
                      "clauses": [CL("matched", "update", None, {"z": "s.z"}),
                                  CL("not_matched", "insert", None, {"x": "s.x", "z": "s.z", "p": "s.p"})]}),
            ("cm", {"on": "t.x = s.x", "schema": wide, "evolve": True, "clauses": stars,
                    "rows": [[1, "A", "u", 10, "w1"], [13, "M", "v", 130, "w13"]]}),
            ("dvm", {"on": "t.x = s.x", "schema": wide, "evolve": True, "clauses": stars,
                     "rows": [[3, "C", "v", 30, "w3"], [14, "N", "u", 140, None]]}),
            # the target's y is missing from the source: UPDATE keeps it, INSERT leaves it NULL
            ("plain", {"on": "t.x = s.x", "schema": "x INT, q STRING", "evolve": True, "clauses": stars,
                       "rows": [[1, "one"], [15, "fifteen"]]}),
        ]
        ops, plan = [], []
        for i, (name, m) in enumerate(cases):
            a, b = self.pair(name)
            ops.append(self.merge_op(a, m))
            plan.append((a, b, c.merge_sql(q(b) + " t", dict(self.merge_op(b, m), target_alias="")), "evolve #%d" % i))
        src = os.path.join(self.tmp, "merge-src-wide")
        if not os.path.exists(src):
            c.make_table(self.judge, src, "x INT, y STRING, z INT", ["(1, 'A', 10), (16, 'P', 160)"])
        sql = ("MERGE WITH SCHEMA EVOLUTION INTO {t} t USING %s s ON t.x = s.x WHEN MATCHED THEN UPDATE SET * "
               "WHEN NOT MATCHED THEN INSERT *" % q(src))
        a, b = self.pair("part")
        ops.append({"kind": "sql", "sql": sql.format(t=q(a))})
        plan.append((a, b, sql.format(t=q(b)), "evolve sql"))
        # the session's conf instead of withSchemaEvolution()
        m = dict(cases[0][1], evolve=False)
        a, b = self.pair("plain")
        key = "spark.databricks.delta.schema.autoMerge.enabled"
        ops += [{"kind": "conf", "key": key, "value": "true"}, self.merge_op(a, m),
                {"kind": "conf", "key": key, "value": None}]
        plan.append((a, b, c.merge_sql(q(b) + " t", dict(self.merge_op(b, m), target_alias="", evolve=True)),
                     "evolve conf"))
        got = self.client(ops)
        got = got[:-3] + [got[-2]]
        for (a, b, spark, what), res in zip(plan, got):
            want = self.judge.sql(spark)
            self.assert_merged(a, b, res, want, what, readers=False)
            self.assertEqual(self.judge.sql("DESCRIBE %s" % q(a)), self.judge.sql("DESCRIBE %s" % q(b)), what)
            self.assertEqual(mapping_ids(a), mapping_ids(b), what)
            if what in ("evolve #0", "evolve #1"):
                # delta-rs reads both copies alike (DuckDB's read_parquet of single files
                # does not fill the columns older files lack, so it is not asked here)
                self.assertEqual(c.peer_rows(a)["deltalake"], c.peer_rows(b)["deltalake"], what)

    def test_merge_schema_evolution_nested(self):
        """MERGE WITH SCHEMA EVOLUTION adding fields inside an existing struct column and
        inside an array's struct elements (a nested struct among them), by UPDATE SET * /
        INSERT * and by a whole-struct assignment, on plain and column-mapping tables: same
        rows, schema (field order, nullability, mapping ids) as Spark's on a copy."""
        src = os.path.join(self.tmp, "merge-src-nested")
        if not os.path.exists(src):
            c.make_table(self.judge, src, "x INT, s STRUCT<a: INT, b: STRING, c: INT, d: STRUCT<e: INT>>, "
                         "l ARRAY<STRUCT<a: INT, c: STRING>>",
                         ["(1, named_struct('a', 10, 'b', 'ten', 'c', 5, 'd', named_struct('e', 7)), "
                          "array(named_struct('a', 10, 'c', 'c10'))), "
                          "(3, named_struct('a', 30, 'b', 'thirty', 'c', 6, 'd', NULL), NULL)"])
        stmts = [
            ("st", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING %s s ON t.x = s.x WHEN MATCHED THEN UPDATE SET * "
             "WHEN NOT MATCHED THEN INSERT *"),
            ("stcm", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING %s s ON t.x = s.x WHEN MATCHED THEN UPDATE SET * "
             "WHEN NOT MATCHED THEN INSERT *"),
            ("st", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING %s src ON t.x = src.x WHEN MATCHED THEN UPDATE SET "
             "s = src.s, l = src.l WHEN NOT MATCHED THEN INSERT (x, s, l) VALUES (src.x, src.s, src.l)"),
        ]
        ops, plan = [], []
        for i, (name, st) in enumerate(stmts):
            a, b = self.pair(name)
            ops.append({"kind": "sql", "sql": (st % q(src)).format(t=q(a))})
            plan.append((a, b, (st % q(src)).format(t=q(b)), "nested #%d" % i))
        got = self.client(ops)
        for (a, b, spark, what), res in zip(plan, got):
            self.judge.sql(spark)
            self.assertIn("ok", res, "%s: %s" % (what, res))
            self.assert_same(a, b, what, readers=False)
            self.assertEqual(self.judge.sql("DESCRIBE %s" % q(a)), self.judge.sql("DESCRIBE %s" % q(b)), what)
            self.assertEqual(mapping_ids(a), mapping_ids(b), what)
            self.assertEqual(c.peer_rows(a)["deltalake"], c.peer_rows(b)["deltalake"], what)

    def test_merge_struct_by_name(self):
        """A source struct in another field order (a narrower field type among them), with
        fields missing, or NULL, binds to the target's struct by field name as Delta does:
        UPDATE SET * and INSERT *, SET s = src.s, with and without schema evolution (where
        UPDATE SET * keeps the target's value of a missing field and the other assignments
        give NULL); without evolution a missing field is Delta's error and nothing is
        written. Same rows and schema as Spark's MERGE on a copy."""
        srcs = {"reord": ("x INT, s STRUCT<b: STRING, a: SMALLINT>, l ARRAY<STRUCT<a: INT>>",
                          "(1, named_struct('b', 'ONE', 'a', CAST(10 AS SMALLINT)), array(named_struct('a', 5))), "
                          "(2, named_struct('b', 'TWO', 'a', CAST(20 AS SMALLINT)), NULL), (3, NULL, NULL), "
                          "(4, named_struct('b', 'FOUR', 'a', NULL), array())"),
                "narrow": ("x INT, s STRUCT<a: INT>, l ARRAY<STRUCT<a: INT>>",
                           "(1, named_struct('a', 11), NULL), (5, named_struct('a', 55), NULL)")}
        for name, (cols, vals) in srcs.items():
            path = os.path.join(self.tmp, "merge-src-" + name)
            if not os.path.exists(path):
                c.make_table(self.judge, path, cols, [vals])
        star = ("MERGE {ev}INTO {t} t USING {s} src ON t.x = src.x WHEN MATCHED THEN UPDATE SET * "
                "WHEN NOT MATCHED THEN INSERT *")
        assign = ("MERGE {ev}INTO {t} t USING {s} src ON t.x = src.x WHEN MATCHED THEN UPDATE SET s = src.s "
                  "WHEN NOT MATCHED THEN INSERT (x, s) VALUES (src.x, src.s)")
        ev = "WITH SCHEMA EVOLUTION "
        good = [("st", star, "", "reord"), ("stcm", star, "", "reord"), ("st", assign, "", "reord"),
                ("st", star, ev, "narrow"), ("stcm", star, ev, "narrow"), ("st", assign, ev, "narrow")]
        ops, plan = [], []
        for i, (name, st, e, src) in enumerate(good):
            a, b = self.pair(name)
            s = q(os.path.join(self.tmp, "merge-src-" + src))
            ops.append({"kind": "sql", "sql": st.format(ev=e, t=q(a), s=s)})
            plan.append((a, b, st.format(ev=e, t=q(b), s=s), "struct #%d" % i))
        bad = []
        for st in (star, assign):
            a, b = self.pair("st")
            s = q(os.path.join(self.tmp, "merge-src-narrow"))
            bad.append((a, c.tree(a), st.format(ev="", t=q(b), s=s)))
            ops.append({"kind": "sql", "sql": st.format(ev="", t=q(a), s=s)})
        got = self.client(ops)
        for (a, b, spark, what), res in zip(plan, got):
            self.assertIn("ok", res, "%s: %s" % (what, res))
            self.judge.sql(spark)
            self.assert_same(a, b, what, readers=False)
            self.assertEqual(self.judge.sql("DESCRIBE %s" % q(a)), self.judge.sql("DESCRIBE %s" % q(b)), what)
            self.assertEqual(c.peer_rows(a)["deltalake"], c.peer_rows(b)["deltalake"], what)
        for (a, before, spark), res in zip(bad, got[len(plan):]):
            with self.assertRaises(SparkJudgeError) as e:
                self.judge.sql(spark)
            self.assertIn("DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION", str(e.exception))
            self.assertIn("error", res, spark)
            self.assertIn("[DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION] Cannot cast struct<a:int> to "
                          "struct<a:int,b:string>", res["error"])
            self.assertEqual(c.tree(a), before, "%s left files behind" % spark)

    def test_merge_deltactl(self):
        """deltactl table merge with a Parquet file source (--local and over
        DeltaConnectService) and a Delta table source, vs Spark's MERGE USING parquet.`dir`."""
        d = os.path.join(self.tmp, "merge-pq")
        if not os.path.exists(d):
            self.judge.sql("INSERT OVERWRITE DIRECTORY '%s' USING parquet SELECT /*+ REPARTITION(1) */ * FROM "
                           "VALUES (1, 'P1', 'u'), (5, 'P5', 'w'), (30, 'P30', 'v') AS v(x, y, p)" % d)
        pq = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".parquet")][0]
        args = ["--on", "t.x = s.x", "--when-matched-update", "y = concat(t.y, s.y), p = s.p",
                "--and", "s.x < 5", "--when-matched-delete", "--when-not-matched-insert-all",
                "--when-not-matched-by-source-update", "y = 'nbs'", "--and", "t.x = 2"]
        spark = ("MERGE INTO {t} t USING parquet.`%s` s ON t.x = s.x WHEN MATCHED AND s.x < 5 THEN "
                 "UPDATE SET y = concat(t.y, s.y), p = s.p WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN "
                 "INSERT * WHEN NOT MATCHED BY SOURCE AND t.x = 2 THEN UPDATE SET y = 'nbs'" % d)
        for name, srv in (("part", None), ("plain", self.server)):
            a, b = self.pair(name)
            res = c.deltactl(["merge", a, "--source", pq] + args, server=srv, tls_ca=self.certs.ca_cert)
            want = self.judge.sql(spark.format(t=q(b)))
            got = [{"num_affected_rows": r["numAffectedRows"], "num_updated_rows": r["numUpdatedRows"],
                    "num_deleted_rows": r["numDeletedRows"], "num_inserted_rows": r["numInsertedRows"]} for r in res]
            self.assert_merged(a, b, {"ok": got}, want, "deltactl %s" % name, readers=True)
        # relative paths of the table and the source file (once a silent no-op, exit 0)
        a, b = self.pair("part")
        res = c.deltactl(["merge", os.path.basename(a), "--source", os.path.relpath(pq, os.path.dirname(a))] + args,
                         cwd=os.path.dirname(a))
        want = self.judge.sql(spark.format(t=q(b)))
        self.assertEqual(int(res[0]["numAffectedRows"]), int(want[0]["num_affected_rows"]), "relative paths")
        self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), "relative paths")
        # a Delta table source over the server
        a, b = self.pair("plain")
        src, _ = self.pair("part")
        res = c.deltactl(["merge", a, "--source", src, "--on", "t.x = s.x", "--when-matched-update-all"],
                         server=self.server, tls_ca=self.certs.ca_cert)
        self.assertEqual([int(res[0]["numUpdatedRows"])], [6])
        self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b))
        # CSV and JSON-lines sources (typed by --source-schema, or as Spark infers them),
        # --local and over the server, against Spark's MERGE from a temporary view of the file
        csvf, jsonf = os.path.join(self.tmp, "merge-src.csv"), os.path.join(self.tmp, "merge-src.json")
        with open(csvf, "w") as f:
            f.write('x,y,p\r\n1,"C,1\ntwo lines",u\r\n40,,w\r\n"41","",v\r\n')
        with open(jsonf, "w") as f:
            f.write('{"x": 2, "y": "J2", "p": "u"}\n\n{"x": 42, "p": "w", "y": null}\n{"p": "v", "x": 3}\n')
        view = "CREATE OR REPLACE TEMPORARY VIEW msrc %s USING %s OPTIONS (path '%s'%s)"
        # (a quoted line break is data, as Spark reads CSV with multiLine)
        csvo = ", header 'true', multiLine 'true'"
        texts = [(csvf, "x INT, y STRING, p STRING", view % ("(x INT, y STRING, p STRING)", "csv", csvf, csvo)),
                 (csvf, None, view % ("", "csv", csvf, csvo)),
                 (jsonf, None, view % ("", "json", jsonf, ""))]
        spark = ("MERGE INTO {t} t USING msrc s ON t.x = s.x WHEN MATCHED THEN UPDATE SET * "
                 "WHEN NOT MATCHED THEN INSERT *")
        for i, (f, schema, mk) in enumerate(texts):
            a, b = self.pair("part")
            args = ["merge", a, "--source", f, "--on", "t.x = s.x", "--when-matched-update-all",
                    "--when-not-matched-insert-all"] + (["--source-schema", schema] if schema else [])
            res = c.deltactl(args, server=self.server if i % 2 else None, tls_ca=self.certs.ca_cert)
            self.judge.sql(mk)
            want = self.judge.sql(spark.format(t=q(b)))
            self.assertEqual(int(res[0]["numAffectedRows"]), int(want[0]["num_affected_rows"]), f)
            self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), "%s %s" % (f, schema))
        bad = os.path.join(self.tmp, "merge-bad.csv")
        with open(bad, "w") as f:
            f.write('x,y,p\n1,a\n')
        a, _b = self.pair("plain")
        before = c.tree(a)
        err = c.deltactl(["merge", a, "--source", bad, "--on", "t.x = s.x", "--when-matched-update-all"], expect=1)
        self.assertIn("line 2: 2 fields, the header has 3", err)
        self.assertEqual(c.tree(a), before)
        # --schema-evolution: a Parquet source with a column the table lacks (--local and
        # over DeltaConnectService) against Spark's MERGE WITH SCHEMA EVOLUTION
        d2 = os.path.join(self.tmp, "merge-pq-wide")
        if not os.path.exists(d2):
            self.judge.sql("INSERT OVERWRITE DIRECTORY '%s' USING parquet SELECT /*+ REPARTITION(1) */ * FROM "
                           "VALUES (1, 'P1', 'u', 10L), (31, 'P31', 'v', 310L) AS v(x, y, p, z)" % d2)
        pq2 = [os.path.join(d2, f) for f in os.listdir(d2) if f.endswith(".parquet")][0]
        spark = ("MERGE WITH SCHEMA EVOLUTION INTO {t} t USING parquet.`%s` s ON t.x = s.x WHEN MATCHED THEN "
                 "UPDATE SET * WHEN NOT MATCHED THEN INSERT *" % d2)
        for srv in (None, self.server):
            a, b = self.pair("plain")
            c.deltactl(["merge", a, "--source", pq2, "--on", "t.x = s.x", "--when-matched-update-all",
                        "--when-not-matched-insert-all", "--schema-evolution"], server=srv, tls_ca=self.certs.ca_cert)
            self.judge.sql(spark.format(t=q(b)))
            self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), "deltactl --schema-evolution")
            self.assertEqual(self.judge.sql("DESCRIBE %s" % q(a)), self.judge.sql("DESCRIBE %s" % q(b)))
