#!/usr/bin/env bash
# h33b's call on the 16-CPU machine: every_core_carried pairs (b6d7cf0 against h33b), a phases
# run of each build at 16 threads, and the 2-thread .json against .json.gz question.
set -u
C=.carry/h33b
gunzip -f $C/*.gz && chmod +x $C/overlapscope $C/overlapscope-before $C/gen_kineto_trace $C/parallel_inflate_bench
export LD_LIBRARY_PATH=$PWD/$C
{ echo "=== every_core_carried"; date -u; CARRY=$C PAIRS=6 THREADS="2 16" bash tools/every_core_carried.sh; } > $OUT/carried.log 2>&1
W=/tmp/every_core; J=$W/trace_500.json; G=$W/trace_500.json.gz
cat $J $G > /dev/null
{
for b in overlapscope-before overlapscope; do for f in $J $G; do
  echo "== phases $b ${f##*/} 16"; OVERLAPSCOPE_PHASES=1 $C/$b analyze $f --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|span)'
done; done
} > $OUT/phases16.log 2>&1
# 2 threads: .json mapped (populate beside / not), pread, before; .json.gz
TIMEFORMAT='%R %U %S'
{
echo "nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
for k in 1 2 3 4 5 6; do
  for v in before pop1 pop0 pread gz gzbefore; do
    case $v in
      before) cmd=($C/overlapscope-before analyze $J);;
      pop1) cmd=(env OVERLAPSCOPE_MAP_POPULATE=1 $C/overlapscope analyze $J);;
      pop0) cmd=(env OVERLAPSCOPE_MAP_POPULATE=0 $C/overlapscope analyze $J);;
      pread) cmd=(env OVERLAPSCOPE_READ=pread $C/overlapscope analyze $J);;
      gz) cmd=($C/overlapscope analyze $G);;
      gzbefore) cmd=($C/overlapscope-before analyze $G);;
    esac
    t=$({ time "${cmd[@]}" --json --threads 2 >/dev/null 2>&1; } 2>&1)
    echo "t2 $v $t"
  done
done
for v in pop1 pop0 pread gz; do
  case $v in
    pop1) e=(env OVERLAPSCOPE_MAP_POPULATE=1); f=$J;; pop0) e=(env OVERLAPSCOPE_MAP_POPULATE=0); f=$J;;
    pread) e=(env OVERLAPSCOPE_READ=pread); f=$J;; gz) e=(env); f=$G;;
  esac
  echo "== phases t2 $v"; "${e[@]}" OVERLAPSCOPE_PHASES=1 $C/overlapscope analyze $f --json --threads 2 2>&1 >/dev/null | grep -E '^phase'
  /usr/bin/time -f "gnutime $v %e %U %S faults %R peak %M" "${e[@]}" $C/overlapscope analyze $f --json --threads 2 2>&1 >/dev/null | tail -1
done
for n in 1 2 16; do
  for f in $J $G; do
    $C/overlapscope analyze $f --json --threads $n > $W/new_$n.out 2>/dev/null
    $C/overlapscope-before analyze $f --json --threads $n > $W/old_$n.out 2>/dev/null
    cmp -s $W/new_$n.out $W/old_$n.out && echo "same bytes ${f##*/} --threads $n" || echo "DIFFER ${f##*/} --threads $n"
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
} > $OUT/two_threads.log 2>&1
tail -30 $OUT/carried.log; cat $OUT/two_threads.log | tail -40
