#!/usr/bin/env bash
# Issue 26 on a many-core machine (the GPU machine's 16 CPUs): the end-to-end figures of a 500 MB
# trace, .json and .json.gz, at --threads 1, 2, 4, 8 and 16 (bench/e2e_bench.sh, minimum of 3,
# zlib inflate paired), then the ThreadSanitizer run (tools/tsan_check.sh). Goal there:
# <= 0.25 s for either input (>= 2 GB/s of JSON), peak <= 0.5 x the JSON.
#   bash tools/gpu_every_core.sh [SCRATCH]       (SCRATCH default /tmp/e2e, about 550 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target overlapscope gen_kineto_trace
THREADS="1 2 4 8 16" bash bench/e2e_bench.sh build "${1:-/tmp/e2e}" 3
bash tools/tsan_check.sh
