#!/usr/bin/env bash
# nginx.sh [BUILD_DIR]: deltad's Delta Sharing REST answers against nginx serving the same
# bytes as static files (issue #12; not part of ctest; needs tests/bench/setup.sh's nginx).
#
# deltad (default ./build-bench, Release without sanitizers) gets a generated log-only
# table of 100,000 files (gen_table.py), 20 shares (bench, holding the table, and other1..
# other19) and the recipient r granted all 20. Its answers are saved and nginx (two
# workers, access log off, on a free loopback port) serves them as files:
#   - ListShares as the recipient (20 shares) and the admin listing, under the same wrk line
#     (wrk -t2 -c32 -dDURATION s), deltad and nginx alternating, ROUNDS rounds (the order
#     flips every round); QPS pooled, server CPU per request from /proc (nginx: its workers);
#   - the full QueryTable of the table (POST {} as the recipient; nginx: GET of the same
#     bytes): QUERIES sequential curl requests a side a round, median and p90 time to the
#     last byte.
# Goals: ListShares and the admin listing >= 0.75x nginx's QPS; QueryTable <= 1.5x its time.
# Knobs: ROUNDS (3), DURATION (5), QUERIES (5), FILES (100000), DELTAD_ARGS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-bench}
deltad=$build/cmd/deltad
[ -x "$deltad" ] || { echo "no deltad at $deltad (build it first)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing (bash tests/bench/setup.sh)" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx is missing (bash tests/bench/setup.sh)" >&2; exit 1; }
rounds=${ROUNDS:-3}
duration=${DURATION:-5}
queries=${QUERIES:-5}
files=${FILES:-100000}
tmp=$(mktemp -d /tmp/dd-bench-nginx.XXXXXX)
chmod 755 "$tmp" # nginx workers (nobody when started as root) read the static files
dpid=""; npid=""
cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  [ -n "$npid" ] && kill "$npid" 2>/dev/null && wait "$npid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/bench/bench_lib.sh
. "$root/tests/bench/bench_lib.sh"

/usr/bin/python3 "$root/tests/bench/sharing_rest/gen_table.py" "$tmp/table" "$files" 100
export DELTAD_ADMIN_TOKEN=bench-admin-token
A=(-H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" -H "Content-Type: application/json")
port=$(bench_free_port)
# shellcheck disable=SC2086
"$deltad" --data-dir "$tmp/data" --http-listen 127.0.0.1:$port --grpc-listen 127.0.0.1:$(bench_free_port) \
  ${DELTAD_ARGS:-} >"$tmp/deltad.log" 2>&1 &
dpid=$!
base=http://127.0.0.1:$port/api/v1
for _ in $(seq 100); do curl -s "$base/shares" -o /dev/null && break; sleep 0.1; done
tok=$(bench_sharing_setup "$base" "$tmp/table" 20)
R=(-H "Authorization: Bearer $tok")
query=$base/shares/bench/schemas/s/tables/big/query

# The answers nginx serves: the same bytes at the same paths under $tmp/www.
mkdir -p "$tmp/www/r/api/v1" "$tmp/www/admin/api/v1" "$tmp/www/q"
curl -sf "${R[@]}" "$base/shares" >"$tmp/www/r/api/v1/shares"
curl -sf "${A[@]}" "$base/shares" >"$tmp/www/admin/api/v1/shares"
curl -sf "${R[@]}" -H "Content-Type: application/json" -X POST "$query" -d '{}' >"$tmp/www/q/query"
chmod -R a+rX "$tmp/www"
n_shares=$(/usr/bin/python3 -c 'import json,sys;print(len(json.load(open(sys.argv[1]))["items"]))' "$tmp/www/r/api/v1/shares")
[ "$n_shares" = 20 ] || { echo "nginx.sh: the recipient lists $n_shares shares, not 20" >&2; exit 1; }
nport=$(bench_free_port)
bench_nginx_conf "$tmp/nginx.conf" "$nport" "$tmp/www" "$tmp"
"$NGINX" -c "$tmp/nginx.conf" -p "$tmp" &
npid=$!
ng=http://127.0.0.1:$nport
for _ in $(seq 50); do curl -sf "$ng/q/query" -o /dev/null && break; sleep 0.1; done
for f in r/api/v1/shares admin/api/v1/shares q/query; do
  cmp -s "$tmp/www/$f" <(curl -s "$ng/$f") || { echo "nginx does not serve the same bytes ($f)" >&2; exit 1; }
done

# wrk_once URL TOKEN: "requests duration_us p50_us p99_us"; a run with errors stops here.
wrk_once() {
  local out req us p50 p99 err
  out=$(DELTAD_TOKEN=$2 wrk -t2 -c32 -d"${duration}s" -s "$root/tests/bench/grpc/auth.lua" "$1" |
        sed -n 's/^WRK_RESULT //p')
  read -r req us p50 p99 err <<<"$out"
  if [ -z "$out" ] || [ "$err" != 0 ]; then echo "wrk saw errors on $1: $out" >&2; exit 1; fi
  echo "$req $us $p50 $p99"
}
# Sides: 0 deltad, 1 nginx. Per measurement: URL per side and the token deltad wants.
side_pid=("$dpid" "$npid"); side_name=(deltad nginx)
list_url() { # MEASUREMENT SIDE
  case "$1.$2" in
    r.0 | admin.0) echo "$base/shares" ;;
    *.1) echo "$ng/$1/api/v1/shares" ;;
  esac
}
list_tok() { [ "$1" = r ] && echo "$tok" || echo "$DELTAD_ADMIN_TOKEN"; }
query_once() { # SIDE: seconds to the last byte
  if [ "$1" = 0 ]; then
    curl -s -o /dev/null -w '%{time_total}\n' "${R[@]}" -H "Content-Type: application/json" -X POST "$query" -d '{}'
  else
    curl -s -o /dev/null -w '%{time_total}\n' "$ng/q/query"
  fi
}
for s in 0 1; do for m in r admin; do
  DELTAD_TOKEN=$(list_tok $m) wrk -t2 -c32 -d1s -s "$root/tests/bench/grpc/auth.lua" "$(list_url $m $s)" >/dev/null
done; query_once "$s" >/dev/null; done
: >"$tmp/list"
for r in $(seq 1 "$rounds"); do
  order="0 1"
  [ $((r % 2)) = 1 ] || order="1 0"
  for m in r admin; do
    for s in $order; do
      c0=$(bench_cpu "${side_pid[$s]}")
      out=$(wrk_once "$(list_url $m $s)" "$(list_tok $m)")
      c1=$(bench_cpu "${side_pid[$s]}")
      echo "$m $s $out $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$tmp/list"
      echo "nginx.sh: round $r $m ${side_name[$s]}: $(awk '{ printf "%.0f req/s", $1 / ($2 / 1e6) }' <<<"$out")" >&2
    done
  done
  for s in $order; do
    for _ in $(seq "$queries"); do query_once "$s"; done >>"$tmp/query.$s"
  done
done

med_p90() {
  /usr/bin/python3 -c 'import sys;v=sorted(float(x)*1000 for x in open(sys.argv[1]));print("%.1f %.1f"%(v[len(v)//2],v[int(len(v)*0.9)]))' "$1"
}
read -r qd_med qd_p90 < <(med_p90 "$tmp/query.0")
read -r qn_med qn_p90 < <(med_p90 "$tmp/query.1")
cat <<MD
### Delta Sharing REST against nginx serving the same bytes ($(nproc) cores, loopback)

- commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); load average before the rounds $(cut -d' ' -f1-3 /proc/loadavg)
- wrk -t2 -c32 -d${duration}s, $rounds alternating rounds (QPS pooled); nginx: 2 workers, access log off
- QueryTable: $((queries * rounds)) sequential requests a side, $(wc -c <"$tmp/www/q/query") bytes, $(wc -l <"$tmp/www/q/query") lines ($files files)

| measurement | deltad | nginx | deltad / nginx | goal |
|---|---:|---:|---:|---|
MD
awk '{ k = $1 " " $2; req[k] += $3; us[k] += $4; c[k] += $7 }
  END {
    split("r admin", m, " "); split("ListShares as the recipient (20 shares)|admin listing (20 shares)", lab, "|")
    for (i = 1; i <= 2; i++) {
      d = m[i] " 0"; n = m[i] " 1"
      qd = req[d] / (us[d] / 1e6); qn = req[n] / (us[n] / 1e6)
      printf "| %s, req/s | %.0f | %.0f | %.3f | >= 0.75 |\n", lab[i], qd, qn, qd / qn
      printf "| %s, server CPU µs/request | %.1f | %.1f | %.3f | |\n", lab[i], c[d] * 1e6 / req[d], c[n] * 1e6 / req[n], (c[d] / req[d]) / (c[n] / req[n])
    }
  }' "$tmp/list"
awk -v a="$qd_med" -v b="$qn_med" -v c="$qd_p90" -v d="$qn_p90" 'BEGIN {
  printf "| full QueryTable, median ms to the last byte | %s | %s | %.2f | <= 1.5 |\n", a, b, a / b
  printf "| full QueryTable, p90 ms | %s | %s | %.2f | |\n", c, d, c / d }'
