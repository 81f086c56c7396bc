// model.h — helpers shared by `ffn info / run / verify / convert`: the glue between a
// checkpoint's FFN layer (src/io) and an FFN block (src/block), plus small array utilities.
#ifndef FFN_TOOL_MODEL_H
#define FFN_TOOL_MODEL_H

#include <stdio.h>

#include "args.h"
#include "ffn.h"

// Ranges of --layer and --expert (the io readers' own limits: 2^16 layers, 2^14 experts);
// ffn_model_layer then checks them against the model.
#define FFN_TOOL_MAX_LAYER (INT64_C(1) << 17)
#define FFN_TOOL_MAX_EXPERT (INT64_C(1) << 14)

// Variations of a layer a block can be built with: what `ffn verify` tries when the forward does
// not match (the usual converter mistakes).
struct ffn_tool_variant {
    bool swap_gate_up;   // gate <-> up (two tensors), or the halves of a fused gate_up
    unsigned transpose;  // weights read in the other orientation (same bytes): FFN_TOOL_W_* bits
    bool other_gelu;     // tanh GeLU <-> erf GeLU
};

enum {
    FFN_TOOL_W_GATE = 1u << 0,
    FFN_TOOL_W_UP = 1u << 1,
    FFN_TOOL_W_GATE_UP = 1u << 2,
    FFN_TOOL_W_DOWN = 1u << 3,
};

// A block made from a model layer, with the f32 copies it needed (quantised or misaligned data).
struct ffn_tool_block {
    ffn_block_t block;
    struct ffn_block_spec spec;
    struct ffn_block_weights w;
    void *owned[8];
    int n_owned;
};

// Builds a block for layer `l` (variant may be NULL). On failure the message is in the ctx
// (ffn_tool_errmsg).
enum ffn_status ffn_tool_block_make(ffn_ctx_t ctx, const struct ffn_model_layer *l,
                                    const struct ffn_tool_variant *variant,
                                    struct ffn_tool_block *b);
void ffn_tool_block_free(struct ffn_tool_block *b);

// "gate + up (two tensors)", "fused gate_up [gate | up]", "up only (plain FFN)".
const char *ffn_tool_layout_name(const struct ffn_model_layer *l);
// The weights' dtype, or "mixed (F32/F16)".
void ffn_tool_layer_dtype(const struct ffn_model_layer *l, char *buf, size_t cap);
// "SwiGLU", "GeGLU (tanh)", "GeLU (erf)" ...
const char *ffn_tool_ffn_name(enum ffn_act act, bool gated);

// Reads a tensor of a safetensors file as f32, allocated with malloc. Only floating-point
// dtypes are read (F32, BF16, F16, F64): an integer or bool tensor is not a value tensor. NULL
// with a message on stderr (prefixed by `cmd`) when absent, of another dtype or unreadable.
float *ffn_tool_read_f32(ffn_ctx_t ctx, const char *cmd, ffn_safetensors_t st, const char *path,
                         const char *name, struct ffn_file_tensor *t_out);
// Count of non-finite values and the first one's index (-1 when none).
int64_t ffn_tool_nonfinite(const float *x, int64_t n, int64_t *first);
// Non-finite values in the layer's weights (all tensors), for a report.
int64_t ffn_tool_layer_nonfinite(ffn_ctx_t ctx, const struct ffn_model_layer *l);

// The context's last error without the library function's name in front.
const char *ffn_tool_errmsg(ffn_ctx_t ctx);
// Formats a count with thousands separators ("1,234,567").
void ffn_tool_commas(char *buf, size_t cap, int64_t v);

#endif  // FFN_TOOL_MODEL_H
