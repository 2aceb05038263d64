"""delta_connect_forname.py: runs under build-test/venv (scripts/peers.sh). The real Delta
Connect client against deltad, naming a table by its catalog name as users of a catalog do:
DeltaTable.forName(spark, NAME) (history, detail, toDF), spark.table(NAME) (a Spark Connect
NamedTable) and spark.sql("SELECT ... FROM NAME"). Prints one JSON object with what each
returned, or "Type: message" when it raised.

usage: delta_connect_forname.py URL NAME   (URL: sc://host:port/;use_ssl=true;token=...)"""
import json
import sys

from delta.connect.tables import DeltaTable
from delta_connect_client import attempt  # beside this file
from pyspark.sql import SparkSession


def ids(df):
    return sorted(int(r["id"]) for r in df.toPandas().to_dict("records"))


def main():
    url, name = sys.argv[1:3]
    spark = SparkSession.builder.remote(url).getOrCreate()
    out = {
        "history": attempt(lambda: [r["operation"] for r in DeltaTable.forName(spark, name).history()
                                    .toPandas().to_dict("records")]),
        "detail": attempt(lambda: DeltaTable.forName(spark, name).detail().toPandas()["format"][0]),
        "toDF": attempt(lambda: ids(DeltaTable.forName(spark, name).toDF())),
        "table": attempt(lambda: ids(spark.table(name))),
        "sql": attempt(lambda: ids(spark.sql("SELECT id FROM %s WHERE id > 1" % name))),
        "missing": attempt(lambda: ids(DeltaTable.forName(spark, name + "_nope").toDF())),
    }
    spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
