#!/bin/sh
# hf_bf16.sh FFN FIXTURE_DIR OUT_DIR [forward-only] — a Hugging Face fixture as a bf16 checkpoint:
# `ffn convert --dtype bf16` writes its FFN weights in bf16, then `ffn verify` runs that checkpoint
# in bf16 (the block multiplies the bf16 weights as they lie, x rounded to bf16, f32
# accumulation) against the fixture's float64 reference, with verify's bf16 tolerance (3e-2 of
# the tensor's largest value). forward-only: y alone must pass — for a ReLU FFN, whose gradient
# jumps at 0, rounding x and W to bf16 flips the sign of the pre-activations within ~2^-8 of 0,
# and with a handful of tokens those flips move dx and dW by ~0.1 in exact arithmetic too
# (docs/blocks.md): a property of bf16, not of the block.
set -e
ffn=$1
fx=$2
out=$3
mode=${4:-full}
rm -rf "$out"
mkdir -p "$(dirname "$out")"
"$ffn" convert "$fx" --out "$out" --dtype bf16 > /dev/null
set +e
report=$("$ffn" verify "$out" "$fx/io.safetensors")
rc=$?
set -e
echo "$report"
if [ "$mode" = forward-only ]; then
    echo "$report" | grep -Eq '^  y .* ok$' || { echo "FAIL: y is not within tolerance"; exit 1; }
    echo "bf16 forward: PASS"
    exit 0
fi
[ $rc -eq 0 ] || { echo "FAIL: verify exited $rc"; exit 1; }
