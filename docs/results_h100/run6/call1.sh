#!/usr/bin/env bash
# one device call (4 x H100): --ar-timing graph beside batch (and blocks 128), 4 and 2 GPUs, mpirun -np 4; GPU tests
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=$PWD/.carry/workloads; L=$OUT/k; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $L/env.log
r() { local name=$1 t=$2; shift 2; local t0=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $((SECONDS-t0)) s" | tee -a $L/summary.log; }
r gtests 300 env CUDA_VISIBLE_DEVICES=0,1,2,3 $B/gpu_tests --gtest_filter='AllReduceKernels.*:WorkloadAllReduce.*:WorkloadCli.AllReduce*'
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) ' $L/gtests.log | tee -a $L/summary.log
A="run all-reduce --impl all --no-capture --timeout-s 60"
export CUDA_VISIBLE_DEVICES=0,1,2,3
r t4_graph 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing graph
r t4_batch 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
r t4_graph_b128 120 $B/overlapscope $A --sizes 0.5MB..4MB --iters 20 --reps 10 --ar-timing graph --ar-blocks 128
r t4_graph_r20 120 $B/overlapscope $A --sizes 16B,0.5MB,1MB --iters 20 --reps 20 --ar-timing graph
r t4_each 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 5
r t4_graph_mpi 200 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 4 --bind-to none --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES \
  $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing graph
export CUDA_VISIBLE_DEVICES=0,1
r t2_graph 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing graph
r t2_batch 200 $B/overlapscope $A --sizes 0.5MB..64MB --iters 20 --reps 10 --ar-timing batch
r t2_graph_b128 120 $B/overlapscope $A --sizes 0.5MB..4MB --iters 20 --reps 10 --ar-timing graph --ar-blocks 128
for f in t4_graph t4_batch t4_graph_b128 t4_graph_r20 t4_graph_mpi t2_graph t2_batch t2_graph_b128; do echo "## $f"; grep -E "KiB|MiB|B  |best|SM clock|error|Error" $L/$f.log | head -24; done
tar czf $OUT/k.tgz -C $OUT k && rm -rf $L
