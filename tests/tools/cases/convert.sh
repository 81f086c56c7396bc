# Class 4 — convert never leaves a folder whose files disagree (new or empty --out only, never
# the input; the checkpoint is written into a temporary folder and renamed into place), refuses
# a narrowing that turns finite weights into inf, and a fuse / split with nothing to do.
L=$DATA/hf/llama
mkdir "$W/old"
cp "$DATA/hf/gemma/config.json" "$DATA/hf/gemma/model.safetensors" "$W/old/"
printf '{"weight_map": {}}' >"$W/old/model.safetensors.index.json"
t 2 "--out $W/old is not empty (3 entries)" oneline -- "$FFN" convert "$L" --out "$W/old" --fuse-gate-up
p "the old checkpoint is unchanged" -- cmp "$W/old/model.safetensors" "$DATA/hf/gemma/model.safetensors"
p "its index is still there, untouched" -- test -f "$W/old/model.safetensors.index.json"
# Onto itself: a copy, so that a regression cannot overwrite the repository's fixture.
mkdir "$W/self"
cp "$L/config.json" "$L/model.safetensors" "$W/self/"
t 2 "is the checkpoint being converted" -- "$FFN" convert "$W/self" --out "$W/self"
t 2 "is the checkpoint being converted" -- "$FFN" convert "$W/self/model.safetensors" --out "$W/self/"
p "the copy is unchanged" -- cmp "$W/self/model.safetensors" "$L/model.safetensors"
t 2 "exists and is not a directory" -- "$FFN" convert "$L" --out "$W/self/config.json"
p "the copy's config is unchanged" -- cmp "$W/self/config.json" "$L/config.json"
ln -s nowhere "$W/dangling"
t 2 "is a dangling symbolic link" -- "$FFN" convert "$L" --out "$W/dangling"
t 2 "its parent directory does not exist" -- "$FFN" convert "$L" --out "$W/no/such/dir"
t 2 "nothing to fuse: its FFN is not gated" oneline -- "$FFN" convert "$DATA/hf/gpt2" --out "$W/n1" --fuse-gate-up
p "no folder was made" -- test ! -e "$W/n1"
t 2 "nothing to split: gate and up are already two tensors" -- "$FFN" convert "$L" --out "$W/n2" --split-gate-up
t 2 "nothing to fuse: gate and up are already one tensor" -- "$FFN" convert "$DATA/hf/phi3" --out "$W/n3" --fuse-gate-up
t 2 "--fuse-gate-up and --split-gate-up exclude each other" -- "$FFN" convert "$L" --out "$W/n4" --fuse-gate-up --split-gate-up
t 2 "model.layers.0.mlp.up_proj.weight[0, 3] = 1000000 is finite, but f16 cannot hold it" oneline -- "$FFN" convert "$G/big" --out "$W/n5" --dtype f16
p "nothing was written" -- test ! -e "$W/n5"
t 0 "--allow-overflow: 1 finite weights became inf" -- "$FFN" convert "$G/big" --out "$W/n6" --dtype f16 --allow-overflow
t 0 "dtype bf16" -- "$FFN" convert "$G/big" --out "$W/n7" --dtype bf16
t 0 "gate and up fused into gate_up_proj" -- "$FFN" convert "$L" --out "$W/fused" --fuse-gate-up
t 0 "result: PASS" -- "$FFN" verify "$W/fused" "$L/io.safetensors"
p "the new folder holds exactly config.json and model.safetensors" -- test "$(ls "$W/fused" | tr '\n' ' ')" = "config.json model.safetensors "
mkdir "$W/empty"
ln -s empty "$W/link"
t 0 "dtype bf16" -- "$FFN" convert "$L" --out "$W/link/" --dtype bf16
p "the link is kept" -- test -L "$W/link"
p "the folder it points to holds the checkpoint" -- test -f "$W/empty/model.safetensors"
t 0 "result: PASS" -- "$FFN" verify "$W/link" "$L/io.safetensors"
p "no temporary folder is left" -- bash -c '! ls -a "$1" | grep -q ffn-tmp' _ "$W"
