#!/usr/bin/python3
"""test_cluster.py: liquid clustering. Spark with Delta (the judge) makes a clustered table
(CREATE TABLE ... CLUSTER BY (a, b)) of many small files; deltad's OPTIMIZE (deltactl
--local, the SQL statement and the Delta Connect client's optimize().executeCompaction()
over deltad's Spark Connect service) clusters one copy and Spark's OPTIMIZE another:
 - the rows are the same multiset (Spark, delta-rs and DuckDB read deltad's result);
 - Spark's DESCRIBE HISTORY shows deltad's commit with clusterBy, zOrderBy, auto, isFull;
 - the new adds carry clusteringProvider "liquid" and the ZCube tags, and Spark treats them
   as its own: its OPTIMIZE after deltad's finds nothing to do; it appends after deltad;
 - the files are clustered: the share of output file pairs whose (a, b) boxes of min/max
   overlap is far below the input's, and about Spark's own;
 - incremental as Delta: a second OPTIMIZE does nothing, new files bring the small ZCube
   along; after ALTER TABLE CLUSTER BY (b) a plain OPTIMIZE leaves files clustered by the
   old columns and FULL reclusters them (file counts compared with Spark's on a twin);
 - ZORDER BY, WHERE and FULL on a table without clustering columns fail as Spark's do;
 - ALTER TABLE CLUSTER BY / NONE and CREATE TABLE ... CLUSTER BY run through deltad and
   Spark's DESCRIBE DETAIL shows the clusteringColumns; clustering columns keep their stats
   in deltad's writes whatever the table's stats columns.
One deltad (TLS, for the Spark Connect client) and one judge for the class."""
import glob
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from spark_judge_client import SparkJudge, SparkJudgeError  # noqa: E402
from tls_certs import Certs  # noqa: E402
import test_connect_query as cq  # noqa: E402 (its Spark Connect client runner)
from test_optimize import peer  # noqa: E402 (deltalake / DuckDB reads)

DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))
APPENDS = 12


def q(path):
    return "delta.`%s`" % path


def overlap(boxes):
    """The share of file pairs whose (a, b) boxes intersect."""
    pairs = list(itertools.combinations(boxes, 2))
    if not pairs:
        return 0.0
    hit = sum(1 for x, y in pairs
              if x[0] <= y[1] and y[0] <= x[1] and x[2] <= y[3] and y[2] <= x[3])
    return hit / len(pairs)


class Cluster(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-cluster-")
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", 4242)
        cls.server_args = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        super().setUpClass()
        try:
            cls.judge = SparkJudge()
            cls.base = os.path.join(cls.tmp, "base")
            cls.judge.sql("CREATE TABLE %s (a INT, b INT, s STRING, d DOUBLE) USING DELTA "
                          "CLUSTER BY (a, b)" % q(cls.base))
            for i in range(APPENDS):  # one small file each, a and b spread over the square
                cls.judge.sql("INSERT INTO %s SELECT /*+ REPARTITION(1) */ CAST(rand(%d) * 10000 AS INT), "
                              "CAST(rand(%d) * 10000 AS INT), CONCAT('r', CAST(id AS STRING)), "
                              "rand(%d) FROM range(1500)" % (q(cls.base), i, 100 + i, 200 + i))
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

    # ---- helpers ----

    def copy(self, name):
        dst = os.path.join(self.tmp, name)
        shutil.copytree(self.base, dst)
        return dst

    def optimize(self, path, *args, expect=0, server=False):
        """deltactl table optimize, in-process (--local) or over the server (TLS)."""
        where = (["--server", self.server.grpc_target, "--token", self.server.token,
                  "--tls-ca-file", self.certs.ca_cert] if server else [])
        cmd = ([DELTACTL] + where + ["--output", "jsonl", "table", "optimize", path]
               + ([] if server else ["--local"]) + list(args))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, expect, p.stderr)
        if expect:
            return p.stderr
        m = json.loads(p.stdout.splitlines()[0])["metrics"]
        return json.loads(m) if isinstance(m, str) else m

    tables = {}  # test_connect_query's client: the cases' variables come as extra_vars
    client = cq.ConnectQuery.client

    def rows(self, path, version=None):
        return sorted(json.dumps(r, sort_keys=True) for r in self.judge.read(path, version=version))

    def history(self, path):
        return self.judge.sql("DESCRIBE HISTORY %s LIMIT 1" % q(path))[0]

    def version(self, path):
        return self.history(path)["version"]

    def boxes(self, path):
        return [(r["a0"], r["a1"], r["b0"], r["b1"]) for r in self.judge.sql(
            "SELECT _metadata.file_path AS f, min(a) AS a0, max(a) AS a1, min(b) AS b0, "
            "max(b) AS b1 FROM %s GROUP BY 1" % q(path))]

    def adds(self, path, version):
        with open(os.path.join(path, "_delta_log", "%020d.json" % version)) as f:
            acts = [json.loads(line) for line in f if line.strip()]
        return [a["add"] for a in acts if "add" in a]

    def detail_columns(self, path):
        return self.judge.sql("DESCRIBE DETAIL %s" % q(path))[0]["clusteringColumns"]

    def spark_optimize(self, path, tail=""):
        return self.judge.sql("OPTIMIZE %s%s" % (q(path), tail))[0]["metrics"]

    # ---- tests ----

    def test_optimize_clusters(self):
        dd, sp = self.copy("dd"), self.copy("sp")
        v0 = self.version(dd)
        size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(dd, "*.parquet")))
        target = size // 6
        m = self.optimize(dd, "--target-size", str(target))
        self.assertEqual(m["numFilesRemoved"], APPENDS)
        self.assertGreaterEqual(m["numFilesAdded"], 5)
        self.assertEqual(self.rows(dd), self.rows(self.base))
        hist = self.history(dd)
        self.assertEqual((hist["operation"], hist["version"]), ("OPTIMIZE", v0 + 1))
        params = hist["operationParameters"]
        self.assertEqual(params["clusterBy"], '["a","b"]')
        self.assertEqual((params["zOrderBy"], params["predicate"], params["auto"], params["isFull"]),
                         ("[]", "[]", "false", "false"))
        adds = self.adds(dd, v0 + 1)
        self.assertEqual(len(adds), m["numFilesAdded"])
        self.assertEqual({a["clusteringProvider"] for a in adds}, {"liquid"})
        self.assertEqual({a["tags"]["ZCUBE_ZORDER_BY"] for a in adds}, {'["a","b"]'})
        self.assertEqual(len({a["tags"]["ZCUBE_ID"] for a in adds}), 1)  # one ZCube
        for a in adds:  # clustering columns must have stats
            st = json.loads(a["stats"])
            self.assertIn("a", st["minValues"])
            self.assertIn("b", st["maxValues"])
        # clustered: output boxes overlap far less than the input's, about as Spark's do
        before, after = overlap(self.boxes(self.base)), overlap(self.boxes(dd))
        self.judge.sql("SET spark.databricks.delta.optimize.maxFileSize = %d" % target)
        try:
            sm = self.spark_optimize(sp)
        finally:
            self.judge.sql("RESET spark.databricks.delta.optimize.maxFileSize")
        spark_after = overlap(self.boxes(sp))
        print("overlap of (a, b) boxes: input %.3f, deltad %.3f (%d files), Spark %.3f (%d files)"
              % (before, after, m["numFilesAdded"], spark_after, sm["numFilesAdded"]), file=sys.stderr)
        self.assertGreater(before, 0.9)
        self.assertLess(after, 0.45)
        self.assertLess(after, spark_after + 0.2)
        self.assertEqual(self.rows(sp), self.rows(dd))
        self.assertEqual(m["clusteringStats"], sm["clusteringStats"])
        self.assertEqual(m["clusteringStats"]["numOutputZCubes"], 1)
        # delta-rs and DuckDB read deltad's result as they read the input
        got, want = peer({"op": "rows", "path": dd}), peer({"op": "rows", "path": dd, "version": v0})
        self.assertEqual(got["deltalake"], want["deltalake"])
        self.assertEqual(got["duckdb"], want["deltalake"])
        self.assertEqual(got["files"], m["numFilesAdded"])
        # incremental: nothing new, nothing to do (deltad's and Spark's OPTIMIZE alike)
        m2 = self.optimize(dd, "--target-size", str(target))
        self.assertEqual((m2["numFilesRemoved"], m2["numFilesAdded"]), (0, 0))
        self.assertEqual(self.version(dd), v0 + 1)
        sm2 = self.spark_optimize(dd)
        self.assertEqual(sm2["numFilesRemoved"], 0)
        self.assertEqual(m2["clusteringStats"], sm2["clusteringStats"])  # one ZCube, kept
        # Spark appends after deltad; the new file brings the small ZCube along
        self.judge.sql("INSERT INTO %s VALUES (1, 2, 'new', 0.5)" % q(dd))
        m3 = self.optimize(dd, "--target-size", str(target))
        self.assertEqual(m3["numFilesRemoved"], m["numFilesAdded"] + 1)
        self.assertEqual(len(self.judge.read(dd, where="s = 'new'")), 1)
        self.assertEqual(self.spark_optimize(dd)["numFilesRemoved"], 0)

    def test_sql_alter_full_and_refusals(self):
        dd, sp = self.copy("alt_dd"), self.copy("alt_sp")
        new = os.path.join(self.tmp, "created")
        got = self.client([
            ("zorder", "spark.sql('OPTIMIZE delta.`%s` ZORDER BY (a)' % T).collect()"),
            ("where", "spark.sql('OPTIMIZE delta.`%s` WHERE a > 1' % T).collect()"),
            ("dc", "int(DeltaTable.forPath(spark, T).optimize().executeCompaction().toPandas()"
                   ".to_dict('records')[0]['metrics']['numFilesRemoved'])"),
            ("alter", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (b)' % T).collect()"),
            ("plain", "int(spark.sql('OPTIMIZE delta.`%s`' % T).toPandas().to_dict('records')[0]"
                      "['metrics']['numFilesRemoved'])"),
            ("full", "int(spark.sql('OPTIMIZE delta.`%s` FULL' % T).toPandas().to_dict('records')[0]"
                     "['metrics']['numFilesRemoved'])"),
            ("none", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY NONE' % T).collect()"),
            ("full_none", "spark.sql('OPTIMIZE delta.`%s` FULL' % T).collect()"),
            ("create", "spark.sql(\"CREATE TABLE delta.`%s` (k INT, v STRING) USING DELTA "
                       "CLUSTER BY (k)\" % NEW).collect()"),
        ], {"T": dd, "NEW": new})
        self.assertIn("[DELTA_CLUSTERING_WITH_ZORDER_BY] OPTIMIZE command for Delta table with "
                      "clustering cannot specify ZORDER BY. Please remove ZORDER BY (a).",
                      got["zorder"].get("error", ""))
        self.assertIn("[DELTA_CLUSTERING_WITH_PARTITION_PREDICATE] OPTIMIZE command for Delta table "
                      "with clustering doesn't support partition predicates. Please remove the "
                      "predicates: a > 1.", got["where"].get("error", ""))
        self.assertIn("[DELTA_OPTIMIZE_FULL_NOT_SUPPORTED]", got["full_none"].get("error", ""))
        for k in ("dc", "alter", "plain", "full", "none", "create"):
            self.assertNotIn("error", got[k], k)
        # the same sequence on Spark's twin: the same files rewritten at each step
        with self.assertRaises(SparkJudgeError):
            self.spark_optimize(sp, " ZORDER BY (a)")
        spark = [self.spark_optimize(sp)["numFilesRemoved"]]
        self.judge.sql("ALTER TABLE %s CLUSTER BY (b)" % q(sp))
        spark.append(self.spark_optimize(sp)["numFilesRemoved"])
        spark.append(self.spark_optimize(sp, " FULL")["numFilesRemoved"])
        self.assertEqual([got["dc"]["value"], got["plain"]["value"], got["full"]["value"]], spark)
        self.assertEqual(spark, [APPENDS, 0, 1])
        # Spark reads deltad's history and detail
        hist = self.judge.sql("DESCRIBE HISTORY %s" % q(dd))
        ops = [(r["operation"], r["operationParameters"]) for r in hist[:3]]  # plain: no commit
        self.assertEqual(ops[0], ("CLUSTER BY", {"oldClusteringColumns": "b", "newClusteringColumns": ""}))
        self.assertEqual(ops[1][0], "OPTIMIZE")
        self.assertEqual((ops[1][1]["clusterBy"], ops[1][1]["isFull"]), ('["b"]', "true"))
        self.assertEqual(ops[2], ("CLUSTER BY", {"oldClusteringColumns": "a,b", "newClusteringColumns": "b"}))
        self.assertEqual(self.detail_columns(dd), [])
        self.assertEqual(self.rows(dd), self.rows(self.base))
        self.assertEqual(self.detail_columns(new), ["k"])
        # Spark writes to and clusters the table deltad created
        self.judge.sql("INSERT INTO %s VALUES (2, 'x'), (1, 'y')" % q(new))
        self.judge.sql("INSERT INTO %s VALUES (3, 'z')" % q(new))
        files = self.judge.sql("DESCRIBE DETAIL %s" % q(new))[0]["numFiles"]
        self.assertGreaterEqual(files, 2)
        self.assertEqual(self.optimize(new)["numFilesRemoved"], files)
        self.assertEqual(self.spark_optimize(new)["numFilesRemoved"], 0)

    def test_alter_unclustered(self):
        """ALTER TABLE CLUSTER BY makes an unclustered table clustered, as Spark's does (its
        twin); a partitioned one is refused by both."""
        dd, sp, part = (os.path.join(self.tmp, n) for n in ("plain_dd", "plain_sp", "parted"))
        self.judge.sql("CREATE TABLE %s (a INT, b STRING) USING DELTA" % q(dd))
        self.judge.sql("INSERT INTO %s VALUES (3, 'x'), (1, 'y')" % q(dd))
        self.judge.sql("INSERT INTO %s VALUES (2, 'z')" % q(dd))
        shutil.copytree(dd, sp)
        self.judge.sql("CREATE TABLE %s (a INT, p STRING) USING DELTA PARTITIONED BY (p)" % q(part))
        got = self.client([("alter", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (a)' % T).collect()"),
                           ("part", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (a)' % P).collect()"),
                           ("none", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY NONE' % P).collect()")],
                          {"T": dd, "P": part})
        self.assertNotIn("error", got["alter"])
        self.assertIn("[DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED]",
                      got["part"].get("error", ""))
        self.assertNotIn("error", got["none"])  # NONE on an unclustered table: nothing
        self.assertEqual(self.version(part), 0)
        with self.assertRaises(SparkJudgeError) as e:
            self.judge.sql("ALTER TABLE %s CLUSTER BY (a)" % q(part))
        self.assertIn("DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED", str(e.exception))
        self.judge.sql("ALTER TABLE %s CLUSTER BY (a)" % q(sp))
        for path in (dd, sp):
            detail = self.judge.sql("DESCRIBE DETAIL %s" % q(path))[0]
            self.assertEqual(detail["clusteringColumns"], ["a"])
            self.assertIn("clustering", detail["tableFeatures"])
            self.assertIn("domainMetadata", detail["tableFeatures"])
        self.assertEqual(self.history(dd)["operationParameters"], self.history(sp)["operationParameters"])
        # Spark writes and clusters deltad's table; deltad then has nothing to do
        self.judge.sql("INSERT INTO %s VALUES (0, 'w')" % q(dd))
        files = self.judge.sql("DESCRIBE DETAIL %s" % q(dd))[0]["numFiles"]
        self.assertEqual(self.spark_optimize(dd)["numFilesRemoved"], files)
        self.assertEqual(self.optimize(dd)["numFilesRemoved"], 0)
        self.assertEqual(self.rows(dd), sorted(json.dumps(r, sort_keys=True) for r in (
            {"a": 0, "b": "w"}, {"a": 1, "b": "y"}, {"a": 2, "b": "z"}, {"a": 3, "b": "x"})))
        err = self.optimize(dd, "--where", "a > 1", expect=1)
        self.assertIn("UNIMPLEMENTED: [DELTA_CLUSTERING_WITH_PARTITION_PREDICATE]", err)

    def domain(self, path):
        """The last delta.clustering domainMetadata action in the JSON commits."""
        last = None
        for f in sorted(glob.glob(os.path.join(path, "_delta_log", "*.json"))):
            with open(f) as fh:
                for line in fh:
                    a = json.loads(line)
                    if a.get("domainMetadata", {}).get("domain") == "delta.clustering":
                        last = json.loads(a["domainMetadata"]["configuration"])
        return last

    def test_column_mapping(self):
        """A clustered table with column mapping: the domain holds physical names (deltad's
        ALTER writes what Spark's does on the twin), OPTIMIZE clusters by the logical ones."""
        dd, sp = os.path.join(self.tmp, "cm_dd"), os.path.join(self.tmp, "cm_sp")
        self.judge.sql("CREATE TABLE %s (a INT, b INT, s STRING) USING DELTA CLUSTER BY (a) "
                       "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')" % q(dd))
        for i in range(4):
            self.judge.sql("INSERT INTO %s SELECT /*+ REPARTITION(1) */ CAST(rand(%d) * 100 AS INT), "
                           "CAST(rand(%d) * 100 AS INT), CAST(id AS STRING) FROM range(300)"
                           % (q(dd), i, 50 + i))
        shutil.copytree(dd, sp)
        got = self.client([("alter", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (b, a)' % T).collect()"),
                           ("detail", "list(spark.sql('DESCRIBE DETAIL delta.`%s`' % T).collect()[0]"
                                      "['clusteringColumns'])")], {"T": dd})
        self.assertNotIn("error", got["alter"])
        self.assertEqual(got["detail"], {"value": ["b", "a"]})  # deltad's detail: logical names
        self.judge.sql("ALTER TABLE %s CLUSTER BY (b, a)" % q(sp))
        want = self.domain(sp)
        self.assertTrue(all(c[0].startswith("col-") for c in want["clusteringColumns"]), want)
        self.assertEqual(self.domain(dd), want)
        self.assertEqual(self.detail_columns(dd), ["b", "a"])
        m, sm = self.optimize(dd), self.spark_optimize(sp)
        self.assertEqual(m["clusteringStats"], sm["clusteringStats"])
        self.assertEqual(self.history(dd)["operationParameters"]["clusterBy"], '["b","a"]')
        self.assertEqual(self.rows(dd), self.rows(sp))
        self.assertEqual(self.spark_optimize(dd)["numFilesRemoved"], 0)
        adds = self.adds(dd, self.version(dd))
        self.assertEqual({a["tags"]["ZCUBE_ZORDER_BY"] for a in adds}, {'["b","a"]'})

    def test_replace_and_restore(self):
        """REPLACE TABLE without CLUSTER BY leaves no clustering columns, RESTORE brings the
        restored version's back, a partitioned REPLACE is refused: deltad as Spark (twins)."""
        dd, sp = self.copy("rr_dd"), self.copy("rr_sp")
        ddl = "(a INT, b INT, s STRING, d DOUBLE) USING DELTA"
        steps = [("alter", "ALTER TABLE %s CLUSTER BY (b)"),
                 ("restore", "RESTORE TABLE %%s TO VERSION AS OF %d" % APPENDS),
                 ("parted", "CREATE OR REPLACE TABLE %%s %s PARTITIONED BY (s)" % ddl),
                 ("replace", "REPLACE TABLE %%s %s" % ddl)]
        # deltad's SQL has CREATE OR REPLACE for Spark's REPLACE (which Spark refuses on a
        # path table whose clustering differs, DELTA_CREATE_TABLE_WITH_DIFFERENT_CLUSTERING)
        dd_sql = {k: v.replace("REPLACE TABLE", "CREATE OR REPLACE TABLE") if k == "replace" else v
                  for k, v in steps}
        got = self.client([(k, "spark.sql(%r %% ('delta.`%%s`' %% T)).collect()" % dd_sql[k])
                           for k, _ in steps], {"T": dd})
        self.assertIn("[DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE]", got["parted"].get("error", ""))
        seen = {}
        for k, v in steps:
            try:
                self.judge.sql(v % q(sp))
            except SparkJudgeError as e:
                self.assertEqual(k, "parted", e)
                continue
            self.assertNotIn("error", got[k], k)
            seen[k] = self.detail_columns(sp)
        self.assertEqual(seen, {"alter": ["b"], "restore": ["a", "b"], "replace": []})
        self.assertEqual(self.detail_columns(dd), [])
        self.assertEqual(self.domain(dd), self.domain(sp))
        self.assertEqual(self.judge.read(dd), [])

    def test_alter_checks(self):
        dd = self.copy("chk")
        got = self.client([
            ("missing", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (nope)' % T).collect()"),
            ("many", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (a, b, s, d, a)' % T).collect()"),
            ("syntax", "spark.sql('ALTER TABLE delta.`%s` CLUSTER (a)' % T).collect()"),
            ("ok", "spark.sql('ALTER TABLE delta.`%s` CLUSTER BY (s, a)' % T).collect()"),
            ("create_many", "spark.sql('CREATE TABLE delta.`%s` (a INT, b INT, c INT, d INT, e INT) "
                            "USING DELTA CLUSTER BY (a, b, c, d, e)' % N).collect()"),
            ("create_map", "spark.sql('CREATE TABLE delta.`%s` (a INT, m MAP<STRING, INT>) "
                           "USING DELTA CLUSTER BY (m)' % N).collect()"),
        ], {"T": dd, "N": os.path.join(self.tmp, "never")})
        self.assertIn("[DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS]", got["create_many"].get("error", ""))
        self.assertIn("[DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED]", got["create_map"].get("error", ""))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "never")))
        self.assertIn("no column 'nope'", got["missing"].get("error", ""))
        self.assertIn("DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS", got["many"].get("error", ""))
        self.assertIn("error", got["syntax"])
        self.assertNotIn("error", got["ok"])
        self.assertEqual(self.detail_columns(dd), ["s", "a"])
        # nothing was committed by the refused statements
        self.assertEqual(self.version(dd), APPENDS + 1)
        # clustering columns keep their stats in deltad's writes even when the table's
        # stats columns would leave them out (s is the third column)
        sql = "ALTER TABLE %s SET TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '1')" % q(dd)
        got = self.client([("props", "spark.sql(Q).collect()")], {"Q": sql})
        self.assertNotIn("error", got["props"])
        m = self.optimize(dd, "--full", server=True)  # FULL travels as hadoop conf
        self.assertEqual(m["numFilesRemoved"], APPENDS)
        self.assertEqual(self.history(dd)["operationParameters"]["isFull"], "true")
        for a in self.adds(dd, APPENDS + 3):
            self.assertEqual(sorted(json.loads(a["stats"])["minValues"]), ["a", "s"])
        self.assertEqual(self.rows(dd), self.rows(self.base))


if __name__ == "__main__":
    h.main()
