#!/usr/bin/env bash
# Golden outputs of the CLI: for each input of tests/data/golden/inputs.txt, the `analyze`
# report (--json, text, --markdown), `info` (--json, text), and the SHA-256 of the files that
# `export` (Perfetto, Perfetto with --analyze, Chrome JSON) and `analyze --trace` write.
#
#   tools/golden.sh BIN update [INPUT...]   rewrite tests/data/golden/<name>.* from BIN's output
#   tools/golden.sh BIN check  [INPUT...]   compare; prints a diff and exits 1 on a difference
#
# GOLDEN_THREADS=N adds `--threads N` to every command: the outputs must be the same at any
# thread count (the threads ctests run `check` with 1, 2 and 16).
# BIN is the overlapscope binary (e.g. build/cli/overlapscope). Run from anywhere: inputs are
# given to BIN relative to the source root, as the reports record them. Without INPUT: all.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
mode="$2"
shift 2
golden="$root/tests/data/golden"
cd "$root"
if [[ $# -eq 0 ]]; then
  mapfile -t inputs < <(grep -v '^#' "$golden/inputs.txt" | grep -v '^$')
else
  inputs=("$@")
fi
th=()
if [[ -n "${GOLDEN_THREADS:-}" ]]; then th=(--threads "$GOLDEN_THREADS"); fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Writes every output of one input into directory $2.
outputs() {
  local in="$1" out="$2"
  "$bin" analyze "$in" "${th[@]}" --json >"$out/analyze.json"
  "$bin" analyze "$in" "${th[@]}" >"$out/analyze.txt"
  "$bin" analyze "$in" "${th[@]}" --markdown >"$out/analyze.md"
  "$bin" info "$in" "${th[@]}" --json >"$out/info.json"
  "$bin" info "$in" "${th[@]}" >"$out/info.txt"
  local x="$tmp/x"
  rm -rf "$x" && mkdir -p "$x"
  "$bin" export "$in" "${th[@]}" -o "$x/export.pftrace" >/dev/null
  "$bin" export "$in" "${th[@]}" -o "$x/export-analyze.pftrace" --analyze >/dev/null
  "$bin" export "$in" "${th[@]}" -o "$x/export-chrome.json" >/dev/null
  "$bin" analyze "$in" "${th[@]}" --trace "$x/analyze-trace.pftrace" >/dev/null 2>&1
  (cd "$x" && sha256sum $(ls | sort)) >"$out/exports.sha256"
}

status=0
for in in "${inputs[@]}"; do
  name="$(echo "$in" | tr '/' '_')"
  got="$tmp/$name"
  mkdir -p "$got"
  outputs "$in" "$got"
  for f in analyze.json analyze.txt analyze.md info.json info.txt exports.sha256; do
    want="$golden/$name.$f"
    if [[ "$mode" == update ]]; then
      cp "$got/$f" "$want"
    elif ! cmp -s "$got/$f" "$want"; then
      echo "golden: $in: $f differs from tests/data/golden/$name.$f:"
      diff -u "$want" "$got/$f" | head -40 || true
      status=1
    fi
  done
done
exit $status
