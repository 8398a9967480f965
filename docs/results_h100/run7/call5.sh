#!/usr/bin/env bash
# one device call (4 x H100): Nsight Compute on the all-reduce kernels (tools/ncu_all_reduce.sh,
# one metric set per run so no kernel is replayed), 2 processes and 4, rank 0 under ncu
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0 OVERLAPSCOPE_BIN=$B/overlapscope
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/t; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw --format=csv,noheader | tee $L/env.log
export CUDA_VISIBLE_DEVICES=0,1
timeout 250 tools/ncu_all_reduce.sh $L/ncu2 2 0.5MB,4MB; echo "ncu2 rc=$?"
export CUDA_VISIBLE_DEVICES=0,1,2,3
NCU_METRIC_SETS="gpu__time_duration.sum,launch__grid_size nvlrx__bytes.sum,nvltx__bytes.sum" \
  timeout 200 tools/ncu_all_reduce.sh $L/ncu4 4 0.5MB,1MB; echo "ncu4 rc=$?"
grep -hE '^  (512 KiB|1 MiB|4 MiB) ' $L/ncu2/run_*_1.log $L/ncu4/run_*_1.log | cut -c1-150
tar czf $OUT/t.tgz -C $OUT t && rm -rf $L; ls -la $OUT
