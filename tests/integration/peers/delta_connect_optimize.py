"""delta_connect_optimize.py: runs under build-test/venv (scripts/peers.sh). The real Delta
Connect client's OPTIMIZE against deltad: DeltaTable.forPath(spark, path).optimize()
.where(FILTER).executeCompaction() and .executeZOrderBy(COLS), and the SQL statement
OPTIMIZE ... WHERE ... ZORDER BY (...), each collected with toPandas() as a user would. Prints one JSON object: for each call the result row (path and
the metrics struct as a dict) or "Type: message" when it raised.

usage: delta_connect_optimize.py URL PATH FILTER ZCOL   (URL: sc://host:port/;use_ssl=true;token=...)"""
import json
import sys

from delta.connect.tables import DeltaTable
from pyspark.sql import SparkSession


def attempt(fn):
    try:
        return {"ok": fn()}
    except Exception as e:  # the caller asserts which
        return {"error": "%s: %s" % (type(e).__name__, " | ".join(str(e).splitlines()[:4])[:800])}


def row(df):
    r = df.toPandas().to_dict("records")[0]
    m = r["metrics"]
    return {"path": r["path"], "metrics": {k: (dict(v) if hasattr(v, "keys") else v)
                                           for k, v in dict(m).items()}}


def main():
    url, path, flt, zcol = sys.argv[1:5]
    spark = SparkSession.builder.remote(url).getOrCreate()
    dt = DeltaTable.forPath(spark, path)
    out = {
        "where": attempt(lambda: row(dt.optimize().where(flt).executeCompaction())),
        "compaction": attempt(lambda: row(dt.optimize().executeCompaction())),
        "zorder": attempt(lambda: row(dt.optimize().executeZOrderBy(zcol))),
        "sql": attempt(lambda: row(spark.sql("OPTIMIZE delta.`%s` WHERE %s ZORDER BY (`%s`)"
                                             % (path, flt, zcol)))),
        "history": attempt(lambda: [r["operation"] for r in dt.history().toPandas()
                                    .to_dict("records")][:4]),
    }
    spark.stop()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
