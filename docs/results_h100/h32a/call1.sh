#!/usr/bin/env bash
# h32a call 1: where main 740447b's .json.gz at 16 threads waits (phases, windows, page faults,
# malloc's transparent huge pages), on the 16-CPU machine.
set -u
R=$PWD; C=$PWD/.carry/h32a; export LD_LIBRARY_PATH=$C
B=$C/overlapscope-before
W=/tmp/w; mkdir -p $W; cd $W
echo "kernel $(uname -r); $(nproc) CPUs;$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "thp enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled); defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
echo "perf: $(command -v perf || echo none); glibc: $(ldd --version | head -1)"
t0=$(date +%s.%N)
$C/gen_kineto_trace $R/tests/data/kineto/a2a_async/rank0.json.gz t.json --mb 500 >/dev/null
gzip -6 -c t.json >t.json.gz; cat t.json t.json.gz >/dev/null
echo "trace $(stat -c %s t.json) / $(stat -c %s t.json.gz) bytes, made in $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{print b-a}') s"
echo "load: $(cat /proc/loadavg)"
tm() { /usr/bin/time -f "%e %U %S %R %M" "$@" 2>&1 >/dev/null | tail -1; }
echo "== rounds: label file threads -> wall user sys minflt maxrss_kb"
for r in 1 2 3 4 5 6; do
  for v in none glibc.malloc.hugetlb=1; do
    for f in t.json.gz t.json; do
      if [[ $v == none ]]; then echo "r$r $v $f 16: $(tm $B analyze $f --json --threads 16)"
      else echo "r$r $v $f 16: $(GLIBC_TUNABLES=$v tm $B analyze $f --json --threads 16)"; fi
    done
  done
done
for r in 1 2 3; do
  echo "r$r none t.json.gz 2: $(tm $B analyze t.json.gz --json --threads 2)"
  echo "r$r hugetlb t.json.gz 2: $(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 tm $B analyze t.json.gz --json --threads 2)"
done
echo "== inflate alone"
for v in none glibc.malloc.hugetlb=1 none glibc.malloc.hugetlb=1; do
  echo "$v: $(env GLIBC_TUNABLES=${v/none/} $C/parallel_inflate_bench t.json.gz 3 16 | grep -E '^(serial|parallel)' | tr '\n' ';')"
done
echo "== phases+windows"
for k in 1 2; do
  for v in none glibc.malloc.hugetlb=1; do
    echo "-- $v t.json.gz ($k)"
    env GLIBC_TUNABLES=${v/none/} OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 $B analyze t.json.gz --json --threads 16 2>&1 >/dev/null | tee $OUT/pw_${v%%=*}_$k.log | grep -E '^(phase|inflate:)'
  done
done
for v in none glibc.malloc.hugetlb=1; do
  echo "-- $v t.json"
  env GLIBC_TUNABLES=${v/none/} OVERLAPSCOPE_PHASES=1 OVERLAPSCOPE_WINDOWS=1 $B analyze t.json --json --threads 16 2>&1 >/dev/null | tee $OUT/pwj_${v%%=*}.log | grep -E '^phase'
done
if command -v perf >/dev/null; then perf stat -e task-clock,page-faults,context-switches,cpu-migrations $B analyze t.json.gz --json --threads 16 2>&1 >/dev/null | tail -12; fi
echo "load after: $(cat /proc/loadavg)"
