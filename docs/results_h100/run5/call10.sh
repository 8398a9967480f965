#!/usr/bin/env bash
# one device call (4 x H100): issue 22's tables on 4 GPUs (and the mpirun table), the reference beside them
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
GPU_CHECKS_SKIP="t4_all_reduce_blocks32 t4_all_reduce_blocks128 t_structured t4_matmul_allgather_ws0 t4_all_to_all_ws0" \
  TABLES_GPUS=4 OUT=$OUT/r OVERLAPSCOPE_WORKLOADS_BIN_DIR=$PWD/.carry/workloads timeout 500 tools/gpu_checks.sh tables 2>&1 | grep -v SKIPPED | tail -32
rm -rf $OUT/r/tables
d=$(mktemp -d); mv $OUT/r $d/; tar czf $OUT/all.tgz -C $d .; ls -la $OUT
