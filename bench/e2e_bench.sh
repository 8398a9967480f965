#!/usr/bin/env bash
# End-to-end figures of issue 26 (docs/PERFORMANCE.md, "every core"): `analyze --json` of a 500 MB
# Kineto trace, plain and gzip, at --threads 1 and 2 (and any THREADS given), paired in one run:
#  - the .json.gz once more with OVERLAPSCOPE_INFLATE=zlib (the zlib inflater, the anchor of the
#    ISA-L one),
#  - per run: wall s, CPU s (user+sys), peak RSS MB and its ratio to the JSON size, MB/s of JSON;
#    the minimum wall of REPEAT runs and the CPU of that run; the load average before and after,
#  - trace_processor_shell (Perfetto) and HTA beside it, only when they are installed (they are
#    not Debian packages; HTA comes from PyPI): said so otherwise.
#
#   bench/e2e_bench.sh BUILD_DIR [SCRATCH] [REPEAT]      e.g. bench/e2e_bench.sh build /tmp/e2e 3
# THREADS="1 2 16" for other counts; BASE=OTHER_BINARY also measures an earlier overlapscope
# (without --threads: its own default) in the same run, the anchor of the figures. The inputs are made once in SCRATCH (kept; about 550 MB) by
# bench/gen_kineto_trace from tests/data/kineto/a2a_async/rank0.json.gz (as docs/PERFORMANCE.md's
# import figures are).
set -euo pipefail
build="$1" scratch="${2:-/tmp/e2e}" repeat="${3:-3}"
threads="${THREADS:-1 2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$build/cli/overlapscope"
mkdir -p "$scratch"
json="$scratch/trace_500.json" gz="$scratch/trace_500.json.gz"
[[ -s "$json" ]] || "$build/bench/gen_kineto_trace" "$root/tests/data/kineto/a2a_async/rank0.json.gz" "$json" --mb 500
[[ -s "$gz" ]] || gzip -6 -c "$json" >"$gz"
bytes=$(stat -L -c %s "$json")
cat "$json" "$gz" >/dev/null  # both in the page cache
echo "input: $json ($bytes bytes), $gz ($(stat -L -c %s "$gz") bytes); $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# measure LABEL CMD...: the run of REPEAT with the least wall; prints wall, CPU, RSS, MB/s.
measure() {
  local label="$1" best="" line
  shift
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e %U %S %M" -o "$scratch/.time" "$@" >"$scratch/.out" 2>"$scratch/.err" ||
      { echo "$label: failed: $(tail -1 "$scratch/.err")"; return; }
    line=$(tail -1 "$scratch/.time")
    if [[ -z "$best" ]] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN{exit !(a<b)}'; then best="$line"; fi
  done
  read -r wall user sys rss_kb <<<"$best"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss_kb" -v b="$bytes" 'BEGIN{
    printf "%-40s wall %6.2f s  cpu %6.2f s  peak %5.0f MB (%.2fx)  %5.0f MB/s\n",
      l, w, u + s, r / 1024, r * 1024 / b, b / 1e6 / w }'
}
if [[ -n "${BASE:-}" ]]; then
  measure "BASE analyze --json .json" "$BASE" analyze "$json" --json
  measure "BASE analyze --json .json.gz" "$BASE" analyze "$gz" --json
fi
for n in $threads; do
  measure "analyze --json .json    --threads $n" "$bin" analyze "$json" --json --threads "$n"
  measure "analyze --json .json.gz --threads $n" "$bin" analyze "$gz" --json --threads "$n"
  measure "  same, zlib inflate     --threads $n" env OVERLAPSCOPE_INFLATE=zlib "$bin" analyze "$gz" --json \
    --threads "$n"
done
if command -v trace_processor_shell >/dev/null; then
  echo "SELECT COUNT(*) FROM slice;" >"$scratch/q.sql"
  measure "trace_processor_shell (load + 1 query)" trace_processor_shell -q "$scratch/q.sql" "$json"
else
  echo "trace_processor_shell: not installed (not a Debian package): no figure"
fi
if python3 -c "import hta" 2>/dev/null; then
  echo "HTA: installed; bench/hta_side_by_side.sh gives its figures"
else
  echo "HTA: not installed (PyPI only): no figure"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
