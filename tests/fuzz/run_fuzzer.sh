#!/usr/bin/env bash
# run_fuzzer.sh BINARY CORPUS SECONDS: runs a libFuzzer target on a scratch copy of its
# committed corpus for SECONDS (wall time on one core, so SECONDS of CPU); any crash, leak,
# sanitizer report or timeout fails the test. A reproducer is kept in
# ${DD_FUZZ_ARTIFACTS:-./fuzz-artifacts}/<target>/: add it to CORPUS once fixed.
set -euo pipefail
bin=$1 corpus=$2 secs=$3
name=$(basename "$bin")
art="${DD_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}/$name"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$art"
cp -r "$corpus"/. "$work"/
# ASan keeps every distinct allocation stack for the life of the process; deep recursive
# parsers make new ones without end (the RSS limit was reached in minutes), so allocation
# stacks are cut to a few frames here. Rerun a reproducer directly for full stacks.
export ASAN_OPTIONS="malloc_context_size=${DD_FUZZ_MALLOC_CONTEXT:-4}${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
start=$(date +%s)
status=0
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
  -artifact_prefix="$art/" "$work" || status=$?
echo "$name: fuzzed $(( $(date +%s) - start )) s from $(ls "$corpus" | wc -l) corpus files"
if [ "$status" -ne 0 ]; then
  echo "$name: FAILED (exit $status); reproducer(s) in $art:" >&2
  ls "$art" >&2
fi
exit "$status"
