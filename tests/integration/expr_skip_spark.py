"""expr_skip_spark.py: integration.expr_skip_spark. Spark with Delta writes a partitioned
table in eight commits (so, many files) whose stats are Spark's own: timestamps truncated to
milliseconds, 40-character strings truncated to 32, NaN doubles, nulls in every column, a
null partition. For each predicate store/expr's data skipping (tests/unit/expr/
expr_skip_judge.c over the table's log) names the files it would skip; Spark, the judge,
counts the matching rows per file (_metadata.file_path). No skipped file may hold a matching
row, and the selective predicates must skip something (the check is not vacuous).
Usage: expr_skip_spark.py EXPR_SKIP_JUDGE_BINARY (ctest passes it)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from spark_judge_client import SparkJudge  # noqa: E402

LONG = "a" * 36  # stats keep a 32-character prefix

PREDICATES = [
    "id = 105", "id > 650", "id < 0", "id BETWEEN 200 AND 305", "id IN (5, 705)",
    "NOT (id >= 100)", "p = 'x'", "p IS NULL", "p <> 'y'", "p IS NOT NULL AND id > 400",
    "s = '%s3'" % LONG, "s > '%sz'" % LONG, "s < 'b'", "s LIKE 'a%%'",
    "ts > TIMESTAMP'2024-01-03 10:00:00.123'", "ts = TIMESTAMP'2024-01-03 10:00:00.123456'",
    "ts <= TIMESTAMP'2024-01-01 10:00:00.000001'", "tn < TIMESTAMP_NTZ'2024-01-02 00:00:00'",
    "d > 1000", "d < -1", "dec >= 50.5", "dec = 0.01", "dt = DATE'2024-01-05'", "b IS NULL",
    "b = true", "id = 105 OR p IS NULL", "id IS NULL", "id = NULL", "false",
]
# predicates that must skip at least one file
SELECTIVE = {"id = 105", "id > 650", "id < 0", "id BETWEEN 200 AND 305", "p IS NULL",
             "dt = DATE'2024-01-05'", "id = NULL", "false", "d < -1"}


def insert_sql(path, k):
    rows = []
    for j in range(10):
        i = k * 100 + j
        p = "NULL" if k == 6 else ("'x'" if j % 2 else "'y'")
        s = "NULL" if j == 9 else "'%s%d'" % (LONG, k)
        ts = "TIMESTAMP'2024-01-%02d 10:00:00.%06d'" % (k + 1, 123456 if j == 5 else j)
        tn = "TIMESTAMP_NTZ'2024-01-%02d 00:00:00.5'" % (k + 1)
        d = "CAST('NaN' AS DOUBLE)" if (k == 2 and j == 3) else "%d.5D" % (k * 10 + j)
        dec = "NULL" if j == 0 else "%d.%02d" % (k * 10, j)
        dt = "DATE'2024-01-%02d'" % (k + 1)
        b = "NULL" if j == 4 else ("true" if k % 2 else "false")
        idv = "NULL" if (k == 7 and j == 7) else str(i)
        rows.append("(%s, %s, %s, %s, %s, %s, %s, %s, %s)" % (idv, p, s, ts, tn, d, dec, dt, b))
    return "INSERT INTO delta.`%s` VALUES %s" % (path, ", ".join(rows))


def main():
    driver = sys.argv[1]
    work = tempfile.mkdtemp(prefix="dd_expr_skip_")
    path = os.path.join(work, "t")
    judge = SparkJudge()
    failures, skipped_any = [], set()
    try:
        judge.sql("CREATE TABLE delta.`%s` (id INT, p STRING, s STRING, ts TIMESTAMP, "
                  "tn TIMESTAMP_NTZ, d DOUBLE, dec DECIMAL(10,2), dt DATE, b BOOLEAN) "
                  "USING DELTA PARTITIONED BY (p)" % path)
        for k in range(8):
            judge.sql(insert_sql(path, k))
        run = subprocess.run([driver, path], input="\n".join(PREDICATES) + "\n",
                             capture_output=True, text=True)
        assert run.returncode == 0, "expr_skip_judge: %s" % run.stderr
        ours = run.stdout.splitlines()
        assert len(ours) == len(PREDICATES), ours
        for pred, line in zip(PREDICATES, ours):
            mine = json.loads(line)
            if "error" in mine:
                failures.append("%s: %s" % (pred, mine["error"]))
                continue
            rows = judge.sql("SELECT _metadata.file_path AS f, count(*) AS n FROM delta.`%s` "
                             "WHERE %s GROUP BY 1" % (path, pred))
            matching = {r["f"] for r in rows if r["n"] > 0}
            for f in mine["skipped"]:
                if any(m.endswith("/" + f) or m.endswith(f) for m in matching):
                    failures.append("%s: skipped %s, which holds matching rows" % (pred, f))
            if mine["skipped"]:
                skipped_any.add(pred)
            total = len(mine["kept"]) + len(mine["skipped"])
            print("%-50s kept %2d of %2d files, Spark matches in %2d"
                  % (pred, len(mine["kept"]), total, len(matching)))
        for pred in SELECTIVE - skipped_any:
            failures.append("%s: skipped nothing (a selective predicate)" % pred)
    finally:
        judge.close()
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
