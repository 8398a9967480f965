#!/usr/bin/env bash
# Fills .carry/every_core for tools/every_core_carried.sh (issue 26's many-core figures on a
# machine without the toolchain): this checkout's static build (OVERLAPSCOPE_STATIC: Abseil,
# GoogleTest and RE2 linked in), libisal.so.2 (the one library such a machine may lack), the
# static trace generator (bench/gen_kineto_trace: libz and libc only), with which the script makes
# the 500 MB bench trace and its gzip -6 there (the trace itself, 35.6 MB gzipped, would not fit
# beside the repository under the carry limit of 64 MiB), and optionally the static build to
# compare with as overlapscope-before. Run on the development machine, repository root:
#   bash tools/every_core_prepare.sh [BEFORE_STATIC_BINARY]
# e.g. BEFORE_STATIC_BINARY=/work/main/build-static/cli/overlapscope (built from main with the
# same cmake line). The static parallel_inflate_bench (the .json.gz inflate alone, serial and on
# 1-16 threads) goes along. About 20 MB in all; then carry .carry/every_core and run there
#   PAIRS=5 THREADS="2 8 16" bash tools/every_core_carried.sh
set -euo pipefail
cd "$(dirname "$0")/.."
before="${1:-}"
cmake -S . -B build-static -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAPSCOPE_STATIC=ON -DOVERLAPSCOPE_BENCH=ON \
  >/dev/null
cmake --build build-static --target overlapscope gen_kineto_trace parallel_inflate_bench
carry=.carry/every_core
rm -rf "$carry"
mkdir -p "$carry"
cp build-static/cli/overlapscope build-static/bench/gen_kineto_trace build-static/bench/parallel_inflate_bench "$carry/"
[[ -z "$before" ]] || cp "$before" "$carry/overlapscope-before"
isal=$(ldd build-static/cli/overlapscope | awk '/libisal/ {print $3}')
[[ -z "$isal" ]] || cp -L "$isal" "$carry/"
echo "still linked dynamically (expected: libc, libm, libz, libcupti and the like, present there):"
ldd build-static/cli/overlapscope | awk '{print "  " $1}'
du -sh "$carry"
ls -l "$carry"
