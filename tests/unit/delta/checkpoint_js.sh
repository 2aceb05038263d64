#!/usr/bin/env bash
# checkpoint_js.sh MK_CHECKPOINT JSDIR: a checkpoint written by this engine, read by
# hyparquet (an independent Parquet implementation, tests/js): every expected add path
# must be there, the removed file only as a remove. Exit 77 (ctest SKIP) when node or
# tests/js/node_modules is missing.
set -euo pipefail
mk=$1
js=$2
command -v node >/dev/null 2>&1 || { echo "node is absent: skipping"; exit 77; }
[ -d "$js/node_modules/hyparquet" ] || { echo "tests/js/node_modules missing: skipping"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mk" "$work/t" > "$work/expected"
cp=$work/t/_delta_log/00000000000000000010.checkpoint.parquet
[ -f "$cp" ] || { echo "no checkpoint written"; exit 1; }
node "$js/pq_dump.mjs" "$cp" > "$work/rows"
adds=$(grep -c '"add":{' "$work/rows" || true)
want=$(wc -l < "$work/expected")
while IFS= read -r p; do
  grep -F "\"add\":{\"path\":\"$p\"" "$work/rows" >/dev/null || { echo "missing add $p"; head -5 "$work/rows"; exit 1; }
done < "$work/expected"
[ "$adds" -eq "$want" ] || { echo "hyparquet sees $adds add rows, want $want"; exit 1; }
grep -F '"remove":{"path":"p=v2/file-2.parquet"' "$work/rows" >/dev/null || { echo "remove missing"; exit 1; }
grep -F '"metaData":{' "$work/rows" >/dev/null && grep -F '"protocol":{' "$work/rows" >/dev/null
grep -F '"storageType":"i"' "$work/rows" >/dev/null || { echo "deletion vector missing"; exit 1; }
echo "checkpoint_js: hyparquet reads $adds add paths, the remove, protocol, metaData and a DV"
