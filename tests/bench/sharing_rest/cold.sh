#!/usr/bin/env bash
# cold.sh [BUILD_DIR]: the first Delta Sharing query of a large table after deltad starts,
# against the snapshot load alone (issue #12: time to the last byte at most 1.2x the load).
#
# One table of N files (default 1,000,000) from `bench_delta gen` (a checkpoint written by
# deltad plus 10 JSON commits, the snapshot-load benchmark's table; the data files do not
# exist: a query reads only the log), shared to a recipient once. Then ROUNDS rounds (3),
# each: `bench_delta load` of the table (dl_table_open + dl_snapshot_open, in its own
# process: the load alone), then a fresh deltad on the same data directory and its first
# full QueryTable (POST {} as the recipient, curl to /dev/null: seconds to the last byte),
# then a second one (the snapshot cached: what rendering and sending alone cost) and
# deltad's peak RSS. Both sides read the log from the page cache (the table was read before
# the first round). Medians of each column; needs build-bench (Release) with deltad and
# bench_delta. Knobs: ROUNDS, FILES, DELTAD_ARGS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-bench}
deltad=$build/cmd/deltad
bench=$build/tests/bench/delta/bench_delta
for b in "$deltad" "$bench"; do
  [ -x "$b" ] || { echo "no $b (cmake --build $build --target deltad bench_delta)" >&2; exit 1; }
done
rounds=${ROUNDS:-3}
files=${FILES:-1000000}
tmp=$(mktemp -d /tmp/dd-bench-cold.XXXXXX)
dpid=""
stop_deltad() {
  if [ -n "$dpid" ]; then
    kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  fi
  dpid=""
}
cleanup() { stop_deltad; rm -rf "$tmp"; }
trap cleanup EXIT
# shellcheck source=tests/bench/bench_lib.sh
. "$root/tests/bench/bench_lib.sh"

"$bench" gen "$tmp/table" "$files" >/dev/null
export DELTAD_ADMIN_TOKEN=bench-admin-token
port=$(bench_free_port)
base=http://127.0.0.1:$port/api/v1
start_deltad() {
  # shellcheck disable=SC2086
  "$deltad" --data-dir "$tmp/data" --http-listen 127.0.0.1:$port --grpc-listen 127.0.0.1:$(bench_free_port) \
    ${DELTAD_ARGS:-} >>"$tmp/deltad.log" 2>&1 &
  dpid=$!
  for _ in $(seq 100); do curl -s "$base/shares" -o /dev/null && return 0; sleep 0.1; done
  echo "cold.sh: deltad did not start (see $tmp/deltad.log)" >&2
  exit 1
}
start_deltad
tok=$(bench_sharing_setup "$base" "$tmp/table" 1)
query=$base/shares/bench/schemas/s/tables/big/query
query_once() {
  curl -sf -o "${1:-/dev/null}" -w '%{time_total}\n' -H "Authorization: Bearer $tok" \
    -H "Content-Type: application/json" -X POST "$query" -d '{}'
}
query_once "$tmp/answer" >/dev/null # the answer's size, and the table into the page cache
lines=$(wc -l <"$tmp/answer")
bytes=$(wc -c <"$tmp/answer")
rm -f "$tmp/answer"
[ "$lines" -gt "$files" ] ||
  { echo "cold.sh: the answer has $lines lines for $files files" >&2; exit 1; }
stop_deltad

: >"$tmp/rounds"
for r in $(seq 1 "$rounds"); do
  load=$("$bench" load "$tmp/table" | sed -n 's/.* files in \([0-9.]*\) s wall.*/\1/p')
  start_deltad
  cold=$(query_once)
  warm=$(query_once)
  rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$dpid/status")
  stop_deltad
  echo "$load $cold $warm $rss_kb" >>"$tmp/rounds"
  echo "cold.sh: round $r: load $load s, first query $cold s, second $warm s, peak RSS $rss_kb KiB" >&2
done

cat <<MD
### First Delta Sharing query after start against the snapshot load ($(nproc) cores)

- commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); load average $(cut -d' ' -f1-3 /proc/loadavg)
- table: $files files in a checkpoint plus 10 commits (bench_delta gen); the answer $bytes bytes, $lines lines; $rounds rounds, medians

| measurement | seconds | / snapshot load | goal |
|---|---:|---:|---|
MD
/usr/bin/python3 - "$tmp/rounds" "$files" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
files = int(sys.argv[2])
load, cold, warm, rss = (statistics.median(c) for c in zip(*rows))
print("| snapshot load alone (bench_delta load) | %.3f | 1.00 | |" % load)
print("| first QueryTable after start, to the last byte | %.3f | %.2f | <= 1.2 |" % (cold, cold / load))
print("| second QueryTable (snapshot cached) | %.3f | %.2f | |" % (warm, warm / load))
print("| deltad peak RSS after both, bytes per file | %.0f | | |" % (rss * 1024 / files))
PY
