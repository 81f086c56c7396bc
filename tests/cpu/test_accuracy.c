// test_accuracy.c — tier 1: every kernel of every supported ISA (the scalar reference included)
// against the MPFR oracle, for one activation, forward and backward, unary and gated, asserting
// the bounds of the one table (tools/oracle.c, docs/numerics.md). Each exact value is computed
// once and every context (ISA × accuracy tier) is compared with it. The scalar reference must
// moreover be within FFN__REF_BOUND ulp: it is correctly rounded from double.
//
//   test_accuracy --act NAME --set SET [--set SET ...] [--stride N] [--n-glu N]
//   SET: bf16 | f16   all 65,536 inputs (as f32 inputs, and in bf16/f16 storage)
//        f32          every N-th f32 bit pattern (default N = 4093: 1,049,344 inputs)
//        hard         the hard regions of ffn_inputs_hard()
//        glu          random (gate, up, dh) in f32, bf16 and f16 storage
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

#define FFN__REF_BOUND (0.5 + 1.0 / 64)  // the scalar reference: rounded once from double
#define FFN__DEFAULT_STRIDE 4093u
#define FFN__DEFAULT_NGLU 16384
#define FFN__SEED 0x0ac1c0de5eedull
#define FFN__MAX_SETS 8
#define FFN__F16_MAX 65504.0f

// dy of the unary backward cycles through these (exact in bf16 and f16).
static const float ffn__dys[] = {1.0f, -0.75f, 2.5f, 0.0078125f};
#define FFN__N_DY (sizeof ffn__dys / sizeof ffn__dys[0])

static const char *const ffn__op_names[FFN_KOP_COUNT] = {"fwd", "bwd", "glu_fwd", "glu_bwd"};

// --- statistics of one (context, op, output, dtype pair) --------------------------------------

struct ffn__stat {
    double max_ulp;
    float x_at_max;
    int64_t n;
};

static void ffn__stat_add(struct ffn__stat *s, double err, float x) {
    if (err > s->max_ulp || s->n == 0) {
        s->max_ulp = err;
        s->x_at_max = x;
    }
    s->n++;
}

// --- shared state of one run --------------------------------------------------------------------

struct ffn__run {
    enum ffn_act act;
    struct ffn_test_ctx ctx[FFN_TEST_MAX_CTX];
    int n_ctx;
    struct ffn_oracle oracle;
};

static double ffn__bound(const struct ffn__run *R, int c, enum ffn_kop op) {
    return ffn_ulp_bound(op, R->act, R->ctx[c].accurate);
}

// The kernel a context runs for (op, act).
static void (*ffn__fn(const struct ffn__run *R, int c, enum ffn_kop op))(void) {
    const struct ffn_cpu_kernels *k = ffn_cpu_kernel_table(R->ctx[c].ctx);
    switch (op) {
    case FFN_KOP_ACT_FWD: return (void (*)(void))k->act_fwd[R->act];
    case FFN_KOP_ACT_BWD: return (void (*)(void))k->act_bwd[R->act];
    case FFN_KOP_GLU_FWD: return (void (*)(void))k->glu_fwd[R->act];
    default: return (void (*)(void))k->glu_bwd[R->act];
    }
}

// True when an earlier context runs the same kernel in the same way (the same function with the
// same tier, or the scalar reference, which has one tier): its results are already checked.
static bool ffn__duplicate(const struct ffn__run *R, int c, enum ffn_kop op) {
    for (int e = 0; e < c; e++)
        if (ffn__fn(R, e, op) == ffn__fn(R, c, op) &&
            (R->ctx[e].accurate == R->ctx[c].accurate ||
             ffn_cpu_kernel_table(R->ctx[c].ctx)->isa[op][R->act] == FFN_ISA_SCALAR))
            return true;
    return false;
}

// Checks n outputs `got` (dtype odt) of context c against exact[] and prints one summary line.
// x: the inputs (gate), m1/m2: the factors (dy, up, dh) or NULL for 1.
static void ffn__compare(struct ffn__run *R, int c, enum ffn_kop op, int out, const char *what,
                         enum ffn_dtype idt, enum ffn_dtype odt, int64_t n, const void *got,
                         const double *exact, const float *x, const float *m1, const float *m2) {
    const double bound = ffn__bound(R, c, op);
    const bool ref = ffn_cpu_kernel_table(R->ctx[c].ctx)->isa[op][R->act] == FFN_ISA_SCALAR;
    struct ffn__stat st = {0};
    for (int64_t i = 0; i < n; i++) {
        const float g = ffn_test_get(got, odt, i);
        const float a1 = m1 ? m1[i] : 1.0f, a2 = m2 ? m2[i] : 1.0f;
        const double err = ffn_ulp_error(op, out, R->act, odt, g, exact[i], x[i], a1, a2);
        ffn__stat_add(&st, err, x[i]);
        CHECK(err <= bound,
              "%s %s %s %s->%s [%s] i=%lld x=%a m1=%a m2=%a: expected %a, got %a "
              "(%.3g ulp > %g)",
              ffn_act_name(R->act), ffn__op_names[op], what, ffn_dtype_name(idt),
              ffn_dtype_name(odt), R->ctx[c].label, (long long)i, x[i], a1, a2, exact[i], g, err,
              bound);
        if (ref && !R->ctx[c].accurate)
            CHECK(err <= FFN__REF_BOUND,
                  "%s %s %s %s->%s scalar reference i=%lld x=%a: expected %a, got %a "
                  "(%.3g ulp > %g: not correctly rounded from double)",
                  ffn_act_name(R->act), ffn__op_names[op], what, ffn_dtype_name(idt),
                  ffn_dtype_name(odt), (long long)i, x[i], exact[i], g, err, FFN__REF_BOUND);
    }
    char kl[64];
    printf("  %-10s %-7s %-5s %4s->%-4s %-26s n=%-8lld max %8.4f ulp (bound %g) at x=%.9g\n",
           ffn_act_name(R->act), ffn__op_names[op], what, ffn_dtype_name(idt), ffn_dtype_name(odt),
           ffn_test_kernel_label(&R->ctx[c], op, R->act, kl, sizeof kl), (long long)st.n,
           st.max_ulp, bound, (double)st.x_at_max);
}

// --- unary: y = act(x) and dx = dy·act'(x) over a set of inputs ---------------------------------

// xs: n inputs stored as idt (f32 values in xf). Outputs: f32 from the f32 values, and for a
// 16-bit idt also idt -> idt and idt -> f32.
static void ffn__unary(struct ffn__run *R, enum ffn_dtype idt, const void *xs, const float *xf,
                       int64_t n) {
    double *exact = malloc((size_t)n * sizeof *exact);
    float *dyf = malloc((size_t)n * sizeof *dyf);
    void *dys = ffn_test_alloc((size_t)n * 4);
    float *outf = ffn_test_alloc((size_t)n * 4);
    void *outs = ffn_test_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        dyf[i] = ffn__dys[i % FFN__N_DY];
        ffn_test_set(dys, idt, i, dyf[i]);
    }
    const struct ffn_tensor tx32 = ffn_tensor_vec((void *)xf, FFN_DTYPE_F32, n);
    const struct ffn_tensor tdy32 = ffn_tensor_vec(dyf, FFN_DTYPE_F32, n);
    const struct ffn_tensor tx = ffn_tensor_vec((void *)xs, idt, n);
    const struct ffn_tensor tdy = ffn_tensor_vec(dys, idt, n);
    for (int dir = 0; dir < 2; dir++) {
        const enum ffn_kop op = dir ? FFN_KOP_ACT_BWD : FFN_KOP_ACT_FWD;
        for (int64_t i = 0; i < n; i++)
            exact[i] =
                ffn_oracle_eval(&R->oracle, R->act, dir, xf[i], dir ? dyf[i] : 1.0f, 1.0f, NULL);
        const float *m1 = dir ? dyf : NULL;
        for (int c = 0; c < R->n_ctx; c++) {
            if (ffn__duplicate(R, c, op)) continue;
            ffn_ctx_t ctx = R->ctx[c].ctx;
            // f32 -> f32
            struct ffn_tensor ty = ffn_tensor_vec(outf, FFN_DTYPE_F32, n);
            enum ffn_status st = dir ? ffn_act_backward(ctx, R->act, &ty, &tx32, &tdy32)
                                     : ffn_act_forward(ctx, R->act, &ty, &tx32);
            CHECK(st == FFN_STATUS_OK, "call failed: %s", ffn_ctx_last_error(ctx));
            ffn__compare(R, c, op, 0, dir ? "dx" : "y", FFN_DTYPE_F32, FFN_DTYPE_F32, n, outf,
                         exact, xf, m1, NULL);
            if (idt == FFN_DTYPE_F32) continue;
            // idt -> idt, idt -> f32
            for (int k = 0; k < 2; k++) {
                const enum ffn_dtype odt = k ? FFN_DTYPE_F32 : idt;
                ty = ffn_tensor_vec(outs, odt, n);
                st = dir ? ffn_act_backward(ctx, R->act, &ty, &tx, &tdy)
                         : ffn_act_forward(ctx, R->act, &ty, &tx);
                CHECK(st == FFN_STATUS_OK, "call failed: %s", ffn_ctx_last_error(ctx));
                ffn__compare(R, c, op, 0, dir ? "dx" : "y", idt, odt, n, outs, exact, xf, m1, NULL);
            }
        }
    }
    free(exact);
    free(dyf);
    free(dys);
    free(outf);
    free(outs);
}

// --- gated: h = act(g)·up, dgate = dh·up·act'(g), dup = dh·act(g) --------------------------------

// A gate value: mostly the body, some of the hard regions' kind, some arbitrary finite floats.
static float ffn__rand_gate(uint64_t *s) {
    const uint64_t r = ffn_test_rand(s) % 10;
    if (r < 5) return (float)ffn_test_uniform(s, -8.0, 8.0);
    if (r < 7) return (float)ffn_test_uniform(s, -110.0, 20.0);
    if (r < 8) return ffn_test_logrand(s, -140.0, 5.0);
    for (;;) {
        const float x = ffn_f32_from_bits((uint32_t)ffn_test_rand(s));
        if (isfinite(x)) return x;
    }
}

static void ffn__gated(struct ffn__run *R, int64_t n) {
    uint64_t seed = FFN__SEED ^ ((uint64_t)R->act << 32);
    printf("glu set: %lld random (gate, up, dh), seed %#llx\n", (long long)n,
           (unsigned long long)seed);
    float *g = malloc((size_t)n * 4), *u = malloc((size_t)n * 4), *d = malloc((size_t)n * 4);
    double *eh = malloc((size_t)n * 8), *edg = malloc((size_t)n * 8), *edu = malloc((size_t)n * 8);
    void *sg = ffn_test_alloc((size_t)n * 4), *su = ffn_test_alloc((size_t)n * 4);
    void *sd = ffn_test_alloc((size_t)n * 4);
    void *o1 = ffn_test_alloc((size_t)n * 4), *o2 = ffn_test_alloc((size_t)n * 4);
    float *g0 = malloc((size_t)n * 4), *u0 = malloc((size_t)n * 4), *d0 = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        g0[i] = ffn__rand_gate(&seed);
        const bool wide = ffn_test_rand(&seed) % 20 == 0;  // 5%: products near over/underflow
        u0[i] = ffn_test_logrand(&seed, wide ? -60.0 : -6.0, wide ? 60.0 : 6.0);
        d0[i] = ffn_test_logrand(&seed, wide ? -60.0 : -6.0, wide ? 60.0 : 6.0);
    }

    for (int t = 0; t < FFN_DTYPE_COUNT; t++) {
        const enum ffn_dtype dt = (enum ffn_dtype)t;
        for (int64_t i = 0; i < n; i++) {  // the values as stored in dt
            // up and dh stay finite in f16 too: act(gate)·inf is ±inf or NaN depending on
            // whether a tiny act(gate) underflowed, which the contract leaves open.
            const float lim = dt == FFN_DTYPE_F16 ? FFN__F16_MAX : INFINITY;
            ffn_test_set(sg, dt, i, g0[i]);
            ffn_test_set(su, dt, i, fmaxf(fminf(u0[i], lim), -lim));
            ffn_test_set(sd, dt, i, fmaxf(fminf(d0[i], lim), -lim));
            g[i] = ffn_test_get(sg, dt, i);
            u[i] = ffn_test_get(su, dt, i);
            d[i] = ffn_test_get(sd, dt, i);
            eh[i] = ffn_oracle_eval(&R->oracle, R->act, false, g[i], u[i], 1.0f, NULL);
            edg[i] = ffn_oracle_eval(&R->oracle, R->act, true, g[i], u[i], d[i], NULL);
            edu[i] = ffn_oracle_eval(&R->oracle, R->act, false, g[i], d[i], 1.0f, NULL);
        }
        const struct ffn_tensor tg = ffn_tensor_vec(sg, dt, n), tu = ffn_tensor_vec(su, dt, n),
                                td = ffn_tensor_vec(sd, dt, n);
        for (int c = 0; c < R->n_ctx; c++) {
            ffn_ctx_t ctx = R->ctx[c].ctx;
            const bool dup_fwd = ffn__duplicate(R, c, FFN_KOP_GLU_FWD);
            const bool dup_bwd = ffn__duplicate(R, c, FFN_KOP_GLU_BWD);
            for (int k = 0; k < (dt == FFN_DTYPE_F32 ? 1 : 2); k++) {
                const enum ffn_dtype odt = k ? FFN_DTYPE_F32 : dt;
                struct ffn_tensor th = ffn_tensor_vec(o1, odt, n), tdu = ffn_tensor_vec(o2, odt, n);
                enum ffn_status st;
                if (!dup_fwd) {
                    st = ffn_glu_forward(ctx, R->act, &th, &tg, &tu);
                    CHECK(st == FFN_STATUS_OK, "glu_forward failed: %s", ffn_ctx_last_error(ctx));
                    ffn__compare(R, c, FFN_KOP_GLU_FWD, 0, "h", dt, odt, n, o1, eh, g, u, NULL);
                }
                if (!dup_bwd) {
                    st = ffn_glu_backward(ctx, R->act, &th, &tdu, &tg, &tu, &td);
                    CHECK(st == FFN_STATUS_OK, "glu_backward failed: %s", ffn_ctx_last_error(ctx));
                    ffn__compare(R, c, FFN_KOP_GLU_BWD, 0, "dgate", dt, odt, n, o1, edg, g, u, d);
                    ffn__compare(R, c, FFN_KOP_GLU_BWD, 1, "dup", dt, odt, n, o2, edu, g, d, NULL);
                }
            }
        }
    }
    free(g), free(u), free(d), free(g0), free(u0), free(d0);
    free(eh), free(edg), free(edu);
    free(sg), free(su), free(sd), free(o1), free(o2);
}

// --- main ---------------------------------------------------------------------------------------

static int ffn__usage(void) {
    printf(
        "usage: test_accuracy --act NAME --set bf16|f16|f32|hard|glu [--set ...] "
        "[--stride N] [--n-glu N]\n");
    return 2;
}

int main(int argc, char **argv) {
    static struct ffn__run R;
    const char *sets[FFN__MAX_SETS];
    int n_sets = 0;
    bool have_act = false;
    uint32_t stride = FFN__DEFAULT_STRIDE;
    int64_t n_glu = FFN__DEFAULT_NGLU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--act") && i + 1 < argc) {
            if (ffn_act_from_name(argv[++i], &R.act) != FFN_STATUS_OK) return ffn__usage();
            have_act = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < FFN__MAX_SETS) {
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(argv[i], "--stride") && i + 1 < argc) {
            stride = (uint32_t)strtoul(argv[++i], NULL, 10);
            if (stride == 0) return ffn__usage();
        } else if (!strcmp(argv[i], "--n-glu") && i + 1 < argc) {
            n_glu = strtoll(argv[++i], NULL, 10);
            if (n_glu <= 0) return ffn__usage();
        } else {
            return ffn__usage();
        }
    }
    if (!have_act || !n_sets) return ffn__usage();

    char name[64];
    snprintf(name, sizeof name, "accuracy %s", ffn_act_name(R.act));
    ffn_check_begin(name);
    R.n_ctx = ffn_test_contexts(R.ctx, true);
    ffn_oracle_init(&R.oracle);
    printf("contexts:");
    for (int c = 0; c < R.n_ctx; c++) printf(" %s", R.ctx[c].label);
    printf("\n");

    for (int s = 0; s < n_sets; s++) {
        if (!strcmp(sets[s], "bf16") || !strcmp(sets[s], "f16")) {
            const enum ffn_dtype dt = sets[s][0] == 'b' ? FFN_DTYPE_BF16 : FFN_DTYPE_F16;
            const int64_t n = 65536;
            uint16_t *xs = ffn_test_alloc(n * 2);
            float *xf = ffn_test_alloc(n * 4);
            for (int64_t i = 0; i < n; i++) {
                xs[i] = (uint16_t)i;
                xf[i] = ffn_test_get(xs, dt, i);
            }
            printf("set %s: all %lld inputs\n", sets[s], (long long)n);
            ffn__unary(&R, dt, xs, xf, n);
            free(xs);
            free(xf);
        } else if (!strcmp(sets[s], "f32") || !strcmp(sets[s], "hard")) {
            const bool hard = sets[s][0] == 'h';
            const int64_t n =
                hard ? ffn_inputs_hard(NULL, 0) : ffn_inputs_strided(NULL, 0, stride, 0);
            float *xf = ffn_test_alloc((size_t)n * 4);
            if (hard)
                ffn_inputs_hard(xf, n);
            else
                ffn_inputs_strided(xf, n, stride, 0);
            if (hard)
                printf("set hard: %lld inputs\n", (long long)n);
            else
                printf("set f32: every %u-th bit pattern, %lld inputs\n", stride, (long long)n);
            ffn__unary(&R, FFN_DTYPE_F32, xf, xf, n);
            free(xf);
        } else if (!strcmp(sets[s], "glu")) {
            ffn__gated(&R, n_glu);
        } else {
            return ffn__usage();
        }
    }
    printf("oracle: %lld evaluations, %lld needed more than %d bits, %lld undecided\n",
           (long long)R.oracle.n_eval, (long long)R.oracle.n_retry, FFN_ORACLE_PREC0,
           (long long)R.oracle.n_unsure);
    CHECK(R.oracle.n_unsure == 0, "the oracle could not round %lld values correctly",
          (long long)R.oracle.n_unsure);
    ffn_oracle_clear(&R.oracle);
    ffn_test_contexts_free(R.ctx, R.n_ctx);
    return ffn_check_summary();
}
