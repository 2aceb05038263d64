#!/bin/sh
# run_bench.sh: the Delta engine benchmarks. Builds an optimised (non-sanitized) tree in
# build-bench/ unless BENCH_BIN points at a bench_delta binary, then runs:
#  (a) a table whose checkpoint holds N (default 1,000,000) adds + 10 JSON commits:
#      snapshot load time and peak RSS;
#  (b) incremental refresh after one new commit through the snapshot cache;
#  (c) commit throughput with 4 concurrent writer processes.
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
n=${1:-1000000}
bin=${BENCH_BIN:-}
if [ -z "$bin" ]; then
  cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF -DDD_WERROR=OFF >/dev/null
  cmake --build "$root/build-bench" --target bench_delta -j2 >/dev/null
  bin="$root/build-bench/tests/bench/delta/bench_delta"
fi
work=$(mktemp -d /tmp/dl_bench_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" gen "$work/big" "$n"
"$bin" load "$work/big"
"$bin" refresh "$work/big" 20
"$bin" commits "$work/small" 4 50
