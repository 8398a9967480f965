#!/usr/bin/env bash
# one device call (4 GPUs): every GPU test of the final binaries, then the all-reduce goals' sizes each / batch / graph
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0
L=$OUT/o; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader | tee $L/env.log
t0=$SECONDS; timeout 420 $B/gpu_tests > $L/gtests.log 2>&1; echo "gpu_tests rc=$? $((SECONDS-t0)) s" | tee -a $L/summary.log
grep -E '^\[ *(FAILED|PASSED|SKIPPED) |tests ran' $L/gtests.log | tee -a $L/summary.log
A="run all-reduce --impl all --no-capture --timeout-s 60 --sizes 0.5MB,1MB,4MB,16MB --iters 20"
for t in each batch graph; do
  r=$([ $t = each ] && echo 5 || echo 10)
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 100 $B/overlapscope $A --reps $r --ar-timing $t > $L/t4_$t.log 2>&1
  CUDA_VISIBLE_DEVICES=0,1 timeout 100 $B/overlapscope $A --reps $r --ar-timing $t > $L/t2_$t.log 2>&1
done
for f in $L/t*.log; do echo "## $(basename $f .log)"; grep -E "^  (512 KiB|1 MiB|4 MiB|16 MiB) " $f | cut -c1-150; done
tar czf $OUT/o.tgz -C $OUT o && rm -rf $L
