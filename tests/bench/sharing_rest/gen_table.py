"""gen_table.py DIR [FILES] [PARTS]: writes a log-only Delta table with FILES add actions
(default 100000) spread over PARTS values of the partition column `part` (default 100),
in one commit. The data files do not exist: QueryTable only reads the log."""
import json
import os
import sys
import uuid


def main():
    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    parts = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    log = os.path.join(root, "_delta_log")
    os.makedirs(log, exist_ok=True)
    schema = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "part", "type": "string", "nullable": True, "metadata": {}}]}
    with open(os.path.join(log, "%020d.json" % 0), "w") as f:
        f.write(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}) + "\n")
        f.write(json.dumps({"metaData": {
            "id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps(schema), "partitionColumns": ["part"],
            "configuration": {}, "createdTime": 1700000000000}}) + "\n")
        for i in range(n):
            p = "p%03d" % (i % parts)
            stats = {"numRecords": 10, "minValues": {"id": i * 10},
                     "maxValues": {"id": i * 10 + 9}, "nullCount": {"id": 0}}
            f.write(json.dumps({"add": {
                "path": "part=%s/part-%06d.snappy.parquet" % (p, i),
                "partitionValues": {"part": p}, "size": 1000 + i % 97,
                "modificationTime": 1700000000000, "dataChange": True,
                "stats": json.dumps(stats)}}) + "\n")


if __name__ == "__main__":
    main()
