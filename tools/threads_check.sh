#!/usr/bin/env bash
# The output is the same at any thread count (issue 26): `analyze --json` (one model) and
# `analyze --per-rank --json` / text (the per-rank reduction), and `info --json`, with
# --threads 1, 2 and 16, on multi-rank inputs larger than the golden ones (the real 2- and 4-GPU
# traces of tests/data/torch_diag: several parser windows' worth of split points per file).
# Each output at 2 and 16 threads is compared with the one at 1 thread; --per-rank is also
# compared with --jobs 1 (one rank at a time, then the parser and analysis threads are used).
# The runs at 16 threads ask for malloc's huge pages (OVERLAPSCOPE_HUGEPAGES=1: the command line
# runs itself again, cli/huge_pages.h), so the outputs are also checked the same with them.
#
# The Perfetto export with --analyze is compared too. Further inputs may follow BIN (the
# ThreadSanitizer run passes the golden inputs: a clang build's bytes are compared with its own
# at 1 thread, not with the goldens, which are GCC's).
#
#   tools/threads_check.sh BIN [INPUT...]      BIN: the overlapscope binary; exit 1 on a difference
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
shift
inputs=(tests/data/kineto/a2a_async tests/data/torch_diag/w4_default/fsdp2_straggler
        tests/data/torch_diag/w2_sync/mm_ag_overlap tests/data/torch_diag/w4_sync/dtensor_a2a_eager "$@")
runs=("analyze --json" "analyze --per-rank --json" "analyze --per-rank" "analyze --per-rank --jobs 1 --json"
      "info --json")
status=0
for in in "${inputs[@]}"; do
  [[ -e "$in" ]] || { echo "threads_check: $in absent, skipped"; continue; }
  for i in "${!runs[@]}"; do
    # shellcheck disable=SC2086  # the run's words are separate arguments
    "$bin" ${runs[$i]} "$in" --threads 1 >"$tmp/t1" 2>/dev/null
    for n in 2 16; do
      hp=0 && [[ $n == 16 ]] && hp=1
      # shellcheck disable=SC2086
      OVERLAPSCOPE_HUGEPAGES=$hp "$bin" ${runs[$i]} "$in" --threads "$n" >"$tmp/tn" 2>/dev/null
      if ! cmp -s "$tmp/t1" "$tmp/tn"; then
        echo "threads_check: $in: '${runs[$i]}' --threads $n differs from --threads 1:"
        diff -u "$tmp/t1" "$tmp/tn" | head -20 || true
        status=1
      fi
    done
  done
  for n in 1 2 16; do
    hp=0 && [[ $n == 16 ]] && hp=1
    OVERLAPSCOPE_HUGEPAGES=$hp "$bin" export "$in" -o "$tmp/x$n.pftrace" --analyze --threads "$n" >/dev/null 2>&1
  done
  for n in 2 16; do
    if ! cmp -s "$tmp/x1.pftrace" "$tmp/x$n.pftrace"; then
      echo "threads_check: $in: 'export --analyze' --threads $n differs from --threads 1"
      status=1
    fi
  done
  echo "threads_check: $in: $((${#runs[@]} + 1)) outputs the same at 1, 2 and 16 threads"
done
exit $status
