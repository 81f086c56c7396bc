#!/usr/bin/env bash
# bench.sh — `make bench`: the activation benchmark of ffn and of PyTorch on the same sizes,
# threads, dtypes and inputs, merged into one table and docs/bench-act.png, then `ffn bench block`
# when that subcommand exists. Usage: scripts/bench.sh BUILD_DIR [ARGS...]; ARGS go to both
# `ffn bench act` and bench/torch_act.py (options both know: --quick --op --dir --glu --unary
# --both --dtype --n --threads --dist --reps); $FFN_BENCH_ACT_ARGS adds ffn-only ones
# (--isa, --accurate). Rows: bench/results/*.jsonl and docs/bench-act.jsonl. Buffers are on
# transparent huge pages (--pages huge, both tools); a full run then repeats the target rows on
# 4 KiB pages (docs/bench-act-4k.jsonl).
set -euo pipefail

BUILD=${1:-build}
[ $# -gt 0 ] && shift
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)  # absolute: we cd to the repository root next
cd "$(dirname "$0")/.."
FFN="$BUILD/ffn"
RES=bench/results
# Debian's python3-torch lives under /usr/bin/python3; a python3 earlier on PATH (pyenv, venv)
# would not see it.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

scripts/deps.sh bench
if [ ! -x "$FFN" ]; then
  echo "bench.sh: $FFN not found: build first (make build)" >&2
  exit 2
fi
mkdir -p "$RES" docs

echo "bench.sh: ffn bench act $* ${FFN_BENCH_ACT_ARGS:-} (a few minutes)"
# shellcheck disable=SC2086  # FFN_BENCH_ACT_ARGS is a list of words
"$FFN" bench act --json "$@" ${FFN_BENCH_ACT_ARGS:-} > "$RES/ffn-act.jsonl"

: > "$RES/torch-act.jsonl"
if "$PY" -c 'import torch' 2>/dev/null; then
  echo "bench.sh: bench/torch_act.py $* (rows -> $RES/torch-act.jsonl)"
  "$PY" bench/torch_act.py "$@" > "$RES/torch-act.jsonl"
else
  echo "bench.sh: PyTorch is not importable by $PY: ffn rows only" >&2
fi

cat "$RES/ffn-act.jsonl" "$RES/torch-act.jsonl" > docs/bench-act.jsonl
"$PY" bench/compare.py docs/bench-act.jsonl --png docs/bench-act.png --plot-dir "$RES" \
  | tee "$RES/bench-act.txt"
echo "bench.sh: table -> $RES/bench-act.txt, plot -> docs/bench-act.png"

# The rows of the target again with every buffer on 4 KiB pages (the main run advises them onto
# transparent huge pages): a compute-heavy kernel loses more there than the triad does. Only on
# a full run (no ARGS), or when FFN_BENCH_4K=1.
if [ $# -eq 0 ] || [ "${FFN_BENCH_4K:-0}" = 1 ]; then
  four=(--pages 4k --dtype f32 --n 33554432 --dist normal)
  echo "bench.sh: the target rows on 4 KiB pages: ffn bench act ${four[*]}"
  # shellcheck disable=SC2086
  "$FFN" bench act --json "${four[@]}" ${FFN_BENCH_ACT_ARGS:-} > "$RES/ffn-act-4k.jsonl"
  : > "$RES/torch-act-4k.jsonl"
  if "$PY" -c 'import torch' 2>/dev/null; then
    "$PY" bench/torch_act.py "${four[@]}" > "$RES/torch-act-4k.jsonl"
  fi
  cat "$RES/ffn-act-4k.jsonl" "$RES/torch-act-4k.jsonl" > docs/bench-act-4k.jsonl
  "$PY" bench/compare.py docs/bench-act-4k.jsonl | tee "$RES/bench-act-4k.txt"
  echo "bench.sh: 4 KiB pages table -> $RES/bench-act-4k.txt"
fi

# The block benchmark: ffn and PyTorch, f32 and bf16, 1 to 4096 tokens (scripts/bench_block.sh).
echo "bench.sh: scripts/bench_block.sh (ffn bench block + bench/torch_block.py)"
scripts/bench_block.sh "$BUILD"
