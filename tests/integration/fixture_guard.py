#!/usr/bin/env python3
"""fixture_guard.py: the shared Delta fixtures are read-only input for every test.

`snapshot FILE` records every file under DD_FIXTURES (path, size, SHA-256) before the tests;
`verify FILE` runs after them and fails naming each file that a test created, changed or
removed. Tests run as root on CI, so permissions alone cannot protect the fixtures (a test once
wrote into simple_table); this check makes such a write a failing run instead of a silently
altered fixture for every later test."""
import hashlib
import json
import os
import sys


def manifest(root):
    out = {}
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            out[os.path.relpath(p, root)] = [os.path.getsize(p), h.hexdigest()]
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("snapshot", "verify"):
        sys.exit("usage: fixture_guard.py snapshot|verify FILE")
    root = os.environ.get("DD_FIXTURES", "")
    if not os.path.isdir(root):
        sys.exit("DD_FIXTURES (%r) is not a directory" % root)
    now = manifest(root)
    if sys.argv[1] == "snapshot":
        with open(sys.argv[2], "w") as fh:
            json.dump(now, fh)
        print("%d fixture files recorded" % len(now))
        return
    with open(sys.argv[2]) as fh:
        before = json.load(fh)
    bad = ["created: " + p for p in sorted(set(now) - set(before))]
    bad += ["removed: " + p for p in sorted(set(before) - set(now))]
    bad += ["changed: " + p for p in sorted(set(now) & set(before)) if now[p] != before[p]]
    if bad:
        print("tests modified the shared fixtures in %s:" % root)
        for b in bad[:50]:
            print("  " + b)
        sys.exit(1)
    print("%d fixture files unchanged" % len(now))


if __name__ == "__main__":
    main()
