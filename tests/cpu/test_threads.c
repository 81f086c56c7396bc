// test_threads.c — results are bitwise identical for 1, 2 and 3 threads (ffn_ctx_set_threads), on
// every supported ISA, for n ≈ 3M elements in strided 2-D views and in a fused [tokens, 2m]
// gate_up buffer split by ffn_gate_up_split (gate first and up first). Also checks that the gated
// result uses the gate half as the gate: it equals the kernel on contiguous copies (gate, up),
// and differs from the swapped call (up, gate); and that the gaps of strided outputs stay
// untouched.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

#define FFN__ROWS 1000
#define FFN__COLS 3000       // 3M elements
#define FFN__IN_STRIDE 3011  // row strides of the strided views (elements)
#define FFN__OUT_STRIDE 3005
#define FFN__M 1536          // fused [1000, 2·1536] gate_up: 3.07M elements
#define FFN__GAP_BYTE 0x5a
#define FFN__SEED 0x7417eadull

static const int ffn__threads[] = {1, 2, 3};

static void ffn__fill(float *p, int64_t n, uint64_t *s) {
    for (int64_t i = 0; i < n; i++)
        p[i] = i % 997 == 0 ? -INFINITY : (float)ffn_test_uniform(s, -10.0, 10.0);
}

static bool ffn__same_bytes(const void *a, const void *b, size_t bytes,
                            const char *what, const char *isa, int t) {
    return CHECK(!memcmp(a, b, bytes), "[%s] %s: %d threads differ from 1 thread",
                          isa, what, t);
}

int main(void) {
    ffn_check_begin("threads");
    struct ffn_test_ctx c[FFN_TEST_MAX_CTX];
    const int nc = ffn_test_contexts(c, false);
    uint64_t seed = FFN__SEED;
    printf("seed %#llx\n", (unsigned long long)seed);

    const size_t in_n = (size_t)FFN__ROWS * FFN__IN_STRIDE, out_n = (size_t)FFN__ROWS * FFN__OUT_STRIDE;
    float *x = ffn_test_alloc(in_n * 4), *dy = ffn_test_alloc(in_n * 4);
    uint16_t *xb = ffn_test_alloc(in_n * 2), *dyb = ffn_test_alloc(in_n * 2);
    float *y = ffn_test_alloc(out_n * 4), *y1 = ffn_test_alloc(out_n * 4);
    float *yb1 = ffn_test_alloc(out_n * 4);
    ffn__fill(x, (int64_t)in_n, &seed);
    ffn__fill(dy, (int64_t)in_n, &seed);
    for (size_t i = 0; i < in_n; i++) {
        xb[i] = ffn_f32_to_bf16(x[i]);
        dyb[i] = ffn_f32_to_bf16(dy[i]);
    }
    const size_t fused_n = (size_t)FFN__ROWS * 2 * FFN__M, half_n = (size_t)FFN__ROWS * FFN__M;
    float *fused = ffn_test_alloc(fused_n * 4), *dh = ffn_test_alloc(half_n * 4);
    float *h = ffn_test_alloc(half_n * 4), *h1 = ffn_test_alloc(half_n * 4);
    // dgate and dup: separate [rows, m] buffers (dispatch rejects two outputs whose byte extents
    // interleave, such as the halves of one fused gradient buffer).
    float *dfused = ffn_test_alloc(fused_n * 4), *dfused1 = ffn_test_alloc(fused_n * 4);
    float *g = ffn_test_alloc(half_n * 4), *u = ffn_test_alloc(half_n * 4);
    float *hc = ffn_test_alloc(half_n * 4);
    ffn__fill(fused, (int64_t)fused_n, &seed);
    ffn__fill(dh, (int64_t)half_n, &seed);

    for (int k = 0; k < nc; k++) {
        ffn_ctx_t ctx = c[k].ctx;
        const char *isa = c[k].label;
        const struct ffn_tensor tx = ffn_tensor_2d(x, FFN_DTYPE_F32, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
        const struct ffn_tensor txb = ffn_tensor_2d(xb, FFN_DTYPE_BF16, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
        const struct ffn_tensor tdyb = ffn_tensor_2d(dyb, FFN_DTYPE_BF16, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
        const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, FFN__ROWS, FFN__COLS, FFN__OUT_STRIDE);
        for (int t = 0; t < 3; t++) {
            const int nt = ffn__threads[t];
            CHECK(ffn_ctx_set_threads(ctx, nt) == FFN_STATUS_OK && ffn_ctx_threads(ctx) == nt,
                           "[%s] set_threads(%d)", isa, nt);
            // gelu_tanh forward, f32 strided -> f32 strided; the gaps must stay untouched.
            memset(y, FFN__GAP_BYTE, out_n * 4);
            CHECK(ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &ty, &tx) == FFN_STATUS_OK,
                           "[%s] act_forward: %s", isa, ffn_ctx_last_error(ctx));
            if (t == 0) {
                memcpy(y1, y, out_n * 4);
                bool gaps = true;
                for (int64_t r = 0; r < FFN__ROWS; r++)
                    for (int64_t col = FFN__COLS; col < FFN__OUT_STRIDE; col++) {
                        const unsigned char *p = (const unsigned char *)&y[r * FFN__OUT_STRIDE + col];
                        gaps = gaps && p[0] == FFN__GAP_BYTE && p[3] == FFN__GAP_BYTE;
                    }
                CHECK(gaps, "[%s] strided output: a gap between rows was written", isa);
                // A sample against the reference, so a no-op could not pass.
                for (int64_t i = 0; i < FFN__ROWS * FFN__COLS; i += 7919) {
                    const int64_t r = i / FFN__COLS, col = i % FFN__COLS;
                    const float xi = x[r * FFN__IN_STRIDE + col], yi = y[r * FFN__OUT_STRIDE + col];
                    const double e = ffn_ulp_error(FFN_KOP_ACT_FWD, 0, FFN_ACT_GELU_TANH, FFN_DTYPE_F32,
                                                   yi, ffn_ref_act(FFN_ACT_GELU_TANH, xi), xi, 1, 1);
                    CHECK(e <= ffn_ulp_bound(FFN_KOP_ACT_FWD, FFN_ACT_GELU_TANH, false),
                                   "[%s] gelu_tanh(%a) = %a (%.3g ulp)", isa, xi, yi, e);
                }
            } else {
                ffn__same_bytes(y, y1, out_n * 4, "gelu_tanh fwd f32 strided", isa, nt);
            }
            // silu backward, bf16 strided -> f32 strided.
            CHECK(ffn_act_backward(ctx, FFN_ACT_SILU, &ty, &txb, &tdyb) == FFN_STATUS_OK,
                           "[%s] act_backward: %s", isa, ffn_ctx_last_error(ctx));
            if (t == 0)
                memcpy(yb1, y, out_n * 4);
            else
                ffn__same_bytes(y, yb1, out_n * 4, "silu bwd bf16->f32 strided", isa, nt);
        }

        // Fused gate_up, both orders.
        const struct ffn_tensor tf = ffn_tensor_2d(fused, FFN_DTYPE_F32, FFN__ROWS, 2 * FFN__M, 2 * FFN__M);
        const struct ffn_tensor tdg = ffn_tensor_2d(dfused, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
        const struct ffn_tensor tdu = ffn_tensor_2d(dfused + half_n, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
        const struct ffn_tensor th = ffn_tensor_2d(h, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
        const struct ffn_tensor tdh = ffn_tensor_2d(dh, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
        for (int order = 0; order < 2; order++) {
            const char *oname = order ? "up first" : "gate first";
            struct ffn_tensor tg, tu;
            CHECK(ffn_gate_up_split(ctx, &tf, (enum ffn_gate_up_order)order, &tg,
                                                   &tu) == FFN_STATUS_OK,
                           "[%s] gate_up_split: %s", isa, ffn_ctx_last_error(ctx));
            for (int t = 0; t < 3; t++) {
                const int nt = ffn__threads[t];
                ffn_ctx_set_threads(ctx, nt);
                CHECK(ffn_glu_forward(ctx, FFN_ACT_SILU, &th, &tg, &tu) == FFN_STATUS_OK,
                               "[%s] glu_forward: %s", isa, ffn_ctx_last_error(ctx));
                CHECK(ffn_glu_backward(ctx, FFN_ACT_GELU_TANH, &tdg, &tdu, &tg, &tu, &tdh) ==
                                         FFN_STATUS_OK,
                               "[%s] glu_backward: %s", isa, ffn_ctx_last_error(ctx));
                if (t == 0) {
                    memcpy(h1, h, half_n * 4);
                    memcpy(dfused1, dfused, fused_n * 4);
                } else {
                    ffn__same_bytes(h, h1, half_n * 4, order ? "swiglu fwd, fused up|gate" : "swiglu fwd, fused gate|up", isa, nt);
                    ffn__same_bytes(dfused, dfused1, fused_n * 4, "geglu bwd, fused", isa, nt);
                }
            }
            // The gate half is the gate: equal to the call on contiguous copies, unlike the swap.
            const int64_t g0 = order ? FFN__M : 0, u0 = order ? 0 : FFN__M;
            for (int64_t r = 0; r < FFN__ROWS; r++) {
                memcpy(g + r * FFN__M, fused + r * 2 * FFN__M + g0, FFN__M * 4);
                memcpy(u + r * FFN__M, fused + r * 2 * FFN__M + u0, FFN__M * 4);
            }
            const struct ffn_tensor cg = ffn_tensor_vec(g, FFN_DTYPE_F32, (int64_t)half_n);
            const struct ffn_tensor cu = ffn_tensor_vec(u, FFN_DTYPE_F32, (int64_t)half_n);
            const struct ffn_tensor ch = ffn_tensor_vec(hc, FFN_DTYPE_F32, (int64_t)half_n);
            ffn_glu_forward(ctx, FFN_ACT_SILU, &ch, &cg, &cu);
            CHECK(!memcmp(hc, h, half_n * 4),
                           "[%s] fused %s: h differs from swiglu(gate, up) on contiguous copies", isa, oname);
            ffn_glu_forward(ctx, FFN_ACT_SILU, &ch, &cu, &cg);
            int64_t same = 0;
            for (size_t i = 0; i < half_n; i++) same += ffn_test_same(hc[i], h[i]);
            CHECK(same < (int64_t)half_n / 100,
                           "[%s] fused %s: h equals swiglu(up, gate) on %lld of %zu elements", isa,
                           oname, (long long)same, half_n);
        }
        printf("  [%s] identical for 1, 2, 3 threads\n", isa);
    }
    ffn_test_contexts_free(c, nc);
    free(x), free(dy), free(xb), free(dyb), free(y), free(y1), free(yb1);
    free(fused), free(dh), free(h), free(h1), free(dfused), free(dfused1), free(g), free(u), free(hc);
    return ffn_check_summary();
}
