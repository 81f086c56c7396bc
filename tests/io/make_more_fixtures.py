"""More reference fixtures for the io layer's architecture maps (run on the GPU machine, where
transformers and torch are installed). Same method and file format as
/work/shared/tools/make_fixtures.py (see tests/data/hf/README or the fixtures README): a tiny
random model saved with save_pretrained, plus io.safetensors with x, y, dy, dx and grad.<param>
of layer 1's MLP, computed in float64 and stored as float32.
Usage: python3 make_more_fixtures.py OUTDIR
"""
import json, os, sys, traceback
import torch
import transformers as T
from safetensors.torch import save_file

out_root = sys.argv[1]
torch.manual_seed(4321)
D, M = 64, 172
common = dict(num_hidden_layers=2, num_attention_heads=4, vocab_size=96)
llama_like = dict(hidden_size=D, intermediate_size=M, num_key_value_heads=4)

def mlp_layers(m, l):
    return m.model.layers[l].mlp

def moe_expert(m, l):
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

specs = {
    "mistral": (T.MistralConfig, T.MistralForCausalLM, dict(llama_like, hidden_act="silu", head_dim=16), mlp_layers),
    "mixtral": (T.MixtralConfig, T.MixtralForCausalLM, dict(llama_like, hidden_act="silu", num_local_experts=4, num_experts_per_tok=2, head_dim=16), moe_expert),
    "qwen2": (T.Qwen2Config, T.Qwen2ForCausalLM, dict(llama_like, hidden_act="silu"), mlp_layers),
    "qwen3": (T.Qwen3Config, T.Qwen3ForCausalLM, dict(llama_like, hidden_act="silu", head_dim=16), mlp_layers),
    "gemma2": (T.Gemma2Config, T.Gemma2ForCausalLM, dict(llama_like, head_dim=16, hidden_activation="gelu_pytorch_tanh"), mlp_layers),
    "gemma3": (T.Gemma3TextConfig, T.Gemma3ForCausalLM, dict(llama_like, head_dim=16, hidden_activation="gelu_pytorch_tanh"), mlp_layers),
    "gptj": (T.GPTJConfig, T.GPTJForCausalLM, dict(n_embd=D, n_layer=2, n_head=4, n_positions=32, rotary_dim=8, activation_function="gelu_new"), lambda m, l: m.transformer.h[l].mlp),
    "gpt_neox": (T.GPTNeoXConfig, T.GPTNeoXForCausalLM, dict(hidden_size=D, intermediate_size=M, hidden_act="gelu"), lambda m, l: m.gpt_neox.layers[l].mlp),
    "falcon": (T.FalconConfig, T.FalconForCausalLM, dict(hidden_size=D, ffn_hidden_size=M, activation="gelu"), lambda m, l: m.transformer.h[l].mlp),
    "starcoder2": (T.Starcoder2Config, T.Starcoder2ForCausalLM, dict(llama_like, hidden_act="gelu_pytorch_tanh", use_bias=True), mlp_layers),
    "olmo": (T.OlmoConfig, T.OlmoForCausalLM, dict(llama_like, hidden_act="silu"), mlp_layers),
    "olmo2": (T.Olmo2Config, T.Olmo2ForCausalLM, dict(llama_like, hidden_act="silu"), mlp_layers),
    "stablelm": (T.StableLmConfig, T.StableLmForCausalLM, dict(llama_like, hidden_act="silu"), mlp_layers),
    "granite": (T.GraniteConfig, T.GraniteForCausalLM, dict(llama_like, hidden_act="silu"), mlp_layers),
    "t5relu": (T.T5Config, T.T5ForConditionalGeneration, dict(d_model=D, d_ff=M, d_kv=16, num_layers=2, num_heads=4, feed_forward_proj="relu"), lambda m, l: m.encoder.block[l].layer[-1].DenseReluDense),
    "llama_bias": (T.LlamaConfig, T.LlamaForCausalLM, dict(llama_like, hidden_act="gelu", mlp_bias=True), mlp_layers),
}

report = {}
for name, (C, Mcls, kw, get_mlp) in specs.items():
    try:
        kws = dict(common)
        kws.update(kw)
        if C in (T.GPTJConfig, T.T5Config):
            for k in ("num_hidden_layers", "num_attention_heads"):
                kws.pop(k, None)
        conf = C(**kws)
        model = Mcls(conf).float().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.08)
        d = os.path.join(out_root, name)
        os.makedirs(d, exist_ok=True)
        model.save_pretrained(d, safe_serialization=True)
        for f in ("generation_config.json",):
            if os.path.exists(os.path.join(d, f)):
                os.remove(os.path.join(d, f))
        layer = 1
        mlp = get_mlp(model, layer)
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
            meta = {"layer": str(layer), "module": type(mlp).__name__,
                    "transformers": T.__version__, "torch": torch.__version__}
            if name == "mixtral":
                meta["expert"] = "1"
            save_file(io, os.path.join(d, "io.safetensors"), metadata=meta)
            entry["module"] = type(mlp).__name__
            entry["params"] = [(pn, list(p.shape)) for pn, p in mlp.named_parameters()]
        from safetensors import safe_open
        with safe_open(os.path.join(d, "model.safetensors"), "pt") as f:
            entry["keys"] = [k for k in f.keys() if ".1." in k or "layers.1" in k]
        report[name] = entry
    except Exception:
        report[name] = {"ok": False, "error": traceback.format_exc()[-2500:]}
json.dump(report, open(os.path.join(out_root, "REPORT.json"), "w"), indent=1)
print(json.dumps(report, indent=1)[:11000])
