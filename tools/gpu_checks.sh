#!/usr/bin/env bash
# tools/gpu_checks.sh [SECTION...] — every GPU check of overlapscope in one device call.
# Sections: capture, capture_bench, workloads, multirank, tables, python (see SECTIONS below).
#
# Runs from the repository root on the GPU machine, with the binaries built on the development
# machine (OVERLAPSCOPE_STATIC=ON) carried in $BIN (default .carry/capture). Every check writes
# $OUT/<check>.log and one PASS/FAIL line with its wall time to $OUT/summary.txt; the summary
# is printed at the end. Without arguments all sections run.
#
# Adding a section: write a function `section_<name>` that calls `check NAME TIMEOUT CMD...`
# (or `note TEXT`), and append <name> to SECTIONS below.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu_checks_out}
BIN=${OVERLAPSCOPE_BIN_DIR:-$ROOT/.carry/capture}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NVLink multicast can take the shared GPUs out of service: off in every process.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"

# check NAME TIMEOUT_S CMD...: runs CMD with a time limit, logs to $OUT/NAME.log. Checks named in
# $GPU_CHECKS_SKIP (space-separated) are listed as skipped (e.g. two-GPU checks on one GPU).
check() {
  local name=$1 limit=$2
  shift 2
  if [[ " ${GPU_CHECKS_SKIP:-} " == *" $name "* ]]; then
    printf '%-34s SKIPPED (GPU_CHECKS_SKIP)\n' "$name" | tee -a "$SUMMARY"
    return 0
  fi
  local t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local verdict=PASS
  [ $rc -ne 0 ] && verdict=FAIL
  [ $rc -eq 124 ] && verdict="FAIL (timeout ${limit}s)"
  printf '%-34s %s rc=%d %d ms\n' "$name" "$verdict" "$rc" "$ms" | tee -a "$SUMMARY"
  return $rc
}
note() { echo "$*" | tee -a "$SUMMARY"; }

# ---------------------------------------------------------------- capture (CUPTI, injection)
section_capture() {
  local prof="$BIN/overlapscope profile" kw="$BIN/known_work"
  check capture_env 30 bash -c 'nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv'
  # Exact counts, streams, copy kinds, sync kinds, ordering; in-process and injected; crash,
  # exit-from-thread and fork targets.
  check capture_gtests 180 env OVERLAPSCOPE_BIN_DIR="$BIN" OVERLAPSCOPE_TEST_OUT="$OUT/capture_tests" \
    "$BIN/gpu_tests" --gtest_filter='*Capture*'
  grep -E '^\[ *(OK|FAILED|SKIPPED) *\]' "$OUT/capture_gtests.log" | tee -a "$SUMMARY"
  check capture_profile_known_work 60 $prof -o "$OUT/profile_known_work" -- "$kw" normal
  # Two ranks (processes) in one profile: one spill file each, one trace with both.
  check capture_two_ranks 60 bash -c "$prof -o '$OUT/two_ranks' -- bash -c 'RANK=0 WORLD_SIZE=2 \"$kw\" normal &
      RANK=1 WORLD_SIZE=2 CUDA_VISIBLE_DEVICES=1 \"$kw\" normal & wait' && ls '$OUT/two_ranks' &&
      test -f '$OUT/two_ranks/rank0.ovspill' && test -f '$OUT/two_ranks/rank1.ovspill'"
  grep -E "captured .* process|rank [0-9] pid" "$OUT/capture_two_ranks.log" | tee -a "$SUMMARY"
  # Overhead: GPU time per iteration of 20 kernels, plain vs under capture (with and without
  # driver API records), 3 rounds each; tiny kernels (launch-bound) and ~20 us kernels.
  check capture_overhead 150 bash -c "for r in 1 2 3; do for l in 'loop 5000' 'loop_spin 300'; do
      '$kw' \$l | grep LOOP | sed 's/^/plain    /'
      $prof -o '$OUT/overhead' -- '$kw' \$l | grep LOOP | sed 's/^/captured /'
      $prof --no-driver-api -o '$OUT/overhead' -- '$kw' \$l | grep LOOP | sed 's/^/nodriver /'
    done; done"
  [ -f "$OUT/capture_overhead.log" ] && python3 - "$OUT/capture_overhead.log" <<'PY' | tee -a "$SUMMARY"
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(plain|captured|nodriver)\s+(LOOP\w*) .*gpu_us_per_iter=([\d.]+) wall_us_per_iter=([\d.]+)", line)
    if m:
        r = runs.setdefault(m[2], {}).setdefault(m[1], {"gpu": [], "wall": []})
        r["gpu"].append(float(m[3])); r["wall"].append(float(m[4]))
if not runs:
    print("overhead: FAIL no LOOP lines")
for loop, v in sorted(runs.items()):
    for k in ("gpu", "wall"):
        if "plain" not in v:
            continue
        p = statistics.median(v["plain"][k])
        line = f"overhead {loop:9s} {k:4s} us/iter (20 kernels, median of {len(v['plain'][k])}): plain {p:.3f}"
        for c in ("captured", "nodriver"):
            if c in v:
                m = statistics.median(v[c][k])
                line += f"; {c} {m:.3f} ({(m - p) / p * 100:+.2f} %)"
        print(line)
        print("    all:", {c: v[c][k] for c in v})
PY
  # PyTorch: same kernels and durations as torch.profiler (separate processes).
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    mkdir -p "$OUT/torch"
    check capture_torch_profiler 120 python3 tools/torch_capture_check.py torchprof "$OUT/torch/kineto.json"
    check capture_torch_capture 120 env OVERLAPSCOPE_VERBOSE=1 $prof -o "$OUT/torch/capture" -- python3 tools/torch_capture_check.py plain
    check capture_torch_compare 60 bash -c "'$BIN/spill_dump' '$OUT/torch/capture/'*.ovspill > '$OUT/torch/capture.tsv' &&
      python3 tools/torch_capture_check.py compare '$OUT/torch/capture.tsv' '$OUT/torch/kineto.json'"
    grep -E 'PASS|FAIL|kernels in|NVTX' "$OUT/capture_torch_compare.log" | tee -a "$SUMMARY"
  else
    note "capture_torch: SKIPPED (no torch with CUDA)"
  fi
}

# ---------------------------------------------------------------- capture_bench (issue 13)
# What `overlapscope profile` costs: PyTorch phases and known_work loops under no profiler, the
# CUPTI floor client (bench/capture_overhead/floor_inject.cc), overlapscope (default, API as
# activity records, --api=all, an unopened capture range) and torch.profiler, interleaved rounds;
# record counts against torch.profiler and the floor; capture ranges of 10 steps in 1000.
section_capture_bench() {
  # The captures are large: they stay on the machine; the table, the values and the logs come back.
  local work=${TMPDIR:-/tmp}/overlapscope-bench
  rm -rf "$work"
  check capture_bench "${BENCH_TIMEOUT:-480}" python3 bench/capture_overhead/run_bench.py --bin "$BIN" --out "$work" \
    --cap-dir "$work/cap" --rounds "${BENCH_ROUNDS:-3}" ${BENCH_ARGS:-}
  cp "$work/bench_table.md" "$work/bench_values.json" "$OUT/" 2>/dev/null
  tar czf "$OUT/bench_logs.tgz" -C "$work" logs 2>/dev/null
  sed -n '/ runs in /,$p' "$OUT/capture_bench.log" | tee -a "$SUMMARY"
}

SECTIONS=(capture capture_bench)
# Workloads and their samples (tools/gpu_checks_workloads.sh).
source "$ROOT/tools/gpu_checks_workloads.sh"
SECTIONS+=(workloads)
# Multi-rank: NCCL plugin, MPI, profile, skew against CUDA events (tools/gpu_checks_multirank.sh).
source "$ROOT/tools/gpu_checks_multirank.sh"
SECTIONS+=(multirank)
# Issue 22: workload tables on 2 and 4 GPUs beside the PyTorch reference (tools/gpu_checks_tables.sh).
source "$ROOT/tools/gpu_checks_tables.sh"
SECTIONS+=(tables)
# Python package with PyTorch (tools/gpu_checks_python.sh).
source "$ROOT/tools/gpu_checks_python.sh"
SECTIONS+=(python)

run=("$@")
[ ${#run[@]} -eq 0 ] && run=("${SECTIONS[@]}")
for s in "${run[@]}"; do
  note "== section $s"
  "section_$s"
done
echo "----- summary ($SUMMARY)"
cat "$SUMMARY"
