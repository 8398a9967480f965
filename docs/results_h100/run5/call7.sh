#!/usr/bin/env bash
# one device call (2 x H100): our matmul+all-gather on PyTorch's cuBLAS (its nvidia/cu13/lib first) beside the system's
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
TL=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib
ls $TL | head -30
R=$OUT/r; mkdir -p $R
sysrun() { LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64 timeout 120 $W/overlapscope run matmul-allgather --mode sequential,overlap --no-capture --timeout-s 60 > $R/$1.log 2>&1; echo "$1 rc=$?"; }
torchrun_() { LD_LIBRARY_PATH=$TL:$W:/usr/local/cuda/lib64 timeout 120 $W/overlapscope run matmul-allgather --mode sequential,overlap --no-capture --timeout-s 60 > $R/$1.log 2>&1; echo "$1 rc=$?"; }
sysrun sys1; torchrun_ tcublas1; sysrun sys2; torchrun_ tcublas2
LD_LIBRARY_PATH=$TL:$W:/usr/local/cuda/lib64 ldd $W/overlapscope-run | grep -E 'cublas|cudart|nccl'
for f in $R/*.log; do echo "== $f"; grep -E 'GEMM alone|GEMM plain|all-gather alone  |Sequential  |Overlap w/o|SM clock' $f; done
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
