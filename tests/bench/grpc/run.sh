#!/usr/bin/env bash
# run.sh: the gRPC and REST benchmark of deltad. Builds a release tree (build-bench/, no
# sanitizers), starts deltad on a temporary data directory and free loopback ports,
# creates the catalog `bench`, then measures
#   - gRPC: SystemService/Ping (the no-op baseline) and CatalogService/GetCatalog with
#     dd_grpc_load (gRPC core, many calls in flight), and their QPS ratio;
#   - REST: GET /api/v1/system/ping and GET /api/v1/catalogs/bench with wrk;
# and prints everything as Markdown for docs/benchmarks.md.
#
# Knobs (environment): THREADS (client threads, default 2), CONCURRENCY (gRPC calls in
# flight per thread, default 32), CONNECTIONS (wrk connections, default 64), DURATION
# (seconds per measurement, default 10), WARMUP (seconds, default 2), ROUNDS (alternating
# gRPC rounds pooled per call, default 3), DELTAD_ARGS (extra deltad flags), DELTAD_BIN
# (another deltad binary), SKIP_BUILD=1 (use build-bench/ as it is), BENCH_CMAKE_ARGS
# (extra cmake arguments for build-bench/, e.g. -DDD_WERROR=OFF).
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bench
THREADS=${THREADS:-2}
CONCURRENCY=${CONCURRENCY:-32}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-3}
CATALOG=bench

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF ${BENCH_CMAKE_ARGS:-} >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target deltactl dd_grpc_load >/dev/null
  if cmake --build "$BUILD" --target help | grep ' deltad$' >/dev/null; then
    cmake --build "$BUILD" -j"$(nproc)" --target deltad >/dev/null
  fi
fi
DELTAD=${DELTAD_BIN:-$BUILD/cmd/deltad}
DELTACTL=$BUILD/cmd/deltactl
LOAD=$BUILD/tests/bench/grpc/dd_grpc_load
if [[ ! -x "$DELTAD" ]]; then
  echo "run.sh: $DELTAD is not built (it needs the grpc, http and catalog modules)" >&2
  exit 1
fi

WORK=$(mktemp -d /tmp/deltad-bench.XXXXXX)
PID=
cleanup() {
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID"
    wait "$PID" || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck disable=SC2086
"$DELTAD" --data-dir "$WORK/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  ${DELTAD_ARGS:-} >"$WORK/deltad.out" 2>"$WORK/deltad.err" &
PID=$!
for _ in $(seq 1 300); do
  grep -q '^deltad: ready' "$WORK/deltad.out" 2>/dev/null && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/deltad.err" >&2; exit 1; }
  sleep 0.1
done
grep -q '^deltad: ready' "$WORK/deltad.out" || { echo "run.sh: deltad did not start" >&2; exit 1; }
GRPC=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/deltad.out")
REST=$(sed -n 's/^deltad: REST listening on \(http[^ ]*\).*/\1/p' "$WORK/deltad.out")
export DELTAD_TOKEN
DELTAD_TOKEN=$(head -n1 "$WORK/data/admin.token")

"$DELTACTL" --server "$GRPC" --token "$DELTAD_TOKEN" catalog create "$CATALOG" \
  --comment "benchmark catalog" --property purpose=bench >/dev/null

echo "### deltad gRPC and REST benchmark"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), client and server on the same host"
echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), release build, no sanitizers"
echo "- gRPC: dd_grpc_load, $THREADS threads x $CONCURRENCY calls in flight, ${WARMUP}s warm-up, ${DURATION}s x $ROUNDS alternating rounds"
echo "- REST: wrk, $THREADS threads, $CONNECTIONS connections, ${DURATION}s after a ${WARMUP}s warm-up"
echo
GRPC_OUT=$("$LOAD" --server "$GRPC" --token "$DELTAD_TOKEN" --threads "$THREADS" \
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --rounds "$ROUNDS" \
  --catalog "$CATALOG")
echo "$GRPC_OUT" | grep '^|'

# One wrk measurement -> a Markdown row; prints the QPS on fd 3.
wrk_row() {
  local label=$1 path=$2 out
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${WARMUP}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
    "$REST$path" >/dev/null 2>&1 || true
  out=$(wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
    "$REST$path" 2>&1 | sed -n 's/^WRK_RESULT //p' || true)
  if [[ -z "$out" ]]; then
    printf '| %s | REST `GET %s` | wrk failed | | | | |\n' "$label" "$path"
    echo 0 >&3
    return
  fi
  read -r reqs dur_us p50 p99 errs <<<"$out"
  local qps
  qps=$(awk -v r="$reqs" -v d="$dur_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
  printf '| %s | REST `GET %s` | %s x %s | %s | %.3f | %.3f | %s |\n' "$label" "$path" \
    "$THREADS" "$CONNECTIONS" "$qps" "$(awk -v v="$p50" 'BEGIN{print v/1000}')" \
    "$(awk -v v="$p99" 'BEGIN{print v/1000}')" "$errs"
  echo "$qps" >&3
}
exec 3>"$WORK/rest_qps"
wrk_row Ping "/system/ping"
wrk_row GetCatalog "/catalogs/$CATALOG"
exec 3>&-
echo
echo "$GRPC_OUT" | grep -v '^|' | sed '/^$/d'
mapfile -t RQ <"$WORK/rest_qps"
awk -v p="${RQ[0]}" -v g="${RQ[1]}" 'BEGIN { if (p > 0) printf "GetCatalog / Ping QPS (REST): %.3f (%.1f%%)\n", g / p, 100 * g / p }'
echo
echo "(REST base URL ${REST}; project goal: GetCatalog at least 85% of the no-op QPS)"
