#!/bin/sh
# gen.sh IO_TESTGEN SRC_DATA OUT — makes the io tests' generated data under OUT (a CTest fixture):
# hostile checkpoints, GGUF versions of fixtures, and copies with the usual converter mistakes.
set -e
gen=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
"$gen" hostile "$out/hostile"
"$gen" gguf "$src/hf/llama" "$out/llama_f32.gguf" f32
"$gen" gguf "$src/hf/llama" "$out/llama_q8_0.gguf" q8_0 64
"$gen" gguf "$src/hf/llama" "$out/llama_q4_0.gguf" q4_0
"$gen" gguf "$src/hf/llama" "$out/llama_bf16.gguf" bf16
"$gen" gguf "$src/hf/phi3" "$out/phi3_f32.gguf" f32
"$gen" gguf "$src/hf/phi3" "$out/phi3_q8_0.gguf" q8_0
"$gen" gguf "$src/hf_more/mixtral" "$out/mixtral_f32.gguf" f32
for fx in hf/llama hf/gemma hf/phi3 hf/t5gated hf_more/mistral hf_more/qwen2 hf_more/qwen3 \
          hf_more/gemma2 hf_more/gemma3 hf_more/olmo hf_more/olmo2 hf_more/stablelm \
          hf_more/granite hf_more/llama_bias; do
    "$gen" mutate "$src/$fx" "$out/swap_$(basename $fx)" swap
done
"$gen" mutate "$src/hf/llama" "$out/transpose_down_llama" transpose-down
"$gen" mutate "$src/hf/gpt2" "$out/transpose_all_gpt2" transpose-all
"$gen" mutate "$src/hf/gpt2" "$out/gelu_gpt2" gelu
"$gen" mutate "$src/hf_more/llama_bias" "$out/gelu_llama_bias" gelu
"$gen" mutate "$src/hf/llama" "$out/nan_llama" nan
# Gemma 1 as some checkpoints ship it: hidden_act "gelu" and no hidden_activation.
mkdir -p "$out/gemma_gelu"
cp "$src/hf/gemma/model.safetensors" "$out/gemma_gelu/"
sed -e 's/"hidden_act": "gelu_pytorch_tanh"/"hidden_act": "gelu"/' \
    -e '/"hidden_activation"/d' "$src/hf/gemma/config.json" > "$out/gemma_gelu/config.json"
echo "generated $(ls "$out" | wc -l) entries in $out"
