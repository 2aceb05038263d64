#!/usr/bin/env bash
# run.sh BUILD_DIR [--small]: full scan of a generated 10-column Delta table to Arrow, by
# deltad (store/scan, bench_scan, THREADS decode threads: default 0, the scan's default of
# the online CPU count capped at 8), DuckDB (2 threads) and delta-rs, in the same
# run, in alternating rounds (deltad, DuckDB, delta-rs; REPS times), for the table
# unpartitioned and partitioned (8 partitions). 10,000,000 rows, or
# 200,000 with --small (ROWS= overrides). Prints the medians and ratios and appends them to
# docs/benchmarks.md. Use a build without sanitizers (Release/RelWithDebInfo) for figures.
set -euo pipefail
build=$1
small=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
venv=${DD_VENV:-$root/build-test/venv}
py=$venv/bin/python
rows=${ROWS:-$([ "$small" = "--small" ] && echo 200000 || echo 10000000)}
reps=${REPS:-3}
threads=${THREADS:-0}
nthreads=$([ "$threads" = 0 ] && nproc | awk '{print ($1 > 8 ? 8 : $1)}' || echo "$threads")
work=${SCAN_BENCH_DIR:-/tmp/dd_scan_bench}
mkdir -p "$work"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { grep "^$1 " | sed 's/.*seconds=//'; }
report=""
load=$(cut -d' ' -f1-3 /proc/loadavg)
for kind in flat partitioned; do
  t=$work/t_${kind}_$rows
  flag=$([ "$kind" = partitioned ] && echo --partitioned || true)
  [ -d "$t/_delta_log" ] || "$py" "$here/gen_table.py" "$rows" "$t" $flag
  out=$(for r in $(seq "$reps"); do # alternating rounds: deltad, then the peers, REPS times
    "$build/tests/bench/scan/bench_scan" "$t" 1 "$threads"; "$py" "$here/peers.py" "$t" 1 $flag
  done)
  echo "$out"
  for who in deltad duckdb delta-rs; do
    n=$(echo "$out" | grep "^$who " | head -1 | sed 's/.*rows=\([0-9]*\).*/\1/')
    [ "$n" = "$rows" ] || { echo "$who returned $n rows, want $rows" >&2; exit 1; }
  done
  d=$(echo "$out" | secs deltad | median)
  k=$(echo "$out" | secs duckdb | median)
  r=$(echo "$out" | secs delta-rs | median)
  line=$(awk -v n="$rows" -v kind="$kind" -v d="$d" -v k="$k" -v r="$r" 'BEGIN {
    printf "| %s rows, %s | %.3f s | %.3f s (%.2fx) | %.3f s (%.2fx) |", n, kind, d, k, d / k, r, d / r }')
  echo "$line"
  report="$report$line"$'\n'
done
{
  echo
  echo "## Scan to Arrow (#13), $(date -u +%Y-%m-%d) ($(git -C "$root" rev-parse --short HEAD))"
  echo
  echo "\`bash tests/bench/scan/run.sh ${build#$root/} $small\` (median of $reps alternating rounds; ratio = deltad time / peer time; load average before: $load)"
  echo
  echo "| table | deltad ($nthreads threads) | DuckDB (2 threads) | delta-rs to_pyarrow_table |"
  echo "|---|---:|---:|---:|"
  printf "%s" "$report"
} >> "$root/docs/benchmarks.md"
