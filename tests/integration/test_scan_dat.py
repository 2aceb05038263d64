"""test_scan_dat.py: deltactl table scan (store/scan) against the Delta Acceptance Testing
corpus: for every DAT case and every version folder of its expected/ (latest and vN), the
rows `deltactl table scan --local --output json [--version N]` prints must be the same
multiset as expected/*/table_content/*.parquet read by pyarrow (peers/arrow_rows.py under
build-test/venv). Values are compared in the JSON-safe form both sides print (floats at 7
significant digits, since a float32 column prints as the shortest text of the float).
Where deltad disagrees on purpose, KNOWN says why; everything else must match."""
import glob
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
ROWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "arrow_rows.py")
DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))
DAT = os.path.join(h.FIXTURES, "dat", "reader_tests", "generated")

# case/version -> why deltad's answer differs from the expected rows (none so far).
KNOWN = {}


def canon(v):
    """A hashable canonical form: floats rounded to 7 significant digits."""
    if isinstance(v, float):
        return "f:%.7g" % v
    if isinstance(v, dict):
        return "{%s}" % ",".join("%s:%s" % (json.dumps(k), canon(v[k])) for k in sorted(v))
    if isinstance(v, list):
        return "[%s]" % ",".join(canon(x) for x in v)
    return json.dumps(v)


def multiset(rows):
    return sorted(canon(r) for r in rows)


def expected_rows(folder):
    files = sorted(glob.glob(os.path.join(folder, "table_content", "*.parquet")))
    p = subprocess.run([os.path.join(VENV, "bin", "python"), ROWS] + files,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("arrow_rows.py failed: %s" % p.stderr[-2000:])
    out = json.loads(p.stdout)
    if "error" in out:
        raise AssertionError("pyarrow cannot read %s: %s" % (folder, out["error"]))
    return out["rows"]


def scan_rows(table, version=None):
    args = [DELTACTL, "table", "scan", table, "--local", "--output", "json"]
    if version is not None:
        args += ["--version", str(version)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()], None


def cases():
    out = []
    for case in sorted(os.listdir(DAT)):
        for folder in sorted(glob.glob(os.path.join(DAT, case, "expected", "*"))):
            name = os.path.basename(folder)
            if not os.path.isdir(os.path.join(folder, "table_content")):
                continue
            version = None if name == "latest" else int(name[1:])
            out.append((case, name, version, folder))
    return out


class ScanDat(unittest.TestCase):
    def test_every_case_matches_expected(self):
        all_cases = cases()
        self.assertGreater(len(all_cases), 19, "the DAT corpus is missing")
        failures, checked = [], 0
        for case, name, version, folder in all_cases:
            key = "%s/%s" % (case, name)
            got, err = scan_rows(os.path.join(DAT, case, "delta"), version)
            want = expected_rows(folder)
            ok = err is None and multiset(got) == multiset(want)
            if key in KNOWN:
                self.assertFalse(ok, "%s now matches; drop it from KNOWN" % key)
                continue
            checked += 1
            if err is not None:
                failures.append("%s: deltactl failed: %s" % (key, err[-500:]))
            elif not ok:
                g, w = multiset(got), multiset(want)
                extra = [r for r in g if r not in w][:3]
                missing = [r for r in w if r not in g][:3]
                failures.append("%s: %d rows, want %d; extra %s; missing %s"
                                % (key, len(got), len(want), extra, missing))
        print("%d DAT versions checked, %d disagree" % (checked, len(failures)))
        self.assertEqual(failures, [], "\n".join(failures))


if __name__ == "__main__":
    unittest.main()
