#!/bin/bash
# issue 22 (h22c), final code on 2 GPUs: GPU tests, the all-reduce table (per call and batch),
# the floor, ar_probe. Logs into $OUT/final2.tgz.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/final2
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_VISIBLE_DEVICES=0,1
nvidia-smi -L | tee "$O/gpus.txt"
timeout 60 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/gtests.log" 2>&1
echo "=== gtests rc=$?"; grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure" "$O/gtests.log"
r() {
  local name=$1; shift
  timeout 60 "$B/overlapscope-run" all-reduce "$@" --no-capture --timeout-s 30 > "$O/$name.log" 2>&1
  echo "=== $name rc=$?: $*"; grep -E "^  (size|[0-9.]+ [KMG]?i?B )|rror|DATA_LOSS|SM clock" "$O/$name.log" | cut -c1-200
}
r g2_table --impl all --sizes 0.5MB..64MB --iters 20 --reps 5
r g2_batch --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
r g2_floor --impl nccl,one-shot,one-shot-push --sizes 16B,512KB,1MB --iters 40 --reps 5
timeout 40 "$B/ar_probe" 20 5 64 > "$O/probe.log" 2>&1; echo "=== probe rc=$?"; grep -E "^(pingpong|chase|empty|ar .*(16 B|524288)|check)" "$O/probe.log" | cut -c1-200
tar czf "${OUT:-/tmp}/final2.tgz" -C /tmp final2
