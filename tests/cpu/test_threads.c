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
#define FFN__M 1536  // fused [1000, 2·1536] gate_up: 3.07M elements
#define FFN__GAP_BYTE 0x5a
#define FFN__SEED 0x7417eadull

static const int ffn__threads[] = {1, 2, 3};

static void ffn__fill(float *p, int64_t n, uint64_t *s) {
    for (int64_t i = 0; i < n; i++)
        p[i] = i % 997 == 0 ? -INFINITY : (float)ffn_test_uniform(s, -10.0, 10.0);
}

static bool ffn__same_bytes(const void *a, const void *b, size_t bytes, const char *what,
                            const char *isa, int t) {
    return CHECK(!memcmp(a, b, bytes), "[%s] %s: %d threads differ from 1 thread", isa, what, t);
}

// The inputs, the outputs of each thread count, and the first run's outputs (1 thread).
struct ffn__bufs {
    size_t in_n, out_n, fused_n, half_n;
    float *x, *dy;        // [rows, in stride] f32 inputs
    uint16_t *xb, *dyb;   // the same rounded to bf16
    float *y, *y1, *yb1;  // [rows, out stride]: this run, gelu_tanh fwd and silu bwd at 1 thread
    float *fused, *dh;    // [rows, 2m] gate_up, [rows, m] upstream gradient
    float *h, *h1;        // [rows, m]: this run, 1 thread
    // dgate and dup: separate [rows, m] buffers (dispatch rejects two outputs whose byte extents
    // interleave, such as the halves of one fused gradient buffer).
    float *dfused, *dfused1;
    float *g, *u, *hc;  // contiguous copies of the gate and up halves, their result
};

static void ffn__bufs_make(struct ffn__bufs *B, uint64_t *seed) {
    B->in_n = (size_t)FFN__ROWS * FFN__IN_STRIDE, B->out_n = (size_t)FFN__ROWS * FFN__OUT_STRIDE;
    B->fused_n = (size_t)FFN__ROWS * 2 * FFN__M, B->half_n = (size_t)FFN__ROWS * FFN__M;
    B->x = ffn_test_alloc(B->in_n * 4), B->dy = ffn_test_alloc(B->in_n * 4);
    B->xb = ffn_test_alloc(B->in_n * 2), B->dyb = ffn_test_alloc(B->in_n * 2);
    B->y = ffn_test_alloc(B->out_n * 4), B->y1 = ffn_test_alloc(B->out_n * 4);
    B->yb1 = ffn_test_alloc(B->out_n * 4);
    ffn__fill(B->x, (int64_t)B->in_n, seed);
    ffn__fill(B->dy, (int64_t)B->in_n, seed);
    for (size_t i = 0; i < B->in_n; i++) {
        B->xb[i] = ffn_f32_to_bf16(B->x[i]);
        B->dyb[i] = ffn_f32_to_bf16(B->dy[i]);
    }
    B->fused = ffn_test_alloc(B->fused_n * 4), B->dh = ffn_test_alloc(B->half_n * 4);
    B->h = ffn_test_alloc(B->half_n * 4), B->h1 = ffn_test_alloc(B->half_n * 4);
    B->dfused = ffn_test_alloc(B->fused_n * 4), B->dfused1 = ffn_test_alloc(B->fused_n * 4);
    B->g = ffn_test_alloc(B->half_n * 4), B->u = ffn_test_alloc(B->half_n * 4);
    B->hc = ffn_test_alloc(B->half_n * 4);
    ffn__fill(B->fused, (int64_t)B->fused_n, seed);
    ffn__fill(B->dh, (int64_t)B->half_n, seed);
}

static void ffn__bufs_free(struct ffn__bufs *B) {
    free(B->x), free(B->dy), free(B->xb), free(B->dyb), free(B->y), free(B->y1), free(B->yb1);
    free(B->fused), free(B->dh), free(B->h), free(B->h1), free(B->dfused), free(B->dfused1);
    free(B->g), free(B->u), free(B->hc);
}

// The first (1-thread) gelu_tanh result: the gaps between the output rows untouched, and a sample
// within the ulp bound of the reference, so that a no-op could not pass.
static void ffn__check_first_gelu(const struct ffn__bufs *B, const char *isa) {
    bool gaps = true;
    for (int64_t r = 0; r < FFN__ROWS; r++)
        for (int64_t col = FFN__COLS; col < FFN__OUT_STRIDE; col++) {
            const unsigned char *p = (const unsigned char *)&B->y[r * FFN__OUT_STRIDE + col];
            gaps = gaps && p[0] == FFN__GAP_BYTE && p[3] == FFN__GAP_BYTE;
        }
    CHECK(gaps, "[%s] strided output: a gap between rows was written", isa);
    for (int64_t i = 0; i < FFN__ROWS * FFN__COLS; i += 7919) {
        const int64_t r = i / FFN__COLS, col = i % FFN__COLS;
        const float xi = B->x[r * FFN__IN_STRIDE + col], yi = B->y[r * FFN__OUT_STRIDE + col];
        const double e = ffn_ulp_error(FFN_KOP_ACT_FWD, 0, FFN_ACT_GELU_TANH, FFN_DTYPE_F32, yi,
                                       ffn_ref_act(FFN_ACT_GELU_TANH, xi), xi, 1, 1);
        CHECK(e <= ffn_ulp_bound(FFN_KOP_ACT_FWD, FFN_ACT_GELU_TANH, false),
              "[%s] gelu_tanh(%a) = %a (%.3g ulp)", isa, xi, yi, e);
    }
}

// Strided views: gelu_tanh forward f32 -> f32 and silu backward bf16 -> f32, each thread count
// bitwise equal to 1 thread.
static void ffn__check_strided(ffn_ctx_t ctx, const char *isa, struct ffn__bufs *B) {
    const struct ffn_tensor tx =
        ffn_tensor_2d(B->x, FFN_DTYPE_F32, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
    const struct ffn_tensor txb =
        ffn_tensor_2d(B->xb, FFN_DTYPE_BF16, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
    const struct ffn_tensor tdyb =
        ffn_tensor_2d(B->dyb, FFN_DTYPE_BF16, FFN__ROWS, FFN__COLS, FFN__IN_STRIDE);
    const struct ffn_tensor ty =
        ffn_tensor_2d(B->y, FFN_DTYPE_F32, FFN__ROWS, FFN__COLS, FFN__OUT_STRIDE);
    for (int t = 0; t < 3; t++) {
        const int nt = ffn__threads[t];
        CHECK(ffn_ctx_set_threads(ctx, nt) == FFN_STATUS_OK && ffn_ctx_threads(ctx) == nt,
              "[%s] set_threads(%d)", isa, nt);
        // gelu_tanh forward, f32 strided -> f32 strided; the gaps must stay untouched.
        memset(B->y, FFN__GAP_BYTE, B->out_n * 4);
        CHECK(ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &ty, &tx) == FFN_STATUS_OK,
              "[%s] act_forward: %s", isa, ffn_ctx_last_error(ctx));
        if (t == 0) {
            memcpy(B->y1, B->y, B->out_n * 4);
            ffn__check_first_gelu(B, isa);
        } else {
            ffn__same_bytes(B->y, B->y1, B->out_n * 4, "gelu_tanh fwd f32 strided", isa, nt);
        }
        // silu backward, bf16 strided -> f32 strided.
        CHECK(ffn_act_backward(ctx, FFN_ACT_SILU, &ty, &txb, &tdyb) == FFN_STATUS_OK,
              "[%s] act_backward: %s", isa, ffn_ctx_last_error(ctx));
        if (t == 0)
            memcpy(B->yb1, B->y, B->out_n * 4);
        else
            ffn__same_bytes(B->y, B->yb1, B->out_n * 4, "silu bwd bf16->f32 strided", isa, nt);
    }
}

// The gate half is the gate: h equals swiglu on contiguous copies of (gate, up), unlike the
// swapped call (up, gate).
static void ffn__check_gate_is_gate(ffn_ctx_t ctx, const char *isa, struct ffn__bufs *B,
                                    int order) {
    const char *oname = order ? "up first" : "gate first";
    const int64_t g0 = order ? FFN__M : 0, u0 = order ? 0 : FFN__M;
    for (int64_t r = 0; r < FFN__ROWS; r++) {
        memcpy(B->g + r * FFN__M, B->fused + r * 2 * FFN__M + g0, FFN__M * 4);
        memcpy(B->u + r * FFN__M, B->fused + r * 2 * FFN__M + u0, FFN__M * 4);
    }
    const struct ffn_tensor cg = ffn_tensor_vec(B->g, FFN_DTYPE_F32, (int64_t)B->half_n);
    const struct ffn_tensor cu = ffn_tensor_vec(B->u, FFN_DTYPE_F32, (int64_t)B->half_n);
    const struct ffn_tensor ch = ffn_tensor_vec(B->hc, FFN_DTYPE_F32, (int64_t)B->half_n);
    ffn_glu_forward(ctx, FFN_ACT_SILU, &ch, &cg, &cu);
    CHECK(!memcmp(B->hc, B->h, B->half_n * 4),
          "[%s] fused %s: h differs from swiglu(gate, up) on contiguous copies", isa, oname);
    ffn_glu_forward(ctx, FFN_ACT_SILU, &ch, &cu, &cg);
    int64_t same = 0;
    for (size_t i = 0; i < B->half_n; i++) same += ffn_test_same(B->hc[i], B->h[i]);
    CHECK(same < (int64_t)B->half_n / 100,
          "[%s] fused %s: h equals swiglu(up, gate) on %lld of %zu elements", isa, oname,
          (long long)same, B->half_n);
}

// A fused [rows, 2m] gate_up split in one order: swiglu forward and geglu backward, each thread
// count bitwise equal to 1 thread; then the gate half checked to be the gate.
static void ffn__check_fused(ffn_ctx_t ctx, const char *isa, struct ffn__bufs *B, int order) {
    const size_t half_n = B->half_n, fused_n = B->fused_n;
    const struct ffn_tensor tf =
        ffn_tensor_2d(B->fused, FFN_DTYPE_F32, FFN__ROWS, 2 * FFN__M, 2 * FFN__M);
    const struct ffn_tensor tdg =
        ffn_tensor_2d(B->dfused, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
    const struct ffn_tensor tdu =
        ffn_tensor_2d(B->dfused + half_n, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
    const struct ffn_tensor th = ffn_tensor_2d(B->h, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
    const struct ffn_tensor tdh = ffn_tensor_2d(B->dh, FFN_DTYPE_F32, FFN__ROWS, FFN__M, FFN__M);
    struct ffn_tensor tg, tu;
    CHECK(ffn_gate_up_split(ctx, &tf, (enum ffn_gate_up_order)order, &tg, &tu) == FFN_STATUS_OK,
          "[%s] gate_up_split: %s", isa, ffn_ctx_last_error(ctx));
    for (int t = 0; t < 3; t++) {
        const int nt = ffn__threads[t];
        ffn_ctx_set_threads(ctx, nt);
        CHECK(ffn_glu_forward(ctx, FFN_ACT_SILU, &th, &tg, &tu) == FFN_STATUS_OK,
              "[%s] glu_forward: %s", isa, ffn_ctx_last_error(ctx));
        CHECK(ffn_glu_backward(ctx, FFN_ACT_GELU_TANH, &tdg, &tdu, &tg, &tu, &tdh) == FFN_STATUS_OK,
              "[%s] glu_backward: %s", isa, ffn_ctx_last_error(ctx));
        if (t == 0) {
            memcpy(B->h1, B->h, half_n * 4);
            memcpy(B->dfused1, B->dfused, fused_n * 4);
        } else {
            ffn__same_bytes(B->h, B->h1, half_n * 4,
                            order ? "swiglu fwd, fused up|gate" : "swiglu fwd, fused gate|up", isa,
                            nt);
            ffn__same_bytes(B->dfused, B->dfused1, fused_n * 4, "geglu bwd, fused", isa, nt);
        }
    }
    ffn__check_gate_is_gate(ctx, isa, B, order);
}

int main(void) {
    ffn_check_begin("threads");
    struct ffn_test_ctx c[FFN_TEST_MAX_CTX];
    const int nc = ffn_test_contexts(c, false);
    uint64_t seed = FFN__SEED;
    printf("seed %#llx\n", (unsigned long long)seed);
    struct ffn__bufs B;
    ffn__bufs_make(&B, &seed);
    for (int k = 0; k < nc; k++) {
        ffn__check_strided(c[k].ctx, c[k].label, &B);
        for (int order = 0; order < 2; order++) ffn__check_fused(c[k].ctx, c[k].label, &B, order);
        printf("  [%s] identical for 1, 2, 3 threads\n", c[k].label);
    }
    ffn_test_contexts_free(c, nc);
    ffn__bufs_free(&B);
    return ffn_check_summary();
}
