#!/bin/bash
# issue 22 (h22b), third call: one-shot-push by bulk copies (default) vs thread stores
# (OVS_PUSH_TUNE=4), the all-reduce tables on 4 and 2 GPUs, mpirun, a capture.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/h22b_logs
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
nvidia-smi topo -m > "$O/topo.txt" 2>&1
r() {  # r NAME SECONDS ARGS...
  local name=$1 t=$2; shift 2
  timeout "$t" "$B/overlapscope-run" "$@" > "$O/$name.log" 2>&1
  echo "=== $name rc=$? tune=${OVS_PUSH_TUNE:-0}: $*"
  grep -E "^  ([0-9.]+ [KMG]?i?B )|rror|DATA_LOSS|wrong" "$O/$name.log" | cut -c1-150 | head -${L:-6}
}
CUDA_VISIBLE_DEVICES=0,1 timeout 60 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/gtests.log" 2>&1
echo "=== gtests rc=$?"; grep -E "^\[ *(FAILED|SKIPPED) *\]|Failure|PASSED" "$O/gtests.log" | head -20
S="16B,512KB,1MB,2MB,4MB"
for n in 4 2; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  r g${n}_var_bulk_b64 40 all-reduce --impl nccl,one-shot,two-shot,one-shot-push --sizes $S --iters 40 --reps 5 --no-capture --timeout-s 30
  OVS_PUSH_TUNE=4 r g${n}_var_st_b64 40 all-reduce --impl one-shot-push --sizes $S --iters 40 --reps 5 --no-capture --timeout-s 30
  for b in 32 128; do
    r g${n}_var_bulk_b$b 40 all-reduce --impl one-shot-push --sizes $S --iters 40 --reps 5 --ar-blocks $b --no-capture --timeout-s 30
  done
  L=0 r g${n}_table 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 5 --no-capture --timeout-s 30
  L=0 r g${n}_batch 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch --no-capture --timeout-s 30
  OVS_PUSH_TUNE=4 L=0 r g${n}_table_st 60 all-reduce --impl nccl,one-shot-push --sizes 0.5MB..64MB --iters 20 --reps 5 --no-capture --timeout-s 30
done
export CUDA_VISIBLE_DEVICES=0,1,2,3
timeout 90 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 4 --bind-to none --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES \
  "$B/overlapscope-run" all-reduce --impl nccl,one-shot,two-shot,one-shot-push --sizes 0.5MB..64MB --iters 20 --reps 5 \
  --no-capture --timeout-s 30 > "$O/g4_mpi.log" 2>&1
echo "=== g4_mpi rc=$?"; grep -E "^  ([0-9.]+ [KMG]?i?B )|rror|DATA_LOSS" "$O/g4_mpi.log" | cut -c1-150 | head -4
timeout 120 "$B/overlapscope" run all-reduce --impl one-shot-push --sizes 0.5MB..64MB --iters 20 --reps 5 --timeout-s 60 \
  -o "$O/cap" > "$O/g4_capture.log" 2>&1
echo "=== g4_capture rc=$?"; grep -E "matched|collective|wrote|rror" "$O/g4_capture.log" | head -8
tar czf "${OUT:-/tmp}/h22b_logs3.tgz" -C /tmp h22b_logs
