# Class 9 — messages say what is wrong: the kind of a file is recognised before it is parsed
# and named (a GGUF where safetensors is expected, a JSON that is not a shard index, a file that
# is neither), the Phi-3 GGUF whose fused ffn_up cannot be split says so, and no internal
# function name or made-up path reaches the user.
L=$DATA/hf/llama
t 2 "llama.gguf: is a GGUF file, not a safetensors file" noint oneline -- "$FFN" verify "$L" "$G/llama.gguf"
t 2 "is a GGUF file, not a safetensors file" noint -- "$FFN" run "$L" --layer 1 --input "$G/llama.gguf" --output "$W/y.safetensors"
t 2 "gguf_inside/model.safetensors: is a GGUF file, not a safetensors file" noint -- "$FFN" info "$G/gguf_inside"
t 2 "config.json: is a model config (model_type \"llama\"), not a shard index" noint oneline -- "$FFN" info "$L/config.json"
t 2 "not_index.json: a JSON file but not a shard index (no \"weight_map\" object)" noint -- "$FFN" info "$G/ok/not_index.json"
t 2 "not_index.json: a JSON file but not a shard index" noint -- "$FFN" verify "$L" "$G/ok/not_index.json"
t 2 "notes.txt: is neither a checkpoint directory, a safetensors file" noint oneline -- "$FFN" info "$G/notes.txt"
t 2 "layer 0: there is no ffn_gate, so blk.0.ffn_up.weight [33, 8] must hold gate and up fused: [2 x phi3.feed_forward_length = 32, d]; an odd row count cannot be split into gate and up halves" oneline no:missing -- "$FFN" info "$G/phi3_odd.gguf"
t 2 "--fixture $G/llama.gguf is a file; a directory is expected" noint no:model.safetensors -- "$FFN" bench block --fixture "$G/llama.gguf"
t 2 "ffn bench: unknown benchmark 'nope'" -- "$FFN" bench nope
t 2 "is a GGUF file; convert reads Hugging Face checkpoints" noint -- "$FFN" convert "$G/llama.gguf" --out "$W/c"
t 2 "no such file or directory" noint -- "$FFN" info "$W/missing"
