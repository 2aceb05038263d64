#!/usr/bin/python3
"""test_dml_random.py: a seeded randomised differential test of DELETE and UPDATE against
Spark with Delta. Two tables (partitioned with nulls; deletion vectors on and off) are
copied; each step draws a DELETE or an UPDATE with a random condition (comparisons, NULL
tests, AND/OR/NOT over ints, strings, doubles and the partition column) and random
assignments, runs it through deltactl --local on one copy and through Spark on the other,
and compares the result row and every row of both tables. DD_DML_SEED picks the seed
(default: random), DD_DML_ITERATIONS the steps per table (default 4); a failure prints
the seed and the statements so far."""
import os
import random
import shutil
import tempfile
import unittest

import dml_common as c
from dml_common import h, q
from spark_judge_client import SparkJudge

SEED = int(os.environ.get("DD_DML_SEED", random.SystemRandom().randrange(1 << 30)))
STEPS = int(os.environ.get("DD_DML_ITERATIONS", "4"))


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


class DmlRandom(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.judge = SparkJudge()
        cls.tmp = tempfile.mkdtemp(prefix="dd-dml-random-")

    @classmethod
    def tearDownClass(cls):
        cls.judge.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_table(self, name, props):
        r = random.Random("%d-%s" % (SEED, name))
        base = os.path.join(self.tmp, name)
        values = [rows_sql(r, 15, 15 * i) for i in range(3)]
        c.make_table(self.judge, base, "k INT, a INT, s STRING, d DOUBLE, p STRING", values,
                     "PARTITIONED BY (p)", props)
        a, b = c.copy_pair(base, self.tmp, name)
        done = []
        for _ in range(STEPS):
            where = cond(r)
            if r.random() < 0.5:
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
            self.assertEqual(c.affected(got), c.affected(want), what)
            self.assertEqual(c.spark_rows(self.judge, a), c.spark_rows(self.judge, b), what)

    def test_random_plain(self):
        self.run_table("plain", "")

    def test_random_deletion_vectors(self):
        self.run_table("dv", "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")


if __name__ == "__main__":
    print("DD_DML_SEED=%d" % SEED, flush=True)
    h.main()
