#!/usr/bin/env bash
# one device call (4 GPUs): every GPU test of the final binaries (main after this round's merges)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name --format=csv,noheader
t0=$SECONDS; timeout 300 $B/gpu_tests > $OUT/gtests.log 2>&1; echo "gpu_tests rc=$? $((SECONDS-t0)) s"
grep -E '^\[ *(FAILED|PASSED|SKIPPED) |MPI median skew|tests ran' $OUT/gtests.log
