#!/usr/bin/env bash
# usage: pairs.sh N "THREADS" FILE... ; env A B (binaries), LABEL
A=${A:-/work/wt/h33b-base/build/cli/overlapscope}; B=${B:-/work/wt/h33b/build/cli/overlapscope}
n=$1; shift; ths=$1; shift
cd /tmp/h31a
for f in "$@"; do cat $f > /dev/null; done
uptime
for f in "$@"; do for t in $ths; do for i in $(seq $n); do
  for who in A B; do bin=${!who}
    /usr/bin/time -f "$who $f $t %e %U %S %R %M" $bin analyze $f --json --threads $t 2>&1 >/dev/null | tail -1
  done; done; done; done
uptime
