#!/usr/bin/env bash
# Issue 26's many-core figure from binaries built on the development machine and carried to a
# machine without the toolchain (the GPU machines): `analyze --json` of the 500 MB bench trace,
# .json and .json.gz, at --threads 1, 2, 4, 8, 16 on 16 of its CPUs (taskset), three runs each:
# the least wall with that run's CPU (user + sys) and peak RSS; then one run per input at 16
# threads with OVERLAPSCOPE_PHASES=1 (wall and CPU per phase, and the spans of the steps inside
# the phases where the build prints them); and a check that the reports
# are the same bytes at every count. Goal: <= 0.25 s for either input at 16 threads. The
# .json.gz also with OVERLAPSCOPE_INFLATE=serial and =parallel (the one-thread streaming inflate
# and the parallel one at every count: where they cross is the break-even, today 6 threads), and,
# where carried, parallel_inflate_bench: the inflate alone.
#
# Before the call, on the development machine (repository root):
#   bash tools/every_core_prepare.sh [BEFORE_STATIC_BINARY]     # fills .carry/every_core
# (the static overlapscope, libisal.so.2, the static gen_kineto_trace that makes the trace there;
# a carried .carry/every_core/trace_500.json.gz is used instead where present).
# Optionally the build to compare with, as .carry/every_core/overlapscope-before (measured first).
# Dynamic builds instead: their libraries (`ldd`, the loader included) in $CARRY/lib, where the
# binaries are run through the carried loader; without trace_500.json.gz the trace is made there
# by a carried gen_kineto_trace (and gzip -6). CARRY=<dir> (default .carry/every_core),
# THREADS="4 8 16" (default 1 2 4 8 16), MB=50 for a smaller made trace (default 500), PAIRS=5:
# then, with overlapscope-before carried, the two builds alternated, PAIRS runs each per count
# and input (wall and CPU per run, mean and least per build: the least of three moves by
# +-0.05 s between runs on those machines). tools/every_core_prepare.sh fills .carry/every_core.
# Then, on the many-core machine, from the repository root with .carry/every_core beside it (about
# two minutes; nothing is written outside $TMPDIR or /tmp):
#   bash tools/every_core_carried.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
carry=${CARRY:-.carry/every_core}
counts=(${THREADS:-1 2 4 8 16})
export LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
loader=()
[[ -x "$carry/lib/ld-linux-x86-64.so.2" ]] && loader=("$carry/lib/ld-linux-x86-64.so.2" --library-path "$carry/lib")
work=${TMPDIR:-/tmp}/every_core
mkdir -p "$work"
gz="$work/trace_500.json.gz" json="$work/trace_500.json"
if [[ -f "$carry/trace_500.json.gz" ]]; then
  cp "$carry/trace_500.json.gz" "$gz"
  gzip -dc "$gz" >"$json"
else
  "${loader[@]}" "$carry/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$json" --mb "${MB:-500}" >/dev/null
  gzip -6 -c "$json" >"$gz"
fi
cat "$json" "$gz" >/dev/null # both in the page cache
cpus=$(nproc)
pin=()
if ((cpus > 16)) && command -v taskset >/dev/null; then pin=(taskset -c 0-15); fi
echo "host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)), pinned: ${pin[*]:-no}"
echo "input: $json $(stat -c %s "$json") bytes, $gz $(stat -c %s "$gz") bytes"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
# one BIN FILE N [LABEL]: three runs; prints the least wall, its CPU and the peak RSS (when GNU
# time is there).
one() {
  local bin="$1" file="$2" n="$3" label="${4:-$(basename "$1")}" best="" t
  for _ in 1 2 3; do
    t=$({ time "${pin[@]}" "${loader[@]}" "$bin" analyze "$file" --json --threads "$n" >"$work/out_${label}_${n}_${file##*.}" 2>/dev/null; } 2>&1)
    if [[ -z "$best" ]] || awk -v a="${t%% *}" -v b="${best%% *}" 'BEGIN{exit !(a<b)}'; then best="$t"; fi
  done
  local rss="n/a"
  if [[ -x /usr/bin/time ]]; then
    rss=$(/usr/bin/time -f %M "${pin[@]}" "${loader[@]}" "$bin" analyze "$file" --json --threads "$n" 2>&1 >/dev/null | tail -1)
    rss="$((rss / 1024)) MB"
  fi
  read -r wall user sys <<<"$best"
  awk -v b="$label" -v f="${file##*/}" -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
    'BEGIN{printf "%-22s %-18s --threads %2d  wall %.3f s  cpu %.3f s  peak %s\n", b, f, n, w, u + s, r}'
}
for bin in "$carry/overlapscope-before" "$carry/overlapscope"; do
  [[ -x "$bin" ]] || continue
  for n in "${counts[@]}"; do
    one "$bin" "$json" "$n"
    one "$bin" "$gz" "$n"
    if [[ "$bin" == "$carry/overlapscope" ]]; then  # both inflates at every count (default: 6+ parallel)
      OVERLAPSCOPE_INFLATE=serial one "$bin" "$gz" "$n" overlapscope-serial-inflate
      OVERLAPSCOPE_INFLATE=parallel one "$bin" "$gz" "$n" overlapscope-parallel-inflate
    fi
  done
done
if [[ -x "$carry/parallel_inflate_bench" ]]; then
  echo "the inflate alone (MB/s of JSON, best of 3; cpu: all threads):"
  "${pin[@]}" "${loader[@]}" "$carry/parallel_inflate_bench" "$gz" 3 1 2 4 8 12 16
fi
# pairs FILE N: PAIRS alternated runs of overlapscope-before and overlapscope; mean (least).
pairs() {
  local file="$1" n="$2" t k bin
  local -A walls=() cpus=()
  for ((k = 0; k < PAIRS; ++k)); do
    for bin in overlapscope-before overlapscope; do
      t=$({ time "${pin[@]}" "${loader[@]}" "$carry/$bin" analyze "$file" --json --threads "$n" >/dev/null 2>&1; } 2>&1)
      read -r wall user sys <<<"$t"
      walls[$bin]+="$wall " cpus[$bin]+="$(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') "
    done
  done
  for bin in overlapscope-before overlapscope; do
    awk -v b="$bin" -v f="${file##*/}" -v n="$n" -v w="${walls[$bin]}" -v c="${cpus[$bin]}" 'BEGIN{
      k = split(w, ws, " "); split(c, cs, " "); mw = 0; mc = 0; lw = ws[1]; lc = cs[1]
      for (i = 1; i <= k; ++i) { mw += ws[i]; mc += cs[i]; if (ws[i] < lw) lw = ws[i]; if (cs[i] < lc) lc = cs[i] }
      printf "pairs %-20s %-18s --threads %2d  wall %.3f (%.3f) s  cpu %.3f (%.3f) s  [%d runs]\n", b, f, n, mw / k, lw, mc / k, lc, k }'
  done
}
if [[ -x "$carry/overlapscope-before" ]] && ((${PAIRS:-0} > 0)); then
  echo "alternated pairs (mean (least)), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  for n in "${counts[@]}"; do
    pairs "$json" "$n"
    pairs "$gz" "$n"
  done
fi
for f in "$json" "$gz"; do
  echo "phases, ${f##*/}, --threads 16:"
  OVERLAPSCOPE_PHASES=1 "${pin[@]}" "${loader[@]}" "$carry/overlapscope" analyze "$f" --json --threads 16 2>&1 >/dev/null |
    grep -E '^(phase|span)'
done
same=yes
for n in "${counts[@]}"; do
  for x in json gz; do
    cmp -s "$work/out_overlapscope_${counts[0]}_$x" "$work/out_overlapscope_${n}_$x" || same="no (--threads $n, .$x)"
    [[ ! -f "$work/out_overlapscope-before_${n}_$x" ]] || cmp -s "$work/out_overlapscope-before_${n}_$x" \
      "$work/out_overlapscope_${n}_$x" || same="no (--threads $n, .$x, against overlapscope-before)"
  done
  cmp -s "$work/out_overlapscope-parallel-inflate_${n}_gz" "$work/out_overlapscope-serial-inflate_${n}_gz" ||
    same="no (--threads $n, parallel against serial inflate)"
done
echo "reports the same bytes at ${counts[*]} threads (and as overlapscope-before's): $same"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
