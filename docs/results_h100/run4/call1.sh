#!/bin/bash
# issue 22 (h22c), call 1: where the small all-reduce's time goes (ar_probe: stamps, ping-pong,
# empty kernels, NVLink copies) and the launch knobs (OVS_AR_PDL, OVS_AR_THREADS, --ar-blocks) on
# 2 and 4 GPUs; GPU tests with and without PDL.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/h22c_logs
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm --format=csv,noheader
ldd "$B/overlapscope-run" "$B/gpu_tests" "$B/ar_probe" | grep "not found"
nvidia-smi topo -m > "$O/topo.txt" 2>&1
g() {  # g NAME ENV...: the all-reduce GPU tests
  local name=$1; shift
  env "$@" CUDA_VISIBLE_DEVICES=0,1 timeout 120 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/$name.log" 2>&1
  echo "=== $name rc=$? $*"; grep -E "^\[ *(FAILED|SKIPPED|PASSED) *\]|Failure" "$O/$name.log" | head -12
}
g gtests
g gtests_pdl OVS_AR_PDL=1
g gtests_t256 OVS_AR_THREADS=256
export CUDA_VISIBLE_DEVICES=0,1
timeout 90 "$B/ar_probe" 40 5 64 32 128 > "$O/probe.log" 2>&1; echo "=== probe rc=$?"; cat "$O/probe.log" | cut -c1-260
OVS_AR_PDL=1 timeout 60 "$B/ar_probe" 40 5 64 > "$O/probe_pdl.log" 2>&1; echo "=== probe_pdl rc=$?"; grep -E "^ar|check" "$O/probe_pdl.log" | cut -c1-260
OVS_AR_THREADS=256 timeout 60 "$B/ar_probe" 40 5 64 128 > "$O/probe_t256.log" 2>&1; echo "=== probe_t256 rc=$?"; grep -E "^ar|check" "$O/probe_t256.log" | cut -c1-260
r() {  # r NAME ENV... -- ARGS...: one overlapscope-run all-reduce, its table rows printed
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 60 "$B/overlapscope-run" all-reduce "$@" --no-capture --timeout-s 30 > "$O/$name.log" 2>&1
  echo "=== $name rc=$? ${envs[*]}: $*"
  grep -E "^  (size|[0-9.]+ [KMG]?i?B )|rror|DATA_LOSS|wrong" "$O/$name.log" | cut -c1-160
}
for n in 2 4; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  I=nccl,one-shot,one-shot-push; [ $n = 4 ] && I=nccl,one-shot,two-shot,one-shot-push
  A="--sizes 16B,512KB,1MB,2MB --iters 40 --reps 5"
  r g${n}_base X=0 -- --impl $I $A
  r g${n}_pdl OVS_AR_PDL=1 -- --impl $I $A
  r g${n}_t256 OVS_AR_THREADS=256 -- --impl one-shot,one-shot-push $A
  r g${n}_t128 OVS_AR_THREADS=128 -- --impl one-shot,one-shot-push $A
  r g${n}_b32 X=0 -- --impl one-shot,one-shot-push $A --ar-blocks 32
  r g${n}_b128 X=0 -- --impl one-shot,one-shot-push $A --ar-blocks 128
  r g${n}_t256_b128 OVS_AR_THREADS=256 -- --impl one-shot,one-shot-push $A --ar-blocks 128
  r g${n}_t256_b32 OVS_AR_THREADS=256 -- --impl one-shot,one-shot-push $A --ar-blocks 32
  r g${n}_t128_b128 OVS_AR_THREADS=128 -- --impl one-shot,one-shot-push $A --ar-blocks 128
  r g${n}_b16 X=0 -- --impl one-shot,one-shot-push $A --ar-blocks 16
  r g${n}_base2 X=0 -- --impl $I $A
  r g${n}_batch X=0 -- --impl $I $A --ar-timing batch
  r g${n}_batch_pdl OVS_AR_PDL=1 -- --impl $I $A --ar-timing batch
done
tar czf "${OUT:-/tmp}/h22c_call1.tgz" -C /tmp h22c_logs
