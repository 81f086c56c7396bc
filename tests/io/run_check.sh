#!/bin/sh
# run_check.sh FFN IO_TESTGEN MODEL_DIR OUT — `ffn run` on the fixture's layer-1 input must write
# a y equal to the reference y within f32 rounding (rel 1e-5 of max|y|).
ffn=$1
gen=$2
model=$3
out=$4
rm -f "$out"
"$ffn" run "$model" --layer 1 --input "$model/io.safetensors" --output "$out" || exit 1
"$gen" cmp "$out" y "$model/io.safetensors" y 1e-5
