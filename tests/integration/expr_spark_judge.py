"""expr_spark_judge.py: integration.expr_spark_judge. Spark with Delta (the judge,
spark_judge_client.py) and store/expr (tests/unit/expr/expr_judge.c) evaluate the same
expressions over the same table: 240 rows, a column of every atomic Spark type, nulls in
each. For every expression both must agree: the result type (Spark's typeof), every row's
value, or, when Spark fails (ANSI overflow, division by zero, a bad cast), the same error
class. Usage: expr_spark_judge.py EXPR_JUDGE_BINARY (ctest passes it)."""
import decimal
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from spark_judge_client import SparkJudge, SparkJudgeError  # noqa: E402

EXPRS = [
    # arithmetic and Spark's result types
    "i + 1", "i + l", "i - sh", "sh * by", "by + by", "i * i", "l * 1000", "i / 3", "l / i",
    "i div 7", "i % 7", "-i", "abs(l)", "f + 1", "f * 2", "d / 4", "d + f", "i + d",
    "dec + 1", "dec * 2", "dec / 3", "dec % 7", "dec + i", "dec * dec", "dec - d",
    "dec / dec", "1.5 * dec", "CAST(i AS DECIMAL(5,1))", "i + '1'", "sh + by", "l - 1.25",
    # comparison
    "i = 0", "i > 100", "l <= 0", "d < 0.5", "f >= 0", "dec > 0", "s = 'abc'", "s < 'b'",
    "s <=> NULL", "i <=> sh", "dt > DATE'2020-01-01'", "ts < TIMESTAMP'2000-01-01 00:00:00'",
    "tn >= TIMESTAMP_NTZ'2050-01-01 00:00:00'", "bo = true", "bin = X'DD0EBE'", "i = '100'",
    "s = 100", "dt = '2024-02-29'", "i != by",
    # three-valued logic
    "i > 0 AND bo", "i > 0 OR bo", "NOT bo", "bo AND NULL", "bo OR NULL", "(i > 0) <=> bo",
    # nulls and conditionals
    "i IS NULL", "s IS NOT NULL", "coalesce(i, sh, 0)", "coalesce(s, 'none')", "nvl(d, -1)",
    "if(bo, i, l)", "CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero' END",
    "CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' END", "i IN (1, 2, 746)",
    "s IN ('abc', 'zzz', NULL)", "i NOT IN (0, 746)", "i BETWEEN -100 AND 100",
    "dt BETWEEN DATE'2000-01-01' AND DATE'2030-12-31'", "coalesce(dec, i)",
    # strings
    "upper(s)", "lower(s)", "length(s)", "substring(s, 2)", "substring(s, -3, 2)",
    "substring(s, 0, 1)", "concat(s, '-', i)", "s || s", "trim(s)", "ltrim(s)", "rtrim(s)",
    "s LIKE 'a%'", "s LIKE '%c'", "s LIKE '_b_'", "s NOT LIKE '%l%'", "s RLIKE '^[a-z]+$'",
    "s ILIKE 'ABC'", "length(bin)", "concat(bin, bin)",
    # dates and timestamps
    "year(dt)", "month(dt)", "day(dt)", "date_add(dt, 30)", "date_sub(dt, i)",
    "datediff(dt, DATE'2000-01-01')", "dt + 1", "year(ts)", "CAST(ts AS DATE)", "month(tn)",
    # casts
    "CAST(i AS STRING)", "CAST(l AS INT)", "CAST(d AS INT)", "CAST(d AS STRING)",
    "CAST(f AS STRING)", "CAST(dec AS STRING)", "CAST(dec AS INT)", "CAST(dec AS DOUBLE)",
    "CAST(d AS DECIMAL(10,3))", "CAST(i AS TINYINT)", "CAST(s AS INT)", "CAST(dt AS STRING)",
    "CAST(ts AS STRING)", "CAST(tn AS STRING)", "CAST(ts AS BIGINT)", "CAST(bo AS INT)",
    "CAST(i AS BOOLEAN)", "CAST(dt AS TIMESTAMP)", "CAST(tn AS TIMESTAMP)",
    "CAST(ts AS TIMESTAMP_NTZ)", "CAST(s AS BINARY)", "CAST(i AS DOUBLE) / 7",
    "CAST(f AS DOUBLE)", "CAST(sh AS STRING) || by", "CAST(s AS DOUBLE)",
    # more mixed types, errors and predicates
    "CAST(d AS TIMESTAMP)", "CAST(ts AS DOUBLE)", "coalesce(dt, ts)", "i IN (1.5, 2)",
    "s BETWEEN 'a' AND 'b'", "NOT (s LIKE 'a%')", "CASE WHEN bo THEN dec ELSE d END",
    "substring(bin, 2)", "length(i)", "upper(i)", "sh / by", "by div 0", "i % 0", "f / 0",
    "d % 2.5", "dec % 0", "l * l", "-by", "abs(by)", "CAST(s AS DATE)", "CAST(s AS BOOLEAN)",
    "CAST(l AS FLOAT)", "CAST(d AS FLOAT)", "CAST(f AS DECIMAL(10,2))",
    "CAST(dec AS DECIMAL(4,1))", "CAST(dec AS DECIMAL(20,5))", "ts = dt", "tn < ts",
    "datediff(ts, dt)", "date_add(ts, 1)", "year('2024-05-06')", "s <=> 'abc'", "bo IS TRUE",
    "bo IS NOT FALSE", "i IS DISTINCT FROM sh", "isnull(s)", "i + sh * by - l",
    "(i + 1) * (l - 2) / 3", "dec * i", "dec / i", "CAST(i AS DECIMAL(10,0)) / 7",
    "l % -3", "i div -2", "CAST(d AS BIGINT)", "CAST(f AS INT)", "s = 'Hello' OR i IS NULL",
    "contains(s, 'l')", "startswith(s, 'a')", "endswith(s, 'c')", "isnan(d)", "isnan(f)",
    # nullif, greatest/least, concat_ws, replace, hour/minute/second, floor/ceil
    "nullif(i, 0)", "nullif(s, 'abc')", "nullif(i, 1.5)", "nullif(dt, DATE'2000-01-01')",
    "greatest(i, sh, by)", "least(d, f)", "greatest(s, 'b')", "least(dt, DATE'2000-01-01')",
    "greatest(i, NULL)", "greatest(dec, i)", "least(l, dec)", "least(ts, tn)", "greatest(d, 0.5)",
    "concat_ws('-', s, i, NULL)", "concat_ws(s, 'a', 'b')", "concat_ws(',')", "concat_ws('', s, s)",
    "replace(s, 'b', 'XY')", "replace(s, 'a')", "replace(s, '', 'z')", "replace(s, s, 'q')",
    "hour(ts)", "minute(ts)", "second(ts)", "hour(tn)", "second(tn)", "hour('2020-01-01 05:06:07')",
    "minute(dt)", "floor(d)", "ceil(d)", "floor(dec)", "ceil(dec)", "floor(i)", "ceil(f)", "floor(-2.5)",
    "ceil(l)", "ceiling(dec)", "floor(CAST(i AS DECIMAL(10,0)))", "floor(s)",
    "to_date(ts)", "to_date(tn)", "to_date('2020-01-02')", "to_timestamp(dt)", "to_date(s)",
    "to_timestamp('2020-01-02 03:04:05')", "to_timestamp(tn)",
    # LIKE ... ESCAPE
    "s LIKE 'x!%y' ESCAPE '!'", "s LIKE 'a!_c' ESCAPE '!'", "s NOT LIKE '%!%%' ESCAPE '!'",
    "s ILIKE 'A#_C' ESCAPE '#'", "s LIKE 'a/_c' ESCAPE '/'", "s LIKE 'a\\_c' ESCAPE '!'",
    "s LIKE 'a_c' ESCAPE 'ab'",
    # round, bround (Spark's result types, text-based double rounding, negative scales)
    "round(d, 1)", "bround(d, 1)", "round(d)", "round(d, -1)", "round(f, 1)", "bround(f)",
    "round(dec, 1)", "round(dec, -2)", "bround(dec, 0)", "round(dec, 5)", "round(i, -1)",
    "bround(i, -1)", "round(l, -3)", "round(by, -2)", "round(sh, -4)", "round(i, 2)", "round(s)",
    "round(2.675, 2)", "round(CAST(2.675 AS DOUBLE), 2)", "bround(2.5)", "round(-2.5)",
    "bround(CAST(2.5 AS DOUBLE))", "round(CAST(0.35 AS FLOAT), 1)", "round(d, NULL)",
    "round(CAST(-0.1 AS DOUBLE))", "round(l, -19)", "round(CAST(127 AS TINYINT), -1)",
    "round(d, i)", "bround(CAST(-25 AS INT), -1)",
    # pmod
    "pmod(i, 7)", "pmod(l, -3)", "pmod(by, 3)", "pmod(sh, by)", "pmod(d, 2.5)", "pmod(f, 3)",
    "pmod(dec, 7)", "pmod(i, 0)", "pmod(dec, 0)", "pmod(dec, dec)", "pmod(i, NULL)",
    "pmod(-7, -3)", "pmod(CAST(-7.5 AS DOUBLE), 2)",
    # try_cast: the ANSI cast, NULL where it fails
    "try_cast(s AS INT)", "try_cast(s AS DATE)", "try_cast(l AS INT)", "try_cast(d AS DECIMAL(5,2))",
    "try_cast(dec AS TINYINT)", "try_cast(s AS DOUBLE)", "try_cast(ts AS STRING)",
    "try_cast(s AS BOOLEAN)", "try_cast(d AS INT)",
]


def err_class(msg):
    m = re.search(r"\[([A-Z_]+)", msg)
    return m.group(1) if m else msg[:80]


def same_value(t, a, b):
    if a is None or b is None:
        return a is None and b is None
    if t.startswith("decimal"):
        return decimal.Decimal(a) == decimal.Decimal(b)
    if t in ("double", "float") and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def main():
    driver = sys.argv[1]
    table = subprocess.run([driver, "table"], check=True, capture_output=True, text=True).stdout
    ours = subprocess.run([driver, "eval"], input="\n".join(EXPRS) + "\n", check=True,
                          capture_output=True, text=True).stdout.splitlines()
    assert len(ours) == len(EXPRS), (len(ours), len(EXPRS))
    judge = SparkJudge()
    failures = []
    try:
        judge.sql("CREATE OR REPLACE TEMP VIEW t AS " + table.strip())
        assert judge.sql("SELECT count(*) AS n FROM t") == [{"n": 240}]
        for expr, line in zip(EXPRS, ours):
            mine = json.loads(line)
            try:
                rows = judge.sql("SELECT id, typeof(%s) AS t, %s AS r FROM t ORDER BY id" % (expr, expr))
                spark = None
            except SparkJudgeError as e:
                rows, spark = None, str(e)
            if spark is not None:
                if "error" not in mine or err_class(mine["error"]) != err_class(spark):
                    failures.append("%s: Spark failed (%s), we answered %s"
                                    % (expr, spark[:200], line[:200]))
                continue
            if "error" in mine:
                failures.append("%s: we failed (%s), Spark answered" % (expr, mine["error"][:200]))
                continue
            types = {r["t"] for r in rows}
            if types != {mine["type"]}:
                failures.append("%s: type %s, Spark %s" % (expr, mine["type"], types))
                continue
            for r, v in zip(rows, mine["values"]):
                if not same_value(mine["type"], r["r"], v):
                    failures.append("%s: row %d: %r, Spark %r" % (expr, r["id"], v, r["r"]))
                    break
    finally:
        judge.close()
    for f in failures:
        print("MISMATCH", f)
    print("%d expressions, %d agree" % (len(EXPRS), len(EXPRS) - len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
