#!/usr/bin/env bash
# run_fuzzer.sh BINARY CORPUS SECONDS: runs a libFuzzer target on a scratch copy of its
# committed corpus until it has used SECONDS of CPU time (counted from /proc, so a run that
# shares the machine, or runs under nice, still gets its full budget); any crash, leak,
# sanitizer report or timeout fails the test. The run goes in rounds of at most 120 s that
# share one scratch corpus, so what one round finds seeds the next. A reproducer is kept in
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
tick=$(getconf CLK_TCK)
# CPU seconds used by this shell's finished children (fields 16 and 17 of /proc/PID/stat).
child_cpu() {
  local stat
  stat=$(<"/proc/$$/stat")
  stat=${stat##*) }
  read -r -a f <<<"$stat"
  echo $(( (f[13] + f[14]) / tick ))
}
start=$(date +%s)
status=0
rounds=0
while :; do
  used=$(child_cpu)
  left=$(( secs - used ))
  [ "$left" -gt 0 ] || break
  [ "$left" -le 120 ] || left=120
  rounds=$((rounds + 1))
  "$bin" -max_total_time="$left" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" || { status=$?; break; }
done
echo "$name: fuzzed $(child_cpu) CPU s in $(( $(date +%s) - start )) s wall, $rounds rounds, from $(ls "$corpus" | wc -l) corpus files to $(ls "$work" | wc -l)"
if [ "$status" -ne 0 ]; then
  echo "$name: FAILED (exit $status); reproducer(s) in $art:" >&2
  ls "$art" >&2
fi
exit "$status"
