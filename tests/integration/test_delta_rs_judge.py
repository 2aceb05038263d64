"""test_delta_rs_judge.py: delta-rs (the `deltalake` package, PyPI, pinned in
scripts/peers.txt and installed into the build folder's venv by scripts/peers.sh; the test
fails when it cannot be installed) judges deltad's log engine on every real table of the
shared fixtures: both open the latest snapshot, and they must agree on whether it opens, its
version, and its active files with their sizes. Where they disagree on purpose, KNOWN says
why. Then both meet tables damaged here: a checkpoint without metaData or protocol (both
refuse; deltad with DATA_LOSS naming the checkpoint), and time travel by timestamp, where
they agree up to the latest commit. After it deltad refuses (OUT_OF_RANGE), as Delta on
Spark does (TIMESTAMP_GREATER_THAN_COMMIT); delta-rs 1.6.6 answers the latest version, and
the test asserts that too, so a change on either side is seen."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_rs_read.py")
DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))

# Tables where deltad and delta-rs differ on purpose: relative path -> (deltad, reason).
# "opens": deltad opens it where delta-rs refuses; "refuses": the other way round.
KNOWN = {
    "delta-rs-data/simple_table_features": (
        "refuses", "both refuse; delta-rs names the protocol, deltad the unknown feature"),
}


def fixture_tables():
    roots = [os.path.join(h.FIXTURES, d) for d in ("delta-rs-data", "delta-rs-data-err-logs")]
    out = []
    for r in roots:
        out += sorted(os.path.dirname(p) for p in glob.glob(os.path.join(r, "*", "_delta_log")))
    out += sorted(glob.glob(os.path.join(h.FIXTURES, "dat", "reader_tests", "generated", "*", "delta")))
    return out


def delta_rs(paths, ts_ms=None):
    py = os.path.join(VENV, "bin", "python")
    args = [py, READER] + (["--timestamp", str(ts_ms)] if ts_ms is not None else []) + list(paths)
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("delta-rs reader failed: %s" % p.stderr[-2000:])
    return json.loads(p.stdout)


def deltad(path, *extra):
    """(version, {path: size}) or the error text, from deltactl --local."""
    d = subprocess.run([DELTACTL, "table", "detail", path, "--local", "--output", "json"] + list(extra),
                       capture_output=True, text=True, timeout=60)
    if d.returncode != 0:
        return d.stderr.strip()
    f = subprocess.run([DELTACTL, "table", "files", path, "--local", "--output", "json"] + list(extra),
                       capture_output=True, text=True, timeout=60)
    if f.returncode != 0:
        return f.stderr.strip()
    return json.loads(d.stdout)["version"], {x["path"]: x["size"] for x in json.loads(f.stdout)}


class DeltaRsJudge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        inst = subprocess.run(["bash", os.path.join(h.ROOT, "scripts", "peers.sh"), VENV],
                              capture_output=True, text=True)
        if inst.returncode != 0:
            raise AssertionError("scripts/peers.sh failed (the test needs deltalake): " + inst.stderr)

    def test_fixtures_agree(self):
        tables = fixture_tables()
        self.assertGreater(len(tables), 70)
        peer = delta_rs(tables)
        agreed = 0
        for t in tables:
            rel = os.path.relpath(t, h.FIXTURES)
            if rel.endswith("/delta"):
                rel = rel[: -len("/delta")]
            ours, theirs = deltad(t), peer[t]
            with self.subTest(table=rel):
                known = KNOWN.get(rel)
                if known and known[0] == "refuses":
                    self.assertIsInstance(ours, str, "deltad opened %s" % rel)
                    continue
                if known and known[0] == "opens":
                    self.assertIn("error", theirs)
                    self.assertNotIsInstance(ours, str, ours)
                    continue
                if "error" in theirs:
                    self.assertIsInstance(ours, str, "delta-rs refused %s (%s) but deltad opened it"
                                          % (rel, theirs["error"]))
                    continue
                self.assertNotIsInstance(ours, str, "delta-rs opened %s but deltad: %s" % (rel, ours))
                self.assertEqual(ours[0], theirs["version"], "version of %s" % rel)
                self.assertEqual(ours[1], theirs["files"], "active files of %s" % rel)
                agreed += 1
        self.assertGreater(agreed, 60)

    def damaged_copy(self, drop):
        """A copy of simple_table_with_checkpoint whose newest checkpoint lost its `drop`
        action (rewritten with pyarrow in the venv)."""
        tmp = tempfile.mkdtemp(prefix="dd-judge-")
        self.addCleanup(shutil.rmtree, tmp, True)
        t = os.path.join(tmp, "t")
        shutil.copytree(os.path.join(h.FIXTURES, "delta-rs-data", "simple_table_with_checkpoint"), t)
        cps = sorted(glob.glob(os.path.join(t, "_delta_log", "*.checkpoint.parquet")))
        self.assertTrue(cps)
        code = ("import pyarrow.parquet as pq, pyarrow.compute as pc, sys\n"
                "t = pq.read_table(sys.argv[1])\n"
                "pq.write_table(t.filter(pc.is_null(t[sys.argv[2]])), sys.argv[1])\n")
        subprocess.run([os.path.join(VENV, "bin", "python"), "-c", code, cps[-1], drop], check=True)
        return t, os.path.basename(cps[-1])

    def test_checkpoint_without_metadata_or_protocol(self):
        for drop in ("metaData", "protocol"):
            with self.subTest(drop=drop):
                t, cp = self.damaged_copy(drop)
                theirs = delta_rs([t])[t]
                self.assertIn("error", theirs)
                ours = deltad(t)
                self.assertIsInstance(ours, str, "deltad opened a checkpoint without %s" % drop)
                self.assertIn("DATA_LOSS", ours)
                self.assertIn(cp, ours)
                self.assertIn("has no %s" % drop, ours)

    def test_timestamp_after_latest(self):
        tmp = tempfile.mkdtemp(prefix="dd-judge-")
        self.addCleanup(shutil.rmtree, tmp, True)
        t = os.path.join(tmp, "t")
        shutil.copytree(os.path.join(h.FIXTURES, "delta-rs-data", "simple_table"), t)
        logs = sorted(glob.glob(os.path.join(t, "_delta_log", "*.json")))
        for i, p in enumerate(logs):  # commits an hour apart, the last one an hour ago
            when = 1_700_000_000 + 3600 * i
            os.utime(p, (when, when))
        last_ms = (1_700_000_000 + 3600 * (len(logs) - 1)) * 1000
        for ts, ok in ((last_ms, True), (last_ms - 1, True), (last_ms + 60_000, False)):
            with self.subTest(ts=ts):
                theirs = delta_rs([t], ts)[t]
                ours = deltad(t, "--timestamp", str(ts))
                if ok:
                    self.assertNotIn("error", theirs)
                    self.assertNotIsInstance(ours, str, ours)
                    self.assertEqual(ours[0], theirs["version"])
                    self.assertEqual(ours[1], theirs["files"])
                else:
                    self.assertEqual(theirs.get("version"), len(logs) - 1, theirs)
                    self.assertIsInstance(ours, str, "deltad opened a version as of the future")
                    self.assertIn("OUT_OF_RANGE", ours)
                    self.assertIn("after the latest version %d" % (len(logs) - 1), ours)


if __name__ == "__main__":
    unittest.main()
