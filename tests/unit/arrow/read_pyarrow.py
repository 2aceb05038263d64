"""read_pyarrow.py TOOL OUTDIR: the dd_arrow IPC reader against streams pyarrow writes.
Each table below is written by pyarrow, read by arw_read_tool (dd_arrow's reader) and
written back by dd_arrow's writer; pyarrow must read back the same schema and rows.
Streams dd_arrow does not accept (unsigned ints, dictionaries, compression) must be
refused with a message, and every truncation and many byte flips of a valid stream must be
refused or read, never crash (the tool runs under ASan/UBSan in the test build).
Runs under build-test/venv (pyarrow); exits 77 when pyarrow is missing."""
import datetime as dt
import os
import random
import subprocess
import sys

try:
    import pyarrow as pa
except ImportError:
    sys.exit(77)

TOOL, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
failures = []


def stream(table):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=3):
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def run(data, name):
    path = os.path.join(OUT, name + ".arrows")
    with open(path, "wb") as f:
        f.write(data)
    return subprocess.run([TOOL, path], capture_output=True)


def check(name, table, want=None):
    p = run(stream(table), name)
    table = want if want is not None else table
    if p.returncode != 0:
        failures.append("%s: refused: %s" % (name, p.stderr.decode()))
        return None
    if b"runtime error" in p.stderr:
        failures.append("%s: %s" % (name, p.stderr.decode()))
    back = pa.ipc.open_stream(p.stdout).read_all()
    if back.schema.names != table.schema.names or back.to_pylist() != table.to_pylist():
        failures.append("%s: read back %s, wrote %s" % (name, back.to_pylist()[:3], table.to_pylist()[:3]))
    for a, b in zip(back.schema, table.schema):
        if a.type != b.type:
            failures.append("%s: column %s type %s, wrote %s" % (name, b.name, a.type, b.type))
    return p


UTC = dt.timezone.utc
every = pa.table({
    "s": pa.array(["héllo", None, "", "x" * 40, "a", "b", "c"]),
    "bin": pa.array([b"\x00\xff", None, b"", b"z", b"1", b"2", b"3"], pa.binary()),
    "i32": pa.array([-5, None, 2**31 - 1, -2**31, 0, 1, 2], pa.int32()),
    "i64": pa.array([9007199254740993, 0, -1, None, 4, 5, 6], pa.int64()),
    "i8": pa.array([-128, None, 127, 0, 1, 2, 3], pa.int8()),
    "i16": pa.array([-32768, None, 32767, 0, 1, 2, 3], pa.int16()),
    "f32": pa.array([1.5, None, -2.25, 0.0, 1.0, 2.0, 3.0], pa.float32()),
    "dec": pa.array([None] + [__import__("decimal").Decimal("-12345678901234567890.123456")] * 6, pa.decimal128(38, 6)),
    "nul": pa.array([None] * 7, pa.null()),
    "f64": pa.array([1.5, None, float("inf"), -0.0, 1e300, 2.0, 3.0]),
    "ok": pa.array([True, None, False, True, False, True, True]),
    "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1900, 1, 1), dt.date(1970, 1, 1)] + [dt.date(2000, 1, 1)] * 3),
    "ts": pa.array([dt.datetime(2024, 1, 1, 12, 0, 0, 5, tzinfo=UTC), None] + [dt.datetime(1960, 1, 1, tzinfo=UTC)] * 5,
                   pa.timestamp("us", tz="UTC")),
    "tsn": pa.array([dt.datetime(2024, 1, 1), None] + [dt.datetime(2030, 5, 5, 1, 2, 3)] * 5, pa.timestamp("us")),
    "tags": pa.array([["a", None], None, [], ["b"], ["c", "d", "e"], [], None], pa.list_(pa.string())),
    "props": pa.array([[("k", "v"), ("k2", None)], None, [], [("a", "b")], [], None, [("x", "y")]],
                      pa.map_(pa.string(), pa.string())),
    "info": pa.array([{"n": 1, "t": ["q"], "inner": {"flag": True}}, None, {"n": 2, "t": None, "inner": None},
                      {"n": 3, "t": [], "inner": {"flag": None}}, None, {"n": 4, "t": ["r", "s"], "inner": {"flag": False}},
                      {"n": 5, "t": None, "inner": None}],
                     pa.struct([("n", pa.int32()), ("t", pa.list_(pa.string())),
                                ("inner", pa.struct([("flag", pa.bool_())]))])),
})
good = check("every_type", every)
check("empty", every.slice(0, 0))
check("no_nulls", pa.table({"a": pa.array(range(100), pa.int64()), "s": pa.array([str(i) for i in range(100)])}))
check("sliced", every.slice(2, 4))
# any zone reads as UTC (Arrow keeps UTC instants whatever the zone)
paris = pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC)], pa.timestamp("us", tz="Europe/Paris"))
check("tz_other", pa.table({"t": paris}), pa.table({"t": paris.cast(pa.timestamp("us", tz="UTC"))}))

# refused with a message naming the problem
for name, t, opts, want in [
    ("uint", pa.table({"u": pa.array([1], pa.uint32())}), {}, b"unsigned"),
    ("dict", pa.table({"d": pa.array(["a", "b", "a"]).dictionary_encode()}), {}, b"dictionary"),
    ("zstd", every, {"compression": "zstd"}, b"compressed"),
    ("nanos", pa.table({"t": pa.array([1], pa.timestamp("ns"))}), {}, b"microsecond"),
]:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema, options=pa.ipc.IpcWriteOptions(**opts)) as w:
        w.write_table(t)
    p = run(sink.getvalue().to_pybytes(), name)
    if p.returncode != 1 or want not in p.stderr:
        failures.append("%s: rc %d, stderr %r (want a refusal naming %r)" % (name, p.returncode, p.stderr, want))

# hostile bytes: every truncation and random byte flips are refused (rc 1) or read (rc 0)
data = stream(every)
rnd = random.Random(13)
cases = [data[:n] for n in range(0, len(data), 13)]
for _ in range(150):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        b[rnd.randrange(len(b))] = rnd.randrange(256)
    cases.append(bytes(b))
for i, c in enumerate(cases):
    p = run(c, "hostile")
    if p.returncode not in (0, 1) or b"runtime error" in p.stderr or b"Sanitizer" in p.stderr:
        failures.append("hostile case %d: rc %d: %s" % (i, p.returncode, p.stderr.decode()[-2000:]))
        break

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: %d hostile inputs" % len(cases))
