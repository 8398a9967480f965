#!/usr/bin/env bash
# The parse's windows at many threads (issue 26, PERFORMANCE "Seventh round"), on a machine
# without the toolchain, from .carry/every_core (tools/every_core_prepare.sh): makes the 500 MB
# bench trace (.json only), then `analyze --json` at --threads $N (default 16): RUNS runs of
# overlapscope-before and overlapscope alternated (wall, CPU), one run with OVERLAPSCOPE_PHASES
# and OVERLAPSCOPE_WINDOWS (the phases, the spans and the per-window timeline of the parse), and
# RUNS runs per window size in WINDOW_MBS (OVERLAPSCOPE_WINDOW_MB; default "8 16 48 64"), each
# with its parse phase line. Reports compared byte for byte with overlapscope-before's.
set -uo pipefail
# Run from the repository root (tests/data is read from there).
carry=${CARRY:-.carry/every_core}
export LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libisal.so.2, carried
n=${N:-16}
runs=${RUNS:-3}
work=${TMPDIR:-/tmp}/parse_windows
mkdir -p "$work"
json="$work/trace_500.json"
[[ -f "$json" ]] || "$carry/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$json" --mb 500 >/dev/null
cat "$json" >/dev/null
"$carry/overlapscope" analyze "$json" --json --threads "$n" >/dev/null || { echo "overlapscope fails here"; exit 1; }
echo "host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)); $(stat -c %s "$json") bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
run() {  # run LABEL BIN [ENV...]: one timed run, wall and CPU, report kept per label
  local label="$1" bin="$2" t
  shift 2
  t=$({ time env "$@" "$bin" analyze "$json" --json --threads "$n" >"$work/out_$label" 2>/dev/null; } 2>&1)
  read -r w u s <<<"$t"
  awk -v l="$label" -v w="$w" -v u="$u" -v s="$s" -v n="$n" 'BEGIN{printf "%-16s --threads %2d wall %.3f s cpu %.3f s\n", l, n, w, u + s}'
}
for ((k = 0; k < runs; ++k)); do
  [[ ! -x "$carry/overlapscope-before" ]] || run before "$carry/overlapscope-before"
  run new "$carry/overlapscope"
done
for mb in ${WINDOW_MBS:-8 16 48 64}; do
  for ((k = 0; k < runs; ++k)); do run "window_$mb" "$carry/overlapscope" OVERLAPSCOPE_WINDOW_MB="$mb"; done
  OVERLAPSCOPE_WINDOW_MB="$mb" OVERLAPSCOPE_PHASES=1 "$carry/overlapscope" analyze "$json" --json --threads "$n" 2>&1 >/dev/null |
    grep -E '^phase (parse|import)|^span  finish file' | sed "s/^/window $mb MB: /"
done
for k in 1 2; do
  echo "timeline run $k:"
  OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 "$carry/overlapscope" analyze "$json" --json --threads "$n" 2>&1 >/dev/null |
    grep -E '^(phase|span|window)' | head -80
done
same=yes
for f in "$work"/out_*; do cmp -s "$f" "$work/out_new" || same="no ($f)"; done
[[ ! -f "$work/out_before" ]] || cmp -s "$work/out_before" "$work/out_new" || same="no (before)"
echo "reports the same bytes: $same; load after $(cut -d' ' -f1-3 /proc/loadavg)"
