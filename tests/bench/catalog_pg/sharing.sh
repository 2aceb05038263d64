#!/usr/bin/env bash
# sharing.sh: Delta Sharing queries per replica with the catalog on PostgreSQL against
# LMDB, and the snapshot cache memory per table. Uses the release tree build-bench/ (built
# by run.sh; SKIP_BUILD=1 skips the build here too), one PostgreSQL (tests/integration/
# dd_pg.py, loopback, fsync off) and three deltad: LMDB, PostgreSQL --catalog-cache check
# and PostgreSQL --catalog-cache notify, each sharing the same small log-only table
# (FILES add actions, default 10; tests/bench/sharing_rest/gen_table.py) to a recipient.
#  1. QueryTable over REST (wrk -t2 -cCONNS (16), DURATION s, ROUNDS rounds alternating the
#     servers): QPS, p50 and p99 per backend, and the ratios PostgreSQL / LMDB.
#  2. Snapshot cache memory: on the LMDB deltad, VmRSS (/proc) before and after the first
#     query of each of TABLES_1K tables of 1,000 files, and of one table of 100,000 files;
#     the growth per table. (The snapshot cache is per replica and backend-independent.)
# Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bench
FILES=${FILES:-10}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
TABLES_1K=${TABLES_1K:-20}
CONNS=${CONNS:-16} # below the recipient's 32 requests in flight (--max-requests-per-principal)
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target deltad >/dev/null
fi
DELTAD=$BUILD/cmd/deltad
. tests/bench/catalog_pg/pg_env.sh
pg_env_start deltad-bench-pgq
/usr/bin/python3 tests/bench/sharing_rest/gen_table.py "$WORK/lake/small" "$FILES" 1 >/dev/null
A=(-H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" -H 'Content-Type: application/json')

declare -A URL TOK PID
# start NAME [flags...]: a deltad sharing share "bench" (schema s, table small) to "r".
start() {
  local name=$1
  shift
  "$DELTAD" --data-dir "$WORK/$name" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --threads 2 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PID[$name]=$!
  PIDS+=($!)
  for _ in $(seq 1 300); do
    grep -q '^deltad: ready' "$WORK/$name.out" 2>/dev/null && break
    kill -0 "${PID[$name]}" 2>/dev/null || { cat "$WORK/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  local base
  base=$(sed -n 's/^deltad: REST listening on \(http[^ ]*\).*/\1/p' "$WORK/$name.out")
  curl -sf "${A[@]}" -X POST "$base/locations" \
    -d "{\"name\":\"lake\",\"type\":\"LOCAL\",\"url\":\"file://$WORK/lake\"}" >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares" -d '{"name":"bench"}' >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas" -d '{"name":"s"}' >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas/s/tables" \
    -d "{\"name\":\"small\",\"url\":\"file://$WORK/lake/small\"}" >/dev/null
  TOK[$name]=$(curl -sf "${A[@]}" -X POST "$base/recipients" -d '{"name":"r"}' |
               /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["bearerToken"])')
  curl -sf "${A[@]}" -X POST "$base/recipients/r/grants/bench" >/dev/null
  URL[$name]=$base
}
PGF=(--catalog "$PG_URL" --secret-key-file "$WORK/secret.key" --url-signing-key-file "$WORK/url.key")
start lmdb
start pg-check "${PGF[@]}" --catalog-schema q_check --catalog-cache check
start pg-notify "${PGF[@]}" --catalog-schema q_notify --catalog-cache notify
SIDES=(lmdb pg-check pg-notify)

wrk_once() { # name -> "requests duration_us p50_us p99_us"
  local out
  out=$(DELTAD_TOKEN=${TOK[$1]} wrk -t2 -c"$CONNS" -d"${DURATION}s" -s tests/bench/catalog_pg/query.lua \
    "${URL[$1]}/shares/bench/schemas/s/tables/small/query" | sed -n 's/^WRK_RESULT //p')
  read -r req us p50 p99 err <<<"$out"
  if [ -z "$out" ] || [ "$err" != 0 ]; then
    echo "wrk saw errors on $1: $out" >&2
    grep -v "code=OK" "$WORK/$1.err" | tail -3 >&2
    exit 1
  fi
  echo "$req $us $p50 $p99"
}
for s in "${SIDES[@]}"; do wrk_once "$s" >/dev/null; done # warm-up
declare -A REQ US P50 P99 PER
for r in $(seq 1 "$ROUNDS"); do
  order=("${SIDES[@]}")
  ((r % 2 == 0)) && order=(pg-notify pg-check lmdb)
  for s in "${order[@]}"; do
    read -r req us p50 p99 <<<"$(wrk_once "$s")"
    REQ[$s]=$(( ${REQ[$s]:-0} + req )); US[$s]=$(( ${US[$s]:-0} + us ))
    P50[$s]="${P50[$s]:-} $p50"; P99[$s]="${P99[$s]:-} $p99"
    PER[$s]="${PER[$s]:-}${PER[$s]:+ / }$(( req * 1000000 / us ))"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "### Delta Sharing QueryTable per replica: PostgreSQL vs LMDB"
echo
echo "- commit $(git rev-parse --short HEAD), release build; $(nproc) CPUs; wrk -t2 -c$CONNS -d${DURATION}s x $ROUNDS rounds per server, alternating; a log-only table of $FILES files; recipient token"
echo
echo "| catalog | QPS | p50 ms (median of rounds) | p99 ms | QPS per round |"
echo "|---|---:|---:|---:|---|"
declare -A QPS M50
for s in "${SIDES[@]}"; do
  QPS[$s]=$(( REQ[$s] * 1000000 / US[$s] ))
  M50[$s]=$(echo "${P50[$s]}" | median)
  m99=$(echo "${P99[$s]}" | median)
  awk -v s="$s" -v q="${QPS[$s]}" -v a="${M50[$s]}" -v b="$m99" -v per="${PER[$s]}" \
    'BEGIN { printf "| %s | %d | %.3f | %.3f | %s |\n", s, q, a / 1000, b / 1000, per }'
done
echo
for s in pg-check pg-notify; do
  awk -v s="$s" -v q="${QPS[$s]}" -v q0="${QPS[lmdb]}" -v a="${M50[$s]}" -v a0="${M50[lmdb]}" \
    'BEGIN { printf "- %s / lmdb: QPS %.3f, p50 %+.3f ms\n", s, q / q0, (a - a0) / 1000 }'
done

# ---- snapshot cache memory per table (LMDB deltad) ----
rss() { awk '/^VmRSS/ {print $2}' "/proc/${PID[lmdb]}/status"; }
q() { curl -sf -o /dev/null -H "Authorization: Bearer ${TOK[lmdb]}" -H 'Content-Type: application/json' \
        -X POST "${URL[lmdb]}/shares/bench/schemas/s/tables/$1/query" -d '{}'; }
for i in $(seq 1 "$TABLES_1K"); do
  /usr/bin/python3 tests/bench/sharing_rest/gen_table.py "$WORK/lake/k$i" 1000 10 >/dev/null
  curl -sf "${A[@]}" -X POST "${URL[lmdb]}/shares/bench/schemas/s/tables" \
    -d "{\"name\":\"k$i\",\"url\":\"file://$WORK/lake/k$i\"}" >/dev/null
done
/usr/bin/python3 tests/bench/sharing_rest/gen_table.py "$WORK/lake/big" 100000 100 >/dev/null
curl -sf "${A[@]}" -X POST "${URL[lmdb]}/shares/bench/schemas/s/tables" \
  -d "{\"name\":\"big\",\"url\":\"file://$WORK/lake/big\"}" >/dev/null
q small
r0=$(rss)
for i in $(seq 1 "$TABLES_1K"); do q "k$i"; done
r1=$(rss)
for i in $(seq 1 "$TABLES_1K"); do q "k$i"; done # cached: no more growth expected
r2=$(rss)
q big
r3=$(rss)
q big
r4=$(rss)
echo
echo "### Snapshot cache memory per table (LMDB deltad, VmRSS from /proc)"
echo
echo "| tables queried | files each | RSS growth | per table | after a second query of each |"
echo "|---|---:|---:|---:|---:|"
echo "| $TABLES_1K | 1,000 | $(( (r1 - r0) / 1024 )) MiB | $(( (r1 - r0) / TABLES_1K )) KiB | $(( (r2 - r1) )) KiB more |"
echo "| 1 | 100,000 | $(( (r3 - r2) / 1024 )) MiB | $(( (r3 - r2) / 1024 )) MiB | $(( (r4 - r3) )) KiB more |"
