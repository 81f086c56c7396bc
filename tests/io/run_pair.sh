#!/bin/sh
# run_pair.sh FFN IO_TESTGEN MODEL_A MODEL_B INPUT OUTDIR — runs layer 1, expert 1 of two copies of
# a mixture-of-experts model (e.g. safetensors and its GGUF with [E, m, d] *_exps tensors) on the
# same x and checks that the outputs agree within f32 rounding.
ffn=$1
gen=$2
a=$3
b=$4
x=$5
out=$6
mkdir -p "$out"
"$ffn" run "$a" --layer 1 --expert 1 --input "$x" --output "$out/ya.safetensors" || exit 1
"$ffn" run "$b" --layer 1 --expert 1 --input "$x" --output "$out/yb.safetensors" || exit 1
"$gen" cmp "$out/yb.safetensors" y "$out/ya.safetensors" y 1e-6
