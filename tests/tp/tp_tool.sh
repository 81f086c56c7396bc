#!/bin/sh
# tp_tool.sh "MPIRUN" FFN IO_TESTGEN DATA IO_GEN OUT — the tensor-parallel tool commands under
# mpirun: `ffn shard` sets read back by `ffn verify --shards` (each rank its own file), verify
# with in-memory shards for fused, [in, out], biased, GGUF-quantised checkpoints at P = 2, 3, 4,
# `ffn run --tp` against the single-process run, and the refusals (a mixed set, another
# checkpoint, a non-empty --out, --tp that is not the process count). Stops at the first failure.
mpirun=$1 ffn=$2 gen=$3 data=$4 iogen=$5 out=$6
rm -rf "$out" && mkdir -p "$out" || exit 1
n=0

# step NAME RC SUBSTRING CMD... : CMD's exit status must be RC and its output hold SUBSTRING.
step() {
    name=$1 want=$2 sub=$3
    shift 3
    n=$((n + 1))
    got=$("$@" 2>&1)
    rc=$?
    if [ "$rc" != "$want" ] || ! printf '%s' "$got" | grep -qF -- "$sub"; then
        echo "FAIL $name: exit status $rc (expected $want), output lacks '$sub'? command: $*"
        printf '%s\n' "$got" | head -40
        exit 1
    fi
    echo "ok $name"
    printf '%s\n' "$got" | grep -E "result:|max rel err|->|rank|per token" | head -8 |
        sed 's/^/    /'
}

hf=$data/hf
# shellcheck disable=SC2086
mp() { np=$1; shift; $mpirun -np "$np" "$@"; }
io() { echo "$hf/$1/io.safetensors"; }
pass="result: PASS"
# ffn run of layer 1 on llama's reference input: $ffn run MODEL $r1 --output Y.
r1="--layer 1 --input $hf/llama/io.safetensors"

step shard_llama 0 "rank-{0..1}-of-2.safetensors" \
    "$ffn" shard "$hf/llama" --tp 2 --out "$out/llama2"
step verify_llama_shards 0 "$pass" \
    mp 2 "$ffn" verify "$hf/llama" "$(io llama)" --tp 2 --shards "$out/llama2"
step verify_phi3_tp3 0 "$pass" mp 3 "$ffn" verify "$hf/phi3" "$(io phi3)" --tp 3
step shard_gpt2_after 0 "down_bias=after_reduce" \
    "$ffn" shard "$hf/gpt2" --tp 4 --down-bias after-reduce --out "$out/gpt2_4"
step verify_gpt2_shards_tp4 0 "$pass" \
    mp 4 "$ffn" verify "$hf/gpt2" "$(io gpt2)" --tp 4 --shards "$out/gpt2_4"
step verify_gpt2_tp3 0 "$pass" \
    mp 3 "$ffn" verify "$hf/gpt2" "$(io gpt2)" --tp 3 --orient out-in
step verify_t5_fused_tp2 0 "$pass" \
    mp 2 "$ffn" verify "$hf/t5gated" "$(io t5gated)" --tp 2 --layout fused --orient in-out
step shard_phi3_separate 0 "shard_layout=separate" \
    "$ffn" shard "$hf/phi3" --tp 2 --layout separate --align 8 --out "$out/phi3_2"
step verify_phi3_shards 0 "$pass" \
    mp 2 "$ffn" verify "$hf/phi3" "$(io phi3)" --tp 2 --shards "$out/phi3_2"
step verify_gguf_q8_tp2 0 "$pass" \
    mp 2 "$ffn" verify "$iogen/llama_q8_0.gguf" "$(io llama)" --tp 2

# A mixture of experts: every expert sharded; expert 3 of layer 1 run from the set.
moe=$data/hf_more/mixtral
step shard_mixtral 0 "experts 4" "$ffn" shard "$moe" --tp 2 --out "$out/moe2"
step run_moe_single 0 "y written" \
    "$ffn" run "$moe" $r1 --output "$out/ym1.safetensors" --expert 3
step run_moe_tp2 0 "weights from" \
    mp 2 "$ffn" run "$moe" $r1 --expert 3 --output "$out/ym2.safetensors" --tp 2 \
        --shards "$out/moe2"
step run_moe_equal 0 "" "$gen" cmp "$out/ym2.safetensors" y "$out/ym1.safetensors" y 1e-6

# run --tp 2 equals the single-process run (and the reference) within f32 rounding.
step run_single 0 "y written" "$ffn" run "$hf/llama" $r1 --output "$out/y1.safetensors"
step run_tp2 0 "tensor-parallel over 2 ranks" \
    mp 2 "$ffn" run "$hf/llama" $r1 --output "$out/y2.safetensors" --tp 2
step run_tp2_equal 0 "" "$gen" cmp "$out/y2.safetensors" y "$out/y1.safetensors" y 1e-6
step run_tp2_reference 0 "" "$gen" cmp "$out/y2.safetensors" y "$(io llama)" y 1e-5

# Refusals, each named.
step shard_nonempty 2 "is not empty" "$ffn" shard "$hf/llama" --tp 2 --out "$out/llama2"
"$ffn" shard "$hf/llama" --tp 2 --align 4 --out "$out/llama2a4" > /dev/null || exit 1
mkdir -p "$out/mixed" || exit 1
cp "$out/llama2/rank-0-of-2.safetensors" "$out/llama2a4/rank-1-of-2.safetensors" "$out/mixed/" ||
    exit 1
step mixed_set 2 "another shard set than rank 0's (another plan): layers.0: align: 4 vs 1" \
    mp 2 "$ffn" run "$hf/llama" $r1 --output "$out/never.safetensors" --tp 2 --shards "$out/mixed"
step other_checkpoint 2 "was not made from" \
    mp 2 "$ffn" run "$hf/gemma" $r1 --output "$out/never.safetensors" --tp 2 --shards "$out/llama2"
step other_world 2 "holds a set for 2 ranks, not 3" \
    mp 3 "$ffn" run "$hf/llama" $r1 --output "$out/never.safetensors" --tp 3 --shards "$out/llama2"
step tp_not_np 2 "--tp 3 but 2 processes" \
    mp 2 "$ffn" run "$hf/llama" $r1 --output "$out/never.safetensors" --tp 3
step shards_without_tp 2 "go with --tp P" \
    "$ffn" verify "$hf/llama" "$(io llama)" --shards "$out/llama2"
step size_tp4 0 "per token and all-reduce" "$ffn" size --d 4096 --m 11008 --tp 4 --align 128
[ -e "$out/never.safetensors" ] && { echo "FAIL: a refused run wrote its output"; exit 1; }
echo "PASS: $n steps"
