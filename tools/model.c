// model.c — glue between a checkpoint layer (io) and an FFN block (block) for the `ffn` tool: the
// layer as stored through ffn_block_create_from_layer, and the variations `ffn verify` tries
// (file tensors as block weight views, an f32 copy for quantised or misaligned data).
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

// Why the last ffn_tool_block_make failed when the library has no message for it (the tool's
// own allocations).
static char ffn__block_why[512];

static enum ffn_status ffn__weight(ffn_ctx_t ctx, struct ffn_tool_block *b,
                                   const struct ffn_file_tensor *t, enum ffn_weight_orient orient,
                                   bool declare, struct ffn_weight *w) {
    memset(w, 0, sizeof *w);
    if (!t->name) return FFN_STATUS_OK;
    enum ffn_dtype dt = FFN_DTYPE_F32;
    const void *data = t->data;
    const bool direct = ffn_file_dtype_to_dtype(t->dtype, &dt) == FFN_STATUS_OK &&
                        (uintptr_t)data % ffn_dtype_size(dt) == 0;
    if (!direct) {
        const int64_t n = ffn_file_tensor_numel(t);
        float *buf = n > 0 ? malloc((size_t)n * sizeof *buf) : NULL;
        if (!buf || b->n_owned >= (int)(sizeof b->owned / sizeof b->owned[0])) {
            snprintf(ffn__block_why, sizeof ffn__block_why,
                     "out of memory for an f32 copy of %s (%lld values, %.1f MiB)",
                     ffn_tool_esc(t->name), (long long)n, (double)n * 4.0 / (1 << 20));
            free(buf);
            return FFN_STATUS_OUT_OF_MEMORY;
        }
        const enum ffn_status s = ffn_file_tensor_to_f32(ctx, buf, n, t);
        if (s) {
            free(buf);
            return s;
        }
        b->owned[b->n_owned++] = buf;
        data = buf;
        dt = FFN_DTYPE_F32;
    }
    w->data = data;
    w->dtype = dt;
    w->orient = orient;
    if (declare) {
        w->rows = t->n_dims == 2 ? t->shape[0] : 1;
        w->cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    }
    return FFN_STATUS_OK;
}

static enum ffn_weight_orient ffn__flip(enum ffn_weight_orient o, bool flip) {
    if (!flip) return o;
    return o == FFN_WEIGHT_OUT_IN ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
}

enum ffn_status ffn_tool_block_make(ffn_ctx_t ctx, const struct ffn_model_layer *l,
                                    const struct ffn_tool_variant *variant,
                                    struct ffn_tool_block *b) {
    static const struct ffn_tool_variant none = {false, 0, false};
    const struct ffn_tool_variant *v = variant ? variant : &none;
    memset(b, 0, sizeof *b);
    ffn__block_why[0] = '\0';
    // The layer as stored: the library's block (zero copy, or f32 copies the block owns).
    if (!v->swap_gate_up && !v->transpose && !v->other_gelu)
        return ffn_block_create_from_layer(ctx, l, NULL, &b->block);
    // A variant (`ffn verify`'s usual converter mistakes): weights read another way, some in
    // the other orientation than the layer's, which ffn_block_create_from_layer does not take.
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    spec.d_model = l->d_model;
    spec.d_ff = l->d_ff;
    spec.act = l->act;
    if (v->other_gelu && l->act == FFN_ACT_GELU_TANH)
        spec.act = FFN_ACT_GELU_ERF;
    else if (v->other_gelu && l->act == FFN_ACT_GELU_ERF)
        spec.act = FFN_ACT_GELU_TANH;
    spec.gated = l->gated;
    spec.gate_up_layout = l->layout;
    const struct {
        const struct ffn_file_tensor *t;
        struct ffn_weight *w;
        unsigned bit;  // 0: a bias
    } map[] = {
        {&l->gate, &w.gate, FFN_TOOL_W_GATE},
        {&l->up, &w.up, FFN_TOOL_W_UP},
        {&l->gate_up, &w.gate_up, FFN_TOOL_W_GATE_UP},
        {&l->down, &w.down, FFN_TOOL_W_DOWN},
        {&l->b_gate, &w.b_gate, 0},
        {&l->b_up, &w.b_up, 0},
        {&l->b_gate_up, &w.b_gate_up, 0},
        {&l->b_down, &w.b_down, 0},
    };
    enum ffn_status s = FFN_STATUS_OK;
    for (size_t i = 0; i < sizeof map / sizeof map[0] && !s; i++) {
        const bool flip = map[i].bit && (v->transpose & map[i].bit);
        s = ffn__weight(ctx, b, map[i].t, ffn__flip(l->orient, flip), !flip, map[i].w);
    }
    if (s) {
        ffn_tool_block_free(b);
        return s;
    }
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
    if (spec.gated && spec.gate_up_layout != FFN_GATE_UP_SEPARATE) {
        spec.bias_gate = spec.bias_up = w.b_gate_up.data != NULL;
    } else {
        spec.bias_gate = w.b_gate.data != NULL;
        spec.bias_up = w.b_up.data != NULL;
    }
    spec.bias_down = w.b_down.data != NULL;
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

const char *ffn_tool_block_errmsg(ffn_ctx_t ctx) {
    return ffn__block_why[0] ? ffn__block_why : ffn_tool_errmsg(ctx);
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
