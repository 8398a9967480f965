#!/usr/bin/env bash
# Renders the HTML pages of `analyze --html`, `diff --html` and `replay --html` in headless Chromium and fails when
# the browser logs a console message (a script or resource error) or a page tries the network.
# With a directory as $2, also writes a screenshot of each page there (html-analyze.png,
# html-diff.png, html-replay.png, and html-overview-256.png of a generated 256-rank job and html-diff-16.png of a
# diff of two generated 16-rank jobs when bench/gen_multirank_job is built). Exits 77 (ctest:
# skipped) when no chromium is installed.
#
#   tools/html_check.sh BIN [SCREENSHOT_DIR]      BIN: build/cli/overlapscope
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shots="${2:-}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$browser" ]]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
"$bin" analyze tests/data/kineto/ag_overlap --html "$tmp/analyze.html" >/dev/null
"$bin" diff tests/data/kineto/ag_sequential tests/data/kineto/ag_overlap --html "$tmp/diff.html" >/dev/null
"$bin" replay tests/data/torch_diag/w2_default/mm_ag_sequential --change 'async:/AllGather/' \
  --html "$tmp/replay.html" >/dev/null
pages=(analyze diff replay)
# A generated 256-rank job (straggler rank 201, pageable copies on rank 70): the job overview's
# heat map, with per-rank sections only for the two ranks that stand out (html-overview-256.png).
gen="$(dirname "$bin")/../bench/gen_multirank_job"
if [[ -x "$gen" ]]; then
  "$gen" tests/data/kineto/ag_overlap/rank0.json "$tmp/job256" 256 --tiles 2 --straggler 201 --delay-us 300 \
    --pageable 70 >/dev/null
  "$bin" analyze "$tmp/job256" --html "$tmp/overview-256.html" >/dev/null
  pages+=(overview-256)
  # diff of two generated 16-rank jobs, rank 11 a straggler in TEST only: the overview of the
  # change per rank (heat map, rank 11 listed and linked to its delta section).
  "$gen" tests/data/kineto/ag_overlap/rank0.json "$tmp/base16" 16 --tiles 2 >/dev/null
  "$gen" tests/data/kineto/ag_overlap/rank0.json "$tmp/test16" 16 --tiles 2 --straggler 11 --delay-us 300 >/dev/null
  "$bin" diff "$tmp/base16" "$tmp/test16" --html "$tmp/diff-16.html" >/dev/null
  if ! grep -q '<li><a href="#r-rank-11-delta">rank 11</a>' "$tmp/diff-16.html"; then
    echo "html_check: diff-16.html does not list rank 11 in the overview of the change"
    exit 1
  fi
  pages+=(diff-16)
else
  echo "html_check: $gen not built: the 256-rank page is not checked"
fi
status=0
for page in "${pages[@]}"; do
  if grep -Eq '<script|https?://|<link|@import|url\(' "$tmp/$page.html"; then
    echo "html_check: $page.html refers to something outside the page"
    status=1
  fi
  shot=()
  height=2600
  [[ $page == diff ]] && height=4200  # the verdict and deltas, then both sides down to their findings
  [[ $page == overview-256 ]] && height=1500  # the header and the job overview
  [[ $page == diff-16 ]] && height=1500       # the header and the overview of the change
  [[ $page == replay ]] && height=1400        # the tables and both ranks' bars
  [[ -n "$shots" ]] && shot=("--window-size=1200,$height" "--screenshot=$shots/html-$page.png")
  rm -rf "$tmp/profile"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 "${shot[@]}" \
    --dump-dom "file://$tmp/$page.html" >"$tmp/$page.dom" 2>"$tmp/$page.log" || true
  if grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR' "$tmp/$page.log"; then
    echo "html_check: $page.html: the browser logged the lines above"
    status=1
  fi
  # The page was rendered: the DOM the browser built has the charts.
  if ! grep -q '<svg class="chart' "$tmp/$page.dom"; then
    echo "html_check: $page.html: no chart in the rendered DOM"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "html_check: ${pages[*]} render in $("$browser" --version 2>/dev/null | head -1) with no console message"
exit $status
