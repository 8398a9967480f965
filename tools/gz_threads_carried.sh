#!/usr/bin/env bash
# The 500 MB bench trace's .json.gz at 16 threads, where the time goes (issue 26, ninth round):
# two static builds carried to a many-core machine without the toolchain (as
# tools/every_core_carried.sh: overlapscope, overlapscope-before, gen_kineto_trace,
# parallel_inflate_bench[-before], libisal.so.2 in $CARRY, or packed in $CARRY/bins.tgz), then
#   1. the inflate alone (parallel_inflate_bench FILE 3 16, the two builds alternated twice), and
#      the new build's batch timeline (OVERLAPSCOPE_WINDOWS=1: per batch, when its chunks were
#      decoded, chained and resolved; bytes written straight into the reader's window);
#   2. `analyze --json --threads 16` of the .json.gz, PAIRS alternated pairs (wall and CPU), the
#      .json likewise (PAIRS / 2), the .json.gz at --threads 2 (PAIRS);
#   3. the new build with each setting of VARIANTS (space-separated VAR=VALUE, alternated with the
#      default, 4 runs each) on the .json.gz at 16 threads;
#   4. phases and windows (OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1) of both builds at 16,
#      and of the new one with each setting of TIMELINE_VARIANTS;
#   5. peak memory, and the reports' bytes at 1, 2 and 16 threads against overlapscope-before's;
#   6. `analyze --json --threads 2` of both inputs on two CPUs (taskset -c 0,1: the 2-core figure's
#      stand-in), PAIRS alternated pairs.
# SECTIONS="3 6" runs only those (default: 1 to 5); ROUNDS: the rounds of section 3 (default 4),
# each running overlapscope-before too.
# Run from the repository root (about 90 s on 16 CPUs, the trace's gzip -6 a fifth of it):
#   CARRY=.carry/NAME PAIRS=8 VARIANTS="..." TIMELINE_VARIANTS="..." bash tools/gz_threads_carried.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
carry=${CARRY:-.carry/every_core}
pairs_n=${PAIRS:-8}
work=${TMPDIR:-/tmp}/gz_threads
mkdir -p "$work/bin"
if [[ -f "$carry/bins.tgz" ]]; then tar xzf "$carry/bins.tgz" -C "$work/bin"; else cp "$carry"/* "$work/bin/"; fi
bin=$work/bin
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gz="$work/trace_500.json.gz" json="$work/trace_500.json"
t0=$(date +%s.%N)
"$bin/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$json" --mb "${MB:-500}" >/dev/null
gzip -6 -c "$json" >"$gz"
cat "$json" "$gz" >/dev/null
pin=()
if (($(nproc) > 16)) && command -v taskset >/dev/null; then pin=(taskset -c 0-15); fi
echo "host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)), pinned: ${pin[*]:-no}"
echo "input: $(stat -c %s "$json") bytes, .gz $(stat -c %s "$gz") bytes, made in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
sections=" ${SECTIONS:-1 2 3 4 5} "
on() { [[ "$sections" == *" $1 "* ]]; }
if on 1; then
echo "== 1. the inflate alone, 16 threads (best of 3; before, new, before, new)"
for b in parallel_inflate_bench-before parallel_inflate_bench parallel_inflate_bench-before parallel_inflate_bench; do
  [[ -x "$bin/$b" ]] || continue
  echo "$b: $("${pin[@]}" "$bin/$b" "$gz" 3 16 | grep -E '^(serial|parallel)' | tr '\n' ';')"
done
OVERLAPSCOPE_WINDOWS=1 "${pin[@]}" "$bin/parallel_inflate_bench" "$gz" 1 16 2>&1 >/dev/null | sed 's/^/  alone: /'
fi
# runs LABEL FILE N K [ENV...]: K runs of overlapscope-LABEL; appends "wall cpu" lines to $work/r_LABEL_...
run_one() {
  local b="$1" file="$2" n="$3" key="$4"
  shift 4
  local t
  t=$({ time env "$@" "${pin[@]}" "$bin/$b" analyze "$file" --json --threads "$n" >/dev/null 2>&1; } 2>&1)
  read -r wall user sys <<<"$t"
  echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}')" >>"$work/r_$key"
}
summary() {  # KEY...
  for key in "$@"; do
    awk -v k="$key" '{w[NR] = $1; c[NR] = $2; mw += $1; mc += $2; if (NR == 1 || $1 < lw) lw = $1}
      END {printf "%-44s wall %.3f (%.3f) s  cpu %.3f s  [%d runs]\n", k, mw / NR, lw, mc / NR, NR}' "$work/r_$key"
  done
}
rm -f "$work"/r_*
if on 2; then
echo "== 2. alternated pairs, mean (least); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((k = 0; k < pairs_n; ++k)); do
  for b in overlapscope-before overlapscope; do run_one "$b" "$gz" 16 "${b}_gz_16"; done
done
for ((k = 0; k < pairs_n / 2; ++k)); do
  for b in overlapscope-before overlapscope; do run_one "$b" "$json" 16 "${b}_json_16"; done
done
for ((k = 0; k < pairs_n; ++k)); do
  for b in overlapscope-before overlapscope; do run_one "$b" "$gz" 2 "${b}_gz_2"; done
done
summary overlapscope-before_gz_16 overlapscope_gz_16 overlapscope-before_json_16 overlapscope_json_16 \
  overlapscope-before_gz_2 overlapscope_gz_2
fi
if on 3 && [[ -n "${VARIANTS:-}" ]]; then
  echo "== 3. settings of the new build, .json.gz --threads 16, alternated with the default and overlapscope-before"
  for ((k = 0; k < ${ROUNDS:-4}; ++k)); do
    run_one overlapscope-before "$gz" 16 "before"
    run_one overlapscope "$gz" 16 "default"
    for v in $VARIANTS; do run_one overlapscope "$gz" 16 "$v" "$v"; done
  done
  summary before default $VARIANTS
fi
if on 4; then
echo "== 4. phases and windows at 16 threads"
for b in overlapscope-before overlapscope; do
  for f in "$gz" "$json"; do
    echo "-- $b ${f##*/}"
    OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 "${pin[@]}" "$bin/$b" analyze "$f" --json --threads 16 2>&1 >/dev/null |
      grep -E '^(phase|window|inflate)'
  done
done
for v in ${TIMELINE_VARIANTS:-}; do
  echo "-- overlapscope $v trace_500.json.gz"
  env "$v" OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 "${pin[@]}" "$bin/overlapscope" analyze "$gz" --json --threads 16 2>&1 >/dev/null |
    grep -E '^(phase|window|inflate)'
done
fi
if on 5; then
echo "== 5. peak memory and bytes"
for b in overlapscope-before overlapscope; do
  for n in 2 16; do
    [[ -x /usr/bin/time ]] && echo "peak $b .json.gz --threads $n: $(/usr/bin/time -f %M "${pin[@]}" "$bin/$b" analyze "$gz" --json --threads "$n" 2>&1 >/dev/null | tail -1) KiB"
  done
done
"$bin/overlapscope-before" analyze "$gz" --json --threads 16 >"$work/ref_gz" 2>/dev/null
"$bin/overlapscope-before" analyze "$json" --json --threads 16 >"$work/ref_json" 2>/dev/null
same=yes
for n in 1 2 16; do
  "${pin[@]}" "$bin/overlapscope" analyze "$gz" --json --threads "$n" 2>/dev/null | cmp -s - "$work/ref_gz" || same="no (.json.gz $n)"
  "${pin[@]}" "$bin/overlapscope" analyze "$json" --json --threads "$n" 2>/dev/null | cmp -s - "$work/ref_json" || same="no (.json $n)"
done
echo "reports of the new build at 1, 2, 16 threads the same bytes as overlapscope-before's: $same"
fi
if on 6; then
  echo "== 6. --threads 2 on two CPUs (taskset -c 0,1), alternated pairs"
  for ((k = 0; k < pairs_n; ++k)); do
    for b in overlapscope-before overlapscope; do
      pin=(taskset -c 0,1)
      run_one "$b" "$json" 2 "${b}_json_2cpu"
      run_one "$b" "$gz" 2 "${b}_gz_2cpu"
    done
  done
  summary overlapscope-before_json_2cpu overlapscope_json_2cpu overlapscope-before_gz_2cpu overlapscope_gz_2cpu
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
