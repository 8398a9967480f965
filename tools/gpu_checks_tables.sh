# Section `tables` of tools/gpu_checks.sh (sourced by it; uses check/note): issue 22's workload
# tables on 2 and 4 GPUs of one machine, each beside the PyTorch reference program
# (tools/workload_reference.py) run in the same call, plus the GPU tests of the realistic GEMM
# data and of the all-reduce kernels, and the all-reduce's floor (a 16-byte all-reduce: launch
# plus the flag barriers: one for one-shot, two for two-shot, none for one-shot-push) for where
# the time goes.
#
# Writes $OUT/tables/g<N>/ (timings, captures, reports of `overlapscope run`), $OUT/tables/ref_g<N>.json
# (the reference), logs into $OUT, and packs $OUT/tables into $OUT/tables.tgz (the device tool
# brings back few files). GPU counts: TABLES_GPUS (default "4 2"; those above the machine's are
# skipped). Binaries: $WBIN (tools/gpu_checks_workloads.sh).

tables_one() {  # tables_one N: every table on GPUs 0..N-1
  local n=$1 os="$WBIN/overlapscope" d="$OUT/tables/g$1"
  local devs
  devs=$(seq -s, 0 $((n - 1)))
  mkdir -p "$d"
  export CUDA_VISIBLE_DEVICES=$devs
  check "t${n}_matmul_allgather" 240 "$os" run matmul-allgather --mode all --timeout-s 60 -o "$d"
  check "t${n}_all_to_all" 240 "$os" run all-to-all --mode all --timeout-s 60 -o "$d"
  # 20 iterations x 5 all-reduces = 100 per size and implementation; captured too (samples).
  check "t${n}_all_reduce" 240 "$os" run all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 5 \
    --timeout-s 60 -o "$d"
  check "t${n}_all_reduce_batch" 240 "$os" run all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 \
    --ar-timing batch --no-capture --timeout-s 60
  # The same all-reduces inside one CUDA graph per iteration (how inference servers' tables time).
  check "t${n}_all_reduce_graph" 240 "$os" run all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 \
    --ar-timing graph --no-capture --timeout-s 60
  # Floor: a 16-byte all-reduce is the launch and the barrier(s) (one vector of data).
  check "t${n}_all_reduce_floor" 120 "$os" run all-reduce --impl all --sizes 16B,512KB,1MB --iters 20 --reps 5 \
    --no-capture --timeout-s 60
  # One rank per process (CUDA IPC for the custom kernels): the same table.
  check "t${n}_all_reduce_mpi" 180 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np "$n" --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH \
    -x CUDA_VISIBLE_DEVICES "$os" run all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 5 --no-capture \
    --timeout-s 60
  check "t${n}_all_reduce_floor_batch" 120 "$os" run all-reduce --impl all --sizes 16B,512KB,1MB --iters 20 --reps 10 \
    --ar-timing batch --no-capture --timeout-s 60
  for b in 64 128; do
    check "t${n}_all_reduce_blocks$b" 120 "$os" run all-reduce --impl one-shot,two-shot,one-shot-push,nccl --sizes 0.5MB..16MB \
      --iters 20 --reps 10 --ar-timing batch --ar-blocks $b --no-capture --timeout-s 60
  done
  # cuBLAS's own default workspace instead of 32 MiB (what the GEMM alone took before).
  check "t${n}_matmul_allgather_ws0" 120 "$os" run matmul-allgather --mode sequential,overlap --cublas-workspace-mb 0 \
    --no-capture --timeout-s 60
  check "t${n}_all_to_all_ws0" 120 "$os" run all-to-all --mode sync,async --cublas-workspace-mb 0 --no-capture \
    --timeout-s 60
  check "t${n}_reference" 300 torchrun --nproc_per_node="$n" tools/workload_reference.py --out "$OUT/tables/ref_g$n.json"
  unset CUDA_VISIBLE_DEVICES
}

section_tables() {
  local n
  n=$(nvidia-smi -L 2>/dev/null | wc -l)
  mkdir -p "$OUT/tables"
  check t_env 30 bash -c 'nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv; python3 -c "import torch; print(torch.__version__, torch.cuda.nccl.version())"'
  check t_gtests 300 "$WBIN/gpu_tests" --gtest_filter='WorkloadGemmData.*:AllReduceKernels.*:WorkloadAllReduce.*'
  grep -E '^\[ *(OK|FAILED|SKIPPED) *\]|N\(0,1\)|element ' "$OUT/t_gtests.log" | tee -a "$SUMMARY"
  for g in ${TABLES_GPUS:-4 2}; do
    if [ "${n:-0}" -lt "$g" ]; then
      note "tables on $g GPUs: SKIPPED (found ${n:-0})"
      continue
    fi
    tables_one "$g"
  done
  # The structured data of before, for the clock and time it gave (4 GPUs or what there is).
  check t_structured 240 "$WBIN/overlapscope" run matmul-allgather --mode sequential,overlap --data structured \
    --no-capture --timeout-s 60
  grep -h -E "SM clock|GEMM alone|Sequential|Overlap|one-shot|two-shot|^ *[0-9.]+ [KM]iB|best" "$OUT"/t*_*.log \
    > "$OUT/tables_digest.txt" 2>/dev/null
  cp "$OUT"/t*.log "$OUT/tables/" 2>/dev/null
  tar czf "$OUT/tables.tgz" -C "$OUT" tables
}
