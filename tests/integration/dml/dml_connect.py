"""dml_connect.py: runs under build-test/venv. The real Delta Connect client's DELETE and
UPDATE against deltad, as a user calls them: DeltaTable.forPath(spark, path).delete(cond)
/ .update(cond, set), with SQL text or Column arguments, and spark.sql("DELETE ..." /
"UPDATE ..."), each result collected with toPandas(). Prints one JSON object: per op its
result rows or "Type: message" when it raised.

usage: dml_connect.py URL OPS_JSON
  OPS_JSON: a list of {"path": P, "kind": "delete"|"update"|"sql", "cond": text|null,
            "cond_py": python expression over F (pyspark.sql.functions) | null,
            "set": {col: text} | null, "set_py": python dict expression | null, "sql": text}
  or {"kind": "merge", "path": P, "source_rows": [[...]], "source_schema": DDL,
      "source_path": P | null (a Delta table read instead of rows), "source_filter": text | null,
      "target_alias", "source_alias", "on": text, "clauses": [{"when": "matched" |
      "not_matched" | "nmbs", "action": "update" | "update_all" | "delete" | "insert" |
      "insert_all", "cond": text | null, "set": {col: text}}], "evolve": bool}
  or {"kind": "conf", "key": K, "value": V | null (unset)}: the session's Spark conf"""
import json
import sys

from delta.connect.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T


def rows(df):
    return [{k: (int(v) if hasattr(v, "item") else v) for k, v in r.items()}
            for r in df.toPandas().to_dict("records")]


def struct(ddl):
    """A "name TYPE, ..." schema as a StructType (a DDL string would need AnalyzePlan)."""
    types = {"INT": T.IntegerType(), "BIGINT": T.LongType(), "STRING": T.StringType(),
             "DOUBLE": T.DoubleType(), "BOOLEAN": T.BooleanType(), "DATE": T.DateType()}
    return T.StructType([T.StructField(f.split()[0], types[f.split()[1].upper()])
                         for f in ddl.split(",")])


def merge(spark, op):
    dt = DeltaTable.forPath(spark, op["path"])
    if op.get("target_alias"):
        dt = dt.alias(op["target_alias"])
    if op.get("source_path"):
        src = spark.read.format("delta").load(op["source_path"])
    else:
        src = spark.createDataFrame(op["source_rows"], struct(op["source_schema"]))
    if op.get("source_filter"):
        src = src.filter(op["source_filter"])
    if op.get("source_alias"):
        src = src.alias(op["source_alias"])
    b = dt.merge(src, op["on"])
    if op.get("evolve"):
        b = b.withSchemaEvolution()
    for cl in op["clauses"]:
        w, a, cond, st = cl["when"], cl["action"], cl.get("cond"), cl.get("set")
        if w == "matched":
            b = {"update": lambda: b.whenMatchedUpdate(cond, st), "update_all": lambda: b.whenMatchedUpdateAll(cond),
                 "delete": lambda: b.whenMatchedDelete(cond)}[a]()
        elif w == "not_matched":
            b = b.whenNotMatchedInsert(cond, st) if a == "insert" else b.whenNotMatchedInsertAll(cond)
        else:
            b = b.whenNotMatchedBySourceUpdate(cond, st) if a == "update" else b.whenNotMatchedBySourceDelete(cond)
    return rows(b.execute())


def run(spark, op):
    if op["kind"] == "conf":
        if op["value"] is None:
            spark.conf.unset(op["key"])
        else:
            spark.conf.set(op["key"], op["value"])
        return []
    if op["kind"] == "merge":
        return merge(spark, op)
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
