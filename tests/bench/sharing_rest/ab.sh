#!/usr/bin/env bash
# ab.sh BIN_A BIN_B: two deltad binaries side by side on the Delta Sharing REST paths that
# issue #12 measures (not part of ctest). Each gets its own data directory, the same
# generated 100,000-file table (gen_table.py) and 20 shares granted to one recipient; then
# ROUNDS rounds (default 3), A then B:
#   - QueryTable: QUERIES (5) sequential full queries as the recipient (curl), time to the
#     last byte and the server's CPU;
#   - ListShares as the recipient: wrk -t2 -c32 -d5s, req/s and server CPU per request.
# Prints medians, CPU per call and the ratios B / A. Both answers must have the same size.
# DELTAD_ARGS: extra flags for both sides (e.g. --http-threads 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
[ $# = 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: ab.sh BIN_A BIN_B" >&2; exit 2; }
rounds=${ROUNDS:-3}
queries=${QUERIES:-5}
tmp=$(mktemp -d /tmp/dd-bench-ab.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/bench/bench_lib.sh
. "$root/tests/bench/bench_lib.sh"
/usr/bin/python3 "$root/tests/bench/sharing_rest/gen_table.py" "$tmp/table" 100000 100
export DELTAD_ADMIN_TOKEN=bench-admin-token
side_url=(); side_tok=()

start_side() { # BIN NAME
  local port b
  port=$(bench_free_port)
  # shellcheck disable=SC2086
  "$1" --data-dir "$tmp/$2" --http-listen 127.0.0.1:$port --grpc-listen 127.0.0.1:$(bench_free_port) \
    ${DELTAD_ARGS:-} >"$tmp/$2.log" 2>&1 &
  pids+=($!)
  b=http://127.0.0.1:$port/api/v1
  for _ in $(seq 100); do curl -s "$b/shares" -o /dev/null && break; sleep 0.1; done
  side_url+=("$b")
  side_tok+=("$(bench_sharing_setup "$b" "$tmp/table" 20)")
}
start_side "$1" a
start_side "$2" b
query() { # SIDE
  curl -s -o "${2:-/dev/null}" -w '%{time_total}\n' -H "Authorization: Bearer ${side_tok[$1]}" \
    -H "Content-Type: application/json" -X POST "${side_url[$1]}/shares/bench/schemas/s/tables/big/query" -d '{}'
}
query 0 "$tmp/qa" >/dev/null
query 1 "$tmp/qb" >/dev/null
[ "$(wc -c <"$tmp/qa")" = "$(wc -c <"$tmp/qb")" ] || { echo "ab.sh: the QueryTable answers differ in size" >&2; exit 1; }
for s in 0 1; do : >"$tmp/q.$s"; : >"$tmp/qcpu.$s"; : >"$tmp/l.$s"; done
for r in $(seq "$rounds"); do
  for s in 0 1; do
    c0=$(bench_cpu "${pids[$s]}")
    for _ in $(seq "$queries"); do query "$s"; done >>"$tmp/q.$s"
    echo "$queries $(awk -v a="$c0" -v b="$(bench_cpu "${pids[$s]}")" 'BEGIN { print b - a }')" >>"$tmp/qcpu.$s"
    c0=$(bench_cpu "${pids[$s]}")
    out=$(DELTAD_TOKEN=${side_tok[$s]} wrk -t2 -c32 -d5s -s "$root/tests/bench/grpc/auth.lua" \
          "${side_url[$s]}/shares" | sed -n 's/^WRK_RESULT //p')
    read -r req us _ _ err <<<"$out"
    [ -n "$out" ] && [ "$err" = 0 ] || { echo "ab.sh: wrk saw errors: $out" >&2; exit 1; }
    echo "$req $us $(awk -v a="$c0" -v b="$(bench_cpu "${pids[$s]}")" 'BEGIN { print b - a }')" >>"$tmp/l.$s"
  done
done
row() { # SIDE: query median ms, query CPU ms, list req/s, list CPU us
  echo "$(sort -n "$tmp/q.$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] * 1000 }')" \
       "$(awk '{ n += $1; c += $2 } END { printf "%.1f", c * 1000 / n }' "$tmp/qcpu.$1")" \
       "$(awk '{ q += $1; u += $2; c += $3 } END { printf "%.0f %.1f", q / (u / 1e6), c * 1e6 / q }' "$tmp/l.$1")"
}
read -r -a RA < <(row 0)
read -r -a RB < <(row 1)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
cat <<MD
| measurement | A | B | B / A |
|---|---:|---:|---:|
| full QueryTable of 100,000 files, median ms ($((rounds * queries)) queries) | ${RA[0]} | ${RB[0]} | $(ratio "${RA[0]}" "${RB[0]}") |
| full QueryTable, server CPU ms/query | ${RA[1]} | ${RB[1]} | $(ratio "${RA[1]}" "${RB[1]}") |
| recipient ListShares (20 shares), req/s (wrk -t2 -c32 -d5s x $rounds) | ${RA[2]} | ${RB[2]} | $(ratio "${RA[2]}" "${RB[2]}") |
| recipient ListShares, server CPU µs/request | ${RA[3]} | ${RB[3]} | $(ratio "${RA[3]}" "${RB[3]}") |

(A: \`$1\`, B: \`$2\`; load average $(cut -d' ' -f1-3 /proc/loadavg))
MD
