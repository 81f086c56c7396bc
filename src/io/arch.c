// arch.c — the architecture table: for each Hugging Face model_type, the config keys of the FFN's
// sizes and activation, and the names, layout and orientation of its FFN tensors; plus the
// transformers activation names (ACT2FN keys) and their meaning.
//
// Checked against transformers 5.x modeling code and real checkpoints (tests/data/hf*):
//   LLaMA-style  model.layers.{L}.mlp.{gate,up,down}_proj.weight, nn.Linear [out, in]
//   Mixtral      model.layers.{L}.block_sparse_moe.experts.{E}.w1 (gate) / w3 (up) / w2 (down)
//   Phi-3        model.layers.{L}.mlp.gate_up_proj.weight [2m, d]: rows 0..m-1 gate, m..2m-1 up
//   GPT-2        transformer.h.{L}.mlp.c_fc / c_proj, Conv1D [in, out], with biases
//   T5 v1.1      encoder.block.{L}.layer.1.DenseReluDense.wi_0 (gate: gets the activation),
//                wi_1 (up), wo (down); decoder.block.{L}.layer.2.DenseReluDense....
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"

// Shorthands for the common key sets.
#define FFN__HF_D \
    { "hidden_size" }
#define FFN__HF_M \
    { "intermediate_size" }
#define FFN__HF_L \
    { "num_hidden_layers" }
#define FFN__LLAMA_PREFIX \
    { "model.layers.%L.mlp." }
// A gated SiLU LLaMA-style entry: model_type, GGUF arch.
#define FFN__LLAMA_LIKE(mt, ga)                                                         \
    {                                                                                   \
        .model_type = mt, .gguf_arch = ga, .gguf_act = "silu", .d_keys = FFN__HF_D,     \
        .m_keys = FFN__HF_M, .layer_keys = FFN__HF_L, .act_keys = {"hidden_act"},       \
        .act_default = "silu", .gated = true, .prefixes = FFN__LLAMA_PREFIX,            \
        .gate = "gate_proj.weight", .up = "up_proj.weight", .down = "down_proj.weight", \
        .b_gate = "gate_proj.bias", .b_up = "up_proj.bias", .b_down = "down_proj.bias"  \
    }

// Gemma 2 / 3: GeGLU, the activation in hidden_activation.
#define FFN__GEMMA_LIKE(mt, ga)                                                                  \
    {                                                                                            \
        .model_type = mt, .gguf_arch = ga, .gguf_act = "gelu_pytorch_tanh", .d_keys = FFN__HF_D, \
        .m_keys = FFN__HF_M, .layer_keys = FFN__HF_L,                                            \
        .act_keys = {"hidden_activation", "hidden_act"}, .act_default = "gelu_pytorch_tanh",     \
        .gated = true,                                                                           \
        .prefixes = {"model.layers.%L.mlp.", "model.language_model.layers.%L.mlp.",              \
                     "language_model.model.layers.%L.mlp."},                                     \
        .gate = "gate_proj.weight", .up = "up_proj.weight", .down = "down_proj.weight"           \
    }

static const struct ffn_io_arch ffn__archs[] = {
    FFN__LLAMA_LIKE("llama", "llama"),
    FFN__LLAMA_LIKE("mistral", "llama"),
    FFN__LLAMA_LIKE("qwen2", "qwen2"),
    FFN__LLAMA_LIKE("qwen3", "qwen3"),
    FFN__LLAMA_LIKE("olmo", "olmo"),
    FFN__LLAMA_LIKE("olmo2", "olmo2"),
    FFN__LLAMA_LIKE("stablelm", "stablelm"),
    FFN__LLAMA_LIKE("granite", "granite"),
    {.model_type = "mixtral",
     .gguf_arch = NULL,
     .d_keys = FFN__HF_D,
     .m_keys = FFN__HF_M,
     .layer_keys = FFN__HF_L,
     .act_keys = {"hidden_act"},
     .act_default = "silu",
     .expert_keys = {"num_local_experts"},
     .gated = true,
     .prefixes = {"model.layers.%L.block_sparse_moe.experts.%E."},
     .gate = "w1.weight",
     .up = "w3.weight",
     .down = "w2.weight"},
    // Gemma 1: the config may say "gelu" (hidden_act) but the model runs the tanh GeLU.
    {.model_type = "gemma",
     .gguf_arch = "gemma",
     .gguf_act = "gelu_pytorch_tanh",
     .d_keys = FFN__HF_D,
     .m_keys = FFN__HF_M,
     .layer_keys = FFN__HF_L,
     .act_keys = {"hidden_activation", "hidden_act"},
     .act_default = "gelu_pytorch_tanh",
     .act_rule = FFN_IO_ACT_GEMMA,
     .gated = true,
     .prefixes = FFN__LLAMA_PREFIX,
     .gate = "gate_proj.weight",
     .up = "up_proj.weight",
     .down = "down_proj.weight"},
    FFN__GEMMA_LIKE("gemma2", "gemma2"),
    FFN__GEMMA_LIKE("gemma3_text", "gemma3"),
    FFN__GEMMA_LIKE("gemma3", NULL),  // multimodal wrapper: sizes from its text_config
    {.model_type = "phi3",
     .gguf_arch = "phi3",
     .gguf_act = "silu",
     .d_keys = FFN__HF_D,
     .m_keys = FFN__HF_M,
     .layer_keys = FFN__HF_L,
     .act_keys = {"hidden_act"},
     .act_default = "silu",
     .gated = true,
     .fused = true,
     .prefixes = FFN__LLAMA_PREFIX,
     .up = "gate_up_proj.weight",
     .down = "down_proj.weight"},
    {.model_type = "gpt2",
     .gguf_arch = "gpt2",
     .gguf_act = "gelu_new",
     .d_keys = {"n_embd"},
     .m_keys = {"n_inner"},
     .layer_keys = {"n_layer"},
     .act_keys = {"activation_function"},
     .act_default = "gelu_new",
     .m_rule = FFN_IO_M_OR_4D,
     .conv1d = true,
     .prefixes = {"transformer.h.%L.mlp.", "h.%L.mlp."},
     .up = "c_fc.weight",
     .down = "c_proj.weight",
     .b_up = "c_fc.bias",
     .b_down = "c_proj.bias"},
    {.model_type = "gptj",
     .gguf_arch = "gptj",
     .gguf_act = "gelu_new",
     .d_keys = {"n_embd"},
     .m_keys = {"n_inner"},
     .layer_keys = {"n_layer"},
     .act_keys = {"activation_function"},
     .act_default = "gelu_new",
     .m_rule = FFN_IO_M_OR_4D,
     .prefixes = {"transformer.h.%L.mlp."},
     .up = "fc_in.weight",
     .down = "fc_out.weight",
     .b_up = "fc_in.bias",
     .b_down = "fc_out.bias"},
    {.model_type = "gpt_neox",
     .gguf_arch = "gptneox",
     .gguf_act = "gelu",
     .d_keys = FFN__HF_D,
     .m_keys = FFN__HF_M,
     .layer_keys = FFN__HF_L,
     .act_keys = {"hidden_act"},
     .act_default = "gelu",
     .prefixes = {"gpt_neox.layers.%L.mlp."},
     .up = "dense_h_to_4h.weight",
     .down = "dense_4h_to_h.weight",
     .b_up = "dense_h_to_4h.bias",
     .b_down = "dense_4h_to_h.bias"},
    {.model_type = "falcon",
     .gguf_arch = "falcon",
     .gguf_act = "gelu",
     .d_keys = FFN__HF_D,
     .m_keys = {"ffn_hidden_size"},
     .layer_keys = {"num_hidden_layers", "n_layer"},
     .act_keys = {"activation"},
     .act_default = "gelu",
     .m_rule = FFN_IO_M_OR_4D,
     .prefixes = {"transformer.h.%L.mlp."},
     .up = "dense_h_to_4h.weight",
     .down = "dense_4h_to_h.weight",
     .b_up = "dense_h_to_4h.bias",
     .b_down = "dense_4h_to_h.bias"},
    // StarCoder2 names its projections like GPT-2 but they are nn.Linear ([out, in]).
    {.model_type = "starcoder2",
     .gguf_arch = "starcoder2",
     .gguf_act = "gelu_pytorch_tanh",
     .d_keys = FFN__HF_D,
     .m_keys = FFN__HF_M,
     .layer_keys = FFN__HF_L,
     .act_keys = {"hidden_act"},
     .act_default = "gelu_pytorch_tanh",
     .prefixes = FFN__LLAMA_PREFIX,
     .up = "c_fc.weight",
     .down = "c_proj.weight",
     .b_up = "c_fc.bias",
     .b_down = "c_proj.bias"},
    // T5: feed_forward_proj "[gated-]<act>"; "gated-gelu" means gelu_new (the tanh GeLU).
    {.model_type = "t5",
     .d_keys = {"d_model"},
     .m_keys = {"d_ff"},
     .layer_keys = {"num_layers"},
     .act_keys = {"dense_act_fn"},
     .act_default = NULL,
     .act_rule = FFN_IO_ACT_T5,
     .prefixes = {"encoder.block.%L.layer.1.DenseReluDense."},
     .gate = "wi_0.weight",
     .up = "wi_1.weight",
     .down = "wo.weight",
     .plain_up = "wi.weight",
     .dec_prefix = "decoder.block.%L.layer.2.DenseReluDense.",
     .dec_layer_keys = {"num_decoder_layers"}},
    {.model_type = "mt5",
     .d_keys = {"d_model"},
     .m_keys = {"d_ff"},
     .layer_keys = {"num_layers"},
     .act_keys = {"dense_act_fn"},
     .act_default = NULL,
     .act_rule = FFN_IO_ACT_T5,
     .prefixes = {"encoder.block.%L.layer.1.DenseReluDense."},
     .gate = "wi_0.weight",
     .up = "wi_1.weight",
     .down = "wo.weight",
     .plain_up = "wi.weight",
     .dec_prefix = "decoder.block.%L.layer.2.DenseReluDense.",
     .dec_layer_keys = {"num_decoder_layers"}},
};

size_t ffn_io_arch_count(void) { return FFN_ARRAY_LEN(ffn__archs); }

const struct ffn_io_arch *ffn_io_arch_at(size_t i) {
    return i < FFN_ARRAY_LEN(ffn__archs) ? &ffn__archs[i] : NULL;
}

const struct ffn_io_arch *ffn_io_arch_find(const char *model_type) {
    for (size_t i = 0; model_type && i < FFN_ARRAY_LEN(ffn__archs); i++)
        if (!strcmp(ffn__archs[i].model_type, model_type)) return &ffn__archs[i];
    return NULL;
}

const struct ffn_io_arch *ffn_io_arch_find_gguf(const char *name) {
    for (size_t i = 0; name && i < FFN_ARRAY_LEN(ffn__archs); i++)
        if (ffn__archs[i].gguf_arch && !strcmp(ffn__archs[i].gguf_arch, name))
            return &ffn__archs[i];
    return NULL;
}

// transformers' ACT2FN names of the activations ffn computes. The GeLU family:
//   gelu, gelu_python                       0.5·x·(1 + erf(x/√2))      (exact, erf)
//   gelu_new, gelu_pytorch_tanh, gelu_fast,  0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))
//   gelu_accurate                           (the tanh form; gelu_fast/accurate evaluate the same
//                                           formula in another order)
//   quick_gelu                              x·σ(1.702x)
static const struct {
    const char *name;
    enum ffn_act act;
} ffn__hf_acts[] = {
    {"gelu", FFN_ACT_GELU_ERF},
    {"gelu_python", FFN_ACT_GELU_ERF},
    {"gelu_new", FFN_ACT_GELU_TANH},
    {"gelu_pytorch_tanh", FFN_ACT_GELU_TANH},
    {"gelu_fast", FFN_ACT_GELU_TANH},
    {"gelu_accurate", FFN_ACT_GELU_TANH},
    {"quick_gelu", FFN_ACT_QUICK_GELU},
    {"silu", FFN_ACT_SILU},
    {"swish", FFN_ACT_SILU},
    {"relu", FFN_ACT_RELU},
    {"sigmoid", FFN_ACT_SIGMOID},
    {"linear", FFN_ACT_IDENTITY},
};

bool ffn_io_act_from_hf(const char *name, enum ffn_act *act_out) {
    for (size_t i = 0; name && i < FFN_ARRAY_LEN(ffn__hf_acts); i++) {
        if (!strcmp(ffn__hf_acts[i].name, name)) {
            *act_out = ffn__hf_acts[i].act;
            return true;
        }
    }
    return false;
}

size_t ffn_io_hf_act_count(void) { return FFN_ARRAY_LEN(ffn__hf_acts); }
const char *ffn_io_hf_act_name(size_t i) {
    return i < FFN_ARRAY_LEN(ffn__hf_acts) ? ffn__hf_acts[i].name : NULL;
}

bool ffn_io_name_expand(char *buf, size_t cap, const char *prefix, const char *pattern,
                        int64_t layer, int64_t expert) {
    size_t k = 0;
    for (int part = 0; part < 2; part++) {
        for (const char *p = part ? pattern : prefix; p && *p; p++) {
            char num[24];
            const char *ins = NULL;
            if (p[0] == '%' && p[1] == 'L')
                ins = num, snprintf(num, sizeof num, "%lld", (long long)layer);
            if (p[0] == '%' && p[1] == 'E')
                ins = num, snprintf(num, sizeof num, "%lld", (long long)expert);
            if (ins) {
                const size_t n = strlen(ins);
                if (k + n >= cap) return false;
                memcpy(buf + k, ins, n);
                k += n;
                p++;
            } else {
                if (k + 1 >= cap) return false;
                buf[k++] = *p;
            }
        }
    }
    buf[k] = '\0';
    return true;
}
