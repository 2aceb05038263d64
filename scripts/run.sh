#!/usr/bin/env bash
# Sets everything up and starts deltad on the embedded default: data in ./data,
# gRPC on 127.0.0.1:50051, REST on 127.0.0.1:8080, a demo table registered.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target deltad deltactl
exec ./build/cmd/deltad --data-dir ./data --demo "$@"
