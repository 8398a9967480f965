#!/usr/bin/env bash
# tools/replay_pairs_capture.sh — raw captures of our own workloads for the what-if pairs of issue
# 24 (replay), and the predictions against them, in one GPU call of < 4 minutes.
#
# Captures (`overlapscope run -o`, which keeps each mode's capture.ovspill / rank<R>.ovspill and
# the NCCL plugin's nccl.<pid>.ovnccl beside the reports), few iterations each:
#   g1/      d2h blocking, nonblocking-event                          (1 GPU)
#   g2/, g4/ matmul-allgather sequential, overlap, overlap-ce;
#            all-to-all sync, async, async-ce                          (one process, a thread per GPU)
#   g2mpi/, g4mpi/ the same under mpirun -np N (one rank per process, as torchrun runs PyTorch)
# then `tools/replay_pairs.py OVERLAPSCOPE --runs ...`: every base replayed with the change that
# should turn it into the measured target (prefetch:/allgather/, + ce:, async:/alltoall|sendrecv/
# joined on its consumer with the consumer deferred, nosync:/cudaMemcpy/; tools/replay_pairs.py
# RUN_PAIRS), predicted vs measured step; and the text of `overlapscope replay` on one base per
# workload. Ran on 4 x H100 on 2026-11-26 (tests/data/replay_pairs).
#
# Before the call, on the development machine (repository root):
#   cmake -S . -B build-static -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAPSCOPE_STATIC=ON -DOVERLAPSCOPE_BENCH=OFF
#   ninja -C build-static overlapscope overlapscope-run ovscope_nccl_plugin
#   mkdir -p .carry/workloads && cp build-static/cli/overlapscope build-static/cli/overlapscope-run \
#     build-static/capture/cupti/libnccl-profiler-overlapscope.so .carry/workloads/
# The call (device tool, 4 GPUs): carry [".carry/workloads"], command "tools/replay_pairs_capture.sh".
# Binaries: $OVERLAPSCOPE_WORKLOADS_BIN_DIR (default .carry/workloads). Writes
# $OUT/replay_pairs.tgz (g*/<workload>-<mode>/ with gzipped captures and report.txt, the logs) and
# $OUT/summary.txt (rc of every step and the table). Unpack into tests/data/replay_pairs/.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${OVERLAPSCOPE_WORKLOADS_BIN_DIR:-$ROOT/.carry/workloads}
OS=$BIN/overlapscope
DEST=${OUT:-$ROOT/replay_pairs_out}
WORK=${TMPDIR:-/tmp}/replay_pairs
rm -rf "$WORK" && mkdir -p "$WORK" "$DEST"
SUMMARY=$DEST/summary.txt
: > "$SUMMARY"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OVERLAPSCOPE_NCCL_PLUGIN=$BIN/libnccl-profiler-overlapscope.so
# Small: the captures stay a few hundred kB and each run a few seconds after NCCL's start-up.
FEW=(--iters 5 --warmup 2 --capture-iters 6 --burn-in-ms 200 --timeout-s 45)
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)

step() {  # step NAME LIMIT_S CMD...: logs to $WORK/NAME.log, one line with rc and seconds
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  timeout -k 5 "$limit" "$@" > "$WORK/$name.log" 2>&1
  echo "$name: rc=$? $((SECONDS - t0)) s" | tee -a "$SUMMARY"
}

# One rank per process on the visible GPUs (timeout runs commands, not shell functions).
MPIRUN=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --bind-to none
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none -x NCCL_NVLS_ENABLE
  -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES
  -x OVERLAPSCOPE_NCCL_PLUGIN)

echo "GPUs: $NGPU; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" | tee -a "$SUMMARY"
CUDA_VISIBLE_DEVICES=0 step g1_d2h 60 "$OS" run d2h --mode blocking,nonblocking-event "${FEW[@]}" -o "$WORK/g1"
for n in 4 2; do
  [ "$NGPU" -ge "$n" ] || { echo "g$n: SKIPPED (found $NGPU GPUs)" | tee -a "$SUMMARY"; continue; }
  devs=$(seq -s, 0 $((n - 1)))
  for wl in matmul-allgather all-to-all; do
    CUDA_VISIBLE_DEVICES=$devs step "g${n}_$wl" 60 "$OS" run "$wl" --mode all "${FEW[@]}" -o "$WORK/g$n"
    CUDA_VISIBLE_DEVICES=$devs step "g${n}mpi_$wl" 75 "${MPIRUN[@]}" -np "$n" "$OS" run "$wl" --mode all "${FEW[@]}" \
      -o "$WORK/g${n}mpi"
  done
done

RUNS=()
for d in "$WORK"/g*; do [ -d "$d" ] && RUNS+=("$d"); done
ls -lR "$WORK" > "$WORK/files.txt" 2>&1
{
  echo
  echo "== predicted vs measured (tools/replay_pairs.py --runs)"
  timeout -k 5 60 python3 tools/replay_pairs.py "$OS" --runs "${RUNS[@]}" 2>&1
  for base in g4mpi/matmul-allgather-sequential g4mpi/all-to-all-sync g1/d2h-blocking; do
    [ -d "$WORK/$base" ] || continue
    echo
    echo "== overlapscope replay $base"
    case $base in
      *matmul*) ch=(--change 'prefetch:/(?i)allgather/') ;;
      *all-to-all*) ch=(--change 'async:/(?i)alltoall|sendrecv/@/Sampled|FinitePoison/' --change 'defer:/FinitePoison|Sampled/') ;;
      *) ch=(--change 'nosync:/^cudaMemcpy(_v[0-9]+)?$/') ;;
    esac
    timeout -k 5 30 "$OS" replay "$WORK/$base" "${ch[@]}" 2>&1 | head -60
  done
} > "$WORK/replay_table.txt"
cat "$WORK/replay_table.txt" >> "$SUMMARY"

# Keep the captures (gzipped), the text reports and the timing tables; the Perfetto files and the
# JSON reports are made again from the captures.
find "$WORK" \( -name '*.ovspill' -o -name '*.ovnccl' \) -exec gzip -9 {} +
find "$WORK" \( -name 'trace.pftrace' -o -name 'report.json' \) -delete
tar czf "$DEST/replay_pairs.tgz" -C "$WORK" .
du -sh "$WORK" "$DEST/replay_pairs.tgz" | tee -a "$SUMMARY"
cat "$SUMMARY"
