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
echo "- REST: wrk, $THREADS threads, $CONNECTIONS connections, ${WARMUP}s warm-up, ${DURATION}s x $ROUNDS alternating rounds (latency: mean of the rounds' percentiles)"
echo
GRPC_OUT=$("$LOAD" --server "$GRPC" --token "$DELTAD_TOKEN" --threads "$THREADS" \
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --rounds "$ROUNDS" \
  --catalog "$CATALOG" --server-pid "$PID")
echo "$GRPC_OUT" | grep '^|'

# One wrk measurement of a path: prints "requests duration_us p50_us p99_us errors", or
# nothing when wrk failed.
wrk_once() {
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
    "$REST$1" 2>&1 | sed -n 's/^WRK_RESULT //p' || true
}

# REST rounds alternate like the gRPC ones; QPS is pooled, latencies are the mean of
# wrk's per-round percentiles, server CPU is deltad's CPU time over the rounds divided by
# the requests. Rows go to stdout, "label qps cpu_us" lines to $WORK/rest_qps.
REST_PATHS=("/system/ping" "/catalogs/$CATALOG")
REST_LABELS=(Ping GetCatalog)
for p in "${REST_PATHS[@]}"; do
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${WARMUP}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
    "$REST$p" >/dev/null 2>&1 || true
done
: >"$WORK/rest_rounds"
# deltad's user + system CPU seconds so far.
server_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$PID/stat"
}
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1; do
    c0=$(server_cpu)
    out=$(wrk_once "${REST_PATHS[$i]}")
    c1=$(server_cpu)
    echo "$i ${out:-0 1 0 0 -1} $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$WORK/rest_rounds"
    echo "run.sh: REST round $r ${REST_LABELS[$i]}: $(awk -v l="$out" 'BEGIN { split(l, a, " "); if (a[2] > 0) printf "%.0f QPS", a[1] / (a[2] / 1e6); else print "wrk failed" }')" >&2
  done
done
for i in 0 1; do
  awk -v i="$i" -v label="${REST_LABELS[$i]}" -v path="${REST_PATHS[$i]}" -v t="$THREADS" \
      -v c="$CONNECTIONS" -v qf="$WORK/rest_qps" '
    $1 == i { n++; if ($6 < 0) failed = 1; req += $2; us += $3; p50 += $4; p99 += $5; err += $6; cpu += $7
              rq = rq (rq == "" ? "" : " / ") sprintf("%.0f", ($3 > 0 ? $2 / ($3 / 1e6) : 0)) }
    END {
      if (failed || us == 0) { printf "| %s | REST `GET %s` | wrk failed | | | | | | |\n", label, path; print label, 0, 0 >> qf; exit }
      qps = req / (us / 1e6)
      printf "| %s | REST `GET %s` | %s x %s | %.0f | %.3f | %.3f | %d | %.1f | %s |\n", label, path, t, c, qps, p50 / n / 1000, p99 / n / 1000, err, cpu * 1e6 / req, rq
      print label, qps, cpu * 1e6 / req >> qf
    }' "$WORK/rest_rounds"
done
echo
echo "$GRPC_OUT" | grep -v '^|' | sed '/^$/d'
awk '{ q[$1] = $2; u[$1] = $3 } END {
  if (q["Ping"] > 0) printf "GetCatalog / Ping QPS (REST): %.3f (%.1f%%)\n", q["GetCatalog"] / q["Ping"], 100 * q["GetCatalog"] / q["Ping"]
  if (u["GetCatalog"] > 0) printf "GetCatalog / Ping by server CPU per call (REST): %.3f (%.1f%%)\n", u["Ping"] / u["GetCatalog"], 100 * u["Ping"] / u["GetCatalog"]
}' "$WORK/rest_qps"
echo
echo "(REST base URL ${REST}. Project goal: GetCatalog at least 85% of the no-op QPS. Server"
echo "CPU µs/call is deltad's user+system time during the measurement over the calls served;"
echo "on a shared machine it is steadier than QPS, and the by-CPU ratio is the QPS ratio a"
echo "CPU-bound server would show.)"
