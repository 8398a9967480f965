#!/usr/bin/env bash
# 120 mutated or cut copies of the three largest tests/data .json.gz: stderr and exit code of
# `analyze --json` (parallel inflate at 1, 3, 16 threads, default path at 16) against main's build.
set -u
M=${M:-/work/main/build/cli/overlapscope}; N=${N:-/work/wt/h32a/build-static/cli/overlapscope}
cd /work/wt/h32a
files=(tests/data/torch_diag/w4_sync/fsdp2_straggler/rank{0,1,2}.json.gz)
RANDOM=31; diff=0; runs=0
for i in $(seq 0 119); do
  src=${files[$((i % 3))]}; f=/tmp/h32a/mut/m$i.json.gz; size=$(stat -c %s "$src")
  if ((i % 2 == 0)); then
    head -c $(( (RANDOM * 32768 + RANDOM) % size )) "$src" > "$f"
  else
    cp "$src" "$f"
    for k in $(seq 1 $((1 + i % 4))); do
      off=$(( 10 + (RANDOM * 32768 + RANDOM) % (size - 10) ))
      printf "$(printf '\\x%02x' $(( (RANDOM % 255) + 1 )))" | dd of="$f" bs=1 seek=$off conv=notrunc status=none
    done
  fi
  for mode in "parallel 1" "parallel 3" "parallel 16" "default 16"; do
    set -- $mode
    env=(); [[ $1 == parallel ]] && env=(OVERLAPSCOPE_INFLATE=parallel)
    a=$(env "${env[@]}" $M analyze "$f" --json --threads $2 2>&1 >/tmp/h32a/mut/a.out; echo "rc=$?")
    b=$(env "${env[@]}" $N analyze "$f" --json --threads $2 2>&1 >/tmp/h32a/mut/b.out; echo "rc=$?")
    runs=$((runs + 1))
    if [[ "$a" != "$b" ]] || ! cmp -s /tmp/h32a/mut/a.out /tmp/h32a/mut/b.out; then diff=$((diff + 1)); echo "DIFF m$i $mode: main [$a] new [$b]"; fi
  done
  echo "m$i $(basename $src) $( ((i % 2 == 0)) && echo cut || echo flipped): ${a//$'\n'/ | }"
done
echo "mutants 120, runs $runs, differing $diff"
