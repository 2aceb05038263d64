"""dml_connect.py: runs under build-test/venv. The real Delta Connect client's DELETE and
UPDATE against deltad, as a user calls them: DeltaTable.forPath(spark, path).delete(cond)
/ .update(cond, set), with SQL text or Column arguments, and spark.sql("DELETE ..." /
"UPDATE ..."), each result collected with toPandas(). Prints one JSON object: per op its
result rows or "Type: message" when it raised.

usage: dml_connect.py URL OPS_JSON
  OPS_JSON: a list of {"path": P, "kind": "delete"|"update"|"sql", "cond": text|null,
            "cond_py": python expression over F (pyspark.sql.functions) | null,
            "set": {col: text} | null, "set_py": python dict expression | null, "sql": text}"""
import json
import sys

from delta.connect.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def rows(df):
    return [{k: (int(v) if hasattr(v, "item") else v) for k, v in r.items()}
            for r in df.toPandas().to_dict("records")]


def run(spark, op):
    if op["kind"] == "sql":
        return rows(spark.sql(op["sql"]))
    dt = DeltaTable.forPath(spark, op["path"])
    cond = eval(op["cond_py"], {"F": F}) if op.get("cond_py") else op.get("cond")
    if op["kind"] == "delete":
        return rows(dt.delete(cond) if cond is not None else dt.delete())
    st = eval(op["set_py"], {"F": F}) if op.get("set_py") else op["set"]
    return rows(dt.update(cond, st) if cond is not None else dt.update(set=st))


def main():
    url, ops = sys.argv[1], json.loads(sys.argv[2])
    spark = SparkSession.builder.remote(url).getOrCreate()
    out = []
    for op in ops:
        try:
            out.append({"ok": run(spark, op)})
        except Exception as e:  # the caller asserts which
            out.append({"error": "%s: %s" % (type(e).__name__, " | ".join(str(e).splitlines()[:4])[:800])})
    spark.stop()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
