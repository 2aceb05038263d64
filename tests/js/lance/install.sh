#!/usr/bin/env bash
# install.sh: installs the LanceDB client pinned in package-lock.json (@lancedb/lancedb
# 0.31.0 with its linux-x64-gnu native binary, both from the npm registry) into
# tests/js/lance/node_modules for tests/integration/test_lance_client.py. Does nothing when
# it is already there or when npm is missing (the test then skips and says why).
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -d "$dir/node_modules/@lancedb/lancedb" ]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
  echo "tests/js/lance/install.sh: npm not found; skipping" >&2
  exit 0
fi
cd "$dir" && npm ci --no-audit --no-fund --silent
