"""dwrite_ops.py: one DataFrame write or SQL statement run the same way on any SparkSession:
the Spark Connect client against deltad (dwrite/dwrite_connect.py) and the local Spark judge
(spark_judge.py's "dfwrite" op), so both sides of integration.dwrite_spark run the very same
pyspark calls. Answers "ok" or "Type: message" (its first lines joined by " | ")."""
import datetime
import decimal

TYPES = {"INT": "IntegerType", "BIGINT": "LongType", "STRING": "StringType", "DOUBLE": "DoubleType",
         "BOOLEAN": "BooleanType", "DATE": "DateType", "SMALLINT": "ShortType", "TINYINT": "ByteType",
         "FLOAT": "FloatType", "TIMESTAMP": "TimestampType"}


def struct(ddl):
    """A "name TYPE, ..." schema as a StructType (DECIMAL(p,s) too)."""
    from pyspark.sql import types as T
    fields = []
    for f in ddl.split(";") if ";" in ddl else ddl.split(","):
        name, typ = f.split()[0], f.split()[1].upper()
        if typ.startswith("DECIMAL"):
            p, s = typ[8:-1].split(":") if ":" in typ else typ[8:-1].split("/")
            t = T.DecimalType(int(p), int(s))
        else:
            t = getattr(T, TYPES[typ])()
        fields.append(T.StructField(name, t))
    return T.StructType(fields)


def _value(v, typ):
    if v is None:
        return None
    if typ == "DateType":
        return datetime.date.fromisoformat(v)
    if typ == "TimestampType":
        return datetime.datetime.fromisoformat(v)
    if typ == "DecimalType":
        return decimal.Decimal(v)
    return v


def source(spark, op):
    if "rows" in op:
        st = struct(op["schema"])
        rows = [tuple(_value(v, type(f.dataType).__name__) for v, f in zip(r, st.fields)) for r in op["rows"]]
        df = spark.createDataFrame(rows, st)
    elif "source_path" in op:
        df = spark.read.format("delta").load(op["source_path"])
    else:
        df = spark.range(op["range"])
    if op.get("filter"):
        df = df.filter(op["filter"])
    if op.get("select"):
        df = df.selectExpr(*op["select"])
    return df


def run(spark, op):
    try:
        if op["kind"] == "sql":
            spark.sql(op["sql"]).collect()
            return "ok"
        if op["kind"] == "writeTo":
            w = source(spark, op).writeTo(op["table"]).using("delta")
            if op.get("partitionedBy"):
                from pyspark.sql import functions as F
                w = w.partitionedBy(*[F.col(c) for c in op["partitionedBy"]])
            for k, v in (op.get("properties") or {}).items():
                w = w.tableProperty(k, v)
            if op["mode"] == "overwrite":
                from pyspark.sql import functions as F
                w.overwrite(F.lit(True))
            else:
                getattr(w, op["mode"])()
            return "ok"
        w = source(spark, op).write.format("delta")
        if op.get("mode"):
            w = w.mode(op["mode"])
        if op.get("partitionBy"):
            w = w.partitionBy(*op["partitionBy"])
        for k, v in (op.get("options") or {}).items():
            w = w.option(k, v)
        if op.get("method") == "saveAsTable":
            w.saveAsTable(op["table"])
        elif op.get("method") == "insertInto":
            w.insertInto(op["table"], overwrite=op.get("mode") == "overwrite")
        else:
            w.save(op["path"])
        return "ok"
    except Exception as e:  # the caller compares failures too
        text = " | ".join(line.strip() for line in str(e).strip().splitlines()[:12])
        return "%s: %s" % (type(e).__name__, text[:1500])
