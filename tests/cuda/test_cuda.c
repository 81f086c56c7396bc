// test_cuda.c — the CUDA backend on a GPU, through the public API (device pointers, a stream):
//   kernels   every op family × activation × (in, out) dtype pair × accuracy tier, and parity,
//             on all 65,536 bf16 / f16 patterns and 65,541 random f32 inputs (specials, tails,
//             subnormals, NaNs, any bit pattern), random multipliers: each output equal to the
//             host copy of the kernels' math (src/cuda/act_math.h compiled for the CPU: bit for
//             bit, NaN = NaN, with a one-ulp allowance for the rare rcp.approx / libdevice
//             difference), and within its bound of the scalar reference (MPFR-confirmed);
//   layouts   element offsets 0..7, 2-D views with row strides, fused gate/up halves (both
//             orders), narrow rows, in place (every alias the API allows), byte-misaligned f32,
//             a 3M-element call (grid-stride), guard zones around every output, inputs untouched;
//   api       a CUDA context's backend, device, stream; set_stream / synchronize; the calling
//             thread's current device left as it was; conversion (ffn_tensor_convert);
//   misuse    host memory, a view past the end of its allocation, overlapping views: clear
//             FFN_STATUS_INVALID_ARG messages;
//   lut       the accurate tier's 16-bit forwards through their lookup tables: the same bits as
//             the kernels, in place too, and one call above the default threshold;
//   forms     every form of the flat kernel ($FFN_CUDA_FLAT_FORM: chunks a thread, one pass or
//             looping grids): the same bits as one pass with a chunk a thread; views of rows
//             (row strides) through the flat kernel: the same bits as contiguous views;
//   big       (--big) 2^31 + 1000 elements in one call: 64-bit indexing.
// Without a CUDA device (or a build without CUDA) it prints "skipped: no CUDA device" and exits
// 77, which ctest reports as skipped.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/act_math.h"
#include "oracle.h"
#include "testutil.h"

#define FFN__N_F32 65541  // random f32 inputs per configuration (not a multiple of 8: a tail)
#define FFN__GUARD 256    // guard bytes around every device output
#define FFN__GUARD_BYTE 0xa5

// clang-format off
static const struct ffn_cm_tabs_src ffn__tabs_src = {{FFN_EXP2_TAB_HI}, {FFN_EXP2_TAB_LO}, {
#include "cpu/gelu_erf_fast_tab.inc"
}};
// The math's layout of the tables (ffn_cm_tabs_fill), filled at the start of main.
static struct ffn_cm_tabs ffn__tabs;
// clang-format on

static const int ffn__n_in[FFN_KOP_COUNT] = {1, 2, 2, 3};
static const int ffn__n_out[FFN_KOP_COUNT] = {1, 1, 1, 2};

#define FFN__CUDA(call)                                                              \
    do {                                                                             \
        const cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "test_cuda: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(e_));                                         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

// --- inputs --------------------------------------------------------------------------------------

static const float ffn__specials[] = {
    0.0f,
    -0.0f,
    INFINITY,
    -INFINITY,
    NAN,
    -NAN,
    150.0f,
    -150.0f,
    1000.0f,
    -1000.0f,
    -88.0f,
    -92.0f,
    -100.0f,
    -104.0f,
    88.72f,
    -87.33f,
    0x1p-149f,
    -0x1p-149f,
    0x1.fffffcp-127f,
    -0x1p-130f,
    0x1p-126f,
    -0x1p-126f,
    3e38f,
    -3e38f,
    20.0f,
    -20.0f,
    -1.2784645f,
    -0.75179f,
    1e-7f,
    -1e-7f,
    5.0f,
    -5.0f,
    2e13f,
    -2e13f,
    65504.0f,
    -65504.0f,
    65520.0f,
    1.0f,
    -1.0f,
    -3.5f,
    -4.5f,
    9.0f,
    -16.0f,
    -9.4f,
    80.0f,
    -80.0f,
    47.0f,
    -47.0f,
    // e^-x at the double subnormals' end (-745.1332: 2^-1075), σ(1.702x) and erfc's tails there
    745.0f,
    -745.0f,
    745.1f,
    -745.1f,
    745.14f,
    -745.14f,
    437.8f,
    -437.8f,
    -38.5f,
    -38.53125f,
    -38.6f,
    37.6f,
    -37.6f,
    744.5f,
    -744.5f,
    708.5f,
};
#define FFN__N_SPECIALS (sizeof ffn__specials / sizeof ffn__specials[0])

static float ffn__rand_x(uint64_t *s) {
    const uint64_t r = ffn_test_rand(s) % 20;
    if (r < 10) return (float)ffn_test_uniform(s, -6.0, 6.0);
    if (r < 13) return (float)ffn_test_uniform(s, -110.0, 110.0);
    if (r < 15) return ffn__specials[ffn_test_rand(s) % FFN__N_SPECIALS];
    if (r < 18) return ffn_test_logrand(s, -40.0, 40.0);
    return ffn_f32_from_bits((uint32_t)ffn_test_rand(s));  // any bit pattern, NaNs included
}

// The multipliers (dy, up, dh): log-uniform over 2^±6, and 1 in 32 a special value; with
// ffn__inf_m, ±inf at random (every output then says whether its act or act' was zero or not,
// on the host and on the device alike: the libms' subnormal tails, e.g. libdevice's exp(-745) = 0
// where glibc's is 2^-1074, show as NaN against ±inf).
static bool ffn__inf_m;
static float ffn__rand_m(uint64_t *s) {
    static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-140f, -0x1p-130f, 1.0f};
    if (ffn__inf_m) return ffn_test_rand(s) % 2 ? INFINITY : -INFINITY;
    if (ffn_test_rand(s) % 32 == 0) return sp[ffn_test_rand(s) % 8];
    return ffn_test_logrand(s, -6.0, 6.0);
}

// --- device buffers with guard zones ------------------------------------------------------------

struct ffn__dbuf {
    unsigned char *base;  // FFN__GUARD + bytes + FFN__GUARD
    size_t bytes;
};

static struct ffn__dbuf ffn__dalloc(size_t bytes) {
    struct ffn__dbuf b = {NULL, bytes};
    FFN__CUDA(cudaMalloc((void **)&b.base, bytes + 2 * FFN__GUARD));
    FFN__CUDA(cudaMemset(b.base, FFN__GUARD_BYTE, bytes + 2 * FFN__GUARD));
    return b;
}

static void *ffn__dptr(const struct ffn__dbuf *b) { return b->base + FFN__GUARD; }

static bool ffn__guards_ok(const struct ffn__dbuf *b, size_t used_from, size_t used_bytes) {
    const size_t total = b->bytes + 2 * FFN__GUARD;
    unsigned char *h = malloc(total);
    FFN__CUDA(cudaMemcpy(h, b->base, total, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (size_t i = 0; i < total && ok; i++) {
        const bool used = i >= FFN__GUARD + used_from && i < FFN__GUARD + used_from + used_bytes;
        ok = used || h[i] == FFN__GUARD_BYTE;
    }
    free(h);
    return ok;
}

// Whether the host image h of buffer b (its guards included) holds FFN__GUARD_BYTE everywhere but
// in the view of rows × cols elements of es bytes, row stride rs, byte_off bytes into the buffer:
// the gaps between rows and the guards are untouched.
static bool ffn__only_view_written(const unsigned char *h, const struct ffn__dbuf *b,
                                   size_t byte_off, size_t es, int64_t rows, int64_t cols,
                                   int64_t rs) {
    for (size_t i = 0; i < b->bytes + 2 * FFN__GUARD; i++) {
        bool in_view = false;
        if (i >= FFN__GUARD + byte_off) {
            const size_t el = (i - FFN__GUARD - byte_off) / es;
            in_view = (int64_t)el / rs < rows && (int64_t)el % rs < cols;
        }
        if (!in_view && h[i] != FFN__GUARD_BYTE) return false;
    }
    return true;
}

// --- host values --------------------------------------------------------------------------------

static void ffn__hset(void *p, enum ffn_dtype dt, int64_t i, float v) { ffn_test_set(p, dt, i, v); }
static float ffn__hget(const void *p, enum ffn_dtype dt, int64_t i) {
    return ffn_test_get(p, dt, i);
}

// The host copy of the kernels' math for element values x, a, b: outputs in f32 then stored.
static struct ffn_cm_out ffn__expect(enum ffn_kop op, enum ffn_act act, bool acc, bool par,
                                     enum ffn_dtype out, float x, float a, float b) {
    struct ffn_cm_out o =
        ffn_cm_elem(&ffn__tabs, op, act, acc, par && out != FFN_DTYPE_F32, out, x, a, b);
    o.y0 = ffn_cm_round_to(out, o.y0);
    o.y1 = ffn_cm_round_to(out, o.y1);
    return o;
}

// Equal bits (NaN = NaN): 0; one ulp of dt apart: 1; else 2.
static int ffn__diff(float got, float want, enum ffn_dtype dt) {
    if (ffn_test_same(got, want)) return 0;
    if (!isfinite(got) || !isfinite(want)) return 2;
    return ffn_count_ulp(got, want, dt, 0, false) <= 1.0 ? 1 : 2;
}

// ffn__diff for output o of an op's element (x, a, b), in the measure of the bounds: a backward's
// dx / dgate against the larger term of act' (ffn_ulp_error), where near act''s zero the host's
// exp2f and 1/x and the device's ex2.approx and rcp.approx (the 16-bit tier) part by more than an
// ulp of the small result but not of that term.
static int ffn__diff_op(enum ffn_kop op, int o, enum ffn_act act, enum ffn_dtype dt, float got,
                        float want, float x, float a, float b) {
    const float m1 = op == FFN_KOP_ACT_FWD ? 1.0f : a;
    const float m2 = op == FFN_KOP_GLU_BWD ? b : 1.0f;
    const float a1 = op == FFN_KOP_GLU_BWD && o == 1 ? m2 : m1;
    const float a2 = op == FFN_KOP_GLU_BWD && o == 0 ? m2 : 1.0f;
    if (!isfinite(a1) || !isfinite(a2)) return ffn__diff(got, want, dt);
    if (ffn_test_same(got, want)) return 0;
    if (!isfinite(got) || !isfinite(want)) return 2;
    return ffn_ulp_error((enum ffn_op)op, o, act, dt, got, want, x, a1, a2) <= 1.0 ? 1 : 2;
}

// --- one configuration ---------------------------------------------------------------------------

struct ffn__cfg {
    enum ffn_kop op;
    enum ffn_act act;
    enum ffn_dtype in, out;
    bool acc, par;
};

static const char *ffn__cfg_str(const struct ffn__cfg *c, char *buf, size_t size) {
    snprintf(buf, size, "%s %s %s->%s%s%s", ffn_act_name(c->act),
             (const char *[]){"act_fwd", "act_bwd", "glu_fwd", "glu_bwd"}[c->op],
             ffn_dtype_name(c->in), ffn_dtype_name(c->out), c->acc ? " accurate" : "",
             c->par ? " parity" : "");
    return buf;
}

static ffn_ctx_t ffn__ctx(bool acc, bool par) {
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA;
    o.accuracy = acc ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
    o.bf16_parity = par;
    ffn_ctx_t ctx = NULL;
    if (ffn_ctx_create(&o, &ctx) != FFN_STATUS_OK) {
        fprintf(stderr, "test_cuda: a CUDA context could not be made\n");
        exit(1);
    }
    return ctx;
}

// Calls the op on device views (views in kernel order).
static enum ffn_status ffn__call(ffn_ctx_t ctx, const struct ffn__cfg *c,
                                 const struct ffn_tensor *o, const struct ffn_tensor *i) {
    switch (c->op) {
    case FFN_KOP_ACT_FWD: return ffn_act_forward(ctx, c->act, &o[0], &i[0]);
    case FFN_KOP_ACT_BWD: return ffn_act_backward(ctx, c->act, &o[0], &i[0], &i[1]);
    case FFN_KOP_GLU_FWD: return ffn_glu_forward(ctx, c->act, &o[0], &i[0], &i[1]);
    default: return ffn_glu_backward(ctx, c->act, &o[0], &o[1], &i[0], &i[1], &i[2]);
    }
}

// Runs configuration c on n contiguous elements (first input from xs, multipliers random) and
// checks every output against the host math (bits) and the reference (bounds). Returns the
// number of one-ulp differences.
static int64_t ffn__check_vector(ffn_ctx_t ctx, const struct ffn__cfg *c, const float *xs,
                                 int64_t n, uint64_t seed) {
    char cs[128];
    ffn__cfg_str(c, cs, sizeof cs);
    const int ni = ffn__n_in[c->op], no = ffn__n_out[c->op];
    const size_t ies = ffn_dtype_size(c->in), oes = ffn_dtype_size(c->out);
    void *hin[3], *hout[2];
    struct ffn__dbuf din[3], dout[2];
    struct ffn_tensor ti[3], to[2];
    uint64_t s = seed;
    for (int k = 0; k < ni; k++) {
        hin[k] = malloc((size_t)n * ies);
        for (int64_t e = 0; e < n; e++)
            ffn__hset(hin[k], c->in, e, k == 0 ? xs[e] : ffn__rand_m(&s));
        din[k] = ffn__dalloc((size_t)n * ies);
        FFN__CUDA(cudaMemcpy(ffn__dptr(&din[k]), hin[k], (size_t)n * ies, cudaMemcpyHostToDevice));
        ti[k] = ffn_tensor_vec(ffn__dptr(&din[k]), c->in, n);
    }
    for (int k = 0; k < no; k++) {
        hout[k] = malloc((size_t)n * oes);
        dout[k] = ffn__dalloc((size_t)n * oes);
        to[k] = ffn_tensor_vec(ffn__dptr(&dout[k]), c->out, n);
    }
    const enum ffn_status st = ffn__call(ctx, c, to, ti);
    const enum ffn_status ss = ffn_ctx_synchronize(ctx);
    CHECK(st == FFN_STATUS_OK && ss == FFN_STATUS_OK, "%s: status %s / %s: %s", cs,
          ffn_status_string(st), ffn_status_string(ss), ffn_ctx_last_error(ctx));
    int64_t near = 0;
    if (st == FFN_STATUS_OK) {
        for (int k = 0; k < no; k++) {
            FFN__CUDA(
                cudaMemcpy(hout[k], ffn__dptr(&dout[k]), (size_t)n * oes, cudaMemcpyDeviceToHost));
            CHECK(ffn__guards_ok(&dout[k], 0, (size_t)n * oes),
                  "%s: output %d written outside its view", cs, k);
        }
        struct ffn_oracle or ;
        ffn_oracle_init(& or);
        const double bound = ffn_ulp_bound(c->op, c->act, c->acc);
        int printed = 0;
        for (int64_t e = 0; e < n; e++) {
            const float x = ffn__hget(hin[0], c->in, e);
            const float a = ni > 1 ? ffn__hget(hin[1], c->in, e) : x;
            const float b = ni > 2 ? ffn__hget(hin[2], c->in, e) : a;
            const struct ffn_cm_out w = ffn__expect(c->op, c->act, c->acc, c->par, c->out, x, a, b);
            for (int o = 0; o < no; o++) {
                const float got = ffn__hget(hout[o], c->out, e);
                const float want = o ? w.y1 : w.y0;
                const int d = ffn__diff_op(c->op, o, c->act, c->out, got, want, x, a, b);
                near += d == 1;
                if (d == 2 && printed++ < 4)
                    fprintf(stderr,
                            "  %s [%lld] out %d: x=%.9g a=%.9g b=%.9g: got %.9g, host %.9g\n", cs,
                            (long long)e, o, x, a, b, got, want);
                CHECK(d < 2, "%s: element %lld output %d differs from the host math", cs,
                      (long long)e, o);
                if (c->par) continue;  // parity is compared bitwise only (test_cuda_math checks it)
                // The bound against the reference (multiplier conventions of ffn_ulp_error).
                const float m1 = c->op == FFN_KOP_ACT_FWD ? 1.0f : a;
                const float m2 = c->op == FFN_KOP_GLU_BWD ? b : 1.0f;
                const float a1 = c->op == FFN_KOP_GLU_BWD && o == 1 ? m2 : m1;
                const float a2 = c->op == FFN_KOP_GLU_BWD && o == 0 ? m2 : 1.0f;
                // Infinite multipliers make the reference's 0·inf a matter of underflow
                // (docs/numerics.md): the bitwise comparison above covers those.
                if (!isfinite(a) || !isfinite(b)) continue;
                double exact;
                switch (c->op) {
                case FFN_KOP_ACT_FWD: exact = ffn_ref_act(c->act, x); break;
                case FFN_KOP_ACT_BWD: exact = (double)m1 * ffn_ref_dact(c->act, x); break;
                case FFN_KOP_GLU_FWD: exact = ffn_ref_act(c->act, x) * (double)m1; break;
                default:
                    exact = o == 0 ? (double)m2 * (double)m1 * ffn_ref_dact(c->act, x)
                                   : (double)m2 * ffn_ref_act(c->act, x);
                }
                double err = ffn_ulp_error(c->op, o, c->act, c->out, got, exact, x, a1, a2);
                if (err > bound) {  // confirm with MPFR
                    const bool deriv =
                        c->op == FFN_KOP_ACT_BWD || (c->op == FFN_KOP_GLU_BWD && o == 0);
                    const float f1 = c->op == FFN_KOP_ACT_FWD ? 1.0f : (o == 1 ? m2 : m1);
                    const float f2 = c->op == FFN_KOP_GLU_BWD && o == 0 ? m2 : 1.0f;
                    exact = ffn_oracle_eval(& or, c->act, deriv, x, f1, f2, NULL);
                    err = ffn_ulp_error(c->op, o, c->act, c->out, got, exact, x, a1, a2);
                }
                CHECK(err <= bound,
                      "%s: element %lld output %d: x=%.9g a=%.9g b=%.9g got %.9g, "
                      "exact %.9g: %.3f ulp > %g",
                      cs, (long long)e, o, x, a, b, got, exact, err, bound);
            }
        }
        ffn_oracle_clear(& or);
    }
    for (int k = 0; k < ni; k++) {
        // Inputs untouched.
        void *back = malloc((size_t)n * ies);
        FFN__CUDA(cudaMemcpy(back, ffn__dptr(&din[k]), (size_t)n * ies, cudaMemcpyDeviceToHost));
        CHECK(!memcmp(back, hin[k], (size_t)n * ies), "%s: input %d modified", cs, k);
        free(back);
        free(hin[k]);
        FFN__CUDA(cudaFree(din[k].base));
    }
    for (int k = 0; k < no; k++) {
        free(hout[k]);
        FFN__CUDA(cudaFree(dout[k].base));
    }
    return near;
}

// Every op × activation × dtype pair × tier (× parity) on `ctx` (accuracy, parity), inputs as
// the file's header says. Counts configurations, outputs and one-ulp differences.
static void ffn__kernels_pass(ffn_ctx_t ctx[2][2], const float *x32, float *x16, bool mult_only,
                              int64_t *configs, int64_t *outputs, int64_t *near) {
    for (int op = 0; op < FFN_KOP_COUNT; op++)
        for (int act = 0; act < FFN_ACT_COUNT; act++)
            for (int in = 0; in < FFN_DTYPE_COUNT; in++)
                for (int out = 0; out < FFN_DTYPE_COUNT; out++)
                    for (int acc = 0; acc < 2; acc++)
                        for (int par = 0; par < 2; par++) {
                            // The tier matters for the GeLU forwards, parity for 16-bit gated
                            // forwards.
                            const bool gelu = act == FFN_ACT_GELU_TANH || act == FFN_ACT_GELU_ERF;
                            const bool fwd = op == FFN_KOP_ACT_FWD || op == FFN_KOP_GLU_FWD;
                            if (acc && !(gelu && fwd)) continue;
                            if (par && !(op == FFN_KOP_GLU_FWD && out != FFN_DTYPE_F32)) continue;
                            if (mult_only && op == FFN_KOP_ACT_FWD) continue;
                            const struct ffn__cfg c = {(enum ffn_kop)op,
                                                       (enum ffn_act)act,
                                                       (enum ffn_dtype)in,
                                                       (enum ffn_dtype)out,
                                                       acc,
                                                       par};
                            const float *xs = x32;
                            int64_t n = FFN__N_F32;
                            if (in != FFN_DTYPE_F32) {  // every 16-bit pattern
                                for (int i = 0; i < 65536; i++)
                                    x16[i] = in == FFN_DTYPE_BF16 ? ffn_bf16_to_f32((uint16_t)i)
                                                                  : ffn_f16_to_f32((uint16_t)i);
                                xs = x16;
                                n = 65536;
                            }
                            *near += ffn__check_vector(ctx[acc][par], &c, xs, n,
                                                       0x1234ull + (uint64_t)*configs);
                            (*configs)++;
                            *outputs += n * (op == FFN_KOP_GLU_BWD ? 2 : 1);
                        }
}

static void ffn__test_kernels(void) {
    float *x32 = malloc(FFN__N_F32 * sizeof *x32), *x16 = malloc(65536 * sizeof *x16);
    uint64_t s = 0xc0da5eedull;
    for (int64_t i = 0; i < FFN__N_F32; i++) x32[i] = ffn__rand_x(&s);
    for (size_t i = 0; i < FFN__N_SPECIALS; i++) x32[i] = ffn__specials[i];  // each once at least
    // Contiguous views: the flat kernels (same width in and out) and the generic one (mixed
    // widths); then the generic kernel for every pair ($FFN_CUDA_FLAT=0); then infinite
    // multipliers.
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) setenv("FFN_CUDA_FLAT", "0", 1);
        ffn__inf_m = pass == 2;
        ffn_ctx_t ctx[2][2];
        for (int acc = 0; acc < 2; acc++)
            for (int par = 0; par < 2; par++) ctx[acc][par] = ffn__ctx(acc, par);
        unsetenv("FFN_CUDA_FLAT");
        int64_t near = 0, configs = 0, outputs = 0;
        ffn__kernels_pass(ctx, x32, x16, pass == 2, &configs, &outputs, &near);
        static const char *const what[3] = {"kernels", "kernels (generic)",
                                            "kernels (dy, up, dh ±inf)"};
        printf("%s: %lld configurations, %lld outputs, %lld one ulp from the host math\n",
               what[pass], (long long)configs, (long long)outputs, (long long)near);
        // rcp.approx against 1/x changes a correction term by ~2^-23 of itself, libdevice's
        // exp/erfc against glibc's a double by an ulp or two: a result moves across a rounding
        // boundary in perhaps one of 2^21 outputs. The 16-bit tier's ex2.approx and rcp.approx
        // against exp2f and 1/x move its f32 values by ~2^-21: a 16-bit output within that of a
        // midpoint rounds the other way, about 2 in 10^5 of all outputs here. A systematic
        // difference would show in the millions.
        CHECK((double)near <= 16 + 1e-4 * (double)outputs,
              "%s: %lld outputs one ulp from the host math", what[pass], (long long)near);
        for (int acc = 0; acc < 2; acc++)
            for (int par = 0; par < 2; par++) ffn_ctx_destroy(ctx[acc][par]);
    }
    ffn__inf_m = false;
    free(x32), free(x16);
}

// --- the flat kernel's forms ---------------------------------------------------------------------
// Every form of the flat kernel ($FFN_CUDA_FLAT_FORM=U,W: U chunks a thread and step, one pass or
// W waves of resident blocks looping; $FFN_CUDA_FLAT_BLOCKS=3 makes every thread of a looping
// grid take many steps, the last one partly) gives the same bits as one pass with a chunk a
// thread, for every op × activation × dtype (in = out) × tier × parity, on the kernels test's
// inputs (f32: 65,541 random ones with the specials, a tail of 1; 16-bit: 65,533 of the 65,536
// patterns, a tail of 5). Tables off: the kernel itself.

// The same inputs as rows (views of rows: the flat kernel with row strides) under the forms
// marked `rows` (one pass, looping grids; those of 3 blocks: many steps a thread) give the same
// bits as the contiguous call (identity's forward: a 2-D copy of the bytes against a copy).
static const struct {
    const char *form, *blocks;
    bool rows;
} ffn__forms[] = {{"1,0", NULL, true}, {"2,0", NULL, false}, {"4,0", NULL, true},
                  {"1,1", "3", true},  {"2,1", "3", false},  {"4,1", "3", true},
                  {"2,4", NULL, true}, {"4,4", NULL, false}};
#define FFN__N_FORMS (sizeof ffn__forms / sizeof ffn__forms[0])

// Rows of FFN__ROWS_COLS elements (a whole number of 16-byte chunks in every dtype) with row
// strides of FFN__ROWS_LDI (inputs) and FFN__ROWS_LDO (outputs) elements, also whole chunks.
#define FFN__ROWS_COLS 520
#define FFN__ROWS_LDI 528
#define FFN__ROWS_LDO 536

// The first rows × FFN__ROWS_COLS elements of the contiguous inputs din (n elements each) copied
// into views of rows once, the call made on them through each context of cx (NULL: skipped), and
// its outputs compared with the contiguous call's (ref), row by row; the gaps between the output
// rows and the guards around them untouched. Returns the outputs that differ.
static int64_t ffn__rows_check(ffn_ctx_t const *cx, const struct ffn__cfg *c,
                               const struct ffn__dbuf *din, void *const *ref, int64_t n,
                               const char *cs) {
    const int ni = ffn__n_in[c->op], no = ffn__n_out[c->op];
    const int64_t cols = FFN__ROWS_COLS, rows = n / cols;
    const size_t es = ffn_dtype_size(c->in), row = (size_t)cols * es;
    const size_t bi = (size_t)((rows - 1) * FFN__ROWS_LDI + cols) * es,
                 bo = (size_t)((rows - 1) * FFN__ROWS_LDO + cols) * es;
    struct ffn__dbuf rin[3], rout[2];
    struct ffn_tensor ti[3], to[2];
    for (int k = 0; k < ni; k++) {
        rin[k] = ffn__dalloc(bi);
        FFN__CUDA(cudaMemcpy2D(ffn__dptr(&rin[k]), FFN__ROWS_LDI * es, ffn__dptr(&din[k]), row, row,
                               (size_t)rows, cudaMemcpyDeviceToDevice));
        ti[k] = ffn_tensor_2d(ffn__dptr(&rin[k]), c->in, rows, cols, FFN__ROWS_LDI);
    }
    for (int k = 0; k < no; k++) {
        rout[k] = ffn__dalloc(bo);
        to[k] = ffn_tensor_2d(ffn__dptr(&rout[k]), c->out, rows, cols, FFN__ROWS_LDO);
    }
    int64_t all = 0;
    unsigned char *got = malloc(bo + 2 * FFN__GUARD);
    for (size_t f = 0; f < FFN__N_FORMS; f++) {
        if (!cx[f]) continue;
        const char *form = ffn__forms[f].form;
        const enum ffn_status st = ffn__call(cx[f], c, to, ti);
        const enum ffn_status ss = ffn_ctx_synchronize(cx[f]);
        CHECK(st == FFN_STATUS_OK && ss == FFN_STATUS_OK, "%s rows, form %s: status %s / %s: %s",
              cs, form, ffn_status_string(st), ffn_status_string(ss), ffn_ctx_last_error(cx[f]));
        int64_t differ = 0;
        for (int k = 0; k < no && st == FFN_STATUS_OK; k++) {
            FFN__CUDA(cudaMemcpy(got, rout[k].base, bo + 2 * FFN__GUARD, cudaMemcpyDeviceToHost));
            CHECK(ffn__only_view_written(got, &rout[k], 0, es, rows, cols, FFN__ROWS_LDO),
                  "%s rows, form %s: output %d written outside its view", cs, form, k);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t e = 0; e < cols; e++)
                    differ += memcmp(got + FFN__GUARD + (size_t)(r * FFN__ROWS_LDO + e) * es,
                                     (const char *)ref[k] + (size_t)(r * cols + e) * es, es) != 0;
            // The guard bytes back in the view for the next form.
            FFN__CUDA(cudaMemset(rout[k].base + FFN__GUARD, FFN__GUARD_BYTE, bo));
        }
        CHECK(differ == 0, "%s rows, form %s: %lld outputs differ from the contiguous call", cs,
              form, (long long)differ);
        all += differ;
    }
    free(got);
    for (int k = 0; k < ni; k++) FFN__CUDA(cudaFree(rin[k].base));
    for (int k = 0; k < no; k++) FFN__CUDA(cudaFree(rout[k].base));
    return all;
}

static void ffn__test_flat_forms(void) {
    ffn_ctx_t ctx[FFN__N_FORMS][2][2];
    setenv("FFN_CUDA_LUT", "0", 1);
    setenv("FFN_CUDA_GLU_LUT", "0", 1);
    for (size_t f = 0; f < FFN__N_FORMS; f++) {
        setenv("FFN_CUDA_FLAT_FORM", ffn__forms[f].form, 1);
        if (ffn__forms[f].blocks)
            setenv("FFN_CUDA_FLAT_BLOCKS", ffn__forms[f].blocks, 1);
        else
            unsetenv("FFN_CUDA_FLAT_BLOCKS");
        for (int acc = 0; acc < 2; acc++)
            for (int par = 0; par < 2; par++) ctx[f][acc][par] = ffn__ctx(acc, par);
    }
    unsetenv("FFN_CUDA_FLAT_FORM"), unsetenv("FFN_CUDA_FLAT_BLOCKS");
    unsetenv("FFN_CUDA_LUT"), unsetenv("FFN_CUDA_GLU_LUT");
    uint64_t s = 0xf1a7f0f3ull;
    int configs = 0;
    int64_t differ = 0, rows_differ = 0;
    for (int op = 0; op < FFN_KOP_COUNT; op++)
        for (int act = 0; act < FFN_ACT_COUNT; act++)
            for (int dt = 0; dt < FFN_DTYPE_COUNT; dt++)
                for (int acc = 0; acc < 2; acc++)
                    for (int par = 0; par < 2; par++) {
                        const bool gelu = act == FFN_ACT_GELU_TANH || act == FFN_ACT_GELU_ERF;
                        const bool fwd = op == FFN_KOP_ACT_FWD || op == FFN_KOP_GLU_FWD;
                        if (acc && !(gelu && fwd)) continue;
                        if (par && !(op == FFN_KOP_GLU_FWD && dt != FFN_DTYPE_F32)) continue;
                        const struct ffn__cfg c = {(enum ffn_kop)op,
                                                   (enum ffn_act)act,
                                                   (enum ffn_dtype)dt,
                                                   (enum ffn_dtype)dt,
                                                   acc,
                                                   par};
                        char cs[128];
                        ffn__cfg_str(&c, cs, sizeof cs);
                        const int ni = ffn__n_in[op], no = ffn__n_out[op];
                        const int64_t n = dt == FFN_DTYPE_F32 ? FFN__N_F32 : 65533;
                        const size_t es = ffn_dtype_size(c.in), bytes = (size_t)n * es;
                        struct ffn__dbuf din[3], dout[2];
                        struct ffn_tensor ti[3], to[2];
                        void *h = malloc(bytes), *ref[2], *got = malloc(bytes);
                        for (int k = 0; k < ni; k++) {
                            for (int64_t e = 0; e < n; e++) {
                                float v = ffn__rand_m(&s);
                                if (k == 0)
                                    v = dt == FFN_DTYPE_F32
                                            ? (e < (int64_t)FFN__N_SPECIALS ? ffn__specials[e]
                                                                            : ffn__rand_x(&s))
                                        : dt == FFN_DTYPE_BF16 ? ffn_bf16_to_f32((uint16_t)e)
                                                               : ffn_f16_to_f32((uint16_t)e);
                                ffn__hset(h, c.in, e, v);
                            }
                            din[k] = ffn__dalloc(bytes);
                            FFN__CUDA(
                                cudaMemcpy(ffn__dptr(&din[k]), h, bytes, cudaMemcpyHostToDevice));
                            ti[k] = ffn_tensor_vec(ffn__dptr(&din[k]), c.in, n);
                        }
                        for (int k = 0; k < no; k++) {
                            dout[k] = ffn__dalloc(bytes);
                            to[k] = ffn_tensor_vec(ffn__dptr(&dout[k]), c.out, n);
                            ref[k] = malloc(bytes);
                        }
                        for (size_t f = 0; f < FFN__N_FORMS; f++) {
                            ffn_ctx_t cx = ctx[f][acc][par];
                            const enum ffn_status st = ffn__call(cx, &c, to, ti);
                            const enum ffn_status ss = ffn_ctx_synchronize(cx);
                            CHECK(st == FFN_STATUS_OK && ss == FFN_STATUS_OK,
                                  "%s form %s: status %s / %s: %s", cs, ffn__forms[f].form,
                                  ffn_status_string(st), ffn_status_string(ss),
                                  ffn_ctx_last_error(cx));
                            for (int k = 0; k < no; k++) {
                                void *dst = f == 0 ? ref[k] : got;
                                FFN__CUDA(cudaMemcpy(dst, ffn__dptr(&dout[k]), bytes,
                                                     cudaMemcpyDeviceToHost));
                                CHECK(ffn__guards_ok(&dout[k], 0, bytes),
                                      "%s form %s: output %d written outside its view", cs,
                                      ffn__forms[f].form, k);
                                // Garbage in the output for the next form.
                                FFN__CUDA(cudaMemset(ffn__dptr(&dout[k]), 0x5a, bytes));
                                if (f == 0) continue;
                                const bool same = !memcmp(got, ref[k], bytes);
                                differ += !same;
                                CHECK(same, "%s form %s: output %d differs from form 1,0", cs,
                                      ffn__forms[f].form, k);
                            }
                        }
                        ffn_ctx_t rcx[FFN__N_FORMS];
                        for (size_t f = 0; f < FFN__N_FORMS; f++)
                            rcx[f] = ffn__forms[f].rows ? ctx[f][acc][par] : NULL;
                        rows_differ += ffn__rows_check(rcx, &c, din, ref, n, cs);
                        for (int k = 0; k < ni; k++) FFN__CUDA(cudaFree(din[k].base));
                        for (int k = 0; k < no; k++) {
                            FFN__CUDA(cudaFree(dout[k].base));
                            free(ref[k]);
                        }
                        free(h), free(got);
                        configs++;
                    }
    printf("flat forms: %d configurations x %d forms, %lld outputs differ from form 1,0\n", configs,
           (int)FFN__N_FORMS - 1, (long long)differ);
    printf("flat rows: %d configurations x 5 forms, %lld outputs differ from the contiguous call\n",
           configs, (long long)rows_differ);
    for (size_t f = 0; f < FFN__N_FORMS; f++)
        for (int acc = 0; acc < 2; acc++)
            for (int par = 0; par < 2; par++) ffn_ctx_destroy(ctx[f][acc][par]);
}

// --- layouts -------------------------------------------------------------------------------------
// A layout: rows × cols views, each with its own row stride and element offset into a buffer.

struct ffn__view {
    struct ffn__dbuf buf;
    void *host;  // the buffer's host image (stride layout)
    struct ffn_tensor t;
    size_t byte_off;
};

static void ffn__view_make(struct ffn__view *v, enum ffn_dtype dt, int64_t rows, int64_t cols,
                           int64_t rs, size_t byte_off) {
    const size_t es = ffn_dtype_size(dt);
    const size_t bytes = ((size_t)(rows - 1) * (size_t)rs + (size_t)cols) * es + byte_off;
    v->buf = ffn__dalloc(bytes);
    v->host = calloc(1, bytes + 8);
    v->byte_off = byte_off;
    v->t = ffn_tensor_2d((char *)ffn__dptr(&v->buf) + byte_off, dt, rows, cols, rs);
}

static void ffn__view_free(struct ffn__view *v) {
    FFN__CUDA(cudaFree(v->buf.base));
    free(v->host);
}

// Host element (r, c) of a view (of the host image).
static void *ffn__hview(const struct ffn__view *v) { return (char *)v->host + v->byte_off; }

// Runs c on views outs/ins (already made) filled with random inputs, and compares every element
// with the host math. in_place: outs alias ins (fill those once).
static void ffn__check_views(ffn_ctx_t ctx, const struct ffn__cfg *c, struct ffn__view *outs,
                             struct ffn__view *ins, const char *what, uint64_t seed) {
    char cs[192];
    ffn__cfg_str(c, cs, sizeof cs);
    snprintf(cs + strlen(cs), sizeof cs - strlen(cs), " [%s]", what);
    const int ni = ffn__n_in[c->op], no = ffn__n_out[c->op];
    const int64_t rows = ins[0].t.rows, cols = ins[0].t.cols;
    uint64_t s = seed;
    float *vals[3];
    // Host images first (inputs may share one buffer: the fused halves), then the values, then
    // the images back to the device.
    for (int k = 0; k < ni; k++)
        FFN__CUDA(cudaMemcpy(ins[k].host, ins[k].buf.base + FFN__GUARD, ins[k].buf.bytes,
                             cudaMemcpyDeviceToHost));
    for (int k = 0; k < ni; k++) {
        vals[k] = malloc((size_t)(rows * cols + 1) * sizeof(float));
        for (int64_t r = 0; r < rows; r++)
            for (int64_t e = 0; e < cols; e++) {
                const int64_t at = r * ins[k].t.row_stride + e;
                ffn__hset(ffn__hview(&ins[k]), c->in, at,
                          k == 0 ? ffn__rand_x(&s) : ffn__rand_m(&s));
                vals[k][r * cols + e] = ffn__hget(ffn__hview(&ins[k]), c->in, at);
            }
    }
    for (int k = 0; k < ni; k++)
        FFN__CUDA(cudaMemcpy(ins[k].buf.base + FFN__GUARD, ins[k].host, ins[k].buf.bytes,
                             cudaMemcpyHostToDevice));
    struct ffn_tensor to[2], ti[3];
    for (int k = 0; k < no; k++) to[k] = outs[k].t;
    for (int k = 0; k < ni; k++) ti[k] = ins[k].t;
    const enum ffn_status st = ffn__call(ctx, c, to, ti);
    const enum ffn_status ss = ffn_ctx_synchronize(ctx);
    CHECK(st == FFN_STATUS_OK && ss == FFN_STATUS_OK, "%s: status %s: %s", cs,
          ffn_status_string(st), ffn_ctx_last_error(ctx));
    if (st == FFN_STATUS_OK) {
        int bad = 0;
        for (int k = 0; k < no; k++) {
            FFN__CUDA(cudaMemcpy(outs[k].host, outs[k].buf.base + FFN__GUARD, outs[k].buf.bytes,
                                 cudaMemcpyDeviceToHost));
            for (int64_t r = 0; r < rows; r++)
                for (int64_t e = 0; e < cols; e++) {
                    const int64_t i = r * cols + e;
                    const struct ffn_cm_out w = ffn__expect(
                        c->op, c->act, c->acc, c->par, c->out, vals[0][i],
                        ni > 1 ? vals[1][i] : vals[0][i], ni > 2 ? vals[2][i] : vals[0][i]);
                    const float got =
                        ffn__hget(ffn__hview(&outs[k]), c->out, r * outs[k].t.row_stride + e);
                    const float x = vals[0][i], a = ni > 1 ? vals[1][i] : x;
                    const float b = ni > 2 ? vals[2][i] : a;
                    if (ffn__diff_op(c->op, k, c->act, c->out, got, k ? w.y1 : w.y0, x, a, b) ==
                            2 &&
                        bad++ < 4)
                        fprintf(stderr, "  %s: (%lld, %lld) out %d: got %.9g, host %.9g\n", cs,
                                (long long)r, (long long)e, k, got, k ? w.y1 : w.y0);
                }
        }
        CHECK(bad == 0, "%s: %d elements differ from the host math", cs, bad);
    }
    for (int k = 0; k < ni; k++) free(vals[k]);
}

// A layout of one configuration: inputs rows × cols with row stride rs at element offset off,
// outputs with row stride ors at element offset ooff (each view in its own buffer; extra_bytes
// more offset for all), or (in place) the outputs being the first inputs' views.
static void ffn__layout(ffn_ctx_t ctx, const struct ffn__cfg *c, int64_t rows, int64_t cols,
                        int64_t rs, int off, int64_t ors, int ooff, size_t extra_bytes,
                        bool in_place, const char *what, uint64_t seed) {
    const int ni = ffn__n_in[c->op], no = ffn__n_out[c->op];
    struct ffn__view ins[3], outs[2];
    for (int k = 0; k < ni; k++)
        ffn__view_make(&ins[k], c->in, rows, cols, rs,
                       (size_t)off * ffn_dtype_size(c->in) + extra_bytes);
    for (int k = 0; k < no; k++) {
        if (in_place)
            outs[k] = ins[k];  // same buffer: gate -> dgate, up -> dup (or x -> y)
        else
            ffn__view_make(&outs[k], c->out, rows, cols, ors,
                           (size_t)ooff * ffn_dtype_size(c->out) + extra_bytes);
    }
    ffn__check_views(ctx, c, outs, ins, what, seed);
    if (!in_place) {
        // Guards: only the view's own elements may change (the gaps between rows too are kept).
        for (int k = 0; k < no; k++) {
            unsigned char *h = malloc(outs[k].buf.bytes + 2 * FFN__GUARD);
            FFN__CUDA(cudaMemcpy(h, outs[k].buf.base, outs[k].buf.bytes + 2 * FFN__GUARD,
                                 cudaMemcpyDeviceToHost));
            const bool ok =
                ffn__only_view_written(h, &outs[k].buf, outs[k].byte_off, ffn_dtype_size(c->out),
                                       rows, cols, outs[k].t.row_stride);
            free(h);
            char cs[160];
            CHECK(ok, "%s [%s]: bytes outside the output view changed",
                  ffn__cfg_str(c, cs, sizeof cs), what);
        }
    }
    for (int k = 0; k < ni; k++) ffn__view_free(&ins[k]);
    if (!in_place)
        for (int k = 0; k < no; k++) ffn__view_free(&outs[k]);
}

// Fused gate/up: one [rows, 2m] buffer split by ffn_gate_up_split (both orders); outputs in place
// too for the backward (dgate over gate, dup over up).
static void ffn__fused(ffn_ctx_t ctx, enum ffn_act act, enum ffn_dtype dt, int64_t rows, int64_t m,
                       enum ffn_gate_up_order order, uint64_t seed) {
    char what[64];
    snprintf(what, sizeof what, "fused %lldx%lld %s", (long long)rows, (long long)(2 * m),
             order == FFN_GATE_UP_GATE_FIRST ? "gate first" : "up first");
    for (int bwd = 0; bwd < 2; bwd++) {
        const struct ffn__cfg c = {
            bwd ? FFN_KOP_GLU_BWD : FFN_KOP_GLU_FWD, act, dt, dt, false, false};
        struct ffn__view fused, dh, h;
        ffn__view_make(&fused, dt, rows, 2 * m, 2 * m, 0);
        struct ffn_tensor g, u;
        CHECK(ffn_gate_up_split(ctx, &fused.t, order, &g, &u) == FFN_STATUS_OK, "split");
        struct ffn__view ins[3], outs[2];
        ins[0] = fused, ins[1] = fused;
        ins[0].t = g, ins[1].t = u;
        // byte offsets of the halves inside the shared host image
        ins[0].byte_off = (size_t)((char *)g.data - (char *)ffn__dptr(&fused.buf));
        ins[1].byte_off = (size_t)((char *)u.data - (char *)ffn__dptr(&fused.buf));
        if (bwd) {
            ffn__view_make(&dh, dt, rows, m, m, 0);
            ins[2] = dh;
            outs[0] = ins[0], outs[1] = ins[1];  // in place over the saved gate and up
            // ffn__check_views fills each input into its own host image; the halves share one:
            // give the up half the same image as the gate half.
            ins[1].host = ins[0].host;
            outs[1].host = ins[0].host;
        } else {
            ins[1].host = ins[0].host;
            ffn__view_make(&h, dt, rows, m, m, 0);
            outs[0] = h;
        }
        ffn__check_views(ctx, &c, outs, ins, what, seed + (uint64_t)bwd);
        ffn__view_free(&fused);
        if (bwd)
            ffn__view_free(&dh);
        else
            ffn__view_free(&h);
    }
}

static void ffn__test_layouts(void) {
    ffn_ctx_t ctx = ffn__ctx(false, false);
    static const enum ffn_act acts[] = {FFN_ACT_SILU, FFN_ACT_GELU_ERF, FFN_ACT_GELU_TANH,
                                        FFN_ACT_RELU};
    static const enum ffn_dtype dts[][2] = {{FFN_DTYPE_F32, FFN_DTYPE_F32},
                                            {FFN_DTYPE_BF16, FFN_DTYPE_BF16},
                                            {FFN_DTYPE_F16, FFN_DTYPE_F32},
                                            {FFN_DTYPE_F32, FFN_DTYPE_BF16}};
    uint64_t seed = 99;
    int layouts = 0;
    for (size_t ai = 0; ai < FFN_ARRAY_LEN(acts); ai++)
        for (size_t di = 0; di < FFN_ARRAY_LEN(dts); di++)
            for (int op = 0; op < FFN_KOP_COUNT; op++) {
                const struct ffn__cfg c = {(enum ffn_kop)op, acts[ai], dts[di][0],
                                           dts[di][1],       false,    false};
                for (int off = 0; off < 8; off++) {  // element offsets: aligned and not
                    ffn__layout(ctx, &c, 1, 1000 + off, 1000 + off, off, 1000 + off, off, 0, false,
                                "offset", seed++);
                    layouts++;
                }
                ffn__layout(ctx, &c, 1, 4099, 4099, 0, 4099, 3, 0, false, "output misaligned",
                            seed++);
                ffn__layout(ctx, &c, 37, 129, 200, 0, 203, 1, 0, false, "2-D 37x129", seed++);
                ffn__layout(ctx, &c, 33, 64, 72, 0, 80, 0, 0, false, "2-D 33x64 (vectors)", seed++);
                ffn__layout(ctx, &c, 1000, 3, 5, 1, 4, 0, 0, false, "narrow rows 1000x3", seed++);
                ffn__layout(ctx, &c, 5, 0, 8, 0, 8, 0, 0, false, "empty", seed++);
                ffn__layout(ctx, &c, 3, 1000, 1000, 0, 1000, 0, 0, false, "contiguous 2-D", seed++);
                if (dts[di][0] == FFN_DTYPE_F32 && dts[di][1] == FFN_DTYPE_F32)
                    ffn__layout(ctx, &c, 2, 77, 80, 0, 80, 0, 2, false, "f32 at a 2-byte offset",
                                seed++);
                if (dts[di][0] == dts[di][1])
                    ffn__layout(ctx, &c, 7, 300, 304, 0, 304, 0, 0, true, "in place", seed++);
                layouts += 8;
            }
    // One large call: grid-stride loops over more units than resident threads.
    const struct ffn__cfg big = {FFN_KOP_GLU_FWD, FFN_ACT_SILU, FFN_DTYPE_BF16,
                                 FFN_DTYPE_BF16,  false,        false};
    ffn__layout(ctx, &big, 3, 1 << 20, (1 << 20) + 8, 0, (1 << 20) + 8, 0, 0, false, "3M elements",
                seed++);
    for (int o = 0; o < 2; o++) {
        ffn__fused(ctx, FFN_ACT_SILU, FFN_DTYPE_BF16, 64, 1024, (enum ffn_gate_up_order)o, seed++);
        ffn__fused(ctx, FFN_ACT_GELU_TANH, FFN_DTYPE_F32, 17, 99, (enum ffn_gate_up_order)o,
                   seed++);
        // Rows of whole 16-byte chunks: the flat kernel over views of rows.
        ffn__fused(ctx, FFN_ACT_GELU_ERF, FFN_DTYPE_F16, 40, 264, (enum ffn_gate_up_order)o,
                   seed++);
        ffn__fused(ctx, FFN_ACT_SILU, FFN_DTYPE_F32, 9, 1028, (enum ffn_gate_up_order)o, seed++);
    }
    printf("layouts: %d\n", layouts + 9);
    ffn_ctx_destroy(ctx);
}

// --- the API on a CUDA context -------------------------------------------------------------------

static void ffn__test_api(void) {
    ffn_ctx_t ctx = ffn__ctx(false, false);
    CHECK(ffn_ctx_backend(ctx) == FFN_BACKEND_CUDA, "backend");
    CHECK(ffn_ctx_device(ctx) == 0 && ffn_ctx_stream(ctx) == NULL, "device, stream");
    cudaStream_t stream;
    FFN__CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(ffn_ctx_set_stream(ctx, stream) == FFN_STATUS_OK && ffn_ctx_stream(ctx) == stream,
          "set_stream");
    // A call on the stream, a synchronize, the result.
    const int64_t n = 4099;
    float *d = NULL, *h = malloc(n * sizeof *h);
    FFN__CUDA(cudaMalloc((void **)&d, 2 * n * sizeof *d));
    for (int64_t i = 0; i < n; i++) h[i] = (float)(i - 2000) / 100.0f;
    FFN__CUDA(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
    struct ffn_tensor x = ffn_tensor_vec(d, FFN_DTYPE_F32, n),
                      y = ffn_tensor_vec(d + n, FFN_DTYPE_F32, n);
    int dev_before = -1, dev_after = -2;
    FFN__CUDA(cudaGetDevice(&dev_before));
    CHECK(ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &y, &x) == FFN_STATUS_OK,
          "forward on a stream: %s", ffn_ctx_last_error(ctx));
    FFN__CUDA(cudaGetDevice(&dev_after));
    CHECK(dev_before == dev_after, "current device kept");
    CHECK(ffn_ctx_synchronize(ctx) == FFN_STATUS_OK, "synchronize");
    float *out = malloc(n * sizeof *out);
    FFN__CUDA(cudaMemcpy(out, d + n, n * sizeof *out, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const struct ffn_cm_out w = ffn__expect(FFN_KOP_ACT_FWD, FFN_ACT_GELU_TANH, false, false,
                                                FFN_DTYPE_F32, h[i], 0, 0);
        bad += ffn__diff(out[i], w.y0, FFN_DTYPE_F32) == 2;
    }
    CHECK(bad == 0, "stream result: %d differ", bad);
    // Conversion on the device: f32 -> bf16 -> f32 equals the host rounding.
    uint16_t *d16 = NULL;
    FFN__CUDA(cudaMalloc((void **)&d16, n * sizeof *d16));
    struct ffn_tensor t16 = ffn_tensor_vec(d16, FFN_DTYPE_BF16, n);
    CHECK(ffn_tensor_convert(ctx, &t16, &x) == FFN_STATUS_OK, "convert");
    uint16_t *h16 = malloc(n * sizeof *h16);
    CHECK(ffn_ctx_synchronize(ctx) == FFN_STATUS_OK, "synchronize");
    FFN__CUDA(cudaMemcpy(h16, d16, n * sizeof *h16, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += h16[i] != ffn_f32_to_bf16(h[i]);
    CHECK(bad == 0, "convert f32->bf16: %d differ", bad);
    // Captured into a CUDA graph in the global mode (torch.cuda.graph's): the stream is set during
    // the capture, the checks run, the kernel is captured, not run; a replay computes it.
    float *d2 = NULL;
    FFN__CUDA(cudaMalloc((void **)&d2, n * sizeof *d2));
    FFN__CUDA(cudaMemset(d2, 0, n * sizeof *d2));
    struct ffn_tensor y2 = ffn_tensor_vec(d2, FFN_DTYPE_F32, n);
    CHECK(ffn_ctx_set_stream(ctx, NULL) == FFN_STATUS_OK, "default stream");
    FFN__CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const enum ffn_status cst = ffn_ctx_set_stream(ctx, stream);
    const enum ffn_status cfw = ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &y2, &x);
    cudaGraph_t graph = NULL;
    const cudaError_t cend = cudaStreamEndCapture(stream, &graph);
    CHECK(cst == FFN_STATUS_OK && cfw == FFN_STATUS_OK && cend == cudaSuccess,
          "captured call: set_stream %s, forward %s (%s), end of capture %s",
          ffn_status_string(cst), ffn_status_string(cfw), ffn_ctx_last_error(ctx),
          cudaGetErrorName(cend));
    FFN__CUDA(cudaStreamSynchronize(stream));
    float *cap = malloc(n * sizeof *cap);
    FFN__CUDA(cudaMemcpy(cap, d2, n * sizeof *cap, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += cap[i] != 0.0f;
    CHECK(bad == 0, "captured, not run: %d outputs written", bad);
    if (cend == cudaSuccess) {
        cudaGraphExec_t exec = NULL;
        FFN__CUDA(cudaGraphInstantiate(&exec, graph, 0));
        FFN__CUDA(cudaGraphLaunch(exec, stream));
        FFN__CUDA(cudaStreamSynchronize(stream));
        FFN__CUDA(cudaMemcpy(cap, d2, n * sizeof *cap, cudaMemcpyDeviceToHost));
        bad = memcmp(cap, out, n * sizeof *cap) != 0;
        CHECK(!bad, "graph replay = the direct call");
        FFN__CUDA(cudaGraphExecDestroy(exec));
        FFN__CUDA(cudaGraphDestroy(graph));
    }
    (void)cudaGetLastError();
    free(cap);
    FFN__CUDA(cudaFree(d2));
    CHECK(ffn_ctx_set_stream(ctx, NULL) == FFN_STATUS_OK && !ffn_ctx_stream(ctx),
          "back to the default stream");
    FFN__CUDA(cudaStreamDestroy(stream));

    // Misuse: host memory; past the end of the allocation; overlap.
    float *host = malloc(n * sizeof *host);
    struct ffn_tensor th = ffn_tensor_vec(host, FFN_DTYPE_F32, n);
    enum ffn_status st = ffn_act_forward(ctx, FFN_ACT_SILU, &y, &th);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "host memory"),
          "host pointer: %s: %s", ffn_status_string(st), ffn_ctx_last_error(ctx));
    struct ffn_tensor past = ffn_tensor_vec(d + n + 10, FFN_DTYPE_F32, n);
    st = ffn_act_forward(ctx, FFN_ACT_SILU, &past, &x);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "past the end"),
          "view past its allocation: %s: %s", ffn_status_string(st), ffn_ctx_last_error(ctx));
    struct ffn_tensor shifted = ffn_tensor_vec(d + 1, FFN_DTYPE_F32, n);
    st = ffn_act_forward(ctx, FFN_ACT_SILU, &shifted, &x);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "overlaps"),
          "overlap: %s: %s", ffn_status_string(st), ffn_ctx_last_error(ctx));
    // A CPU context refuses a stream; the CUDA context synchronizes cleanly after the misuse.
    CHECK(ffn_ctx_synchronize(ctx) == FFN_STATUS_OK, "synchronize after misuse");
    ffn_ctx_t cpu = NULL;
    CHECK(ffn_ctx_create(NULL, &cpu) == FFN_STATUS_OK &&
              ffn_ctx_set_stream(cpu, (void *)stream) == FFN_STATUS_UNSUPPORTED,
          "CPU context: no stream");
    ffn_ctx_destroy(cpu);
    // A device ordinal past the last one.
    int nd = 0;
    FFN__CUDA(cudaGetDeviceCount(&nd));
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA;
    o.device = nd;
    ffn_ctx_t bad_ctx = NULL;
    CHECK(ffn_ctx_create(&o, &bad_ctx) == FFN_STATUS_UNSUPPORTED && !bad_ctx,
          "device %d does not exist", nd);
    free(host), free(h), free(out), free(h16);
    FFN__CUDA(cudaFree(d));
    FFN__CUDA(cudaFree(d16));
    ffn_ctx_destroy(ctx);
    printf("api: done\n");
}

// --- lookup tables of the 16-bit forwards --------------------------------------------------------
// A large contiguous bf16/f16 forward of the accurate tier goes through a table of the kernel's own
// outputs (lut.cu; the default tier's 16-bit math needs none). $FFN_CUDA_LUT=1 makes every such
// call use it, =0 none: the two must give the same bits, for every activation with a table, the
// four 16-bit pairs, in place too; then one call above the default threshold against the host
// math.
static void ffn__test_lut(void) {
    setenv("FFN_CUDA_LUT", "1", 1);
    ffn_ctx_t lut = ffn__ctx(true, false);
    setenv("FFN_CUDA_LUT", "0", 1);
    ffn_ctx_t direct = ffn__ctx(true, false);
    unsetenv("FFN_CUDA_LUT");
    const int64_t n = 65536 + 5;
    uint16_t *h = malloc(n * 2), *r1 = malloc(n * 2), *r2 = malloc(n * 2), *r3 = malloc(n * 2);
    for (int64_t i = 0; i < n; i++) h[i] = (uint16_t)(i * 40503u);  // every pattern, permuted
    uint16_t *dx = NULL, *dy1 = NULL, *dy2 = NULL, *dz = NULL;
    FFN__CUDA(cudaMalloc((void **)&dx, n * 2));
    FFN__CUDA(cudaMalloc((void **)&dy1, n * 2));
    FFN__CUDA(cudaMalloc((void **)&dy2, n * 2));
    FFN__CUDA(cudaMalloc((void **)&dz, n * 2));
    FFN__CUDA(cudaMemcpy(dx, h, n * 2, cudaMemcpyHostToDevice));
    int configs = 0;
    for (int act = 0; act < FFN_ACT_COUNT; act++) {
        if (act == FFN_ACT_RELU || act == FFN_ACT_IDENTITY) continue;
        for (int in = FFN_DTYPE_BF16; in <= FFN_DTYPE_F16; in++)
            for (int out = FFN_DTYPE_BF16; out <= FFN_DTYPE_F16; out++) {
                const struct ffn_tensor x = ffn_tensor_vec(dx, (enum ffn_dtype)in, n);
                const struct ffn_tensor y1 = ffn_tensor_vec(dy1, (enum ffn_dtype)out, n);
                const struct ffn_tensor y2 = ffn_tensor_vec(dy2, (enum ffn_dtype)out, n);
                const struct ffn_tensor z = ffn_tensor_vec(dz, (enum ffn_dtype)in, n);
                FFN__CUDA(cudaMemcpy(dz, dx, n * 2, cudaMemcpyDeviceToDevice));
                bool ok = ffn_act_forward(lut, (enum ffn_act)act, &y1, &x) == FFN_STATUS_OK &&
                          ffn_act_forward(direct, (enum ffn_act)act, &y2, &x) == FFN_STATUS_OK;
                if (in == out)  // in place, through the table
                    ok = ok && ffn_act_forward(lut, (enum ffn_act)act, &z, &z) == FFN_STATUS_OK;
                ok = ok && ffn_ctx_synchronize(lut) == FFN_STATUS_OK &&
                     ffn_ctx_synchronize(direct) == FFN_STATUS_OK;
                CHECK(ok, "lut %s: %s", ffn_act_name((enum ffn_act)act), ffn_ctx_last_error(lut));
                FFN__CUDA(cudaMemcpy(r1, dy1, n * 2, cudaMemcpyDeviceToHost));
                FFN__CUDA(cudaMemcpy(r2, dy2, n * 2, cudaMemcpyDeviceToHost));
                FFN__CUDA(cudaMemcpy(r3, dz, n * 2, cudaMemcpyDeviceToHost));
                int bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    bad += !ffn_test_same_elem(r1, r2, (enum ffn_dtype)out, i);
                    if (in == out) bad += !ffn_test_same_elem(r3, r2, (enum ffn_dtype)out, i);
                }
                CHECK(bad == 0,
                      "lut %s %s->%s%s: %d elements differ from "
                      "the kernel's",
                      ffn_act_name((enum ffn_act)act), ffn_dtype_name((enum ffn_dtype)in),
                      ffn_dtype_name((enum ffn_dtype)out), " accurate", bad);
                configs++;
            }
    }
    // Above the default threshold (2^23 elements), an accurate context: the table, checked at the
    // start, the middle and the end against the host math.
    const int64_t big = ((int64_t)1 << 25) + 3;
    uint16_t *bx = NULL, *by = NULL;
    FFN__CUDA(cudaMalloc((void **)&bx, big * 2));
    FFN__CUDA(cudaMalloc((void **)&by, big * 2));
    for (int64_t i = 0; i < big; i += n - 5) {
        const int64_t m = big - i < n - 5 ? big - i : n - 5;
        FFN__CUDA(cudaMemcpy(bx + i, h, (size_t)m * 2, cudaMemcpyHostToDevice));
    }
    ffn_ctx_t def = ffn__ctx(true, false);
    const struct ffn_tensor tx = ffn_tensor_vec(bx, FFN_DTYPE_BF16, big);
    const struct ffn_tensor ty = ffn_tensor_vec(by, FFN_DTYPE_BF16, big);
    CHECK(ffn_act_forward(def, FFN_ACT_GELU_ERF, &ty, &tx) == FFN_STATUS_OK &&
              ffn_ctx_synchronize(def) == FFN_STATUS_OK,
          "lut big: %s", ffn_ctx_last_error(def));
    int bad = 0;
    const int64_t starts[] = {0, big / 2, big - 70000};
    uint16_t *got = malloc(70000 * 2);
    for (int k = 0; k < 3; k++) {
        FFN__CUDA(cudaMemcpy(got, by + starts[k], 70000 * 2, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < 70000; i++) {
            const int64_t g = starts[k] + i;
            const float xv = ffn_bf16_to_f32(h[g % (n - 5)]);
            const struct ffn_cm_out w = ffn__expect(FFN_KOP_ACT_FWD, FFN_ACT_GELU_ERF, true, false,
                                                    FFN_DTYPE_BF16, xv, 0, 0);
            bad += ffn__diff(ffn_bf16_to_f32(got[i]), w.y0, FFN_DTYPE_BF16) == 2;
        }
    }
    CHECK(bad == 0, "lut big: %d elements differ from the host math", bad);
    printf("lut: %d configurations, and %lld elements through the default threshold\n", configs,
           (long long)big);
    free(h), free(r1), free(r2), free(r3), free(got);
    FFN__CUDA(cudaFree(dx));
    FFN__CUDA(cudaFree(dy1));
    FFN__CUDA(cudaFree(dy2));
    FFN__CUDA(cudaFree(dz));
    FFN__CUDA(cudaFree(bx));
    FFN__CUDA(cudaFree(by));
    ffn_ctx_destroy(lut), ffn_ctx_destroy(direct);
    ffn_ctx_destroy(def);
}

// --- 64-bit indexing -----------------------------------------------------------------------------

static void ffn__test_big(void) {
    const int64_t n = ((int64_t)1 << 31) + 1000;
    // The element-wise kernel itself (tables off), then the 16-bit forward's table (on).
    setenv("FFN_CUDA_LUT", "0", 1);
    ffn_ctx_t direct = ffn__ctx(false, false);
    unsetenv("FFN_CUDA_LUT");
    ffn_ctx_t lut = ffn__ctx(false, false);
    uint16_t *x = NULL, *y = NULL;
    if (cudaMalloc((void **)&x, (size_t)n * 2) != cudaSuccess ||
        cudaMalloc((void **)&y, (size_t)n * 2) != cudaSuccess) {
        (void)cudaGetLastError();
        printf("big: skipped (not enough device memory for 2 x 4 GiB)\n");
        cudaFree(x);
        ffn_ctx_destroy(direct);
        ffn_ctx_destroy(lut);
        return;
    }
    // x[i] = bf16 pattern (i mod 65536); y = act(x): checked at the start, the middle, and the end
    // across 2^31.
    uint16_t *h = malloc(65536 * 2);
    for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    for (int64_t i = 0; i < n; i += 65536) {
        const int64_t m = n - i < 65536 ? n - i : 65536;
        FFN__CUDA(cudaMemcpy(x + i, h, (size_t)m * 2, cudaMemcpyHostToDevice));
    }
    const struct ffn_tensor tx = ffn_tensor_vec(x, FFN_DTYPE_BF16, n),
                            ty = ffn_tensor_vec(y, FFN_DTYPE_BF16, n);
    // Windows of `tail` elements: the start, the middle, and the end, which spans 2^31 (the end is
    // only 1000 past it).
    const int64_t tail = 70000, starts[] = {0, ((int64_t)1 << 30) + 12345, n - tail};
    uint16_t *got = malloc(tail * 2);
    for (int pass = 0; pass < 2; pass++) {
        ffn_ctx_t ctx = pass ? lut : direct;
        const enum ffn_act act = pass ? FFN_ACT_GELU_ERF : FFN_ACT_SILU;
        FFN__CUDA(cudaMemset(y, 0xff, (size_t)n * 2));
        CHECK(ffn_act_forward(ctx, act, &ty, &tx) == FFN_STATUS_OK &&
                  ffn_ctx_synchronize(ctx) == FFN_STATUS_OK,
              "big: %s", ffn_ctx_last_error(ctx));
        int bad = 0;
        for (int k = 0; k < 3; k++) {
            FFN__CUDA(cudaMemcpy(got, y + starts[k], tail * 2, cudaMemcpyDeviceToHost));
            for (int64_t i = 0; i < tail; i++) {
                const float xv = ffn_bf16_to_f32((uint16_t)((starts[k] + i) & 0xffff));
                const struct ffn_cm_out w =
                    ffn__expect(FFN_KOP_ACT_FWD, act, false, false, FFN_DTYPE_BF16, xv, 0, 0);
                bad += ffn__diff(ffn_bf16_to_f32(got[i]), w.y0, FFN_DTYPE_BF16) == 2;
            }
        }
        CHECK(bad == 0, "big (%s): %d of %lld elements differ", pass ? "table" : "kernel", bad,
              (long long)(3 * tail));
    }
    printf("big: %lld elements in one call, through the kernel and through the table\n",
           (long long)n);
    free(h), free(got);
    FFN__CUDA(cudaFree(x));
    FFN__CUDA(cudaFree(y));
    ffn_ctx_destroy(direct);
    ffn_ctx_destroy(lut);
}

int main(int argc, char **argv) {
    ffn_check_begin("test_cuda");
    ffn_cm_tabs_fill(&ffn__tabs, &ffn__tabs_src, 0, 1, true, true);
    bool kernels = true, layouts = true, api = true, big = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only-kernels"))
            layouts = api = false;
        else if (!strcmp(argv[i], "--only-layouts"))
            kernels = api = false;
        else if (!strcmp(argv[i], "--only-api"))
            kernels = layouts = false;
        else if (!strcmp(argv[i], "--big"))
            kernels = layouts = api = false, big = true;
        else {
            fprintf(stderr, "usage: test_cuda [--only-kernels|--only-layouts|--only-api|--big]\n");
            return 2;
        }
    }
    char why[256];
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why)) {
        return ffn_check_skip("no CUDA device (%s)", why);
    }
    struct cudaDeviceProp p;
    FFN__CUDA(cudaGetDeviceProperties(&p, 0));
    printf("test_cuda: device 0: %s, compute capability %d.%d, %d SMs\n", p.name, p.major, p.minor,
           p.multiProcessorCount);
    if (api) ffn__test_api();
    if (kernels) ffn__test_kernels();
    if (kernels) ffn__test_lut();
    if (kernels) ffn__test_flat_forms();
    if (layouts) ffn__test_layouts();
    if (big) ffn__test_big();
    return ffn_check_summary();
}
