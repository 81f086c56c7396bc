#!/usr/bin/env bash
# Formats the C, C++ and CUDA sources in place with clang-format (.clang-format at the root):
# every file of scripts/format-files.sh, or only the files given as arguments.
#   scripts/format.sh                 # the whole tree
#   scripts/format.sh src/io/gguf.c   # one file
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "format.sh: $CLANG_FORMAT not found (scripts/deps.sh installs it)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(scripts/format-files.sh)
fi
"$CLANG_FORMAT" -i --style=file "${files[@]}"
echo "format.sh: formatted ${#files[@]} files"
