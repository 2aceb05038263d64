#!/usr/bin/env bash
# run.sh [BUILD_DIR]: Delta Sharing REST benchmarks (not part of ctest).
#  1. QueryTable over REST on a generated log-only table of 100,000 files (100 partition
#     values): the full snapshot, and with a partition predicate that keeps 1%.
#  2. ListShares throughput with wrk, beside nginx serving the same bytes as a static file
#     on loopback (nginx is installed with apt-get when missing; SKIP_NGINX=1 leaves it out).
# Prints Markdown. Use a build without sanitizers (cmake -DDD_SANITIZE=OFF
# -DCMAKE_BUILD_TYPE=Release), default ./build-bench.
#
# With DELTAD_BASE=<baseline deltad binary> a second server runs beside the candidate, on
# its own data directory and ports, with the same shares over the same table; ROUNDS
# (default 3) rounds then measure both, one right after the other (the order flips every
# round), and a second table gives each side's figures (pooled over the rounds), its server
# CPU per call, and the ratios candidate / baseline. DELTAD_BASE_LABEL names the baseline
# (default: the short commit of its git tree). DURATION (default 5) is wrk's seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-bench}
deltad=$build/cmd/deltad
[ -x "$deltad" ] || { echo "no deltad at $deltad (build it first)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
base_bin=${DELTAD_BASE:-}
[ -z "$base_bin" ] || [ -x "$base_bin" ] || { echo "DELTAD_BASE=$base_bin is not an executable" >&2; exit 1; }
label=${DELTAD_BASE_LABEL:-$(git -C "$(dirname "${base_bin:-.}")" rev-parse --short HEAD 2>/dev/null || echo base)}
rounds=1
[ -z "$base_bin" ] || rounds=${ROUNDS:-3}
duration=${DURATION:-5}
if [ "${SKIP_NGINX:-0}" != 1 ] && ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  apt-get install -y -qq nginx-light >/dev/null || apt-get install -y -qq nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
tmp=$(mktemp -d /tmp/dd-bench-sharing.XXXXXX)
chmod 755 "$tmp" # nginx workers (nobody when started as root) read the static file
pids=(); npid=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  [ -n "$npid" ] && kill "$npid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=tests/bench/bench_lib.sh
. "$root/tests/bench/bench_lib.sh"
free_port() { bench_free_port; }

/usr/bin/python3 "$root/tests/bench/sharing_rest/gen_table.py" "$tmp/table" 100000 100
export DELTAD_ADMIN_TOKEN=bench-admin-token
A=(-H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" -H "Content-Type: application/json")
# Per side (0 the candidate, 1 the baseline): process id, REST base URL, recipient token.
side_pid=(); side_url=(); side_tok=()

# start_side BINARY NAME: deltad on the fresh data directory $tmp/NAME with the storage
# location bench (the table's directory), the share bench (schema s, table big over
# $tmp/table), 9 other shares and the recipient r.
start_side() {
  local port gport base tok
  port=$(free_port); gport=$(free_port)
  "$1" --data-dir "$tmp/$2" --http-listen 127.0.0.1:$port --grpc-listen 127.0.0.1:$gport \
    >"$tmp/$2.log" 2>&1 &
  pids+=($!)
  side_pid+=($!)
  base=http://127.0.0.1:$port/api/v1
  for _ in $(seq 100); do curl -s "$base/shares" -o /dev/null && break; sleep 0.1; done
  curl -sf "${A[@]}" -X POST "$base/locations" \
    -d "{\"name\":\"bench\",\"type\":\"LOCAL\",\"url\":\"file://$tmp/table\"}" >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares" -d '{"name":"bench"}' >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas" -d '{"name":"s"}' >/dev/null
  curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas/s/tables" \
    -d "{\"name\":\"big\",\"url\":\"file://$tmp/table\"}" >/dev/null
  for i in $(seq 1 9); do curl -sf "${A[@]}" -X POST "$base/shares" -d "{\"name\":\"other$i\"}" >/dev/null; done
  tok=$(curl -sf "${A[@]}" -X POST "$base/recipients" -d '{"name":"r"}' |
        /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["bearerToken"])')
  curl -sf "${A[@]}" -X POST "$base/recipients/r/grants/bench" >/dev/null
  side_url+=("$base"); side_tok+=("$tok")
}
start_side "$deltad" data
[ -z "$base_bin" ] || start_side "$base_bin" base
sides=${#side_pid[@]}
base=${side_url[0]}
pred='{"jsonPredicateHints":"{\"op\":\"equal\",\"children\":[{\"op\":\"column\",\"name\":\"part\",\"valueType\":\"string\"},{\"op\":\"literal\",\"value\":\"p042\",\"valueType\":\"string\"}]}"}'

# deltad's (process $1) user + system CPU seconds so far.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
# median and p90 (ms) of a file of curl times in seconds, one a line
med_p90() {
  /usr/bin/python3 -c 'import sys;v=sorted(float(x)*1000 for x in open(sys.argv[1]));print("%.1f %.1f"%(v[len(v)//2],v[int(len(v)*0.9)]))' "$1"
}
# timed SIDE NAME N curl-args...: N timed requests against SIDE; times go to $tmp/NAME.SIDE,
# "calls cpu_s" lines to $tmp/NAME.SIDE.cpu
timed() {
  local s=$1 name=$2 n=$3 c0 c1; shift 3
  c0=$(server_cpu "${side_pid[$s]}")
  for _ in $(seq "$n"); do curl -s -o /dev/null -w '%{time_total}\n' "$@"; done >>"$tmp/$name.$s"
  c1=$(server_cpu "${side_pid[$s]}")
  echo "$n $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$tmp/$name.$s.cpu"
}
# One wrk run (tests/bench/grpc/auth.lua sends $DELTAD_TOKEN): "requests duration_us p50_us
# p99_us"; refuses a run with errors (a broken setup is not a number)
wrk_once() {
  local out; out=$(DELTAD_TOKEN=$DELTAD_ADMIN_TOKEN wrk -t2 -c32 -d"${duration}s" \
    -s "$root/tests/bench/grpc/auth.lua" "$1" | sed -n 's/^WRK_RESULT //p')
  read -r req us p50 p99 err <<<"$out"
  if [ -z "$out" ] || [ "$err" != 0 ]; then echo "wrk saw errors: $out" >&2; exit 1; fi
  echo "$req $us $p50 $p99"
}

# The same probe queries on every side (so each starts the rounds in the same state); the
# baseline must answer as many lines and bytes as the candidate.
for s in $(seq 0 $((sides - 1))); do
  RS=(-H "Authorization: Bearer ${side_tok[$s]}" -H "Content-Type: application/json")
  u=${side_url[$s]}/shares/bench/schemas/s/tables/big/query
  probe="$(curl -s "${RS[@]}" -X POST "$u" -d '{}' | wc -l) $(curl -s "${RS[@]}" -X POST "$u" -d "$pred" | wc -l)"
  probe="$probe $(curl -s "${RS[@]}" -X POST "$u" -d '{}' | wc -c)"
  if [ "$s" = 0 ]; then read -r full_lines pred_lines full_bytes <<<"$probe"; first=$probe
  elif [ "$probe" != "$first" ]; then
    echo "run.sh: lines and bytes differ: candidate $first, baseline $probe" >&2
  fi
done
for r in $(seq 1 "$rounds"); do
  order=$(seq 0 $((sides - 1)))
  [ $((r % 2)) = 1 ] || order=$(seq $((sides - 1)) -1 0)
  for s in $order; do
    u=${side_url[$s]}/shares/bench/schemas/s/tables/big/query
    RS=(-H "Authorization: Bearer ${side_tok[$s]}" -H "Content-Type: application/json")
    timed "$s" full 5 "${RS[@]}" -X POST "$u" -d '{}'
    timed "$s" pred 20 "${RS[@]}" -X POST "$u" -d "$pred"
    c0=$(server_cpu "${side_pid[$s]}")
    out=$(wrk_once "${side_url[$s]}/shares")
    c1=$(server_cpu "${side_pid[$s]}")
    echo "$out $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$tmp/list.$s"
    echo "run.sh: round $r side $s: ListShares $(awk '{ printf "%.0f req/s", $1 / ($2 / 1e6) }' <<<"$out")" >&2
  done
done
read -r full_med full_p90 < <(med_p90 "$tmp/full.0")
read -r pred_med pred_p90 < <(med_p90 "$tmp/pred.0")
dd_rps=$(awk '{ req += $1; us += $2 } END { printf "%.2f", req / (us / 1e6) }' "$tmp/list.0")

# ListShares (admin sees 10 shares) vs nginx serving the same bytes
ng_rps=""
if [ "${SKIP_NGINX:-0}" != 1 ]; then
  curl -s -H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" "$base/shares" >"$tmp/shares.json"
  chmod 644 "$tmp/shares.json"
  mkdir -p "$tmp/www/api/v1" && cp "$tmp/shares.json" "$tmp/www/api/v1/shares"
  nport=$(free_port)
  bench_nginx_conf "$tmp/nginx.conf" "$nport" "$tmp/www" "$tmp"
  "$NGINX" -c "$tmp/nginx.conf" -p "$tmp" &
  npid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$nport/api/v1/shares" -o /dev/null && break; sleep 0.1; done
  cmp -s "$tmp/shares.json" <(curl -s "http://127.0.0.1:$nport/api/v1/shares") ||
    { echo "nginx does not serve the same bytes" >&2; exit 1; }
  ng_rps=$(wrk_once "http://127.0.0.1:$nport/api/v1/shares" | awk '{ printf "%.2f", $1 / ($2 / 1e6) }')
fi

cat <<MD
### Delta Sharing REST benchmarks ($(nproc) cores, loopback)

| measurement | result |
|---|---|
| QueryTable, 100,000 files, full snapshot ($full_lines lines, $full_bytes bytes) | median ${full_med} ms, p90 ${full_p90} ms ($((5 * rounds)) runs) |
| QueryTable, partition predicate keeping 1% ($pred_lines lines) | median ${pred_med} ms, p90 ${pred_p90} ms ($((20 * rounds)) runs; goal < 20 ms) |
| ListShares, deltad (wrk -t2 -c32 -d${duration}s) | ${dd_rps} req/s |
MD
if [ -n "$ng_rps" ]; then
  cat <<MD
| same bytes from nginx (static file) | ${ng_rps} req/s |
| deltad / nginx | $(/usr/bin/python3 -c "print('%.2f' % ($dd_rps/$ng_rps))") (goal >= 0.5) |
MD
fi
[ -n "$base_bin" ] || exit 0

# Each side pooled over the rounds: "median p90 cpu_ms_per_call" for the timed calls,
# "req_per_s p50_ms p99_ms cpu_us_per_call" for ListShares (latency: mean of wrk's rounds).
side_row() { # SIDE
  local s=$1
  echo "$(med_p90 "$tmp/full.$s") $(awk '{ n += $1; c += $2 } END { printf "%.1f", c * 1e3 / n }' "$tmp/full.$s.cpu")" \
       "$(med_p90 "$tmp/pred.$s") $(awk '{ n += $1; c += $2 } END { printf "%.1f", c * 1e3 / n }' "$tmp/pred.$s.cpu")" \
       "$(awk '{ req += $1; us += $2; p50 += $3; p99 += $4; c += $5; n++ }
              END { printf "%.0f %.3f %.3f %.1f", req / (us / 1e6), p50 / n / 1000, p99 / n / 1000, c * 1e6 / req }' "$tmp/list.$s")"
}
read -r -a C < <(side_row 0)
read -r -a B < <(side_row 1)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
cat <<MD

Same run against \`$base_bin\` (@$label), $rounds alternating rounds, each side on its own
data directory and ports (ratio = candidate / @$label: below 1 is better for times and CPU,
above 1 for req/s):

| measurement | candidate | @$label | ratio |
|---|---:|---:|---:|
| QueryTable full, median ms | ${C[0]} | ${B[0]} | $(ratio "${C[0]}" "${B[0]}") |
| QueryTable full, p90 ms | ${C[1]} | ${B[1]} | $(ratio "${C[1]}" "${B[1]}") |
| QueryTable full, server CPU ms/call | ${C[2]} | ${B[2]} | $(ratio "${C[2]}" "${B[2]}") |
| QueryTable 1% predicate, median ms | ${C[3]} | ${B[3]} | $(ratio "${C[3]}" "${B[3]}") |
| QueryTable 1% predicate, p90 ms | ${C[4]} | ${B[4]} | $(ratio "${C[4]}" "${B[4]}") |
| QueryTable 1% predicate, server CPU ms/call | ${C[5]} | ${B[5]} | $(ratio "${C[5]}" "${B[5]}") |
| ListShares req/s | ${C[6]} | ${B[6]} | $(ratio "${C[6]}" "${B[6]}") |
| ListShares p50 ms | ${C[7]} | ${B[7]} | $(ratio "${C[7]}" "${B[7]}") |
| ListShares p99 ms | ${C[8]} | ${B[8]} | $(ratio "${C[8]}" "${B[8]}") |
| ListShares server CPU µs/call | ${C[9]} | ${B[9]} | $(ratio "${C[9]}" "${B[9]}") |
MD
