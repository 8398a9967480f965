#!/usr/bin/env bash
# Fails (exit 1) and lists the files when any C++/CUDA source does not follow .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.cc' '*.h' '*.cu' | while read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -n "$bad" ]; then
  echo "not formatted per .clang-format (run: clang-format -i FILE):"; echo "$bad"; exit 1
fi
echo "format: all $(git ls-files '*.cc' '*.h' '*.cu' | wc -l) C++/CUDA files follow .clang-format"
