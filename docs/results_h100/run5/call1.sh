#!/usr/bin/env bash
# one device call (2 x H100): issue 22's tables on 2 GPUs with the block-per-sample check, twice
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
for r in 1 2; do
  OUT_R=$OUT/r$r
  mkdir -p $OUT_R
  GPU_CHECKS_SKIP="t2_all_reduce_blocks32 t2_all_reduce_blocks128 t_structured $( [ $r = 2 ] && echo t_gtests t_env)" \
    TABLES_GPUS=2 OUT=$OUT_R OVERLAPSCOPE_WORKLOADS_BIN_DIR=$PWD/.carry/workloads timeout 280 tools/gpu_checks.sh tables 2>&1 | tail -30
  rm -rf $OUT_R/tables  # packed in tables.tgz
done
# the device brings back few files: one archive
d=$(mktemp -d); mv $OUT/r1 $OUT/r2 $d/; tar czf $OUT/all.tgz -C $d .; ls -la $OUT
