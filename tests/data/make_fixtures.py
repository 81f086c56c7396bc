"""make_fixtures.py — generates the Hugging Face reference fixtures in tests/data (see README.md).

For each architecture of a set: build a tiny randomly initialised model from a config, save it
with save_pretrained (the architecture's real tensor names, layouts and config keys), and record
what transformers computes for the MLP (FFN) sub-module of layer 1: the input x, the output y,
an upstream gradient dy and the gradients dx and grad.<param> (float64 autograd on the model's
weights), stored as float32 in io.safetensors next to the model.

    python3 tests/data/make_fixtures.py hf         # -> tests/data/hf       (seed 1234)
    python3 tests/data/make_fixtures.py hf_more    # -> tests/data/hf_more  (seed 4321)
    python3 tests/data/make_fixtures.py SET OUTDIR # somewhere else

Needs torch, transformers and safetensors (the committed fixtures were made with transformers
5.17.0 and torch 2.11). Each set draws from one torch generator seeded once, in the order of its
spec lines, so a set regenerates bit for bit only with the same versions and the same order:
add a new architecture at the end of a set, or as a new set. REPORT.json in the output folder
records what was written (parameter shapes, the layer-1 tensor names of model.safetensors) or
the error of an architecture that failed.
"""
import json
import os
import sys
import traceback

import torch
import transformers as T
from safetensors import safe_open
from safetensors.torch import save_file

D, M = 64, 172  # d_model and d_ff of every tiny model (GPT-2 and GPT-J: m = 4d = 256)
LAYER = 1       # the layer whose MLP is recorded
COMMON = dict(num_hidden_layers=2, num_attention_heads=4, vocab_size=96)
LLAMA_LIKE = dict(hidden_size=D, intermediate_size=M, num_key_value_heads=4)


def mlp_layers(m, l):
    return m.model.layers[l].mlp


def moe_expert(m, l):
    """Expert 1 of layer l's mixture of experts, or None where the experts are one fused
    module (then only the checkpoint is written, no io.safetensors)."""
    moe = m.model.layers[l]
    for attr in ("block_sparse_moe", "mlp"):
        if hasattr(moe, attr):
            moe = getattr(moe, attr)
            break
    ex = moe.experts
    try:
        return ex[1]
    except Exception:
        return None


# set -> (seed, {folder: (config class, model class, config arguments, layer -> MLP module)})
SETS = {
    # tests/data/hf: the block tests (tests/block/test_block_hf.c) and the io tests.
    "hf": (1234, {
        # SwiGLU; gate_proj / up_proj / down_proj stored [out, in]; no bias
        "llama": (T.LlamaConfig, T.LlamaForCausalLM, dict(hidden_size=D, intermediate_size=M, num_key_value_heads=4, hidden_act="silu"), mlp_layers),
        # GeGLU with the tanh GeLU
        "gemma": (T.GemmaConfig, T.GemmaForCausalLM, dict(hidden_size=D, intermediate_size=M, num_key_value_heads=4, head_dim=16, hidden_activation="gelu_pytorch_tanh"), mlp_layers),
        # fused gate_up_proj [2m, d]: the first m rows are the gate
        "phi3": (T.Phi3Config, T.Phi3ForCausalLM, dict(hidden_size=D, intermediate_size=M, num_key_value_heads=4, hidden_act="silu", pad_token_id=0), mlp_layers),
        # plain GeLU-tanh FFN; Conv1D weights stored [in, out]; biases
        "gpt2": (T.GPT2Config, T.GPT2LMHeadModel, dict(n_embd=D, n_inner=4 * D, n_layer=2, n_head=4, n_positions=32, activation_function="gelu_new"), lambda m, l: m.transformer.h[l].mlp),
        # wi_0 is the gate, wi_1 the up, wo the down; gated-gelu is the tanh GeLU
        "t5gated": (T.T5Config, T.T5ForConditionalGeneration, dict(d_model=D, d_ff=M, d_kv=16, num_layers=2, num_heads=4, feed_forward_proj="gated-gelu"), lambda m, l: m.encoder.block[l].layer[-1].DenseReluDense),
    }),
    # tests/data/hf_more: the io layer's architecture maps (tests/io: info, verify, convert).
    "hf_more": (4321, {
        "mistral": (T.MistralConfig, T.MistralForCausalLM, dict(LLAMA_LIKE, hidden_act="silu", head_dim=16), mlp_layers),
        "mixtral": (T.MixtralConfig, T.MixtralForCausalLM, dict(LLAMA_LIKE, hidden_act="silu", num_local_experts=4, num_experts_per_tok=2, head_dim=16), moe_expert),
        "qwen2": (T.Qwen2Config, T.Qwen2ForCausalLM, dict(LLAMA_LIKE, hidden_act="silu"), mlp_layers),
        "qwen3": (T.Qwen3Config, T.Qwen3ForCausalLM, dict(LLAMA_LIKE, hidden_act="silu", head_dim=16), mlp_layers),
        "gemma2": (T.Gemma2Config, T.Gemma2ForCausalLM, dict(LLAMA_LIKE, head_dim=16, hidden_activation="gelu_pytorch_tanh"), mlp_layers),
        "gemma3": (T.Gemma3TextConfig, T.Gemma3ForCausalLM, dict(LLAMA_LIKE, head_dim=16, hidden_activation="gelu_pytorch_tanh"), mlp_layers),
        "gptj": (T.GPTJConfig, T.GPTJForCausalLM, dict(n_embd=D, n_layer=2, n_head=4, n_positions=32, rotary_dim=8, activation_function="gelu_new"), lambda m, l: m.transformer.h[l].mlp),
        "gpt_neox": (T.GPTNeoXConfig, T.GPTNeoXForCausalLM, dict(hidden_size=D, intermediate_size=M, hidden_act="gelu"), lambda m, l: m.gpt_neox.layers[l].mlp),
        "falcon": (T.FalconConfig, T.FalconForCausalLM, dict(hidden_size=D, ffn_hidden_size=M, activation="gelu"), lambda m, l: m.transformer.h[l].mlp),
        "starcoder2": (T.Starcoder2Config, T.Starcoder2ForCausalLM, dict(LLAMA_LIKE, hidden_act="gelu_pytorch_tanh", use_bias=True), mlp_layers),
        "olmo": (T.OlmoConfig, T.OlmoForCausalLM, dict(LLAMA_LIKE, hidden_act="silu"), mlp_layers),
        "olmo2": (T.Olmo2Config, T.Olmo2ForCausalLM, dict(LLAMA_LIKE, hidden_act="silu"), mlp_layers),
        "stablelm": (T.StableLmConfig, T.StableLmForCausalLM, dict(LLAMA_LIKE, hidden_act="silu"), mlp_layers),
        "granite": (T.GraniteConfig, T.GraniteForCausalLM, dict(LLAMA_LIKE, hidden_act="silu"), mlp_layers),
        "t5relu": (T.T5Config, T.T5ForConditionalGeneration, dict(d_model=D, d_ff=M, d_kv=16, num_layers=2, num_heads=4, feed_forward_proj="relu"), lambda m, l: m.encoder.block[l].layer[-1].DenseReluDense),
        "llama_bias": (T.LlamaConfig, T.LlamaForCausalLM, dict(LLAMA_LIKE, hidden_act="gelu", mlp_bias=True), mlp_layers),
    }),
}


def make_one(out_root, name, C, Mcls, kw, get_mlp):
    kws = dict(COMMON)
    kws.update(kw)
    if C in (T.GPT2Config, T.GPTJConfig, T.T5Config):  # these name the layer/head counts otherwise
        for k in ("num_hidden_layers", "num_attention_heads"):
            kws.pop(k, None)
    conf = C(**kws)
    model = Mcls(conf).float().eval()
    with torch.no_grad():  # non-trivial but well-scaled weights
        for p in model.parameters():
            p.normal_(0.0, 0.08)
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    model.save_pretrained(d, safe_serialization=True)
    gen = os.path.join(d, "generation_config.json")  # not a checkpoint file ffn reads
    if os.path.exists(gen):
        os.remove(gen)
    mlp = get_mlp(model, LAYER)
    entry = {"ok": True, "files": sorted(os.listdir(d))}
    if mlp is not None:
        mlp = mlp.double()
        hid = conf.hidden_size if hasattr(conf, "hidden_size") else conf.d_model
        x = (torch.randn(7, hid, dtype=torch.float64) * 1.5).requires_grad_(True)
        y = mlp(x)
        dy = torch.randn_like(y)
        y.backward(dy)
        io = {"x": x.detach().float().contiguous(), "y": y.detach().float().contiguous(),
              "dy": dy.float().contiguous(), "dx": x.grad.float().contiguous()}
        for pn, p in mlp.named_parameters():
            io["grad." + pn] = p.grad.float().contiguous()
        meta = {"layer": str(LAYER), "module": type(mlp).__name__,
                "transformers": T.__version__, "torch": torch.__version__}
        if name == "mixtral":
            meta["expert"] = "1"
        save_file(io, os.path.join(d, "io.safetensors"), metadata=meta)
        entry["module"] = type(mlp).__name__
        entry["params"] = [(pn, list(p.shape)) for pn, p in mlp.named_parameters()]
    with safe_open(os.path.join(d, "model.safetensors"), "pt") as f:
        entry["keys"] = [k for k in f.keys() if ".1." in k or "layers.1" in k]
    return entry


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in SETS:
        sys.stderr.write("usage: make_fixtures.py %s [OUTDIR]\n" % "|".join(SETS))
        return 2
    which = argv[1]
    out_root = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), which)
    seed, specs = SETS[which]
    print("make_fixtures: %s -> %s (seed %d; transformers %s, torch %s)"
          % (which, out_root, seed, T.__version__, torch.__version__), file=sys.stderr)
    torch.manual_seed(seed)
    report = {}
    for name, (C, Mcls, kw, get_mlp) in specs.items():
        try:
            report[name] = make_one(out_root, name, C, Mcls, kw, get_mlp)
        except Exception:
            report[name] = {"ok": False, "error": traceback.format_exc()[-2500:]}
    os.makedirs(out_root, exist_ok=True)
    with open(os.path.join(out_root, "REPORT.json"), "w") as f:
        json.dump(report, f, indent=1)
    failed = [n for n, e in report.items() if not e["ok"]]
    print(json.dumps(report, indent=1)[:11000])
    if failed:
        print("make_fixtures: failed: %s (see REPORT.json)" % ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
