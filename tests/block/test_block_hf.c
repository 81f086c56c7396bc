// test_block_hf.c — FFN blocks against Hugging Face transformers: for one fixture folder
// (tests/data/hf/<arch>: model.safetensors + io.safetensors, see tests/data/README.md)
// builds the block of layer `__metadata__.layer` straight from the memory-mapped checkpoint
// (the library's safetensors reader; weights used where they lie), runs forward + backward under
// both memory policies and compares y, dx and every weight gradient with the reference, which
// transformers computed in float64. Usage: test_block_hf <fixture dir>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffn.h"

// Reference in f64 rounded to f32; ours is f32 GEMMs of length ≤ 256 on O(1) values.
#define TOL_ABS 2e-5  // × the largest |value| of the tensor
#define TOL_REL 1e-4

// How one transformers MLP class maps to a block (the test states it; the io layer's
// architecture maps are tested on their own).
struct arch {
    const char *module;
    const char *prefix;  // printf format with the layer number
    enum ffn_act act;
    bool gated;
    enum ffn_gate_up_layout layout;
    enum ffn_weight_orient orient;
    bool bias;
    const char *gate, *up, *gate_up, *down;  // parameter names inside the module
};

static const struct arch arches[] = {
    {"LlamaMLP", "model.layers.%s.mlp.", FFN_ACT_SILU, true, FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN, false, "gate_proj", "up_proj", NULL, "down_proj"},
    {"GemmaMLP", "model.layers.%s.mlp.", FFN_ACT_GELU_TANH, true, FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN, false, "gate_proj", "up_proj", NULL, "down_proj"},
    {"Phi3MLP", "model.layers.%s.mlp.", FFN_ACT_SILU, true, FFN_GATE_UP_FUSED, FFN_WEIGHT_OUT_IN,
     false, NULL, NULL, "gate_up_proj", "down_proj"},
    {"GPT2MLP", "transformer.h.%s.mlp.", FFN_ACT_GELU_TANH, false, FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_IN_OUT, true, NULL, "c_fc", NULL, "c_proj"},
    // wi_0 is the gate (gets the activation), wi_1 the up; "gated-gelu" is the tanh GeLU.
    {"T5DenseGatedActDense", "encoder.block.%s.layer.1.DenseReluDense.", FFN_ACT_GELU_TANH, true,
     FFN_GATE_UP_SEPARATE, FFN_WEIGHT_OUT_IN, false, "wi_0", "wi_1", NULL, "wo"},
};

static ffn_ctx_t ctx;

// Looks up `name` (f32) in st; fills view and element count.
static bool get(ffn_safetensors_t st, const char *name, struct ffn_file_tensor *t) {
    return CHECK(
        ffn_safetensors_find(ctx, st, name, t) == FFN_STATUS_OK && t->dtype == FFN_FILE_DTYPE_F32,
        "tensor '%s' missing or not F32", name);
}

static int64_t numel(const struct ffn_file_tensor *t) {
    int64_t n = 1;
    for (int k = 0; k < t->n_dims; k++) n *= t->shape[k];
    return n;
}

static struct ffn_weight weight_of(const struct ffn_file_tensor *t, enum ffn_weight_orient o) {
    struct ffn_weight w = ffn_weight_dense(t->data, FFN_DTYPE_F32, o);
    w.rows = t->n_dims == 2 ? t->shape[0] : 1;
    w.cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    return w;
}

static void compare(const char *what, const float *want, const float *got, int64_t n) {
    double scale = 0;
    for (int64_t k = 0; k < n; k++) scale = fabs(want[k]) > scale ? fabs(want[k]) : scale;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        const double err = fabs((double)got[k] - want[k]);
        worst = err / (scale > 0 ? scale : 1) > worst ? err / (scale > 0 ? scale : 1) : worst;
        CHECK(err <= TOL_ABS * scale + TOL_REL * fabs(want[k]),
              "%s[%" PRId64 "]: expected %.9g got %.9g", what, k, want[k], got[k]);
    }
    printf("  %-26s max |err| / max |ref| = %.2e\n", what, worst);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_block_hf <fixture dir>\n");
        return 2;
    }
    ffn_check_begin("test_block_hf");
    if (ffn_ctx_create(NULL, &ctx) != FFN_STATUS_OK) return 1;
    ffn_check_show_error(ctx);  // failures print the context's last error
    char path[4096];
    ffn_safetensors_t model = NULL, io = NULL;
    snprintf(path, sizeof path, "%s/model.safetensors", argv[1]);
    if (!CHECK(!ffn_safetensors_open(ctx, path, &model), "open %s", path))
        return ffn_check_summary();
    snprintf(path, sizeof path, "%s/io.safetensors", argv[1]);
    if (!CHECK(!ffn_safetensors_open(ctx, path, &io), "open %s", path)) return ffn_check_summary();
    const char *module = ffn_safetensors_metadata(io, "module");
    const char *layer = ffn_safetensors_metadata(io, "layer");
    const struct arch *a = NULL;
    for (size_t k = 0; module && k < sizeof arches / sizeof arches[0]; k++)
        if (!strcmp(arches[k].module, module)) a = &arches[k];
    if (!CHECK(a && layer, "unknown module '%s' or no layer", module ? module : "?"))
        return ffn_check_summary();
    printf("test_block_hf: %s (%s, layer %s)\n", argv[1], module, layer);

    // Weights: zero-copy views of the mapped checkpoint; gradients in the same shapes.
    const char *names[4] = {a->gate, a->up, a->gate_up, a->down};
    struct ffn_file_tensor wt[4] = {0}, bt[4] = {0};
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_weight *wm[4] = {&w.gate, &w.up, &w.gate_up, &w.down};
    struct ffn_weight *bm[4] = {&w.b_gate, &w.b_up, &w.b_gate_up, &w.b_down};
    char full[512];
    for (int k = 0; k < 4; k++) {
        if (!names[k]) continue;
        char pre[256];
        snprintf(pre, sizeof pre, a->prefix, layer);
        snprintf(full, sizeof full, "%s%s.weight", pre, names[k]);
        if (!get(model, full, &wt[k])) return ffn_check_summary();
        *wm[k] = weight_of(&wt[k], a->orient);
        if (a->bias) {
            snprintf(full, sizeof full, "%s%s.bias", pre, names[k]);
            if (!get(model, full, &bt[k])) return ffn_check_summary();
            *bm[k] = weight_of(&bt[k], a->orient);
        }
    }
    struct ffn_file_tensor x, y, dy, dx;
    if (!get(io, "x", &x) || !get(io, "y", &y) || !get(io, "dy", &dy) || !get(io, "dx", &dx))
        return ffn_check_summary();
    const int64_t T = x.shape[0], d = x.shape[1];
    const struct ffn_file_tensor *down = &wt[3];
    const int64_t m = a->orient == FFN_WEIGHT_OUT_IN ? down->shape[1] : down->shape[0];

    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = d;
    spec.d_ff = m;
    spec.act = a->act;
    spec.gated = a->gated;
    spec.gate_up_layout = a->layout;
    spec.bias_up = spec.bias_down = a->bias;
    spec.bias_gate = a->bias && a->gated;
    ffn_block_t blk;
    if (!CHECK(!ffn_block_create(ctx, &spec, &w, NULL, &blk), "create")) return ffn_check_summary();
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    ffn_block_info(ctx, blk, T, &info);
    printf("  d=%" PRId64 " m=%" PRId64 " tokens=%" PRId64 ", %" PRId64
           " params, cache %zu bytes "
           "(f32 weights are used in place)\n",
           d, m, T, info.n_params, info.cache_bytes);
    CHECK_EQ(info.cache_bytes, 0, "an f32 checkpoint is used in place, not copied");

    float *grads[8] = {0};
    for (int k = 0; k < 4; k++) {
        if (names[k]) grads[k] = calloc((size_t)numel(&wt[k]), sizeof(float));
        if (names[k] && a->bias) grads[4 + k] = calloc((size_t)numel(&bt[k]), sizeof(float));
    }
    float *yo = malloc((size_t)(T * d) * sizeof(float)),
          *dxo = malloc((size_t)(T * d) * sizeof(float));
    struct ffn_tensor tx = ffn_tensor_2d((void *)x.data, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor ty = ffn_tensor_2d(yo, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor tdy = ffn_tensor_2d((void *)dy.data, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor tdx = ffn_tensor_2d(dxo, FFN_DTYPE_F32, T, d, d);
    for (int pol = 0; pol < 2; pol++) {
        const enum ffn_block_policy policy =
            pol ? FFN_BLOCK_POLICY_RECOMPUTE : FFN_BLOCK_POLICY_SAVE;
        printf(" policy %s\n", pol ? "recompute" : "save");
        struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
        g.gate = grads[0], g.up = grads[1], g.gate_up = grads[2], g.down = grads[3];
        g.b_gate = grads[4], g.b_up = grads[5], g.b_gate_up = grads[6], g.b_down = grads[7];
        if (!CHECK(!ffn_block_forward(ctx, blk, &ty, &tx, policy), "forward") ||
            !CHECK(!ffn_block_backward(ctx, blk, &g, &tdx, &tdy), "backward"))
            return ffn_check_summary();
        compare("y", y.data, yo, T * d);
        compare("dx", dx.data, dxo, T * d);
        for (int k = 0; k < 8; k++) {
            if (!grads[k]) continue;
            snprintf(full, sizeof full, "grad.%s.%s", names[k % 4], k < 4 ? "weight" : "bias");
            struct ffn_file_tensor ref;
            if (!get(io, full, &ref)) continue;
            compare(full, ref.data, grads[k], numel(&ref));
        }
    }
    for (int k = 0; k < 8; k++) free(grads[k]);
    free(yo);
    free(dxo);
    ffn_block_destroy(blk);
    ffn_safetensors_close(model);
    ffn_safetensors_close(io);
    ffn_check_show_error(NULL);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
