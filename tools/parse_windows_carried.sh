#!/usr/bin/env bash
# The parse at many threads (issue 26, PERFORMANCE "Seventh round, the parse at 16 threads"), on
# a machine without the toolchain, from binaries built here (tools/every_core_prepare.sh's static
# build, copied into CARRY as overlapscope, main's as overlapscope-before, and gen_kineto_trace).
# Run from the repository root:
#   CARRY=.carry/every_core N=16 bash tools/parse_windows_carried.sh
# Makes the 500 MB bench trace (.json only), then `analyze --json` of it: PAIRS alternated runs
# of the two builds at --threads N and 2 (wall, CPU = user + sys; mean and least); RUNS runs of
# each setting of the measurement aids (OVERLAPSCOPE_WINDOW_MB, _PARTS, _MERGE_THREADS,
# _FIRST_BLOCK_KB, _READ_THREADS), round-robin; the phases and spans (OVERLAPSCOPE_PHASES) of both and the
# per-window timeline of the parse (OVERLAPSCOPE_WINDOWS); peak RSS; reports compared byte for
# byte at --threads 1, 2 and N.
set -uo pipefail
carry=${CARRY:-.carry/every_core}
export LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libisal.so.2 where carried
n=${N:-16}
pairs=${PAIRS:-7}
runs=${RUNS:-5}
work=${TMPDIR:-/tmp}/parse_windows
mkdir -p "$work"
json="$work/trace_500.json"
before="$carry/overlapscope-before" new="$carry/overlapscope"
t0=$(date +%s.%N)
[[ -f "$json" ]] || "$carry/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$json" --mb "${MB:-500}" >/dev/null
cat "$json" >/dev/null
echo "trace made in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s: $(stat -c %s "$json") bytes"
for b in "$before" "$new"; do
  "$b" analyze "$json" --json --threads "$n" >/dev/null 2>"$work/err" || { echo "$b fails here:"; tail -5 "$work/err"; exit 1; }
done
echo "host: $(nproc) CPUs; $(lscpu | grep -E '^(Model name|Thread|Core|Socket)' | tr -s ' ' | paste -sd';')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
log="$work/runs.txt"
: >"$log"
run() {  # run LABEL THREADS BIN [VAR=VALUE...]: one timed run appended to $log
  local label="$1" t="$2" bin="$3" r
  shift 3
  r=$({ time env "$@" "$bin" analyze "$json" --json --threads "$t" >/dev/null 2>&1; } 2>&1)
  read -r w u s <<<"$r"
  echo "$label $t $w $(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')" >>"$log"
}
for ((k = 0; k < pairs; ++k)); do
  run before "$n" "$before"
  run new "$n" "$new"
done
for ((k = 0; k < (pairs + 1) / 2; ++k)); do
  run before 2 "$before"
  run new 2 "$new"
done
variants=("default" "OVERLAPSCOPE_WINDOW_MB=16" "OVERLAPSCOPE_WINDOW_MB=48" "OVERLAPSCOPE_PARTS=32"
  "OVERLAPSCOPE_MERGE_THREADS=4" "OVERLAPSCOPE_MERGE_THREADS=16" "OVERLAPSCOPE_FIRST_BLOCK_KB=32768"
  "OVERLAPSCOPE_READ_THREADS=8")
for ((k = 0; k < runs; ++k)); do
  for v in "${variants[@]}"; do
    if [[ "$v" == default ]]; then run "new:default" "$n" "$new"; else run "new:$v" "$n" "$new" "$v"; fi
  done
done
echo "label threads: wall mean (least) s, cpu mean (least) s, runs"
awk '{k = $1 " " $2; n[k]++; w[k] += $3; c[k] += $4; if (!(k in lw) || $3 < lw[k]) lw[k] = $3; if (!(k in lc) || $4 < lc[k]) lc[k] = $4}
  END {for (k in n) printf "%-44s wall %.3f (%.3f)  cpu %.3f (%.3f)  [%d]\n", k, w[k] / n[k], lw[k], c[k] / n[k], lc[k], n[k]}' "$log" | sort
echo "all runs (label threads wall cpu):"
paste -sd' ' <(awk '{printf "%s/%s/%.3f/%.3f\n", $1, $2, $3, $4}' "$log") | fold -w 2000
if [[ -x /usr/bin/time ]]; then
  for b in "$before" "$new"; do
    for t in 2 "$n"; do echo "peak $(basename "$b") --threads $t: $(/usr/bin/time -f %M "$b" analyze "$json" --json --threads "$t" 2>&1 >/dev/null | tail -1) KiB"; done
  done
fi
echo "phases, $(basename "$before"), --threads $n:"
OVERLAPSCOPE_PHASES=1 "$before" analyze "$json" --json --threads "$n" 2>&1 >/dev/null | grep -E '^(phase|span)' | head -12
for k in 1 2; do
  echo "phases and windows, overlapscope, --threads $n, run $k:"
  OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 "$new" analyze "$json" --json --threads "$n" 2>&1 >/dev/null |
    grep -E '^(phase|span|window)' | head -40
done
same=yes
"$before" analyze "$json" --json --threads "$n" >"$work/before_$n" 2>&1
for t in 1 2 "$n"; do
  "$new" analyze "$json" --json --threads "$t" >"$work/new_$t" 2>&1
  cmp -s "$work/before_$n" "$work/new_$t" || same="no (--threads $t)"
done
echo "reports (and stderr) of overlapscope at 1, 2 and $n threads the same bytes as overlapscope-before's at $n: $same"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
