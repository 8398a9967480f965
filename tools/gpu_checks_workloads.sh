# Sections `samples` and `workloads` of tools/gpu_checks.sh (sourced by it; uses check/note).
#
# Binaries: $WBIN (default .carry/workloads) holds overlapscope, overlapscope-run and gpu_tests built with
# -DOVERLAPSCOPE_STATIC=ON -DOVERLAPSCOPE_BENCH=OFF (docs/RESULTS.md says how).
#   samples:   every mode of every workload with its timing table, captured and analyzed; writes
#              $OUT/samples/<workload>-<mode>/{trace.pftrace,report.json,report.txt} and
#              $OUT/samples/<workload>-timings.{txt,json}: copy that directory to samples/.
#   workloads: samples, plus the all-gather size sweep, all-to-all with fewer NCCL CTAs, and the
#              Workload* GPU tests.
WBIN=${OVERLAPSCOPE_WORKLOADS_BIN_DIR:-$ROOT/.carry/workloads}

section_samples() {
  local os="$WBIN/overlapscope" s="$OUT/samples"
  mkdir -p "$s"
  check wl_d2h 120 "$os" run d2h -o "$s"
  # overlap-ce runs last inside the run: if NCCL rejects or hangs it, the other modes are written.
  check wl_matmul_allgather 240 "$os" run matmul-allgather --mode all --timeout-s 60 -o "$s"
  check wl_all_to_all 240 "$os" run all-to-all -o "$s"
}

section_workloads() {
  local os="$WBIN/overlapscope"
  check wl_env 30 bash -c 'nvidia-smi -L; nvidia-smi topo -m; ls -l /usr/lib/x86_64-linux-gnu/libnccl* /usr/local/cuda/lib64/libnccl* 2>&1; true'
  section_samples
  # All-gather alone over sizes, with NCCL kernels and with copy engines.
  check wl_allgather_sweep 300 "$os" run matmul-allgather --no-capture --mode all --timeout-s 60 \
    --ag-sweep 16,32,64,128,256,512,1024
  # NCCL kernels compete with the GEMM for SMs: fewer CTAs per collective, or SMs kept free.
  for ctas in 4 8; do
    check "wl_matmul_allgather_maxctas$ctas" 120 "$os" run matmul-allgather --no-capture --nccl-max-ctas $ctas
  done
  for carve in 8 16; do
    check "wl_matmul_allgather_carveout$carve" 120 "$os" run matmul-allgather --no-capture --sm-carveout $carve
  done
  for ctas in 8 16; do
    check "wl_all_to_all_maxctas$ctas" 120 "$os" run all-to-all --no-capture --nccl-max-ctas $ctas
  done
  check wl_gtests 600 "$WBIN/gpu_tests" --gtest_filter='Workload*'
  grep -E '^\[ *(OK|FAILED|SKIPPED) *\]' "$OUT/wl_gtests.log" | tee -a "$SUMMARY"
}
