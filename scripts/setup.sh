#!/usr/bin/env bash
# Installs every Debian package deltad needs to build, run and test.
# Idempotent: packages already present are not touched; apt-get runs only when one is missing.
# With --runtime (scripts/run.sh): only what building and running deltad and deltactl needs
# (no test tools, no npm harnesses).
set -euo pipefail

RUNTIME=0
[ "${1:-}" = "--runtime" ] && RUNTIME=1

PKGS=(
  build-essential cmake pkg-config
  libgrpc-dev protobuf-c-compiler libprotobuf-c-dev protobuf-compiler libprotobuf-dev
  protobuf-compiler-grpc
  liblmdb-dev libpq-dev libssl-dev libjansson-dev libmicrohttpd-dev libgnutls28-dev
  libsnappy-dev libzstd-dev zlib1g-dev libcurl4-openssl-dev libyaml-dev curl
)
if [ "$RUNTIME" -eq 0 ]; then
  PKGS+=(
    clang libclang-rt-14-dev lmdb-utils libcmocka-dev postgresql
    python3 python3-venv python3-grpcio python3-grpc-tools python3-protobuf python3-requests python3-botocore
    wrk prometheus
  )
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$RUNTIME" -eq 1 ] && exit 0

# Go (builds grpcurl for integration.grpcurl: the `grpcurl` target). The machine image may
# ship its own Go; install Debian's only when none is on PATH.
if ! command -v go >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends golang-go || true
fi

# Node.js (for the independent Parquet reader used in cross-checks). The machine image may
# ship its own node+npm; Debian's nodejs conflicts with that npm, so install only when absent.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm || true
fi

# npm harnesses of the cross-check tests (independent readers: apache-arrow, hyparquet,
# @lancedb/lancedb). Each folder under tests/js with a package-lock.json is installed once.
if command -v npm >/dev/null 2>&1; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  for lock in "$root"/tests/js/package-lock.json "$root"/tests/js/*/package-lock.json; do
    [ -f "$lock" ] || continue
    dir=$(dirname "$lock")
    # Install when missing, or when the lock file changed since the last install.
    if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$lock" -nt "$dir/node_modules/.package-lock.json" ]; then
      echo "setup: npm ci in ${dir#$root/}"
      (cd "$dir" && npm ci --silent --no-audit --no-fund) || echo "setup: npm ci failed in $dir (cross-check tests will be skipped)"
    fi
  done
fi
