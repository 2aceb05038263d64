#!/usr/bin/env bash
# run.sh: catalog calls per replica with the catalog on PostgreSQL against LMDB, in the
# same run. Builds a release tree (build-bench/, no sanitizers), starts one PostgreSQL
# (tests/integration/dd_pg.py: Debian's postgresql 15, loopback, fsync off) and three
# deltad: two candidates with --catalog postgresql://... (--catalog-cache check: one
# round trip per call; and --catalog-cache notify, the default: LISTEN/NOTIFY, none while
# nothing changes) and the baseline on LMDB, each with the catalog `bench` and 10 shares;
# then dd_grpc_load measures CatalogService/GetCatalog and DeltaSharingService/ListShares
# (admin: all 10 shares) on each candidate against LMDB in alternating rounds and prints
# Markdown rows plus the ratios PostgreSQL / LMDB (QPS, server CPU per call, p50, p99).
# The p50 difference is the latency the PostgreSQL round trip adds per call.
# MODES (default "check notify") picks the candidates.
# PostgreSQL's own CPU is not in deltad's CPU per call; it shares the machine's cores.
#
# Knobs (environment): THREADS (client threads, default 2), CONCURRENCY (calls in flight
# per thread, default 16), DURATION (seconds, default 10), WARMUP (default 2), ROUNDS
# (default 3), POOL (--catalog-pool, default 8), DELTAD_THREADS (--threads, default 2),
# SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bench
THREADS=${THREADS:-2}
CONCURRENCY=${CONCURRENCY:-16}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-3}
POOL=${POOL:-8}
DELTAD_THREADS=${DELTAD_THREADS:-2}
MODES=${MODES:-check notify}

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target deltad deltactl dd_grpc_load >/dev/null
fi
DELTAD=$BUILD/cmd/deltad
DELTACTL=$BUILD/cmd/deltactl
LOAD=$BUILD/tests/bench/grpc/dd_grpc_load

. tests/bench/catalog_pg/pg_env.sh
pg_env_start deltad-bench-pg
# start_server NAME [flags...]: sets PID, GRPC, REST; creates the catalog and the shares.
start_server() {
  local name=$1
  shift
  "$DELTAD" --data-dir "$WORK/$name" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --threads "$DELTAD_THREADS" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 1 300); do
    grep -q '^deltad: ready' "$WORK/$name.out" 2>/dev/null && break
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  GRPC=$(sed -n 's/^deltad: gRPC listening on \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/$name.out")
  REST=$(sed -n 's/^deltad: REST listening on \(http[^ ]*\).*/\1/p' "$WORK/$name.out")
  "$DELTACTL" --server "$GRPC" --token "$DELTAD_ADMIN_TOKEN" catalog create bench \
    --comment "benchmark catalog" --property purpose=bench >/dev/null
  for i in $(seq 0 9); do
    curl -sf -o /dev/null -X POST -H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" \
      -H 'Content-Type: application/json' --data "{\"name\":\"share$i\"}" "$REST/shares"
  done
}
start_server lmdb
LMDB_PID=$PID LMDB_GRPC=$GRPC
declare -A PG_PIDS PG_GRPCS
for mode in $MODES; do
  start_server "pg-$mode" --catalog "$PG_URL" --catalog-schema "bench_$mode" \
    --catalog-pool "$POOL" --catalog-cache "$mode" --secret-key-file "$WORK/secret.key" \
    --url-signing-key-file "$WORK/url.key"
  PG_PIDS[$mode]=$PID PG_GRPCS[$mode]=$GRPC
done

echo "### catalog calls per replica: PostgreSQL vs LMDB"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)); client, deltad and PostgreSQL on the same host"
echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), release build, no sanitizers; PostgreSQL $(psql "$PG_URL" -XAtc 'show server_version'), loopback TCP, fsync off"
echo "- deltad --threads $DELTAD_THREADS, --catalog-pool $POOL; dd_grpc_load $THREADS threads x $CONCURRENCY calls in flight, ${WARMUP}s warm-up, ${DURATION}s x $ROUNDS alternating rounds"
echo "- rows @lmdb are the baseline: the same calls on a deltad whose catalog is LMDB"
for mode in $MODES; do
  echo
  echo "#### --catalog-cache $mode"
  echo
  "$LOAD" --server "${PG_GRPCS[$mode]}" --token "$DELTAD_ADMIN_TOKEN" --threads "$THREADS" \
    --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --rounds "$ROUNDS" \
    --server-pid "${PG_PIDS[$mode]}" --base-server "$LMDB_GRPC" --base-pid "$LMDB_PID" \
    --base-label lmdb \
    --call "GetCatalog:/deltad.catalog.v1.CatalogService/GetCatalog:name=bench" \
    --call "ListShares:/deltad.sharing.v1.DeltaSharingService/ListShares"
done
