"""test_connect_query.py: the queries of the Delta Connect client against deltad, judged by
Spark. The real client (pyspark 4.2 Spark Connect + delta-spark 4.4 DeltaTable, over TLS
with a token, peers/spark_query_client.py) runs DataFrame and spark.sql(...) cases on copies
of fixture tables; the Spark judge (spark_judge_client.py: Spark with Delta, local) runs the
same query as SQL on the same copy (read only) or, for statements that change a table, on a
second copy. Rows must match as multisets (in order where the query orders), with the same
column names; show() text is checked against Spark's format. One deltad and one judge for
the class."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from spark_judge_client import SparkJudge  # noqa: E402
from tls_certs import Certs  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "spark_query_client.py")
DAT = os.path.join(h.FIXTURES, "dat", "reader_tests", "generated")
RS = os.path.join(h.FIXTURES, "delta-rs-data")


def q(path):
    return "delta.`%s`" % path


class ConnectQuery(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-cquery-")
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", 4242)
        cls.server_args = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        cls.tables = {}
        for name, src in [("P", os.path.join(DAT, "all_primitive_types", "delta")),
                          ("M", os.path.join(DAT, "multi_partitioned", "delta")),
                          ("N", os.path.join(DAT, "nested_types", "delta")),
                          ("B", os.path.join(DAT, "basic_partitioned", "delta")),
                          ("DV", os.path.join(RS, "table-with-dv-small")),
                          ("S", os.path.join(RS, "simple_table"))]:
            cls.tables[name] = os.path.join(cls.tmp, name)
            shutil.copytree(src, cls.tables[name])
        # data skipping: a copy of B whose letter=b data file is gone; a filter that
        # prunes that partition never opens it, one that does not fails naming it
        cls.tables["BX"] = os.path.join(cls.tmp, "BX")
        shutil.copytree(os.path.join(DAT, "basic_partitioned", "delta"), cls.tables["BX"])
        shutil.rmtree(os.path.join(cls.tables["BX"], "letter=b"))
        # tables the statements change: one copy for deltad, one for the judge
        for side in ("dd", "judge"):
            shutil.copytree(os.path.join(RS, "simple_table"), os.path.join(cls.tmp, "W_" + side))
        super().setUpClass()
        try:
            cls.judge = SparkJudge()
        except Exception:
            super().tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.judge.close()
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, True)

    def client(self, cases, extra_vars=None):
        port = self.server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)
        spec = {"vars": dict(self.tables, **(extra_vars or {})),
                "cases": [{"id": k, "code": v} for k, v in cases]}
        path = os.path.join(self.tmp, "cases.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([os.path.join(VENV, "bin", "python"), CLIENT, url, path],
                           capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "connect_query.%d.json" % os.getpid()), "w") as f:
            json.dump(got, f, indent=1)  # for reading a failure
        return got

    def same(self, got, judge_sql, ordered=False, label=""):
        self.assertIn("rows", got, "%s: %s" % (label, got))
        cols, rows = self.judge.query(judge_sql)
        self.assertEqual(got["columns"], cols, label)
        if ordered:
            self.assertEqual(got["rows"], rows, label)
        else:
            key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
            self.assertEqual(collections.Counter(map(key, got["rows"])), collections.Counter(map(key, rows)), label)

    def test_dataframes(self):
        T = self.tables
        cases = [
            ("toDF_P", "DeltaTable.forPath(spark, P).toDF()", "SELECT * FROM %s" % q(T["P"]), False),
            ("read_M", "spark.read.format('delta').load(M)", "SELECT * FROM %s" % q(T["M"]), False),
            ("read_N", "spark.read.format('delta').load(N)", "SELECT * FROM %s" % q(T["N"]), False),
            ("dv", "spark.read.format('delta').load(DV)", "SELECT * FROM %s" % q(T["DV"]), False),
            ("version", "spark.read.format('delta').option('versionAsOf', 1).load(S)",
             "SELECT * FROM %s VERSION AS OF 1" % q(T["S"]), False),
            ("filter_sort", "DeltaTable.forPath(spark, P).toDF().filter(F.col('int32') > 1)"
             ".select('utf8', 'int64', 'decimal').orderBy(F.col('int64').desc())",
             "SELECT utf8, int64, decimal FROM %s WHERE int32 > 1 ORDER BY int64 DESC" % q(T["P"]), True),
            ("where_str", "spark.read.format('delta').load(B).where(\"letter = 'a' AND number > 1\")",
             "SELECT * FROM %s WHERE letter = 'a' AND number > 1" % q(T["B"]), False),
            ("sort_nulls", "spark.read.format('delta').load(M).orderBy(F.col('letter').asc_nulls_last(), "
             "F.col('number').desc())",
             "SELECT * FROM %s ORDER BY letter ASC NULLS LAST, number DESC" % q(T["M"]), True),
            ("group", "spark.read.format('delta').load(B).groupBy('letter').agg(F.count('*'), F.sum('number'), "
             "F.min('a_float'), F.max('a_float'), F.avg('number'), F.countDistinct('number'))",
             "SELECT letter, count(1), sum(number), min(a_float), max(a_float), avg(number), "
             "count(DISTINCT number) FROM %s GROUP BY letter" % q(T["B"]), False),
            ("agg_all", "spark.read.format('delta').load(P).agg(F.sum('int32').alias('s'), F.min('utf8'), "
             "F.max('date32'), F.sum('decimal'), F.avg('decimal'))",
             "SELECT sum(int32) AS s, min(utf8), max(date32), sum(decimal), avg(decimal) FROM %s" % q(T["P"]), False),
            ("limit_offset", "spark.read.format('delta').load(P).orderBy('int64').offset(1).limit(2)",
             "SELECT * FROM %s ORDER BY int64 LIMIT 2 OFFSET 1" % q(T["P"]), True),
            ("distinct", "spark.read.format('delta').load(B).select('letter').distinct()",
             "SELECT DISTINCT letter FROM %s" % q(T["B"]), False),
            ("dedup_subset", "spark.read.format('delta').load(B).orderBy('number').dropDuplicates(['letter'])"
             ".select('letter')", "SELECT DISTINCT letter FROM %s" % q(T["B"]), False),
            ("with_cols", "spark.read.format('delta').load(B).withColumn('n2', F.col('number') * 2)"
             ".withColumnRenamed('letter', 'l').drop('a_float')",
             "SELECT letter AS l, number, number * 2 AS n2 FROM %s" % q(T["B"]), False),
            ("todf_names", "spark.read.format('delta').load(S).toDF('x')", "SELECT id AS x FROM %s" % q(T["S"]), False),
            ("alias", "spark.read.format('delta').load(S).alias('t').select('id')", "SELECT id FROM %s" % q(T["S"]), False),
            ("range", "spark.range(0, 10, 3).filter('id > 0')", "SELECT id FROM range(0, 10, 3) WHERE id > 0", False),
            ("local", "spark.createDataFrame([(1, 'a'), (2, None), (3, 'c')], ['x', 'y']).filter('x >= 2')",
             "SELECT * FROM VALUES (2, CAST(NULL AS STRING)), (3, 'c') AS t(x, y)", False),
            # a DDL schema string: the client asks AnalyzePlan ddl_parse for its type
            ("local_ddl", "spark.createDataFrame([(1, 'a'), (2, None), (3, 'c')], 'x INT, y STRING')"
             ".filter('x >= 2')", "SELECT * FROM VALUES (2, CAST(NULL AS STRING)), (3, 'c') AS t(x, y)", False),
            ("local_ddl_type", "spark.createDataFrame([1, 2, 3], 'bigint').filter('value > 1')",
             "SELECT CAST(v AS BIGINT) AS value FROM VALUES (2), (3) AS t(v)", False),
            ("sql_select", "spark.sql(\"SELECT letter, number FROM %s WHERE number >= 2 ORDER BY number DESC LIMIT 3\")"
             % q(T["B"]), "SELECT letter, number FROM %s WHERE number >= 2 ORDER BY number DESC LIMIT 3" % q(T["B"]), True),
            ("sql_group", "spark.sql(\"SELECT letter, count(*) AS n, max(number) FROM %s GROUP BY letter ORDER BY n DESC, letter\")"
             % q(T["B"]), "SELECT letter, count(*) AS n, max(number) FROM %s GROUP BY letter ORDER BY n DESC, letter" % q(T["B"]), True),
            ("skip_df", "spark.read.format('delta').load(BX).filter(F.col('letter') == 'a').select('number')",
             "SELECT number FROM %s WHERE letter = 'a'" % q(T["B"]), False),
            ("skip_sql", "spark.sql(\"SELECT letter, number FROM %s WHERE letter IN ('c', 'e') AND number > 0\")" % q(T["BX"]),
             "SELECT letter, number FROM %s WHERE letter IN ('c', 'e') AND number > 0" % q(T["B"]), False),
            ("sql_df", "spark.sql(\"SELECT * FROM %s\").filter('number > 2').select('number')" % q(T["B"]),
             "SELECT number FROM %s WHERE number > 2" % q(T["B"]), False),
        ]
        got = self.client([(c[0], c[1]) for c in cases] + [
            ("count", "spark.read.format('delta').load(P).count()"),
            ("count_filtered", "spark.read.format('delta').load(B).filter('number > 2').count()"),
            ("pandas", "spark.read.format('delta').load(S).orderBy('id').toPandas().to_dict('records')"),
            ("show", "spark.read.format('delta').load(S).orderBy('id')._show_string(20, 20)"),
            ("show_top", "spark.read.format('delta').load(S).orderBy('id')._show_string(2, 20)"),
            ("show_vertical", "spark.read.format('delta').load(S).orderBy('id').limit(1)._show_string(20, 20, True)"),
            ("schema", "spark.read.format('delta').load(P).schema.simpleString()"),
            ("bad_sql", "spark.sql('SELEC 1').collect()"),
            ("bad_column", "spark.read.format('delta').load(S).select('nope').collect()"),
            # a path outside every registered storage location is refused, as for Delta Connect
            ("explain_skip", "spark.read.format('delta').load(BX).filter(F.col('letter') == 'a')._explain_string('simple')"),
            ("no_skip", "spark.read.format('delta').load(BX).filter('number > 0').collect()"),
            ("confined", "spark.read.format('delta').load('/usr/share').collect()"),
            ("confined_sql", "spark.sql('SELECT * FROM delta.`/usr/share`').collect()"),
            ("not_delta_format", "spark.read.format('parquet').load(S).collect()"),
            ("unsupported", "spark.read.format('delta').load(S).tail(1)"),
            ("ddl_bad", "spark.createDataFrame([(1,)], 'x INTEGR').collect()"),
        ])
        for cid, _, judge_sql, ordered in cases:
            with self.subTest(case=cid):
                self.same(got[cid], judge_sql, ordered, cid)
        self.assertEqual(got["count"], {"value": self.judge.sql("SELECT count(*) AS n FROM %s" % q(T["P"]))[0]["n"]})
        self.assertEqual(got["count_filtered"],
                         {"value": self.judge.sql("SELECT count(*) AS n FROM %s WHERE number > 2" % q(T["B"]))[0]["n"]})
        self.assertEqual(got["pandas"], {"value": [{"id": 5}, {"id": 7}, {"id": 9}]})
        self.assertEqual(got["show"]["value"], "+---+\n| id|\n+---+\n|  5|\n|  7|\n|  9|\n+---+\n")
        self.assertEqual(got["show_top"]["value"], "+---+\n| id|\n+---+\n|  5|\n|  7|\n+---+\nonly showing top 2 rows\n")
        self.assertEqual(got["show_vertical"]["value"], "-RECORD 0--\n id  | 5   \n")
        self.assertEqual(got["schema"]["value"], "struct<utf8:string,int64:bigint,int32:int,int16:smallint,int8:tinyint,"
                         "float32:float,float64:double,bool:boolean,binary:binary,decimal:decimal(5,3),date32:date,"
                         "timestamp:timestamp>")
        self.assertIn("PARSE_SYNTAX_ERROR", got["bad_sql"]["error"])
        self.assertIn("nope", got["bad_column"]["error"])
        self.assertIn("letter=b", got["no_skip"]["error"])
        self.assertIn("FAILED_READ_FILE", got["no_skip"]["error"])  # INTERNAL, not a retried UNAVAILABLE
        self.assertIn("(2 of 6 files, 4 skipped)", got["explain_skip"]["value"])
        self.assertIn("PERMISSION_DENIED", got["confined"]["error"])
        self.assertIn("PERMISSION_DENIED", got["confined_sql"]["error"])
        self.assertIn("UNIMPLEMENTED", got["not_delta_format"]["error"])
        self.assertIn("'tail'", got["unsupported"]["error"])
        self.assertIn("INTEGR", got["ddl_bad"]["error"])

    def test_sql_statements(self):
        """DESCRIBE [TABLE], SHOW COLUMNS, HAVING and SELECT without FROM: the same columns and
        rows as Spark with Delta on the same copies."""
        T = self.tables
        cases = [
            ("describe_part", "DESCRIBE TABLE %s" % q(T["B"]), True),
            ("describe_nested", "DESCRIBE %s" % q(T["N"]), True),
            ("describe_prims", "DESC %s" % q(T["P"]), True),
            ("show_columns", "SHOW COLUMNS IN %s" % q(T["M"]), True),
            ("no_from", "SELECT 1 + 1", False),
            ("no_from_items", "SELECT 'a' AS x, 2.5, NULL, upper('b')", False),
            ("having_count", "SELECT letter, count(*) FROM %s GROUP BY letter HAVING count(*) > 1" % q(T["B"]), False),
            ("having_alias", "SELECT letter, sum(number) AS s FROM %s GROUP BY letter HAVING s > 3 AND letter <> 'e'"
             % q(T["B"]), False),
            ("having_hidden", "SELECT letter FROM %s GROUP BY letter HAVING max(a_float) > 2 OR min(number) < 2"
             % q(T["B"]), False),
            ("having_order", "SELECT letter, avg(number) AS a FROM %s GROUP BY letter HAVING count(DISTINCT number) >= 1 "
             "ORDER BY a DESC, letter" % q(T["B"]), True),
        ]
        got = self.client([(k, "spark.sql(%r)" % sql) for k, sql, _ in cases] + [
            ("describe_missing", "spark.sql(%r).collect()" % ("DESCRIBE TABLE %s" % q(os.path.join(self.tmp, "nope")))),
            ("having_ungrouped", "spark.sql(%r).collect()" % (
                "SELECT letter FROM %s GROUP BY letter HAVING number > 1" % q(T["B"]))),
        ])
        for cid, sql, ordered in cases:
            with self.subTest(case=cid):
                self.same(got[cid], sql, ordered, cid)
        self.assertIn("error", got["describe_missing"])
        self.assertIn("number", got["having_ungrouped"]["error"])

    def test_create_table_sql(self):
        """CREATE TABLE through spark.sql on deltad and on the judge (Spark with Delta), on two
        empty paths: Spark reads deltad's table with the same schema, partitioning, properties
        and comments as its own, the commit is a CREATE TABLE; errors commit nothing."""
        dd, jt = os.path.join(self.tmp, "C_dd"), os.path.join(self.tmp, "C_judge")
        create = ("CREATE TABLE %s (id BIGINT NOT NULL COMMENT 'the key', name STRING, price DECIMAL(10,2), "
                  "tags ARRAY<STRING>, attrs MAP<STRING, INT>, pt STRUCT<x: DOUBLE, y: DOUBLE>, day DATE) "
                  "USING DELTA PARTITIONED BY (day) TBLPROPERTIES ('delta.appendOnly' = 'true', 'team' = 'qa') "
                  "COMMENT 'a table'")
        got = self.client([
            ("create", "spark.sql(%r).collect()" % (create % q(dd))),
            ("again", "spark.sql(%r).collect()" % (create % q(dd))),
            ("if_not", "spark.sql(%r).collect()" % (create % q(dd)).replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS")),
            ("bad_type", "spark.sql(%r).collect()" % ("CREATE TABLE %s (a NOPE) USING DELTA" % q(dd + "x"))),
            ("bad_part", "spark.sql(%r).collect()" % ("CREATE TABLE %s (a INT) USING DELTA PARTITIONED BY (b)" % q(dd + "y"))),
            ("not_delta", "spark.sql(%r).collect()" % ("CREATE TABLE %s (a INT) USING parquet" % q(dd + "z"))),
            # a column without a type: a syntax error (the server freed a shared "" before)
            ("no_type", "spark.sql(%r).collect()" % ("CREATE TABLE %s (a) USING DELTA" % q(dd + "w"))),
            ("after_no_type", "spark.sql('SELECT 1 AS one').collect()"),
            ("replace", "spark.sql(%r).collect()" % ("CREATE OR REPLACE TABLE %s (id BIGINT, v STRING) USING DELTA" % q(dd + "r"))),
        ])
        self.judge.sql(create % q(jt))
        self.judge.sql("CREATE OR REPLACE TABLE %s (id BIGINT, v STRING) USING DELTA" % q(jt + "r"))
        self.assertIn("value", got["create"], got["create"])
        self.assertIn("ALREADY_EXISTS", got["again"]["error"])
        self.assertIn("value", got["if_not"], got["if_not"])
        self.assertIn("PARSE_SYNTAX_ERROR", got["no_type"]["error"])
        self.assertIn("value", got["after_no_type"], got["after_no_type"])
        for k in ("bad_type", "bad_part", "not_delta"):
            self.assertIn("error", got[k], k)
        self.assertFalse(os.path.exists(os.path.join(dd + "x", "_delta_log", "%020d.json" % 0)))
        self.assertFalse(os.path.exists(os.path.join(dd + "y", "_delta_log", "%020d.json" % 0)))
        # one commit, CREATE TABLE, still version 0 after the refused second CREATE
        self.assertEqual(sorted(os.listdir(os.path.join(dd, "_delta_log"))), ["00000000000000000000.json"])
        with open(os.path.join(dd, "_delta_log", "00000000000000000000.json")) as f:
            ci = [json.loads(l)["commitInfo"] for l in f if '"commitInfo"' in l][0]
        self.assertEqual(ci["operation"], "CREATE TABLE")
        for a, b in ((dd, jt), (dd + "r", jt + "r")):
            for stmt in ("DESCRIBE TABLE %s", "SHOW TBLPROPERTIES %s", "SELECT * FROM %s"):
                self.assertEqual(self.judge.query(stmt % q(a)), self.judge.query(stmt % q(b)), stmt % a)
        detail = lambda p: {k: v for k, v in self.judge.sql("DESCRIBE DETAIL %s" % q(p))[0].items()  # noqa: E731
                            if k in ("description", "partitionColumns", "minReaderVersion", "minWriterVersion",
                                     "tableFeatures", "properties")}
        self.assertEqual(detail(dd), detail(jt))

    def test_alter_properties_sql(self):
        """ALTER TABLE SET / UNSET TBLPROPERTIES on deltad and on Spark with Delta, each on its own
        copy: the same properties, protocol and features after each statement, and the same
        commits (operation and parameters); refused values commit nothing."""
        dd, jt = os.path.join(self.tmp, "AP_dd"), os.path.join(self.tmp, "AP_judge")
        for d in (dd, jt):
            shutil.copytree(os.path.join(DAT, "basic_append", "delta"), d)
        good = ["ALTER TABLE %s SET TBLPROPERTIES ('team' = 'qa', 'delta.appendOnly' = 'true')",
                "ALTER TABLE %s SET TBLPROPERTIES (delta.logRetentionDuration = 'interval 30 days', "
                "'delta.checkpointInterval' = '20')",
                "ALTER TABLE %s UNSET TBLPROPERTIES ('team')",
                "ALTER TABLE %s UNSET TBLPROPERTIES IF EXISTS ('nothere', 'delta.appendOnly')",
                "ALTER TABLE %s SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"]
        bad = [("bool", "ALTER TABLE %s SET TBLPROPERTIES ('delta.appendOnly' = 'maybe')", "UNSUPPORTED_TABLE_CHANGE"),
               ("unknown", "ALTER TABLE %s SET TBLPROPERTIES ('delta.nope' = '1')", "DELTA_UNKNOWN_CONFIGURATION"),
               ("interval", "ALTER TABLE %s SET TBLPROPERTIES ('delta.logRetentionDuration' = 'forever')",
                "DELTA_INVALID_INTERVAL"),
               ("positive", "ALTER TABLE %s SET TBLPROPERTIES ('delta.checkpointInterval' = '-1')",
                "UNSUPPORTED_TABLE_CHANGE")]
        before = self.judge.sql("DESCRIBE HISTORY %s" % q(dd))[0]["version"]
        got = self.client([("bad_" + k, "spark.sql(%r).collect()" % (sql % q(dd))) for k, sql, _ in bad])
        for k, _, cls in bad:
            self.assertIn(cls, got["bad_" + k].get("error", ""), k)
        self.assertEqual(self.judge.sql("DESCRIBE HISTORY %s" % q(dd))[0]["version"], before)
        got = self.client([("s%d" % i, "spark.sql(%r).collect()" % (sql % q(dd))) for i, sql in enumerate(good)])
        for i, sql in enumerate(good):
            self.assertIn("value", got["s%d" % i], got["s%d" % i])
            self.judge.sql(sql % q(jt))
        self.assertEqual(self.judge.query("SHOW TBLPROPERTIES %s" % q(dd)), self.judge.query("SHOW TBLPROPERTIES %s" % q(jt)))
        detail = lambda p: {k: v for k, v in self.judge.sql("DESCRIBE DETAIL %s" % q(p))[0].items()  # noqa: E731
                            if k in ("properties", "minReaderVersion", "minWriterVersion", "tableFeatures")}
        self.assertEqual(detail(dd), detail(jt))
        hist = lambda p: [(r["version"], r["operation"], r["operationParameters"])  # noqa: E731
                          for r in self.judge.sql("DESCRIBE HISTORY %s" % q(p))]
        self.assertEqual(hist(dd), hist(jt))

    def test_maintenance_sql(self):
        dd, jt = os.path.join(self.tmp, "W_dd"), os.path.join(self.tmp, "W_judge")
        stmts = [
            ("history", "DESCRIBE HISTORY %s", "DESCRIBE HISTORY %s"),
            ("detail", "DESCRIBE DETAIL %s", None),
            ("props", "SHOW TBLPROPERTIES %s", "SHOW TBLPROPERTIES %s"),
            ("restore", "RESTORE TABLE %s TO VERSION AS OF 1", "RESTORE TABLE %s TO VERSION AS OF 1"),
            ("after_restore", "SELECT * FROM %s", "SELECT * FROM %s"),
            ("vacuum_dry", "VACUUM %s DRY RUN", None),
        ]
        got = self.client([(k, "[r.asDict() for r in spark.sql(%r).collect()]" % (s % q(dd))) for k, s, _ in stmts] + [
            ("history_df", "spark.sql(%r).select('version', 'operation')" % ("DESCRIBE HISTORY %s" % q(dd))),
            ("bad", "spark.sql(%r).collect()" % ("VACUUM %s RETAIN" % q(dd))),
            ("short", "spark.sql(%r).collect()" % ("VACUUM %s RETAIN 0 HOURS" % q(dd))),
            ("optimize", "spark.sql(%r).collect()" % ("OPTIMIZE %s" % q(dd))),
        ])
        for k, _, judge in stmts:
            self.assertIn("value", got[k], "%s: %s" % (k, got[k]))
        # DESCRIBE HISTORY before the restore: the same versions and operations as Spark's
        self.assertEqual([(r["version"], r["operation"]) for r in got["history"]["value"]],
                         [(r["version"], r["operation"]) for r in self.judge.sql(stmts[0][2] % q(jt))])
        self.assertEqual(got["detail"]["value"][0]["numFiles"],
                         self.judge.sql("DESCRIBE DETAIL %s" % q(jt))[0]["numFiles"])
        judge_props = {r["key"]: r["value"] for r in self.judge.sql("SHOW TBLPROPERTIES %s" % q(jt))}
        self.assertEqual({r["key"]: r["value"] for r in got["props"]["value"]}, judge_props)
        judge_restore = self.judge.sql("RESTORE TABLE %s TO VERSION AS OF 1" % q(jt))
        self.assertEqual(got["restore"]["value"], judge_restore)
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        self.assertEqual(sorted(map(key, got["after_restore"]["value"])), sorted(map(key, self.judge.sql("SELECT * FROM %s" % q(jt)))))
        self.assertEqual(got["history_df"]["columns"], ["version", "operation"])
        self.assertEqual(got["history_df"]["rows"][0][1], "RESTORE")
        self.assertIsInstance(got["vacuum_dry"]["value"], list)
        self.assertIn("PARSE_SYNTAX_ERROR", got["bad"]["error"])
        # OPTIMIZE runs (store/optimize, through connect_sql's hook) on the copy
        self.assertIn("value", got["optimize"], got["optimize"])
        # below the table's retention, as Spark's retentionDurationCheck refuses it
        self.assertIn("FAILED_PRECONDITION", got["short"]["error"])


if __name__ == "__main__":
    h.main()
