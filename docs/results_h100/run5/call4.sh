#!/usr/bin/env bash
# one device call (2 x H100): the reference's GEMM on the workload's own inputs beside torch.randn's
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
ref() { timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag --inputs $1 --out $R/ref_$2.json > $R/ref_$2.log 2>&1; echo "ref $2 rc=$?"; }
ref ovs ovs1; ref randn randn1
timeout 120 $W/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60 > $R/mmag.log 2>&1; echo "mmag rc=$?"
ref ovs ovs2; ref randn randn2
grep -E 'GEMM alone|GEMM plain|all-gather alone  |Sequential  |Overlap w|SM clock' $R/mmag.log
for f in $R/ref_*.log; do echo "== $f"; grep '^\[ref\]' $f | cut -c1-1200; grep -i -E 'error|Traceback' $f | head -5; done
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
