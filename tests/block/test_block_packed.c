// test_block_packed.c — opts.pack_weights: the forward's GEMMs read copies of the weights in the
// layout oneDNN's kernel prefers. Against the double-precision reference (block_ref.h) and the
// same block without packing: every stored layout of the first projection and both orientations,
// f32 and bf16 weights and f32 weights under FFN_BLOCK_MATH_BF16 (their bf16 copy packed), token
// counts on the skinny path (1), on oneDNN (7, 40, 300) and in row tiles (TILED), forward and the
// backward after it (which reads the weights as they lie). Checks that bf16 weights were packed
// (cache_bytes grows by at least 2 bytes a weight at the first forward on oneDNN, not before) and
// that a block freed after packing leaks nothing (ASan run).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_ref.h"
#include "check.h"
#include "ffn.h"

#define D 48
#define M 80
#define TMAX 300
#define GROUPS 2

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double rnd(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static float bf16_round(float v) {  // round to nearest even, as the library converts
    uint32_t u;
    memcpy(&u, &v, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

// Stored arrays of one configuration, in the run's dtype (f32 or bf16 bit patterns).
struct stored {
    float f[4][2 * M * D];  // gate, up, gate_up, down as f32 values (bf16-rounded for bf16)
    uint16_t h[4][2 * M * D];
    float b[4][2 * M];  // biases (f32)
};

static void *wptr(struct stored *s, int k, enum ffn_dtype dt) {
    return dt == FFN_DTYPE_F32 ? (void *)s->f[k] : (void *)s->h[k];
}

// Fills the stored weights of f in layout/orientations (f's values are already dt's:
// round_logical), and their bf16 bit patterns.
static void store(const struct ref_ffn *f, enum ffn_gate_up_layout layout,
                  enum ffn_weight_orient o1, enum ffn_weight_orient od, struct stored *s) {
    float *const w[8] = {s->f[0], s->f[1], s->f[2], s->f[3], s->b[0], s->b[1], s->b[2], s->b[3]};
    ref_store(f, layout, GROUPS, o1, od, w);
    for (int k = 0; k < 4; k++)
        for (int64_t e = 0; e < 2 * M * D; e++) {
            uint32_t u;
            memcpy(&u, &s->f[k][e], 4);
            s->h[k][e] = (uint16_t)(u >> 16);
        }
}

// The logical weights as the stored dtype has them (so that the reference sees the same values).
static void round_logical(struct ref_ffn *f, enum ffn_dtype dt) {
    if (dt != FFN_DTYPE_BF16) return;
    for (int64_t k = 0; k < M * D; k++) {
        f->Wg[k] = bf16_round((float)f->Wg[k]);
        f->Wu[k] = bf16_round((float)f->Wu[k]);
        f->Wd[k] = bf16_round((float)f->Wd[k]);
    }
}

// dt: the stored weights' dtype; math: FFN_BLOCK_MATH_BF16 multiplies f32 weights in bf16 (then
// f's values are bf16's, and x is rounded to bf16 as for bf16 weights).
static int run(ffn_ctx_t ctx, const struct ref_ffn *f, enum ffn_gate_up_layout layout,
               enum ffn_weight_orient o1, enum ffn_weight_orient od, enum ffn_dtype dt,
               enum ffn_block_math math, bool tiled) {
    const bool b16 = dt == FFN_DTYPE_BF16 || math == FFN_BLOCK_MATH_BF16;
    static struct stored s;
    store(f, layout, o1, od, &s);
    const bool fused = f->gated && layout != FFN_GATE_UP_SEPARATE;
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = D, spec.d_ff = M, spec.act = f->act, spec.gated = f->gated;
    spec.gate_up_layout = f->gated ? layout : FFN_GATE_UP_SEPARATE, spec.tp_groups = GROUPS;
    spec.bias_gate = f->gated && f->bias, spec.bias_up = spec.bias_down = f->bias;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    if (fused) {
        w.gate_up = ffn_weight_dense(wptr(&s, 2, dt), dt, o1);
        if (f->bias) w.b_gate_up = ffn_weight_dense(s.b[2], FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    } else {
        w.up = ffn_weight_dense(wptr(&s, 1, dt), dt, o1);
        if (f->bias) w.b_up = ffn_weight_dense(s.b[1], FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        if (f->gated) {
            w.gate = ffn_weight_dense(wptr(&s, 0, dt), dt, o1);
            if (f->bias) w.b_gate = ffn_weight_dense(s.b[0], FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        }
    }
    w.down = ffn_weight_dense(wptr(&s, 3, dt), dt, od);
    if (f->bias) w.b_down = ffn_weight_dense(s.b[3], FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);

    ffn_block_t blk[2] = {NULL, NULL};  // [0] as the weights lie, [1] packed
    for (int p = 0; p < 2; p++) {
        struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
        o.pack_weights = p == 1;
        o.math = math;
        if (tiled) o.schedule = FFN_BLOCK_SCHEDULE_TILED, o.tile_rows = 32;
        if (!CHECK_STATUS(ffn_block_create(ctx, &spec, &w, &o, &blk[p]), FFN_STATUS_OK)) {
            ffn_check_show_error(ctx);
            ffn_block_destroy(blk[0]);
            return 1;
        }
    }
    static double x[TMAX * D], dy[TMAX * D], yr[TMAX * D];
    static float xf[TMAX * D], dyf[TMAX * D], y[2][TMAX * D], dx[2][TMAX * D];
    static float g[2][4][2 * M * D];
    for (int k = 0; k < TMAX * D; k++) {
        x[k] = rnd(), dy[k] = rnd();
        xf[k] = (float)x[k], dyf[k] = (float)dy[k];
        if (b16) x[k] = xf[k] = bf16_round(xf[k]);
    }
    struct ffn_block_info i0 = FFN_BLOCK_INFO_INIT, i1 = FFN_BLOCK_INFO_INIT;
    ffn_block_info(ctx, blk[0], 1, &i0);
    static const int64_t tokens[] = {1, 7, 40, TMAX};
    // bf16 weights: each value of y errs by up to the roundings of h (and of x, reproduced in
    // the reference); f32 as the block tests.
    const double tol = b16 ? 2e-2 : 2e-5;
    for (size_t ti = 0; ti < sizeof tokens / sizeof tokens[0]; ti++) {
        const int64_t T = tokens[ti];
        ref_forward(f, T, x, yr);
        double ymax = 0;
        for (int64_t k = 0; k < T * D; k++) ymax = fmax(ymax, fabs(yr[k]));
        for (int p = 0; p < 2; p++) {
            struct ffn_tensor tx = ffn_tensor_2d(xf, FFN_DTYPE_F32, T, D, D);
            struct ffn_tensor ty = ffn_tensor_2d(y[p], FFN_DTYPE_F32, T, D, D);
            struct ffn_tensor tdy = ffn_tensor_2d(dyf, FFN_DTYPE_F32, T, D, D);
            struct ffn_tensor tdx = ffn_tensor_2d(dx[p], FFN_DTYPE_F32, T, D, D);
            struct ffn_block_grads gr = FFN_BLOCK_GRADS_INIT;
            gr.gate = g[p][0], gr.up = g[p][1], gr.gate_up = g[p][2], gr.down = g[p][3];
            if (fused)
                gr.gate = gr.up = NULL;
            else
                gr.gate_up = NULL;
            if (!f->gated) gr.gate = NULL;
            if (!CHECK_STATUS(ffn_block_forward(ctx, blk[p], &ty, &tx, FFN_BLOCK_POLICY_SAVE),
                              FFN_STATUS_OK) ||
                !CHECK_STATUS(ffn_block_backward(ctx, blk[p], &gr, &tdx, &tdy), FFN_STATUS_OK))
                ffn_check_show_error(ctx);
        }
        int bad = 0;
        for (int64_t k = 0; k < T * D; k++)
            bad += fabs(y[1][k] - yr[k]) > tol * ymax + 1e-4 * fabs(yr[k]);
        CHECK(bad == 0, "%s%s %s T=%lld: %d outputs of the packed block off the reference",
              ffn_dtype_name(dt), math == FFN_BLOCK_MATH_BF16 ? " math=bf16" : "",
              tiled ? "tiled" : "separate", (long long)T, bad);
        // The two blocks: the same y within the tolerance; the backward after each (weights as
        // they lie) the same dx and weight gradients.
        double e = 0, dxm = 0, ed = 0;
        for (int64_t k = 0; k < T * D; k++) {
            e = fmax(e, fabs(y[1][k] - y[0][k]));
            ed = fmax(ed, fabs(dx[1][k] - dx[0][k]));
            dxm = fmax(dxm, fabs(dx[0][k]));
        }
        CHECK(e <= tol * ymax, "T=%lld: packed and plain y differ by %g (max |y| %g)", (long long)T,
              e, ymax);
        CHECK(ed <= tol * dxm + 1e-6, "T=%lld: dx after the packed forward differs by %g",
              (long long)T, ed);
        double eg = 0, gm = 0;
        for (int k = 0; k < 4; k++)
            for (int64_t e2 = 0; e2 < 2 * M * D; e2++) {
                eg = fmax(eg, fabs(g[1][k][e2] - g[0][k][e2]));
                gm = fmax(gm, fabs(g[0][k][e2]));
            }
        CHECK(eg <= tol * gm + 1e-6, "T=%lld: weight gradients differ by %g", (long long)T, eg);
        if (T == 1) {  // the skinny GEMM reads the weights as they lie: nothing packed yet
            ffn_block_info(ctx, blk[1], 1, &i1);
            CHECK_EQ(i1.cache_bytes, i0.cache_bytes, "T=1 packed nothing");
        }
    }
    ffn_block_info(ctx, blk[1], 1, &i1);
    // oneDNN's bf16 kernels read pairs of k: always a blocked layout, 2 bytes a weight or more.
    const size_t n_w = (size_t)((f->gated ? 3 : 2) * M * D);
    if (b16)
        CHECK(i1.cache_bytes >= i0.cache_bytes + 2 * n_w,
              "bf16 weights packed: cache %zu -> %zu, %zu weights", i0.cache_bytes, i1.cache_bytes,
              n_w);
    ffn_block_destroy(blk[0]);
    ffn_block_destroy(blk[1]);
    return 0;
}

int main(void) {
    ffn_check_begin("test_block_packed");
    ffn_ctx_t ctx;
    if (!CHECK_STATUS(ffn_ctx_create(NULL, &ctx), FFN_STATUS_OK)) return ffn_check_summary();
    static double Wg[M * D], Wu[M * D], Wd[D * M], bg[M], bu[M], bd[D];
    static const enum ffn_gate_up_layout layouts[] = {FFN_GATE_UP_SEPARATE, FFN_GATE_UP_FUSED,
                                                      FFN_GATE_UP_INTERLEAVED, FFN_GATE_UP_BLOCKED};
    static const enum ffn_dtype dts[] = {FFN_DTYPE_F32, FFN_DTYPE_BF16, FFN_DTYPE_F32};
    static const enum ffn_block_math maths[] = {FFN_BLOCK_MATH_STRICT, FFN_BLOCK_MATH_STRICT,
                                                FFN_BLOCK_MATH_BF16};
    int cfgs = 0;
    for (size_t di = 0; di < 3; di++) {
        for (int gated = 0; gated < 2; gated++)
            for (size_t li = 0; li < (gated ? 4u : 1u); li++)
                for (int o1 = 0; o1 < 2; o1++)
                    for (int od = 0; od < 2; od++) {
                        // INTERLEAVED is [out, in] only.
                        if (layouts[li] == FFN_GATE_UP_INTERLEAVED && o1) continue;
                        struct ref_ffn f = {D,     M,      gated ? FFN_ACT_SILU : FFN_ACT_GELU_TANH,
                                            gated, !gated, Wg,
                                            Wu,    Wd,     bg,
                                            bu,    bd};
                        for (int k = 0; k < M * D; k++)
                            Wg[k] = 0.3 * rnd(), Wu[k] = 0.3 * rnd(), Wd[k] = 0.3 * rnd();
                        for (int k = 0; k < M; k++) bg[k] = 0.1 * rnd(), bu[k] = 0.1 * rnd();
                        for (int k = 0; k < D; k++) bd[k] = 0.1 * rnd();
                        round_logical(&f,
                                      maths[di] == FFN_BLOCK_MATH_BF16 ? FFN_DTYPE_BF16 : dts[di]);
                        const bool tiled = (o1 + od) % 2;
                        if (run(ctx, &f, layouts[li], (enum ffn_weight_orient)o1,
                                (enum ffn_weight_orient)od, dts[di], maths[di], tiled))
                            break;
                        cfgs++;
                    }
    }
    (void)ref_fd;  // a block_ref.h helper this test has no use for
    printf("test_block_packed: %d configurations\n", cfgs);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
