#!/usr/bin/env bash
# one device call (2 x H100): clocks, power cap and NCCL version behind the 2-GPU matmul+all-gather rows
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
timeout 120 $W/gpu_tests --gtest_filter='WorkloadSmClock.*:WorkloadGemmData.*' > $R/gtests.log 2>&1; echo "gtests rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |SM clock' $R/gtests.log
TNCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
echo "torch's NCCL: $TNCCL"; ls $TNCCL 2>&1 | head -3
for r in 1 2; do
  timeout 120 $W/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60 > $R/mmag_$r.log 2>&1; echo "mmag $r rc=$?"
  timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag,a2a --out $R/ref_$r.json > $R/ref_$r.log 2>&1; echo "ref $r rc=$?"
done
LD_LIBRARY_PATH=$TNCCL:$LD_LIBRARY_PATH timeout 120 $W/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60 > $R/mmag_tnccl.log 2>&1; echo "mmag torch-nccl rc=$?"
LD_LIBRARY_PATH=$TNCCL:$LD_LIBRARY_PATH timeout 120 $W/overlapscope run all-to-all --mode all --no-capture --timeout-s 60 > $R/a2a_tnccl.log 2>&1; echo "a2a torch-nccl rc=$?"
timeout 120 $W/overlapscope run all-to-all --mode all --no-capture --timeout-s 60 > $R/a2a.log 2>&1; echo "a2a rc=$?"
for f in $R/mmag_*.log $R/a2a*.log; do echo "== $f"; grep -E 'NCCL 2|GEMM alone|all-gather alone  |Sequential  |Overlap w|compute alone|communication alone  |Sync \(c|Async \(c|SM clock' $f; done
for f in $R/ref_*.log; do echo "== $f"; grep '^\[ref\]' $f | cut -c1-900; done
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
