#!/usr/bin/env bash
# Figures of `export --per-rank` (docs/PERFORMANCE.md, "Per-rank reduction and MPI"): writes an
# N-rank job with bench/gen_multirank_job into SCRATCH, exports it with --per-rank --jobs JOBS
# into SCRATCH/out, and prints the wall and CPU time, peak RSS, the rank traces' total size and the
# overview's size and contents, with the load average before and after (other work on the
# machine skews the wall figure). SCRATCH is deleted afterwards unless KEEP=1.
#   bench/export_scale_bench.sh BUILD_DIR SCRATCH RANKS BYTES_PER_RANK [JOBS]
# e.g. bench/export_scale_bench.sh build /tmp/job 1024 1000000 2
set -euo pipefail
build="$1" scratch="$2" ranks="$3" bytes="$4" jobs="${5:-$(nproc)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$build/cli/overlapscope"
rm -rf "$scratch"
"$build/bench/gen_multirank_job" "$root/tests/data/kineto/ag_overlap/rank0.json" "$scratch/job" "$ranks" \
  --bytes-per-rank "$bytes" --jitter-us 20 --straggler $((ranks / 3)) --delay-us 300 >/dev/null
total=$(du -cb "$scratch"/job/rank*.json | tail -1 | cut -f1)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "%e %M %U %S" -o "$scratch/time" "$bin" export "$scratch/job" -o "$scratch/out" --per-rank --jobs "$jobs" \
  >"$scratch/log"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r wall rss_kb user sys <"$scratch/time"
rank_bytes=$(du -cb "$scratch"/out/rank*.pftrace | tail -1 | cut -f1)
overview=$(stat -c %s "$scratch/out/overview.pftrace")
echo "export --per-rank: $ranks ranks, $((total / 1000000)) MB of JSON in $wall s (CPU $user s user + $sys s sys), peak RSS $((rss_kb / 1024)) MB"
echo "rank traces: $(ls "$scratch"/out/rank*.pftrace | wc -l) files, $((rank_bytes / 1000000)) MB; overview.pftrace: $overview bytes"
grep "overview" "$scratch/log"
[[ "${KEEP:-0}" == 1 ]] || rm -rf "$scratch"
