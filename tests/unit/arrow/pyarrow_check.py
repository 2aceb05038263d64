#!/usr/bin/python3
"""pyarrow_check.py ARW_KINDS OUT: writes the stream of the column-API kinds with arw_kinds
(C, dd_arrow) and reads it back with pyarrow (the venv's, through DD_VENV or the python
running this), comparing the schema and every cell with the rules arw_kinds.c fills from.
Fails (does not skip) when pyarrow cannot be imported."""
import decimal
import subprocess
import sys

import pyarrow as pa
import pyarrow.ipc as ipc

ROWS = 20
D = decimal.Decimal
decimal.getcontext().prec = 60  # 38-digit values must not round


def full_rows():
    rows = []
    for i in range(ROWS):
        dec = D((i - 10) * 123456789012).scaleb(-6)
        if i == ROWS - 1:
            dec = D(10 ** 38 - 1).scaleb(-6)
        m = [("k%d" % j, None if j == 1 else D(i * 100 + j).scaleb(-2)) for j in range(i % 3)]
        rows.append({
            "i8": None if i % 3 == 0 else (i * 13 - 128 + 128) % 256 - 128,
            "i16": i * 3000 - 32768,
            "f32": None if i == 4 else i / 8.0,
            "dec": None if i % 3 == 0 else dec,
            "dec0": D(99999 if i == ROWS - 1 else i * 7 - 99999),
            "nul": None,
            "l": None if i % 5 == 2 else [i - j for j in range(i % 4)],
            "m": None if i == 7 else m,
        })
    return rows


SCHEMA = pa.schema([
    pa.field("i8", pa.int8(), True),
    pa.field("i16", pa.int16(), False),
    pa.field("f32", pa.float32(), True),
    pa.field("dec", pa.decimal128(38, 6), True),
    pa.field("dec0", pa.decimal128(5, 0), False),
    pa.field("nul", pa.null(), True),
    pa.field("l", pa.list_(pa.field("element", pa.int8(), True)), True),
    pa.field("m", pa.map_(pa.field("key", pa.utf8(), False),
                          pa.field("value", pa.decimal128(10, 2), True)), True),
])


def main():
    tool, out = sys.argv[1:3]
    subprocess.check_call([tool, out])
    with open(out, "rb") as fp:
        reader = ipc.open_stream(fp)
        if not reader.schema.equals(SCHEMA):
            print("FAIL schema\n got  %s\n want %s" % (reader.schema, SCHEMA))
            return 1
        batches = list(reader)
    for b in batches:
        b.validate(full=True)
    full = full_rows()
    want = [full, [full[i] for i in (19, 2, 7, 7, 0, 13, 4)], full[5:17]]
    failures = 0
    if [b.num_rows for b in batches] != [len(w) for w in want]:
        print("FAIL batch sizes %s" % [b.num_rows for b in batches])
        return 1
    for n, (b, w) in enumerate(zip(batches, want)):
        got = b.to_pylist()
        for r, (g, x) in enumerate(zip(got, w)):
            if g != x:
                print("FAIL batch %d row %d:\n got  %r\n want %r" % (n, r, g, x))
                failures += 1
    print("%d batches, %d rows checked, %d failures" % (len(batches), sum(map(len, want)),
                                                      failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
