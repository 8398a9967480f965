#!/usr/bin/env bash
# one device call (4 GPUs): --ar-timing graph (graph uploaded before the event pair) beside batch and each, 4 and 2 GPUs
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=$PWD/.carry/workloads; L=$OUT/l; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $L/env.log
r() { local name=$1 t=$2; shift 2; local t0=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $((SECONDS-t0)) s" | tee -a $L/summary.log; }
r gtests 300 env CUDA_VISIBLE_DEVICES=0,1,2,3 $B/gpu_tests --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*'
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) ' $L/gtests.log | tee -a $L/summary.log
A="run all-reduce --impl all --no-capture --timeout-s 60"
for n in 4 2; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  for k in 1 2; do
    r t${n}_graph_$k 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing graph
    r t${n}_batch_$k 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
    r t${n}_each_$k 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 5
  done
  r t${n}_graph_r40 120 $B/overlapscope $A --sizes 16B,0.5MB,1MB --iters 20 --reps 40 --ar-timing graph
  r t${n}_batch_r40 120 $B/overlapscope $A --sizes 16B,0.5MB,1MB --iters 20 --reps 40 --ar-timing batch
  r t${n}_graph_b128 120 $B/overlapscope $A --sizes 0.5MB..4MB --iters 20 --reps 10 --ar-timing graph --ar-blocks 128
done
export CUDA_VISIBLE_DEVICES=0,1,2,3
r t4_graph_mpi 200 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 4 --bind-to none --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES \
  $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing graph
for f in $L/t*.log; do echo "## $(basename $f)"; grep -E "^  (16 B|512 KiB|1 MiB|4 MiB|16 MiB) " $f | head -6; done
tar czf $OUT/l.tgz -C $OUT l && rm -rf $L
