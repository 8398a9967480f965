#!/bin/bash
# issue 22 (h22b), second call: one-shot-push variants (OVS_PUSH_TUNE: bit 0 weak stores, bit 1
# one polling lane per warp first, bits 8.. nanosleep ns between polls) x blocks, 4 and 2 GPUs.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/h22b_logs
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
r() {  # r NAME SECONDS ARGS...
  local name=$1 t=$2; shift 2
  timeout "$t" "$B/overlapscope-run" "$@" > "$O/$name.log" 2>&1
  echo "=== $name rc=$? tune=${OVS_PUSH_TUNE:-0}: $*"
  grep -E "^  ([0-9.]+ [KMG]?i?B )|rror|DATA_LOSS|wrong" "$O/$name.log" | cut -c1-150
}
CUDA_VISIBLE_DEVICES=0,1 timeout 60 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/gtests.log" 2>&1
echo "=== gtests rc=$?"; grep -E "^\[ *(FAILED|SKIPPED) *\]|Failure|PASSED" "$O/gtests.log" | head -20
for n in 4 2; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  r g${n}_base 60 all-reduce --impl nccl,one-shot,two-shot,one-shot-push --sizes 16B,512KB,1MB,2MB,4MB --iters 40 --reps 5 --no-capture --timeout-s 30
  for tune in 0 1 2 3 0x4000 0x10000 0x4002 0x4003; do
    for b in 64 128; do
      OVS_PUSH_TUNE=$tune r g${n}_t${tune}_b$b 40 all-reduce --impl one-shot-push --sizes 512KB,1MB,4MB --iters 40 --reps 5 --ar-blocks $b --no-capture --timeout-s 30
    done
  done
  r g${n}_table 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 5 --no-capture --timeout-s 30
  r g${n}_batch 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch --no-capture --timeout-s 30
done
tar czf "${OUT:-/tmp}/h22b_logs2.tgz" -C /tmp h22b_logs
