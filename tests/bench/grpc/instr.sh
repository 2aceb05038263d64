#!/usr/bin/env bash
# instr.sh: user-space instructions per gRPC GetCatalog call, deltad against the C++ async
# echo (echo_server.cc on Debian's grpc++, answering the same bytes), counted by valgrind's
# callgrind. Unlike QPS or /proc CPU time (echo.sh), an instruction count does not move
# with the machine's load, so a change to the call path can be judged on a busy machine.
# Kernel work (the sockets) is not counted; both servers make the same system calls.
#
# Each server runs under callgrind twice, serving N1 and then N2 calls (h2load -c 8 -m 32
# -t 1 -n N, the request framed as in echo.sh); (instructions(N2) - instructions(N1)) /
# (N2 - N1) is the cost of one call without start-up and shutdown; each total is the
# smallest of REPEATS runs, since a single deltad run can carry millions of instructions of
# timed background work (a run under callgrind is slow, so it scales with wall time; one
# run in session 17 came out 1e9 high). deltad gets the same catalog in every run (a copy
# of one data directory). Needs tests/bench/setup.sh's packages (valgrind, h2load, grpc++).
# Knobs: N1 (5000), N2 (15000), REPEATS (3), DELTAD_BIN, DELTAD_ARGS, SKIP_BUILD=1. Prints a
# Markdown table for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bench
N1=${N1:-5000}
N2=${N2:-15000}
REPEATS=${REPEATS:-3}
METHOD=/deltad.catalog.v1.CatalogService/GetCatalog
for c in valgrind h2load; do
  command -v "$c" >/dev/null || { echo "instr.sh: $c is missing (bash tests/bench/setup.sh)" >&2; exit 1; }
done
# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"
bench_grpc_builds "$ROOT" "$BUILD"
ECHO=$BUILD/tests/bench/grpc/dd_grpc_echo
DELTAD=${DELTAD_BIN:-$BUILD/cmd/deltad}
WORK=$(mktemp -d /tmp/deltad-instr.XXXXXX)
PID=""
cleanup() {
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then kill -INT "$PID"; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export DELTAD_ADMIN_TOKEN
DELTAD_ADMIN_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# The catalog, once, in a data directory each measured run copies; and the answer's bytes.
"$DELTAD" --data-dir "$WORK/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 >"$WORK/setup.out" 2>&1 &
PID=$!
bench_wait_line "$WORK/setup.out" '^deltad: ready' "$PID" || { cat "$WORK/setup.out" >&2; exit 1; }
ADDR=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/setup.out")
"$BUILD/cmd/deltactl" --server "$ADDR" --token "$DELTAD_ADMIN_TOKEN" catalog create bench >/dev/null
/usr/bin/python3 - "$ADDR" "$WORK/resp.bin" "$WORK/req.bin" "$METHOD" "$DELTAD_ADMIN_TOKEN" <<'PY'
import grpc, struct, sys
addr, out, req, method, tok = sys.argv[1:6]
msg = b"\x0a\x05bench"
open(req, "wb").write(b"\x00" + struct.pack(">I", len(msg)) + msg)
f = grpc.insecure_channel(addr).unary_unary(method, request_serializer=None, response_deserializer=None)
open(out, "wb").write(f(msg, metadata=[("authorization", "Bearer " + tok)], timeout=10))
PY
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=""

# measure SIDE N: callgrind's instruction total for the server serving N calls.
measure() {
  local side=$1 n=$2 d=$WORK/$1.$2 addr
  mkdir -p "$d"
  if [[ $side == echo ]]; then
    valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" "$ECHO" --method "$METHOD" \
      --response "$WORK/resp.bin" --threads "$(nproc)" >"$d/out" 2>"$d/err" &
    PID=$!
    bench_wait_line "$d/out" '^echo: listening' "$PID" || { cat "$d/err" >&2; exit 1; }
    addr=$(sed -n 's/^echo: listening on //p' "$d/out")
  else
    cp -r "$WORK/data" "$d/data"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" "$DELTAD" --data-dir "$d/data" \
      --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 ${DELTAD_ARGS:-} >"$d/out" 2>"$d/err" &
    PID=$!
    bench_wait_line "$d/out" '^deltad: ready' "$PID" || { cat "$d/err" >&2; exit 1; }
    addr=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$d/out")
  fi
  local out
  out=$(h2load -c 8 -m 32 -t 1 -n "$n" -d "$WORK/req.bin" -H 'content-type: application/grpc' \
    -H 'te: trailers' -H "authorization: Bearer $DELTAD_ADMIN_TOKEN" "http://$addr$METHOD" 2>&1)
  awk -v n="$n" '/^requests:/ { d = $8; f = $10 + $12 } /^status codes:/ { ok = $3 }
       END { exit !(d == n && f == 0 && ok == n) }' <<<"$out" ||
    { echo "instr.sh: h2load saw failures on $side:" >&2; echo "$out" >&2; exit 1; }
  kill -INT "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  awk '/^totals:/ { print $2 }' "$d/cg.out"
}

declare -A per
# least SIDE N: the smallest total of REPEATS runs (work that scales with wall time, not
# with calls, such as deltad's timed background threads, only ever adds).
least() {
  local best="" t
  for _ in $(seq "$REPEATS"); do
    t=$(measure "$1" "$2")
    if [[ -z "$best" || "$t" -lt "$best" ]]; then best=$t; fi
  done
  echo "$best"
}
for side in deltad echo; do
  a=$(least "$side" "$N1")
  b=$(least "$side" "$N2")
  per[$side]=$(( (b - a) / (N2 - N1) ))
  echo "instr.sh: $side: $a instructions for $N1 calls, $b for $N2: ${per[$side]} a call" >&2
done

echo "### gRPC GetCatalog: user-space instructions per call (callgrind)"
echo
echo "- deltad ${DELTAD_BIN:-build-bench at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)}; grpc++ $(pkg-config --modversion grpc++); h2load -c 8 -m 32 -t 1; calls $N1 and $N2 (least of $REPEATS runs each), the difference per call"
echo
echo "| server | instructions per call | / echo |"
echo "|---|---:|---:|"
echo "| deltad | ${per[deltad]} | $(awk -v a="${per[deltad]}" -v b="${per[echo]}" 'BEGIN { printf "%.2f", a / b }') |"
echo "| C++ async echo | ${per[echo]} | 1.00 |"
