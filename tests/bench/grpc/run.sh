#!/usr/bin/env bash
# run.sh: the gRPC and REST benchmark of deltad. Builds a release tree (build-bench/, no
# sanitizers), starts deltad on a temporary data directory and free loopback ports,
# creates the catalog `bench`, then measures
#   - gRPC: SystemService/Ping (the no-op baseline) and CatalogService/GetCatalog with
#     dd_grpc_load (gRPC core, many calls in flight), and their QPS ratio;
#   - REST: GET /api/v1/system/ping and GET /api/v1/catalogs/bench with wrk;
# and prints everything as Markdown for docs/benchmarks.md.
#
# With DELTAD_BASE=<baseline deltad binary> (e.g. a Release build of an older commit) a
# second server runs beside the candidate, on its own data directory and ports, with the
# same catalog; every measurement then runs against both in alternating rounds (same load
# generator, same calls) and the report adds the baseline's rows and the ratios candidate /
# baseline per call (QPS, server CPU per call, p50, p99). DELTAD_BASE_LABEL names it in the
# report (default: the short commit of the git tree the binary sits in).
#
# Knobs (environment): THREADS (client threads, default 2), CONCURRENCY (gRPC calls in
# flight per thread, default 32), CONNECTIONS (wrk connections, default 64), DURATION
# (seconds per measurement, default 10), WARMUP (seconds, default 2), ROUNDS (alternating
# rounds pooled per call, default 3), DELTAD_ARGS (extra deltad flags, given to both
# servers), DELTAD_BIN (another candidate deltad binary), DELTAD_BASE and DELTAD_BASE_LABEL
# (the baseline, above), SKIP_BUILD=1 (use build-bench/ as it is), BENCH_CMAKE_ARGS (extra
# cmake arguments for build-bench/, e.g. -DDD_WERROR=OFF).
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

BASE=${DELTAD_BASE:-}
if [[ -n "$BASE" && ! -x "$BASE" ]]; then
  echo "run.sh: DELTAD_BASE=$BASE is not an executable" >&2
  exit 1
fi
BASE_LABEL=${DELTAD_BASE_LABEL:-$(git -C "$(dirname "${BASE:-.}")" rev-parse --short HEAD 2>/dev/null || echo base)}

WORK=$(mktemp -d /tmp/deltad-bench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p"
      wait "$p" || true
    fi
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# Starts binary $1 on the fresh data directory $WORK/$2 and free loopback ports with the
# catalog $CATALOG and admin token $DELTAD_TOKEN; sets PID, GRPC (HOST:PORT) and REST (base URL).
export DELTAD_TOKEN DELTAD_ADMIN_TOKEN
DELTAD_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
DELTAD_ADMIN_TOKEN=$DELTAD_TOKEN
start_server() {
  # shellcheck disable=SC2086
  "$1" --data-dir "$WORK/$2" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    ${DELTAD_ARGS:-} >"$WORK/$2.out" 2>"$WORK/$2.err" &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 1 300); do
    grep -q '^deltad: ready' "$WORK/$2.out" 2>/dev/null && break
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/$2.err" >&2; exit 1; }
    sleep 0.1
  done
  grep -q '^deltad: ready' "$WORK/$2.out" || { echo "run.sh: $1 did not start" >&2; exit 1; }
  GRPC=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/$2.out")
  REST=$(sed -n 's/^deltad: REST listening on \(http[^ ]*\).*/\1/p' "$WORK/$2.out")
  "$DELTACTL" --server "$GRPC" --token "$DELTAD_TOKEN" catalog create "$CATALOG" \
    --comment "benchmark catalog" --property purpose=bench >/dev/null
}
LOAD_BASE=()
if [[ -n "$BASE" ]]; then
  start_server "$BASE" base
  BASE_PID=$PID BASE_REST=$REST
  LOAD_BASE=(--base-server "$GRPC" --base-pid "$PID" --base-label "$BASE_LABEL")
fi
start_server "$DELTAD" data

echo "### deltad gRPC and REST benchmark"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), client and server on the same host"
echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), release build, no sanitizers"
echo "- gRPC: dd_grpc_load, $THREADS threads x $CONCURRENCY calls in flight, ${WARMUP}s warm-up, ${DURATION}s x $ROUNDS alternating rounds"
echo "- REST: wrk, $THREADS threads, $CONNECTIONS connections, ${WARMUP}s warm-up, ${DURATION}s x $ROUNDS alternating rounds (latency: mean of the rounds' percentiles)"
if [[ -n "$BASE" ]]; then
  echo "- baseline: \`$BASE\` (rows marked @$BASE_LABEL), its own data directory and ports, measured in the same rounds right before or after the candidate (the order flips every round)"
fi
echo
GRPC_OUT=$("$LOAD" --server "$GRPC" --token "$DELTAD_TOKEN" --threads "$THREADS" \
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --rounds "$ROUNDS" \
  --catalog "$CATALOG" --server-pid "$PID" "${LOAD_BASE[@]}")
echo "$GRPC_OUT" | grep '^|'

# The servers measured: 0 the candidate, 1 the baseline (with DELTAD_BASE).
SIDE_PID=("$PID") SIDE_REST=("$REST") SIDE_TAG=("")
if [[ -n "$BASE" ]]; then
  SIDE_PID+=("$BASE_PID") SIDE_REST+=("$BASE_REST") SIDE_TAG+=(" @$BASE_LABEL")
fi
SIDES=${#SIDE_PID[@]}

# One wrk measurement of base URL $1 + path $2: prints "requests duration_us p50_us p99_us
# errors", or nothing when wrk failed.
wrk_once() {
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
    "$1$2" 2>&1 | sed -n 's/^WRK_RESULT //p' || true
}

# REST rounds alternate like the gRPC ones (and a path's sides like the gRPC calls' sides);
# QPS is pooled, latencies are the mean of wrk's per-round percentiles, server CPU is
# deltad's CPU time over the rounds divided by the requests. Rows go to stdout,
# "label side qps cpu_us p50_ms p99_ms" lines to $WORK/rest_qps.
REST_PATHS=("/system/ping" "/catalogs/$CATALOG")
REST_LABELS=(Ping GetCatalog)
for s in $(seq 0 $((SIDES - 1))); do
  for p in "${REST_PATHS[@]}"; do
    wrk -t "$THREADS" -c "$CONNECTIONS" -d "${WARMUP}s" -s "$ROOT/tests/bench/grpc/auth.lua" \
      "${SIDE_REST[$s]}$p" >/dev/null 2>&1 || true
  done
done
: >"$WORK/rest_rounds"
: >"$WORK/rest_qps"
# deltad's (process $1) user + system CPU seconds so far.
server_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
for r in $(seq 1 "$ROUNDS"); do
  order=$(seq 0 $((SIDES - 1)))
  [[ $((r % 2)) == 0 ]] && order=$(seq $((SIDES - 1)) -1 0)
  for i in 0 1; do
    for s in $order; do
      c0=$(server_cpu "${SIDE_PID[$s]}")
      out=$(wrk_once "${SIDE_REST[$s]}" "${REST_PATHS[$i]}")
      c1=$(server_cpu "${SIDE_PID[$s]}")
      echo "$i $s ${out:-0 1 0 0 -1} $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$WORK/rest_rounds"
      echo "run.sh: REST round $r ${REST_LABELS[$i]}${SIDE_TAG[$s]}: $(awk -v l="$out" 'BEGIN { split(l, a, " "); if (a[2] > 0) printf "%.0f QPS", a[1] / (a[2] / 1e6); else print "wrk failed" }')" >&2
    done
  done
done
for s in $(seq 0 $((SIDES - 1))); do
  for i in 0 1; do
    awk -v i="$i" -v s="$s" -v label="${REST_LABELS[$i]}" -v tag="${SIDE_TAG[$s]}" \
        -v path="${REST_PATHS[$i]}" -v t="$THREADS" -v c="$CONNECTIONS" -v qf="$WORK/rest_qps" '
      $1 == i && $2 == s { n++; if ($7 < 0) failed = 1; req += $3; us += $4; p50 += $5; p99 += $6; err += $7; cpu += $8
                rq = rq (rq == "" ? "" : " / ") sprintf("%.0f", ($4 > 0 ? $3 / ($4 / 1e6) : 0)) }
      END {
        if (failed || us == 0) { printf "| %s%s | REST `GET %s` | wrk failed | | | | | | |\n", label, tag, path; print label, s, 0, 0, 0, 0 >> qf; exit }
        qps = req / (us / 1e6)
        printf "| %s%s | REST `GET %s` | %s x %s | %.0f | %.3f | %.3f | %d | %.1f | %s |\n", label, tag, path, t, c, qps, p50 / n / 1000, p99 / n / 1000, err, cpu * 1e6 / req, rq
        print label, s, qps, cpu * 1e6 / req, p50 / n / 1000, p99 / n / 1000 >> qf
      }' "$WORK/rest_rounds"
  done
done
echo
echo "$GRPC_OUT" | grep -v '^|' | sed '/^$/d'
for s in $(seq 0 $((SIDES - 1))); do
  awk -v s="$s" -v tag="${SIDE_TAG[$s]}" '$2 == s { q[$1] = $3; u[$1] = $4 } END {
    if (q["Ping"] > 0) printf "GetCatalog / Ping QPS (REST%s): %.3f (%.1f%%)\n", tag, q["GetCatalog"] / q["Ping"], 100 * q["GetCatalog"] / q["Ping"]
    if (u["GetCatalog"] > 0) printf "GetCatalog / Ping by server CPU per call (REST%s): %.3f (%.1f%%)\n", tag, u["Ping"] / u["GetCatalog"], 100 * u["Ping"] / u["GetCatalog"]
  }' "$WORK/rest_qps"
done
if [[ -n "$BASE" ]]; then
  awk -v base="$BASE_LABEL" '{ k = $1 SUBSEP $2; q[k] = $3; u[k] = $4; p50[k] = $5; p99[k] = $6; if ($2 == 0) order[++n] = $1 }
    function r(a, b) { return b > 0 ? a / b : 0 }
    END { for (j = 1; j <= n; j++) { l = order[j]; c = l SUBSEP 0; b = l SUBSEP 1
      printf "%s candidate / %s (REST): QPS %.3f, server CPU per call %.3f, p50 %.3f, p99 %.3f\n", l, base, r(q[c], q[b]), r(u[c], u[b]), r(p50[c], p50[b]), r(p99[c], p99[b]) } }' "$WORK/rest_qps"
fi
echo
echo "(REST base URL ${REST}. Project goal: GetCatalog at least 85% of the no-op QPS. Server"
echo "CPU µs/call is deltad's user+system time during the measurement over the calls served;"
echo "on a shared machine it is steadier than QPS, and the by-CPU ratio is the QPS ratio a"
echo "CPU-bound server would show. Candidate / baseline: QPS above 1 and CPU per call or"
echo "latency below 1 mean the candidate is better.)"
