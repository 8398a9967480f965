#!/bin/bash
# issue 22 (h22c), final code (PDL launch by default, stamps, no knobs): the all-reduce GPU tests
# on one GPU (the kernels play 2/4/8 ranks in one launch; the 2-GPU workload test skips here).
B=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi -L
timeout 120 "$B/gpu_tests" --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*' 2>&1 | tee "${OUT:-/tmp}/final_gtests.log" | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|Expected|Which is|tests ran"
