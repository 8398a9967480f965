#!/usr/bin/env bash
# tools/issue23_8gpu.sh — every figure of issue 23 (the workload tables on 8 GPUs) in one device
# call. NOT RUN YET: no 8-GPU machine was lent when it was written (2026-11-26).
#
# What it runs (tools/gpu_checks_tables.sh with TABLES_GPUS=8): matmul-allgather (sequential,
# overlapped, copy engines; captured), all-to-all (sync, async, copy engines; captured), the
# all-reduce table 0.5-64 MiB bf16 (nccl, one-shot, two-shot, one-shot-push, nccl-symmetric; events around each
# and batch; captured: every collective matched across the 8 ranks, skew, busbw), its 16-byte
# floor, --ar-blocks 32/128, mpirun -np 8, cuBLAS's default workspace, the PyTorch reference
# (tools/workload_reference.py under torchrun) in the same call, the GPU tests of the GEMM data
# and all-reduce kernels, and structured data for comparison. Compare with the published 8 x H100
# figures of ../shared/BACKGROUND.md §3 (2.96 / 2.02 / 1.77 ms) and with the TP = 4 table of
# docs/RESULTS.md.
#
# Before the call, on the development machine (repository root):
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAPSCOPE_STATIC=ON -DOVERLAPSCOPE_BENCH=OFF
#   cmake --build build --target overlapscope overlapscope-run gpu_tests ovscope_inject ovscope_nccl_plugin
#   mkdir -p .carry/workloads && cp build/cli/overlapscope build/cli/overlapscope-run build/tests/gpu_tests \
#     build/capture/cupti/libnccl-profiler-overlapscope.so build/capture/cupti/libovscope_inject.so .carry/workloads/
# The call (device tool; ask its status first, kind nvidia-h100-x8 or nvidia-h200-x8):
#   run(kind="nvidia-h100-x8", carry=[".carry/workloads"], timeout_s=600, command="tools/issue23_8gpu.sh")
# It writes $OUT/issue23.tgz (logs, timings, captures, reports, ref_g8.json), $OUT/summary.txt and
# $OUT/tables_digest.txt; unpack the tarball, then copy tables/g8/<workload>-<mode>/ to samples/
# and put the figures into docs/RESULTS.md beside the reference's.
set -u
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
DEST=${OUT:-$PWD/issue23_out}
WORK=${TMPDIR:-/tmp}/issue23
rm -rf "$WORK" && mkdir -p "$WORK" "$DEST"
OUT=$WORK TABLES_GPUS=8 timeout -k 5 540 tools/gpu_checks.sh tables > "$WORK/run.log" 2>&1
echo "gpu_checks tables: rc=$?"
tar czf "$DEST/issue23.tgz" -C "$WORK" .
cp "$WORK/summary.txt" "$WORK/tables_digest.txt" "$DEST/" 2>/dev/null
cat "$WORK/summary.txt"
