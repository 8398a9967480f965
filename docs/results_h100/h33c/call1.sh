#!/usr/bin/env bash
# h33c's call on the 16-CPU machine (static stripped builds: this branch against main aec4e1e as
# overlapscope-before): every_core_carried pairs at 16 threads, three OVERLAPSCOPE_PHASES=1 runs
# of each build and input at 16 threads (alternated), and cmp of every report at 1, 2 and 16.
set -u
C=.carry/h33c
gunzip -f $C/*.gz && chmod +x $C/overlapscope $C/overlapscope-before $C/gen_kineto_trace
export LD_LIBRARY_PATH=$PWD/$C
{ echo "=== every_core_carried"; date -u; CARRY=$C PAIRS=5 THREADS="16" bash tools/every_core_carried.sh; } > $OUT/carried.log 2>&1
W=/tmp/every_core; J=$W/trace_500.json; G=$W/trace_500.json.gz
cat $J $G > /dev/null
{
for k in 1 2 3; do for b in overlapscope-before overlapscope; do for f in $J $G; do
  echo "== phases $k $b ${f##*/} 16"; OVERLAPSCOPE_PHASES=1 $C/$b analyze $f --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|span)'
done; done; done
} > $OUT/phases16.log 2>&1
{
for n in 1 2 16; do
  for f in $J $G; do
    $C/overlapscope analyze $f --json --threads $n > $W/new_$n.out 2>$W/new_$n.err
    $C/overlapscope-before analyze $f --json --threads $n > $W/old_$n.out 2>$W/old_$n.err
    cmp -s $W/new_$n.out $W/old_$n.out && cmp -s $W/new_$n.err $W/old_$n.err && echo "same bytes (stdout, stderr) ${f##*/} --threads $n" || echo "DIFFER ${f##*/} --threads $n"
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
} > $OUT/cmp.log 2>&1
grep -E "^pairs|same|peak|mean" $OUT/carried.log | head -20; cat $OUT/cmp.log
grep -E "g inferred waits|iterations|phase (parse|finalize|analyses|render)" $OUT/phases16.log | head -60
