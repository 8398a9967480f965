#!/usr/bin/env bash
# tools/torch_traces/own_capture_waits.sh — the diagnosis programs of diagnosis_traces.py captured
# by `overlapscope profile` (CUPTI), whose captures record the event of every cudaEventRecord and
# cudaStreamWaitEvent: every cross-stream wait with its source. They are what the inferred waits
# (METRICS §8) are checked against: torch 2.11's cuda_sync rows name no source
# (wait_on_cuda_event_record_corr_id = -1), so torch.profiler traces cannot be the reference.
#
# Run on a machine with 4 GPUs (2-GPU captures on the first two), from the repository root, with a
# build of `overlapscope` whose libovscope_inject.so and libnccl-profiler-overlapscope.so sit
# next to it (BIN, default .carry/workloads) and PyTorch installed:
#   OUT=/tmp/waits tools/torch_traces/own_capture_waits.sh [SCENARIO...]
# Writes $OUT/w<N>/<scenario>/rank<R>.ovspill.gz (and the run's log), 4 profiled steps each
# (NVTX ranges ProfilerStep#0..3), captured between cudaProfilerStart/Stop only.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-$PWD/.carry/workloads}
DEST=${OUT:-$PWD/own_capture_waits}
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(mm_ag_overlap mm_ag_sequential dtensor_a2a_eager dtensor_a2a_compiled fsdp2)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
for n in 4 2; do
  [ "$NGPU" -ge "$n" ] || { echo "w$n: skipped ($NGPU GPUs)"; continue; }
  for sc in "${SCENARIOS[@]}"; do
    dir=$DEST/w$n/$sc
    mkdir -p "$dir"
    t0=$SECONDS
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) timeout -k 5 150 \
      "$BIN/overlapscope" profile --capture-range=cudaProfilerApi -o "$dir" -- \
      python3 -m torch.distributed.run --nproc_per_node="$n" tools/torch_traces/diagnosis_traces.py \
      --outdir "$dir/run" --scenarios "$sc" --no-profiler > "$dir/log.txt" 2>&1
    rc=$?
    gzip -f "$dir"/*.ovspill 2>/dev/null
    echo "w$n/$sc: rc=$rc $((SECONDS - t0)) s; $(ls "$dir" | tr '\n' ' ')"
    [ $rc -eq 0 ] || tail -5 "$dir/log.txt"
  done
done
