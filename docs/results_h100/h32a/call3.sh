#!/usr/bin/env bash
# h32a call 3: every_core_carried.sh pairs (main 740447b against h32a), then the new build's
# settings alternated on the .json.gz (and .json) at 16 threads, timelines, peaks.
set -u
R=$PWD; X=$R/.carry/h32a/x; mkdir -p $X; tar xzf $R/.carry/h32a/bins.tgz -C $X
export LD_LIBRARY_PATH=$X
echo "== every_core_carried.sh"
CARRY=.carry/h32a/x PAIRS=5 THREADS="2 16" bash tools/every_core_carried.sh 2>&1 | tee $OUT/ec.log
W=${TMPDIR:-/tmp}/every_core; gz=$W/trace_500.json.gz; json=$W/trace_500.json
TIMEFORMAT='%R %U %S'
rm -f /tmp/r_*
one() {  # KEY FILE ENV...
  local key=$1 f=$2 b=overlapscope; shift 2
  [[ $key == before* ]] && b=overlapscope-before
  local t; t=$({ time env "$@" $X/$b analyze $f --json --threads 16 >/dev/null 2>&1; } 2>&1)
  read -r w u s <<<"$t"; echo "$w $(awk -v u=$u -v s=$s 'BEGIN{print u+s}')" >>/tmp/r_$key
}
V="OVERLAPSCOPE_WINDOW_HUGEPAGES=0 GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
echo "== settings, .json.gz --threads 16, 10 rounds alternated; load $(cat /proc/loadavg)"
for k in 1 2 3 4 5 6 7 8 9 10; do
  one before $gz; one default $gz
  for v in $V; do one $v $gz $v; done
  one before_json $json; one default_json $json; one thp_json $json GLIBC_TUNABLES=glibc.malloc.hugetlb=1
done
for key in before default $V before_json default_json thp_json; do
  awk -v k="$key" '{mw += $1; mc += $2; if (NR == 1 || $1 < lw) lw = $1}
    END {printf "%-44s wall %.3f (%.3f) s  cpu %.3f s  [%d runs]\n", k, mw / NR, lw, mc / NR, NR}' /tmp/r_$key
done | tee $OUT/settings.log
echo "== peaks (KiB) and faults, .json.gz 16"
for v in none OVERLAPSCOPE_WINDOW_HUGEPAGES=0; do
  for b in overlapscope-before overlapscope; do
    echo "$b $v: $(env ${v/none/X=1} /usr/bin/time -f '%M KiB %R minflt %e s' $X/$b analyze $gz --json --threads 16 2>&1 >/dev/null | tail -1)"
  done
done
echo "== timelines"
for v in none; do
  for k in 1 2; do
    OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 $X/overlapscope-before analyze $gz --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|window|inflate)' > $OUT/tlb_$k.log
    env ${v/none/X=1} OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 $X/overlapscope analyze $gz --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|window|inflate)' > $OUT/tl_${v##*=}_$k.log
    echo "$v ($k): $(grep -E '^phase (parse|render)' $OUT/tl_${v##*=}_$k.log | grep -o 'wall [0-9.]*' | tr '\n' ' ') before: $(grep -E '^phase (parse|render)' $OUT/tlb_$k.log | grep -o 'wall [0-9.]*' | tr '\n' ' ') $(grep '^inflate:' $OUT/tlb_$k.log) $(grep '^inflate:' $OUT/tl_${v##*=}_$k.log)"
  done
done
echo "load after: $(cat /proc/loadavg)"
