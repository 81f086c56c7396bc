# Class 8 — text from files (model_type, general.architecture, tensor names, JSON keys, metadata
# strings) reaches messages and output with its control characters escaped: no ESC sequence
# reaches the terminal, no newline splits a message (one line on stderr), C1 controls too.
L=$DATA/hf/llama
t 2 'unknown architecture model_type = "lla\e[31mma\nFAKE: all good"' clean oneline -- "$FFN" info "$G/ctl_model_type"
t 2 "duplicate key '\\e[2Jk\\r'" clean oneline -- "$FFN" info "$G/ctl_key"
t 2 'model.layers.0.mlp.\e[31mup\nproj.weight [16, 8]' clean oneline -- "$FFN" info "$G/ctl_tensor"
t 2 'unknown architecture general.architecture = "ll\e[1mama\nFAKE"' clean oneline -- "$FFN" info "$G/ctl_arch.gguf"
t 0 'grad.\e[2J\e]0;pwned\x07mlp\nnext.weight' clean -- "$FFN" verify "$L" "$G/io_ctl.safetensors"
t 0 '(Llama\e[31mMLP\r\e[K\u{9b})' clean -- "$FFN" verify "$L" "$G/io_ctl.safetensors"
t 2 "no tensor 'x\\e[2J'" clean oneline -- "$FFN" run "$L" --layer 1 --input "$L/io.safetensors" --output "$W/y.safetensors" --name "$(printf 'x\033[2J')"
t 2 "unknown option '--\\e[31mbad'" clean -- "$FFN" info "$(printf -- '--\033[31mbad')"
