#!/usr/bin/env bash
# echo.sh: deltad's gRPC GetCatalog against its ceiling, a C++ async echo server on
# Debian's grpc++ (echo_server.cc) answering the same method path with the same response
# bytes, both under the same h2load line (issue #12). Needs tests/bench/setup.sh's packages.
#
# Builds build-bench/ (Release, no sanitizers) and the echo beside it, starts deltad on a
# temporary data directory with the catalog `bench`, takes deltad's GetCatalog answer
# (the protobuf bytes) as the echo's fixed response, checks that both servers answer the
# same bytes, then runs ROUNDS alternating rounds (the order flips every round) of
#   h2load -c 8 -m 32 -t 1 -D DURATION  (POST of the framed GetCatalogRequest)
# against each, after a WARMUP-second h2load run each. Reports QPS, server CPU per call
# (user + system from /proc/<pid>/stat over the measured run, divided by the calls) and
# the ratios deltad / echo. Goal: QPS >= 0.9x and CPU per call <= 1/0.9 of the echo's.
#
# Knobs: ROUNDS (3), DURATION (10 s), WARMUP (2 s), H2LOAD_ARGS (default "-c 8 -m 32 -t 1"),
# DELTAD_BIN (another deltad), DELTAD_ARGS (extra deltad flags), ECHO_THREADS (default:
# deltad's gRPC worker count, the cores), SKIP_BUILD=1 (use build-bench/ as it is).
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bench
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
H2LOAD_ARGS=${H2LOAD_ARGS:--c 8 -m 32 -t 1}
METHOD=/deltad.catalog.v1.CatalogService/GetCatalog
CATALOG=bench
command -v h2load >/dev/null || { echo "echo.sh: h2load is missing (bash tests/bench/setup.sh)" >&2; exit 1; }
pkg-config --exists grpc++ || { echo "echo.sh: grpc++ is missing (bash tests/bench/setup.sh)" >&2; exit 1; }

# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"
bench_grpc_builds "$ROOT" "$BUILD"
ECHO=$BUILD/tests/bench/grpc/dd_grpc_echo
DELTAD=${DELTAD_BIN:-$BUILD/cmd/deltad}
DELTACTL=$BUILD/cmd/deltactl

WORK=$(mktemp -d /tmp/deltad-echo.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill -TERM "$p"; wait "$p" 2>/dev/null || true; fi
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

export DELTAD_TOKEN DELTAD_ADMIN_TOKEN
DELTAD_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
DELTAD_ADMIN_TOKEN=$DELTAD_TOKEN
# shellcheck disable=SC2086
"$DELTAD" --data-dir "$WORK/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  ${DELTAD_ARGS:-} >"$WORK/deltad.out" 2>"$WORK/deltad.err" &
DPID=$!
PIDS+=("$DPID")
bench_wait_line "$WORK/deltad.out" '^deltad: ready' "$DPID" || { cat "$WORK/deltad.err" >&2; exit 1; }
DADDR=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/deltad.out")
[[ -n "$DADDR" ]] || { echo "echo.sh: deltad did not start" >&2; exit 1; }
"$DELTACTL" --server "$DADDR" --token "$DELTAD_TOKEN" catalog create "$CATALOG" \
  --comment "benchmark catalog" --property purpose=bench >/dev/null

# The request (field 1, the name) framed for gRPC: flag byte, 4-byte big-endian length.
/usr/bin/python3 - "$WORK/req.bin" "$CATALOG" <<'PY'
import struct, sys
name = sys.argv[2].encode()
msg = b"\x0a" + bytes([len(name)]) + name
open(sys.argv[1], "wb").write(b"\x00" + struct.pack(">I", len(msg)) + msg)
PY
# call ADDR OUT: one GetCatalog through Debian's Python gRPC; the raw answer goes to OUT.
call() {
  /usr/bin/python3 - "$1" "$2" "$METHOD" "$CATALOG" "$DELTAD_TOKEN" <<'PY'
import grpc, sys
addr, out, method, name, tok = sys.argv[1:6]
ch = grpc.insecure_channel(addr)
f = ch.unary_unary(method, request_serializer=None, response_deserializer=None)
resp = f(b"\x0a" + bytes([len(name)]) + name.encode(), metadata=[("authorization", "Bearer " + tok)], timeout=10)
open(out, "wb").write(resp)
PY
}
call "$DADDR" "$WORK/resp.bin"

ECHO_THREADS=${ECHO_THREADS:-$(nproc)}
"$ECHO" --method "$METHOD" --response "$WORK/resp.bin" --threads "$ECHO_THREADS" >"$WORK/echo.out" 2>"$WORK/echo.err" &
EPID=$!
PIDS+=("$EPID")
bench_wait_line "$WORK/echo.out" '^echo: listening' "$EPID" || { cat "$WORK/echo.err" >&2; exit 1; }
EADDR=$(sed -n 's/^echo: listening on //p' "$WORK/echo.out")
call "$EADDR" "$WORK/echo_resp.bin"
cmp -s "$WORK/resp.bin" "$WORK/echo_resp.bin" || { echo "echo.sh: the echo answers other bytes" >&2; exit 1; }

SIDE_NAME=(deltad echo) SIDE_ADDR=("$DADDR" "$EADDR") SIDE_PID=("$DPID" "$EPID")
# h2load_run ADDR SECONDS: prints "done_requests seconds"; refuses a run with failures.
h2load_run() {
  local out
  # shellcheck disable=SC2086
  out=$(h2load $H2LOAD_ARGS -D "$2" -d "$WORK/req.bin" -H 'content-type: application/grpc' \
    -H 'te: trailers' -H "authorization: Bearer $DELTAD_TOKEN" "http://$1$METHOD" 2>&1)
  echo "$out" >>"$WORK/h2load.log"
  awk '/^finished in/ { s = $3 + 0 } /^requests:/ { d = $8; f = $10; e = $12 }
       /^status codes:/ { ok = $3 }
       END { if (f + e > 0 || d == 0 || ok != d) exit 1; print d, s }' <<<"$out" ||
    { echo "echo.sh: h2load saw failures on $1:" >&2; echo "$out" >&2; exit 1; }
}
for s in 0 1; do h2load_run "${SIDE_ADDR[$s]}" "$WARMUP" >/dev/null; done
: >"$WORK/rounds"
for r in $(seq 1 "$ROUNDS"); do
  order="0 1"
  [[ $((r % 2)) == 0 ]] && order="1 0"
  for s in $order; do
    c0=$(bench_cpu "${SIDE_PID[$s]}")
    res=$(h2load_run "${SIDE_ADDR[$s]}" "$DURATION")
    c1=$(bench_cpu "${SIDE_PID[$s]}")
    echo "$s $res $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$WORK/rounds"
    echo "echo.sh: round $r ${SIDE_NAME[$s]}: $(awk '{ printf "%.0f QPS", $1 / $2 }' <<<"$res")" >&2
  done
done
# Bytes per request on the wire (h2load's traffic line) must match too: same answer size.
grep '^traffic:' "$WORK/h2load.log" | tail -n 2 >&2

echo "### gRPC GetCatalog against the C++ async echo (grpc++ $(pkg-config --modversion grpc++))"
echo
echo "- machine: $(nproc) CPUs, load average before the rounds $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- deltad: ${DELTAD_BIN:-build-bench/cmd/deltad at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, release build"
echo "- h2load $H2LOAD_ARGS -D $DURATION, ${WARMUP}s warm-up, $ROUNDS alternating rounds; response $(wc -c <"$WORK/resp.bin") bytes; echo threads $ECHO_THREADS"
echo
echo "| server | QPS (pooled) | QPS per round | server CPU µs/call |"
echo "|---|---:|---:|---:|"
awk -v names="deltad echo" 'BEGIN { split(names, nm, " ") }
  { n[$1] += $2; t[$1] += $3; c[$1] += $4; rq[$1] = rq[$1] (rq[$1] == "" ? "" : " / ") sprintf("%.0f", $2 / $3) }
  END {
    for (s = 0; s < 2; s++) { q[s] = n[s] / t[s]; u[s] = c[s] * 1e6 / n[s]
      printf "| %s | %.0f | %s | %.1f |\n", nm[s + 1], q[s], rq[s], u[s] }
    printf "\ndeltad / echo: QPS %.3f (goal >= 0.9), CPU per call %.3f (goal <= 1.111; echo / deltad by CPU %.3f)\n", q[0] / q[1], u[0] / u[1], u[1] / u[0]
  }' "$WORK/rounds"
