// quickstart.c — the README's example of the C API: an activation in place, then layer 0's FFN of
// a checkpoint (a Hugging Face directory or a .gguf file) run as a block on the weights where the
// file maps them. Built as build/quickstart; `build/quickstart tests/data/hf/llama` runs it on
// the shipped fixture (ctest: example_quickstart).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <ffn.h>

#define CHECK(call) /* on failure, the context's message says what was wrong */                  \
    do {                                                                                         \
        if ((call) != FFN_STATUS_OK) return fprintf(stderr, "%s\n", ffn_ctx_last_error(ctx)), 1; \
    } while (0)

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/data/hf/llama";
    ffn_ctx_t ctx = NULL;
    struct ffn_ctx_opts opts = FFN_CTX_OPTS_INIT;  // CPU, best ISA, OpenMP's thread count
    if (ffn_ctx_create(&opts, &ctx) != FFN_STATUS_OK) return 1;

    // 1. An activation, in place: x = gelu_tanh(x). No input clamp: gelu_tanh(1000) = 1000.
    float x8[8] = {-INFINITY, -1000, -1, -0.0f, 0, 1, 1000, INFINITY};
    struct ffn_tensor v = ffn_tensor_vec(x8, FFN_DTYPE_F32, 8);
    CHECK(ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &v, &v));
    printf("gelu_tanh: -inf -> %g, -1 -> %.9g, 1000 -> %g\n", x8[0], x8[2], x8[6]);

    // 2. Layer 0's FFN of a checkpoint: shapes, activation, gating, layout and orientation are
    // the file's (gate and up are never guessed); f32/bf16/f16 weights are read where the file
    // maps them, quantised ones (GGUF Q8_0/Q4_0) dequantised once into the block.
    ffn_model_t model;
    CHECK(ffn_model_open(ctx, path, &model));
    struct ffn_model_layer l;
    CHECK(ffn_model_layer(ctx, model, 0, -1, &l));
    ffn_block_t block;
    CHECK(ffn_block_create_from_layer(ctx, &l, NULL, &block));

    const int64_t tokens = 4, d = l.d_model;
    float *x = malloc(sizeof *x * tokens * d), *y = malloc(sizeof *y * tokens * d);
    if (!x || !y) return 1;
    for (int64_t i = 0; i < tokens * d; i++) x[i] = (float)((i % 7) - 3) / 4;
    struct ffn_tensor tx = ffn_tensor_2d(x, FFN_DTYPE_F32, tokens, d, d);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, tokens, d, d);
    CHECK(ffn_block_forward(ctx, block, &ty, &tx, FFN_BLOCK_POLICY_NONE));  // inference
    printf("%s layer 0: d %lld, m %lld, %s%s; y[0][0..2] = %g %g %g\n", ffn_model_desc(model)->arch,
           (long long)l.d_model, (long long)l.d_ff, l.gated ? "gated " : "", ffn_act_name(l.act),
           y[0], y[1], y[2]);

    free(x), free(y);
    ffn_block_destroy(block);
    ffn_model_close(model);
    ffn_ctx_destroy(ctx);
    return 0;
}
