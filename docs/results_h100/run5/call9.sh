#!/usr/bin/env bash
# one device call (2 x H100): the reference's power-capped steady state (gemm_steady) beside ours
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
for r in 1 2; do
  timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag --out $R/ref_$r.json > $R/ref_$r.log 2>&1; echo "ref $r rc=$?"
  timeout 120 $W/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60 > $R/mmag_$r.log 2>&1; echo "mmag $r rc=$?"
done
for f in $R/mmag_*.log; do echo "== $f"; grep -E 'GEMM alone|GEMM plain|all-gather alone  |Sequential  |Overlap w/o|SM clock' $f; done
for f in $R/ref_*.log; do echo "== $f"; grep '^\[ref\]' $f | cut -c1-900; grep -E 'Error|Traceback' -A3 $f | head -8; done
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
