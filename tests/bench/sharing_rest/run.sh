#!/usr/bin/env bash
# run.sh [BUILD_DIR]: Delta Sharing REST benchmarks (not part of ctest).
#  1. QueryTable over REST on a generated log-only table of 100,000 files (100 partition
#     values): the full snapshot, and with a partition predicate that keeps 1%.
#  2. ListShares throughput with wrk, beside nginx serving the same bytes as a static file
#     on loopback (nginx is installed with apt-get when missing).
# Prints Markdown. Use a build without sanitizers (cmake -DDD_SANITIZE=OFF
# -DCMAKE_BUILD_TYPE=Release), default ./build-bench.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-bench}
deltad=$build/cmd/deltad
[ -x "$deltad" ] || { echo "no deltad at $deltad (build it first)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  apt-get install -y -qq nginx-light >/dev/null || apt-get install -y -qq nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
tmp=$(mktemp -d /tmp/dd-bench-sharing.XXXXXX)
chmod 755 "$tmp" # nginx workers (nobody when started as root) read the static file
dpid=""; npid=""
cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
  [ -n "$npid" ] && kill "$npid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

/usr/bin/python3 "$root/tests/bench/sharing_rest/gen_table.py" "$tmp/table" 100000 100
port=$(free_port); gport=$(free_port)
export DELTAD_ADMIN_TOKEN=bench-admin-token
"$deltad" --data-dir "$tmp/data" --http-listen 127.0.0.1:$port --grpc-listen 127.0.0.1:$gport \
  >"$tmp/deltad.log" 2>&1 &
dpid=$!
base=http://127.0.0.1:$port/api/v1
for _ in $(seq 100); do curl -s "$base/shares" -o /dev/null && break; sleep 0.1; done
A=(-H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" -H "Content-Type: application/json")
curl -sf "${A[@]}" -X POST "$base/shares" -d '{"name":"bench"}' >/dev/null
curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas" -d '{"name":"s"}' >/dev/null
curl -sf "${A[@]}" -X POST "$base/shares/bench/schemas/s/tables" \
  -d "{\"name\":\"big\",\"url\":\"file://$tmp/table\"}" >/dev/null
for i in $(seq 1 9); do curl -sf "${A[@]}" -X POST "$base/shares" -d "{\"name\":\"other$i\"}" >/dev/null; done
tok=$(curl -sf "${A[@]}" -X POST "$base/recipients" -d '{"name":"r"}' |
      /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["bearerToken"])')
curl -sf "${A[@]}" -X POST "$base/recipients/r/grants/bench" >/dev/null
R=(-H "Authorization: Bearer $tok" -H "Content-Type: application/json")
q=$base/shares/bench/schemas/s/tables/big/query
pred='{"jsonPredicateHints":"{\"op\":\"equal\",\"children\":[{\"op\":\"column\",\"name\":\"part\",\"valueType\":\"string\"},{\"op\":\"literal\",\"value\":\"p042\",\"valueType\":\"string\"}]}"}'

# median and p90 of N timed requests (seconds from curl -> ms)
timed() {
  local n=$1; shift
  for _ in $(seq "$n"); do curl -s -o /dev/null -w '%{time_total}\n' "$@"; done |
    /usr/bin/python3 -c 'import sys;v=sorted(float(x)*1000 for x in sys.stdin);print("%.1f %.1f"%(v[len(v)//2],v[int(len(v)*0.9)]))'
}
full_lines=$(curl -s "${R[@]}" -X POST "$q" -d '{}' | wc -l)
pred_lines=$(curl -s "${R[@]}" -X POST "$q" -d "$pred" | wc -l)
full_bytes=$(curl -s "${R[@]}" -X POST "$q" -d '{}' | wc -c)
read -r full_med full_p90 < <(timed 5 "${R[@]}" -X POST "$q" -d '{}')
read -r pred_med pred_p90 < <(timed 20 "${R[@]}" -X POST "$q" -d "$pred")

# ListShares (admin sees 10 shares) vs nginx serving the same bytes
curl -s -H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" "$base/shares" >"$tmp/shares.json"
chmod 644 "$tmp/shares.json"
mkdir -p "$tmp/www/api/v1" && cp "$tmp/shares.json" "$tmp/www/api/v1/shares"
nport=$(free_port)
cat >"$tmp/nginx.conf" <<NG
worker_processes 2;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$nport;
    root $tmp/www;
    default_type application/json;
  }
}
NG
"$NGINX" -c "$tmp/nginx.conf" -p "$tmp" &
npid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$nport/api/v1/shares" -o /dev/null && break; sleep 0.1; done
cmp -s "$tmp/shares.json" <(curl -s "http://127.0.0.1:$nport/api/v1/shares") ||
  { echo "nginx does not serve the same bytes" >&2; exit 1; }
# wrk's requests/s; refuses a run with non-2xx answers (a broken setup is not a number)
rps() {
  local out; out=$(wrk -t2 -c32 -d5s "$@")
  if grep -q "Non-2xx" <<<"$out"; then echo "wrk saw errors: $out" >&2; exit 1; fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}
dd_rps=$(rps -H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" "$base/shares")
ng_rps=$(rps "http://127.0.0.1:$nport/api/v1/shares")

cat <<MD
### Delta Sharing REST benchmarks ($(nproc) cores, loopback)

| measurement | result |
|---|---|
| QueryTable, 100,000 files, full snapshot ($full_lines lines, $full_bytes bytes) | median ${full_med} ms, p90 ${full_p90} ms (5 runs) |
| QueryTable, partition predicate keeping 1% ($pred_lines lines) | median ${pred_med} ms, p90 ${pred_p90} ms (20 runs; goal < 20 ms) |
| ListShares, deltad (wrk -t2 -c32 -d5s) | ${dd_rps} req/s |
| same bytes from nginx (static file) | ${ng_rps} req/s |
| deltad / nginx | $(/usr/bin/python3 -c "print('%.2f' % ($dd_rps/$ng_rps))") (goal >= 0.5) |
MD
