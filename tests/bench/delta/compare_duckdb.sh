#!/bin/sh
# compare_duckdb.sh: deltad's snapshot load side by side with DuckDB (@duckdb/node-api)
# reading the same checkpoint's add columns. Generates one table (checkpoint with N adds +
# 10 JSON commits, via bench_delta gen), then runs ROUNDS rounds, each alternating:
#   deltad   bench_delta load (dl_table_open + dl_snapshot_open; time, CPU, peak RSS)
#   duckdb   startup   new instance + connect + SELECT 1 (DuckDB's fixed cost)
#            ckpt      SELECT add.path, add.size, add.partitionValues, add.modificationTime,
#                      add.dataChange, add.deletionVector FROM read_parquet(ckpt) WHERE add IS NOT NULL
#            ckpt+json the same UNION ALL the adds of the JSON commits after the checkpoint
#            ckpt-wide every add column deltad's replay projects (adds stats, tags, row ids)
#            issue     the aggregate of issue #12 (count, sum(size), count(DISTINCT path),
#                      sum(length(stats)), sum(cardinality(partitionValues)))
#   delta-rs  DeltaTable(path) + get_add_actions() (when DELTARS_PY is set)
#   deltad    the same load of a copy whose checkpoint DuckDB rewrote (COPY ... TO, snappy;
#             when DUCK_WRITTEN=1; its digest must equal the original's)
#   base      BASE_BIN load (an older bench_delta, when set: the before/after ratio)
# and prints a Markdown table of medians (each column's median taken separately).
# Usage: compare_duckdb.sh [ROUNDS (5)] [N (1000000)]
# Environment: BENCH_BIN=path/to/bench_delta (else builds build-bench/ in Release),
#   BASE_BIN=older bench_delta, DELTARS_PY=python with deltalake (deltalake==1.6.6 pyarrow),
#   DUCK_WRITTEN=1 (also load a DuckDB-written checkpoint), DUCK_MODES (default
#   "startup ckpt ckpt+json ckpt-wide issue"),
#   TABLE=dir (reuse a generated table; it is then kept), DUCK_RESULT=chunks|stream|js
#   (how node consumes rows, see duckdb/duck_load.mjs; default chunks = all rows held in
#   memory as DuckDB vectors), DUCK_THREADS=n (SET threads; default DuckDB's, the core
#   count), RAW=file (keep the per-run figures).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-5}
n=${2:-1000000}
bin=${BENCH_BIN:-}
if [ -z "$bin" ]; then
  cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DDD_SANITIZE=OFF -DDD_WERROR=OFF >/dev/null
  cmake --build "$root/build-bench" --target bench_delta -j2 >/dev/null
  bin="$root/build-bench/tests/bench/delta/bench_delta"
fi
if [ ! -d "$here/duckdb/node_modules/@duckdb/node-api" ]; then
  (cd "$here/duckdb" && npm ci --no-audit --no-fund >/dev/null)
fi
work=$(mktemp -d /tmp/dl_duck_XXXXXX)
trap 'rm -rf "$work"' EXIT
table=${TABLE:-}
if [ -z "$table" ]; then
  table="$work/big"
  "$bin" gen "$table" "$n"
fi
DL_LOG=_delta_log
log="$table/$DL_LOG"
# The checkpoint named by _last_checkpoint (classic single file) and the commits after it.
cv=$(sed -n 's/.*"version":\([0-9]*\).*/\1/p' "$log/_last_checkpoint")
ckpt=$(printf '%s/%020d.checkpoint.parquet' "$log" "$cv")
[ -f "$ckpt" ] || { echo "no classic Parquet checkpoint at $ckpt" >&2; exit 1; }
commits=""
for f in "$log"/[0-9]*.json; do
  v=$(basename "$f" .json | sed 's/^0*//')
  [ "${v:-0}" -gt "$cv" ] && commits="$commits $f"
done
echo "table $table: checkpoint $(basename "$ckpt") ($(du -k "$ckpt" | cut -f1) KiB), $(echo "$commits" | wc -w) commits after it"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); node $(node --version)"

# One line per run: label rows t_query_s t_init_s cpu_s maxrss_kb over_bpf proc_wall_s
raw=${RAW:-$work/raw.tsv}
: >"$raw"
tm="$work/time.out"
run_deltad() { # [label binary table]
  lbl=${1:-deltad}
  /usr/bin/time -f "%e %M" -o "$tm" "${2:-$bin}" load "${3:-$table}" >"$work/d.out"
  line=$(cat "$work/d.out")
  files=$(echo "$line" | sed -n 's/.*, \([0-9]*\) files in.*/\1/p')
  wall=$(echo "$line" | sed -n 's/.* files in \([0-9.]*\) s wall.*/\1/p')
  cpu=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) s CPU).*/\1/p')
  over=$(echo "$line" | sed -n 's/.*(\([0-9.-]*\) B\/file over baseline).*/\1/p')
  read -r pw rss <"$tm"
  printf '%s\t%s\t%s\t0\t%s\t%s\t%s\t%s\n' "$lbl" "$files" "$wall" "$cpu" "$rss" "$over" "$pw" >>"$raw"
}
kv_line() { # label: one raw line from a key=value figures line in $work/q.out
  read -r pw rss <"$tm"
  grep -E '^(duck|deltars):' "$work/q.out" | awk -v lbl="$1" -v pw="$pw" -v prss="$rss" '{
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      over = f["rows"] > 0 ? (f["maxrss_kb"] - f["rss_init_kb"]) * 1024 / f["rows"] : 0
      printf "%s %s\t%d\t%.4f\t%.4f\t%.3f\t%d\t%.0f\t%s\n", lbl, f["mode"], f["rows"], f["query_ms"] / 1000,
             f["init_ms"] / 1000, (f["mode"] == "startup" ? f["cpu_ms"] : f["query_cpu_ms"]) / 1000, prss, over, pw }' >>"$raw"
}
run_duck() { # mode
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$tm" node "$here/duckdb/duck_load.mjs" "$1" "$ckpt" $commits >"$work/q.out"
  kv_line duckdb
}
run_deltars() {
  /usr/bin/time -f "%e %M" -o "$tm" "$DELTARS_PY" "$here/deltars/deltars_load.py" "$table" >"$work/q.out"
  kv_line delta-rs
}
duck_table=""
if [ "${DUCK_WRITTEN:-0}" = 1 ]; then
  duck_table="$work/duck_written"
  mkdir -p "$duck_table/$DL_LOG"
  cp "$log"/*.json "$log/_last_checkpoint" "$duck_table/$DL_LOG/"
  node "$here/duckdb/duck_load.mjs" write "$ckpt" "$duck_table/$DL_LOG/$(basename "$ckpt")" >/dev/null
  d1=$("$bin" digest "$table" | sed 's/.*files, //'); d2=$("$bin" digest "$duck_table" | sed 's/.*files, //')
  echo "DuckDB-written checkpoint: $(du -k "$duck_table/$DL_LOG/$(basename "$ckpt")" | cut -f1) KiB; digest $d2"
  [ "$d1" = "$d2" ] || { echo "the DuckDB-written checkpoint reads differently: $d1 vs $d2" >&2; exit 1; }
fi
i=1
while [ "$i" -le "$rounds" ]; do
  run_deltad
  [ -n "${BASE_BIN:-}" ] && run_deltad "deltad base" "$BASE_BIN"
  [ -n "$duck_table" ] && run_deltad "deltad duckdb-ckpt" "$bin" "$duck_table"
  for m in ${DUCK_MODES:-startup ckpt ckpt+json ckpt-wide issue}; do run_duck "$m"; done
  [ -n "${DELTARS_PY:-}" ] && run_deltars
  echo "round $i/$rounds done (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
  i=$((i + 1))
done

echo
echo "Medians over $rounds rounds (each column's median separately; shared, loaded machine)."
echo "DuckDB rows consumed as: ${DUCK_RESULT:-chunks}. deltad: a thread per core (at most 4) on the checkpoint's row groups, the caller indexing; DuckDB threads: ${DUCK_THREADS:-default ($(nproc))}."
echo "Load s: deltad dl_table_open+dl_snapshot_open; DuckDB the query after startup. CPU s: the same span"
echo "(user+sys, all threads; for the startup row the whole node process). Process wall includes"
echo "process start (node boot and loading DuckDB for DuckDB). Peak RSS: whole process."
echo
awk -F'\t' '
  function med(lbl, col,   k, n, a, i, j, t) {
    n = 0; for (k = 1; k <= cnt[lbl]; k++) a[++n] = v[lbl, k, col]
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { if (!($1 in cnt)) order[++nl] = $1; c = ++cnt[$1]; for (i = 2; i <= NF; i++) v[$1, c, i] = $i }
  END {
    d = "deltad"; s = "duckdb startup"
    dt = med(d, 3); drss = med(d, 6); dcpu = med(d, 5)
    print "| run | rounds | rows | load s (in-process) | incl. DuckDB startup s | process wall s | CPU s | peak RSS MiB | RSS B/file (total) | RSS B/file (over baseline) | time deltad/this | CPU deltad/this | RSS deltad/this |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (k = 1; k <= nl; k++) {
      l = order[k]; rows = med(l, 2); q = med(l, 3); it = med(l, 4); rss = med(l, 6)
      incl = (l == d) ? "-" : sprintf("%.3f", med(l, 3) + med(l, 4))
      if (l == s) { q = it; incl = sprintf("%.3f", it) }
      tr = (l != d && l != s && q > 0) ? sprintf("%.2f (%.2f incl. startup)", dt / q, dt / (q + it)) : "-"
      rr = (l != d && l != s) ? sprintf("%.2f", drss / rss) : "-"
      cr = (l != d && l != s && med(l, 5) > 0) ? sprintf("%.2f", dcpu / med(l, 5)) : "-"
      bpf = rows > 0 ? sprintf("%.0f", rss * 1024 / rows) : "-"
      over = rows > 0 ? sprintf("%.0f", med(l, 7)) : "-"
      printf "| %s | %d | %d | %.3f | %s | %.2f | %.2f | %.0f | %s | %s | %s | %s | %s |\n", l, cnt[l], rows, q, incl,
             med(l, 8), med(l, 5), rss / 1024, bpf, over, tr, cr, rr
    }
  }' "$raw"
