"""delta_connect_client.py: runs under build-test/venv (scripts/peers.sh). The real Delta
Connect client, delta-spark's delta.connect DeltaTable over a pyspark Spark Connect session
(SparkSession.builder.remote), against deltad: isDeltaTable, history, detail and a vacuum
(default retention), then history again. Prints one JSON object with what each returned, or "Type: message"
when it raised, for the caller to compare with deltad's own view of the table.

usage: delta_connect_client.py URL PATH   (URL: sc://host:port/;use_ssl=true;token=...)"""
import json
import sys

from delta.connect.tables import DeltaTable
from pyspark.sql import SparkSession


def attempt(fn):
    try:
        return {"ok": fn()}
    except Exception as e:  # the caller asserts which
        return {"error": "%s: %s" % (type(e).__name__, " | ".join(str(e).splitlines()[:4])[:800])}


def main():
    url, path = sys.argv[1:3]
    spark = SparkSession.builder.remote(url).getOrCreate()
    dt = lambda: DeltaTable.forPath(spark, path)  # noqa: E731
    out = {
        "isDeltaTable": attempt(lambda: bool(DeltaTable.isDeltaTable(spark, path))),
        "isDeltaTable_not": attempt(lambda: bool(DeltaTable.isDeltaTable(spark, path + "/_delta_log"))),
        "history": attempt(lambda: [
            {"version": int(r["version"]), "operation": r["operation"]}
            for r in dt().history().toPandas().to_dict("records")]),
        "detail": attempt(lambda: {
            k: (int(v) if k in ("numFiles", "sizeInBytes") else v)
            for k, v in dt().detail().toPandas()[["format", "numFiles", "sizeInBytes"]]
            .to_dict("records")[0].items()}),
        "vacuum": attempt(lambda: dt().vacuum() is None),
        "history_limit": attempt(lambda: dt().history(1).toPandas().shape[0]),
        "history_after": attempt(lambda: [r["operation"] for r in dt().history().toPandas()
                                          .to_dict("records")][:2]),
    }
    spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
