#!/usr/bin/env bash
# one device call (4 x H100): stop at once unless the GPUs are H100; every GPU test; issue 22's
# tables on 4 and 2 GPUs beside the PyTorch reference; the all-reduce goals' sizes each / batch /
# graph three times on 4 and 2 GPUs (one-shot-push at its 128-block default)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-} OVERLAPSCOPE_BIN_DIR=$B NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/q; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $L/env.log
if ! grep -q H100 $L/env.log; then echo "not H100: stopped"; exit 3; fi
r() { local name=$1 t=$2; shift 2; local t0=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $((SECONDS-t0)) s" | tee -a $L/summary.log; }
r gtests 300 $B/gpu_tests
grep -E '^\[ *(FAILED|PASSED|SKIPPED) ' $L/gtests.log | tee -a $L/summary.log
GPU_CHECKS_SKIP="t_gtests" OUT=$L/tab OVERLAPSCOPE_WORKLOADS_BIN_DIR=$B timeout 420 tools/gpu_checks.sh tables > $L/tables.log 2>&1
echo "== tables rc=$?" | tee -a $L/summary.log; tail -40 $L/tables.log
A="run all-reduce --impl all --no-capture --timeout-s 60 --sizes 0.5MB,1MB,4MB,16MB --iters 20"
for i in 1 2 3; do for t in each batch graph; do
  rp=$([ $t = each ] && echo 5 || echo 10)
  r t4_${t}_$i 100 env CUDA_VISIBLE_DEVICES=0,1,2,3 $B/overlapscope $A --reps $rp --ar-timing $t
  r t2_${t}_$i 100 env CUDA_VISIBLE_DEVICES=0,1 $B/overlapscope $A --reps $rp --ar-timing $t
done; done
for f in $L/t[24]_*.log; do echo "## $(basename $f .log)"; grep -E "^  (512 KiB|1 MiB|4 MiB|16 MiB) |SM clock" $f | cut -c1-160; done
rm -rf $L/tab/tables $L/tab/tables.tgz; du -sh $L; find $L -size +2M | head
tar czf $OUT/q.tgz -C $OUT q && rm -rf $L; ls -la $OUT
