#!/usr/bin/python3
"""test_optimize.py: OPTIMIZE by deltad (store/optimize through `deltactl table optimize`,
in-process with --local and over DeltaConnectService's OptimizeTable) on tables written by
the peers (deltalake: many small files, every type it writes, partitions with a space, a
'/' and null; Spark: deletion vectors). After each OPTIMIZE, Spark with Delta (the judge),
deltalake and DuckDB (read_parquet of the active files) must read the same rows as before,
Spark's DESCRIBE HISTORY must show the OPTIMIZE commit with its parameters and metrics,
and the file counts must be Delta's (one file per bin, a lone file left alone). The real
Delta Connect client's optimize().where().executeCompaction() and executeZOrderBy() run
against deltad's Spark Connect service, and so does the SQL statement OPTIMIZE ... WHERE
... ZORDER BY (...) (OptimizeDeltaConnect)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from spark_judge_client import SparkJudge  # noqa: E402
import test_delta_connect_client as dcc  # noqa: E402 (its TLS server set-up)

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "optimize_peer.py")
DC_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_connect_optimize.py")
DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))


def peer(req):
    p = subprocess.run([os.path.join(VENV, "bin", "python"), PEER, json.dumps(req)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("optimize_peer failed: %s" % p.stderr[-2000:])
    out = json.loads(p.stdout)
    if "error" in out:
        raise AssertionError("optimize_peer: %s" % out["error"])
    return out


class Optimize(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.judge = SparkJudge()
        cls.tmp = tempfile.mkdtemp(prefix="dd-opt-")

    @classmethod
    def tearDownClass(cls):
        cls.judge.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def table(self, name, files, rows, partitioned):
        path = os.path.join(self.tmp, name)
        peer({"op": "make", "path": path, "files": files, "rows": rows, "partitioned": partitioned})
        return path

    def optimize(self, path, *args, local=True, expect=0):
        cmd = [DELTACTL]
        if not local:
            cmd += ["--server", self.server.grpc_target, "--token", self.server.token]
        cmd += ["--output", "jsonl", "table", "optimize", path] + list(args)
        if local:
            cmd.append("--local")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, expect, p.stderr)
        if expect:
            return p.stderr
        row = json.loads(p.stdout.splitlines()[0])
        m = row["metrics"]
        return json.loads(m) if isinstance(m, str) else m

    def spark_rows(self, path, version=None):
        return sorted(json.dumps(r, sort_keys=True) for r in self.judge.read(path, version=version))

    def last_commit(self, path):
        rows = self.judge.sql("DESCRIBE HISTORY delta.`%s` LIMIT 1" % path)
        return rows[0]

    def assert_same_rows(self, path, before_version, files):
        before = peer({"op": "rows", "path": path, "version": before_version})
        after = peer({"op": "rows", "path": path})
        self.assertEqual(after["files"], files)
        self.assertEqual(len(after["deltalake"]), len(before["deltalake"]))
        self.assertEqual(after["deltalake"], before["deltalake"])
        self.assertEqual(after["duckdb"], before["deltalake"])
        self.assertEqual(self.spark_rows(path), self.spark_rows(path, before_version))

    def test_compaction_partitioned(self):
        path = self.table("part", 6, 50, True)  # 6 appends x 3 partitions = 18 small files
        m = self.optimize(path)
        self.assertEqual((m["numFilesRemoved"], m["numFilesAdded"]), (18, 3))
        self.assertEqual(m["partitionsOptimized"], 3)
        self.assertEqual(m["numBatches"], 3)
        self.assertEqual(m["totalConsideredFiles"], 18)
        self.assertIsNone(m["zOrderStats"])
        self.assert_same_rows(path, 5, 3)
        h_ = self.last_commit(path)
        self.assertEqual(h_["operation"], "OPTIMIZE")
        self.assertEqual(h_["version"], 6)
        self.assertEqual(h_["operationParameters"]["predicate"], "[]")
        self.assertEqual(h_["operationParameters"]["zOrderBy"], "[]")
        self.assertEqual(h_["operationMetrics"]["numRemovedFiles"], "18")
        self.assertEqual(h_["operationMetrics"]["numAddedFiles"], "3")
        # every partition has one file now: nothing more to do, no commit
        m = self.optimize(path)
        self.assertEqual((m["numFilesRemoved"], m["numFilesAdded"]), (0, 0))
        self.assertEqual(self.last_commit(path)["version"], 6)
        # Spark's own OPTIMIZE of the result finds nothing to compact either
        _, rows = self.judge.optimize(path, dest=os.path.join(self.tmp, "spark-part"))
        self.assertEqual(rows[0]["metrics"]["numFilesRemoved"], 0)

    def test_where_and_target_size(self):
        path = self.table("where", 4, 40, True)  # 12 files, 4 per partition
        m = self.optimize(path, "--where", "p = 'a b'")
        self.assertEqual((m["numFilesRemoved"], m["numFilesAdded"]), (4, 1))
        self.assertEqual(m["totalConsideredFiles"], 4)
        self.assert_same_rows(path, 3, 9)
        self.assertEqual(self.last_commit(path)["operationParameters"]["predicate"],
                         '["(p = \'a b\')"]')
        err = self.optimize(path, "--where", "id > 3", expect=1)
        self.assertIn("partition columns", err)
        # a target below the files' size: each file is its own bin, nothing is rewritten
        m = self.optimize(path, "--target-size", "100")
        self.assertEqual(m["numFilesRemoved"], 0)

    def test_zorder(self):
        path = self.table("z", 5, 80, False)
        m = self.optimize(path, "--zorder-by", "i,s", "--target-size", "3000")
        self.assertEqual(m["numFilesRemoved"], 5)
        self.assertGreater(m["numFilesAdded"], 1)  # split at the target size
        self.assertEqual(m["zOrderStats"]["strategyName"], "all")
        after = peer({"op": "rows", "path": path})
        self.assert_same_rows(path, 4, after["files"])
        c = self.last_commit(path)
        self.assertEqual(c["operationParameters"]["zOrderBy"], '["i","s"]')
        err = self.optimize(path, "--zorder-by", "nope", expect=1)
        self.assertIn("nope", err)

    def test_deletion_vectors(self):
        path = os.path.join(self.tmp, "dv")
        self.judge.sql("CREATE TABLE delta.`%s` (id BIGINT, v STRING) USING DELTA "
                       "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')" % path)
        for i in range(3):  # one file each (range's numPartitions 1)
            self.judge.sql("INSERT INTO delta.`%s` SELECT id, CAST(id AS STRING) FROM "
                           "range(%d, %d, 1, 1)" % (path, i * 100, i * 100 + 100))
        # each file gets its own DV; the removes must carry each file's own (they all
        # carried one file's after the copies moved, and Spark then read 333 rows)
        self.judge.sql("DELETE FROM delta.`%s` WHERE id %% 3 = 0" % path)
        files = self.judge.sql("DESCRIBE DETAIL delta.`%s`" % path)[0]["numFiles"]
        before = self.spark_rows(path)
        self.assertEqual(len(before), 200)
        m = self.optimize(path)
        self.assertEqual((m["numFilesRemoved"], m["numFilesAdded"]), (files, 1))
        self.assertEqual(m["deletionVectorStats"]["numDeletionVectorsRemoved"], files)
        self.assertEqual(m["deletionVectorStats"]["numDeletionVectorRowsRemoved"], 100)
        self.assertEqual(self.spark_rows(path), before)
        # deltalake cannot open a table with the deletionVectors reader feature: DuckDB
        # reads the active file deltactl lists
        p = subprocess.run([DELTACTL, "table", "files", path, "--local", "--output", "json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        active = [f["path"] for f in json.loads(p.stdout)]
        self.assertEqual(len(active), 1)
        got = peer({"op": "parquet", "files": [os.path.join(path, a) for a in active]})
        self.assertEqual(len(got["duckdb"]), 200)  # the hidden rows are gone from the file
        self.assertEqual(self.last_commit(path)["operationMetrics"]["numDeletionVectorsRemoved"],
                         str(files))

    def test_column_mapping(self):
        # partitionValues are keyed by physical name: OPTIMIZE of a partitioned table with
        # column mapping failed with "no value for partition column" before dwrite looked
        # them up by physical name
        path = os.path.join(self.tmp, "cm")
        shutil.copytree(os.path.join(h.FIXTURES, "delta-rs-data", "table_with_column_mapping"), path)
        before = self.spark_rows(path)
        files = self.judge.sql("DESCRIBE DETAIL delta.`%s`" % path)[0]["numFiles"]
        m = self.optimize(path, "--zorder-by", "Super Name")
        self.assertEqual(m["numFilesRemoved"], files)
        self.assertEqual(self.spark_rows(path), before)
        self.assertTrue(any(d.startswith("col-") for d in os.listdir(path)))

    def test_over_server(self):
        path = self.table("srv", 3, 30, False)
        m = self.optimize(path, local=False)
        self.assertEqual((m["numFilesRemoved"], m["numFilesAdded"]), (3, 1))
        self.assert_same_rows(path, 2, 1)
        outside = tempfile.mkdtemp(prefix="dd-opt-outside-", dir="/var/tmp")
        try:
            err = self.optimize(outside, local=False, expect=1)
            self.assertIn("PERMISSION_DENIED", err)
        finally:
            shutil.rmtree(outside, ignore_errors=True)


class OptimizeDeltaConnect(dcc.DeltaConnectClient):
    """The real Delta Connect client (the TLS server of test_delta_connect_client.py)."""
    test_real_client = None  # that class's own test runs there

    def test_client_optimize(self):
        path = os.path.join(self.tmp, "dc")
        peer({"op": "make", "path": path, "files": 3, "rows": 30, "partitioned": True})
        port = self.server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([os.path.join(VENV, "bin", "python"), DC_PEER, url, path, "p = 'x/y'", "i"],
                           capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        for k in ("where", "compaction", "zorder", "sql", "history"):
            self.assertIn("ok", got[k], "%s: %s" % (k, got[k]))
        self.assertEqual(got["where"]["ok"]["metrics"]["numFilesRemoved"], 3)
        self.assertEqual(got["where"]["ok"]["metrics"]["numFilesAdded"], 1)
        self.assertEqual(got["compaction"]["ok"]["metrics"]["numFilesRemoved"], 6)
        self.assertEqual(got["zorder"]["ok"]["metrics"]["numFilesRemoved"], 3)
        self.assertEqual(got["zorder"]["ok"]["metrics"]["zOrderStats"]["strategyName"], "all")
        self.assertEqual(got["sql"]["ok"]["metrics"]["numFilesRemoved"], 1)  # x/y's one file
        self.assertEqual(got["history"]["ok"], ["OPTIMIZE"] * 4)
        rows = peer({"op": "rows", "path": path})
        before = peer({"op": "rows", "path": path, "version": 2})  # the last append
        self.assertEqual(rows["deltalake"], before["deltalake"])
        self.assertEqual(rows["files"], 3)


if __name__ == "__main__":
    h.main()
