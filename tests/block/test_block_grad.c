// test_block_grad.c — FFN block forward and backward against the test's own double-precision
// block (block_ref.h): y against the reference, every gradient (weights, biases, dx) against
// central finite differences of the reference loss L = Σ y ⊙ dy, for every activation × plain /
// gated × bias × gate/up layout × orientation of each tensor × memory policy. Also checks that
// every layout of the same logical weights gives the same y, and that a row-interleaved
// [in, out] gate/up is refused as unsupported.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "block_ref.h"

#define D 6        // d_model
#define M 8        // d_ff
#define T 5        // tokens
#define GROUPS 2   // tensor-parallel groups of the BLOCKED layout
#define SEED 20240611u
// f32 GEMMs of length ≤ 8 on O(1) values: errors ~1e-6 relative to the largest entry.
#define TOL_REL 1e-4
#define TOL_ABS 2e-5
// Two layouts of the same weights: the same f32 GEMMs up to summation order.
#define TOL_SAME 1e-6
#define MAX_FAILS 10

static int n_fail, n_checks;
static uint64_t rng_state = SEED;

static double rnd(void) {  // uniform in [-1, 1)
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void check_tol(const char *cfg, const char *what, int64_t k, double want, double got,
                      double scale, double tol_abs, double tol_rel) {
    n_checks++;
    const double err = fabs(got - want);
    if (err <= tol_abs * (scale > 1 ? scale : 1) + tol_rel * fabs(want) && !isnan(got)) return;
    if (++n_fail <= MAX_FAILS)
        printf("FAIL %s %s[%" PRId64 "]: expected %.9g got %.9g (err %.3g, scale %.3g)\n", cfg, what,
               k, want, got, err, scale);
}

static void check(const char *cfg, const char *what, int64_t k, double want, double got,
                  double scale) {
    check_tol(cfg, what, k, want, got, scale, TOL_ABS, TOL_REL);
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
    float wg[M * D], wu[M * D], wgu[2 * M * D], wd[D * M], bg[M], bu[M], bgu[2 * M], bd[D];
    float gg[M * D], gu[M * D], ggu[2 * M * D], gd[D * M], gbg[M], gbu[M], gbgu[2 * M], gbd[D];
    for (int64_t j = 0; j < M; j++)
        for (int64_t i = 0; i < D; i++) {
            if (fused) {
                wgu[ref_idx(c->o_first, 2 * M, D, ref_fused_pos(c->layout, GROUPS, M, false, j), i, 0)] =
                    (float)f->Wg[j * D + i];
                wgu[ref_idx(c->o_first, 2 * M, D, ref_fused_pos(c->layout, GROUPS, M, true, j), i, 0)] =
                    (float)f->Wu[j * D + i];
            } else {
                wg[ref_idx(c->o_first, M, D, j, i, 0)] = (float)f->Wg[j * D + i];
                wu[ref_idx(c->o_first, M, D, j, i, 0)] = (float)f->Wu[j * D + i];
            }
            wd[ref_idx(c->o_down, D, M, i, j, 0)] = (float)f->Wd[i * M + j];
        }
    for (int64_t j = 0; j < M; j++) {
        bg[j] = (float)f->bg[j];
        bu[j] = (float)f->bu[j];
        if (fused) {
            bgu[ref_fused_pos(c->layout, GROUPS, M, false, j)] = bg[j];
            bgu[ref_fused_pos(c->layout, GROUPS, M, true, j)] = bu[j];
        }
    }
    for (int64_t i = 0; i < D; i++) bd[i] = (float)f->bd[i];

    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    if (fused) {
        w.gate_up = ffn_weight_dense(wgu, FFN_DTYPE_F32, c->o_first);
        g.gate_up = ggu;
        if (f->bias) {
            w.b_gate_up = ffn_weight_dense(bgu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
            g.b_gate_up = gbgu;
        }
    } else {
        w.up = ffn_weight_dense(wu, FFN_DTYPE_F32, c->o_first);
        g.up = gu;
        if (f->gated) {
            w.gate = ffn_weight_dense(wg, FFN_DTYPE_F32, c->o_first);
            g.gate = gg;
        }
        if (f->bias) {
            w.b_up = ffn_weight_dense(bu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
            g.b_up = gbu;
            if (f->gated) {
                w.b_gate = ffn_weight_dense(bg, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
                g.b_gate = gbg;
            }
        }
    }
    w.down = ffn_weight_dense(wd, FFN_DTYPE_F32, c->o_down);
    g.down = gd;
    if (f->bias) {
        w.b_down = ffn_weight_dense(bd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        g.b_down = gbd;
    }

    ffn_block_t blk;
    enum ffn_status st = ffn_block_create(ctx, &spec, &w, NULL, &blk);
    if (fused && c->layout == FFN_GATE_UP_INTERLEAVED && c->o_first == FFN_WEIGHT_IN_OUT) {
        n_checks++;
        if (st != FFN_STATUS_UNSUPPORTED && ++n_fail <= MAX_FAILS)
            printf("FAIL %s: interleaved [in, out] gate/up gave status %d, expected UNSUPPORTED\n",
                   name, (int)st);
        if (st == FFN_STATUS_OK) ffn_block_destroy(blk);
        return;
    }
    if (st != FFN_STATUS_OK) {
        if (++n_fail <= MAX_FAILS) printf("FAIL %s: create: %s\n", name, ffn_ctx_last_error(ctx));
        return;
    }
    float x[T * D], y[T * D], dy[T * D], dx[T * D];
    for (int k = 0; k < T * D; k++) {
        x[k] = (float)rc->x[k];
        dy[k] = (float)rc->dy[k];
    }
    struct ffn_tensor tx = ffn_tensor_2d(x, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdy = ffn_tensor_2d(dy, FFN_DTYPE_F32, T, D, D);
    struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, D, D);
    if (ffn_block_forward(ctx, blk, &ty, &tx, c->policy) ||
        ffn_block_backward(ctx, blk, &g, &tdx, &tdy)) {
        if (++n_fail <= MAX_FAILS) printf("FAIL %s: %s\n", name, ffn_ctx_last_error(ctx));
        ffn_block_destroy(blk);
        return;
    }
    ffn_block_destroy(blk);

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
                      ggu[ref_idx(c->o_first, 2 * M, D, ref_fused_pos(c->layout, GROUPS, M, false, j), i, 0)], sg);
                check(name, "dW_up(fused)", k, rc->gWu[k],
                      ggu[ref_idx(c->o_first, 2 * M, D, ref_fused_pos(c->layout, GROUPS, M, true, j), i, 0)], su);
            } else {
                if (f->gated) check(name, "dW_gate", k, rc->gWg[k], gg[ref_idx(c->o_first, M, D, j, i, 0)], sg);
                check(name, "dW_up", k, rc->gWu[k], gu[ref_idx(c->o_first, M, D, j, i, 0)], su);
            }
            check(name, "dW_down", i * M + j, rc->gWd[i * M + j], gd[ref_idx(c->o_down, D, M, i, j, 0)], sd);
        }
    if (f->bias) {
        const double sbg = max_abs(rc->gbg, M), sbu = max_abs(rc->gbu, M), sbd = max_abs(rc->gbd, D);
        for (int64_t j = 0; j < M; j++) {
            if (fused) {
                check(name, "db_gate(fused)", j, rc->gbg[j], gbgu[ref_fused_pos(c->layout, GROUPS, M, false, j)], sbg);
                check(name, "db_up(fused)", j, rc->gbu[j], gbgu[ref_fused_pos(c->layout, GROUPS, M, true, j)], sbu);
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
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx) != FFN_STATUS_OK) {
        printf("FAIL: ffn_ctx_create\n");
        return 1;
    }
    printf("test_block_grad: seed %u, d=%d m=%d tokens=%d, isa %s\n", SEED, D, M, T,
           ffn_isa_name(ffn_ctx_isa(ctx)));
    static const enum ffn_gate_up_layout layouts[] = {
        FFN_GATE_UP_SEPARATE, FFN_GATE_UP_FUSED, FFN_GATE_UP_FUSED_UP_FIRST,
        FFN_GATE_UP_INTERLEAVED, FFN_GATE_UP_BLOCKED};
    static const char *const lname[] = {"separate", "fused", "up_first", "interleaved", "blocked"};
    static struct refcase rc;
    int n_cfg = 0;
    for (int act = 0; act < FFN_ACT_COUNT; act++)
        for (int gated = 0; gated < 2; gated++)
            for (int bias = 0; bias < 2; bias++) {
                // Logical weights and data; FD gradients of the reference loss.
                struct ref_ffn *f = &rc.f;
                static double Wg[M * D], Wu[M * D], Wd[D * M], bg[M], bu[M], bd[D];
                *f = (struct ref_ffn){D, M, (enum ffn_act)act, gated, bias, Wg, Wu, Wd, bg, bu, bd};
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
                for (int k = 0; k < T * D; k++) rc.x[k] = (float)rc.x[k], rc.dy[k] = (float)rc.dy[k];
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
                                const struct cfg c = {layouts[li], (enum ffn_weight_orient)of,
                                                      (enum ffn_weight_orient)od,
                                                      pol ? FFN_BLOCK_POLICY_RECOMPUTE
                                                          : FFN_BLOCK_POLICY_SAVE};
                                char name[160];
                                snprintf(name, sizeof name, "[%s %s bias=%d %s first=%s down=%s %s]",
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
                                              max_abs(rc.y, T * D), TOL_SAME, 0.0);
                            }
            }
    printf("test_block_grad: %d configurations, %d checks, %d failures\n", n_cfg, n_checks, n_fail);
    ffn_ctx_destroy(ctx);
    return n_fail ? 1 : 0;
}
