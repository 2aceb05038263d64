"""test_scan_cli.py: deltactl table scan end to end on copies of real tables: --where (store/expr's
predicate and data skipping) keeps the rows a Python filter of the full scan keeps; data files and
deletion vectors named by absolute paths (or reached through a symlink) outside the table
are refused with PERMISSION_DENIED unless a --root allows their directory, a path with ".."
is refused, bad options and unknown columns fail with a clear message, and the table, csv
and json outputs render the same rows."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402

DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))
DV_SMALL = os.path.join(h.FIXTURES, "delta-rs-data", "table-with-dv-small")
DATA = "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"
DV = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"


def scan(path, *extra):
    return subprocess.run([DELTACTL, "table", "scan", path] + list(extra), capture_output=True,
                          text=True, timeout=120)


def rewrite_log(table, fn):
    """Applies fn to every action (a dict) of every commit of table."""
    log = os.path.join(table, "_delta_log")
    for name in os.listdir(log):
        if not name.endswith(".json"):
            continue
        p = os.path.join(log, name)
        with open(p) as f:
            actions = [json.loads(line) for line in f if line.strip()]
        with open(p, "w") as f:
            for a in actions:
                f.write(json.dumps(fn(a)) + "\n")


class ScanCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="scan_cli_")
        self.table = os.path.join(self.tmp, "t")
        self.outside = os.path.join(self.tmp, "outside")
        shutil.copytree(DV_SMALL, self.table)
        os.mkdir(self.outside)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def values(self, *extra):
        p = scan(self.table, "--local", "--output", "json", *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(json.loads(line)["value"] for line in p.stdout.splitlines())

    def test_copy_reads(self):
        self.assertEqual(self.values(), list(range(1, 9)))

    def test_absolute_dv_outside_is_refused_unless_rooted(self):
        shutil.move(os.path.join(self.table, DV), os.path.join(self.outside, DV))

        def to_abs(a):
            dv = a.get("add", {}).get("deletionVector")
            if dv:
                dv["storageType"] = "p"
                dv["pathOrInlineDv"] = "file://" + os.path.join(self.outside, DV)
            return a
        rewrite_log(self.table, to_abs)
        p = scan(self.table, "--local", "--output", "json")
        self.assertEqual(p.returncode, 1)
        self.assertIn("PERMISSION_DENIED", p.stderr)
        self.assertIn("outside the table", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(self.values("--root", self.outside), list(range(1, 9)))

    def test_absolute_data_file_outside_is_refused_unless_rooted(self):
        shutil.move(os.path.join(self.table, DATA), os.path.join(self.outside, DATA))

        def to_abs(a):
            for kind in ("add", "remove"):
                if kind in a:
                    a[kind]["path"] = os.path.join(self.outside, DATA)
            return a
        rewrite_log(self.table, to_abs)
        p = scan(self.table, "--local")
        self.assertEqual(p.returncode, 1)
        self.assertIn("PERMISSION_DENIED", p.stderr)
        self.assertEqual(self.values("--root", self.outside), list(range(1, 9)))
        # a root that is a prefix by name only does not allow it
        p = scan(self.table, "--local", "--root", self.outside[:-1])
        self.assertIn("PERMISSION_DENIED", p.stderr)

    def test_symlink_out_of_the_table_is_refused(self):
        shutil.move(os.path.join(self.table, DATA), os.path.join(self.outside, DATA))
        os.symlink(os.path.join(self.outside, DATA), os.path.join(self.table, DATA))
        p = scan(self.table, "--local")
        self.assertEqual(p.returncode, 1)
        self.assertIn("PERMISSION_DENIED", p.stderr)

    def test_dotdot_path_is_refused(self):
        shutil.move(os.path.join(self.table, DATA), os.path.join(self.tmp, DATA))

        def up(a):
            for kind in ("add", "remove"):
                if kind in a:
                    a[kind]["path"] = "../" + DATA
            return a
        rewrite_log(self.table, up)
        p = scan(self.table, "--local", "--output", "json", "--root", self.tmp)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("escapes the table", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_damaged_data_file_is_data_loss(self):
        path = os.path.join(self.table, DATA)
        with open(path, "rb") as f:
            good = f.read()
        for name, data in (("truncated", good[:300]),
                           ("page bytes flipped", good[:4] + bytes(b ^ 0x5A for b in good[4:20]) + good[20:])):
            with open(path, "wb") as f:
                f.write(data)
            p = scan(self.table, "--local", "--output", "json")
            self.assertEqual(p.returncode, 1, name)
            self.assertIn("DATA_LOSS", p.stderr, name)
            self.assertNotIn("Sanitizer", p.stderr, name)
            self.assertEqual(p.stdout, "", name)

    def test_bad_input(self):
        p = scan(self.table, "--local", "--columns", "nope")
        self.assertEqual(p.returncode, 1)
        self.assertIn("INVALID_ARGUMENT", p.stderr)
        self.assertIn("nope", p.stderr)
        p = scan(self.table, "--local", "--where", "value >")
        self.assertEqual(p.returncode, 1)
        self.assertIn("PARSE_SYNTAX_ERROR", p.stderr)
        p = scan(self.table, "--local", "--where", "nope = 1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("UNRESOLVED_COLUMN", p.stderr)
        p = scan(self.table)  # the server path by default: without a token it says how to get one
        self.assertEqual(p.returncode, 2)
        self.assertIn("DELTAD_TOKEN", p.stderr)
        p = scan(self.table, "--local", "--output", "xml")
        self.assertEqual(p.returncode, 2)
        p = scan(os.path.join(self.tmp, "none"), "--local")
        self.assertEqual(p.returncode, 1)

    def test_where(self):
        self.assertEqual(self.values("--where", "value > 5"), [6, 7, 8])
        self.assertEqual(self.values("--where", "value % 2 = 0 OR value IS NULL", "--limit", "2"), [2, 4])
        self.assertEqual(self.values("--where", "value > 100"), [])
        # a partitioned table: partition and data columns, and --columns beside --where
        part = os.path.join(h.FIXTURES, "delta-rs-data", "delta-0.8.0-partitioned")
        p = scan(part, "--local", "--output", "json")
        every = [json.loads(line) for line in p.stdout.splitlines()]
        want = sorted(r["value"] for r in every if r["year"] == "2021" and r["value"] != "6")
        p = scan(part, "--local", "--output", "json", "--columns", "value",
                 "--where", "year = '2021' AND value <> '6'")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual(sorted(r["value"] for r in got), want)
        self.assertTrue(all(list(r) == ["value"] for r in got))
        self.assertGreater(len(want), 0)

    def test_outputs_and_options(self):
        self.assertEqual(self.values("--limit", "3"), [1, 2, 3])
        self.assertEqual(self.values("--batch-rows", "2", "--columns", "value"), list(range(1, 9)))
        p = scan(self.table, "--local", "--output", "csv", "--limit", "2")
        self.assertEqual(p.stdout, "value\n1\n2\n")
        p = scan(self.table, "--local", "--limit", "1")
        self.assertEqual(p.stdout, "value\n1\n")
        # time travel: version 0 has no deletion vector
        self.assertEqual(self.values("--version", "0"), list(range(0, 10)))


DAT = os.path.join(h.FIXTURES, "dat", "reader_tests", "generated")
# every Delta type (nested, variant, both timestamps, decimals), partitions (with nulls and
# special characters), deletion vectors, column mapping, checkpoints
SERVER_TABLES = [os.path.join(DAT, n, "delta") for n in (
    "all_primitive_types", "nested_types", "timestamp_ntz", "column_mapping", "deletion_vectors",
    "multi_partitioned", "partitioned_with_null", "with_checkpoint")] + [
    os.path.join(h.FIXTURES, "delta-rs-data", n) for n in (
        "table_with_edge_timestamps", "spark-variant-checkpoint", "delta-2.2.0-partitioned-types",
        "delta-0.8.0-special-partition", "table-with-dv-small", "checkpoint-v2-table")]


class ScanCliServer(h.ServerTest):
    """`deltactl table scan PATH` without --local: the server runs the scan (ExecuteQuery with
    Filter/Project/Limit over the Scan) and the output is byte for byte the --local one."""

    def ctl(self, path, *extra):
        return subprocess.run([DELTACTL, "--server", self.server.grpc_target, "--token", self.server.token,
                               "table", "scan", path] + list(extra), capture_output=True, text=True,
                              timeout=120)

    def same(self, path, *extra):
        local = scan(path, "--local", *extra)
        remote = self.ctl(path, *extra)
        self.assertEqual(local.returncode, 0, "%s %s: %s" % (path, extra, local.stderr))
        self.assertEqual(remote.returncode, 0, "%s %s: %s" % (path, extra, remote.stderr))
        self.assertEqual(remote.stdout, local.stdout, "%s %s" % (path, extra))
        return remote.stdout

    def test_same_bytes_every_table_and_format(self):
        for t in SERVER_TABLES:
            for fmt in ("table", "json", "csv"):
                out = self.same(t, "--output", fmt)
                self.assertTrue(out, t)

    def test_same_bytes_with_options(self):
        t = os.path.join(DAT, "all_primitive_types", "delta")
        out = self.same(t, "--output", "json", "--where", "int32 > 1 AND utf8 <> '3'", "--columns",
                        "decimal,utf8,timestamp", "--limit", "2")
        rows = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(len(rows), 2)
        self.assertEqual([list(r) for r in rows], [["decimal", "utf8", "timestamp"]] * 2)
        self.same(t, "--output", "csv", "--columns", "binary,float32", "--limit", "0")
        self.same(DV_SMALL, "--output", "json", "--version", "0")
        self.same(DV_SMALL, "--version", "0", "--where", "value % 2 = 0", "--limit", "3")
        part = os.path.join(DAT, "multi_partitioned", "delta")
        self.same(part, "--output", "csv", "--where", "letter = 'a' OR number IS NULL")

    def test_options_run_on_the_server(self):
        """The server's plan is Limit/Project/Filter over the Scan: an unknown column and a bad
        predicate fail on the server (status INVALID_ARGUMENT from the call), not in deltactl."""
        t = os.path.join(DAT, "all_primitive_types", "delta")
        p = self.ctl(t, "--columns", "nope")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("INVALID_ARGUMENT", p.stderr)
        self.assertIn("nope", p.stderr)
        self.assertEqual(p.stdout, "")
        p = self.ctl(t, "--where", "nope = 1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("INVALID_ARGUMENT", p.stderr)
        p = self.ctl(t, "--version", "99")
        self.assertEqual(p.returncode, 1, p.stderr)
        p = self.ctl(t, "--root", "/tmp")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--local", p.stderr)
        p = self.ctl("/etc")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("PERMISSION_DENIED", p.stderr)


if __name__ == "__main__":
    unittest.main()
