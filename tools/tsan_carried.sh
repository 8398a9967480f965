#!/usr/bin/env bash
# Issue 26's ThreadSanitizer run on a many-core machine that has no toolchain (the GPU machines'
# CPUs), from binaries built on the development machine: the checks of tools/tsan_check.sh
# (importers_tests, analyze_tests, engine_tests and replay_tests, one gtest shard per CPU at once;
# tools/threads_check.sh over its inputs and the golden inputs; a 50 MB trace and its .json.gz at
# --threads 16 against --threads 1), every report fatal (halt_on_error).
#
# Before the call, on the development machine (repository root; needs clang and patchelf):
#   TSAN_BUILD_ONLY=1 bash tools/tsan_check.sh    # build-tsan/
#   bash tools/tsan_carried.sh --pack              # .carry/tsan/: the binaries and every library
#                                                  # they load, the loader included; packed in
#                                                  # .carry/tsan_pack/tsan.txz (carry that: ~10 MB)
# The packed binaries load their libraries from /tmp/ovs-tsan-lib (their interpreter and run path
# are set there with patchelf; this script copies the carried ones there first), so they run
# with the glibc they were built against, and directly: tools/threads_check.sh execs them. The test
# binaries read tests/data under the source directory compiled into them; where that path does not
# exist on the machine it is linked to this repository root (needs write access to its parent).
# Then, on the machine, from the repository root with .carry/tsan or .carry/tsan_pack beside it:
#   bash tools/tsan_carried.sh                     # exit 0: no report, same bytes at every count
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
carry=${CARRY:-.carry/tsan}
packed=${carry}_pack
lib=/tmp/ovs-tsan-lib
bins=(cli/overlapscope tests/importers_tests tests/analyze_tests tests/engine_tests tests/replay_tests bench/gen_kineto_trace)

pack() {
  local build=${BUILD:-build-tsan} b
  command -v patchelf >/dev/null || { echo "tsan_carried: --pack needs patchelf" >&2; return 1; }
  rm -rf "$carry" && mkdir -p "$carry/lib" || return 1
  for b in "${bins[@]}"; do
    [[ -x "$build/$b" ]] || { echo "tsan_carried: $build/$b missing (TSAN_BUILD_ONLY=1 bash tools/tsan_check.sh)" >&2; return 1; }
    cp "$build/$b" "$carry/" || return 1
    # Function names stay (the symbol table) for the reports; line tables would not fit the carry.
    strip --strip-debug "$carry/$(basename "$b")" || return 1
    ldd "$build/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u |
      while read -r so; do cp -Ln "$so" "$carry/lib/" 2>/dev/null || true; done
  done
  [[ -f "$carry/lib/ld-linux-x86-64.so.2" ]] || { echo "tsan_carried: no loader found by ldd" >&2; return 1; }
  for b in "${bins[@]}"; do
    patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$carry/$(basename "$b")" || return 1
  done
  sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" >"$carry/source_dir"
  # The same, packed with xz (44 MB -> 10 MB; gzip: 16 MB, too much beside the 54 MB repository
  # under a call's 64 MiB): carry the folder of the archive, the run unpacks it where the folder
  # itself was not carried.
  rm -rf "$packed" && mkdir -p "$packed" || return 1
  tar cf - -C "$(dirname "$carry")" "$(basename "$carry")" | xz -6 -T0 >"$packed/tsan.txz" || return 1
  du -sh "$carry" "$packed/tsan.txz"
}

if [[ "${1:-}" == "--pack" ]]; then
  pack
  exit
fi

if [[ ! -d "$carry" && -f "$packed/tsan.txz" ]]; then tar xJf "$packed/tsan.txz" -C "$(dirname "$carry")" || exit 1; fi
mkdir -p "$lib" && cp "$carry"/lib/* "$lib/" || exit 1
# Not LD_LIBRARY_PATH: the machine's own tools (bash, grep, gzip) must keep their own libraries;
# the packed binaries find theirs through their interpreter and run path.
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
src=$(cat "$carry/source_dir")
if [[ ! -e "$src" ]]; then
  mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src" || echo "tsan_carried: cannot link $src: the unit tests will not find their data"
fi
cpus=$(nproc)
echo "host: $cpus CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)); source dir $src"
status=0
for t in importers_tests analyze_tests engine_tests replay_tests; do
  start=$SECONDS
  pids=()
  for ((i = 0; i < cpus; ++i)); do
    GTEST_TOTAL_SHARDS=$cpus GTEST_SHARD_INDEX=$i "$carry/$t" --gtest_brief=1 >"/tmp/ovs-tsan-$t-$i.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || { failed=$((failed + 1)); tail -40 "/tmp/ovs-tsan-$t-$i.log"; }; done
  reports=$(cat /tmp/ovs-tsan-"$t"-*.log | grep -c 'WARNING: ThreadSanitizer' || true)
  echo "$t: $cpus shards, $failed failed, $reports ThreadSanitizer reports, $((SECONDS - start)) s"
  grep -h '^\[  PASSED  \]' /tmp/ovs-tsan-"$t"-*.log | awk '{n += $4} END {print "  tests passed: " n}'
  ((failed == 0 && reports == 0)) || status=1
done
mapfile -t golden < <(grep -v '^#' tests/data/golden/inputs.txt | grep -v '^$')
if bash tools/threads_check.sh "$carry/overlapscope" "${golden[@]}"; then echo "threads_check: same bytes"; else status=1; fi
tmp=$(mktemp -d)
"$carry/gen_kineto_trace" tests/data/kineto/a2a_async/rank0.json.gz "$tmp/t.json" --mb 50 >/dev/null
gzip -c "$tmp/t.json" >"$tmp/t.json.gz"
for f in "$tmp/t.json" "$tmp/t.json.gz"; do
  "$carry/overlapscope" analyze "$f" --json --threads 16 >"$tmp/a16" || status=1
  "$carry/overlapscope" analyze "$f" --json --threads 1 >"$tmp/a1" || status=1
  if cmp -s "$tmp/a1" "$tmp/a16"; then echo "50 MB ${f##*.}: same at 1 and 16 threads"; else echo "50 MB ${f##*.}: DIFFERS"; status=1; fi
done
rm -rf "$tmp"
echo "tsan_carried: status $status (0: no ThreadSanitizer report, every output the same)"
exit $status
