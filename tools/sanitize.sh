#!/usr/bin/env bash
# The sanitizer run of CI: a second build of everything CPU-side with clang, AddressSanitizer +
# UndefinedBehaviorSanitizer and -Werror (CUDA and benchmarks off), every CPU test run in it,
# then a fuzz smoke run of each libFuzzer target (tools/fuzz.sh; default 60 s each).
#   OVERLAPSCOPE_FUZZ_SMOKE_SECONDS=N   seconds per fuzz target (0: no fuzz smoke)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
build=build-san
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1" -DOVERLAPSCOPE_FUZZ=ON -DOVERLAPSCOPE_WERROR=ON \
  -DOVERLAPSCOPE_BENCH=OFF -DOVERLAPSCOPE_CUDA=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"
# Any sanitizer report fails its test (-fno-sanitize-recover=all; abort_on_error for ASan).
export ASAN_OPTIONS=abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE gpu
secs=${OVERLAPSCOPE_FUZZ_SMOKE_SECONDS:-60}
# Two targets at a time: CI has the machine to itself (a shared machine: OVERLAPSCOPE_FUZZ_JOBS=1).
if [ "$secs" -gt 0 ]; then OVERLAPSCOPE_FUZZ_JOBS=${OVERLAPSCOPE_FUZZ_JOBS:-2} bash tools/fuzz.sh smoke "$build" "$secs"; fi
