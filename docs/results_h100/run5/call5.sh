#!/usr/bin/env bash
# one device call (2 x H100): matmul+all-gather as 2 threads vs 2 MPI processes, beside the reference
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
mpi() { timeout 120 mpirun -np 2 --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH \
  $W/overlapscope run $1 --mode all --no-capture --timeout-s 60 > $R/$2.log 2>&1; echo "$2 rc=$?"; }
thr() { timeout 120 $W/overlapscope run $1 --mode all --no-capture --timeout-s 60 > $R/$2.log 2>&1; echo "$2 rc=$?"; }
mpi matmul-allgather mm_mpi1; thr matmul-allgather mm_thr1; mpi matmul-allgather mm_mpi2; thr matmul-allgather mm_thr2
mpi all-to-all a2a_mpi1; thr all-to-all a2a_thr1
timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag,a2a --out $R/ref.json > $R/ref.log 2>&1; echo "ref rc=$?"
for f in $R/mm_*.log $R/a2a_*.log; do echo "== $f"; grep -E 'ranks:|GEMM alone|GEMM plain|all-gather alone  |Sequential  |Overlap w|compute alone|communication alone  |Sync \(c|Async \(c|SM clock' $f; done
grep '^\[ref\]' $R/ref.log | cut -c1-1000
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
