#!/usr/bin/env bash
# Fills .carry/every_core for tools/every_core_carried.sh (issue 26's many-core figures on a
# machine without the toolchain): this checkout's static build (OVERLAPSCOPE_STATIC: Abseil,
# GoogleTest and RE2 linked in), libisal.so.2 (the one library such a machine may lack), the
# 500 MB bench trace gzip -6 (35.6 MB; the carry limit is 64 MiB), and optionally the static build
# to compare with as overlapscope-before. Run on the development machine, repository root:
#   bash tools/every_core_prepare.sh [BEFORE_STATIC_BINARY]
# e.g. BEFORE_STATIC_BINARY=/work/main/build-static/cli/overlapscope (built from main with the
# same cmake line). About 50 MB in all; then carry .carry/every_core and run there
#   PAIRS=5 THREADS="2 8 16" bash tools/every_core_carried.sh
set -euo pipefail
cd "$(dirname "$0")/.."
before="${1:-}"
cmake -S . -B build-static -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAPSCOPE_STATIC=ON -DOVERLAPSCOPE_BENCH=OFF \
  >/dev/null
cmake --build build-static --target overlapscope
[[ -x build/bench/gen_kineto_trace ]] || cmake --build build --target gen_kineto_trace
carry=.carry/every_core
rm -rf "$carry"
mkdir -p "$carry"
cp build-static/cli/overlapscope "$carry/"
[[ -z "$before" ]] || cp "$before" "$carry/overlapscope-before"
isal=$(ldd build-static/cli/overlapscope | awk '/libisal/ {print $3}')
[[ -z "$isal" ]] || cp -L "$isal" "$carry/"
echo "still linked dynamically (expected: libc, libm, libz, libcupti and the like, present there):"
ldd build-static/cli/overlapscope | awk '{print "  " $1}'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/bench/gen_kineto_trace tests/data/kineto/a2a_async/rank0.json.gz "$tmp/trace_500.json" --mb 500
gzip -6 -c "$tmp/trace_500.json" >"$carry/trace_500.json.gz"
du -sh "$carry"
ls -l "$carry"
