#!/usr/bin/env bash
# run_bench.sh BUILD_DIR: writes a 1,000,000-row checkpoint-shaped file with the deltad
# writer, then reads it back projected (separate processes), printing time and peak RSS.
# Use a build without sanitizers for meaningful numbers.
set -euo pipefail
bin=$1/tests/bench/parquet/bench_pq_checkpoint
f=$(mktemp --suffix=.parquet)
trap 'rm -f "$f"' EXIT
"$bin" write "$f" "${ROWS:-1000000}"
ls -l "$f" | awk '{print "file bytes=" $5}'
"$bin" read "$f"
