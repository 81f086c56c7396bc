#!/usr/bin/env bash
# Checks that the C, C++ and CUDA sources are formatted as .clang-format says (clang-format
# --dry-run --Werror over scripts/format-files.sh, or over the files given as arguments). Exit
# 0 when all are, 1 naming the files that are not (and how to fix them), 2 without clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "format-check.sh: $CLANG_FORMAT not found (scripts/deps.sh installs it)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(scripts/format-files.sh)
fi
bad=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run --Werror --style=file "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -eq 0 ]; then
  echo "format-check.sh: all ${#files[@]} files formatted"
  exit 0
fi
echo "format-check.sh: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says:" >&2
printf '  %s\n' "${bad[@]}" >&2
echo "Fix: scripts/format.sh ${bad[*]}" >&2
echo "(to see the changes first: $CLANG_FORMAT --dry-run FILE)" >&2
exit 1
