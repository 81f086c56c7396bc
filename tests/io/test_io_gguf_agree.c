// test_io_gguf_agree.c — the GGUF copies of the llama and phi3 fixtures (made by io_testgen)
// describe the same FFNs as the safetensors originals: same arch family, layers, d, m,
// activation, gating and FFN parameter count; and every FFN weight agrees element by element:
// exactly for f32, within bf16 rounding (2^-8 relative), and for Q8_0 within its quantisation
// error |x - x̂| ≤ amax/127 · (1/2 + 127·2^-11) per 32-block (the rounding of x/d plus the f16
// rounding of the scale d = amax/127). Q8_0 layouts keep rows whose length is not a multiple of
// 32 in f16 (2^-11 relative).
// usage: test_io_gguf_agree HF_DIR GEN_DIR
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffn.h"

static float *f32(ffn_ctx_t ctx, const struct ffn_file_tensor *t, int64_t *n) {
    *n = ffn_file_tensor_numel(t);
    float *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *v);
    if (ffn_file_tensor_to_f32(ctx, v, *n, t)) {
        fprintf(stderr, "%s\n", ffn_ctx_last_error(ctx));
        exit(1);
    }
    return v;
}

// Compares one weight: orig (HF) against the GGUF copy, with the bound of the copy's dtype.
static void cmp_weight(ffn_ctx_t ctx, const char *what, const struct ffn_file_tensor *o,
                       const struct ffn_file_tensor *g) {
    int64_t no, ng;
    float *a = f32(ctx, o, &no), *b = f32(ctx, g, &ng);
    CHECK(no == ng && o->shape[0] == g->shape[0] && o->shape[1] == g->shape[1],
          "%s: shapes [%lld, %lld] vs [%lld, %lld]", what, (long long)o->shape[0],
          (long long)o->shape[1], (long long)g->shape[0], (long long)g->shape[1]);
    int bad = 0;
    for (int64_t blk = 0; no == ng && blk * 32 < no; blk++) {
        float amax = 0;
        for (int64_t i = blk * 32; i < no && i < (blk + 1) * 32; i++)
            amax = fmaxf(amax, fabsf(a[i]));
        for (int64_t i = blk * 32; i < no && i < (blk + 1) * 32; i++) {
            double bound = 0;
            switch (g->dtype) {
            case FFN_FILE_DTYPE_F32: bound = 0; break;
            case FFN_FILE_DTYPE_BF16: bound = fabs(a[i]) * 0x1p-8; break;
            case FFN_FILE_DTYPE_F16: bound = fabs(a[i]) * 0x1p-11 + 0x1p-25; break;
            case FFN_FILE_DTYPE_Q8_0:
                bound = amax / 127.0 * (0.5 + 127.0 * 0x1p-11) * (1 + 1e-6);
                break;
            default: bound = INFINITY; break;  // Q4_0: checked by verify's tolerance
            }
            if (fabs((double)a[i] - b[i]) > bound && bad++ < 3)
                FAIL("%s (%s) [%lld]: original %.9g, GGUF %.9g, bound %.3g", what,
                     ffn_file_dtype_name(g->dtype), (long long)i, a[i], b[i], bound);
        }
    }
    free(a), free(b);
}

static void agree(ffn_ctx_t ctx, const char *hf, const char *gguf) {
    ffn_model_t m, q;
    if (ffn_model_open(ctx, hf, &m) || ffn_model_open(ctx, gguf, &q)) {
        FAIL("open: %s", ffn_ctx_last_error(ctx));
        return;
    }
    const struct ffn_model_desc *a = ffn_model_desc(m), *b = ffn_model_desc(q);
    CHECK(!strcmp(a->arch, b->arch) && a->n_layers == b->n_layers && a->d_model == b->d_model &&
              a->d_ff == b->d_ff && a->act == b->act && a->gated == b->gated &&
              a->n_params_ffn == b->n_params_ffn && !strcmp(b->format, "gguf"),
          "%s vs %s: arch %s/%s layers %lld/%lld d %lld/%lld m %lld/%lld act %s/%s ffn params "
          "%lld/%lld",
          hf, gguf, a->arch, b->arch, (long long)a->n_layers, (long long)b->n_layers,
          (long long)a->d_model, (long long)b->d_model, (long long)a->d_ff, (long long)b->d_ff,
          ffn_act_name(a->act), ffn_act_name(b->act), (long long)a->n_params_ffn,
          (long long)b->n_params_ffn);
    for (int64_t L = 0; L < a->n_layers && L < b->n_layers; L++) {
        struct ffn_model_layer x, y;
        ffn_model_layer(ctx, m, L, -1, &x);
        ffn_model_layer(ctx, q, L, -1, &y);
        CHECK(x.layout == y.layout && x.orient == y.orient,
              "%s layer %lld: layout %d/%d orient %d/%d", gguf, (long long)L, (int)x.layout,
              (int)y.layout, (int)x.orient, (int)y.orient);
        if (x.gate.name && y.gate.name) cmp_weight(ctx, y.gate.name, &x.gate, &y.gate);
        if (x.up.name && y.up.name) cmp_weight(ctx, y.up.name, &x.up, &y.up);
        if (x.gate_up.name && y.gate_up.name)
            cmp_weight(ctx, y.gate_up.name, &x.gate_up, &y.gate_up);
        cmp_weight(ctx, y.down.name, &x.down, &y.down);
    }
    ffn_model_close(m);
    ffn_model_close(q);
}

int main(int argc, char **argv) {
    ffn_check_begin("test_io_gguf_agree");
    if (argc < 3) {
        fprintf(stderr, "usage: test_io_gguf_agree HF_DIR GEN_DIR\n");
        return 2;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 1;
    const char *pairs[][2] = {{"llama", "llama_f32.gguf"},
                              {"llama", "llama_q8_0.gguf"},
                              {"llama", "llama_bf16.gguf"},
                              {"phi3", "phi3_f32.gguf"},
                              {"phi3", "phi3_q8_0.gguf"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char hf[1024], gg[1024];
        snprintf(hf, sizeof hf, "%s/%s", argv[1], pairs[i][0]);
        snprintf(gg, sizeof gg, "%s/%s", argv[2], pairs[i][1]);
        agree(ctx, hf, gg);
        printf("%s agrees with %s\n", gg, hf);
    }
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
