"""dwrite_connect.py: runs under build-test/venv. The real Spark Connect client (pyspark's,
as a Delta Connect user runs it) writes through deltad: each op of OPS_JSON through
peers/dwrite_ops.py's run(). Prints one JSON list of the answers ("ok" or "Type: message").

usage: dwrite_connect.py URL OPS_JSON"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers"))
import dwrite_ops  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402


def main():
    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    out = [dwrite_ops.run(spark, op) for op in json.loads(sys.argv[2])]
    print(json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    main()
