#!/bin/sh
# convert_verify.sh FFN IO_TESTGEN SRC_DIR OUT_DIR [convert options] — converts a fixture, checks
# that `ffn info` describes the result and that `ffn verify` passes on it against the original
# io.safetensors. A fixture without io.safetensors (Mixtral: its experts have no module of their
# own in transformers 5) is checked by running layer 1, expert 1 of both models on the x of the
# llama fixture (same d) and comparing the outputs (equal within f32 rounding).
ffn=$1
gen=$2
src=$3
out=$4
shift 4
rm -rf "$out"
"$ffn" convert "$src" --out "$out" "$@" || { echo "FAIL: ffn convert $src $*"; exit 1; }
"$ffn" info "$out" || { echo "FAIL: ffn info $out"; exit 1; }
if [ -f "$src/io.safetensors" ]; then
    "$ffn" verify "$out" "$src/io.safetensors" || { echo "FAIL: ffn verify $out"; exit 1; }
else
    x="$(dirname "$0")/../data/hf/llama/io.safetensors"
    "$ffn" run "$src" --layer 1 --expert 1 --input "$x" --output "$out/y_orig.safetensors" || exit 1
    "$ffn" run "$out" --layer 1 --expert 1 --input "$x" --output "$out/y_conv.safetensors" || exit 1
    "$gen" cmp "$out/y_conv.safetensors" y "$out/y_orig.safetensors" y 1e-6 || exit 1
fi
