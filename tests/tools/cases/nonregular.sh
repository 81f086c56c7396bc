# Class 1 — inputs that are not regular files. A FIFO, a device or a directory given (or found)
# where a file is read is refused by stat() before anything opens it: nothing blocks, no device
# sees an open(). Each case would hang until the time limit if a FIFO were opened.
L=$DATA/hf/llama
mkfifo "$W/fifo.gguf" "$W/fifo.safetensors" "$W/fifo.json"
ln -s fifo.gguf "$W/link_to_fifo.gguf"
mkdir "$W/m_cfg" "$W/m_st" "$W/m_idx" "$W/m_shard" "$W/m_cfgdir"
mkfifo "$W/m_cfg/config.json"
cp "$L/model.safetensors" "$W/m_cfg/"
cp "$L/config.json" "$W/m_st/" && mkfifo "$W/m_st/model.safetensors"
cp "$L/config.json" "$W/m_idx/" && mkfifo "$W/m_idx/model.safetensors.index.json"
cp "$L/config.json" "$W/m_shard/" && mkfifo "$W/m_shard/shard-1.safetensors"
printf '{"weight_map": {"a": "shard-1.safetensors"}}' >"$W/m_shard/model.safetensors.index.json"
cp "$L/model.safetensors" "$W/m_cfgdir/" && mkdir "$W/m_cfgdir/config.json"

t 2 "config.json: is a FIFO (named pipe); a regular file is expected" oneline -- "$FFN" info "$W/m_cfg"
t 2 "model.safetensors: is a FIFO" oneline -- "$FFN" info "$W/m_st"
t 2 "model.safetensors.index.json: is a FIFO" oneline -- "$FFN" info "$W/m_idx"
t 2 "shard-1.safetensors: is a FIFO" oneline -- "$FFN" info "$W/m_shard"
t 2 "config.json: is a directory; a regular file is expected" -- "$FFN" info "$W/m_cfgdir"
t 2 "fifo.gguf: is a FIFO" oneline -- "$FFN" info "$W/fifo.gguf"
t 2 "link_to_fifo.gguf: is a FIFO" -- "$FFN" info "$W/link_to_fifo.gguf"
t 2 "fifo.json: is a FIFO" -- "$FFN" info "$W/fifo.json"
t 2 "/dev/null: is a character device" oneline -- "$FFN" info /dev/null
t 2 "/dev/zero: is a character device" -- "$FFN" info /dev/zero
t 2 "is a FIFO (named pipe); a regular file is expected" -- "$FFN" verify "$L" "$W/fifo.safetensors"
t 2 "/dev/zero is a character device" -- "$FFN" verify "$L" /dev/zero
t 2 "is a directory; a regular file is expected" -- "$FFN" verify "$L" "$L"
t 2 "is a FIFO" -- "$FFN" verify "$W/m_st" "$L/io.safetensors"
t 2 "is a FIFO" -- "$FFN" run "$L" --layer 1 --input "$W/fifo.safetensors" --output "$W/y.safetensors"
t 2 "is a character device" -- "$FFN" run "$L" --layer 1 --input /dev/zero --output "$W/y.safetensors"
p "no output was written" -- test ! -e "$W/y.safetensors"
t 2 "is a FIFO" -- "$FFN" run "$W/fifo.gguf" --layer 0 --input "$L/io.safetensors" --output "$W/y.safetensors"
t 2 "config.json: is a FIFO" -- "$FFN" convert "$W/m_cfg" --out "$W/never"
p "convert made no folder" -- test ! -e "$W/never"
t 2 "is a FIFO (named pipe); a directory is expected" -- "$FFN" bench block --fixture "$W/fifo.json"
