#!/usr/bin/env bash
# one device call (4 GPUs): blocks per rank 64 / 96 / 128 at 0.5-4 MiB, batch and graph timing, alternated; the graphs' shape
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=$PWD/.carry/workloads; L=$OUT/m; mkdir -p $L
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $L/env.log
r() { local name=$1 t=$2; shift 2; local t0=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $((SECONDS-t0)) s" >> $L/summary.log; }
A="run all-reduce --impl one-shot,two-shot,one-shot-push,nccl --no-capture --timeout-s 60 --sizes 0.5MB..4MB --iters 20 --reps 20"
for n in 4 2; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  for k in 1 2; do
    for b in 64 96 128; do
      for t in batch graph; do r t${n}_${t}_b${b}_$k 100 $B/overlapscope $A --ar-timing $t --ar-blocks $b; done
    done
  done
done
cat $L/summary.log
grep -h "ar-timing graph, " $L/t4_graph_b64_1.log
for f in $L/t*.log; do echo "## $(basename $f .log)"; grep -E "^  (512 KiB|1 MiB|2 MiB|4 MiB) " $f | cut -c1-110; done
tar czf $OUT/m.tgz -C $OUT m && rm -rf $L
