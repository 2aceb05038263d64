#!/usr/bin/env bash
# generate.sh OUTDIR: regenerates everything under generated/ from proto/ into OUTDIR:
# protoc-c C code (plus the well-known types the protos import), the descriptor set
# (--include_imports, for Envoy and reflection), and generated/api.{c,h} (REST routes and
# reflection index). The `generate` target writes into generated/; `check-generated`
# writes into a scratch directory and fails when it differs from what is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"; out=$(cd "$1" && pwd)
cd "$root/proto"
protos=$(find . -name '*.proto' | sed 's|^\./||' | LC_ALL=C sort)
wkt="google/protobuf/empty.proto google/protobuf/descriptor.proto google/protobuf/any.proto"
protoc -I. -I/usr/include --c_out="$out" $protos $wkt
protoc -I. -I/usr/include --include_imports --descriptor_set_out="$out/deltad.desc" $protos
/usr/bin/python3 "$root/tools/gen_api.py" "$out/deltad.desc" "$out/api.c" "$out/api.h"
