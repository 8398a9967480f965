#!/bin/bash
# issue 22 (h22b): one-shot-push all-reduce on 4 and 2 GPUs, beside NCCL and our other kernels.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/h22b_logs
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ldd "$B/overlapscope-run" "$B/gpu_tests" | grep "not found"
nvidia-smi -L
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
r() {  # r NAME SECONDS ARGS...: one overlapscope-run call, its table printed
  local name=$1 t=$2; shift 2
  local s=$(date +%s%N)
  timeout "$t" "$B/overlapscope-run" "$@" > "$O/$name.log" 2>&1
  local rc=$?
  printf '=== %s rc=%d %dms: %s\n' "$name" "$rc" "$(( ($(date +%s%N) - s) / 1000000 ))" "$*"
  grep -E "^  (size|[0-9.]+ [KMG]?i?B )|SM clock|rror|DATA_LOSS|wrong" "$O/$name.log" | cut -c1-230
}
if [ "${SKIP_GTESTS:-0}" = 0 ]; then
  CUDA_VISIBLE_DEVICES=0,1 timeout 120 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/gtests.log" 2>&1
  echo "=== gtests rc=$?"; grep -E "^\[ *(OK|FAILED|SKIPPED) *\]|Failure|Expected|Which is|wrong" "$O/gtests.log" | head -40
fi
for n in ${GPUS:-4 2}; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  I=nccl,one-shot,one-shot-push,two-shot
  r g${n}_floor 60 all-reduce --impl $I --sizes 16B,512KB,1MB --iters 20 --reps 5 --no-capture --timeout-s 30
  r g${n}_table 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 5 --no-capture --timeout-s 30
  r g${n}_batch 90 all-reduce --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch --no-capture --timeout-s 30
  for b in 16 32 128; do
    r g${n}_push_b$b 60 all-reduce --impl one-shot,one-shot-push --sizes 16B,512KB,1MB,2MB,4MB --iters 20 --reps 5 --ar-blocks $b --no-capture --timeout-s 30
  done
done
tar czf "${OUT:-/tmp}/h22b_logs.tgz" -C /tmp h22b_logs
