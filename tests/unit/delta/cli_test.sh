#!/bin/sh
# cli_test.sh DELTACTL FIXTURES: `deltactl table` end to end on fixture tables: exit codes,
# JSON output, errors on stderr with the engine's message.
set -u
ctl=$1
fx=$2
fail=0
check() { # name expected-exit command...
  name=$1; want=$2; shift 2
  "$@" >/tmp/dl_cli_out.$$ 2>/tmp/dl_cli_err.$$
  got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; cat /tmp/dl_cli_err.$$; fail=1
  fi
}
grep_out() { # name pattern file
  if ! grep -q -- "$2" "$3"; then echo "FAIL $1: '$2' not in output"; head -20 "$3"; fail=1; fi
}
t=$fx/delta-rs-data/simple_table
check help 0 "$ctl" table --help
check help_verb 0 "$ctl" table detail --help
# without --local every verb calls the server (here one that is not there)
check no_local 1 "$ctl" --server 127.0.0.1:1 --token t --timeout 5 table detail "$t"
grep_out no_local "UNAVAILABLE" /tmp/dl_cli_err.$$
check detail 0 "$ctl" table detail "$t" --local --output json
grep_out detail '"version": 4' /tmp/dl_cli_out.$$
grep_out detail '"numFiles": 5' /tmp/dl_cli_out.$$
check detail_v1 0 "$ctl" table detail "$t" --version 1 --local
grep_out detail_v1 'num files:        22' /tmp/dl_cli_out.$$
check files 0 "$ctl" table files "$fx/dat/reader_tests/generated/deletion_vectors/delta" --local --output json
grep_out files '"deletionVectorCardinality": ' /tmp/dl_cli_out.$$
check history 0 "$ctl" table history "$t" --local --output json
grep_out history '"operation"' /tmp/dl_cli_out.$$
check changes 0 "$ctl" table changes "$fx/delta-rs-data/cdf-table" --from 0 --local
grep_out changes 'cdc' /tmp/dl_cli_out.$$
check changes_off 1 "$ctl" table changes "$t" --from 0 --to 1 --local
grep_out changes_off 'change data feed is not enabled' /tmp/dl_cli_err.$$
check feature 1 "$ctl" table detail "$fx/delta-rs-data/simple_table_features" --local
grep_out feature 'blahabl' /tmp/dl_cli_err.$$
check iso_ts 1 "$ctl" table detail "$t" --timestamp 2001-01-01T00:00:00Z --local
grep_out iso_ts 'before the earliest commit' /tmp/dl_cli_err.$$
check bad_ts 1 "$ctl" table detail "$t" --timestamp yesterday --local
check bad_verb 2 "$ctl" table frobnicate "$t" --local
check missing 1 "$ctl" table detail /nonexistent --local
rm -f /tmp/dl_cli_out.$$ /tmp/dl_cli_err.$$
[ $fail = 0 ] && echo "cli: all checks passed"
exit $fail
