# The commands of branch h32c's calls on nvidia-h100-x1 (16 Intel Xeon CPUs), repository root there,
# with .carry/h32c holding gzip -9 copies of: overlapscope-before (main cea849f, static, stripped),
# overlapscope (the branch's build of the call), overlapscope-spans (the same with the temporary
# spans of spans_build.patch), gen_kineto_trace and libisal.so.2 (from tools/every_core_prepare.sh).
# Call 0 (17:21 UTC) ran without the carry and measured nothing.
C=.carry/h32c; for f in $C/*.gz; do gzip -dc "$f" > "${f%.gz}"; done
chmod +x $C/overlapscope* $C/gen_kineto_trace; export LD_LIBRARY_PATH=$PWD/$C; W=/tmp/every_core
# calls 1 (cc2a579, 17:21 UTC) and 2 (7332e14, 17:26 UTC):
CARRY=$C PAIRS=5 THREADS="2 16" bash tools/every_core_carried.sh > callN_ec.log 2>&1
for i in 1 2 3; do for b in overlapscope-before overlapscope overlapscope-spans; do for f in json json.gz; do
  echo "phases $b trace_500.$f --threads 16 (round $i)"
  OVERLAPSCOPE_PHASES=1 $C/$b analyze $W/trace_500.$f --json --threads 16 2>&1 >/dev/null | grep -E '^(phase|span)'
done; done; done > callN_phases.log 2>&1   # two rounds in call 1, three in call 2
for f in json json.gz; do
  $C/overlapscope-before analyze $W/trace_500.$f --json --threads 1 > $W/b1.$f 2>$W/b1e.$f
  for n in 1 2 16; do $C/overlapscope analyze $W/trace_500.$f --json --threads $n > $W/a$n.$f 2>$W/a${n}e.$f
    cmp $W/b1.$f $W/a$n.$f && cmp $W/b1e.$f $W/a${n}e.$f && echo "same bytes and stderr: $f threads $n vs before at 1"; done
done > callN_check.log 2>&1
# call 3 (7332e14, 17:28 UTC):
CARRY=$C PAIRS=8 THREADS="1 2 16" bash tools/every_core_carried.sh > call3_ec.log 2>&1
