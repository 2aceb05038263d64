#!/usr/bin/env bash
# run_fuzzer.sh BINARY CORPUS SECONDS: runs a libFuzzer target on a scratch copy of its
# committed corpus for SECONDS; any crash or sanitizer report fails the test.
set -euo pipefail
bin=$1 corpus=$2 secs=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$corpus"/. "$work"/
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -artifact_prefix="$work/" "$work"
