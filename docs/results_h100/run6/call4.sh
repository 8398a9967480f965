#!/usr/bin/env bash
# one device call (4 GPUs): the all-reduce tables of tools/gpu_checks.sh tables (each / batch / graph / mpirun / floor / blocks 64,128) on 4 and 2 GPUs, the GPU tests
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/workloads:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
S=""
for n in 4 2; do S="$S t${n}_matmul_allgather t${n}_all_to_all t${n}_reference t${n}_matmul_allgather_ws0 t${n}_all_to_all_ws0"; done
GPU_CHECKS_SKIP="$S t_structured" OUT=$OUT/r OVERLAPSCOPE_WORKLOADS_BIN_DIR=$PWD/.carry/workloads timeout 560 tools/gpu_checks.sh tables 2>&1 | grep -v SKIPPED | tail -40
rm -rf $OUT/r/tables $OUT/r/tables.tgz; d=$(mktemp -d); mv $OUT/r $d/; tar czf $OUT/all.tgz -C $d .; ls -la $OUT
