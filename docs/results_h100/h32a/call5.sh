#!/usr/bin/env bash
# h32a call 5: main 740447b against h32a (main() runs itself again with glibc.malloc.hugetlb=1),
# and h32a with OVERLAPSCOPE_HUGEPAGES=0; alternated, 16 and 2 threads; peaks, faults, bytes.
set -u
R=$PWD; X=$R/.carry/h32a/x; mkdir -p $X; tar xzf $R/.carry/h32a/bins.tgz -C $X
export LD_LIBRARY_PATH=$X
W=/tmp/w; mkdir -p $W; gz=$W/t.json.gz; json=$W/t.json
$X/gen_kineto_trace $R/tests/data/kineto/a2a_async/rank0.json.gz $json --mb 500 >/dev/null
gzip -6 -c $json >$gz; cat $json $gz >/dev/null
echo "host $(nproc) CPUs; trace $(stat -c %s $json) / $(stat -c %s $gz) bytes; load $(cat /proc/loadavg)"
TIMEFORMAT='%R %U %S'
rm -f /tmp/r_*
one() {  # KEY BIN FILE THREADS ENV...
  local key=$1 b=$2 f=$3 n=$4; shift 4
  local t; t=$({ time env "$@" $X/$b analyze $f --json --threads $n >/dev/null 2>&1; } 2>&1)
  read -r w u s <<<"$t"; echo "$w $(awk -v u=$u -v s=$s 'BEGIN{print u+s}')" >>/tmp/r_$key
}
for k in $(seq 10); do
  for f in gz json; do
    [[ $f == gz ]] && p=$gz || p=$json
    one ${f}16_main overlapscope-before $p 16 X=1
    one ${f}16_h32a overlapscope $p 16 X=1
    one ${f}16_h32a_off overlapscope $p 16 OVERLAPSCOPE_HUGEPAGES=0
  done
done
for k in $(seq 5); do
  for f in gz json; do
    [[ $f == gz ]] && p=$gz || p=$json
    one ${f}2_main overlapscope-before $p 2 X=1
    one ${f}2_h32a overlapscope $p 2 X=1
  done
done
for key in gz16_main gz16_h32a gz16_h32a_off json16_main json16_h32a json16_h32a_off gz2_main gz2_h32a json2_main json2_h32a; do
  echo "$key: $(cut -d' ' -f1 /tmp/r_$key | tr '\n' ' ')| cpu $(cut -d' ' -f2 /tmp/r_$key | tr '\n' ' ')"
done | tee $OUT/raw.log
echo "== peaks, faults"
for n in 16 2; do for f in $gz $json; do for b in overlapscope-before overlapscope; do
  echo "$b ${f##*/} $n: $(/usr/bin/time -f '%M KiB %R minflt %e s %S sys' $X/$b analyze $f --json --threads $n 2>&1 >/dev/null | tail -1)"
done; done; done
echo "== bytes"
for f in $gz $json; do
  $X/overlapscope-before analyze $f --json --threads 16 >$W/ref 2>/dev/null
  for n in 1 2 16; do $X/overlapscope analyze $f --json --threads $n 2>/dev/null | cmp -s - $W/ref && echo "${f##*/} $n same" || echo "${f##*/} $n DIFFERS"; done
done
echo "== phases, h32a .json.gz 16"
OVERLAPSCOPE_PHASES=1 $X/overlapscope analyze $gz --json --threads 16 2>&1 >/dev/null | grep -E '^phase'
echo "load after: $(cat /proc/loadavg)"
