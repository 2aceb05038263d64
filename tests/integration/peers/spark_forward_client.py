"""spark_forward_client.py: runs under build-test/venv. The real Delta Connect client
(delta-spark's delta.connect DeltaTable over pyspark's Spark Connect session) drives one
deltad through the operations integration.spark_forward compares between a deltad that
forwards them to Spark and one that runs them itself: delete (SQL text), update (Column
expressions), merge from a Delta table source and from local rows
(createDataFrame: sent to Spark as VALUES), optimize, a read of the table (toDF),
spark.sql SELECT and DELETE naming the table by its catalog name, an update of a column
that does not exist (an error on both), history(1) (not forwarded: a query over a Delta Connect relation other than a scan) and vacuum. Prints one JSON object: per step its rows, or "Type: message" when it raised.

usage: spark_forward_client.py URL TABLE SOURCE CATALOG_NAME"""
import json
import sys
import time

from delta.connect.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T


def rows(df):
    return [{k: (int(v) if hasattr(v, "item") else v) for k, v in r.items()}
            for r in df.toPandas().to_dict("records")]


def main():
    url, table, source, name = sys.argv[1:5]
    spark = SparkSession.builder.remote(url).getOrCreate()
    dt = DeltaTable.forPath(spark, table)
    steps = [
        ("delete", lambda: rows(dt.delete("id < 3"))),
        ("update", lambda: rows(dt.update((F.col("id") == 5) | (F.col("s") == F.lit("s-9")),
                                          {"s": F.lit("five"), "v": F.col("v") * 2 + 1}))),
        ("merge", lambda: rows(dt.alias("t").merge(spark.read.format("delta").load(source).alias("src"), "t.id = src.id")
                               .whenMatchedUpdate(set={"v": "src.v", "s": "src.s"})
                               .whenNotMatchedInsertAll().execute())),
        ("merge_local", lambda: rows(dt.alias("t").merge(spark.createDataFrame(
            [(3, 33, "it's \\ 3"), (99, 990, None)], T.StructType([T.StructField("id", T.LongType()),
                                                              T.StructField("v", T.LongType()),
                                                              T.StructField("s", T.StringType())])).alias("l"),
            "t.id = l.id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())),
        ("optimize", lambda: len(rows(dt.optimize().executeCompaction()))),
        ("read", lambda: rows(dt.toDF().orderBy("id"))),
        ("sql_name", lambda: rows(spark.sql("SELECT count(*) AS n, sum(v) AS sv FROM %s WHERE id > 10" % name))),
        ("sql_delete", lambda: rows(spark.sql("DELETE FROM %s WHERE id = 24" % name))),
        ("bad_update", lambda: rows(dt.update("id = 1", {"no_such_column": "1"}))),  # refused by both
        ("history", lambda: len(rows(dt.history(1)))),  # a Limit over DescribeHistory: kept in deltad
        ("vacuum", lambda: dt.vacuum() is None or True),
    ]
    out = {}
    for k, fn in steps:
        t0 = time.time()
        try:
            out[k] = {"ok": fn()}
        except Exception as e:  # the caller asserts which
            out[k] = {"error": "%s: %s" % (type(e).__name__, " | ".join(str(e).splitlines()[:4])[:800])}
        print("%s %.2f s" % (k, time.time() - t0), file=sys.stderr)
    spark.stop()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
