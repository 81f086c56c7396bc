// test_block_api.c — FFN block API properties beyond the gradient sweep: validation messages at
// the boundary, NaN weights, bf16/f16 caches, padded row strides, TILED vs SEPARATE schedules,
// gradient accumulation, thread counts, in-place dx, the memory report, n_tokens = 0, and the
// sizing helpers (LLaMA width rule, cost model) against published numbers.
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "check.h"
#include "ffn.h"

#define SEED 7u
// Same logical computation, other GEMM blocking / thread split: f32 summation-order noise.
#define TOL_SAME 2e-6
// bf16 GEMMs against f32 ones on the same (rounded) weights: x and h rounded to bf16 (2^-9
// relative each), sums of 32-48 terms: test_block_grad.c states the bound.
#define TOL_BF16 2e-2

static ffn_ctx_t ctx;
static uint64_t rng = SEED;

static float rnd(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

// |a - b| ≤ tol · max|a| elementwise.
static void expect_close(const char *what, const float *a, const float *b, int64_t n, double tol) {
    double s = 0;
    for (int64_t k = 0; k < n; k++) s = fabs(a[k]) > s ? fabs(a[k]) : s;
    int bad = 0;
    for (int64_t k = 0; k < n && bad < 3; k++)
        bad += !CHECK_NEAR(b[k], a[k], tol * (s > 0 ? s : 1), "%s[%" PRId64 "]", what, k);
}

// --- a mid-size gated block with biases, fused [gate | up] stored [out, in] -----------------
enum { D = 32, M = 48, T = 37 };
static float Wgu[2 * M * D], Wd[D * M], Bgu[2 * M], Bd[D], X[T * D], DY[T * D];

static struct ffn_block_spec spec_fused(void) {
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = D;
    s.d_ff = M;
    s.act = FFN_ACT_SILU;
    s.gate_up_layout = FFN_GATE_UP_FUSED;
    s.bias_gate = s.bias_up = s.bias_down = true;
    return s;
}

static struct ffn_block_weights weights_fused(void) {
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    w.gate_up = ffn_weight_dense(Wgu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    w.down = ffn_weight_dense(Wd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    w.b_gate_up = ffn_weight_dense(Bgu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    w.b_down = ffn_weight_dense(Bd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    return w;
}

struct result {
    float y[T * D], dx[T * D], gw[2 * M * D], gd[D * M], gb[2 * M], gbd[D];
};

// Runs forward + backward; returns the status of the first failing call.
static enum ffn_status run(const struct ffn_block_weights *w, const struct ffn_block_opts *o,
                           enum ffn_block_policy pol, struct result *r) {
    struct ffn_block_spec s = spec_fused();
    ffn_block_t b;
    enum ffn_status st = ffn_block_create(ctx, &s, w, o, &b);
    if (st) return st;
    struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(r->y, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdy = ffn_tensor_2d(DY, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdx = ffn_tensor_2d(r->dx, FFN_DTYPE_F32, T, D, D);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.gate_up = r->gw, g.down = r->gd, g.b_gate_up = r->gb, g.b_down = r->gbd;
    if (!(st = ffn_block_forward(ctx, b, &ty, &tx, pol)))
        st = ffn_block_backward(ctx, b, &g, &tdx, &tdy);
    ffn_block_destroy(b);
    return st;
}

static void test_variants(void) {
    static struct result ref, r;
    struct ffn_block_weights w = weights_fused();
    CHECK(run(&w, NULL, FFN_BLOCK_POLICY_SAVE, &ref) == FFN_STATUS_OK, "reference run");

    // TILED with small tiles (and a ragged last tile), both policies: same results.
    for (int pol = 1; pol <= 2; pol++) {
        struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
        o.schedule = FFN_BLOCK_SCHEDULE_TILED;
        o.tile_rows = 5;
        CHECK(run(&w, &o, (enum ffn_block_policy)pol, &r) == FFN_STATUS_OK, "tiled run");
        expect_close("tiled y", ref.y, r.y, T * D, TOL_SAME);
        expect_close("tiled dx", ref.dx, r.dx, T * D, TOL_SAME);
        expect_close("tiled dW_gate_up", ref.gw, r.gw, 2 * M * D, TOL_SAME);
        expect_close("tiled dW_down", ref.gd, r.gd, D * M, TOL_SAME);
        expect_close("tiled db_gate_up", ref.gb, r.gb, 2 * M, TOL_SAME);
    }

    // Padded row strides (a view into a wider array): same results, no copy.
    static float pad[2 * M * (D + 3)];
    for (int j = 0; j < 2 * M; j++) memcpy(pad + j * (D + 3), Wgu + j * D, D * sizeof(float));
    struct ffn_block_weights wp = w;
    wp.gate_up.data = pad;
    wp.gate_up.row_stride = D + 3;
    CHECK(run(&wp, NULL, FFN_BLOCK_POLICY_SAVE, &r) == FFN_STATUS_OK, "padded run");
    expect_close("padded y", ref.y, r.y, T * D, TOL_SAME);
    expect_close("padded dW_gate_up", ref.gw, r.gw, 2 * M * D, TOL_SAME);

    // One thread vs the default: the same values up to summation order. The call runs on the
    // context's count and leaves the caller's OpenMP setting as it was.
    ffn_ctx_set_threads(ctx, 1);
#ifdef _OPENMP
    const int omp_before = omp_get_max_threads();
#endif
    CHECK(run(&w, NULL, FFN_BLOCK_POLICY_RECOMPUTE, &r) == FFN_STATUS_OK, "1-thread run");
#ifdef _OPENMP
    CHECK(omp_get_max_threads() == omp_before, "OpenMP threads %d after the call, %d before",
          omp_get_max_threads(), omp_before);
#endif
    ffn_ctx_set_threads(ctx, 0);
    expect_close("1 thread y", ref.y, r.y, T * D, TOL_SAME);
    expect_close("1 thread dx", ref.dx, r.dx, T * D, TOL_SAME);
    expect_close("1 thread dW_down", ref.gd, r.gd, D * M, TOL_SAME);

    // bf16 weights are used as they lie (bf16 GEMMs: x and h rounded to bf16, f32 accumulation):
    // close to an f32 run on the rounded weights, and only the biases are copied (to f32).
    // f16 weights: oneDNN has no f16 matmul, so an exact f32 copy: equal to that f32 run.
    for (int dt = FFN_DTYPE_BF16; dt <= FFN_DTYPE_F16; dt++) {
        static uint16_t h_gu[2 * M * D], h_d[D * M], h_b[2 * M], h_bd[D];
        static float r_gu[2 * M * D], r_d[D * M], r_b[2 * M], r_bd[D];
        uint16_t (*to)(float) = dt == FFN_DTYPE_BF16 ? ffn_f32_to_bf16 : ffn_f32_to_f16;
        float (*from)(uint16_t) = dt == FFN_DTYPE_BF16 ? ffn_bf16_to_f32 : ffn_f16_to_f32;
        for (int k = 0; k < 2 * M * D; k++) r_gu[k] = from(h_gu[k] = to(Wgu[k]));
        for (int k = 0; k < D * M; k++) r_d[k] = from(h_d[k] = to(Wd[k]));
        for (int k = 0; k < 2 * M; k++) r_b[k] = from(h_b[k] = to(Bgu[k]));
        for (int k = 0; k < D; k++) r_bd[k] = from(h_bd[k] = to(Bd[k]));
        struct ffn_block_weights wh = w, wr = w;
        wh.gate_up.data = h_gu, wh.down.data = h_d, wh.b_gate_up.data = h_b, wh.b_down.data = h_bd;
        wh.gate_up.dtype = wh.down.dtype = wh.b_gate_up.dtype = wh.b_down.dtype =
            (enum ffn_dtype)dt;
        wr.gate_up.data = r_gu, wr.down.data = r_d, wr.b_gate_up.data = r_b, wr.b_down.data = r_bd;
        static struct result a, b2;
        CHECK(run(&wr, NULL, FFN_BLOCK_POLICY_SAVE, &a) == FFN_STATUS_OK, "rounded f32 run");
        CHECK(run(&wh, NULL, FFN_BLOCK_POLICY_SAVE, &b2) == FFN_STATUS_OK, "%s run",
              ffn_dtype_name(dt));
        const double tol = dt == FFN_DTYPE_BF16 ? TOL_BF16 : 0.0;
        expect_close("half y", a.y, b2.y, T * D, tol);
        expect_close("half dx", a.dx, b2.dx, T * D, tol);
        expect_close("half dW", a.gw, b2.gw, 2 * M * D, tol);
        struct ffn_block_spec s = spec_fused();
        ffn_block_t blk;
        CHECK(ffn_block_create(ctx, &s, &wh, NULL, &blk) == FFN_STATUS_OK, "create half");
        struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
        ffn_block_info(ctx, blk, T, &info);
        const size_t biases = (size_t)(2 * M + D) * sizeof(float);
        const size_t want =
            dt == FFN_DTYPE_BF16 ? biases : (size_t)(3 * M * D) * sizeof(float) + biases;
        CHECK(info.cache_bytes == want, "%s cache_bytes %zu, expected %zu", ffn_dtype_name(dt),
              info.cache_bytes, want);
        CHECK(info.weight_bytes == (size_t)(3 * M * D + 2 * M + D) * 2, "weight_bytes %zu",
              info.weight_bytes);
        CHECK(info.compute_dtype == (dt == FFN_DTYPE_BF16 ? FFN_DTYPE_BF16 : FFN_DTYPE_F32),
              "%s compute dtype %s", ffn_dtype_name(dt), ffn_dtype_name(info.compute_dtype));
        ffn_block_destroy(blk);
    }
}

static void test_training_rules(void) {
    struct ffn_block_spec s = spec_fused();
    struct ffn_block_weights w = weights_fused();
    ffn_block_t b;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_OK, "create");
    static float y[T * D], dx[T * D], dx2[T * D], g1[D * M], g2[D * M], gb[D];
    struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdy = ffn_tensor_2d(DY, FFN_DTYPE_F32, T, D, D);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.down = g1;

    // Backward needs a pending training forward, and consumes it.
    CHECK(ffn_block_backward(ctx, b, &g, &tdx, &tdy) == FFN_STATUS_INVALID_ARG, "no forward");
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_OK, "inference");
    CHECK(ffn_block_backward(ctx, b, &g, &tdx, &tdy) == FFN_STATUS_INVALID_ARG, "after NONE");
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_SAVE) == FFN_STATUS_OK, "save");
    CHECK(ffn_block_backward(ctx, b, &g, &tdx, &tdy) == FFN_STATUS_OK, "backward");
    CHECK(ffn_block_backward(ctx, b, &g, &tdx, &tdy) == FFN_STATUS_INVALID_ARG, "second backward");

    // Accumulation: two backward passes with accumulate = 2 × one.
    memcpy(g2, g1, sizeof g1);
    g.down = g2;
    g.accumulate = true;
    ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_RECOMPUTE);
    CHECK(ffn_block_backward(ctx, b, &g, NULL, &tdy) == FFN_STATUS_OK, "accumulate");
    for (int k = 0; k < D * M; k++) g1[k] *= 2;
    expect_close("accumulated dW_down", g1, g2, D * M, TOL_SAME);

    // dx may be the dy view itself (in place): same values as a separate dx.
    static float dyc[T * D];
    memcpy(dyc, DY, sizeof dyc);
    struct ffn_tensor tdyc = ffn_tensor_2d(dyc, FFN_DTYPE_F32, T, D, D);
    ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_SAVE);
    CHECK(ffn_block_backward(ctx, b, NULL, &tdx, &tdy) == FFN_STATUS_OK, "dx only");
    ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_SAVE);
    CHECK(ffn_block_backward(ctx, b, NULL, &tdyc, &tdyc) == FFN_STATUS_OK, "dx == dy");
    expect_close("in-place dx", dx, dyc, T * D, 0.0);
    (void)dx2;

    // Overlaps and wrong gradients are refused with a message.
    struct ffn_tensor tyx = ffn_tensor_2d(X + 3, FFN_DTYPE_F32, T - 1, D, D);
    struct ffn_tensor txs = ffn_tensor_2d(X, FFN_DTYPE_F32, T - 1, D, D);
    CHECK(ffn_block_forward(ctx, b, &tyx, &txs, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_INVALID_ARG,
          "y overlapping x");
    struct ffn_block_grads bad = FFN_BLOCK_GRADS_INIT;
    bad.gate = g1;  // a fused block has no separate gate
    ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_SAVE);
    CHECK(ffn_block_backward(ctx, b, &bad, &tdx, &tdy) == FFN_STATUS_INVALID_ARG, "grads.gate");
    CHECK(strstr(ffn_ctx_last_error(ctx), "grads.gate") != NULL, "message names grads.gate");
    struct ffn_tensor tdy_short = ffn_tensor_2d(DY, FFN_DTYPE_F32, T - 1, D, D);
    CHECK(ffn_block_backward(ctx, b, NULL, NULL, &tdy_short) == FFN_STATUS_INVALID_ARG, "dy rows");

    // Memory report: SAVE holds T·2m floats of P and T·m of h, RECOMPUTE nothing; f32 weights
    // are not copied.
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    CHECK(ffn_block_info(ctx, b, 100, &info) == FFN_STATUS_OK, "info");
    CHECK(info.saved_bytes_save == 100 * 3 * M * sizeof(float), "saved %zu", info.saved_bytes_save);
    CHECK(info.saved_bytes_recompute == 0 && info.cache_bytes == 0, "recompute / cache bytes");
    CHECK(info.n_params == 3 * D * M + 2 * M + D, "n_params %" PRId64, info.n_params);

    // n_tokens = 0: valid no-op; gradients are zero.
    struct ffn_tensor t0 = ffn_tensor_2d(X, FFN_DTYPE_F32, 0, D, D);
    struct ffn_tensor t0y = ffn_tensor_2d(y, FFN_DTYPE_F32, 0, D, D);
    g = (struct ffn_block_grads)FFN_BLOCK_GRADS_INIT;
    g.b_down = gb;
    gb[0] = 5;
    CHECK(ffn_block_forward(ctx, b, &t0y, &t0, FFN_BLOCK_POLICY_SAVE) == FFN_STATUS_OK, "T=0 fwd");
    CHECK(ffn_block_backward(ctx, b, &g, NULL, &t0y) == FFN_STATUS_OK, "T=0 bwd");
    CHECK(gb[0] == 0.0f, "T=0 gradient %g", gb[0]);
    ffn_block_destroy(b);
}

static void test_validation(void) {
    struct ffn_block_spec s = spec_fused();
    struct ffn_block_weights w = weights_fused();
    ffn_block_t b = NULL;
    // A checkpoint whose gate_up_proj has an odd row count.
    w.gate_up.rows = 343;
    w.gate_up.cols = D;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "odd rows");
    CHECK(strstr(ffn_ctx_last_error(ctx),
                 "gate_up has 343 rows; a fused gate/up needs an even count"),
          "odd-row message");
    w.gate_up.rows = 2 * M + 2;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "wrong rows");
    w.gate_up.rows = 2 * M;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_OK, "declared shape ok");
    ffn_block_destroy(b);
    // Blocked layout: d_ff must split into the groups.
    s.gate_up_layout = FFN_GATE_UP_BLOCKED;
    s.tp_groups = 5;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "tp_groups");
    CHECK(strstr(ffn_ctx_last_error(ctx), "d_ff=48 is not a multiple of tp_groups=5"),
          "tp message");
    s = spec_fused();
    // Tensors the spec does not use, biases it does not have, missing bias data.
    w.gate = w.down;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "stray gate");
    w = weights_fused();
    w.b_down.data = NULL;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "missing b_down");
    w = weights_fused();
    s.bias_down = false;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "unexpected b_down");
    s = spec_fused();
    s.bias_gate = false;  // a fused bias covers both halves
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "half a fused bias");
    s = spec_fused();
    s.size = 8;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "spec.size");
    s = spec_fused();
    s.d_ff = 0;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "d_ff 0");
    s = spec_fused();
    w.down.row_stride = 3;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "row_stride < cols");
    w = weights_fused();
    w.down.dtype = (enum ffn_dtype)9;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "dtype");
    CHECK(b == NULL, "block_out is NULL after a failure");
    CHECK(ffn_block_create(ctx, NULL, &w, NULL, &b) == FFN_STATUS_INVALID_ARG, "NULL spec");
    ffn_block_destroy(NULL);

    // NaN-filled weights: no crash, NaN out, OK status.
    static float nan_w[2 * M * D];
    for (int k = 0; k < 2 * M * D; k++) nan_w[k] = NAN;
    w = weights_fused();
    w.gate_up.data = nan_w;
    static struct result r;
    CHECK(run(&w, NULL, FFN_BLOCK_POLICY_SAVE, &r) == FFN_STATUS_OK, "NaN weights");
    CHECK(isnan(r.y[0]) && isnan(r.dx[0]), "NaN propagates (y %g, dx %g)", r.y[0], r.dx[0]);

    // x of another dtype or width.
    w = weights_fused();
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_OK, "create");
    static float y[T * D];
    struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F16, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_INVALID_ARG,
          "f16 x");
    CHECK(strstr(ffn_ctx_last_error(ctx), "x is f16; blocks take f32 or bf16"), "f16 message");
    tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D - 1, D);
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_INVALID_ARG,
          "width");
    CHECK(strstr(ffn_ctx_last_error(ctx), "d_model=32"), "width message");
    // The matrix-multiply implementation is reported after a forward.
    tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_SAVE) == FFN_STATUS_OK, "forward");
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    CHECK(ffn_block_info(ctx, b, T, &info) == FFN_STATUS_OK && info.gemm_impl[0], "gemm_impl");
    // Gradients of a dtype other than f32 / bf16.
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    static float gd[D * M];
    g.down = gd;
    g.dtype = FFN_DTYPE_F16;
    struct ffn_tensor tdy = ffn_tensor_2d(DY, FFN_DTYPE_F32, T, D, D);
    CHECK(ffn_block_backward(ctx, b, &g, NULL, &tdy) == FFN_STATUS_INVALID_ARG, "f16 grads");
    CHECK(strstr(ffn_ctx_last_error(ctx), "grads.dtype=f16"), "grads dtype message");
    ffn_block_destroy(b);

    // Options: tf32 is a GPU mode; the saved pre-activations are f32 or bf16.
    struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
    o.math = FFN_BLOCK_MATH_TF32;
    CHECK(ffn_block_create(ctx, &s, &w, &o, &b) == FFN_STATUS_UNSUPPORTED, "tf32");
    CHECK(strstr(ffn_ctx_last_error(ctx), "FFN_BLOCK_MATH_TF32"), "tf32 message");
    o = (struct ffn_block_opts)FFN_BLOCK_OPTS_INIT;
    o.save_dtype = FFN_DTYPE_F16;
    CHECK(ffn_block_create(ctx, &s, &w, &o, &b) == FFN_STATUS_INVALID_ARG, "save f16");
    o = (struct ffn_block_opts)FFN_BLOCK_OPTS_INIT;
    o.math = (enum ffn_block_math)7;
    CHECK(ffn_block_create(ctx, &s, &w, &o, &b) == FFN_STATUS_INVALID_ARG, "math 7");
    // An options struct of the earlier, shorter layout (before math and save_dtype) is accepted.
    o = (struct ffn_block_opts)FFN_BLOCK_OPTS_INIT;
    o.size = offsetof(struct ffn_block_opts, math);
    CHECK(ffn_block_create(ctx, &s, &w, &o, &b) == FFN_STATUS_OK, "short opts");
    ffn_block_destroy(b);
    // MATH_BF16 on f32 weights: a bf16 copy of the matrices, reported.
    o = (struct ffn_block_opts)FFN_BLOCK_OPTS_INIT;
    o.math = FFN_BLOCK_MATH_BF16;
    CHECK(ffn_block_create(ctx, &s, &w, &o, &b) == FFN_STATUS_OK, "math bf16");
    info = (struct ffn_block_info)FFN_BLOCK_INFO_INIT;
    ffn_block_info(ctx, b, T, &info);
    CHECK(info.cache_bytes == (size_t)(3 * M * D) * 2 && info.compute_dtype == FFN_DTYPE_BF16,
          "math bf16: cache %zu, compute %s", info.cache_bytes, ffn_dtype_name(info.compute_dtype));
    ffn_block_destroy(b);
}

static void test_sizing(void) {
    // Published widths: LLaMA-7B, LLaMA-2-70B, LLaMA-3-8B.
    const struct {
        int64_t d;
        double mult;
        int64_t mo, want;
    } cases[] = {
        {4096, 1.0, 256, 11008},
        {8192, 1.3, 4096, 28672},
        {4096, 1.3, 1024, 14336},
        {5120, 1.0, 256, 13824},  // LLaMA-13B
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t m = 0;
        CHECK(
            ffn_block_size_rule(ctx, cases[k].d, cases[k].mult, cases[k].mo, &m) == FFN_STATUS_OK &&
                m == cases[k].want,
            "d=%" PRId64 " x%g multiple_of=%" PRId64 ": m=%" PRId64 ", expected %" PRId64,
            cases[k].d, cases[k].mult, cases[k].mo, m, cases[k].want);
    }
    int64_t m;
    CHECK(ffn_block_size_rule(ctx, 0, 1.0, 256, &m) == FFN_STATUS_INVALID_ARG, "d 0");
    CHECK(ffn_block_size_rule(ctx, 4096, NAN, 256, &m) == FFN_STATUS_INVALID_ARG, "NaN multiplier");
    CHECK(ffn_block_size_rule(ctx, 4096, 1.0, 0, &m) == FFN_STATUS_INVALID_ARG, "multiple_of 0");

    // Cost: GPT-2 small (plain, biases) and LLaMA-7B (gated) parameter and FLOP counts.
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = 768, s.d_ff = 3072, s.gated = false, s.bias_up = s.bias_down = true;
    struct ffn_block_cost c = FFN_BLOCK_COST_INIT;
    CHECK(ffn_block_cost(ctx, &s, 512, FFN_DTYPE_F32, FFN_DTYPE_F32, &c) == FFN_STATUS_OK, "cost");
    CHECK(c.n_params == 2 * 768 * 3072 + 3072 + 768, "gpt2 params %" PRId64, c.n_params);
    CHECK(c.flops_fwd == 2.0 * 512 * 768 * 3072 * 2 + 512.0 * (3072 + 768), "gpt2 flops %g",
          c.flops_fwd);
    s = (struct ffn_block_spec)FFN_BLOCK_SPEC_INIT;
    s.d_model = 4096, s.d_ff = 11008;
    CHECK(ffn_block_cost(ctx, &s, 1, FFN_DTYPE_BF16, FFN_DTYPE_BF16, &c) == FFN_STATUS_OK, "cost");
    CHECK(c.n_params == 3LL * 4096 * 11008, "llama params %" PRId64, c.n_params);
    CHECK(c.flops_bwd == 2 * c.flops_fwd, "bwd = 2 fwd");
    CHECK(c.flops_bwd_recompute == c.flops_bwd + 2.0 * 4096 * 2 * 11008, "recompute flops");
    // One token in bf16: ~1 FLOP per byte (2 FLOPs per 2-byte weight).
    CHECK(c.intensity_fwd > 0.99 && c.intensity_fwd < 1.0, "intensity %g", c.intensity_fwd);
}

// --- ffn_block_create_from_layer ----------------------------------------------------------
static struct ffn_file_tensor file_tensor(const char *name, enum ffn_file_dtype dt, const void *p,
                                          int n_dims, int64_t d0, int64_t d1) {
    struct ffn_file_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = dt;
    t.n_dims = n_dims;
    t.shape[0] = d0;
    t.shape[1] = d1;
    t.data = p;
    t.nbytes = (size_t)(d0 * (n_dims == 2 ? d1 : 1)) * (dt == FFN_FILE_DTYPE_F64 ? 8 : 4);
    return t;
}

// The fused SiLU layer of spec_fused() as a model hands it out, tensors of dtype dt.
static struct ffn_model_layer layer_fused(enum ffn_file_dtype dt, const void *gu, const void *d,
                                          const void *bgu, const void *bd) {
    struct ffn_model_layer l;
    memset(&l, 0, sizeof l);
    l.expert = -1;
    l.d_model = D;
    l.d_ff = M;
    l.act = FFN_ACT_SILU;
    l.gated = true;
    l.orient = FFN_WEIGHT_OUT_IN;
    l.layout = FFN_GATE_UP_FUSED;
    l.gate_up = file_tensor("mlp.gate_up_proj.weight", dt, gu, 2, 2 * M, D);
    l.down = file_tensor("mlp.down_proj.weight", dt, d, 2, D, M);
    l.b_gate_up = file_tensor("mlp.gate_up_proj.bias", dt, bgu, 1, 2 * M, 0);
    l.b_down = file_tensor("mlp.down_proj.bias", dt, bd, 1, D, 0);
    return l;
}

static enum ffn_status forward_layer(const struct ffn_model_layer *l, float *y) {
    ffn_block_t b;
    enum ffn_status st = ffn_block_create_from_layer(ctx, l, NULL, &b);
    if (st) return st;
    struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
    st = ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE);
    ffn_block_destroy(b);
    return st;
}

static void test_from_layer(void) {
    static struct result ref;
    const struct ffn_block_weights w = weights_fused();
    CHECK(run(&w, NULL, FFN_BLOCK_POLICY_SAVE, &ref) == FFN_STATUS_OK, "reference block");
    // Zero copy: f32 tensors are read in place, so the same output bit for bit, and a change of
    // the file's bytes after create shows in the next forward.
    static float gu[2 * M * D], d[D * M], y[T * D], y2[T * D];
    memcpy(gu, Wgu, sizeof gu);
    memcpy(d, Wd, sizeof d);
    struct ffn_model_layer l = layer_fused(FFN_FILE_DTYPE_F32, gu, d, Bgu, Bd);
    ffn_block_t b;
    CHECK(ffn_block_create_from_layer(ctx, &l, NULL, &b) == FFN_STATUS_OK, "f32 layer");
    if (b) {
        struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
        struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
        struct ffn_tensor ty2 = ffn_tensor_2d(y2, FFN_DTYPE_F32, T, D, D);
        CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_OK, "fwd");
        CHECK(!memcmp(y, ref.y, sizeof y), "f32 layer: the output of ffn_block_create's block");
        for (int k = 0; k < D * M; k++) d[k] *= 2.0f;  // y = down·h + b: the down part doubles
        CHECK(ffn_block_forward(ctx, b, &ty2, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_OK, "fwd");
        float want[T * D];
        for (int k = 0; k < T * D; k++) want[k] = 2.0f * (y[k] - Bd[k % D]) + Bd[k % D];
        expect_close("zero copy: down doubled", want, y2, T * D, TOL_SAME);
        ffn_block_destroy(b);
    }
    // Converted: F64 tensors (values exact in f32) become f32 copies the block owns, so the same
    // output bit for bit, also after the file's bytes are overwritten.
    static double gu64[2 * M * D], d64[D * M], bgu64[2 * M], bd64[D];
    for (int k = 0; k < 2 * M * D; k++) gu64[k] = Wgu[k];
    for (int k = 0; k < D * M; k++) d64[k] = Wd[k];
    for (int k = 0; k < 2 * M; k++) bgu64[k] = Bgu[k];
    for (int k = 0; k < D; k++) bd64[k] = Bd[k];
    l = layer_fused(FFN_FILE_DTYPE_F64, gu64, d64, bgu64, bd64);
    b = NULL;
    CHECK(ffn_block_create_from_layer(ctx, &l, NULL, &b) == FFN_STATUS_OK, "f64 layer");
    if (b) {
        for (int k = 0; k < D * M; k++) d64[k] = NAN;
        struct ffn_tensor tx = ffn_tensor_2d(X, FFN_DTYPE_F32, T, D, D);
        struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
        CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_OK, "fwd");
        CHECK(!memcmp(y, ref.y, sizeof y), "f64 layer: the output of the f32 block");
        ffn_block_destroy(b);
    }
    // Bad input: a clear error, no block.
    l = layer_fused(FFN_FILE_DTYPE_F32, Wgu, Wd, Bgu, Bd);
    b = (ffn_block_t)&l;
    CHECK(ffn_block_create_from_layer(ctx, NULL, NULL, &b) == FFN_STATUS_INVALID_ARG && !b &&
              strstr(ffn_ctx_last_error(ctx), "layer"),
          "NULL layer");
    CHECK(ffn_block_create_from_layer(ctx, &l, NULL, NULL) == FFN_STATUS_INVALID_ARG,
          "NULL block_out");
    CHECK(ffn_block_create_from_layer(NULL, &l, NULL, &b) == FFN_STATUS_INVALID_ARG, "NULL ctx");
    struct ffn_model_layer bad = l;
    bad.down.shape[1] = M + 1;  // [d, m + 1]: does not fit d_ff
    CHECK(ffn_block_create_from_layer(ctx, &bad, NULL, &b) == FFN_STATUS_INVALID_ARG && !b,
          "down of the wrong shape");
    bad = l;
    bad.down.n_dims = 3;
    CHECK(ffn_block_create_from_layer(ctx, &bad, NULL, &b) == FFN_STATUS_INVALID_ARG && !b &&
              strstr(ffn_ctx_last_error(ctx), "mlp.down_proj.weight"),
          "3-d weight named in the message");
    bad = layer_fused(FFN_FILE_DTYPE_F64, gu64, d64, bgu64, bd64);
    bad.gate_up.shape[0] = -1;
    CHECK(ffn_block_create_from_layer(ctx, &bad, NULL, &b) != FFN_STATUS_OK && !b,
          "converted tensor with an invalid shape");
    CHECK(forward_layer(&l, y) == FFN_STATUS_OK && !memcmp(y, ref.y, sizeof y),
          "the good layer after the errors");
}

int main(void) {
    ffn_check_begin("test_block_api");
    if (ffn_ctx_create(NULL, &ctx) != FFN_STATUS_OK) return 1;
    ffn_check_show_error(ctx);  // failures print the context's last error
    for (int k = 0; k < 2 * M * D; k++) Wgu[k] = 0.3f * rnd();
    for (int k = 0; k < D * M; k++) Wd[k] = 0.3f * rnd();
    for (int k = 0; k < 2 * M; k++) Bgu[k] = 0.2f * rnd();
    for (int k = 0; k < D; k++) Bd[k] = 0.2f * rnd();
    for (int k = 0; k < T * D; k++) X[k] = rnd(), DY[k] = rnd();
    printf("test_block_api: seed %u\n", SEED);
    test_variants();
    test_training_rules();
    test_validation();
    test_sizing();
    test_from_layer();
    ffn_check_show_error(NULL);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
