// consumer.c — a program built against an installed ffn (tests/install/install_test.sh): SwiGLU on
// a small fused gate/up buffer through the public header alone, checked against the formula.
#include <ffn.h>
#include <math.h>
#include <stdio.h>

int main(void) {
    ffn_ctx_t ctx;
    struct ffn_ctx_opts opts = FFN_CTX_OPTS_INIT;
    if (ffn_ctx_create(&opts, &ctx) != FFN_STATUS_OK) {
        fprintf(stderr, "consumer: ffn_ctx_create failed\n");
        return 1;
    }
    enum { T = 3, M = 5 };
    float gu[T][2 * M], h[T][M];
    for (int r = 0; r < T; r++)
        for (int c = 0; c < 2 * M; c++) gu[r][c] = 0.25f * (float)(c - M) + 0.1f * (float)r;
    struct ffn_tensor fused = ffn_tensor_2d(gu, FFN_DTYPE_F32, T, 2 * M, 2 * M), gate, up;
    struct ffn_tensor th = ffn_tensor_2d(h, FFN_DTYPE_F32, T, M, M);
    if (ffn_gate_up_split(ctx, &fused, FFN_GATE_UP_GATE_FIRST, &gate, &up) != FFN_STATUS_OK ||
        ffn_glu_forward(ctx, FFN_ACT_SILU, &th, &gate, &up) != FFN_STATUS_OK) {
        fprintf(stderr, "consumer: %s\n", ffn_ctx_last_error(ctx));
        return 1;
    }
    double worst = 0;
    for (int r = 0; r < T; r++)
        for (int c = 0; c < M; c++) {
            const double g = gu[r][c], u = gu[r][M + c];
            const double want = g / (1.0 + exp(-g)) * u, err = fabs(h[r][c] - want);
            if (err > worst) worst = err;
        }
    ffn_ctx_destroy(ctx);
    printf("consumer: ffn %d.%d.%d, swiglu max abs error %.3g\n", FFN_VERSION_MAJOR,
           FFN_VERSION_MINOR, FFN_VERSION_PATCH, worst);
    return worst < 1e-6 ? 0 : 1;
}
