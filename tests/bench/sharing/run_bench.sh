#!/bin/sh
# run_bench.sh: the sharing query engine benchmark. Builds an optimised (non-sanitized)
# tree in build-bench/ unless BENCH_BIN points at a bench_sharing binary, generates a table
# of N (default 100,000) add files in 100 partitions and prints Markdown timing rows.
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
n=${1:-100000}
reps=${2:-15}
bin=${BENCH_BIN:-}
if [ -z "$bin" ]; then
  cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF -DDD_WERROR=OFF >/dev/null
  cmake --build "$root/build-bench" --target bench_sharing -j2 >/dev/null
  bin="$root/build-bench/tests/bench/sharing/bench_sharing"
fi
work=$(mktemp -d /tmp/shq_bench_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" gen "$work/t" "$n" 100
"$bin" run "$work/t" "$reps"
