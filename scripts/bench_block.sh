#!/usr/bin/env bash
# bench_block.sh — the FFN block benchmark in one command: `ffn bench block --json` (f32 and bf16,
# 1/16/256/4096 tokens, 1 and 2 threads, against the same GEMMs alone through oneDNN) and
# bench/torch_block.py (the same rows in PyTorch), merged by bench/block_compare.py into one
# table with the targets checked. Usage: scripts/bench_block.sh BUILD_DIR [ARGS...]; ARGS go to
# both tools (options both know: --threads --tokens --dtype --shape --quick --reps --pack).
# Rows: bench/results/{ffn,torch}-block.jsonl; table: bench/results/bench-block.md.
set -euo pipefail

BUILD=${1:-build}
[ $# -gt 0 ] && shift
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
cd "$(dirname "$0")/.."
FFN="$BUILD/ffn"
RES=bench/results
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
scripts/deps.sh bench
if [ ! -x "$FFN" ]; then
  echo "bench_block.sh: $FFN not found: build first (make build)" >&2
  exit 2
fi
mkdir -p "$RES"
echo "bench_block.sh: ffn bench block --json $* (rows -> $RES/ffn-block.jsonl)"
"$FFN" bench block --json "$@" | tee "$RES/ffn-block.jsonl"
: > "$RES/torch-block.jsonl"
if "$PY" -c 'import torch' 2>/dev/null; then
  echo "bench_block.sh: bench/torch_block.py $* (rows -> $RES/torch-block.jsonl)"
  "$PY" bench/torch_block.py "$@" | tee "$RES/torch-block.jsonl"
else
  echo "bench_block.sh: PyTorch is not importable by $PY: ffn rows only" >&2
fi
"$PY" bench/block_compare.py "$RES/ffn-block.jsonl" "$RES/torch-block.jsonl" --md "$RES/bench-block.md"
echo "bench_block.sh: table -> $RES/bench-block.md"
