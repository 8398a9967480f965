#!/usr/bin/env bash
# The sanitizer run of CI: a second build with clang, AddressSanitizer + UndefinedBehaviorSanitizer
# and -Werror (CUDA and benchmarks off), the CPU tests of the code that reads input run in it,
# then a fuzz smoke run of each libFuzzer target (tools/fuzz.sh; default 30 s each).
#
# CI sanitizes a subset to stay under 30 minutes on 2 cores (docs/RELIABILITY.md has the
# figures): the suites model_tests, importers_tests, analyze_tests, engine_tests and the fuzz
# regression runs (every trace of tests/data through import, analysis, every report and both
# exports). report_tests, exporters_tests, cli_tests (with the bad-input catalogue) and the
# goldens are not built here: OVERLAPSCOPE_SANITIZE_ALL=1 builds and runs every CPU test.
#   OVERLAPSCOPE_FUZZ_SMOKE_SECONDS=N   seconds per fuzz target (0: no fuzz smoke)
#   OVERLAPSCOPE_FUZZ_JOBS=N            fuzz targets at a time (default 2: CI has the machine to
#                                       itself; on a shared machine use 1)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
build=build-san
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1" -DOVERLAPSCOPE_FUZZ=ON -DOVERLAPSCOPE_WERROR=ON \
  -DOVERLAPSCOPE_BENCH=OFF -DOVERLAPSCOPE_CUDA=OFF >/dev/null
fuzz=(kineto_json kineto_gzip gzip_parallel ovspill ovnccl pipeline)
if [ "${OVERLAPSCOPE_SANITIZE_ALL:-0}" = 1 ]; then
  targets=(all) labels=()
else
  targets=(model_tests importers_tests analyze_tests engine_tests fuzz_seeds)
  for t in "${fuzz[@]}"; do targets+=("fuzz_$t" "fuzz_${t}_regress"); done
  labels=(-L '^(model_tests|importers_tests|analyze_tests|engine_tests|fuzz_regression)$')
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
# Any sanitizer report fails its test (-fno-sanitize-recover=all; abort_on_error for ASan).
export ASAN_OPTIONS=abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE gpu "${labels[@]}"
secs=${OVERLAPSCOPE_FUZZ_SMOKE_SECONDS:-30}
if [ "$secs" -gt 0 ]; then OVERLAPSCOPE_FUZZ_JOBS=${OVERLAPSCOPE_FUZZ_JOBS:-2} bash tools/fuzz.sh smoke "$build" "$secs"; fi
