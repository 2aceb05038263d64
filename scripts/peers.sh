#!/usr/bin/env bash
# Installs the integration tests' PyPI peers (scripts/peers.txt: the official delta-sharing
# client, delta-rs (deltalake), pyspark with delta-spark (the Delta Connect client) and what
# they need) into a virtualenv under the build folder, by default build-test/venv.
# Idempotent: does nothing when the venv already holds exactly that list.
# A second argument names another pinned list (scripts/peers-stores.txt: the object-store
# emulators, in build-test/venv-stores).
# Debian's system Python makes the venv (python3-venv, in scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-"$root/build-test/venv"}
req=${2:-"$root/scripts/peers.txt"}
stamp="$venv/.peers.txt"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
  exit 0
fi
echo "peers: installing $(grep -vc '^#' "$req") pinned packages into ${venv#$root/}"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req"
cp "$req" "$stamp"
