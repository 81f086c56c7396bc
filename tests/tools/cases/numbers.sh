# Class 3 — every number a user types goes through one checked parser: the whole string, a
# decimal of the right kind, inside the option's range, overflow refused, the option named.
L=$DATA/hf/llama
t 2 "ffn size: --d '1e30' is not an integer" oneline -- "$FFN" size --d 1e30
t 2 "--d '64abc' is not an integer" -- "$FFN" size --d 64abc
t 2 "--d '4096.5' is not an integer" -- "$FFN" size --d 4096.5
t 2 "--d ' 5' is not an integer" -- "$FFN" size --d " 5"
t 2 "--d '0x10' is not an integer" -- "$FFN" size --d 0x10
t 2 "--d 1073741824 is out of range [1, 16777216]" -- "$FFN" size --d 1073741824
t 2 "--d 99999999999999999999 is out of range" -- "$FFN" size --d 99999999999999999999
t 2 "--d -1 is out of range" -- "$FFN" size --d -1
t 2 "--d needs a value" -- "$FFN" size --d ""
t 2 "--d needs a value" -- "$FFN" size --d
t 2 "--tokens '1e9' is not an integer" -- "$FFN" size --d 64 --tokens 1e9
t 2 "--m 0 is out of range" -- "$FFN" size --d 64 --m 0
t 2 "--multiplier 'nan' is not a number" -- "$FFN" size --d 64 --multiplier nan
t 2 "--multiplier 'inf' is not a number" -- "$FFN" size --d 64 --multiplier inf
t 2 "--multiplier 1e400 is out of range (0, 64]" -- "$FFN" size --d 64 --multiplier 1e400
t 2 "--multiplier 0 is out of range (0, 64]" -- "$FFN" size --d 64 --multiplier 0
t 2 "--multiplier '1.5.2' is not a number" -- "$FFN" size --d 64 --multiplier 1.5.2
t 0 "gated m = 11008 (LLaMA rule)" -- "$FFN" size --d 4096
t 0 "d = 64; plain m = 256" -- "$FFN" size --d +64 --multiplier 1.0e0
t 2 "ffn ulp: --stride -1 is out of range [1, 4294967295]" -- "$FFN" ulp --stride -1
t 2 "--stride 4294967296 is out of range" -- "$FFN" ulp --stride 4294967296
t 2 "--stride '0x10' is not an integer" -- "$FFN" ulp --stride 0x10
t 2 "--threads '2x' is not an integer" -- "$FFN" ulp --threads 2x
t 2 "ffn run: --layer '1e3' is not an integer" -- "$FFN" run "$L" --layer 1e3 --input "$L/io.safetensors" --output "$W/y.safetensors"
t 2 "--layer -1 is out of range" -- "$FFN" run "$L" --layer -1 --input "$L/io.safetensors" --output "$W/y.safetensors"
t 2 "--layer 18446744073709551617 is out of range" -- "$FFN" run "$L" --layer 18446744073709551617 --input "$L/io.safetensors" --output "$W/y.safetensors"
t 2 "ffn verify: --expert 'one' is not an integer" -- "$FFN" verify "$L" "$L/io.safetensors" --expert one
t 2 "--layer '1 ' is not an integer" -- "$FFN" verify "$L" "$L/io.safetensors" --layer "1 "
t 2 "--tol '1e-3x' is not a number" -- "$FFN" verify "$L" "$L/io.safetensors" --tol 1e-3x
t 2 "ffn bench block: --threads 'two' is not an integer" -- "$FFN" bench block --threads two
t 2 "--reps 0 is out of range [1, 1000]" -- "$FFN" bench block --reps 0
t 2 "ffn bench block: --pages must be 4k or huge (got '2m')" -- "$FFN" bench block --pages 2m
t 2 "ffn bench act: --reps '5x' is not an integer" -- "$FFN" bench act --reps 5x
t 2 "--n wants 'all' or integers" -- "$FFN" bench act --n 1e3
t 2 "--n wants 'all' or integers" -- "$FFN" bench act --n " 64"
t 2 "--n wants 'all' or integers" -- "$FFN" bench act --n 64,
# The CUDA benchmark's options are checked before it looks for a GPU (builds with the backend).
if "$FFN" bench act --backend cuda --help >/dev/null 2>&1; then
    t 2 "ffn bench act: --fused 0 is out of range" -- "$FFN" bench act --backend cuda --fused 0
    t 2 "--fused 1000: n = 1500 is not a whole number of its rows" -- "$FFN" bench act --backend cuda --fused 1000 --n 1500
    t 2 "ffn bench act: --reps '5x' is not an integer" -- "$FFN" bench act --backend cuda --reps 5x
fi
