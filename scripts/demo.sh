#!/usr/bin/env bash
# `make demo`: the main job on what ships with the repo — a self-check of the activation kernels
# (special values, a quick accuracy sweep against MPFR), a short benchmark table, then the FFN
# block (forward + backward) and the checkpoint tools on the shipped llama fixture.
set -uo pipefail
B=${1:-build}
FFN="$B/ffn"
cd "$(dirname "$0")/.."
status=0
step() { printf '\n== %s\n' "$*"; }

step "ffn check: special values, and the two classic WGSL bugs (docs/numerics.md) tested absent"
"$FFN" check || status=1

step "ffn ulp: accuracy against MPFR (f32 strided sweep + hard regions; bf16 all 65,536 inputs)"
"$FFN" ulp --op gelu_tanh --op silu --op swiglu --dtype f32 --dtype bf16 --stride 40961 || status=1

step "ffn bench act --quick: kernels vs a same-run STREAM triad"
"$FFN" bench act --quick || status=1

step "ffn bench block --fixture tests/data/hf/llama: block forward + backward vs transformers"
"$FFN" bench block --fixture tests/data/hf/llama || status=1

step "ffn info tests/data/hf/llama"
"$FFN" info tests/data/hf/llama || status=1

step "ffn verify tests/data/hf/llama (forward + backward vs the transformers reference)"
"$FFN" verify tests/data/hf/llama tests/data/hf/llama/io.safetensors || status=1

# The CUDA backend: GPU rows where a GPU is, a plain word where none is.
step "CUDA backend: accuracy on the GPU (bf16 all inputs, f32 strided) and throughput vs a device copy"
if gpu_err=$("$FFN" ulp --backend cuda --op gelu_tanh --op silu --op swiglu --dtype f32 \
    --dtype bf16 --stride 40961 2>&1 >/tmp/ffn-demo-gpu.$$); then
    cat /tmp/ffn-demo-gpu.$$
    "$FFN" bench act --backend cuda --quick || status=1
else
    if grep -q "no usable CUDA device\|no CUDA device\|has no cuda backend" <<<"$gpu_err"; then
        echo "no GPU rows: ${gpu_err#*: }"
    else
        cat /tmp/ffn-demo-gpu.$$
        echo "$gpu_err"
        status=1
    fi
fi
rm -f /tmp/ffn-demo-gpu.$$

exit $status
