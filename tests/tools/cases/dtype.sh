# Class 6 — weights whose dtype cannot be an FFN weight (integers, bools, the int8 or fp8 half of
# a quantised safetensors checkpoint) are refused naming the tensor and the dtype; F64 is a float
# and is read; GGUF Q8_0 / Q4_0 stay dequantised (tests/io: io_gguf_verify_llama_q8_0, _q4_0).
L=$DATA/hf/llama
t 2 "model.layers.0.mlp.up_proj.weight has dtype I32, which is not an FFN weight ffn can use" oneline -- "$FFN" info "$G/i32"
t 2 "up_proj.weight has dtype BOOL" -- "$FFN" info "$G/bool"
t 2 "has dtype I8, which is not an FFN weight ffn can use (F32, BF16, F16, F64; GGUF Q8_0 and Q4_0 are dequantised); the tensor model.layers.0.mlp.up_proj.weight_scale beside it makes this a quantised checkpoint" -- "$FFN" info "$G/i8_scale"
t 2 "has dtype F8_E4M3, which is not an FFN weight ffn can use (F32, BF16, F16, F64; GGUF Q8_0 and Q4_0 are dequantised); a quantised checkpoint" -- "$FFN" info "$G/fp8"
t 2 "has dtype I32" -- "$FFN" run "$G/i32" --layer 0 --input "$L/io.safetensors" --output "$W/y.safetensors"
t 2 "has dtype I32" -- "$FFN" verify "$G/i32" "$L/io.safetensors"
t 2 "has dtype I32" -- "$FFN" convert "$G/i32" --out "$W/c"
t 0 "F64" -- "$FFN" info "$G/f64"
t 0 "SwiGLU" -- "$FFN" info "$G/ok"
t 2 "tensor 'x' has dtype I32; values are read from F32, BF16, F16 or F64 tensors" oneline -- "$FFN" verify "$L" "$G/io_x_i32.safetensors"
t 2 "tensor 'x' has dtype I32" -- "$FFN" run "$L" --layer 1 --input "$G/io_x_i32.safetensors" --output "$W/y.safetensors"
