// test_grad.c — tier 3: the derivatives checked independently of MPFR's derivative formulas, by
// central finite differences of the forward definitions, in double:
//   fd(x) = [8(f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))] / 12h      (error O(h^4))
// 1. the reference ffn_ref_dact(x) against fd of ffn_ref_act (relative 1e-9 of the larger of
//    |act'(x)| and its largest term, so the zeros of act' are covered too);
// 2. every ISA's backward kernel (dx with dy = 1; dgate and dup of the gated backward) against
//    the same differences, within the backward bound of the table plus the differences' error.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "oracle.h"
#include "testutil.h"

#define FFN__FD_REL_TOL 1e-9   // reference derivative vs finite differences
#define FFN__FD_ULP_SLACK 0.1  // kernels: bound + this (the differences' own error, in ulps)
#define FFN__GRID_LO -12.0
#define FFN__GRID_HI 12.0
#define FFN__GRID_N 4001

// Step: relative to |x| where f is x-like, shrinking with |x| in the exponential tails (x < 0),
// where f changes by a factor e^{-λh} per step with λ ~ |x|.
// (σ has such tails on both sides.)
static double ffn__step(enum ffn_act act, double x) {
    if (x >= 0 && act != FFN_ACT_SIGMOID) return 1e-3 * (x > 1 ? x : 1);
    return 2e-3 / (1 + fabs(x));
}

// The differences, and in *round an estimate of their rounding error: ~4ε·max|f|/h. σ saturates
// to 1 for x > 0, where differences of values near 1 lose everything; σ(x) = 1 - σ(-x) makes σ'
// even, so there the differences are taken at -x.
static double ffn__fd(enum ffn_act act, double x, double h, double *round) {
    if (act == FFN_ACT_SIGMOID && x > 0) x = -x;
    const double fp1 = ffn_ref_act(act, x + h), fm1 = ffn_ref_act(act, x - h);
    const double fp2 = ffn_ref_act(act, x + 2 * h), fm2 = ffn_ref_act(act, x - 2 * h);
    const double fmax_ = fmax(fmax(fabs(fp1), fabs(fm1)), fmax(fabs(fp2), fabs(fm2)));
    *round = 4 * DBL_EPSILON * fmax_ / h;
    return (8 * (fp1 - fm1) - (fp2 - fm2)) / (12 * h);
}

static int64_t ffn__inputs(float *xs) {
    int64_t n = 0;
    for (int i = 0; i < FFN__GRID_N; i++)
        xs[n++] = (float)(FFN__GRID_LO + (FFN__GRID_HI - FFN__GRID_LO) * i / (FFN__GRID_N - 1));
    static const float extra[] = {-90.0f, -50.0f, -20.0f, -15.5f, 15.5f, 20.0f,
                                  50.0f,  90.0f,  1e-3f,  -1e-3f, 0.3f,  -0.3f};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) xs[n++] = extra[i];
    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        const double z = ffn_dact_zero((enum ffn_act)a);
        if (isnan(z)) continue;
        for (int k = -3; k <= 3; k++) xs[n++] = (float)z + (float)k * 1e-4f;
    }
    return n;
}

int main(void) {
    ffn_check_begin("grad");
    struct ffn_test_ctx c[FFN_TEST_MAX_CTX];
    const int nc = ffn_test_contexts(c, false);
    float *xs = ffn_test_alloc(8192 * 4), *ones = ffn_test_alloc(8192 * 4);
    float *up = ffn_test_alloc(8192 * 4), *dh = ffn_test_alloc(8192 * 4);
    float *o1 = ffn_test_alloc(8192 * 4), *o2 = ffn_test_alloc(8192 * 4);
    double *fd = malloc(8192 * sizeof *fd);
    const int64_t n = ffn__inputs(xs);
    uint64_t seed = 0x6ead5eedull;
    for (int64_t i = 0; i < n; i++) {
        ones[i] = 1.0f;
        up[i] = ffn_test_logrand(&seed, -3.0, 3.0);
        dh[i] = ffn_test_logrand(&seed, -3.0, 3.0);
    }
    printf("%lld points in [%g, %g] and around the derivative zeros; seed %#llx\n", (long long)n,
           FFN__GRID_LO, FFN__GRID_HI, 0x6ead5eedull);

    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        const enum ffn_act act = (enum ffn_act)a;
        // 1. The reference derivative.
        double worst = 0;
        int64_t skipped = 0;
        for (int64_t i = 0; i < n; i++) {
            const double x = xs[i], h = ffn__step(act, x);
            double round;
            fd[i] = ffn__fd(act, x, h, &round);
            if (act == FFN_ACT_RELU && fabs(x) <= 3 * h) fd[i] = NAN;  // the kink: no derivative
            const double d = ffn_ref_dact(act, x), t = ffn_dact_scale(act, x);
            const double scale = fmax(fabs(d), t);
            // Where f saturates (σ(x) → 1) the differences drown in rounding: not measurable.
            if (round > FFN__FD_REL_TOL / 10 * scale) fd[i] = NAN;
            if (isnan(fd[i])) {
                skipped++;
                continue;
            }
            const double rel = scale > 0 ? fabs(fd[i] - d) / scale : fabs(fd[i] - d);
            worst = fmax(worst, rel);
            CHECK(rel <= FFN__FD_REL_TOL,
                  "%s'(%a): reference %.17g, finite differences %.17g (rel %.3g)",
                  ffn_act_name(act), xs[i], d, fd[i], rel);
        }
        printf(
            "  %-10s reference vs finite differences: max rel error %.3g (%lld of %lld points "
            "not measurable)\n",
            ffn_act_name(act), worst, (long long)skipped, (long long)n);
        CHECK(skipped < n / 4, "%s: too few measurable points", ffn_act_name(act));

        // 2. The backward kernels of every ISA.
        const struct ffn_tensor tx = ffn_tensor_vec(xs, FFN_DTYPE_F32, n);
        const struct ffn_tensor t1 = ffn_tensor_vec(ones, FFN_DTYPE_F32, n);
        const struct ffn_tensor tu = ffn_tensor_vec(up, FFN_DTYPE_F32, n);
        const struct ffn_tensor td = ffn_tensor_vec(dh, FFN_DTYPE_F32, n);
        struct ffn_tensor to1 = ffn_tensor_vec(o1, FFN_DTYPE_F32, n);
        struct ffn_tensor to2 = ffn_tensor_vec(o2, FFN_DTYPE_F32, n);
        const double bound = ffn_ulp_bound(FFN_KOP_ACT_BWD, act, false) + FFN__FD_ULP_SLACK;
        for (int k = 0; k < nc; k++) {
            double wdx = 0, wdg = 0, wdu = 0;
            ffn_act_backward(c[k].ctx, act, &to1, &tx, &t1);
            for (int64_t i = 0; i < n; i++) {
                if (isnan(fd[i])) continue;
                const double e = ffn_ulp_error(FFN_KOP_ACT_BWD, 0, act, FFN_DTYPE_F32, o1[i], fd[i],
                                               xs[i], 1.0f, 1.0f);
                wdx = fmax(wdx, e);
                CHECK(e <= bound, "[%s] %s dx(%a) = %a, finite differences %.9g (%.3g ulp)",
                      c[k].label, ffn_act_name(act), xs[i], o1[i], fd[i], e);
            }
            // dgate = dh·up·act'(g) against dh·up·fd; dup = dh·act(g) against dh·∂(act(g)·u)/∂u.
            ffn_glu_backward(c[k].ctx, act, &to1, &to2, &tx, &tu, &td);
            for (int64_t i = 0; i < n; i++) {
                if (isnan(fd[i])) continue;
                const double eg = ffn_ulp_error(FFN_KOP_GLU_BWD, 0, act, FFN_DTYPE_F32, o1[i],
                                                (double)dh[i] * up[i] * fd[i], xs[i], up[i], dh[i]);
                // act(g)·u is linear in u: the differences are exact up to rounding (h = 2^-10·|u|).
                const double hu = 0x1p-10 * fabs((double)up[i]);
                const double fdu = (ffn_ref_act(act, xs[i]) * (up[i] + hu) -
                                    ffn_ref_act(act, xs[i]) * (up[i] - hu)) /
                                   (2 * hu);
                const double eu = ffn_ulp_error(FFN_KOP_GLU_BWD, 1, act, FFN_DTYPE_F32, o2[i],
                                                (double)dh[i] * fdu, xs[i], dh[i], 1.0f);
                wdg = fmax(wdg, eg);
                wdu = fmax(wdu, eu);
                CHECK(eg <= bound && eu <= bound,
                      "[%s] %s gate=%a up=%a dh=%a: dgate %a (%.3g ulp), dup %a (%.3g ulp)",
                      c[k].label, ffn_act_name(act), xs[i], up[i], dh[i], o1[i], eg, o2[i], eu);
            }
            char kl[64];
            printf("  %-10s %-28s dx %.3f  dgate %.3f  dup %.3f ulp vs finite differences\n",
                   ffn_act_name(act),
                   ffn_test_kernel_label(&c[k], FFN_KOP_ACT_BWD, act, kl, sizeof kl), wdx, wdg,
                   wdu);
        }
    }
    ffn_test_contexts_free(c, nc);
    free(xs), free(ones), free(up), free(dh), free(o1), free(o2), free(fd);
    return ffn_check_summary();
}
