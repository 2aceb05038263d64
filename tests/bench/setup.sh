#!/usr/bin/env bash
# setup.sh: installs the Debian packages the benchmarks in tests/bench need beyond
# scripts/setup.sh (bench-only; the test suite never runs it):
#   libgrpc++-dev, protobuf-compiler-grpc  the C++ async echo server (tests/bench/grpc/echo)
#   nghttp2-client                         h2load, the HTTP/2 load generator
#   nginx-light                            nginx serving static files (tests/bench/sharing_rest)
#   python3-grpcio                         the answer echo.sh and instr.sh give the echo
#   wrk, linux-perf                        HTTP/1.1 load and profiles
#   valgrind                               instruction counts (tests/bench/grpc/instr.sh)
# Idempotent: apt-get runs only when a package is missing. nginx's system service is not
# started (the benchmarks start their own nginx on free loopback ports).
set -euo pipefail

PKGS=(libgrpc++-dev protobuf-compiler-grpc python3-grpcio nghttp2-client nginx-light wrk linux-perf valgrind)
missing=()
for p in "${PKGS[@]}"; do
  # Any nginx flavour will do for a static file.
  [ "$p" = nginx-light ] && [ -x /usr/sbin/nginx ] && continue
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # A policy-rc.d answering 101 keeps the package's service from starting (no nginx on
  # port 80); one the machine already has is left as it is.
  made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    made_policy=1
  fi
  rc=0
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
  [ "$made_policy" -eq 1 ] && $SUDO rm -f /usr/sbin/policy-rc.d
  exit "$rc"
fi
