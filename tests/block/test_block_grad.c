// test_block_grad.c — FFN block forward and backward against the test's own double-precision
// block (block_ref.h): y against the reference, every gradient (weights, biases, dx) against
// central finite differences of the reference loss L = Σ y ⊙ dy, for every activation × plain /
// gated × bias × gate/up layout × orientation of each tensor × memory policy × dtype set
// (f32; bf16 weights with f32 or bf16 activations, gradients and saved pre-activations; f32
// weights under FFN_BLOCK_MATH_BF16; f16 weights). Also checks that every layout of the same
// logical weights gives the same y, and that a row-interleaved [in, out] gate/up is refused as
// unsupported.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "block_ref.h"
#include "check.h"

#define D 6       // d_model
#define M 8       // d_ff
#define T 5       // tokens
#define GROUPS 2  // tensor-parallel groups of the BLOCKED layout
#define SEED 20240611u
// f32 GEMMs of length ≤ 8 on O(1) values: errors ~1e-6 relative to the largest entry.
#define TOL_REL 1e-4
#define TOL_ABS 2e-5
// Two layouts of the same weights: the same f32 GEMMs up to summation order.
#define TOL_SAME 1e-6
// bf16 arithmetic: each rounding to bf16 (8 significant bits) errs by up to 2^-9 relative; a
// value meets up to four of them on its way (an f32 input rounded for the bf16 GEMM, h, the
// output, and in the backward dh and dP), each fed through sums of ≤ 8 O(1) terms whose
// magnitude can exceed the result's: 2e-2 of the tensor's largest entry bounds them all with a
// margin of ~2 over the worst seen, and is ~10x below what a wrong layout or orientation gives.
#define TOL_BF16 2e-2
#define FFN_ARRAY_LEN_T(a) (sizeof(a) / sizeof((a)[0]))

static double worst;  // largest |err| / (tol_abs · scale) of the current dtype set
static uint64_t rng_state = SEED;

static double rnd(void) {  // uniform in [-1, 1)
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void check_tol(const char *cfg, const char *what, int64_t k, double want, double got,
                      double scale, double tol_abs, double tol_rel) {
    const double err = fabs(got - want);
    const double r = err / (tol_abs * (scale > 1 ? scale : 1));
    if (r > worst) worst = r;
    const double bound = tol_abs * (scale > 1 ? scale : 1) + tol_rel * fabs(want);
    CHECK(err <= bound && !isnan(got),
          "%s %s[%" PRId64 "]: expected %.9g got %.9g (err %.3g, scale %.3g)", cfg, what, k, want,
          got, err, scale);
}

// The dtypes of one run: weights, activations (x, y, dx, dy), gradients, saved pre-activations,
// and the math option.
struct dtypes {
    const char *name;
    enum ffn_dtype w, act, grad, save;
    enum ffn_block_math math;
    bool bf16_math;  // some product is rounded to bf16: TOL_BF16
};

static const struct dtypes *cur_dt;

static void check(const char *cfg, const char *what, int64_t k, double want, double got,
                  double scale) {
    if (cur_dt->bf16_math)
        check_tol(cfg, what, k, want, got, scale, TOL_BF16, 0.0);
    else
        check_tol(cfg, what, k, want, got, scale, TOL_ABS, TOL_REL);
}

// v rounded to dtype dt (and back), as the library will read it.
static double round_to(enum ffn_dtype dt, double v) {
    if (dt == FFN_DTYPE_BF16) return ffn_bf16_to_f32(ffn_f32_to_bf16((float)v));
    if (dt == FFN_DTYPE_F16) return ffn_f16_to_f32(ffn_f32_to_f16((float)v));
    return (float)v;
}

// n floats as dtype dt into dst (dst == src allowed for f32).
static void *as_dtype(void *dst, const float *src, int64_t n, enum ffn_dtype dt) {
    for (int64_t k = 0; k < n; k++) {
        if (dt == FFN_DTYPE_F32)
            ((float *)dst)[k] = src[k];
        else
            ((uint16_t *)dst)[k] =
                dt == FFN_DTYPE_BF16 ? ffn_f32_to_bf16(src[k]) : ffn_f32_to_f16(src[k]);
    }
    return dst;
}

// n values of dtype dt back to float.
static void to_f32(float *dst, const void *src, int64_t n, enum ffn_dtype dt) {
    for (int64_t k = 0; k < n; k++)
        dst[k] = dt == FFN_DTYPE_F32    ? ((const float *)src)[k]
                 : dt == FFN_DTYPE_BF16 ? ffn_bf16_to_f32(((const uint16_t *)src)[k])
                                        : ffn_f16_to_f32(((const uint16_t *)src)[k]);
}

static double max_abs(const double *a, int64_t n) {
    double s = 0;
    for (int64_t k = 0; k < n; k++) s = fabs(a[k]) > s ? fabs(a[k]) : s;
    return s;
}

// One stored configuration: layout + orientations + policy.
struct cfg {
    enum ffn_gate_up_layout layout;
    enum ffn_weight_orient o_first, o_down;
    enum ffn_block_policy policy;
};

// Reference data for one (act, gated, bias) case.
struct refcase {
    struct ref_ffn f;
    double x[T * D], dy[T * D], y[T * D];
    double gWg[M * D], gWu[M * D], gWd[D * M], gbg[M], gbu[M], gbd[D], gx[T * D];
};

// Runs the library on one configuration and compares with the reference. Returns y (f32) in
// y_out for the cross-layout comparison.
static void run_cfg(ffn_ctx_t ctx, struct refcase *rc, const struct cfg *c, const char *name,
                    float *y_out) {
    const struct ref_ffn *f = &rc->f;
    const bool fused = f->gated && c->layout != FFN_GATE_UP_SEPARATE;
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = D;
    spec.d_ff = M;
    spec.act = f->act;
    spec.gated = f->gated;
    spec.gate_up_layout = f->gated ? c->layout : FFN_GATE_UP_SEPARATE;
    spec.tp_groups = GROUPS;
    spec.bias_gate = f->gated && f->bias;
    spec.bias_up = spec.bias_down = f->bias;

    // Stored weights (f32) and their gradient arrays, same shapes.
    // (zeroed: the members this configuration does not hold are converted below all the same)
    float wg[M * D] = {0}, wu[M * D] = {0}, wgu[2 * M * D] = {0}, wd[D * M] = {0}, bg[M] = {0},
                 bu[M] = {0}, bgu[2 * M] = {0}, bd[D] = {0};
    float gg[M * D], gu[M * D], ggu[2 * M * D], gd[D * M], gbg[M], gbu[M], gbgu[2 * M], gbd[D];
    float *fw[8] = {wg, wu, wgu, wd, bg, bu, bgu, bd};
    ref_store(f, c->layout, GROUPS, c->o_first, c->o_down, fw);

    // The stored weights in the run's dtype (same index layout), gradients in theirs.
    const struct dtypes *dt = cur_dt;
    const enum ffn_dtype W = dt->w, G = dt->grad;
    static uint16_t hw[8][2 * M * D], hg[8][2 * M * D];  // 16-bit copies, by member
    float *fg[8] = {gg, gu, ggu, gd, gbg, gbu, gbgu, gbd};
    const int64_t nel[8] = {M * D, M * D, 2 * M * D, D * M, M, M, 2 * M, D};
    void *vw[8], *vg[8];
    for (int k = 0; k < 8; k++) {
        vw[k] = W == FFN_DTYPE_F32 ? (void *)fw[k] : as_dtype(hw[k], fw[k], nel[k], W);
        vg[k] = G == FFN_DTYPE_F32 ? (void *)fg[k] : (void *)hg[k];
    }
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.dtype = G;
    if (fused) {
        w.gate_up = ffn_weight_dense(vw[2], W, c->o_first);
        g.gate_up = vg[2];
        if (f->bias) {
            w.b_gate_up = ffn_weight_dense(vw[6], W, FFN_WEIGHT_OUT_IN);
            g.b_gate_up = vg[6];
        }
    } else {
        w.up = ffn_weight_dense(vw[1], W, c->o_first);
        g.up = vg[1];
        if (f->gated) {
            w.gate = ffn_weight_dense(vw[0], W, c->o_first);
            g.gate = vg[0];
        }
        if (f->bias) {
            w.b_up = ffn_weight_dense(vw[5], W, FFN_WEIGHT_OUT_IN);
            g.b_up = vg[5];
            if (f->gated) {
                w.b_gate = ffn_weight_dense(vw[4], W, FFN_WEIGHT_OUT_IN);
                g.b_gate = vg[4];
            }
        }
    }
    w.down = ffn_weight_dense(vw[3], W, c->o_down);
    g.down = vg[3];
    if (f->bias) {
        w.b_down = ffn_weight_dense(vw[7], W, FFN_WEIGHT_OUT_IN);
        g.b_down = vg[7];
    }

    ffn_block_t blk;
    struct ffn_block_opts opts = FFN_BLOCK_OPTS_INIT;
    opts.math = dt->math;
    opts.save_dtype = dt->save;
    enum ffn_status st = ffn_block_create(ctx, &spec, &w, &opts, &blk);
    if (fused && c->layout == FFN_GATE_UP_INTERLEAVED && c->o_first == FFN_WEIGHT_IN_OUT) {
        CHECK_STATUS(st, FFN_STATUS_UNSUPPORTED, "%s: interleaved [in, out] gate/up", name);
        if (st == FFN_STATUS_OK) ffn_block_destroy(blk);
        return;
    }
    if (!CHECK_STATUS(st, FFN_STATUS_OK, "%s: create: %s", name, ffn_ctx_last_error(ctx))) return;
    float x[T * D], y[T * D], dy[T * D], dx[T * D];
    float vx[T * D], vy[T * D], vdy[T * D], vdx[T * D];  // storage (f32, or bf16 in the first half)
    for (int k = 0; k < T * D; k++) {
        x[k] = (float)rc->x[k];
        dy[k] = (float)rc->dy[k];
    }
    const enum ffn_dtype A = dt->act;
    as_dtype(vx, x, T * D, A);
    as_dtype(vdy, dy, T * D, A);
    struct ffn_tensor tx = ffn_tensor_2d(vx, A, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(vy, A, T, D, D);
    struct ffn_tensor tdy = ffn_tensor_2d(vdy, A, T, D, D);
    struct ffn_tensor tdx = ffn_tensor_2d(vdx, A, T, D, D);
    if (!CHECK(!ffn_block_forward(ctx, blk, &ty, &tx, c->policy) &&
                   !ffn_block_backward(ctx, blk, &g, &tdx, &tdy),
               "%s: %s", name, ffn_ctx_last_error(ctx))) {
        ffn_block_destroy(blk);
        return;
    }
    ffn_block_destroy(blk);
    to_f32(y, vy, T * D, A);
    to_f32(dx, vdx, T * D, A);
    if (G != FFN_DTYPE_F32)
        for (int k = 0; k < 8; k++) to_f32(fg[k], hg[k], nel[k], G);

    const double sy = max_abs(rc->y, T * D);
    for (int k = 0; k < T * D; k++) check(name, "y", k, rc->y[k], y[k], sy);
    const double sx = max_abs(rc->gx, T * D);
    for (int k = 0; k < T * D; k++) check(name, "dx", k, rc->gx[k], dx[k], sx);
    const double sg = max_abs(rc->gWg, M * D), su = max_abs(rc->gWu, M * D);
    const double sd = max_abs(rc->gWd, D * M);
    for (int64_t j = 0; j < M; j++)
        for (int64_t i = 0; i < D; i++) {
            const int64_t k = j * D + i;
            if (fused) {
                check(name, "dW_gate(fused)", k, rc->gWg[k],
                      ggu[ref_idx(c->o_first, 2 * M, D,
                                  ref_fused_pos(c->layout, GROUPS, M, false, j), i, 0)],
                      sg);
                check(name, "dW_up(fused)", k, rc->gWu[k],
                      ggu[ref_idx(c->o_first, 2 * M, D,
                                  ref_fused_pos(c->layout, GROUPS, M, true, j), i, 0)],
                      su);
            } else {
                if (f->gated)
                    check(name, "dW_gate", k, rc->gWg[k], gg[ref_idx(c->o_first, M, D, j, i, 0)],
                          sg);
                check(name, "dW_up", k, rc->gWu[k], gu[ref_idx(c->o_first, M, D, j, i, 0)], su);
            }
            check(name, "dW_down", i * M + j, rc->gWd[i * M + j],
                  gd[ref_idx(c->o_down, D, M, i, j, 0)], sd);
        }
    if (f->bias) {
        const double sbg = max_abs(rc->gbg, M), sbu = max_abs(rc->gbu, M),
                     sbd = max_abs(rc->gbd, D);
        for (int64_t j = 0; j < M; j++) {
            if (fused) {
                check(name, "db_gate(fused)", j, rc->gbg[j],
                      gbgu[ref_fused_pos(c->layout, GROUPS, M, false, j)], sbg);
                check(name, "db_up(fused)", j, rc->gbu[j],
                      gbgu[ref_fused_pos(c->layout, GROUPS, M, true, j)], sbu);
            } else {
                if (f->gated) check(name, "db_gate", j, rc->gbg[j], gbg[j], sbg);
                check(name, "db_up", j, rc->gbu[j], gbu[j], sbu);
            }
        }
        for (int64_t i = 0; i < D; i++) check(name, "db_down", i, rc->gbd[i], gbd[i], sbd);
    }
    memcpy(y_out, y, sizeof y);
}

int main(void) {
    ffn_check_begin("test_block_grad");
    ffn_ctx_t ctx;
    if (!CHECK_STATUS(ffn_ctx_create(NULL, &ctx), FFN_STATUS_OK)) return ffn_check_summary();
    printf("test_block_grad: seed %u, d=%d m=%d tokens=%d, isa %s\n", SEED, D, M, T,
           ffn_isa_name(ffn_ctx_isa(ctx)));
    static const enum ffn_gate_up_layout layouts[] = {FFN_GATE_UP_SEPARATE, FFN_GATE_UP_FUSED,
                                                      FFN_GATE_UP_FUSED_UP_FIRST,
                                                      FFN_GATE_UP_INTERLEAVED, FFN_GATE_UP_BLOCKED};
    static const char *const lname[] = {"separate", "fused", "up_first", "interleaved", "blocked"};
    static struct refcase rc;
    static const struct dtypes dsets[] = {
        {"f32", FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_BLOCK_MATH_STRICT,
         false},
        // a bf16 checkpoint with f32 activations and gradients
        {"w=bf16", FFN_DTYPE_BF16, FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_DTYPE_F32,
         FFN_BLOCK_MATH_STRICT, true},
        // everything bf16
        {"all-bf16", FFN_DTYPE_BF16, FFN_DTYPE_BF16, FFN_DTYPE_BF16, FFN_DTYPE_BF16,
         FFN_BLOCK_MATH_STRICT, true},
        // f32 weights computed in bf16 (opt-in), pre-activations saved in bf16
        {"math=bf16", FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_DTYPE_F32, FFN_DTYPE_BF16,
         FFN_BLOCK_MATH_BF16, true},
        // f16 weights (an exact f32 copy, f32 GEMMs), bf16 activations, bf16 gradients
        {"w=f16", FFN_DTYPE_F16, FFN_DTYPE_BF16, FFN_DTYPE_BF16, FFN_DTYPE_F32,
         FFN_BLOCK_MATH_STRICT, true},
    };
    int n_cfg = 0;
    for (size_t di = 0; di < FFN_ARRAY_LEN_T(dsets); di++) {
        worst = 0;
        for (int act = 0; act < FFN_ACT_COUNT; act++)
            for (int gated = 0; gated < 2; gated++)
                for (int bias = 0; bias < 2; bias++) {
                    // Logical weights and data; FD gradients of the reference loss.
                    struct ref_ffn *f = &rc.f;
                    static double Wg[M * D], Wu[M * D], Wd[D * M], bg[M], bu[M], bd[D];
                    *f = (struct ref_ffn){D,  M, (enum ffn_act)act, gated, bias, Wg, Wu, Wd, bg,
                                          bu, bd};
                    for (int k = 0; k < M * D; k++) {
                        Wg[k] = 0.6 * rnd();
                        Wu[k] = 0.6 * rnd();
                        Wd[k] = 0.6 * rnd();
                    }
                    for (int k = 0; k < M; k++) {
                        bg[k] = bias ? 0.3 * rnd() : 0.0;
                        bu[k] = bias ? 0.3 * rnd() : 0.0;
                    }
                    for (int k = 0; k < D; k++) bd[k] = bias ? 0.3 * rnd() : 0.0;
                    for (int k = 0; k < T * D; k++) {
                        rc.x[k] = rnd();
                        rc.dy[k] = rnd();
                    }
                    // Store the inputs as f32 values so library and reference see the same numbers.
                    for (int k = 0; k < M * D; k++) {
                        Wg[k] = (float)Wg[k];
                        Wu[k] = (float)Wu[k];
                        Wd[k] = (float)Wd[k];
                    }
                    for (int k = 0; k < M; k++) bg[k] = (float)bg[k], bu[k] = (float)bu[k];
                    for (int k = 0; k < D; k++) bd[k] = (float)bd[k];
                    for (int k = 0; k < T * D; k++)
                        rc.x[k] = (float)rc.x[k], rc.dy[k] = (float)rc.dy[k];
                    // The values the library reads: weights in their stored dtype (math=bf16 rounds
                    // f32 weights inside: the tolerance covers it), activations in theirs.
                    cur_dt = &dsets[di];
                    const enum ffn_dtype wdt = cur_dt->w, adt = cur_dt->act;
                    for (int k = 0; k < M * D; k++)
                        Wg[k] = round_to(wdt, Wg[k]), Wu[k] = round_to(wdt, Wu[k]),
                        Wd[k] = round_to(wdt, Wd[k]);
                    for (int k = 0; k < M; k++)
                        bg[k] = round_to(wdt, bg[k]), bu[k] = round_to(wdt, bu[k]);
                    for (int k = 0; k < D; k++) bd[k] = round_to(wdt, bd[k]);
                    for (int k = 0; k < T * D; k++)
                        rc.x[k] = round_to(adt, rc.x[k]), rc.dy[k] = round_to(adt, rc.dy[k]);
                    ref_forward(f, T, rc.x, rc.y);
                    if (gated) ref_fd(f, T, rc.x, rc.dy, Wg, M * D, rc.gWg);
                    ref_fd(f, T, rc.x, rc.dy, Wu, M * D, rc.gWu);
                    ref_fd(f, T, rc.x, rc.dy, Wd, D * M, rc.gWd);
                    if (bias) {
                        if (gated) ref_fd(f, T, rc.x, rc.dy, bg, M, rc.gbg);
                        ref_fd(f, T, rc.x, rc.dy, bu, M, rc.gbu);
                        ref_fd(f, T, rc.x, rc.dy, bd, D, rc.gbd);
                    }
                    ref_fd(f, T, rc.x, rc.dy, rc.x, T * D, rc.gx);

                    float y0[T * D], y1[T * D];
                    bool have_y0 = false;
                    for (int li = 0; li < (gated ? 5 : 1); li++)
                        for (int of = 0; of < 2; of++)
                            for (int od = 0; od < 2; od++)
                                for (int pol = 0; pol < 2; pol++) {
                                    const struct cfg c = {
                                        layouts[li], (enum ffn_weight_orient)of,
                                        (enum ffn_weight_orient)od,
                                        pol ? FFN_BLOCK_POLICY_RECOMPUTE : FFN_BLOCK_POLICY_SAVE};
                                    char name[160];
                                    snprintf(name, sizeof name,
                                             "[%s %s %s bias=%d %s first=%s down=%s %s]",
                                             cur_dt->name,
                                             gated ? ffn_glu_name((enum ffn_act)act)
                                                   : ffn_act_name((enum ffn_act)act),
                                             gated ? "gated" : "plain", bias,
                                             gated ? lname[li] : "-", of ? "in_out" : "out_in",
                                             od ? "in_out" : "out_in", pol ? "recompute" : "save");
                                    memset(y1, 0xff, sizeof y1);  // NaN: a skipped config stays NaN
                                    run_cfg(ctx, &rc, &c, name, y1);
                                    n_cfg++;
                                    if (isnan(y1[0])) continue;
                                    // Every layout of the same logical weights: the same y (f32
                                    // GEMMs in other orders: a few ulp).
                                    if (!have_y0) {
                                        memcpy(y0, y1, sizeof y0);
                                        have_y0 = true;
                                    }
                                    for (int k = 0; k < T * D; k++)
                                        check_tol(name, "y(vs first layout)", k, y0[k], y1[k],
                                                  max_abs(rc.y, T * D),
                                                  cur_dt->bf16_math ? TOL_BF16 : TOL_SAME, 0.0);
                                }
                }
        printf("  dtypes %-9s: largest error %.2f of the tolerance\n", dsets[di].name, worst);
    }
    printf("test_block_grad: %d configurations\n", n_cfg);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
