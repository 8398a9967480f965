#!/usr/bin/env bash
# Fresh machine → installed dependencies, a Release build, and the main job on a bundled
# sample: `overlapscope analyze` on a real 2-rank PyTorch-profiler trace from 2×H200, and the same
# from Python (the package the build assembles in build/python).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target overlapscope ovscope_python -j"$(nproc)"
./build/cli/overlapscope info samples/pytorch_ag_overlap
./build/cli/overlapscope analyze samples/pytorch_ag_overlap
PYTHONPATH=build/python python3 -c 'import overlapscope as o; r = o.analyze("samples/pytorch_ag_overlap")
print("Python:", r)'
