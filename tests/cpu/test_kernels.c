// test_kernels.c — tier 2: every kernel of src/cpu/kernels.inc (expanded here with the FFN_KERNEL
// X-macro, so SIMD kernels are tested as they land), called directly through the prototypes of
// kernels.h on every ISA this CPU supports, against the scalar reference definitions in double
// (ffn_ref_act / ffn_ref_dact) with the bounds of the one table (tools/oracle.c):
//   - n = 0..70, 1000, 16384+17; all 9 (in, out) dtype pairs; both accuracy tiers;
//   - aligned and element-misaligned pointers; guard zones around outputs; inputs left untouched;
//   - bf16/f16 outputs equal to the rounding (ffn_f32_to_bf16/f16) of the kernel's own f32 result;
//   - in place (every alias the API allows), bitwise equal to out of place;
//   - each output independent of where its element lies in the call (lane, tail, start offset);
//   - special values (±0, ±inf, NaN, ±150, 1000, -88, -92, -100, -104, subnormals, ...);
//   - parity mode (round act(gate) to the output type before the multiply);
//   - on an AVX512_BF16 CPU, bf16 stores by vcvtneps2bf16 and by integer rounding, alternately;
// and, through contexts, the two classic WGSL bugs absent: gelu_tanh(1000) == 1000 (no input
// clamp) and silu(-inf) == -0 (not NaN), plus gelu(-inf) == -0 (docs/numerics.md explains them).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

#define FFN__SEED 0x7e57c0ffee5eedull
#define FFN__GUARD 64  // guard bytes on each side of every output
#define FFN__GUARD_BYTE 0xa5
#define FFN__MAX_N (16384 + 17)
#define FFN__POS_N 70  // the position-independence check's length
#define FFN__PARITY_N 4096
#define FFN__PRINT_PER_KERNEL 4

// --- the kernel list ------------------------------------------------------------------------------

struct ffn__kern {
    enum ffn_isa isa;
    enum ffn_kop op;
    enum ffn_act act;
    const char *name;
    void (*fn)(void);
};

static const struct ffn__kern ffn__kernels[] = {
#define FFN_KERNEL(isa, op, act, fn) \
    {FFN_ISA_##isa, FFN_KOP_##op, FFN_ACT_##act, #fn, (void (*)(void))fn},
#include "cpu/kernels.inc"
#undef FFN_KERNEL
};

static const int ffn__n_in[FFN_KOP_COUNT] = {1, 2, 2, 3};
static const int ffn__n_out[FFN_KOP_COUNT] = {1, 1, 1, 2};

// On a CPU with AVX512_BF16 the AVX-512 kernels may store bf16 through vcvtneps2bf16
// (cfg->bf16_cvt) instead of the integer rounding: calls alternate between the two, so that every
// check below holds for both (bf16 outputs must equal the integer rounding of the f32 result).
static void ffn__call(const struct ffn__kern *k, const struct ffn_kcfg *cfg_in, int64_t n,
                      void *const *out, const void *const *in) {
    static int have_bf16 = -1, flip;
    if (have_bf16 < 0) {
        struct ffn_cpu_features f;
        ffn_cpu_features_detect(&f);
        have_bf16 = f.avx512_bf16;
    }
    struct ffn_kcfg c = *cfg_in;
    c.bf16_cvt = have_bf16 && k->isa == FFN_ISA_AVX512 && (flip++ & 1);
    const struct ffn_kcfg *cfg = &c;
    switch (k->op) {
    case FFN_KOP_ACT_FWD: ((ffn_act_fwd_fn)k->fn)(cfg, n, out[0], in[0]); break;
    case FFN_KOP_ACT_BWD: ((ffn_act_bwd_fn)k->fn)(cfg, n, out[0], in[0], in[1]); break;
    case FFN_KOP_GLU_FWD: ((ffn_glu_fwd_fn)k->fn)(cfg, n, out[0], in[0], in[1]); break;
    default: ((ffn_glu_bwd_fn)k->fn)(cfg, n, out[0], out[1], in[0], in[1], in[2]); break;
    }
}

// The reference value of output o in double, from the inputs' values v[0..2]:
// act(x); dy·act'(x); act(g)·up; dh·up·act'(g) and dh·act(g).
static double ffn__ref(enum ffn_kop op, int o, enum ffn_act act, const float *v) {
    switch (op) {
    case FFN_KOP_ACT_FWD: return ffn_ref_act(act, v[0]);
    case FFN_KOP_ACT_BWD: return (double)v[1] * ffn_ref_dact(act, v[0]);
    case FFN_KOP_GLU_FWD: return ffn_ref_act(act, v[0]) * (double)v[1];
    default:
        return o == 0 ? (double)v[2] * (double)v[1] * ffn_ref_dact(act, v[0])
                      : (double)v[2] * ffn_ref_act(act, v[0]);
    }
}

// ffn_ulp_error's factors for output o: (m1, m2) = (dy, 1), (up, 1), (up, dh) or (dh, 1).
static void ffn__factors(enum ffn_kop op, int o, const float *v, float *m1, float *m2) {
    *m1 = op == FFN_KOP_ACT_FWD ? 1.0f : (op == FFN_KOP_GLU_BWD && o == 1 ? v[2] : v[1]);
    *m2 = op == FFN_KOP_GLU_BWD && o == 0 ? v[2] : 1.0f;
}

static const char *const ffn__out_names[FFN_KOP_COUNT][2] = {
    {"y", ""}, {"dx", ""}, {"h", ""}, {"dgate", "dup"}};

// --- buffers with guard zones ------------------------------------------------------------------

struct ffn__buf {
    unsigned char *base;  // FFN__GUARD + capacity + FFN__GUARD bytes
    void *data;           // base + FFN__GUARD + offset
    size_t bytes;         // n · element size
};

static void ffn__buf_init(struct ffn__buf *b) {
    b->base = ffn_test_alloc(2 * FFN__GUARD + (size_t)(FFN__MAX_N + 16) * 4);
}

// Places n elements of dt at `offset` elements past the guard and fills everything else with
// the guard byte.
static void ffn__buf_place(struct ffn__buf *b, enum ffn_dtype dt, int64_t n, int offset) {
    const size_t total = 2 * FFN__GUARD + (size_t)(FFN__MAX_N + 16) * 4;
    memset(b->base, FFN__GUARD_BYTE, total);
    b->data = b->base + FFN__GUARD + (size_t)offset * ffn_dtype_size(dt);
    b->bytes = (size_t)n * ffn_dtype_size(dt);
}

// True when nothing outside [data, data + bytes) was written.
static bool ffn__buf_guards_ok(const struct ffn__buf *b) {
    const size_t total = 2 * FFN__GUARD + (size_t)(FFN__MAX_N + 16) * 4;
    const unsigned char *lo = b->base, *d = b->data, *end = b->base + total;
    for (const unsigned char *p = lo; p < d; p++)
        if (*p != FFN__GUARD_BYTE) return false;
    for (const unsigned char *p = d + b->bytes; p < end; p++)
        if (*p != FFN__GUARD_BYTE) return false;
    return true;
}

// --- input values --------------------------------------------------------------------------------

static const float ffn__specials[] = {
    0.0f,      -0.0f,      INFINITY,         -INFINITY,  NAN,       -NAN,       150.0f, -150.0f,
    1000.0f,   -1000.0f,   -88.0f,           -92.0f,     -100.0f,   -104.0f,    88.72f, -87.33f,
    0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, -0x1p-130f, 0x1p-126f, -0x1p-126f, 3e38f,  -3e38f,
    20.0f,     -20.0f,     -1.2784645f,      -0.75179f,  1e-7f,     -1e-7f,     5.0f,   -5.0f,
    2e13f,     -2e13f,     65504.0f,         -65504.0f,  65520.0f,  1.0f,       -1.0f,  0.5f,
};
#define FFN__N_SPECIALS (sizeof ffn__specials / sizeof ffn__specials[0])

// The first input (x or gate).
static float ffn__rand_x(uint64_t *s) {
    const uint64_t r = ffn_test_rand(s) % 20;
    if (r < 12) return (float)ffn_test_uniform(s, -10.0, 10.0);
    if (r < 14) return (float)ffn_test_uniform(s, -110.0, 110.0);
    if (r < 16) return ffn__specials[ffn_test_rand(s) % FFN__N_SPECIALS];
    if (r < 18) return ffn_test_logrand(s, -30.0, 30.0);
    return ffn_f32_from_bits((uint32_t)ffn_test_rand(s));  // any bit pattern, NaNs included
}

// The factors (dy, up, dh).
static float ffn__rand_m(uint64_t *s) { return ffn_test_logrand(s, -4.0, 4.0); }

// --- one configuration: kernel × dtypes × tier × n ---------------------------------------------

struct ffn__state {
    struct ffn__buf in[3], out[2], tmp[2], alias[3];
    float *vals[3];  // the inputs' values as stored (f32)
    uint64_t seed;
    int64_t configs;
};

static const char *ffn__cfg_str(const struct ffn__kern *k, const struct ffn_kcfg *cfg, char *buf,
                                size_t size) {
    snprintf(buf, size, "%s %s->%s%s%s", k->name, ffn_dtype_name(cfg->in), ffn_dtype_name(cfg->out),
             cfg->accurate ? " accurate" : "", cfg->parity ? " parity" : "");
    return buf;
}

// Fills the inputs with n fresh values (rounded to cfg->in) at the given element offsets.
static void ffn__fill(struct ffn__state *S, const struct ffn__kern *k, enum ffn_dtype dt, int64_t n,
                      const int *offsets) {
    for (int j = 0; j < ffn__n_in[k->op]; j++) {
        ffn__buf_place(&S->in[j], dt, n, offsets[j]);
        for (int64_t i = 0; i < n; i++) {
            const float v = j == 0 ? ffn__rand_x(&S->seed) : ffn__rand_m(&S->seed);
            ffn_test_set(S->in[j].data, dt, i, v);
            S->vals[j][i] = ffn_test_get(S->in[j].data, dt, i);
        }
    }
}

// Checks the outputs of one call against the reference (f32 outputs) or against the rounding of
// the same kernel's f32 result (16-bit outputs); then in place.
static void ffn__check_call(struct ffn__state *S, const struct ffn__kern *k,
                            const struct ffn_kcfg *cfg, int64_t n, const int *out_off) {
    char cs[160];
    const int no = ffn__n_out[k->op], ni = ffn__n_in[k->op];
    void *outs[2] = {0};
    const void *ins[3] = {0};
    for (int j = 0; j < ni; j++) ins[j] = S->in[j].data;
    for (int o = 0; o < no; o++) {
        ffn__buf_place(&S->out[o], cfg->out, n, out_off[o]);
        outs[o] = S->out[o].data;
    }
    // Saved copies of the inputs (a kernel must not write them).
    for (int j = 0; j < ni; j++) memcpy(S->alias[j].base, S->in[j].data, S->in[j].bytes);
    ffn__call(k, cfg, n, outs, ins);
    for (int j = 0; j < ni; j++)
        CHECK(!memcmp(S->alias[j].base, S->in[j].data, S->in[j].bytes),
              "%s n=%lld: input %d was modified", ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)n,
              j);
    for (int o = 0; o < no; o++)
        CHECK(ffn__buf_guards_ok(&S->out[o]), "%s n=%lld: %s written outside [0, n)",
              ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)n, ffn__out_names[k->op][o]);

    // 16-bit outputs: the same kernel with f32 outputs, rounded by the library's conversion.
    if (cfg->out != FFN_DTYPE_F32) {
        struct ffn_kcfg c32 = *cfg;
        c32.out = FFN_DTYPE_F32;
        void *t[2] = {0};
        for (int o = 0; o < no; o++) {
            ffn__buf_place(&S->tmp[o], FFN_DTYPE_F32, n, 0);
            t[o] = S->tmp[o].data;
        }
        ffn__call(k, &c32, n, t, ins);
        for (int o = 0; o < no; o++)
            for (int64_t i = 0; i < n; i++) {
                const float f = ((const float *)t[o])[i];
                const float want = ffn_round_to(cfg->out, f),
                            got = ffn_test_get(outs[o], cfg->out, i);
                if (!ffn_test_same(got, want))
                    FAIL(
                        "%s n=%lld i=%lld %s: x=%a: %s output %a is not the rounding "
                        "%a of the f32 output %a",
                        ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)n, (long long)i,
                        ffn__out_names[k->op][o], S->vals[0][i], ffn_dtype_name(cfg->out), got,
                        want, f);
            }
    }
    // Accuracy against the reference, in ulps of the output type.
    const double bound = ffn_ulp_bound(k->op, k->act, cfg->accurate);
    for (int o = 0; o < no; o++)
        for (int64_t i = 0; i < n; i++) {
            const float v[3] = {S->vals[0][i], ni > 1 ? S->vals[1][i] : 1.0f,
                                ni > 2 ? S->vals[2][i] : 1.0f};
            float m1, m2;
            ffn__factors(k->op, o, v, &m1, &m2);
            const double want = ffn__ref(k->op, o, k->act, v);
            const float got = ffn_test_get(outs[o], cfg->out, i);
            const double err = ffn_ulp_error(k->op, o, k->act, cfg->out, got, want, v[0], m1, m2);
            if (!(err <= bound))
                FAIL(
                    "%s n=%lld i=%lld %s: inputs (%a, %a, %a): expected %a, got %a "
                    "(%.3g ulp > %g)",
                    ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)n, (long long)i,
                    ffn__out_names[k->op][o], v[0], v[1], v[2], want, got, err, bound);
        }
    ffn_check_count((int64_t)n * no);

    // In place: every alias the API allows, bitwise equal to the out-of-place result.
    if (cfg->in != cfg->out) return;
    static const int alias_sets[FFN_KOP_COUNT][3][2] = {
        // For each op, up to 3 variants: {input aliased by output 0, by output 1} (-1: none).
        {{0, -1}, {-2, -2}, {-2, -2}},  // y = x
        {{0, -1}, {1, -1}, {-2, -2}},   // dx = x, dx = dy
        {{0, -1}, {1, -1}, {-2, -2}},   // h = gate, h = up
        {{0, 1}, {2, -1}, {-1, 2}},     // dgate = gate & dup = up; dgate = dh; dup = dh
    };
    for (int v = 0; v < 3; v++) {
        const int *as = alias_sets[k->op][v];
        if (as[0] == -2) break;
        void *ao[2] = {0};
        const void *ai[3] = {0};
        for (int j = 0; j < ni; j++) {
            memcpy(S->alias[j].base, S->in[j].data, S->in[j].bytes);
            ai[j] = S->alias[j].base;
        }
        for (int o = 0; o < no; o++) {
            if (as[o] >= 0) {
                ao[o] = S->alias[as[o]].base;
            } else {
                ffn__buf_place(&S->tmp[o], cfg->out, n, 0);
                ao[o] = S->tmp[o].data;
            }
        }
        ffn__call(k, cfg, n, ao, ai);
        for (int o = 0; o < no; o++)
            for (int64_t i = 0; i < n; i++)
                if (!ffn_test_same_elem(ao[o], outs[o], cfg->out, i))
                    FAIL(
                        "%s n=%lld i=%lld: in place (variant %d) %s = %a, out of place "
                        "%a",
                        ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)n, (long long)i, v,
                        ffn__out_names[k->op][o], ffn_test_get(ao[o], cfg->out, i),
                        ffn_test_get(outs[o], cfg->out, i));
    }
}

// Each element's result does not depend on where it lies in the call: for every start s, the
// call on [s, n) gives the full call's elements s..n-1.
static void ffn__check_position(struct ffn__state *S, const struct ffn__kern *k,
                                const struct ffn_kcfg *cfg) {
    char cs[160];
    const int64_t n = FFN__POS_N;
    const int offs[3] = {0, 0, 0}, no = ffn__n_out[k->op], ni = ffn__n_in[k->op];
    ffn__fill(S, k, cfg->in, n, offs);
    void *outs[2] = {0}, *sub[2] = {0};
    const void *ins[3] = {0};
    for (int o = 0; o < no; o++) {
        ffn__buf_place(&S->out[o], cfg->out, n, 0);
        outs[o] = S->out[o].data;
    }
    for (int j = 0; j < ni; j++) ins[j] = S->in[j].data;
    ffn__call(k, cfg, n, outs, ins);
    const size_t ies = ffn_dtype_size(cfg->in), oes = ffn_dtype_size(cfg->out);
    for (int64_t s = 1; s < n; s++) {
        const void *si[3] = {0};
        for (int j = 0; j < ni; j++) si[j] = (const char *)ins[j] + (size_t)s * ies;
        for (int o = 0; o < no; o++) {
            ffn__buf_place(&S->tmp[o], cfg->out, n - s, 0);
            sub[o] = S->tmp[o].data;
        }
        ffn__call(k, cfg, n - s, sub, si);
        for (int o = 0; o < no; o++)
            for (int64_t i = 0; i < n - s; i++)
                if (!ffn_test_same_elem(sub[o], (const char *)outs[o] + (size_t)s * oes, cfg->out,
                                        i))
                    FAIL(
                        "%s: element %lld is %a in a call of n=%lld and %a when the "
                        "call starts at %lld",
                        ffn__cfg_str(k, cfg, cs, sizeof cs), (long long)(s + i),
                        ffn_test_get(outs[o], cfg->out, s + i), (long long)n,
                        ffn_test_get(sub[o], cfg->out, i), (long long)s);
    }
    ffn_check_count(1);
}

// Special values of x (and gate) against every factor in a small set, for every dtype pair.
static void ffn__check_specials(struct ffn__state *S, const struct ffn__kern *k) {
    static const float ms[] = {1.0f, -2.5f, 0.375f, 3e-3f, -1e4f};
    const int nm = sizeof ms / sizeof ms[0], ni = ffn__n_in[k->op];
    const int64_t n = (int64_t)FFN__N_SPECIALS * nm;
    const int offs[3] = {1, 2, 3}, out_off[2] = {1, 3};
    for (int acc = 0; acc < 2; acc++)
        for (int ti = 0; ti < FFN_DTYPE_COUNT; ti++)
            for (int to = 0; to < FFN_DTYPE_COUNT; to++) {
                const struct ffn_kcfg cfg = {
                    .in = (enum ffn_dtype)ti, .out = (enum ffn_dtype)to, .accurate = acc};
                for (int j = 0; j < ni; j++) {
                    ffn__buf_place(&S->in[j], cfg.in, n, offs[j]);
                    for (int64_t i = 0; i < n; i++) {
                        const float v =
                            j == 0 ? ffn__specials[i / nm] : ms[(i + (j == 2 ? 2 : 0)) % nm];
                        ffn_test_set(S->in[j].data, cfg.in, i, v);
                        S->vals[j][i] = ffn_test_get(S->in[j].data, cfg.in, i);
                    }
                }
                ffn__check_call(S, k, &cfg, n, out_off);
            }
}

// Parity mode: h = round_out(round_out(act(gate)) · round_out(up)), where act(gate) is the f32
// result of the same ISA's act kernel (or the reference's): the definition of elementwise.c.
static void ffn__check_parity(struct ffn__state *S, const struct ffn__kern *k) {
    char cs[160];
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.force_isa = k->isa;
    ffn_ctx_t ctx;
    if (ffn_ctx_create(&o, &ctx) != FFN_STATUS_OK) return;
    const ffn_act_fwd_fn act_fwd = ffn_cpu_kernel_table(ctx)->act_fwd[k->act];
    const int64_t n = FFN__PARITY_N;
    const int offs[3] = {0, 0, 0};
    float *a = ffn_test_alloc((size_t)n * 4);
    for (int acc = 0; acc < 2; acc++)
        for (int ti = 0; ti < FFN_DTYPE_COUNT; ti++)
            for (int to = FFN_DTYPE_BF16; to < FFN_DTYPE_COUNT; to++) {
                struct ffn_kcfg cfg = {.in = (enum ffn_dtype)ti,
                                       .out = (enum ffn_dtype)to,
                                       .accurate = acc,
                                       .parity = true};
                ffn__fill(S, k, cfg.in, n, offs);
                const void *ins[3] = {S->in[0].data, S->in[1].data, NULL};
                void *outs[2] = {S->out[0].base, NULL}, *plain[2] = {S->tmp[0].base, NULL};
                ffn__call(k, &cfg, n, outs, ins);
                struct ffn_kcfg c2 = cfg;
                c2.parity = false;
                ffn__call(k, &c2, n, plain, ins);
                const struct ffn_kcfg ca = {.in = cfg.in, .out = FFN_DTYPE_F32, .accurate = acc};
                act_fwd(&ca, n, a, ins[0]);
                int64_t differ = 0;
                for (int64_t i = 0; i < n; i++) {
                    const float g = S->vals[0][i], u = S->vals[1][i];
                    const float ur = ffn_round_to(cfg.out, u);
                    const float want_k = ffn_round_to(
                        cfg.out, (float)((double)ffn_round_to(cfg.out, a[i]) * (double)ur));
                    const float want_r = ffn_round_to(
                        cfg.out,
                        (float)((double)ffn_round_to(cfg.out, (float)ffn_ref_act(k->act, g)) * ur));
                    const float got = ffn_test_get(outs[0], cfg.out, i);
                    differ += !ffn_test_same_elem(outs[0], plain[0], cfg.out, i);
                    if (!ffn_test_same(got, want_k) && !ffn_test_same(got, want_r))
                        FAIL(
                            "%s i=%lld gate=%a up=%a: got %a, parity definition gives "
                            "%a (reference act: %a)",
                            ffn__cfg_str(k, &cfg, cs, sizeof cs), (long long)i, g, u, got, want_k,
                            want_r);
                }
                ffn_check_count(n);
                // Parity must change some results, else this check could not fail (relu and
                // identity of a 16-bit gate are exact in any type: nothing to round there).
                const bool exact_act = k->act == FFN_ACT_RELU || k->act == FFN_ACT_IDENTITY;
                CHECK(differ > 0 || exact_act,
                      "%s: parity and plain results never differ on %lld inputs",
                      ffn__cfg_str(k, &cfg, cs, sizeof cs), (long long)n);
            }
    free(a);
    ffn_ctx_destroy(ctx);
}

// The classic WGSL bugs (docs/numerics.md), through contexts of every ISA and tier, in every dtype.
static void ffn__check_wgsl_bugs(void) {
    struct ffn_test_ctx c[FFN_TEST_MAX_CTX];
    const int nc = ffn_test_contexts(c, true);
    static const struct {
        enum ffn_act act;
        float x, want;
        const char *what;
    } cases[] = {
        {FFN_ACT_GELU_TANH, 1000.0f, 1000.0f, "gelu_tanh(1000) == 1000 (no input clamp)"},
        {FFN_ACT_GELU_ERF, 1000.0f, 1000.0f, "gelu_erf(1000) == 1000"},
        {FFN_ACT_SILU, -INFINITY, -0.0f, "silu(-inf) == -0 (not NaN)"},
        {FFN_ACT_GELU_TANH, -INFINITY, -0.0f, "gelu_tanh(-inf) == -0"},
        {FFN_ACT_GELU_ERF, -INFINITY, -0.0f, "gelu_erf(-inf) == -0"},
        {FFN_ACT_QUICK_GELU, -INFINITY, -0.0f, "quick_gelu(-inf) == -0"},
        {FFN_ACT_SILU, INFINITY, INFINITY, "silu(+inf) == +inf"},
        {FFN_ACT_GELU_TANH, INFINITY, INFINITY, "gelu_tanh(+inf) == +inf"},
    };
    for (int i = 0; i < nc; i++)
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
            for (int t = 0; t < FFN_DTYPE_COUNT; t++) {
                const enum ffn_dtype dt = (enum ffn_dtype)t;
                uint32_t xin[8] = {0}, yout[8] = {0};
                for (int e = 0; e < 8; e++) ffn_test_set(xin, dt, e, cases[j].x);  // all lanes
                struct ffn_tensor tx = ffn_tensor_vec(xin, dt, 8), ty = ffn_tensor_vec(yout, dt, 8);
                const enum ffn_status st = ffn_act_forward(c[i].ctx, cases[j].act, &ty, &tx);
                const float got = ffn_test_get(yout, dt, 7);
                CHECK(st == FFN_STATUS_OK && ffn_test_same(got, cases[j].want),
                      "[%s] %s %s: got %a", c[i].label, ffn_dtype_name(dt), cases[j].what, got);
            }
    ffn_test_contexts_free(c, nc);
}

int main(void) {
    static struct ffn__state S;
    ffn_check_begin("kernels");
    S.seed = FFN__SEED;
    printf("seed %#llx; %zu kernels listed\n", (unsigned long long)S.seed,
           sizeof ffn__kernels / sizeof ffn__kernels[0]);
    for (int j = 0; j < 3; j++) {
        ffn__buf_init(&S.in[j]);
        ffn__buf_init(&S.alias[j]);
        S.vals[j] = ffn_test_alloc((size_t)FFN__MAX_N * 4);
    }
    for (int o = 0; o < 2; o++) {
        ffn__buf_init(&S.out[o]);
        ffn__buf_init(&S.tmp[o]);
    }
    static int64_t sizes[80];
    int n_sizes = 0;
    for (int64_t n = 0; n <= 70; n++) sizes[n_sizes++] = n;
    sizes[n_sizes++] = 1000;
    sizes[n_sizes++] = FFN__MAX_N;

    for (size_t ki = 0; ki < sizeof ffn__kernels / sizeof ffn__kernels[0]; ki++) {
        const struct ffn__kern *k = &ffn__kernels[ki];
        if (!ffn_isa_supported(k->isa)) {
            printf("  %-34s skipped: %s not supported here\n", k->name, ffn_isa_name(k->isa));
            continue;
        }
        // Each kernel is its own section (first FFN__PRINT_PER_KERNEL failures printed).
        ffn_check_section(k->name, FFN__PRINT_PER_KERNEL);
        // The scalar reference has one tier: FFN_ACCURACY_HIGH changes nothing there.
        for (int acc = 0; acc < (k->isa == FFN_ISA_SCALAR ? 1 : 2); acc++)
            for (int ti = 0; ti < FFN_DTYPE_COUNT; ti++)
                for (int to = 0; to < FFN_DTYPE_COUNT; to++) {
                    const struct ffn_kcfg cfg = {
                        .in = (enum ffn_dtype)ti, .out = (enum ffn_dtype)to, .accurate = acc};
                    for (int si = 0; si < n_sizes; si++) {
                        const int64_t n = sizes[si];
                        // The largest size (many chunks of every vector path) for same-type pairs.
                        if (n == FFN__MAX_N && ti != to) continue;
                        // Odd n: every pointer misaligned by a different number of elements.
                        const bool mis = n % 2;
                        const int offs[3] = {mis ? 1 : 0, mis ? 3 : 0, mis ? 2 : 0};
                        const int out_off[2] = {mis ? 1 : 0, mis ? 5 : 0};
                        ffn__fill(&S, k, cfg.in, n, offs);
                        ffn__check_call(&S, k, &cfg, n, out_off);
                    }
                    if (ti == to) ffn__check_position(&S, k, &cfg);
                }
        ffn__check_specials(&S, k);
        if (k->op == FFN_KOP_GLU_FWD) ffn__check_parity(&S, k);
        printf("  %-34s %s\n", k->name, ffn_check_section_failures() ? "FAILED" : "ok");
        ffn_check_section(NULL, 0);
    }
    ffn__check_wgsl_bugs();
    for (int j = 0; j < 3; j++) {
        free(S.in[j].base);
        free(S.alias[j].base);
        free(S.vals[j]);
    }
    for (int o = 0; o < 2; o++) {
        free(S.out[o].base);
        free(S.tmp[o].base);
    }
    return ffn_check_summary();
}
