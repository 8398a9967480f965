# Section `multirank` of tools/gpu_checks.sh (sourced by it; uses check/note): issue 7's checks.
#
# On every visible GPU (2 or more), with the NCCL profiler plugin loaded by `run` and `profile`:
#   - matmul-allgather and all-to-all, regular and copy-engine, under `run` (threads), under
#     `mpirun -np N overlapscope run` (processes), and under `overlapscope profile` (threads and
#     mpirun), each with its report (every collective: bytes, sequence, algorithm per rank);
#   - a straggler (--delay-rank 1 --delay-us 500): the capture analysis's skew against the
#     ranks' own CUDA-event skew (tools/skew_check.py; must agree within 5 %), threads and MPI,
#     and the report's straggler causes (METRICS §8) naming the delayed rank's spin as the cause,
#     its time per instance within 10 % of the delay, the rank's lead within 10 % + 50 us of the
#     ranks' CUDA-event skew (tools/straggler_cause_check.py);
#   - the NCCL-plugin and skew GPU tests.
# Writes $OUT/multirank/<check>/ (reports, timings) and one line per check into the summary;
# tools/multirank_summary.py condenses every report.json it finds.
# Binaries: $WBIN (tools/gpu_checks_workloads.sh) must hold overlapscope, overlapscope-run,
# gpu_tests, libovscope_inject.so and libnccl-profiler-overlapscope.so.

section_multirank() {
  local os="$WBIN/overlapscope" d="$OUT/multirank"
  local n
  n=$(nvidia-smi -L 2>/dev/null | wc -l)
  mkdir -p "$d"
  if [ "${n:-0}" -lt 2 ]; then
    note "multirank: SKIPPED (needs 2 or more GPUs, found ${n:-0})"
    return 0
  fi
  # OpenMPI refuses root unless told; the GPU machine runs commands as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Shared-memory transport without CMA (containers often forbid process_vm_readv).
  local mpirun="mpirun -np $n --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
  local short="--iters 10 --warmup 3 --capture-iters 5 --timeout-s 60"
  # Skew checks: 20 captured iterations, so that the medians compared are not those of 5 noisy
  # instances (the ranks' GEMMs end up to ~0.1 ms apart from one iteration to the next).
  local skew="--iters 20 --warmup 3 --capture-iters 20 --timeout-s 60"
  check mr_env 30 bash -c "nvidia-smi -L; nvidia-smi topo -m; $mpirun --version | head -1; ls -l '$WBIN'"

  # run, one thread per GPU: regular and copy-engine.
  check mr_run_ag 240 "$os" run matmul-allgather --mode sequential,overlap,overlap-ce $short --report -o "$d/run_threads"
  check mr_run_a2a 240 "$os" run all-to-all --mode sync,async,async-ce $short --report -o "$d/run_threads"
  # run under MPI: one rank per process.
  check mr_mpi_ag 240 $mpirun "$os" run matmul-allgather --mode overlap,overlap-ce $short --report -o "$d/run_mpi"
  check mr_mpi_a2a 240 $mpirun "$os" run all-to-all --mode async,async-ce $short --report -o "$d/run_mpi"
  # profile: any program; here the workloads without their own capture.
  check mr_prof_ag 240 "$os" profile -o "$d/prof_threads_ag" -- \
    "$os" run matmul-allgather --mode overlap,overlap-ce --no-capture --iters 5 --warmup 2
  check mr_prof_a2a_mpi 240 "$os" profile -o "$d/prof_mpi_a2a" -- \
    $mpirun "$os" run all-to-all --mode async,async-ce --no-capture --iters 5 --warmup 2
  check mr_prof_ag_mpi 240 "$os" profile -o "$d/prof_mpi_ag" -- \
    $mpirun "$os" run matmul-allgather --mode overlap-ce --no-capture --iters 5 --warmup 2
  for p in prof_threads_ag prof_mpi_a2a prof_mpi_ag; do
    [ -d "$d/$p" ] && "$os" analyze "$d/$p" --json > "$d/$p/report.json" 2> "$d/$p/analyze.err"
  done

  # Straggler: rank 1 arrives 500 us late at every collective.
  check mr_skew_threads 240 "$os" run matmul-allgather --mode sequential --delay-rank 1 --delay-us 500 $skew \
    -o "$d/skew_threads"
  check mr_skew_threads_cmp 30 python3 tools/skew_check.py "$d/skew_threads" matmul-allgather sequential
  check mr_cause_threads 30 python3 tools/straggler_cause_check.py \
    "$d/skew_threads/matmul-allgather-sequential/report.json" --delay-rank 1 --delay-us 500 \
    --timings "$d/skew_threads/matmul-allgather-timings.json" --mode sequential
  check mr_skew_mpi 240 $mpirun "$os" run all-to-all --mode sync --delay-rank 1 --delay-us 500 $skew \
    -o "$d/skew_mpi"
  check mr_skew_mpi_cmp 30 python3 tools/skew_check.py "$d/skew_mpi" all-to-all sync
  check mr_cause_mpi 30 python3 tools/straggler_cause_check.py "$d/skew_mpi/all-to-all-sync/report.json" \
    --delay-rank 1 --delay-us 500 --timings "$d/skew_mpi/all-to-all-timings.json" --mode sync
  # The same straggler while the collective overlaps a GEMM, with NCCL kernels and on the copy
  # engines: arrival (collective_arrival.h), not the first activity's start, is what the ranks'
  # events see there.
  check mr_skew_overlap 240 "$os" run matmul-allgather --mode overlap,overlap-ce --delay-rank 1 --delay-us 500 \
    $skew -o "$d/skew_overlap"
  check mr_skew_overlap_cmp 30 python3 tools/skew_check.py "$d/skew_overlap" matmul-allgather overlap
  check mr_skew_overlap_ce_cmp 30 python3 tools/skew_check.py "$d/skew_overlap" matmul-allgather overlap-ce
  for m in overlap overlap-ce; do
    check "mr_cause_${m//-/_}" 30 python3 tools/straggler_cause_check.py \
      "$d/skew_overlap/matmul-allgather-$m/report.json" --delay-rank 1 --delay-us 500 \
      --timings "$d/skew_overlap/matmul-allgather-timings.json" --mode "$m"
  done
  check mr_skew_mpi_ce 240 $mpirun "$os" run all-to-all --mode async-ce --delay-rank 0 --delay-us 300 $skew \
    -o "$d/skew_mpi_ce"
  check mr_skew_mpi_ce_cmp 30 python3 tools/skew_check.py "$d/skew_mpi_ce" all-to-all async-ce
  check mr_cause_mpi_ce 30 python3 tools/straggler_cause_check.py "$d/skew_mpi_ce/all-to-all-async-ce/report.json" \
    --delay-rank 0 --delay-us 300 --timings "$d/skew_mpi_ce/all-to-all-timings.json" --mode async-ce
  grep -h -E "^(PASS|FAIL)" "$OUT"/mr_skew_*_cmp.log "$OUT"/mr_cause_*.log | tee -a "$SUMMARY"

  check mr_gtests 300 env OVERLAPSCOPE_BIN_DIR="$WBIN" "$WBIN/gpu_tests" --gtest_filter='*Nccl*:*Skew*:*Plugin*'
  grep -E '^\[ *(OK|FAILED|SKIPPED) *\]' "$OUT/mr_gtests.log" | tee -a "$SUMMARY"
  python3 tools/multirank_summary.py "$d" > "$OUT/mr_summary.log" 2>&1
  cat "$OUT/mr_summary.log" | tee -a "$SUMMARY"
}
