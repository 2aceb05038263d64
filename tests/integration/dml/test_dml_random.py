#!/usr/bin/python3
"""test_dml_random.py: a seeded randomised differential test of DELETE, UPDATE and MERGE
against Spark with Delta. Two tables (partitioned with nulls; deletion vectors on and off)
are copied; each step draws a DELETE or an UPDATE with a random condition (comparisons, NULL
tests, AND/OR/NOT over ints, strings, doubles and the partition column) and random
assignments, or a MERGE from a random Parquet source (unique keys and a NULL key; random
WHEN MATCHED / NOT MATCHED / NOT MATCHED BY SOURCE clauses with random conditions, rows
moving between partitions), runs it through deltactl --local on one copy and through Spark on the other,
and compares the result row and every row of both tables; on a table with the change data
feed on, also every change row (table_changes_by_path) of the commits the step made. DD_DML_SEED picks the seed
(default: random), DD_DML_ITERATIONS the steps per table (default 5); a failure prints
the seed and the statements so far. The default run has these tests inside integration.dml
(one Spark for both); run alone, with more steps, as integration.dml_random (configured with
DD_LONG=1) or `DD_DML_ITERATIONS=40 python3 test_dml_random.py`."""
import json
import os
import random
import shutil
import tempfile
import unittest

import dml_common as c
from dml_common import h, q
from spark_judge_client import SparkJudge

SEED = int(os.environ.get("DD_DML_SEED", random.SystemRandom().randrange(1 << 30)))
STEPS = int(os.environ.get("DD_DML_ITERATIONS", "5"))


def atom(r):
    return r.choice([
        lambda: "a > %d" % r.randint(-5, 25),
        lambda: "a <= %d" % r.randint(-5, 25),
        lambda: "a IS NULL",
        lambda: "s = 's%d'" % r.randint(0, 9),
        lambda: "s IS NOT NULL AND s < 's%d'" % r.randint(0, 9),
        lambda: "p = '%s'" % r.choice("xyz"),
        lambda: "p IS NULL",
        lambda: "k %% %d = %d" % (r.randint(2, 4), r.randint(0, 1)),
        lambda: "d < %d.5" % r.randint(-3, 30),
        lambda: "d BETWEEN %d AND %d" % (r.randint(0, 10), r.randint(10, 30)),
    ])()


def cond(r, depth=0):
    if depth < 2 and r.random() < 0.4:
        return "(%s %s %s)" % (cond(r, depth + 1), r.choice(["AND", "OR"]), cond(r, depth + 1))
    if depth < 2 and r.random() < 0.15:
        return "NOT (%s)" % cond(r, depth + 1)
    return atom(r)


def assignments(r):
    pool = [("a", "a + %d" % r.randint(1, 9)), ("a", "NULL"), ("s", "concat(s, 'z')"),
            ("s", "upper(s)"), ("d", "d * 2"), ("d", "coalesce(d, 0) - 1"), ("a", "k")]
    r.shuffle(pool)
    out, seen = [], set()
    for col, e in pool[:r.randint(1, 3)]:
        if col not in seen:
            seen.add(col)
            out.append((col, e))
    return out


def rows_sql(r, n, start):
    vals = []
    for k in range(start, start + n):
        a = "NULL" if r.random() < 0.15 else str(r.randint(-5, 25))
        s = "NULL" if r.random() < 0.15 else "'s%d'" % r.randint(0, 9)
        d = "NULL" if r.random() < 0.1 else "%.2f" % r.uniform(-3, 30)
        p = r.choice(["'x'", "'y'", "'z'", "NULL"])
        vals.append("(%d, %s, %s, CAST(%s AS DOUBLE), %s)" % (k, a, s, d, p))
    return ", ".join(vals)


def merge_cond(r, side):
    """A clause condition: over both sides (WHEN MATCHED), the source (NOT MATCHED) or the
    target (NOT MATCHED BY SOURCE)."""
    src = ["src.a > %d" % r.randint(-5, 25), "src.d < %d.5" % r.randint(-3, 30), "src.p IS NULL"]
    tgt = ["t.a IS NULL", "t.p = '%s'" % r.choice("xyz"), "t.k % 2 = 0"]
    both = src + tgt + ["t.s IS NOT NULL AND t.s < src.s"]
    return r.choice({"both": both, "src": src, "tgt": tgt}[side])


def merge_step(r):
    """A random MERGE: (Spark's source rows SQL, deltactl arguments, Spark's clauses)."""
    keys = r.sample(range(-5, 60), r.randint(3, 12))
    vals = []
    for k in keys + ([None] if r.random() < 0.5 else []):
        a = "NULL" if r.random() < 0.15 else str(r.randint(-5, 25))
        sv = "NULL" if r.random() < 0.15 else "'s%d'" % r.randint(0, 9)
        d = "%.2f" % r.uniform(-3, 30)
        vals.append("(%s, %s, %s, CAST(%s AS DOUBLE), %s)" % ("NULL" if k is None else k, a, sv, d,
                                                           r.choice(["'x'", "'y'", "'z'", "NULL"])))
    rows = ", ".join(vals)
    args, spark = [], []

    def clause(flag, sql, sets=None, need=False):
        """need: a condition is required (only the last clause of a kind may omit it)."""
        side = "src" if "not-matched-insert" in flag else "tgt" if "by-source" in flag else "both"
        cnd = merge_cond(r, side) if need or r.random() < 0.5 else None
        args.extend([flag] + ([sets] if sets else []) + (["--and", cnd] if cnd else []))
        spark.append(sql.format(c=" AND " + cnd if cnd else "", s=sets or ""))

    nm = r.randint(0, 2)
    for i in range(nm):
        kind = r.choice(["update", "update_all", "delete"])
        if kind == "update":
            clause("--when-matched-update", "WHEN MATCHED{c} THEN UPDATE SET {s}",
                   r.choice(["a = src.a", "s = concat(t.s, src.s), d = src.d", "a = t.a + 1, p = src.p"]),
                   need=i < nm - 1)
        elif kind == "update_all":
            clause("--when-matched-update-all", "WHEN MATCHED{c} THEN UPDATE SET *", need=i < nm - 1)
        else:
            clause("--when-matched-delete", "WHEN MATCHED{c} THEN DELETE", need=i < nm - 1)
    if r.random() < 0.7:
        if r.random() < 0.5:
            clause("--when-not-matched-insert-all", "WHEN NOT MATCHED{c} THEN INSERT *")
        else:
            args.extend(["--when-not-matched-insert", "k = src.k, a = src.a * 2, p = 'x'"])
            spark.append("WHEN NOT MATCHED THEN INSERT (k, a, p) VALUES (src.k, src.a * 2, 'x')")
    if r.random() < 0.4:
        if r.random() < 0.5:
            clause("--when-not-matched-by-source-delete", "WHEN NOT MATCHED BY SOURCE{c} THEN DELETE")
        else:
            clause("--when-not-matched-by-source-update", "WHEN NOT MATCHED BY SOURCE{c} THEN UPDATE SET {s}",
                   "s = 'gone'")
    if not args:
        clause("--when-not-matched-insert-all", "WHEN NOT MATCHED{c} THEN INSERT *")
    return rows, args, spark


class RandomCases:
    """The random tests; a mixin for a test class with self.judge (Spark) and self.tmp (the
    default run has them in integration.dml's class, sharing its Spark)."""

    def last_version(self, path):
        log = os.path.join(path, "_delta_log")
        return max(int(f.split(".")[0]) for f in os.listdir(log) if f.endswith(".json"))

    def changes_since(self, path, since):
        """Spark's change rows of the commits after version since, without their version and
        time (the copies may commit a no-op step differently)."""
        v = self.last_version(path)
        if v <= since:
            return [], v
        rows = self.judge.sql("SELECT * FROM table_changes_by_path('%s', %d, %d)" % (path, since + 1, v))
        for row in rows:
            row.pop("_commit_timestamp")
            row.pop("_commit_version")
        return sorted(json.dumps(row, sort_keys=True) for row in rows), v

    def run_table(self, name, props):
        r = random.Random("%d-%s" % (SEED, name))
        base = os.path.join(self.tmp, name)
        values = [rows_sql(r, 15, 15 * i) for i in range(3)]
        c.make_table(self.judge, base, "k INT, a INT, s STRING, d DOUBLE, p STRING", values,
                     "PARTITIONED BY (p)", props)
        a, b = c.copy_pair(base, self.tmp, name)
        cdf = "enableChangeDataFeed" in props
        va, vb = self.last_version(a), self.last_version(b)
        done = []
        for step in range(STEPS):
            where = cond(r)
            kind = r.random()
            if kind < 0.35:
                src = os.path.join(self.tmp, "%s-src-%d" % (name, step))
                rows, margs, clauses = merge_step(r)
                self.judge.sql("INSERT OVERWRITE DIRECTORY '%s' USING parquet SELECT /*+ REPARTITION(1) */ * "
                               "FROM VALUES %s AS v(k, a, s, d, p)" % (src, rows))
                pq = [os.path.join(src, f) for f in os.listdir(src) if f.endswith(".parquet")][0]
                # (the source alias is not "s": the tables have a column s)
                stmt = "MERGE INTO {t} t USING parquet.`%s` src ON t.k = src.k %s" % (src, " ".join(clauses))
                args = ["merge", a, "--source", pq, "--source-alias", "src", "--on", "t.k = src.k"] + margs
            elif kind < 0.65:
                stmt = "DELETE FROM {t} WHERE %s" % where
                args = ["delete", a, "--where", where]
            else:
                sets = assignments(r)
                stmt = "UPDATE {t} SET %s WHERE %s" % (", ".join("%s = %s" % s for s in sets), where)
                args = ["update", a] + sum((["--set", "%s=%s" % s] for s in sets), []) + ["--where", where]
            done.append(stmt)
            what = "seed %d (DD_DML_SEED=%d), table %s, statements: %s" % (SEED, SEED, name, done)
            want = self.judge.sql(stmt.format(t=q(b)))
            try:
                got = c.deltactl(args)
            except AssertionError as e:
                raise AssertionError("%s: %s" % (what, e))
            if args[0] == "merge":
                self.assertEqual([int(got[0][k]) for k in ("numAffectedRows", "numUpdatedRows", "numDeletedRows",
                                                           "numInsertedRows")], c.merge_counts(want), what)
            else:
                self.assertEqual(c.affected(got), c.affected(want), what)
            self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), what)
            if cdf:
                ga, va = self.changes_since(a, va)
                gb, vb = self.changes_since(b, vb)
                self.assertEqual(ga, gb, "change rows: " + what)

    def test_random_plain(self):
        self.run_table("rnd-plain", "")

    def test_random_deletion_vectors(self):
        self.run_table("rnd-dv", "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")

    def test_random_change_feed(self):
        self.run_table("rnd-cdf", "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', "
                       "'delta.enableDeletionVectors' = 'true')")


class DmlRandom(RandomCases, unittest.TestCase):
    """Alone (integration.dml_random, registered with DD_LONG=1), with its own Spark."""

    @classmethod
    def setUpClass(cls):
        cls.judge = SparkJudge()
        cls.tmp = tempfile.mkdtemp(prefix="dd-dml-random-")

    @classmethod
    def tearDownClass(cls):
        cls.judge.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)


if __name__ == "__main__":
    print("DD_DML_SEED=%d" % SEED, flush=True)
    h.main()
