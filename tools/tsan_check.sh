#!/usr/bin/env bash
# ThreadSanitizer run of the parallel paths (issue 26): a clang build with -fsanitize=thread
# (build-tsan; CUDA off), then
#  - importers_tests (the parse at 1..16 threads and small windows, both inflaters),
#  - analyze_tests, engine_tests and replay_tests (analyses side by side, the per-rank reduction's
#    jobs, the replay's and what-if's threads),
#  - tools/threads_check.sh on its inputs and every golden input (one-model and per-rank
#    reports, info, Perfetto with --analyze: --threads 2 and 16 against --threads 1; not against
#    the goldens, which are GCC's bytes: a clang build's --analyze Perfetto file differs),
#  - analyze --json --threads 16 of a 50 MB trace and its .json.gz (many windows, every part).
# Any report fails (halt_on_error). Meant for a many-core machine (the GPU machine's 16 CPUs):
#   bash tools/tsan_check.sh            (about 15 minutes on 16 cores)
# Where the machine has no clang: tools/tsan_carried.sh runs the same checks from a build made here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-tsan
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1" -DOVERLAPSCOPE_TSAN=ON -DOVERLAPSCOPE_CUDA=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target overlapscope importers_tests analyze_tests engine_tests replay_tests gen_kineto_trace
# TSAN_BUILD_ONLY=1: the build alone (tools/tsan_carried.sh packs it for a machine without clang).
[[ -z "${TSAN_BUILD_ONLY:-}" ]] || exit 0
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -L '^(importers_tests|analyze_tests|engine_tests|replay_tests)$'
mapfile -t golden < <(grep -v '^#' tests/data/golden/inputs.txt | grep -v '^$')
bash tools/threads_check.sh "$build/cli/overlapscope" "${golden[@]}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$build/bench/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$tmp/t.json" --mb 50
gzip -c "$tmp/t.json" >"$tmp/t.json.gz"
for f in "$tmp/t.json" "$tmp/t.json.gz"; do
  "$build/cli/overlapscope" analyze "$f" --json --threads 16 >"$tmp/a16"
  "$build/cli/overlapscope" analyze "$f" --json --threads 1 >"$tmp/a1"
  cmp "$tmp/a1" "$tmp/a16"
done
echo "tsan_check: no ThreadSanitizer report; 50 MB trace the same at 1 and 16 threads"
