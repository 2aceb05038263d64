#!/bin/sh
# run_bench.sh [N] [REPS]: the sharing query engine benchmark. Builds an optimised
# (non-sanitized) tree in build-bench/ unless BENCH_BIN points at a bench_sharing binary,
# generates a table of N (default 100,000) add files in 100 partitions and prints Markdown
# timing rows (each case REPS times, default 15).
#
# With a baseline, BENCH_BASE=<bench_sharing of an older build> (or DELTAD_BASE=<its
# deltad>, whose build tree holds tests/bench/sharing/bench_sharing), both binaries query
# the same generated table in ROUNDS (default 3) alternating rounds, the order flipping
# every round; each side's figures are the median over the rounds of its per-round medians
# (min: the smallest), and a table of the ratios candidate / baseline follows.
# BASE_LABEL names the baseline (default: the short commit of its git tree).
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
base=${BENCH_BASE:-}
if [ -z "$base" ] && [ -n "${DELTAD_BASE:-}" ]; then
  base=$(cd "$(dirname "$DELTAD_BASE")/.." && pwd)/tests/bench/sharing/bench_sharing
fi
if [ -n "$base" ] && [ ! -x "$base" ]; then
  echo "run_bench.sh: no baseline bench_sharing at $base" >&2
  exit 1
fi
work=$(mktemp -d /tmp/shq_bench_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" gen "$work/t" "$n" 100
if [ -z "$base" ]; then
  "$bin" run "$work/t" "$reps"
  exit 0
fi

label=${BASE_LABEL:-$(git -C "$(dirname "$base")" rev-parse --short HEAD 2>/dev/null || echo base)}
rounds=${ROUNDS:-3}
# Rounds: "side round" then the binary's output; rows are kept as "side|row".
r=1
while [ "$r" -le "$rounds" ]; do
  if [ $((r % 2)) = 1 ]; then order="cand base"; else order="base cand"; fi
  for side in $order; do
    if [ "$side" = cand ]; then b=$bin; else b=$base; fi
    "$b" run "$work/t" "$reps" >"$work/out"
    echo "run_bench.sh: round $r $side: $(head -n1 "$work/out")" >&2
    grep '^| ' "$work/out" | grep -v '^| query' | sed "s/^/$side/" >>"$work/rows"
  done
  r=$((r + 1))
done

# Per side and case: median of the per-round medians (wall and CPU), min of the minimums.
summary() { # side
  awk -F'|' -v side="$1" '
    { gsub(/^ +| +$/, "", $2) }
    $1 == side { k = $2; if (!(k in n)) order[++m] = k; n[k]++
      files[k] = $3; mib[k] = $4; med[k, n[k]] = $5 + 0; cpu[k, n[k]] = $7 + 0
      if (!(k in mn) || $6 + 0 < mn[k]) mn[k] = $6 + 0 }
    function median(a, k, c,   i, j, t, v) {
      for (i = 1; i <= c; i++) v[i] = a[k, i]
      for (i = 2; i <= c; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2 }
    END { for (i = 1; i <= m; i++) { k = order[i]
      printf "%s|%s|%s|%.2f|%.2f|%.2f\n", k, files[k], mib[k], median(med, k, n[k]), mn[k], median(cpu, k, n[k]) } }' "$work/rows"
}
summary cand >"$work/cand"
summary base >"$work/base"
echo
echo "Candidate \`$bin\` against baseline \`$base\` (@$label), $rounds alternating rounds of $reps runs each:"
echo
echo "| query (warm snapshot cache) | files | MiB | median ms | min ms | median CPU ms | @$label median ms | @$label median CPU ms | ratio ms | ratio CPU |"
echo "|---|---|---|---|---|---|---|---|---|---|"
awk -F'|' 'NR == FNR { bm[$1] = $4; bc[$1] = $6; next }
  { printf "| %s |%s|%s| %.2f | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f |\n", $1, $2, $3, $4, $5, $6, bm[$1], bc[$1],
           (bm[$1] > 0 ? $4 / bm[$1] : 0), (bc[$1] > 0 ? $6 / bc[$1] : 0) }' "$work/base" "$work/cand"
echo
echo "(ratio = candidate / baseline: below 1 is faster. Medians over rounds of the per-round medians.)"
