#!/bin/bash
# issue 22 (h22c), call 2: one-shot-push polling/store knobs (OVS_PUSH_TUNE: bit 0 weak stores,
# bit 1 one lane per warp polls first, bits 8.. ns of sleep before the first poll) x launch shape,
# with stamps (ar_probe); the all-reduce tables on 2 and 4 GPUs with and without PDL.
B=$(cd "$(dirname "$0")" && pwd)
O=/tmp/h22c_logs2
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm --format=csv,noheader
g() {  # g NAME ENV...: the all-reduce GPU tests
  local name=$1; shift
  env "$@" CUDA_VISIBLE_DEVICES=0,1 timeout 120 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' > "$O/$name.log" 2>&1
  echo "=== $name rc=$? $*"; grep -E "^\[ *(FAILED|SKIPPED|PASSED) *\]|Failure" "$O/$name.log" | head -12
}
g gtests_push3 OVS_PUSH_TUNE=3
g gtests_pdl OVS_AR_PDL=1
export CUDA_VISIBLE_DEVICES=0,1
for t in 0 1 2 3 0x20000; do
  OVS_PUSH_TUNE=$t timeout 60 "$B/ar_probe" 30 5 64 128 > "$O/probe_push$t.log" 2>&1
  echo "=== probe_push$t rc=$?"; grep -E "^ar +one-shot-push +(524288|1048576)|check" "$O/probe_push$t.log" | cut -c1-250
done
OVS_AR_THREADS=256 OVS_PUSH_TUNE=2 timeout 60 "$B/ar_probe" 30 5 128 > "$O/probe_push2_t256.log" 2>&1
echo "=== probe_push2_t256 rc=$?"; grep -E "^ar +one-shot-push +(524288|1048576)|check" "$O/probe_push2_t256.log" | cut -c1-250
r() {  # r NAME ENV... -- ARGS...: one overlapscope-run all-reduce, its table rows printed
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 90 "$B/overlapscope-run" all-reduce "$@" --no-capture --timeout-s 30 > "$O/$name.log" 2>&1
  echo "=== $name rc=$? ${envs[*]}: $*"
  grep -E "^  (size|[0-9.]+ [KMG]?i?B )|rror|DATA_LOSS|wrong|SM clock" "$O/$name.log" | cut -c1-200 | head -${L:-6}
}
A="--sizes 16B,512KB,1MB,2MB --iters 40 --reps 5"
r g2_push_base X=0 -- --impl one-shot,one-shot-push $A
for t in 1 2 3 0x20000 0x20002; do
  r g2_push$t OVS_PUSH_TUNE=$t -- --impl one-shot-push $A
  r g2_push${t}_t256_b128 OVS_PUSH_TUNE=$t OVS_AR_THREADS=256 -- --impl one-shot-push $A --ar-blocks 128
done
r g2_push_base2 X=0 -- --impl one-shot,one-shot-push $A
for n in 2 4; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  L=12 r g${n}_table X=0 -- --impl all --sizes 0.5MB..64MB --iters 20 --reps 5
  L=12 r g${n}_table_pdl OVS_AR_PDL=1 -- --impl all --sizes 0.5MB..64MB --iters 20 --reps 5
  L=12 r g${n}_batch X=0 -- --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
  L=12 r g${n}_batch_pdl OVS_AR_PDL=1 -- --impl all --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
  r g${n}_floor_pdl OVS_AR_PDL=1 -- --impl all --sizes 16B,512KB,1MB --iters 40 --reps 5
  r g${n}_floor_batch_pdl OVS_AR_PDL=1 -- --impl all --sizes 16B,512KB,1MB --iters 40 --reps 10 --ar-timing batch
done
tar czf "${OUT:-/tmp}/h22c_call2.tgz" -C /tmp h22c_logs2
