#!/usr/bin/env bash
# run_filtered.sh BUILD_DIR TABLE COL N: a filtered scan (COL < N) of a Delta table of many
# files whose stats let 99% of them be skipped, by deltad (bench_scan with the predicate:
# ex_skipper_keep, then ex_eval_mask over the kept files' rows) and by delta-rs
# (to_pyarrow_table with filters), in the same run; median of REPS (default 3). Prints the
# ratio and appends it to docs/benchmarks.md. E.g. the OPTIMIZE bench's 2,000-file table
# (ids ascending by file): run_filtered.sh build-bench /tmp/dd_opt_bench/src id 100000.
set -euo pipefail
build=$1 table=$2 col=$3 n=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
py=${DD_VENV:-$root/build-test/venv}/bin/python
reps=${REPS:-3}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { grep "^$1 " | sed 's/.*seconds=//'; }
out=$("$build/tests/bench/scan/bench_scan" "$table" "$reps" 0 "$col < $n"; "$py" "$here/peers.py" "$table" "$reps" --where-lt "$col" "$n")
echo "$out"
dn=$(echo "$out" | grep "^deltad " | head -1 | sed 's/.*rows=\([0-9]*\).*/\1/')
rn=$(echo "$out" | grep "^delta-rs " | head -1 | sed 's/.*rows=\([0-9]*\).*/\1/')
[ "$dn" = "$rn" ] || { echo "deltad returned $dn rows, delta-rs $rn" >&2; exit 1; }
d=$(echo "$out" | secs deltad | median)
r=$(echo "$out" | secs delta-rs | median)
files=$(ls "$table"/*.parquet 2>/dev/null | wc -l)
line=$(awk -v f="$files" -v w="$col < $n" -v rows="$dn" -v d="$d" -v r="$r" 'BEGIN {
  printf "| %s files, `%s` (%s rows) | %.3f s | %.3f s (%.2fx) |", f, w, rows, d, r, d / r }')
echo "$line"
{
  echo
  echo "## Filtered scan (#13), $(date -u +%Y-%m-%d) ($(git -C "$root" rev-parse --short HEAD))"
  echo
  echo "\`bash tests/bench/scan/run_filtered.sh ${build#$root/} $table $col $n\` (median of $reps; ratio = deltad time / peer time)"
  echo
  echo "| table, predicate | deltad | delta-rs to_pyarrow_table(filters) |"
  echo "|---|---:|---:|"
  echo "$line"
} >> "$root/docs/benchmarks.md"
