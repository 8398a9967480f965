#!/usr/bin/env bash
# ABBA-ordered pairs of main 0ec58a3 (overlapscope-before) and branch h34b e19b8bd (overlapscope),
# static stripped, at 2 and 16 threads, on the 500 MB trace and its gzip -6 made here.
set -u
C=.carry/h34b
gunzip -f $C/*.gz && chmod +x $C/overlapscope $C/overlapscope-before $C/gen_kineto_trace
export LD_LIBRARY_PATH=$PWD/$C
W=/tmp/every_core; mkdir -p $W; J=$W/trace_500.json; G=$W/trace_500.json.gz
$C/gen_kineto_trace tests/data/kineto/a2a_async/rank0.json.gz $J --mb 500 >/dev/null 2>&1 || true
[ -f $G ] || gzip -6 -k $J
cat $J $G > /dev/null
echo "host: $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
for n in 2 16; do for k in 1 2 3 4 5 6; do
  if (( k % 2 )); then order="overlapscope-before overlapscope"; else order="overlapscope overlapscope-before"; fi
  for b in $order; do for f in $J $G; do
    echo "t$n $b ${f##*/} $( { time $C/$b analyze $f --json --threads $n >/dev/null 2>&1; } 2>&1 )"
  done; done
done; done
