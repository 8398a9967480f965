#!/usr/bin/env bash
# one device call (4 x H100): the all-reduce GPU tests with --ar-no-hold's; Nsight Compute on the
# all-reduce kernels (tools/ncu_all_reduce.sh) as 2 and 4 processes, rank 0 under ncu
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0 OVERLAPSCOPE_BIN=$B/overlapscope
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/s; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit --format=csv,noheader | tee $L/env.log
timeout 200 $B/gpu_tests --gtest_filter='WorkloadAllReduce.*:WorkloadCli.*:AllReduceKernels.*' > $L/gtests.log 2>&1; echo "gtests rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) ' $L/gtests.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
timeout 60 $NCU --query-metrics --chip gh100 > $L/metrics.txt 2>&1; echo "query rc=$?"
grep -E '^(nvl|dram__bytes|gpu__time_duration|sm__cycles_active|lts__t_bytes) ' $L/metrics.txt | cut -c1-150
export CUDA_VISIBLE_DEVICES=0,1
timeout 200 tools/ncu_all_reduce.sh $L/ncu2 2 0.5MB,4MB one-shot,two-shot,one-shot-push,nccl; echo "ncu2 rc=$?"
export CUDA_VISIBLE_DEVICES=0,1,2,3
timeout 200 tools/ncu_all_reduce.sh $L/ncu4 4 0.5MB,1MB,4MB one-shot,two-shot,one-shot-push,nccl; echo "ncu4 rc=$?"
tail -5 $L/ncu2/run_0.5MB.log; grep -E '^  (512 KiB|1 MiB|4 MiB) |no-hold' $L/ncu*/run_*.log | cut -c1-170
tar czf $OUT/s.tgz -C $OUT s && rm -rf $L; ls -la $OUT
