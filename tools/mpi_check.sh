#!/usr/bin/env bash
# `mpirun -np P overlapscope analyze DIR --json` gives the same bytes as one process's
# `analyze DIR --per-rank --json` (and text), for P = 2 and 3, on every multi-rank input of
# tests/data and samples and on a generated 7-rank job on 3 hosts whose clocks disagree (the
# alignment moves two hosts' ranks; when bench/gen_multirank_job was built).
#   tools/mpi_check.sh BUILD_DIR        exit 0: all the same; 1: a difference (diff printed);
#                                       77: skipped (no mpirun, or no overlapscope-analyze-mpi)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
bin="$build/cli/overlapscope"
if ! command -v mpirun >/dev/null || [[ ! -x "$build/cli/overlapscope-analyze-mpi" ]]; then
  echo "mpi_check: skipped (mpirun or $build/cli/overlapscope-analyze-mpi missing)"
  exit 77
fi
flags=(--oversubscribe)
[[ "$(id -u)" == 0 ]] && flags+=(--allow-run-as-root)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
inputs=(tests/data/kineto/a2a_async tests/data/kineto/a2a_sync tests/data/kineto/ag_overlap
  tests/data/kineto/ag_sequential tests/data/kineto/d2h_blocking samples/pytorch_ag_overlap tests/data/capture)
if [[ -x "$build/bench/gen_multirank_job" ]]; then
  "$build/bench/gen_multirank_job" tests/data/kineto/ag_overlap/rank0.json "$tmp/job" 7 --tiles 3 --ranks-per-host 3 \
    --straggler 5 --delay-us 300 >/dev/null
  inputs+=("$tmp/job")
fi
status=0
for in in "${inputs[@]}"; do
  for fmt in --json ""; do
    "$bin" analyze "$in" --per-rank $fmt >"$tmp/one" 2>"$tmp/one.err" || { cat "$tmp/one.err"; status=1; }
    for np in 2 3; do
      mpirun "${flags[@]}" -np "$np" "$bin" analyze "$in" $fmt >"$tmp/mpi" 2>"$tmp/mpi.err"
      rc=$?
      if [[ $rc != 0 ]] || ! cmp -s "$tmp/one" "$tmp/mpi"; then
        echo "mpi_check: $in ${fmt:-text} -np $np (rc $rc) differs from --per-rank:"
        cat "$tmp/mpi.err"
        diff "$tmp/one" "$tmp/mpi" | head -20
        status=1
      fi
    done
  done
  echo "mpi_check: $in: mpirun -np 2 and -np 3 give the --per-rank report"
done
exit $status
