// wgsl_golden.c — writes the golden data the WGSL kernels are tested against in the browser
// (webgpu/test/): for each WGSL kernel, its inputs and the outputs of the library's scalar
// reference (a context with force_isa = FFN_ISA_SCALAR), in f32 and in f16 storage.
// Usage: wgsl_golden OUT_DIR   -> OUT_DIR/<kernel>.<f32|f16>.bin + OUT_DIR/manifest.json
// Inputs per kernel, in four segments: every f16 bit pattern widened to f32; special values and
// special (gate, multiplier) pairs; the hard regions (SiLU below -80, the GeLU tails) with huge
// and tiny multipliers; random data from a fixed seed (printed). This is not the test: the
// comparison and the per-kernel tolerances live in webgpu/test/ (documented in docs/numerics.md).
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_impl.h"  // ffn_ref_act / ffn_ref_dact: the reference definitions in double
#include "ffn.h"

#define GOLDEN_MAGIC "FFNWGSL1"
#define GOLDEN_SEED 0x5eed2024f00dULL
#define N_SWEEP 65536   // every f16 bit pattern
#define N_RANDOM 65536  // random inputs per kernel
// exact mask values
#define EXACT_NO 0    // compared in ulps
#define EXACT_BITS 1  // an input is 0, inf or NaN: a 0, inf or NaN result must match bitwise
#define EXACT_SKIP 2  // not compared: act(x) underflows in the double reference (see below)
#define LEN(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

enum kind { UNARY, UNARY_BWD, GATED, GATED_BWD };

struct kernel {
    const char *name;  // WGSL entry point (f32 variant)
    enum kind kind;
    enum ffn_act act;
};

static const struct kernel KERNELS[] = {
    {"gelu_inplace", UNARY, FFN_ACT_GELU_TANH},
    {"gelu_erf_inplace", UNARY, FFN_ACT_GELU_ERF},
    {"silu_inplace", UNARY, FFN_ACT_SILU},
    {"relu_inplace", UNARY, FFN_ACT_RELU},
    {"swiglu_combine", GATED, FFN_ACT_SILU},
    {"geglu_combine", GATED, FFN_ACT_GELU_TANH},
    {"geglu_erf_combine", GATED, FFN_ACT_GELU_ERF},
    {"reglu_combine", GATED, FFN_ACT_RELU},
    {"gelu_backward", UNARY_BWD, FFN_ACT_GELU_TANH},
    {"gelu_erf_backward", UNARY_BWD, FFN_ACT_GELU_ERF},
    {"silu_backward", UNARY_BWD, FFN_ACT_SILU},
    {"relu_backward", UNARY_BWD, FFN_ACT_RELU},
    {"swiglu_backward", GATED_BWD, FFN_ACT_SILU},
    {"geglu_backward", GATED_BWD, FFN_ACT_GELU_TANH},
    {"geglu_erf_backward", GATED_BWD, FFN_ACT_GELU_ERF},
    {"reglu_backward", GATED_BWD, FFN_ACT_RELU},
};

static const int N_IN[] = {1, 2, 2, 3};   // x | x, dy | gate, up | gate, up, dh
static const int N_OUT[] = {1, 1, 1, 2};  // y | dx | hidden | dgate, dup

// --- deterministic random numbers (splitmix64) ------------------------------------------------
static double rnd_unit(unsigned long long *s) {
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;  // [0, 1)
}
static double rnd_range(unsigned long long *s, double lo, double hi) {
    return lo + (hi - lo) * rnd_unit(s);
}
static double rnd_sign(unsigned long long *s) { return rnd_unit(s) < 0.5 ? -1.0 : 1.0; }

// A pre-activation: mostly the range where the activations bend, plus tails and huge/tiny values.
static float rnd_x(unsigned long long *s) {
    const double u = rnd_unit(s);
    if (u < 0.4) return (float)rnd_range(s, -12.0, 12.0);
    if (u < 0.6) return (float)rnd_range(s, -110.0, 20.0);
    if (u < 0.8) return (float)(rnd_sign(s) * exp2(rnd_range(s, -60.0, 60.0)));
    return (float)rnd_range(s, -3.0, 3.0);
}
// A multiplier (up, dy, dh): mostly O(1), sometimes far from 1.
static float rnd_mult(unsigned long long *s) {
    if (rnd_unit(s) < 0.8) return (float)(rnd_sign(s) * rnd_range(s, 0.1, 10.0));
    return (float)(rnd_sign(s) * exp2(rnd_range(s, -100.0, 100.0)));
}

// --- inputs -------------------------------------------------------------------------------------
static const float SPECIAL_X[] = {
    0.0f,        -0.0f,       INFINITY,    -INFINITY,   NAN,        1.0f,        -1.0f,
    0.5f,        -0.5f,       3.0f,        -3.0f,       1e-40f,     -1e-40f,     1e-30f,
    -1e-30f,     5.0f,        -5.0f,       10.0f,       -10.0f,     10.5f,       13.0f,
    -13.0f,      20.0f,       -20.0f,      30.0f,       -30.0f,     88.0f,       -88.0f,
    -87.5f,      -88.7f,      -89.0f,      -90.0f,      -92.0f,     -95.0f,      -100.0f,
    -103.0f,     -104.0f,     -110.0f,     -150.0f,     150.0f,     1000.0f,     -1000.0f,
    1e10f,       -1e10f,      1e30f,       -1e30f,      FLT_MAX,    -FLT_MAX,    FLT_MIN,
    -FLT_MIN,    -1.2784645f, -0.7517916f, -1.7677669f, 1.7677669f, -1.1932427f, 1.1932427f,
    -4.0406102f, 4.0406102f,
};
// Gates that combine with non-finite or zero multipliers without an underflow of act(gate)
// in the double-precision reference (where act(g) * inf would turn into 0 * inf = NaN).
static const float SPECIAL_G[] = {0.0f, -0.0f, 1.0f, -3.0f, 2.5f, INFINITY, -INFINITY, NAN};
static const float SPECIAL_M[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e-30f, 1.0f};
// Multipliers far from 1 for the hard regions: results stay normal only without flushing.
static const float HARD_M[] = {1.0f, 1e30f, -3e35f, 1e-20f, -2.5f};

struct golden {
    int64_t n, seg[4];  // total, then sweep / special / hard / random counts
    float *in[3];
    unsigned char *exact;
};

static void put(struct golden *g, int64_t *k, int n_in, float a, float b, float c) {
    float v[3] = {a, b, c};
    for (int j = 0; j < n_in; j++) g->in[j][*k] = v[j];
    (*k)++;
}

// Builds the inputs of one kernel kind; f16 = every value is rounded to f16 (the f16 goldens).
static int build_inputs(struct golden *g, enum kind kind, unsigned long long seed) {
    const int n_in = N_IN[kind];
    const int64_t n_spec =
        kind == UNARY ? LEN(SPECIAL_X) : 2 * LEN(SPECIAL_X) + 2 * LEN(SPECIAL_G) * LEN(SPECIAL_M);
    const int64_t n_hard = 2 * 601 * LEN(HARD_M);
    g->seg[0] = N_SWEEP;
    g->seg[1] = n_spec;
    g->seg[2] = n_hard;
    g->seg[3] = N_RANDOM;
    g->n = g->seg[0] + g->seg[1] + g->seg[2] + g->seg[3];
    for (int j = 0; j < 3; j++) g->in[j] = j < n_in ? calloc((size_t)g->n, sizeof(float)) : NULL;
    g->exact = calloc((size_t)g->n, 1);
    for (int j = 0; j < n_in; j++)
        if (!g->in[j]) return -1;
    if (!g->exact) return -1;

    unsigned long long s = seed;
    int64_t k = 0;
    // sweep: x = every f16 value; multipliers random in ±[0.5, 2)
    for (int64_t i = 0; i < N_SWEEP; i++)
        put(g, &k, n_in, ffn_f16_to_f32((uint16_t)i),
            (float)(rnd_sign(&s) * rnd_range(&s, 0.5, 2.0)),
            (float)(rnd_sign(&s) * rnd_range(&s, 0.5, 2.0)));
    // special values (and special pairs)
    for (int64_t i = 0; i < LEN(SPECIAL_X); i++) {
        if (kind == UNARY) {
            put(g, &k, n_in, SPECIAL_X[i], 0, 0);
        } else {
            put(g, &k, n_in, SPECIAL_X[i], 1.0f, -2.5f);
            put(g, &k, n_in, SPECIAL_X[i], -2.5f, 1.0f);
        }
    }
    if (kind != UNARY)
        for (int64_t i = 0; i < LEN(SPECIAL_G); i++)
            for (int64_t j = 0; j < LEN(SPECIAL_M); j++) {
                put(g, &k, n_in, SPECIAL_G[i], SPECIAL_M[j], 1.5f);
                put(g, &k, n_in, SPECIAL_G[i], 1.5f, SPECIAL_M[j]);
            }
    // hard regions: x in [-110, -80] (SiLU's subnormal e^x) and [-16, -7] (the GeLU tails)
    for (int64_t m = 0; m < LEN(HARD_M); m++)
        for (int i = 0; i <= 600; i++) {
            put(g, &k, n_in, (float)(-110.0 + 30.0 * i / 600.0), HARD_M[m], 1.25f);
            put(g, &k, n_in, (float)(-16.0 + 9.0 * i / 600.0), 0.75f, HARD_M[m]);
        }
    // random
    for (int64_t i = 0; i < N_RANDOM; i++) {
        const float x = rnd_x(&s), a = rnd_mult(&s), b = rnd_mult(&s);
        put(g, &k, n_in, x, a, b);
    }
    if (k != g->n) return -1;
    return 0;
}

// --- the tolerance scale of a derivative: its largest term (docs/numerics.md) -------------------
// Near a zero of act' (SiLU' at -1.2785, GeLU' at -0.7518) the terms of act' cancel; there the
// bound is absolute, in ulps of |multipliers| * (largest term).
static double sigm(double t) { return t >= 0 ? 1.0 / (1.0 + exp(-t)) : exp(t) / (1.0 + exp(t)); }
static double dact_largest_term(enum ffn_act act, double x) {
    if (!isfinite(x)) return 0.0;
    switch (act) {
    case FFN_ACT_SILU: {
        const double s = sigm(x);
        return fmax(s, fabs(x * s * sigm(-x)));
    }
    case FFN_ACT_GELU_TANH: {
        const double k = sqrt(2.0 / M_PI), t = 2.0 * k * (x + 0.044715 * x * x * x);
        const double dt = 2.0 * k * (1.0 + 3.0 * 0.044715 * x * x), s = sigm(t);
        return fmax(s, fabs(x * s * sigm(-t) * dt));
    }
    case FFN_ACT_GELU_ERF:
        return fmax(0.5 * erfc(-x / sqrt(2.0)), fabs(x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI)));
    default: return 0.0;
    }
}

// --- outputs by the scalar reference -----------------------------------------------------------
// dt: FFN_DTYPE_F32 (in/out are float) or FFN_DTYPE_F16 (uint16_t).
static enum ffn_status run_ref(ffn_ctx_t ctx, const struct kernel *kn, enum ffn_dtype dt, int64_t n,
                               void *const *in, void *const *out) {
    struct ffn_tensor ti[3], to[2];
    for (int j = 0; j < N_IN[kn->kind]; j++) ti[j] = ffn_tensor_vec(in[j], dt, n);
    for (int j = 0; j < N_OUT[kn->kind]; j++) to[j] = ffn_tensor_vec(out[j], dt, n);
    switch (kn->kind) {
    case UNARY: return ffn_act_forward(ctx, kn->act, &to[0], &ti[0]);
    case UNARY_BWD: return ffn_act_backward(ctx, kn->act, &to[0], &ti[0], &ti[1]);
    case GATED: return ffn_glu_forward(ctx, kn->act, &to[0], &ti[0], &ti[1]);
    default: return ffn_glu_backward(ctx, kn->act, &to[0], &to[1], &ti[0], &ti[1], &ti[2]);
    }
}

static int write_all(FILE *f, const void *p, size_t bytes) {
    return fwrite(p, 1, bytes, f) == bytes ? 0 : -1;
}

// File layout (little endian): "FFNWGSL1", u32 version 1, u32 dtype (0 f32, 1 f16), u32 n,
// u32 n_in, u32 n_out, u32 seg[4] (sweep, special, hard, random), u32 0; then the inputs
// (n_in x n elements), the outputs (n_out x n), the tolerance scales (n_out x n f32) and the
// exact mask (n bytes, EXACT_*).
static int write_golden(const char *path, int f16, int64_t n, const int64_t seg[4], int n_in,
                        int n_out, void *const *in, void *const *out, float *const *scale,
                        const unsigned char *exact) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "wgsl_golden: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    const uint32_t hdr[10] = {1,
                              (uint32_t)f16,
                              (uint32_t)n,
                              (uint32_t)n_in,
                              (uint32_t)n_out,
                              (uint32_t)seg[0],
                              (uint32_t)seg[1],
                              (uint32_t)seg[2],
                              (uint32_t)seg[3],
                              0};
    const size_t es = f16 ? 2 : 4;
    int rc = write_all(f, GOLDEN_MAGIC, 8) | write_all(f, hdr, sizeof hdr);
    for (int j = 0; j < n_in; j++) rc |= write_all(f, in[j], es * (size_t)n);
    for (int j = 0; j < n_out; j++) rc |= write_all(f, out[j], es * (size_t)n);
    for (int j = 0; j < n_out; j++) rc |= write_all(f, scale[j], 4 * (size_t)n);
    rc |= write_all(f, exact, (size_t)n);
    rc |= fclose(f);
    if (rc) fprintf(stderr, "wgsl_golden: write error on %s\n", path);
    return rc;
}

static const char *const IN_NAMES[4][3] = {
    {"x"}, {"x", "dy"}, {"gate", "up"}, {"gate", "up", "dh"}};
static const char *const OUT_NAMES[4][2] = {{"x"}, {"dx"}, {"hidden"}, {"dgate", "dup"}};
static const char *const KIND_NAMES[4] = {"unary", "unary_bwd", "gated", "gated_bwd"};

static int do_kernel(ffn_ctx_t ctx, const char *dir, const struct kernel *kn, FILE *manifest,
                     int first) {
    struct golden g;
    memset(&g, 0, sizeof g);
    const int n_in = N_IN[kn->kind], n_out = N_OUT[kn->kind];
    int rc = build_inputs(&g, kn->kind, GOLDEN_SEED + (unsigned long long)kn->kind);
    const int64_t n = g.n;
    float *out[2] = {0}, *scale[2] = {0};
    uint16_t *hin[3] = {0}, *hout[2] = {0};
    for (int j = 0; j < n_out && !rc; j++) {
        out[j] = malloc(4 * (size_t)n);
        scale[j] = calloc((size_t)n, 4);
        hout[j] = malloc(2 * (size_t)n);
        if (!out[j] || !scale[j] || !hout[j]) rc = -1;
    }
    for (int j = 0; j < n_in && !rc; j++)
        if (!(hin[j] = malloc(2 * (size_t)n))) rc = -1;
    if (rc) {
        fprintf(stderr, "wgsl_golden: out of memory\n");
        goto done;
    }
    char path[4096];
    for (int f16 = 0; f16 <= 1 && !rc; f16++) {
        // inputs: f32 as built, or rounded to f16 (the sweep segment is then every f16 pattern)
        for (int j = 0; j < n_in; j++)
            for (int64_t i = 0; i < n; i++)
                hin[j][i] = i < N_SWEEP && j == 0 ? (uint16_t)i : ffn_f32_to_f16(g.in[j][i]);
        for (int64_t i = 0; i < n; i++) {
            g.exact[i] = EXACT_NO;
            double prod = 1.0;
            bool special_mult = false;
            for (int j = 0; j < n_in; j++) {
                const float v = f16 ? ffn_f16_to_f32(hin[j][i]) : g.in[j][i];
                if (!isfinite(v) || v == 0.0f) g.exact[i] = EXACT_BITS;
                if (j > 0 && (isinf(v) || v == 0.0f)) special_mult = true;
                if (j > 0) prod *= fabs((double)v);
            }
            const float x = f16 ? ffn_f16_to_f32(hin[0][i]) : g.in[0][i];
            // act(x) or act'(x) underflows to 0 in the double reference while it is not 0: the
            // reference's 0 * inf = NaN (or sign of 0 * 0) is an artifact, not the contract.
            if (special_mult && isfinite(x) && x != 0.0f && kn->act != FFN_ACT_RELU) {
                const bool uses_d = kn->kind == UNARY_BWD || kn->kind == GATED_BWD;
                const bool uses_a = kn->kind == GATED || kn->kind == GATED_BWD;
                if ((uses_d && ffn_ref_dact(kn->act, x) == 0.0) ||
                    (uses_a && ffn_ref_act(kn->act, x) == 0.0))
                    g.exact[i] = EXACT_SKIP;
            }
            if (kn->kind == UNARY_BWD || kn->kind == GATED_BWD)
                scale[0][i] = (float)(prod * dact_largest_term(kn->act, x));
        }
        void *in[3] = {f16 ? (void *)hin[0] : g.in[0], f16 ? (void *)hin[1] : g.in[1],
                       f16 ? (void *)hin[2] : g.in[2]};
        void *outp[2] = {f16 ? (void *)hout[0] : out[0], f16 ? (void *)hout[1] : out[1]};
        enum ffn_status st = run_ref(ctx, kn, f16 ? FFN_DTYPE_F16 : FFN_DTYPE_F32, n, in, outp);
        if (st != FFN_STATUS_OK) {
            fprintf(stderr, "wgsl_golden: %s: %s\n", kn->name, ffn_ctx_last_error(ctx));
            rc = -1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s.%s.bin", dir, kn->name, f16 ? "f16" : "f32");
        rc = write_golden(path, f16, n, g.seg, n_in, n_out, in, outp, scale, g.exact);
    }
    if (!rc) {
        fprintf(
            manifest, "%s\n  {\"name\": \"%s\", \"kind\": \"%s\", \"act\": \"%s\", \"n\": %lld,",
            first ? "" : ",", kn->name, KIND_NAMES[kn->kind], ffn_act_name(kn->act), (long long)n);
        fprintf(manifest, " \"segments\": [%lld, %lld, %lld, %lld],", (long long)g.seg[0],
                (long long)g.seg[1], (long long)g.seg[2], (long long)g.seg[3]);
        fprintf(manifest, " \"inputs\": [");
        for (int j = 0; j < n_in; j++)
            fprintf(manifest, "%s\"%s\"", j ? ", " : "", IN_NAMES[kn->kind][j]);
        fprintf(manifest, "], \"outputs\": [");
        for (int j = 0; j < n_out; j++)
            fprintf(manifest, "%s\"%s\"", j ? ", " : "", OUT_NAMES[kn->kind][j]);
        fprintf(manifest, "], \"files\": {\"f32\": \"%s.f32.bin\", \"f16\": \"%s.f16.bin\"}}",
                kn->name, kn->name);
    }
done:
    for (int j = 0; j < 3; j++) free(g.in[j]), free(hin[j]);
    for (int j = 0; j < 2; j++) free(out[j]), free(scale[j]), free(hout[j]);
    free(g.exact);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: wgsl_golden OUT_DIR\n");
        return 2;
    }
    ffn_ctx_t ctx;
    struct ffn_ctx_opts opts = FFN_CTX_OPTS_INIT;
    opts.force_isa = FFN_ISA_SCALAR;  // the reference is the oracle
    if (ffn_ctx_create(&opts, &ctx) != FFN_STATUS_OK) {
        fprintf(stderr, "wgsl_golden: cannot create a scalar context\n");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", argv[1]);
    FILE *manifest = fopen(path, "w");
    if (!manifest) {
        fprintf(stderr, "wgsl_golden: cannot write %s: %s\n", path, strerror(errno));
        ffn_ctx_destroy(ctx);
        return 1;
    }
    printf("wgsl_golden: seed 0x%llx, writing %s\n", (unsigned long long)GOLDEN_SEED, argv[1]);
    fprintf(manifest, "{\"version\": 1, \"seed\": \"0x%llx\", \"kernels\": [",
            (unsigned long long)GOLDEN_SEED);
    int rc = 0;
    for (int64_t k = 0; k < LEN(KERNELS) && !rc; k++)
        rc = do_kernel(ctx, argv[1], &KERNELS[k], manifest, k == 0);
    fprintf(manifest, "\n]}\n");
    if (fclose(manifest)) rc = -1;
    ffn_ctx_destroy(ctx);
    if (!rc) printf("wgsl_golden: %lld kernels written\n", (long long)LEN(KERNELS));
    return rc ? 1 : 0;
}
