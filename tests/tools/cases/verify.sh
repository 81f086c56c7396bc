# Class 5 — verify compares what it says it compares: zero tokens is a usage error, shapes are
# checked (not element counts), tolerances are finite and positive, the count of values compared
# is printed, and __metadata__.layer that is not a number is reported as such.
L=$DATA/hf/llama
t 0 "result: PASS (5 tensors, 33,920 values compared" -- "$FFN" verify "$L" "$L/io.safetensors"
t 2 "x has 0 tokens: there is nothing to compare" oneline -- "$FFN" verify "$L" "$G/io_zero.safetensors"
t 2 "dy is [64, 3]; it must be [3, 64] = [tokens, d], as x (stored transposed?)" oneline -- "$FFN" verify "$L" "$G/io_dy_t.safetensors"
t 2 "grad.up_proj.weight is [5, 5]; with d = 64, m = 172 it must be [172, 64] ([out, in]) or [64, 172] ([in, out])" oneline -- "$FFN" verify "$L" "$G/io_grad.safetensors"
t 2 "x is [192]; it must be [tokens, 64]" -- "$FFN" verify "$L" "$G/io_x_1d.safetensors"
t 2 "__metadata__.layer = \"abc\" is not a layer number" oneline -- "$FFN" verify "$L" "$G/io_layer_abc.safetensors"
t 2 "__metadata__.layer = \"99999999999999999999\" is not a layer number" -- "$FFN" verify "$L" "$G/io_layer_big.safetensors"
t 2 "--tol 'inf' is not a number" -- "$FFN" verify "$L" "$L/io.safetensors" --tol inf
t 2 "--tol 'nan' is not a number" -- "$FFN" verify "$L" "$L/io.safetensors" --tol nan
t 2 "--tol 0 is out of range (0, 1]" -- "$FFN" verify "$L" "$L/io.safetensors" --tol 0
t 2 "--tol -1 is out of range" -- "$FFN" verify "$L" "$L/io.safetensors" --tol -1
t 2 "--tol 1e-400 is out of range" -- "$FFN" verify "$L" "$L/io.safetensors" --tol 1e-400
t 2 "--tol 5 is out of range" -- "$FFN" verify "$L" "$L/io.safetensors" --tol 5
t 0 "tolerance 0.001 on max rel error" -- "$FFN" verify "$L" "$L/io.safetensors" --tol 1e-3
t 2 "--expert 0: $L has no experts (a dense model)" -- "$FFN" verify "$L" "$L/io.safetensors" --expert 0
t 2 "--expert 3: $L has no experts (a dense model)" -- "$FFN" run "$L" --layer 1 --expert 3 --input "$L/io.safetensors" --output "$W/y.safetensors"
