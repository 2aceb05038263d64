"""spark_query_client.py: runs under build-test/venv. The real Delta Connect client (pyspark's
Spark Connect session with delta-spark's delta.connect DeltaTable) runs DataFrame and SQL
cases against deltad and prints one JSON object: per case id, {"columns", "rows"} for a
DataFrame (collect()), {"value"} for anything else (a show() text, a count, toPandas()
records), or {"error": "Type: message"}. Values are made JSON-safe by the Spark judge's own
converter (spark_judge.js), so both sides compare alike.

usage: spark_query_client.py URL CASES.json   (cases: [{"id": ..., "code": PYTHON-EXPR}];
the expression sees spark, F, DeltaTable and the variables of CASES.json's "vars")"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_judge as sj  # noqa: E402  (js, answer: the judge's JSON conventions)
from delta.connect.tables import DeltaTable  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
import pyspark.sql.functions as F  # noqa: E402


def run(env, code):
    try:
        v = eval(code, env)  # test cases written in tests/integration/test_connect_query.py
        if isinstance(v, DataFrame):
            return {"columns": v.columns, "rows": [[sj.js(x) for x in r] for r in v.collect()]}
        return {"value": sj.js(v)}
    except Exception as e:  # the caller asserts which
        return {"error": "%s: %s" % (type(e).__name__, " | ".join(str(e).splitlines()[:4])[:1200])}


def main():
    url, cases_file = sys.argv[1:3]
    with open(cases_file) as f:
        spec = json.load(f)
    spark = SparkSession.builder.remote(url).getOrCreate()
    env = dict(spec.get("vars", {}), spark=spark, F=F, DeltaTable=DeltaTable)
    out = {c["id"]: run(env, c["code"]) for c in spec["cases"]}
    spark.stop()
    sj.answer(out)


if __name__ == "__main__":
    main()
