#!/usr/bin/env bash
# Lists the C, C++ and CUDA sources that clang-format owns: the tracked *.c *.h *.cu *.cuh *.inc
# files, less those listed in FORMAT_EXCLUDE below. Paths are relative to the repository root,
# one per line. Used by scripts/format.sh and scripts/format-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Not formatted: data fragments included inside an initializer (not code clang-format can parse
# on its own).
FORMAT_EXCLUDE=(
  src/cpu/gelu_erf_fast_tab.inc
)

git ls-files -- '*.c' '*.h' '*.cu' '*.cuh' '*.inc' | grep -v -x -F -f <(printf '%s\n' "${FORMAT_EXCLUDE[@]}")
