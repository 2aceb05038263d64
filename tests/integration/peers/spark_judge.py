"""spark_judge.py: runs under build-test/venv. A long-lived Spark (local[2]) session with
Delta (delta-spark 4.4.0, spark.jars.packages io.delta:delta-spark_2.13:4.4.0), the judge
of deltad's data plane (with DD_SPARK_S3_ENDPOINT set, also hadoop-aws for s3a:// tables in
that S3 emulator): it answers JSON requests read one per line on stdin with one JSON
line each on stdout.

Requests:
  {"op": "ping"}
  {"op": "sql", "sql": TEXT}                       -> {"ok": true, "columns": [...], "rows": [[...]]}
  {"op": "read", "path": P, "version": N|null, "columns": [...]|null, "where": SQL|null}
                                                   -> the same shape (a Delta read of P)
  {"op": "optimize", "path": P, "dest": DIR|null, "where": SQL|null, "zorder": [...]|null}
      copies the table P to DIR (or a new temporary directory), runs OPTIMIZE on the copy
                                                   -> {"ok": true, "path": COPY, "columns", "rows"}
  {"op": "dfwrite", "ops": [...]}                  -> {"ok": true, "answers": [...]}
      each op through dwrite_ops.run (a DataFrame write or a statement; see dwrite_ops.py)
  {"op": "quit"}
A failed request answers {"ok": false, "error": "Type: message"}; the judge keeps going.

Values are JSON-safe: decimals as strings, binary as hex, dates and timestamps ISO 8601
(timestamps in UTC, "YYYY-MM-DDTHH:MM:SS.ffffff", no zone suffix), structs as objects, arrays
as lists, maps as objects (keys that are not strings as their JSON text), variants as
{"value": hex, "metadata": hex}, NaN/Infinity as the strings "NaN", "Infinity", "-Infinity".

The first line written is {"ready": true, "spark": VERSION} once Spark has started, or
{"ok": false, "fatal": "..."} followed by exit status 1 when it cannot start."""
import datetime
import decimal
import json
import os
import shutil
import sys
import tempfile
import time

import jsonsafe

os.environ["TZ"] = "UTC"  # collect() converts timestamps in the Python process's zone
time.tzset()

# The protocol owns the real stdout; Spark, py4j and the JVM write to stderr.
OUT = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)


def answer(obj):
    OUT.write(json.dumps(obj, allow_nan=False) + "\n")
    OUT.flush()


def js(v):
    """A collected Spark value as JSON-safe data (see the module comment)."""
    from pyspark.sql import Row
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return jsonsafe.floating(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, datetime.datetime):
        return jsonsafe.timestamp(v)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, Row):
        return {k: js(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            kk = js(k)
            out[kk if isinstance(kk, str) else json.dumps(kk, sort_keys=True)] = js(x)
        return out
    if isinstance(v, (list, tuple)):
        return [js(x) for x in v]
    if hasattr(v, "metadata") and hasattr(v, "value"):  # pyspark.sql.VariantVal
        return {"value": bytes(v.value).hex(), "metadata": bytes(v.metadata).hex()}
    return str(v)


def table(df):
    cols = df.columns
    return {"ok": True, "columns": cols, "rows": [[js(x) for x in r] for r in df.collect()]}


def quote_path(p):
    return "delta.`%s`" % p.replace("`", "``")


def do_read(spark, req):
    r = spark.read.format("delta")
    if req.get("version") is not None:
        r = r.option("versionAsOf", int(req["version"]))
    df = r.load(req["path"])
    if req.get("where"):
        df = df.where(req["where"])
    if req.get("columns"):
        df = df.select(*req["columns"])
    return table(df)


def do_optimize(spark, req):
    dest = req.get("dest") or tempfile.mkdtemp(prefix="spark_judge_opt_")
    copy = os.path.join(dest, os.path.basename(os.path.normpath(req["path"])))
    shutil.copytree(req["path"], copy)
    sql = "OPTIMIZE " + quote_path(copy)
    if req.get("where"):
        sql += " WHERE " + req["where"]
    if req.get("zorder"):
        sql += " ZORDER BY (%s)" % ", ".join("`%s`" % c for c in req["zorder"])
    res = table(spark.sql(sql))
    res["path"] = copy
    return res


# hadoop-aws of pyspark's own Hadoop (pyspark/jars/hadoop-client-api-3.5.0.jar), for s3a://
HADOOP_AWS = "org.apache.hadoop:hadoop-aws:3.5.0"


def start():
    from pyspark.sql import SparkSession
    s3 = os.environ.get("DD_SPARK_S3_ENDPOINT")
    b = SparkSession.builder.master("local[2]").appName("deltad-spark-judge")
    if s3:  # an S3 emulator: s3a:// with its keys, path-style, plain HTTP
        b = (b.config("spark.jars.packages", "io.delta:delta-spark_2.13:4.4.0," + HADOOP_AWS)
             .config("spark.hadoop.fs.s3a.endpoint", s3)
             .config("spark.hadoop.fs.s3a.path.style.access", "true")
             .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
             .config("spark.hadoop.fs.s3a.access.key", "test")
             .config("spark.hadoop.fs.s3a.secret.key", "test")
             .config("spark.hadoop.fs.s3a.endpoint.region", "us-east-1")
             .config("spark.hadoop.fs.s3a.aws.credentials.provider",
                     "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"))
    else:
        b = b.config("spark.jars.packages", "io.delta:delta-spark_2.13:4.4.0")
    return (b
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.databricks.delta.snapshotPartitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
            .getOrCreate())


def main():
    try:
        spark = start()
        spark.range(1).collect()  # fail here, not on the first request
    except Exception as e:
        answer({"ok": False, "fatal": "%s: %s" % (type(e).__name__, str(e)[:2000])})
        return 1
    answer({"ready": True, "spark": spark.version})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "quit":
                answer({"ok": True})
                break
            if op == "ping":
                res = {"ok": True}
            elif op == "sql":
                res = table(spark.sql(req["sql"]))
            elif op == "read":
                res = do_read(spark, req)
            elif op == "optimize":
                res = do_optimize(spark, req)
            elif op == "dfwrite":
                import dwrite_ops
                res = {"ok": True, "answers": [dwrite_ops.run(spark, o) for o in req["ops"]]}
            else:
                res = {"ok": False, "error": "ValueError: unknown op %r" % op}
        except Exception as e:  # the caller asserts on failures too
            msg = " | ".join(str(e).splitlines()[:6])[:2000]
            res = {"ok": False, "error": "%s: %s" % (type(e).__name__, msg)}
        answer(res)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
