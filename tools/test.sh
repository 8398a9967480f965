#!/usr/bin/env bash
# Builds everything (CUDA parts too when /usr/local/cuda is present) and runs every test.
# GPU tests (ctest label `gpu`) skip with a visible message on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-test -j"$(nproc)"
ctest --test-dir build-test --output-on-failure -j"$(nproc)"
