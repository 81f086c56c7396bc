// test_cuda_math.c — the element math of the CUDA kernels (src/cuda/act_math.h), compiled for the
// CPU and checked here without a GPU (in CI too): every op of every activation, both accuracy
// tiers, against the scalar reference and the MPFR oracle with the bounds of the one table
// (tools/oracle.c), by the measure of `ffn ulp`:
//   - all 65,536 bf16 and all 65,536 f16 inputs, in and out of the 16-bit type;
//   - f32: the hard regions (special values, tails, subnormals, the derivative zeros, ...) and
//     every --stride'th bit pattern (default 65521: 65,537 patterns; `slow` label: 4093);
//   - gated ops with up / dh cycling as in `ffn ulp`, and a second pass with random multipliers
//     (log-uniform over 2^±8, random signs);
//   - parity mode (16-bit outputs): h = round(round(act(gate))·round(up)), equal to the
//     reference's parity value, or to the product of a neighbour of its round(act(gate)) (act
//     within its f32 bound but across a midpoint of the output type), equal in ≥ 99.9% of inputs.
// Every error above a bound, or above 0.5 ulp and a maximum so far, is confirmed by MPFR, so the
// reported maxima are exact. The GPU tests (test_cuda.c) then check that the device computes
// these same bits.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "cuda/act_math.h"
#include "oracle.h"
#include "testutil.h"

// clang-format off
static const struct ffn_cm_tabs_src ffn__tabs_src = {{FFN_EXP2_TAB_HI}, {FFN_EXP2_TAB_LO}, {
#include "cpu/gelu_erf_fast_tab.inc"
}};
// The math's layout of the tables (ffn_cm_tabs_fill), filled at the start of main.
static struct ffn_cm_tabs ffn__tabs;
// clang-format on

// Gated ops sweep the gate; up and dh cycle through these (as `ffn ulp`; exact in bf16 and f16).
static const float ffn__ups[] = {1.0f, -0.75f, 2.5f, 0.0078125f};
static const float ffn__dhs[] = {1.0f, -1.25f, 0.375f};

static const char *const ffn__out_names[FFN_KOP_COUNT][2] = {
    {"y", ""}, {"dx", ""}, {"h", ""}, {"dgate", "dup"}};

struct ffn__opts {
    bool act[FFN_ACT_COUNT];
    uint32_t stride;
    bool verbose;
};

struct ffn__stat {
    int64_t n, n_over, n_par_diff;
    double max;
    float x_at_max, m1_at_max, m2_at_max;
};

// The multipliers of element i: (dy) = 1 for the unary ops; (up, dh) cycling, or random.
static void ffn__mults(enum ffn_kop op, int64_t i, bool rnd, enum ffn_dtype dt, float *m1,
                       float *m2) {
    if (op == FFN_KOP_ACT_FWD) {
        *m1 = *m2 = 1.0f;
        return;
    }
    if (rnd) {
        uint64_t s = 0x5eed0000ull + (uint64_t)i * 0x9e3779b97f4a7c15ull;
        *m1 = ffn_cm_round_to(dt, ffn_test_logrand(&s, -8.0, 8.0));
        *m2 = ffn_cm_round_to(dt, ffn_test_logrand(&s, -8.0, 8.0));
    } else {
        *m1 = op == FFN_KOP_ACT_BWD ? 1.0f : ffn__ups[i % 4];
        *m2 = ffn__dhs[i % 3];
    }
    if (op != FFN_KOP_GLU_BWD) *m2 = 1.0f;
}

// The reference value of output o in double (as `ffn ulp`: ffn_ref_act / ffn_ref_dact).
static double ffn__ref(enum ffn_kop op, int o, enum ffn_act act, float x, float m1, float m2) {
    switch (op) {
    case FFN_KOP_ACT_FWD: return ffn_ref_act(act, x);
    case FFN_KOP_ACT_BWD: return (double)m1 * ffn_ref_dact(act, x);
    case FFN_KOP_GLU_FWD: return ffn_ref_act(act, x) * (double)m1;
    default:
        return o == 0 ? (double)m2 * (double)m1 * ffn_ref_dact(act, x)
                      : (double)m2 * ffn_ref_act(act, x);
    }
}

static double ffn__exact(struct ffn_oracle * or, enum ffn_kop op, int o, enum ffn_act act, float x,
                         float m1, float m2) {
    switch (op) {
    case FFN_KOP_ACT_FWD: return ffn_oracle_eval(or, act, false, x, 1.0f, 1.0f, NULL);
    case FFN_KOP_ACT_BWD: return ffn_oracle_eval(or, act, true, x, m1, 1.0f, NULL);
    case FFN_KOP_GLU_FWD: return ffn_oracle_eval(or, act, false, x, m1, 1.0f, NULL);
    default:
        return o == 0 ? ffn_oracle_eval(or, act, true, x, m1, m2, NULL)
                      : ffn_oracle_eval(or, act, false, x, m2, 1.0f, NULL);
    }
}

// Sweeps n inputs (list[i], rounded to dt) through op / act in dtype dt (in = out = dt).
static void ffn__sweep(const float *list, int64_t n, enum ffn_kop op, enum ffn_act act,
                       enum ffn_dtype dt, bool acc, bool rnd, const char *set) {
    const int n_out = op == FFN_KOP_GLU_BWD ? 2 : 1;
    const double bound = ffn_ulp_bound(op, act, acc);
    struct ffn__stat st[2] = {{0}};
#pragma omp parallel
    {
        struct ffn_oracle or ;
        ffn_oracle_init(& or);
        struct ffn__stat loc[2] = {{0}};
#pragma omp for schedule(dynamic, 4096)
        for (int64_t i = 0; i < n; i++) {
            const float x = ffn_cm_round_to(dt, list[i]);
            float m1, m2;
            ffn__mults(op, i, rnd, dt, &m1, &m2);
            const struct ffn_cm_out y = ffn_cm_elem(&ffn__tabs, op, act, acc, false, dt, x, m1, m2);
            for (int o = 0; o < n_out; o++) {
                const float got = ffn_cm_round_to(dt, o ? y.y1 : y.y0);
                const float a1 = op == FFN_KOP_GLU_BWD && o == 1 ? m2 : m1;
                const float a2 = op == FFN_KOP_GLU_BWD && o == 0 ? m2 : 1.0f;
                double exact = ffn__ref(op, o, act, x, m1, m2);
                double err = ffn_ulp_error(op, o, act, dt, got, exact, x, a1, a2);
                struct ffn__stat *s = &loc[o];
                if (err > bound || (err > 0.5 && err > s->max)) {
                    exact = ffn__exact(& or, op, o, act, x, m1, m2);
                    err = ffn_ulp_error(op, o, act, dt, got, exact, x, a1, a2);
                }
                if (err > s->max || s->n == 0) {
                    s->max = err;
                    s->x_at_max = x, s->m1_at_max = m1, s->m2_at_max = m2;
                }
                s->n++;
                s->n_over += err > bound;
            }
        }
#pragma omp critical
        for (int o = 0; o < n_out; o++) {
            if (loc[o].n && (loc[o].max > st[o].max || st[o].n == 0)) {
                st[o].max = loc[o].max;
                st[o].x_at_max = loc[o].x_at_max;
                st[o].m1_at_max = loc[o].m1_at_max, st[o].m2_at_max = loc[o].m2_at_max;
            }
            st[o].n += loc[o].n;
            st[o].n_over += loc[o].n_over;
        }
        ffn_oracle_clear(& or);
    }
    const char *name = op >= FFN_KOP_GLU_FWD ? ffn_glu_name(act) : ffn_act_name(act);
    const char *dir = op == FFN_KOP_ACT_FWD || op == FFN_KOP_GLU_FWD ? "fwd" : "bwd";
    for (int o = 0; o < n_out; o++) {
        const bool ok = st[o].max <= bound;
        printf("%-12s %s %-5s %-4s %-5s %-10s %9lld %9.4f %6g  x=%.9g m=(%g, %g)%s\n", name, dir,
               ffn__out_names[op][o], ffn_dtype_name(dt), acc ? "high" : "def", set,
               (long long)st[o].n, st[o].max, bound, st[o].x_at_max, st[o].m1_at_max,
               st[o].m2_at_max, ok ? "" : "  FAIL");
        CHECK(ok, "%s %s %s %s %s %s: max %.4f ulp > bound %g at x=%.9g (%lld over)", name, dir,
              ffn__out_names[op][o], ffn_dtype_name(dt), acc ? "high" : "def", set, st[o].max,
              bound, st[o].x_at_max, (long long)st[o].n_over);
    }
}

// Parity mode: h = round(round(act(g))·round(up)) against the reference's parity value.
static void ffn__parity(const float *list, int64_t n, enum ffn_act act, enum ffn_dtype dt,
                        bool acc) {
    int64_t diff = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float g = ffn_cm_round_to(dt, list[i]);
        const float u = ffn__ups[i % 4];
        const struct ffn_cm_out y =
            ffn_cm_elem(&ffn__tabs, FFN_KOP_GLU_FWD, act, acc, true, dt, g, u, u);
        const float got = ffn_cm_round_to(dt, y.y0);
        const float ar = ffn_round_to(dt, (float)ffn_ref_act(act, g));
        const float ref = ffn_round_to(dt, (float)((double)ar * (double)ffn_round_to(dt, u)));
        if (ffn_test_same(got, ref)) continue;
        diff++;
        // Else round(act(gate)) is a neighbour of the reference's (act within the f32 bound, but
        // on the other side of a midpoint of the output type): the product of that neighbour.
        const uint16_t hb = dt == FFN_DTYPE_BF16 ? ffn_f32_to_bf16(ar) : ffn_f32_to_f16(ar);
        bool near = false;
        for (int d = -1; d <= 1; d += 2) {
            const uint16_t nb = ar == 0 ? (uint16_t)(d < 0 ? 0x8001 : 0x0001) : (uint16_t)(hb + d);
            const float an = dt == FFN_DTYPE_BF16 ? ffn_bf16_to_f32(nb) : ffn_f16_to_f32(nb);
            const float rn = ffn_round_to(dt, (float)((double)an * (double)ffn_round_to(dt, u)));
            near = near || ffn_test_same(got, rn);
        }
        if (!near) {
            bad++;
            FAIL("parity %s %s: g=%.9g up=%g got %.9g, reference %.9g", ffn_glu_name(act),
                 ffn_dtype_name(dt), g, u, got, ref);
        }
    }
    printf("%-12s fwd h     %-4s %-5s parity     %9lld  %lld from a neighbouring act, %lld else\n",
           ffn_glu_name(act), ffn_dtype_name(dt), acc ? "high" : "def", (long long)n,
           (long long)diff, (long long)bad);
    CHECK((double)diff <= 1e-3 * (double)n, "parity %s %s: %lld of %lld differ from the reference",
          ffn_glu_name(act), ffn_dtype_name(dt), (long long)diff, (long long)n);
}

static int ffn__parse(int argc, char **argv, struct ffn__opts *op) {
    memset(op, 0, sizeof *op);
    op->stride = 65521;
    bool any = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--act") && i + 1 < argc) {
            enum ffn_act a;
            if (ffn_act_from_name(argv[++i], &a) != FFN_STATUS_OK) {
                fprintf(stderr, "test_cuda_math: unknown act '%s'\n", argv[i]);
                return 2;
            }
            op->act[a] = any = true;
        } else if (!strcmp(argv[i], "--stride") && i + 1 < argc) {
            op->stride = (uint32_t)strtoul(argv[++i], NULL, 10);
            if (!op->stride) return 2;
        } else {
            fprintf(stderr, "usage: test_cuda_math [--act ACT]... [--stride N]\n");
            return 2;
        }
    }
    if (!any)
        for (int a = 0; a < FFN_ACT_COUNT; a++) op->act[a] = true;
    return 0;
}

int main(int argc, char **argv) {
    ffn_cm_tabs_fill(&ffn__tabs, &ffn__tabs_src, 0, 1, true, true);
    struct ffn__opts op;
    if (ffn__parse(argc, argv, &op)) return 2;
    ffn_check_begin("test_cuda_math");

    // The input sets: f32 hard regions + strided; all 16-bit patterns of bf16 and f16.
    const int64_t nh = ffn_inputs_hard(NULL, 0), ns = ffn_inputs_strided(NULL, 0, op.stride, 0);
    float *f32 = malloc((size_t)(nh + ns) * sizeof *f32);
    float *b16 = malloc(65536 * sizeof *b16), *h16 = malloc(65536 * sizeof *h16);
    if (!f32 || !b16 || !h16) return 2;
    ffn_inputs_hard(f32, nh);
    ffn_inputs_strided(f32 + nh, ns, op.stride, 0);
    for (int i = 0; i < 65536; i++) {
        b16[i] = ffn_bf16_to_f32((uint16_t)i);
        h16[i] = ffn_f16_to_f32((uint16_t)i);
    }
    printf(
        "test_cuda_math: f32 %lld inputs (hard regions + every %u-th pattern), bf16 and f16 "
        "all 65,536\n",
        (long long)(nh + ns), op.stride);
    printf("%-12s %s %-5s %-4s %-5s %-10s %9s %9s %6s\n", "op", "dir", "out", "type", "tier", "set",
           "n", "max_ulp", "bound");

    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        if (!op.act[a]) continue;
        const enum ffn_act act = (enum ffn_act)a;
        const bool gelu = act == FFN_ACT_GELU_TANH || act == FFN_ACT_GELU_ERF;
        for (int k = 0; k < FFN_KOP_COUNT; k++) {
            const enum ffn_kop kop = (enum ffn_kop)k;
            const bool fwd = kop == FFN_KOP_ACT_FWD || kop == FFN_KOP_GLU_FWD;
            for (int tier = 0; tier < (gelu && fwd ? 2 : 1); tier++) {
                const bool acc = tier == 1;
                ffn__sweep(f32, nh + ns, kop, act, FFN_DTYPE_F32, acc, false, "f32");
                ffn__sweep(b16, 65536, kop, act, FFN_DTYPE_BF16, acc, false, "bf16-all");
                ffn__sweep(h16, 65536, kop, act, FFN_DTYPE_F16, acc, false, "f16-all");
                if (kop != FFN_KOP_ACT_FWD)
                    ffn__sweep(f32, nh, kop, act, FFN_DTYPE_F32, acc, true, "hard-rndm");
            }
        }
        for (int tier = 0; tier < (gelu ? 2 : 1); tier++) {
            ffn__parity(b16, 65536, act, FFN_DTYPE_BF16, tier == 1);
            ffn__parity(h16, 65536, act, FFN_DTYPE_F16, tier == 1);
        }
        fflush(stdout);
    }
    free(f32), free(b16), free(h16);
    return ffn_check_summary();
}
