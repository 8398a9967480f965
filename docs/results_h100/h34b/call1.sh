#!/usr/bin/env bash
# h34b's call on the 16-CPU machine (static stripped builds: this branch against main 0ec58a3 as
# overlapscope-before): every_core_carried pairs at 16 threads, three OVERLAPSCOPE_PHASES=1 runs
# of each build and input at 16 threads (alternated), cmp of every report at 1, 2 and 16, then
# four alternated pairs of each input at 2 threads (/usr/bin/time-free: bash's time).
set -u
C=.carry/h34b
gunzip -f $C/*.gz && chmod +x $C/overlapscope $C/overlapscope-before $C/gen_kineto_trace
export LD_LIBRARY_PATH=$PWD/$C
date -u
{ echo "=== every_core_carried"; date -u; CARRY=$C PAIRS=6 THREADS="16" bash tools/every_core_carried.sh; } > $OUT/carried.log 2>&1
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
{
TIMEFORMAT='%R %U %S'
for k in 1 2 3 4; do for b in overlapscope-before overlapscope; do for f in $J $G; do
  echo "two $b ${f##*/} $( { time $C/$b analyze $f --json --threads 2 >/dev/null 2>&1; } 2>&1 )"
done; done; done
date -u
} > $OUT/two.log 2>&1
grep -E "^pairs|same|peak|mean" $OUT/carried.log | head -20; cat $OUT/cmp.log $OUT/two.log
grep -E "g inferred waits|iterations|overlap |graph start|gpu by corr|phase (parse|finalize|analyses|render)" $OUT/phases16.log | head -80
