#!/usr/bin/env bash
# Paired runs of two overlapscope builds on one trace (issue 26, the parse): BASE and NEW
# alternated PAIRS times, `OVERLAPSCOPE_PHASES=1 analyze FILE --json --threads N`, timed by
# /usr/bin/time. One line per run: CPU (user + sys), wall, peak RSS, and the parse phase's wall
# and CPU (cumulative at its end), then each build's mean (least) CPU and parse CPU. On a shared
# machine the CPU seconds are the figure to compare; the walls are each run's share of the cores.
#   bash tools/parse_pairs.sh BASE NEW PAIRS FILE N
set -euo pipefail
base=$1 new=$2 pairs=$3 file=$4 threads=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$pairs"); do
  for bin in "$base" "$new"; do
    name=$([ "$bin" = "$base" ] && echo base || echo new)
    OVERLAPSCOPE_PHASES=1 /usr/bin/time -o "$tmp/t" -f "%U %S %e %M" "$bin" analyze "$file" --json \
      --threads "$threads" 2>"$tmp/ph" >/dev/null
    parse=$(awk '/phase parse/ {for (i = 1; i <= NF; i++) {if ($i == "wall") w = $(i + 1); if ($i == "cpu") c = $(i + 1)}}
                 END {print "parse-wall", w, "parse-cpu", c}' "$tmp/ph")
    awk -v b="$name" -v p="$parse" '{printf "%s cpu %.2f wall %.2f peak %d MiB %s\n", b, $1 + $2, $3, $4 / 1024, p}' \
      "$tmp/t"
  done
done | tee "$tmp/runs"
awk '{n[$1]++; c[$1] += $3; if (!($1 in m) || $3 < m[$1]) m[$1] = $3; p[$1] += $12; if (!($1 in mp) || $12 < mp[$1]) mp[$1] = $12}
     END {for (k in n) printf "%s: CPU %.3f (%.2f) s, parse CPU %.3f (%.3f) s, %d runs\n", k, c[k] / n[k], m[k], p[k] / n[k], mp[k], n[k]}' \
  "$tmp/runs"
