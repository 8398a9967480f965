#!/usr/bin/env bash
# Nsight Compute figures of the all-reduce kernels of `overlapscope run all-reduce` (issue 22:
# where the time goes: the kernel's own duration against the table's per-call time, DRAM and
# NVLink bytes, SM activity). Nsight Compute serializes every launch of the process it profiles,
# and our kernels wait for their peers' kernels, so two things make it work: one process per GPU
# (mpirun) with only rank 0 under ncu (the other ranks run free, so rank 0's kernels always find
# their peers), and `--ar-no-hold` (a held stream would wait for a host that ncu keeps blocked).
# The metrics are asked for in small sets, each in its own run, so that no kernel is replayed: a
# kernel that needs several passes is replayed alone with its own memory restored, while its
# peers' buffers (which two-shot and push write into) are not, and the run's validation fails
# (seen on 2 x H100 with all metrics in one set: two-shot "131072 of 262144 elements wrong"). A
# set whose run fails validation is reported as such, never summarized.
#
# Usage (a machine with >= NRANKS GPUs, ncu and mpirun on PATH or under /usr/local/cuda/bin):
#   tools/ncu_all_reduce.sh OUT_DIR [NRANKS (2)] [SIZES (0.5MB,4MB)] [IMPLS (one-shot,two-shot,one-shot-push,nccl)]
# Environment: OVERLAPSCOPE_BIN (default build/cli/overlapscope), NCU_METRIC_SETS (space-separated
# sets, each a comma list; default: time, NVLink bytes, DRAM bytes, SM activity).
# Writes per size and metric set K OUT_DIR/ncu_rank0_<size>_<K>.csv (ncu --csv) and .log,
# OUT_DIR/run_<size>_<K>.log (the run's table, with the host's launch gaps in it), and prints per
# size and kernel the median of every metric over rank 0's launches. Exit 1 if a run failed.
set -uo pipefail
out=${1:?usage: tools/ncu_all_reduce.sh OUT_DIR [NRANKS] [SIZES] [IMPLS]}
n=${2:-2}
sizes=${3:-0.5MB,4MB}
impls=${4:-one-shot,two-shot,one-shot-push,nccl}
bin=${OVERLAPSCOPE_BIN:-build/cli/overlapscope}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sets=${NCU_METRIC_SETS:-gpu__time_duration.sum,launch__grid_size nvlrx__bytes.sum,nvltx__bytes.sum dram__bytes_read.sum,dram__bytes_write.sum sm__cycles_active.avg}
mkdir -p "$out" || exit 1
[[ -n "$ncu" && -x "$ncu" ]] || { echo "ncu not found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute)" >&2; exit 1; }
"$ncu" --version | tail -1
# Every launch of rank 0 is profiled once (warm-up + iterations x reps per implementation), one
# mpirun per size and metric set, so each CSV holds one size and set.
export NCU_BIN=$ncu OVS_BIN=$bin
rc=0
for size in ${sizes//,/ }; do
 k=0
 for set in $sets; do
  k=$((k + 1))
  export NCU_METRICS_LIST=$set NCU_CSV=$out/ncu_rank0_${size}_$k.csv
  # shellcheck disable=SC2016
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$n" --bind-to none --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none -x NCU_BIN -x NCU_METRICS_LIST -x NCU_CSV -x OVS_BIN \
    -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE bash -c '
    if [[ "${OMPI_COMM_WORLD_RANK:-0}" == 0 ]]; then
      exec "$NCU_BIN" --metrics "$NCU_METRICS_LIST" --cache-control none --clock-control none \
        -k "regex:ovs_allreduce|ncclDevKernel_AllReduce" --csv --log-file "$NCU_CSV" "$OVS_BIN" "$@" 2> "${NCU_CSV%.csv}.log"
    fi
    exec "$OVS_BIN" "$@"' rank run all-reduce --ar-no-hold --no-capture --timeout-s 120 --impl "$impls" \
    --sizes "$size" --iters 4 --warmup 1 --reps 2 > "$out/run_${size}_$k.log" 2>&1
  r=$?
  if [[ $r != 0 ]]; then
    rc=$r
    touch "$out/failed_${size}_$k"
    echo "== $size, metrics $set: FAILED (rc $r; its figures are not used):"
    grep -E 'ERROR|FAILED|rank [0-9]+:' "$out/run_${size}_$k.log" | head -3
  fi
 done
 echo "== $size: rank 0's kernels under ncu, median over its launches (every run validated unless said above)"
 python3 - "$out" "$size" <<'PY'
import csv, glob, os, statistics, collections, sys
out, size = sys.argv[1], sys.argv[2]
by = collections.defaultdict(dict)
for path in sorted(glob.glob(os.path.join(out, f"ncu_rank0_{size}_*.csv"))):
    k = path.rsplit("_", 1)[1][:-4]
    if os.path.exists(os.path.join(out, f"failed_{size}_{k}")):
        continue
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    if not rows:
        continue
    ix = {h: i for i, h in enumerate(rows[0])}
    vals = collections.defaultdict(list)
    for r in rows[1:]:
        name = r[ix["Kernel Name"]].split("(")[0].split("<")[0].split("::")[-1].replace("void ", "")
        vals[(name, r[ix["Metric Name"]], r[ix["Metric Unit"]])].append(r[ix["Metric Value"]])
    for (name, m, unit), v in vals.items():
        try:
            nums = [float(x.replace(",", "")) for x in v]
            by[name][m] = f"{statistics.median(nums):.4g} {unit} (n={len(nums)})"
        except ValueError:
            by[name][m] = v[0]
for name in sorted(by):
    print(f"  {name}: " + "; ".join(f"{m} {v}" for m, v in sorted(by[name].items())))
PY
done
exit $rc
