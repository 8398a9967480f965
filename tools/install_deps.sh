#!/usr/bin/env bash
# Installs the Debian packages overlapscope needs, only those that are missing.
# CUDA (nvcc, CUPTI, NCCL, cuBLAS) is optional and expected under /usr/local/cuda; without it
# the CUDA parts (capture, workloads, GPU tests) are skipped by CMake.
set -euo pipefail
# libisal-dev: ISA-L igzip, the .json.gz inflater (optional: zlib where absent).
# clang, libclang-rt-14-dev (libFuzzer, sanitizer runtimes) and clang-format: tools/sanitize.sh,
# tools/fuzz.sh and tools/check_format.sh.
pkgs=(cmake ninja-build g++ libabsl-dev nlohmann-json3-dev zlib1g-dev libgtest-dev libgmock-dev
      libbenchmark-dev python3 python3-pytest python3-pandas libopenmpi-dev libre2-dev libdeflate-dev libisal-dev clang
      libclang-rt-14-dev clang-format)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
