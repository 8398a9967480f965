#!/usr/bin/env bash
# one device call (4 x H100): every GPU test (the MPI skew test's fix); the all-reduce goals' sizes
# as one process per GPU (mpirun) in CUDA graphs and back to back, 4 and 2 GPUs, three times each;
# the rows outside 5 % of the last call (4-GPU all-gather alone, 2-GPU all-to-all alone) again,
# ours on the system's NCCL 2.28.3 and on PyTorch's 2.28.9, beside the reference, 4 and 2 GPUs
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/r; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $L/env.log
r() { local name=$1 t=$2; shift 2; local t0=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $((SECONDS-t0)) s" | tee -a $L/summary.log; }
r gtests 300 $B/gpu_tests
grep -E '^\[ *(FAILED|PASSED|SKIPPED) |MPI median skew' $L/gtests.log | tee -a $L/summary.log
A="run all-reduce --impl all --no-capture --timeout-s 60 --iters 20 --reps 10"
M="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES -x OVERLAPSCOPE_BIN_DIR"
export CUDA_VISIBLE_DEVICES=0,1,2,3
r t4_mpi_graph_full 200 $M -np 4 $B/overlapscope $A --sizes 0.5MB..64MB --ar-timing graph
for i in 1 2 3; do for t in graph batch; do
  r t4_mpi_${t}_$i 100 $M -np 4 $B/overlapscope $A --sizes 0.5MB,1MB,4MB,16MB --ar-timing $t
  r t2_mpi_${t}_$i 100 env CUDA_VISIBLE_DEVICES=0,1 $M -np 2 $B/overlapscope $A --sizes 0.5MB,1MB,4MB,16MB --ar-timing $t
done; done
TNCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
echo "torch's NCCL: $TNCCL" | tee -a $L/summary.log
for n in 4 2; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  r g${n}_mmag 120 $B/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60
  r g${n}_a2a 120 $B/overlapscope run all-to-all --mode all --no-capture --timeout-s 60
  r g${n}_mmag_tnccl 120 env LD_LIBRARY_PATH=$TNCCL:$LD_LIBRARY_PATH $B/overlapscope run matmul-allgather --mode all --no-capture --timeout-s 60
  r g${n}_a2a_tnccl 120 env LD_LIBRARY_PATH=$TNCCL:$LD_LIBRARY_PATH $B/overlapscope run all-to-all --mode all --no-capture --timeout-s 60
  r g${n}_ref 200 torchrun --nproc_per_node=$n tools/workload_reference.py --workloads mm-ag,a2a --out $L/ref_g$n.json
done
for f in $L/g*_mmag*.log $L/g*_a2a*.log; do echo "## $(basename $f .log)"; grep -E 'NCCL 2|GEMM alone|all-gather alone  |Sequential  |Overlap w|compute alone|communication alone  |Sync \(c|Async \(c' $f | cut -c1-120; done
for f in $L/g*_ref.log; do echo "## $(basename $f .log)"; grep '^\[ref\]' $f | cut -c1-400; done
for f in $L/t*_mpi_*.log; do echo "## $(basename $f .log)"; grep -E "^  (512 KiB|1 MiB|4 MiB|16 MiB) " $f | cut -c1-150; done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $L; ls -la $OUT
