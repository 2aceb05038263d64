"""gen_table.py ROWS PATH [--partitioned]: writes a Delta table of ROWS rows and 10 columns
(long, int, double, float, string, date, timestamp, decimal(18,4), boolean and a low
cardinality string `part`, the partition column with --partitioned) with delta-rs, in
1,000,000-row batches so the generator never holds the table. Runs under build-test/venv."""
import datetime
import sys

import deltalake
import pyarrow as pa
import pyarrow.compute as pc

CHUNK = 1_000_000


def batch(start, n):
    ids = pa.array(range(start, start + n), pa.int64())
    i32 = pc.cast(pc.bit_wise_and(ids, 0x7FFFFFF), pa.int32())
    f64 = pc.divide(pc.cast(ids, pa.float64()), 7.0)
    f32 = pc.cast(f64, pa.float32())
    s = pc.binary_join_element_wise("row-", pc.cast(ids, pa.string()), "")
    d = pc.cast(pc.cast(pc.bit_wise_and(ids, 0x3FFF), pa.int32()), pa.date32())
    ts = pc.cast(pc.multiply(ids, 1_000_003), pa.timestamp("us", tz="UTC"))
    dec = pc.cast(pc.cast(pc.bit_wise_and(ids, 0xFFFFFFF), pa.int32()), pa.decimal128(18, 4))
    ok = pc.equal(pc.bit_wise_and(ids, 1), 0)
    part = pc.binary_join_element_wise("p", pc.cast(pc.bit_wise_and(ids, 7), pa.string()), "")
    return pa.record_batch([ids, i32, f64, f32, s, d, ts, dec, ok, part],
                           names=["id", "i32", "f64", "f32", "s", "d", "ts", "dec", "ok", "part"])


def main():
    rows, path = int(sys.argv[1]), sys.argv[2]
    partitioned = "--partitioned" in sys.argv[3:]
    schema = batch(0, 1).schema
    gen = (batch(i, min(CHUNK, rows - i)) for i in range(0, rows, CHUNK))
    reader = pa.RecordBatchReader.from_batches(schema, gen)
    deltalake.write_deltalake(path, reader, partition_by=["part"] if partitioned else None,
                              mode="overwrite")
    print("wrote %d rows to %s at %s" % (rows, path, datetime.datetime.now()))


if __name__ == "__main__":
    main()
