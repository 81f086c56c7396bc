// model.c — glue between a checkpoint layer (io) and an FFN block (block) for the `ffn` tool: the
// layer as stored through ffn_block_create_from_layer, and the variations `ffn verify` tries
// (the weights read by the same ffn_block_layer_read, then changed).
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#include "block/block_impl.h"  // ffn_block_layer_read

_Static_assert(FFN_TOOL_W_GATE == 1u << FFN_BLK_GATE && FFN_TOOL_W_UP == 1u << FFN_BLK_UP &&
                   FFN_TOOL_W_GATE_UP == 1u << FFN_BLK_GATE_UP &&
                   FFN_TOOL_W_DOWN == 1u << FFN_BLK_DOWN,
               "ffn_tool_variant.transpose is ffn_block_layer_read's flip");
_Static_assert(sizeof((struct ffn_tool_block *)0)->owned == FFN_BLOCK_LAYER_OWNED * sizeof(void *),
               "room for every copy");

enum ffn_status ffn_tool_block_make(ffn_ctx_t ctx, const struct ffn_model_layer *l,
                                    const struct ffn_tool_variant *variant,
                                    struct ffn_tool_block *b) {
    static const struct ffn_tool_variant none = {false, 0, false};
    const struct ffn_tool_variant *v = variant ? variant : &none;
    memset(b, 0, sizeof *b);
    // The layer as stored: the library's block (zero copy, or f32 copies the block owns).
    if (!v->swap_gate_up && !v->transpose && !v->other_gelu)
        return ffn_block_create_from_layer(ctx, l, NULL, &b->block);
    // A variant (`ffn verify`'s usual converter mistakes): weights read another way, some in
    // the other orientation than the layer's, which ffn_block_create_from_layer does not take.
    struct ffn_block_spec spec;
    struct ffn_block_weights w;
    enum ffn_status s = ffn_block_layer_read(ctx, "ffn_block_create_from_layer", l, v->transpose,
                                             &spec, &w, b->owned, &b->n_owned);
    if (s) {
        ffn_tool_block_free(b);
        return s;
    }
    if (v->other_gelu && l->act == FFN_ACT_GELU_TANH)
        spec.act = FFN_ACT_GELU_ERF;
    else if (v->other_gelu && l->act == FFN_ACT_GELU_ERF)
        spec.act = FFN_ACT_GELU_TANH;
    if (v->swap_gate_up && l->gated) {
        if (l->layout == FFN_GATE_UP_SEPARATE) {
            struct ffn_weight t = w.gate;
            w.gate = w.up, w.up = t;
            t = w.b_gate, w.b_gate = w.b_up, w.b_up = t;
        } else if (l->layout == FFN_GATE_UP_FUSED) {
            spec.gate_up_layout = FFN_GATE_UP_FUSED_UP_FIRST;
        } else if (l->layout == FFN_GATE_UP_FUSED_UP_FIRST) {
            spec.gate_up_layout = FFN_GATE_UP_FUSED;
        }
    }
    ffn_block_spec_biases(&spec, &w);
    b->spec = spec;
    b->w = w;
    s = ffn_block_create(ctx, &b->spec, &b->w, NULL, &b->block);
    if (s) ffn_tool_block_free(b);
    return s;
}

void ffn_tool_block_free(struct ffn_tool_block *b) {
    if (!b) return;
    ffn_block_destroy(b->block);
    for (int i = 0; i < b->n_owned; i++) free(b->owned[i]);
    memset(b, 0, sizeof *b);
}

const char *ffn_tool_layout_name(const struct ffn_model_layer *l) {
    if (!l->gated) return "up + down (plain FFN)";
    switch (l->layout) {
    case FFN_GATE_UP_SEPARATE: return "gate + up (two tensors)";
    case FFN_GATE_UP_FUSED: return "fused gate_up [gate | up]";
    case FFN_GATE_UP_FUSED_UP_FIRST: return "fused gate_up [up | gate]";
    default: return "other";
    }
}

void ffn_tool_layer_dtype(const struct ffn_model_layer *l, char *buf, size_t cap) {
    const struct ffn_file_tensor *ts[] = {&l->gate, &l->up, &l->gate_up, &l->down};
    const char *seen[4];
    int n = 0;
    for (size_t i = 0; i < 4; i++) {
        if (!ts[i]->name) continue;
        const char *nm = ffn_file_dtype_name(ts[i]->dtype);
        bool dup = false;
        for (int k = 0; k < n; k++) dup |= !strcmp(seen[k], nm);
        if (!dup) seen[n++] = nm;
    }
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? "/" : "", seen[i]);
}

const char *ffn_tool_ffn_name(enum ffn_act act, bool gated) {
    static const char *const glu[FFN_ACT_COUNT] = {
        [FFN_ACT_GELU_TANH] = "GeGLU (tanh GeLU)",
        [FFN_ACT_GELU_ERF] = "GeGLU (erf GeLU)",
        [FFN_ACT_SILU] = "SwiGLU",
        [FFN_ACT_RELU] = "ReGLU",
        [FFN_ACT_SIGMOID] = "GLU",
        [FFN_ACT_IDENTITY] = "Bilinear",
        [FFN_ACT_QUICK_GELU] = "quick-GeGLU",
    };
    static const char *const plain[FFN_ACT_COUNT] = {
        [FFN_ACT_GELU_TANH] = "GeLU (tanh) FFN",
        [FFN_ACT_GELU_ERF] = "GeLU (erf) FFN",
        [FFN_ACT_SILU] = "SiLU FFN",
        [FFN_ACT_RELU] = "ReLU FFN",
        [FFN_ACT_SIGMOID] = "sigmoid FFN",
        [FFN_ACT_IDENTITY] = "linear FFN",
        [FFN_ACT_QUICK_GELU] = "quick-GeLU FFN",
    };
    if ((unsigned)act >= FFN_ACT_COUNT) return "?";
    return gated ? glu[act] : plain[act];
}

float *ffn_tool_read_f32(ffn_ctx_t ctx, const char *cmd, ffn_safetensors_t st, const char *path,
                         const char *name, struct ffn_file_tensor *t_out) {
    struct ffn_file_tensor t;
    if (ffn_safetensors_find(ctx, st, name, &t)) {
        fprintf(stderr, "%s: %s: no tensor '%s'\n", cmd, ffn_tool_esc(path), ffn_tool_esc(name));
        return NULL;
    }
    if (t.dtype != FFN_FILE_DTYPE_F32 && t.dtype != FFN_FILE_DTYPE_BF16 &&
        t.dtype != FFN_FILE_DTYPE_F16 && t.dtype != FFN_FILE_DTYPE_F64) {
        fprintf(stderr,
                "%s: %s: tensor '%s' has dtype %s; values are read from F32, BF16, F16 "
                "or F64 tensors\n",
                cmd, ffn_tool_esc(path), ffn_tool_esc(name), ffn_file_dtype_name(t.dtype));
        return NULL;
    }
    const int64_t n = ffn_file_tensor_numel(&t);
    float *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (!buf) {
        fprintf(stderr, "%s: %s: out of memory for tensor '%s' as f32 (%lld values)\n", cmd,
                ffn_tool_esc(path), ffn_tool_esc(name), (long long)n);
        return NULL;
    }
    if (ffn_file_tensor_to_f32(ctx, buf, n, &t)) {
        fprintf(stderr, "%s: %s: cannot read tensor '%s' as f32: %s\n", cmd, ffn_tool_esc(path),
                ffn_tool_esc(name), ffn_tool_errmsg(ctx));
        free(buf);
        return NULL;
    }
    if (t_out) *t_out = t;
    return buf;
}

int64_t ffn_tool_nonfinite(const float *x, int64_t n, int64_t *first) {
    int64_t c = 0;
    if (first) *first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            if (!c && first) *first = i;
            c++;
        }
    }
    return c;
}

int64_t ffn_tool_layer_nonfinite(ffn_ctx_t ctx, const struct ffn_model_layer *l) {
    const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                          &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    int64_t total = 0;
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        if (!ts[i]->name) continue;
        const int64_t n = ffn_file_tensor_numel(ts[i]);
        float *buf = n > 0 ? malloc((size_t)n * sizeof *buf) : NULL;
        if (buf && !ffn_file_tensor_to_f32(ctx, buf, n, ts[i]))
            total += ffn_tool_nonfinite(buf, n, NULL);
        free(buf);
    }
    return total;
}

void ffn_tool_commas(char *buf, size_t cap, int64_t v) {
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRId64, v);
    const size_t n = strlen(raw);
    size_t k = 0;
    for (size_t i = 0; i < n && k + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0 && raw[i - 1] != '-') buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = '\0';
}

const char *ffn_tool_errmsg(ffn_ctx_t ctx) {
    const char *m = ffn_ctx_last_error(ctx);
    // Library messages start with the function's name ("ffn_model_open: "): a user needs the
    // file and the fault, not our function names.
    if (!strncmp(m, "ffn_", 4)) {
        const char *p = m + 4;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
        if (p[0] == ':' && p[1] == ' ') return p + 2;
    }
    return m;
}
