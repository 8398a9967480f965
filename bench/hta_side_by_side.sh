#!/usr/bin/env bash
# HTA (Holistic Trace Analysis) beside overlapscope on one generated N-rank job (docs/PERFORMANCE.md,
# "HTA side by side"). Writes the job with bench/gen_multirank_job into SCRATCH (deleted afterwards
# unless KEEP=1), merges each rank's ProfilerSteps into STEPS steps (default 8; 0 keeps the
# generator's ~80 steps per MB, see bench/hta_side_by_side.py), then measures one after the other
# on the same files, each under /usr/bin/time -v with its process tree's RSS sampled:
#  - overlapscope analyze SCRATCH --per-rank --jobs 2 --json
#  - overlapscope analyze SCRATCH --json (the whole model)
#  - HTA: TraceAnalysis load, get_comm_comp_overlap, get_potential_stragglers,
#    critical_path_analysis (rank 0, first step), each timed inside the process,
# and compares HTA's overlap per rank with the report's hta_compat_overlap_pct.
#   bench/hta_side_by_side.sh BUILD_DIR HTA_SRC SCRATCH RANKS BYTES_PER_RANK [STEPS]
# HTA_SRC is a checkout of HolisticTraceAnalysis (not part of this project); it needs pandas, numpy,
# plotly, networkx, ijson, psutil, pyyaml for PYTHON (default /usr/bin/python3; Debian:
# python3-pandas python3-plotly python3-networkx python3-ijson python3-psutil python3-yaml).
# STOP_MB=M stops a tool whose process tree passes M MB of RSS (or when MemAvailable < 1 GiB).
# e.g. nice -n 10 bench/hta_side_by_side.sh build ~/HolisticTraceAnalysis /tmp/job 8 50000000
set -euo pipefail
build="$1" hta="$2" scratch="$3" ranks="$4" bytes="$5" steps="${6:-8}"
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-/usr/bin/python3}"
helper="$root/bench/hta_side_by_side.py"
bin="$(cd "$build" && pwd)/cli/overlapscope"
load() { cut -d' ' -f1-3 /proc/loadavg; }
rm -rf "$scratch"
mkdir -p "$scratch"
job="$scratch/job"
"$build/bench/gen_multirank_job" "$root/tests/data/kineto/ag_overlap/rank0.json" "$job" "$ranks" \
  --bytes-per-rank "$bytes" --jitter-us 20 --straggler $((ranks / 3)) --delay-us 300
[[ "$steps" == 0 ]] || "$py" "$helper" merge-steps "$job" "$steps"
total=$(du -cb "$job"/rank*.json | tail -1 | cut -f1)
echo "job: $ranks ranks, $total bytes of JSON, steps per rank: ${steps/#0/as generated}"
run() {  # label, command...: measures it (stdout to SCRATCH/label.out), prints one line
  local label="$1"
  shift
  local before
  before="$(load)"
  STDOUT="$scratch/$label.out" "$py" "$helper" measure "$scratch/$label.m" -- "$@" >/dev/null || true
  "$py" - "$scratch/$label.m" "$label" "$total" "$before" "$(load)" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
gb = int(sys.argv[3]) / 1e9
peak = max(m["tree_peak_mb"] or 0, m["maxrss_mb"] or 0)
end = "ok" if m["rc"] == 0 and not m["signal"] else f"FAILED (rc {m['rc']}, signal {m['signal']}, stopped: {m['stopped']})"
print(f"{sys.argv[2]}: wall {m['wall_s']:.1f} s (CPU {m.get('cpu_s')} s), peak RSS {m['maxrss_mb']} MB (largest process), "
      f"{m['tree_peak_mb']} MB (process tree, sampled), {peak / gb:.0f} MB per GB of JSON, "
      f"{int(sys.argv[3]) / 1e6 / m['wall_s']:.1f} MB/s; {end}; load {sys.argv[4]} -> {sys.argv[5]}")
PY
}
run per_rank "$bin" analyze "$job" --per-rank --jobs 2 --json
run whole "$bin" analyze "$job" --json
run hta "$py" "$helper" hta "$hta" "$job" "$scratch/hta.json"
if [[ -s "$scratch/hta.json" ]]; then
  "$py" - "$scratch/hta.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
for k in ("load", "overlap", "stragglers", "critical_path"):
    if k in h:
        v = h[k]
        r = v.get("result") if v["ok"] else v["error"]
        if k == "overlap" and v["ok"]:
            r = f"{len(r)} ranks, {min(r.values())}..{max(r.values())} %"
        print(f"HTA {k}: {v['s']} s, {'ok' if v['ok'] else 'failed'}: {r}")
PY
  "$py" "$helper" compare "$scratch/hta.json" "$scratch/per_rank.out"
fi
[[ "${KEEP:-0}" == 1 ]] || rm -rf "$scratch"
