#!/usr/bin/env bash
# `make demo`: the main job on what ships with the repo — a self-check of the activation
# kernels (special values, a quick accuracy sweep against MPFR), a short benchmark table, and
# (when those layers are built) the FFN block and checkpoint checks on the llama fixture.
set -uo pipefail
B=${1:-build}
FFN="$B/ffn"
cd "$(dirname "$0")/.."
status=0
step() { printf '\n== %s\n' "$*"; }

step "ffn check: special values and the two classic WGSL bugs"
"$FFN" check || status=1

step "ffn ulp: accuracy against MPFR (bf16/f16 exhaustive, f32 strided sweep)"
"$FFN" ulp --dtype f32 --op gelu_tanh --op silu --op swiglu 2>/dev/null || "$FFN" ulp || status=1

step "ffn bench act --quick: kernels vs same-run STREAM triad"
"$FFN" bench act --quick || status=1

if "$FFN" info --help >/dev/null 2>&1; then
  step "ffn info tests/data/hf/llama"
  "$FFN" info tests/data/hf/llama || status=1
  step "ffn verify tests/data/hf/llama (forward + backward vs transformers)"
  "$FFN" verify tests/data/hf/llama tests/data/hf/llama/io.safetensors || status=1
fi
exit $status
