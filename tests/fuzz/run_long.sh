#!/usr/bin/env bash
# run_long.sh: the long fuzz run behind DD_LONG=1 (scripts/test.sh calls it). Builds every
# fuzz target with clang, libFuzzer, ASan and UBSan into build-fuzz/ and runs each until it has used
# DD_FUZZ_SECONDS of CPU (default 600: 10 CPU-minutes per target), DD_FUZZ_JOBS targets at once
# (default: the number of cores). Any finding fails; see run_fuzzer.sh for its reproducer.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${DD_FUZZ_SECONDS:-600}
jobs=${DD_FUZZ_JOBS:-$(nproc)}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DDD_FUZZ=ON -DDD_SANITIZE=ON -DDD_FUZZ_SECONDS="$secs" >/dev/null
targets=$(cmake --build build-fuzz --target help | grep -o '\bfuzz_[A-Za-z0-9_]*' | sort -u)
cmake --build build-fuzz -j"$(nproc)" --target $targets
cd build-fuzz
ctest -R '^fuzz\.' -E '\.replay$' --output-on-failure -j"$jobs"
