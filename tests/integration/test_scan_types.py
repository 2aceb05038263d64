"""test_scan_types.py: the scan's conversions on Parquet files written by pyarrow with a log
written by the test (peers/typed_table.py): INT64 millis and nanos and INT96 timestamps
(before and after the epoch), decimals stored as INT32, INT64 and FIXED_LEN_BYTE_ARRAY up
to 38 digits, type widening (int -> long, float -> double, date -> timestamp_ntz,
decimal(5,2) -> decimal(10,4), int -> double), byte and short, a column added after the
files (nulls), a list of structs and a map of lists with nulls at every level, a partition
value with a space, and column mapping in id mode (found by field id, not by name).
deltactl table scan must print exactly the rows the helper computed from the source data;
the helper also reports each file's physical types, asserted here so the test exercises
what it claims."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from test_scan_dat import multiset, scan_rows  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "typed_table.py")


class ScanTypes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="scan_types_")
        p = subprocess.run([os.path.join(VENV, "bin", "python"), HELPER, cls.tmp],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError("typed_table.py failed: %s" % p.stderr[-2000:])
        cls.out = json.loads(p.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_files_have_the_physical_types(self):
        f0, f1 = self.out["physical"]
        self.assertEqual((f0["ts_ms"], f0["ts_ns"], f0["d32"], f0["d64"], f0["dfix"]),
                         ("INT64", "INT64", "INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"))
        self.assertEqual((f1["ts_ms"], f1["ntz"], f1["d32"]), ("INT96", "INT96", "FIXED_LEN_BYTE_ARRAY"))
        self.assertEqual((f0["wide_i"], f0["wide_f"], f0["wide_d"], f0["b"]),
                         ("INT32", "FLOAT", "INT32", "INT32"))

    def test_types_table(self):
        got, err = scan_rows(os.path.join(self.tmp, "types"))
        self.assertIsNone(err)
        want = self.out["tables"]["types"]
        self.assertEqual(len(got), 6)
        self.assertEqual(multiset(got), multiset(want))
        # the comparison is exact for these (no float rounding involved)
        self.assertEqual(sorted(json.dumps(r, sort_keys=True) for r in got if r["p"] == "one"),
                         sorted(json.dumps(r, sort_keys=True) for r in want if r["p"] == "one"))

    def test_column_mapping_by_id(self):
        got, err = scan_rows(os.path.join(self.tmp, "mapped"))
        self.assertIsNone(err)
        self.assertEqual(got, self.out["tables"]["mapped"])


if __name__ == "__main__":
    unittest.main()
