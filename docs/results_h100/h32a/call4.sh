#!/usr/bin/env bash
# h32a call 4: main 740447b's measurement aids and malloc tunables on the .json.gz (and .json)
# at 16 threads, alternated; --threads 2 with 4 parts; peaks; one timeline with 32 parts.
set -u
R=$PWD; X=$R/.carry/h32a/x; mkdir -p $X; tar xzf $R/.carry/h32a/bins.tgz -C $X
export LD_LIBRARY_PATH=$X
B=$X/overlapscope-before
W=/tmp/w; mkdir -p $W; gz=$W/t.json.gz; json=$W/t.json
$X/gen_kineto_trace $R/tests/data/kineto/a2a_async/rank0.json.gz $json --mb 500 >/dev/null
gzip -6 -c $json >$gz; cat $json $gz >/dev/null
echo "host $(nproc) CPUs; trace $(stat -c %s $json) / $(stat -c %s $gz) bytes; load $(cat /proc/loadavg)"
TIMEFORMAT='%R %U %S'
rm -f /tmp/r_*
one() {  # KEY FILE THREADS ENV...
  local key=$1 f=$2 n=$3; shift 3
  local t; t=$({ time env "$@" $B analyze $f --json --threads $n >/dev/null 2>&1; } 2>&1)
  read -r w u s <<<"$t"; echo "$w $(awk -v u=$u -v s=$s 'BEGIN{print u+s}')" >>/tmp/r_$key
}
H=GLIBC_TUNABLES=glibc.malloc.hugetlb=1
M=GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824
for k in $(seq 12); do
  one gz16_default $gz 16 X=1
  one gz16_parts32 $gz 16 OVERLAPSCOPE_PARTS=32
  one gz16_parts24 $gz 16 OVERLAPSCOPE_PARTS=24
  one gz16_hugetlb $gz 16 $H
  one gz16_hugetlb_parts32 $gz 16 $H OVERLAPSCOPE_PARTS=32
  one gz16_mmap_trim $gz 16 $M
done
for k in $(seq 8); do
  one json16_default $json 16 X=1
  one json16_parts32 $json 16 OVERLAPSCOPE_PARTS=32
  one json16_hugetlb $json 16 $H
done
for k in $(seq 6); do
  one gz2_default $gz 2 X=1
  one gz2_parts4 $gz 2 OVERLAPSCOPE_PARTS=4
  one gz2_hugetlb $gz 2 $H
done
for key in gz16_default gz16_parts32 gz16_parts24 gz16_hugetlb gz16_hugetlb_parts32 gz16_mmap_trim json16_default json16_parts32 json16_hugetlb gz2_default gz2_parts4 gz2_hugetlb; do
  awk -v k="$key" '{mw += $1; mc += $2; if (NR == 1 || $1 < lw) lw = $1; w[NR] = $1}
    END {n = asort(w); printf "%-24s wall %.3f (%.3f) median %.3f s  cpu %.3f s  [%d runs]\n", k, mw / NR, lw, w[int((n + 1) / 2)], mc / NR, NR}' /tmp/r_$key
done | tee $OUT/settings.log
echo "== peaks (KiB), minor faults"
for v in X=1 OVERLAPSCOPE_PARTS=32 $H $M; do
  for f in $gz $json; do
    echo "${f##*/} 16 $v: $(env $v /usr/bin/time -f '%M KiB %R minflt %e s' $B analyze $f --json --threads 16 2>&1 >/dev/null | tail -1)"
  done
done
for v in X=1 OVERLAPSCOPE_PARTS=4 $H; do
  echo "t.json.gz 2 $v: $(env $v /usr/bin/time -f '%M KiB %R minflt %e s' $B analyze $gz --json --threads 2 2>&1 >/dev/null | tail -1)"
done
echo "== bytes"
$B analyze $gz --json --threads 16 >$W/ref 2>/dev/null
for v in OVERLAPSCOPE_PARTS=32 OVERLAPSCOPE_PARTS=24 $H; do env $v $B analyze $gz --json --threads 16 2>/dev/null | cmp -s - $W/ref && echo "$v same" || echo "$v DIFFERS"; done
echo "== timelines"
for v in X=1 OVERLAPSCOPE_PARTS=32; do
  env $v OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 $B analyze $gz --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|window|inflate)' >$OUT/tl_${v//[=:.]/_}.log
  echo "$v: $(grep -E '^phase (parse|render)' $OUT/tl_${v//[=:.]/_}.log | grep -o 'wall [0-9.]*' | tr '\n' ' ') $(grep '^inflate:' $OUT/tl_${v//[=:.]/_}.log)"
done
echo "load after: $(cat /proc/loadavg)"
