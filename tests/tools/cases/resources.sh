# Class 2 — counts that size allocations are bounded and checked before anything is allocated:
# ulp's threads (each holds contexts, buffers and MPFR state), and the layer x expert counts a
# config or GGUF file gives, checked against the tensors the file holds.
# The processors this process may use, as OpenMP counts them (nproc without the OMP_* limits).
NP=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
T=$((NP < 4 ? NP : 4))
t 2 "ffn ulp: --threads 100000 is out of range [1, $NP]" oneline -- "$FFN" ulp --threads 100000
t 2 "--threads $((NP + 1)) is out of range" -- "$FFN" ulp --threads $((NP + 1))
t 2 "--threads 0 is out of range" -- "$FFN" ulp --threads 0
t 0 "every kernel within its bound" -- "$FFN" ulp --op relu --dir fwd --dtype bf16 --isa scalar --threads "$T"
if [ "$ASAN" = 0 ]; then
    # Under a 2 GB address-space limit (the sweep needs well under 1 GB).
    t 0 "every kernel within its bound" -- bash -c "ulimit -v 2000000 && exec \"\$0\" ulp --op relu --dir fwd --dtype bf16 --isa scalar --threads $T" "$FFN"
else
    skip "ulp under an address-space limit (AddressSanitizer needs terabytes of it)"
fi
t 2 "llama.expert_count is 16384, but blk.0.ffn_down_exps.weight is [4, 8, 16], not [16384 experts, rows, cols]" oneline -- "$FFN" info "$G/moe_forged.gguf"
t 2 "65536 layers of experts need at least 131072 FFN tensors, but the checkpoint holds 3 tensors in all" oneline -- "$FFN" info "$G/layers_forged.gguf"
t 2 "65536 layers need at least 131072 FFN tensors, but the checkpoint holds 3 tensors in all" oneline -- "$FFN" info "$G/cfg_layers"
t 2 "65536 layers of experts (each expert its own) need at least 2147483648 FFN tensors" oneline -- "$FFN" info "$G/cfg_experts"
t 2 "--threads wants 'all' or integers in [1, 1024]" -- "$FFN" bench act --threads 5000
t 2 "--n wants 'all' or integers in [1, 1073741824]" -- "$FFN" bench act --n 2000000000
t 2 "--threads 5000 is out of range [1, 1024]" -- "$FFN" bench block --threads 5000
