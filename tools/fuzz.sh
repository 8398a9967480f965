#!/usr/bin/env bash
# Runs the libFuzzer targets of a -DOVERLAPSCOPE_FUZZ=ON build (tools/sanitize.sh makes one).
#
#   tools/fuzz.sh smoke BUILD [SECONDS]        each target SECONDS (default 60) from its seeds,
#                                              OVERLAPSCOPE_FUZZ_JOBS (default 1) at a time;
#                                              CI runs this
#   tools/fuzz.sh long BUILD TARGET CPU_SECONDS [WALL_SECONDS]
#                                              one target under nice -n 19, in runs of at most
#                                              10 minutes on a persistent corpus
#                                              (BUILD/fuzz/corpus/TARGET) until the fuzzer has
#                                              used CPU_SECONDS of CPU time (or WALL_SECONDS
#                                              passed: a shared machine); prints the totals and
#                                              the final coverage (docs/RELIABILITY.md)
#   tools/fuzz.sh targets                      the target names
#
# OVERLAPSCOPE_FUZZ_FORK=N (long runs): libFuzzer's fork mode with N worker processes, for a
# machine with cores to spare; CPU time counts every worker.
#
# Every run: -timeout=25 (a unit slower than 25 s is a finding), -rss_limit_mb=2560 (so is more
# memory), crash/timeout/OOM inputs go to BUILD/fuzz/artifacts/TARGET/. Exit 1 when any target
# found something: copy the input into tests/data/fuzz_regressions/TARGET/ and fix the class.
# The seeds (BUILD/fuzz/seeds) are made by the build (target fuzz_seeds, fuzz/make_seeds.cc);
# OVERLAPSCOPE_FUZZ_EXTRA_SEEDS=DIR adds Kineto traces from DIR (e.g. ../shared/traces).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(kineto_json kineto_gzip gzip_parallel ovspill ovnccl pipeline)
mode=${1:-}
[ "$mode" = targets ] && { printf '%s\n' "${TARGETS[@]}"; exit 0; }
build=${2:?usage: tools/fuzz.sh smoke BUILD [SECONDS] | long BUILD TARGET CPU_SECONDS [WALL_SECONDS]}
build=$(cd "$build" && pwd)

dict_for() {  # libFuzzer takes one -dict: the pipeline's is the Kineto one plus the file magics
  case $1 in
    kineto_json|kineto_gzip|gzip_parallel) echo "$PWD/fuzz/kineto.dict" ;;
    ovspill) echo "$PWD/fuzz/ovspill.dict" ;;
    ovnccl) echo "$PWD/fuzz/ovnccl.dict" ;;
    pipeline)
      cat fuzz/kineto.dict fuzz/ovspill.dict > "$build/fuzz/pipeline.dict"
      printf '"\\x0a#OVERLAPSCOPE-NEXT-FILE#\\x0a"\n' >> "$build/fuzz/pipeline.dict"
      echo "$build/fuzz/pipeline.dict" ;;
  esac
}

seeds_for() {
  local t=$1 extra=${OVERLAPSCOPE_FUZZ_EXTRA_SEEDS:-}
  if [ -n "$extra" ]; then
    "$build/fuzz/fuzz_make_seeds" "$build/fuzz/seeds-extra" tests/data "$extra" >/dev/null
    echo "$build/fuzz/seeds-extra/$t"
  else
    echo "$build/fuzz/seeds/$t"
  fi
}

# run TARGET SECONDS CORPUS_DIR [PREFIX...]: prints libFuzzer's final stats; returns its exit code.
# The CPU seconds the fuzzer used are left in $build/fuzz/$t.cpu.
run() {
  local t=$1 secs=$2 corpus=$3
  shift 3
  local bin="$build/fuzz/fuzz_$t" art="$build/fuzz/artifacts/$t/" seeds
  [ -x "$bin" ] || { echo "fuzz.sh: $bin missing: build with -DOVERLAPSCOPE_FUZZ=ON (tools/sanitize.sh)" >&2; return 2; }
  seeds=$(seeds_for "$t")
  mkdir -p "$corpus" "$art"
  local log="$build/fuzz/$t.log"
  local start=$SECONDS rc=0 fork=()
  [ "${OVERLAPSCOPE_FUZZ_FORK:-0}" -gt 0 ] && fork=(-fork="$OVERLAPSCOPE_FUZZ_FORK")
  # CPU time of the fuzzer and its workers: the shell's `times` of a subshell (children's line).
  (
    "$@" "$bin" "${fork[@]}" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 \
      -dict="$(dict_for "$t")" -artifact_prefix="$art" "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
    # (`times` itself, not in a pipeline: a pipeline's stage is a subshell with no children.)
    times >"$build/fuzz/$t.times"
    tail -1 "$build/fuzz/$t.times" |
      awk '{ for (i = 1; i <= 2; ++i) { split($i, a, /[ms]/); c += a[1] * 60 + a[2] } printf "%d 0\n", c }' \
      >"$build/fuzz/$t.cpu"
    exit "$rc"
  ) || rc=$?
  local last execs
  last=$(grep -aE '^#[0-9]+[[:space:]:]+(DONE|pulse|NEW|REDUCE|INITED|cov)' "$log" | tail -1 || true)
  execs=$(grep -aoE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
  # Fork mode prints no final stats: its status lines start with the executions so far ("#N: cov").
  [ -n "$execs" ] || execs=$(grep -aoE '^#[0-9]+:' "$log" | tail -1 | tr -dc 0-9 || true)
  [ -n "$execs" ] || execs=0
  echo "$execs" >"$build/fuzz/$t.execs"
  printf '%-12s rc=%d %5ds execs=%s corpus=%s files | %s\n' "$t" "$rc" $((SECONDS - start)) "$execs" \
    "$(find "$corpus" -type f | wc -l)" "$last"
  if [ "$rc" -ne 0 ]; then
    grep -aE 'ERROR|FUZZ CHECK FAILED|SUMMARY|Test unit written|runtime error' "$log" | head -20
    echo "(full log: $log)"
  fi
  return "$rc"
}

case $mode in
  smoke)
    # OVERLAPSCOPE_FUZZ_JOBS targets at a time (default 1; CI, alone on its machine, runs 2).
    secs=${3:-60} jobs=${OVERLAPSCOPE_FUZZ_JOBS:-1}
    failed=0
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    pids=()
    for t in "${TARGETS[@]}"; do
      run "$t" "$secs" "$tmp/$t" >"$tmp/$t.out" 2>&1 &
      pids+=($!)
      if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || failed=1; pids=("${pids[@]:1}"); fi
    done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    for t in "${TARGETS[@]}"; do cat "$tmp/$t.out"; done
    if [ "$failed" -ne 0 ]; then echo "fuzz smoke: FAILED (inputs in $build/fuzz/artifacts)"; exit 1; fi
    echo "fuzz smoke: ${#TARGETS[@]} targets x ${secs}s, no crash, no sanitizer report, no timeout"
    ;;
  long)
    t=${3:?target}; want=${4:?cpu seconds}; wall=${5:-0}
    cpu=0 execs=0 runs=0 start=$SECONDS
    while [ "$cpu" -lt "$want" ]; do
      secs=600
      if [ "$wall" -gt 0 ]; then
        left=$((wall - (SECONDS - start)))
        [ "$left" -ge 10 ] || break
        [ "$left" -ge "$secs" ] || secs=$left
      fi
      run "$t" "$secs" "$build/fuzz/corpus/$t" nice -n 19 || { echo "long run of $t: FOUND SOMETHING after ${cpu}s CPU"; exit 1; }
      cpu=$((cpu + $(awk '{printf "%d", $1 + $2}' "$build/fuzz/$t.cpu")))
      execs=$((execs + $(cat "$build/fuzz/$t.execs")))
      runs=$((runs + 1))
    done
    # libFuzzer's last status line of the last run: cov = edges covered, ft = features.
    cov=$(grep -aE '^#[0-9]+[[:space:]:]' "$build/fuzz/$t.log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo '?')
    echo "long run of $t: $runs runs, ${cpu}s CPU, $((SECONDS - start))s wall, $execs executions," \
      "0 crashes, 0 sanitizer reports, 0 timeouts; $cov; corpus $(find "$build/fuzz/corpus/$t" -type f | wc -l)" \
      "files, $(du -sk "$build/fuzz/corpus/$t" | cut -f1) KiB"
    ;;
  *) echo "usage: tools/fuzz.sh smoke BUILD [SECONDS] | long BUILD TARGET CPU_SECONDS [WALL_SECONDS] | targets" >&2; exit 64 ;;
esac
