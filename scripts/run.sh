#!/usr/bin/env bash
# Builds deltad and deltactl (release build in ./build, no tests) and starts deltad on the
# embedded default: data in ./data, gRPC on 127.0.0.1:50051, REST on 127.0.0.1:8080, a demo
# table registered. Installs only the Debian packages the build needs (scripts/setup.sh
# --runtime): no npm, no test tools, no Python venv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --runtime
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target deltad deltactl
exec ./build/cmd/deltad --data-dir ./data --demo "$@"
