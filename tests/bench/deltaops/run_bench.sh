#!/bin/sh
# run_bench.sh [BUILD_DIR]: builds bench_deltaops without sanitizers (Release) and runs it;
# prints Markdown. (DD_WERROR=OFF: store/parquet has -Wmaybe-uninitialized hits at -O3.) Needs ~1 GB of free space under $TMPDIR for 2 x 100,000 small files.
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-bench}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF -DDD_WERROR=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_deltaops >/dev/null
"$build/tests/bench/deltaops/bench_deltaops" "${FILES:-100000}" "${CHANGES:-10000}"
