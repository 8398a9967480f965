#!/usr/bin/env bash
# h33b's second call on the 16-CPU machine (final build 3d77c86 against b6d7cf0):
# every_core_carried pairs, a phases run of each build at 16 threads, the 2-thread .json ways.
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
TIMEFORMAT='%R %U %S'
{
echo "nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
for k in 1 2 3 4 5 6 7 8; do
  for v in before pop0 pop1 pop2 pread gz; do
    case $v in
      before) cmd=($C/overlapscope-before analyze $J);;
      pop0) cmd=(env OVERLAPSCOPE_MAP_POPULATE=0 $C/overlapscope analyze $J);;
      pop1) cmd=(env OVERLAPSCOPE_MAP_POPULATE=1 $C/overlapscope analyze $J);;
      pop2) cmd=(env OVERLAPSCOPE_MAP_POPULATE=2 $C/overlapscope analyze $J);;
      pread) cmd=(env OVERLAPSCOPE_READ=pread $C/overlapscope analyze $J);;
      gz) cmd=($C/overlapscope analyze $G);;
    esac
    t=$({ time "${cmd[@]}" --json --threads 2 >/dev/null 2>&1; } 2>&1)
    echo "t2 $v $t"
  done
done
for v in pop0 pop1 pop2 pread; do
  case $v in
    pop0) e=(env OVERLAPSCOPE_MAP_POPULATE=0);; pop1) e=(env OVERLAPSCOPE_MAP_POPULATE=1);;
    pop2) e=(env OVERLAPSCOPE_MAP_POPULATE=2);; pread) e=(env OVERLAPSCOPE_READ=pread);;
  esac
  echo "== phases t2 $v"; "${e[@]}" OVERLAPSCOPE_PHASES=1 $C/overlapscope analyze $J --json --threads 2 2>&1 >/dev/null | grep -E '^phase (parse|render)'
  /usr/bin/time -f "gnutime $v %e %U %S faults %R peak %M" "${e[@]}" $C/overlapscope analyze $J --json --threads 2 2>&1 >/dev/null | tail -1
done
for n in 1 2 16; do
  for f in $J $G; do
    $C/overlapscope analyze $f --json --threads $n > $W/new_$n.out 2>$W/new_$n.err
    $C/overlapscope-before analyze $f --json --threads $n > $W/old_$n.out 2>$W/old_$n.err
    cmp -s $W/new_$n.out $W/old_$n.out && cmp -s $W/new_$n.err $W/old_$n.err && echo "same bytes (stdout, stderr) ${f##*/} --threads $n" || echo "DIFFER ${f##*/} --threads $n"
  done
done
for v in 0 1 2; do OVERLAPSCOPE_MAP_POPULATE=$v $C/overlapscope analyze $J --json --threads 2 > $W/pop.out 2>/dev/null; $C/overlapscope-before analyze $J --json --threads 2 > $W/popb.out 2>/dev/null; cmp -s $W/pop.out $W/popb.out && echo "same bytes .json --threads 2 OVERLAPSCOPE_MAP_POPULATE=$v" || echo "DIFFER populate $v"; done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
} > $OUT/two_threads.log 2>&1
grep -E "^pairs|same|peak" $OUT/carried.log; tail -12 $OUT/two_threads.log
