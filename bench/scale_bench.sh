#!/usr/bin/env bash
# Figures of the per-rank reduction (docs/PERFORMANCE.md, "per-rank reduction"): writes an N-rank
# job with bench/gen_multirank_job into SCRATCH (deleted afterwards unless KEEP=1), then prints
#  - one rank analyzed alone (--critical-path off): wall, peak RSS, MB/s (the single-rank throughput),
#  - the job with analyze --per-rank --jobs JOBS: wall, peak RSS, MB/s, the goal wall
#    1.25 x total bytes / (single-rank MB/s x JOBS), and whether the injected straggler is the
#    rank the report names last most often,
#  - with WHOLE=1 also the whole-model analyze --critical-path off of the same job (memory!),
#  - the load average before and after (other work on the machine skews every wall figure).
#   bench/scale_bench.sh BUILD_DIR SCRATCH RANKS BYTES_PER_RANK [JOBS]
# e.g. bench/scale_bench.sh build /tmp/job 256 50000000 2
set -euo pipefail
build="$1" scratch="$2" ranks="$3" bytes="$4" jobs="${5:-$(nproc)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$build/cli/overlapscope"
gen="$build/bench/gen_multirank_job"
straggler=$((ranks / 3))
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$scratch"
"$gen" "$root/tests/data/kineto/ag_overlap/rank0.json" "$scratch" "$ranks" --bytes-per-rank "$bytes" \
  --jitter-us 20 --straggler "$straggler" --delay-us 300
total=$(du -cb "$scratch"/rank*.json | tail -1 | cut -f1)
measure() {  # label, command...: prints wall s and peak RSS MB
  local label="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$scratch/.time" "$@" >"$scratch/.out" 2>/dev/null
  read -r wall rss_kb <"$scratch/.time"
  echo "$label $wall $((rss_kb / 1024))"
}
read -r _ w1 m1 < <(measure one "$bin" analyze "$scratch/rank0.json" --json --critical-path off)
one_bytes=$(stat -c %s "$scratch/rank0.json")
single_mbs=$(python3 -c "print(f'{$one_bytes / 1e6 / $w1:.1f}')")
echo "one rank: $((one_bytes / 1000000)) MB in $w1 s, peak RSS $m1 MB, $single_mbs MB/s"
read -r _ wj mj < <(measure job "$bin" analyze "$scratch" --per-rank --jobs "$jobs" --json)
python3 - "$scratch/.out" "$straggler" "$total" "$wj" "$mj" "$single_mbs" "$jobs" "$ranks" <<'PY'
import json, mmap, sys
out, straggler, total, wall, rss, single, jobs, ranks = sys.argv[1:]
# The report can be GBs: only collectives_across_ranks up to its instances is parsed (mmap'd).
with open(out, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
    a = m.find(b'"collectives_across_ranks": {')
    b = m.find(b'"instances":', a)
    head = m[a + len(b'"collectives_across_ranks": '):b].decode().rstrip().rstrip(",")
x = json.loads(head + "}")
top = max(x["ranks"], key=lambda s: s["times_last"]) if x["ranks"] else None
goal = 1.25 * float(total) / 1e6 / (float(single) * int(jobs))
print(f"per-rank: {ranks} ranks, {int(total) / 1e6:.0f} MB in {wall} s ({int(total) / 1e6 / float(wall):.1f} MB/s), "
      f"peak RSS {rss} MB; goal wall <= {goal:.1f} s (1.25 x bytes / (single-rank MB/s x {jobs} jobs))")
print(f"straggler: injected rank {straggler}; most often last: {top['rank'] if top else None} "
      f"({top['times_last'] if top else 0} of {x['matched_instances']} instances), max skew {x['max_skew_ns']} ns")
PY
if [[ "${WHOLE:-0}" == 1 ]]; then
  read -r _ ww mw < <(measure whole "$bin" analyze "$scratch" --critical-path off --json)
  echo "whole model: $ww s, peak RSS $mw MB"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ "${KEEP:-0}" == 1 ]] || rm -rf "$scratch"
