# bench_lib.sh: shell helpers the benchmark scripts in tests/bench source (bash):
#   bench_free_port                a free loopback TCP port
#   bench_cpu PID...               user + system CPU seconds so far of the processes and
#                                  their children (nginx's workers)
#   bench_wait_line FILE RE PID    waits (30 s) until FILE has a line matching RE; fails
#                                  when PID exits first or the time is up
#   bench_grpc_builds ROOT BUILD   builds deltad and deltactl into BUILD (Release; not when
#                                  SKIP_BUILD=1) and the C++ async echo server
#                                  (tests/bench/grpc/echo_server.cc) into
#                                  BUILD/tests/bench/grpc/dd_grpc_echo when it is older
#   bench_nginx_conf FILE PORT ROOT DIR
#                                  an nginx.conf serving ROOT on 127.0.0.1:PORT (2 workers,
#                                  access log off, JSON by default, pid and error log in DIR)
#   bench_sharing_setup BASE TABLE N
#                                  on the deltad REST base URL BASE (admin token
#                                  $DELTAD_ADMIN_TOKEN): the location over TABLE, the
#                                  recipient r, the shares bench and other1..other<N-1> all
#                                  granted to r, table s.big over TABLE in bench; prints r's
#                                  bearer token

bench_free_port() {
  /usr/bin/python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'
}

bench_cpu() {
  local p pids=""
  for p in "$@"; do pids="$pids $p $(pgrep -P "$p" | tr '\n' ' ')"; done
  # shellcheck disable=SC2086
  for p in $pids; do cat "/proc/$p/stat"; done |
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); t += $12 + $13 } END { print t / hz }'
}

bench_wait_line() {
  local _
  for _ in $(seq 1 300); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

bench_grpc_builds() {
  if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF >/dev/null
    cmake --build "$2" -j"$(nproc)" --target deltad deltactl >/dev/null
  fi
  local echo_bin=$2/tests/bench/grpc/dd_grpc_echo src=$1/tests/bench/grpc/echo_server.cc
  if [[ ! -x "$echo_bin" || "$src" -nt "$echo_bin" ]]; then
    mkdir -p "$(dirname "$echo_bin")"
    # shellcheck disable=SC2046
    g++ -O2 -Wall -Wextra -Werror -std=c++17 -o "$echo_bin" "$src" $(pkg-config --cflags --libs grpc++)
  fi
}

bench_nginx_conf() {
  cat >"$1" <<NG
worker_processes 2;
daemon off;
pid $4/nginx.pid;
error_log $4/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$2;
    root $3;
    default_type application/json;
  }
}
NG
}

bench_sharing_setup() {
  local b=$1 table=$2 n=$3 tok s
  local A=(-H "Authorization: Bearer $DELTAD_ADMIN_TOKEN" -H "Content-Type: application/json")
  curl -sf "${A[@]}" -X POST "$b/locations" \
    -d "{\"name\":\"bench\",\"type\":\"LOCAL\",\"url\":\"file://$table\"}" >/dev/null
  tok=$(curl -sf "${A[@]}" -X POST "$b/recipients" -d '{"name":"r"}' |
        /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["bearerToken"])')
  for s in bench $(seq -f 'other%g' 1 $((n - 1))); do
    curl -sf "${A[@]}" -X POST "$b/shares" -d "{\"name\":\"$s\"}" >/dev/null
    curl -sf "${A[@]}" -X POST "$b/recipients/r/grants/$s" >/dev/null
  done
  curl -sf "${A[@]}" -X POST "$b/shares/bench/schemas" -d '{"name":"s"}' >/dev/null
  curl -sf "${A[@]}" -X POST "$b/shares/bench/schemas/s/tables" \
    -d "{\"name\":\"big\",\"url\":\"file://$table\"}" >/dev/null
  echo "$tok"
}
