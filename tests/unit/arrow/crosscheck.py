#!/usr/bin/python3
"""crosscheck.py ARW_TOOL JS_DIR OUT: writes the cross-check stream with arw_tool (C, the
dd_arrow writer), reads it back with JS_DIR/read_stream.js (the apache-arrow JS library)
and compares schema, batch sizes and every cell with the values listed here. Exits 77
(skipped) when JS_DIR/node_modules is missing (run `npm ci` there) or node is absent."""
import json
import os
import shutil
import subprocess
import sys

U = "Utf8"
MAP_T = "Map<{key:Utf8, value:Utf8}>"


def map_field(name):
    return {"name": name, "type": MAP_T, "nullable": True, "children": [
        {"name": "entries", "type": "Struct<{key:Utf8, value:Utf8}>", "nullable": False,
         "children": [{"name": "key", "type": U, "nullable": False},
                      {"name": "value", "type": U, "nullable": True}]}]}


def list_field(name):
    return {"name": name, "type": "List<Utf8>", "nullable": True,
            "children": [{"name": "element", "type": U, "nullable": True}]}


SCHEMA = [
    {"name": "s", "type": U, "nullable": True},
    {"name": "b", "type": "Binary", "nullable": True},
    {"name": "i32", "type": "Int32", "nullable": True},
    {"name": "i64", "type": "Int64", "nullable": False},
    {"name": "f64", "type": "Float64", "nullable": True},
    {"name": "ok", "type": "Bool", "nullable": True},
    {"name": "d", "type": "Date32<DAY>", "nullable": True},
    {"name": "ts", "type": "Timestamp<MICROSECOND, UTC>", "nullable": True},
    {"name": "tsn", "type": "Timestamp<MICROSECOND>", "nullable": True},
    list_field("tags"),
    map_field("props"),
    {"name": "info", "nullable": True,
     "type": "Struct<{name:Utf8, n:Int32, t:List<Utf8>, m:" + MAP_T
             + ", inner:Struct<{flag:Bool}>}>",
     "children": [{"name": "name", "type": U, "nullable": True},
                  {"name": "n", "type": "Int32", "nullable": False},
                  list_field("t"), map_field("m"),
                  {"name": "inner", "type": "Struct<{flag:Bool}>", "nullable": True,
                   "children": [{"name": "flag", "type": "Bool", "nullable": True}]}]},
]

BATCH1 = [
    {"s": "h\u00e9llo", "b": "00ff", "i32": -5, "i64": "9007199254740993", "f64": 1.5,
     "ok": True, "d": 19000, "ts": "1700000000123456", "tsn": "-1",
     "tags": ["a", None, "c"], "props": [["k1", "v1"], ["k2", None]],
     "info": {"name": "x", "n": 1, "t": ["p"], "m": [["a", "b"]], "inner": {"flag": True}}},
    {"s": None, "b": None, "i32": None, "i64": "0", "f64": None, "ok": None, "d": None,
     "ts": None, "tsn": None, "tags": None, "props": None, "info": None},
    {"s": "", "b": "", "i32": 2147483647, "i64": "-9223372036854775808", "f64": -0.25,
     "ok": False, "d": -1, "ts": "0", "tsn": "0", "tags": [], "props": [],
     "info": {"name": None, "n": -7, "t": None, "m": [], "inner": None}},
]


def batch2():
    rows = []
    for i in range(11):
        s = "r%d" % i
        rows.append({
            "s": None if i % 3 == 0 else s,
            "b": None if i % 4 == 1 else s.encode().hex(),
            "i32": i * -100,
            "i64": str(i * 1000000007),
            "f64": None if i == 7 else i / 4.0,
            "ok": None if i % 5 == 0 else i % 2 == 0,
            "d": 18000 + i,
            "ts": str(1600000000000000 + i),
            "tsn": None if i % 2 else str(-i),
            "tags": None if i == 4 else [s] * (i % 3),
            # a null map hides the pair appended for it (i == 9)
            "props": None if i == 9 else [["k", s]] * (i % 2),
            "info": None if i % 4 == 3 else
            {"name": s, "n": i, "t": [], "m": None, "inner": {"flag": i > 5}},
        })
    return rows


def same(a, b):
    """Equality that keeps booleans apart from numbers (JSON's 0 and 0.0 stay equal)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def main():
    tool, js_dir, out = sys.argv[1:4]
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(js_dir, "node_modules", "apache-arrow")):
        print("SKIP: node or %s/node_modules missing (run npm ci there)" % js_dir)
        return 77
    subprocess.check_call([tool, out])
    data = open(out, "rb").read()
    assert data[:4] == b"\xff\xff\xff\xff", "stream must start with a continuation marker"
    assert data[-8:] == b"\xff\xff\xff\xff\x00\x00\x00\x00", "stream must end with EOS"
    got = json.loads(subprocess.check_output([node, os.path.join(js_dir, "read_stream.js"), out]))
    want_rows = BATCH1 + batch2()
    failures = 0
    if got["schema"] != SCHEMA:
        print("FAIL schema\n got  %s\n want %s" % (json.dumps(got["schema"]), json.dumps(SCHEMA)))
        failures += 1
    if got["batches"] != [3, 11]:
        print("FAIL batches: %s" % got["batches"])
        failures += 1
    if len(got["rows"]) != len(want_rows):
        print("FAIL row count %d, want %d" % (len(got["rows"]), len(want_rows)))
        failures += 1
    for n, (g, w) in enumerate(zip(got["rows"], want_rows)):
        if g.keys() != w.keys():
            print("FAIL row %d: columns %s" % (n, sorted(g)))
            failures += 1
        for col in w:
            if col not in g or not same(g[col], w[col]):
                print("FAIL row %d column %s: got %r, want %r" % (n, col, g.get(col), w[col]))
                failures += 1
    print("%d rows, %d columns checked, %d failures" % (len(want_rows), len(SCHEMA), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
