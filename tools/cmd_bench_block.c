// cmd_bench_block.c — `ffn bench block`: FFN block forward and forward+backward on the CPU
// against the same GEMMs alone, measured in the same process (ratio_to_gemm = the cost of
// everything that is not a GEMM: bias, activation, its backward, the recomputed h), for GPT-2
// small (plain GeLU-tanh with biases) and a LLaMA-like SwiGLU block, f32, 1 and 2 threads.
// `--fixture DIR` instead runs one Hugging Face fixture (tests/data/hf/<arch>) and prints its
// error against the transformers reference and its speed: the `make demo` entry.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#  include <omp.h>
#endif
#if __has_include(<cblas.h>)
#  include <cblas.h>
#  define FFN_TOOL_HAVE_CBLAS 1
#endif

#include "ffn.h"
#include "tools.h"

#define REPS_DEFAULT 5
#define REPS_QUICK 2
#define FIXTURE_REPS 200

struct bshape {
    const char *name;
    int64_t T, d, m;
    enum ffn_act act;
    bool gated, bias;
};

static const struct bshape ffn__shapes[] = {
    {"gpt2-small", 512, 768, 3072, FFN_ACT_GELU_TANH, false, true},
    {"llama-like", 256, 2048, 5632, FFN_ACT_SILU, true, false},
};

static double ffn__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ffn__cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double ffn__median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ffn__cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn bench block [--json] [--threads T] [--quick] [--reps N]\n"
            "       ffn bench block --fixture DIR [--json]\n"
            "  Times FFN block forward (fwd) and forward+backward (fwdbwd, SAVE policy) for\n"
            "  gpt2-small (512 x 768 -> 3072, GeLU-tanh, biases) and llama-like (256 x 2048 ->\n"
            "  5632, SwiGLU), f32, on 1 and 2 threads (or T), against the same GEMMs alone.\n"
            "  --quick       fewer repetitions, the default schedule only\n"
            "  --fixture DIR a Hugging Face fixture (e.g. tests/data/hf/llama): error against the\n"
            "                transformers reference and time per forward+backward\n");
}

static const char *ffn__blas_name(void) {
#ifdef FFN_TOOL_HAVE_CBLAS
    switch (openblas_get_parallel()) {
    case 0: return "openblas-serial";
    case 1: return "openblas-pthread";
    case 2: return "openblas-openmp";
    default: return "openblas";
    }
#else
    return "none";
#endif
}

static void ffn__set_threads(ffn_ctx_t ctx, int t) {
    ffn_ctx_set_threads(ctx, t);
#ifdef _OPENMP
    omp_set_num_threads(t);
#endif
#ifdef FFN_TOOL_HAVE_CBLAS
    openblas_set_num_threads(t);
#endif
}

// --- the benchmark shapes ----------------------------------------------------------------------

struct bufs {
    float *x, *y, *dy, *dx, *P, *H, *Wg, *Wu, *Wd, *bu, *bd, *gWg, *gWu, *gWd, *gbu, *gbd;
};

#ifdef FFN_TOOL_HAVE_CBLAS
// The GEMMs of the block alone, as the block issues them (weights [out, in], SEPARATE layout).
static void ffn__gemms(const struct bshape *s, const struct bufs *b, bool bwd) {
    const int T = (int)s->T, d = (int)s->d, m = (int)s->m, pc = s->gated ? 2 * m : m;
    const CBLAS_ORDER R = CblasRowMajor;
    const CBLAS_TRANSPOSE N = CblasNoTrans, Tr = CblasTrans;
    if (s->gated) cblas_sgemm(R, N, Tr, T, m, d, 1, b->x, d, b->Wg, d, 0, b->P, pc);
    cblas_sgemm(R, N, Tr, T, m, d, 1, b->x, d, b->Wu, d, 0, b->P + (s->gated ? m : 0), pc);
    cblas_sgemm(R, N, Tr, T, d, m, 1, b->H, m, b->Wd, m, 0, b->y, d);
    if (!bwd) return;
    cblas_sgemm(R, Tr, N, d, m, T, 1, b->dy, d, b->H, m, 0, b->gWd, m);  // dW_down = dyᵀ h
    cblas_sgemm(R, N, N, T, m, d, 1, b->dy, d, b->Wd, m, 0, b->H, m);     // dh = dy W_down
    if (s->gated) cblas_sgemm(R, Tr, N, m, d, T, 1, b->P, pc, b->x, d, 0, b->gWg, d);
    cblas_sgemm(R, Tr, N, m, d, T, 1, b->P + (s->gated ? m : 0), pc, b->x, d, 0, b->gWu, d);
    if (s->gated) cblas_sgemm(R, N, N, T, d, m, 1, b->P, pc, b->Wg, d, 0, b->dx, d);
    cblas_sgemm(R, N, N, T, d, m, 1, b->P + (s->gated ? m : 0), pc, b->Wu, d,
                s->gated ? 1.0f : 0.0f, b->dx, d);
}
#endif

static float *ffn__rand(size_t n, float scale, uint64_t *st) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; p && i < n; i++) {
        *st = *st * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = scale * (float)((double)(*st >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return p;
}

static int ffn__bench_shapes(int json, int threads, int quick, int reps) {
#ifndef FFN_TOOL_HAVE_CBLAS
    (void)json, (void)threads, (void)quick, (void)reps;
    fprintf(stderr, "ffn bench block: this build has no BLAS\n");
    return 2;
#else
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 2;
    if (!json)
        printf("%-11s %-7s %-9s %3s %10s %9s %12s %8s   (%s, isa %s)\n", "shape", "pass",
               "schedule", "thr", "seconds", "GFLOP/s", "gemm_seconds", "ratio", ffn__blas_name(),
               ffn_isa_name(ffn_ctx_isa(ctx)));
    int rc = 0;
    for (size_t si = 0; si < sizeof ffn__shapes / sizeof ffn__shapes[0]; si++) {
        const struct bshape *s = &ffn__shapes[si];
        const size_t T = (size_t)s->T, d = (size_t)s->d, m = (size_t)s->m;
        uint64_t st = 42;
        struct bufs b = {0};
        b.x = ffn__rand(T * d, 1.0f, &st);
        b.dy = ffn__rand(T * d, 1.0f, &st);
        b.y = calloc(T * d, 4), b.dx = calloc(T * d, 4);
        b.P = calloc(T * 2 * m, 4), b.H = calloc(T * m, 4);
        const float ws = 1.0f / sqrtf((float)d);
        b.Wu = ffn__rand(m * d, ws, &st), b.Wd = ffn__rand(d * m, ws, &st);
        b.Wg = s->gated ? ffn__rand(m * d, ws, &st) : NULL;
        b.bu = ffn__rand(m, 0.1f, &st), b.bd = ffn__rand(d, 0.1f, &st);
        b.gWg = calloc(m * d, 4), b.gWu = calloc(m * d, 4), b.gWd = calloc(d * m, 4);
        b.gbu = calloc(m, 4), b.gbd = calloc(d, 4);

        struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
        spec.d_model = s->d, spec.d_ff = s->m, spec.act = s->act, spec.gated = s->gated;
        spec.bias_up = spec.bias_down = s->bias;
        struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
        w.up = ffn_weight_dense(b.Wu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        w.down = ffn_weight_dense(b.Wd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        if (s->gated) w.gate = ffn_weight_dense(b.Wg, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        if (s->bias) {
            w.b_up = ffn_weight_dense(b.bu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
            w.b_down = ffn_weight_dense(b.bd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        }
        struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
        g.up = b.gWu, g.down = b.gWd, g.gate = s->gated ? b.gWg : NULL;
        if (s->bias) g.b_up = b.gbu, g.b_down = b.gbd;
        struct ffn_block_cost cost = FFN_BLOCK_COST_INIT;
        ffn_block_cost(ctx, &spec, s->T, FFN_DTYPE_F32, FFN_DTYPE_F32, &cost);
        struct ffn_tensor tx = ffn_tensor_2d(b.x, FFN_DTYPE_F32, s->T, s->d, s->d);
        struct ffn_tensor ty = ffn_tensor_2d(b.y, FFN_DTYPE_F32, s->T, s->d, s->d);
        struct ffn_tensor tdy = ffn_tensor_2d(b.dy, FFN_DTYPE_F32, s->T, s->d, s->d);
        struct ffn_tensor tdx = ffn_tensor_2d(b.dx, FFN_DTYPE_F32, s->T, s->d, s->d);

        for (int t = threads ? threads : 1; t <= (threads ? threads : 2); t++) {
            ffn__set_threads(ctx, t);
            for (int sched = 0; sched < (quick ? 1 : 2); sched++) {
                struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
                o.schedule = sched ? FFN_BLOCK_SCHEDULE_TILED : FFN_BLOCK_SCHEDULE_AUTO;
                ffn_block_t blk;
                if (ffn_block_create(ctx, &spec, &w, &o, &blk)) {
                    fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(ctx));
                    rc = 2;
                    continue;
                }
                struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
                ffn_block_info(ctx, blk, s->T, &info);
                const char *sname = info.schedule == FFN_BLOCK_SCHEDULE_TILED ? "tiled" : "separate";
                for (int bwd = 0; bwd < 2; bwd++) {
                    double tb[64], tg[64];
                    const int n = reps < 64 ? reps : 64;
                    // Warm-up (page faults, OpenBLAS buffers), then alternate block and GEMMs.
                    ffn_block_forward(ctx, blk, &ty, &tx, bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE);
                    if (bwd) ffn_block_backward(ctx, blk, &g, &tdx, &tdy);
                    ffn__gemms(s, &b, bwd);
                    for (int r = 0; r < n; r++) {
                        double t0 = ffn__now();
                        enum ffn_status e = ffn_block_forward(ctx, blk, &ty, &tx,
                                                              bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE);
                        if (!e && bwd) e = ffn_block_backward(ctx, blk, &g, &tdx, &tdy);
                        tb[r] = ffn__now() - t0;
                        if (e) {
                            fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(ctx));
                            rc = 2;
                        }
                        t0 = ffn__now();
                        ffn__gemms(s, &b, bwd);
                        tg[r] = ffn__now() - t0;
                    }
                    const double sec = ffn__median(tb, n), gsec = ffn__median(tg, n);
                    const double flops = cost.flops_fwd + (bwd ? cost.flops_bwd : 0.0);
                    if (json)
                        printf("{\"shape\":\"%s\",\"tokens\":%" PRId64 ",\"d\":%" PRId64 ",\"m\":%"
                               PRId64 ",\"act\":\"%s\",\"gated\":%s,\"pass\":\"%s\","
                               "\"schedule\":\"%s\",\"tile_rows\":%" PRId64 ",\"threads\":%d,"
                               "\"seconds\":%.6g,\"gflops\":%.4g,\"gemm_seconds\":%.6g,"
                               "\"gemm_gflops\":%.4g,\"ratio_to_gemm\":%.4f,\"blas\":\"%s\","
                               "\"isa\":\"%s\",\"reps\":%d}\n",
                               s->name, s->T, s->d, s->m, s->gated ? ffn_glu_name(s->act) : ffn_act_name(s->act),
                               s->gated ? "true" : "false", bwd ? "fwdbwd" : "fwd", sname,
                               info.tile_rows, t, sec, flops / sec * 1e-9, gsec,
                               flops / gsec * 1e-9, sec / gsec, ffn__blas_name(),
                               ffn_isa_name(ffn_ctx_isa(ctx)), n);
                    else
                        printf("%-11s %-7s %-9s %3d %10.4f %9.1f %12.4f %8.3f\n", s->name,
                               bwd ? "fwdbwd" : "fwd", sname, t, sec, flops / sec * 1e-9, gsec,
                               sec / gsec);
                    fflush(stdout);
                }
                ffn_block_destroy(blk);
            }
        }
        float *all[] = {b.x, b.y, b.dy, b.dx, b.P, b.H, b.Wg, b.Wu, b.Wd, b.bu, b.bd,
                        b.gWg, b.gWu, b.gWd, b.gbu, b.gbd};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
    }
    ffn_ctx_destroy(ctx);
    return rc;
#endif
}

// --- the fixture demo --------------------------------------------------------------------------

// transformers MLP classes of the shipped fixtures (names and roles from the checkpoint).
static const struct {
    const char *module, *prefix;
    enum ffn_act act;
    bool gated;
    enum ffn_gate_up_layout layout;
    enum ffn_weight_orient orient;
    bool bias;
    const char *names[4];  // gate, up, gate_up, down
} ffn__arches[] = {
    {"LlamaMLP", "model.layers.%s.mlp.", FFN_ACT_SILU, true, FFN_GATE_UP_SEPARATE, FFN_WEIGHT_OUT_IN,
     false, {"gate_proj", "up_proj", NULL, "down_proj"}},
    {"GemmaMLP", "model.layers.%s.mlp.", FFN_ACT_GELU_TANH, true, FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN, false, {"gate_proj", "up_proj", NULL, "down_proj"}},
    {"Phi3MLP", "model.layers.%s.mlp.", FFN_ACT_SILU, true, FFN_GATE_UP_FUSED, FFN_WEIGHT_OUT_IN,
     false, {NULL, NULL, "gate_up_proj", "down_proj"}},
    {"GPT2MLP", "transformer.h.%s.mlp.", FFN_ACT_GELU_TANH, false, FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_IN_OUT, true, {NULL, "c_fc", NULL, "c_proj"}},
    {"T5DenseGatedActDense", "encoder.block.%s.layer.1.DenseReluDense.", FFN_ACT_GELU_TANH, true,
     FFN_GATE_UP_SEPARATE, FFN_WEIGHT_OUT_IN, false, {"wi_0", "wi_1", NULL, "wo"}},
};

static int64_t ffn__numel(const struct ffn_file_tensor *t) {
    int64_t n = 1;
    for (int k = 0; k < t->n_dims; k++) n *= t->shape[k];
    return n;
}

// max |got - ref| / max |ref|
static double ffn__relerr(const float *ref, const float *got, int64_t n) {
    double e = 0, s = 0;
    for (int64_t k = 0; k < n; k++) {
        s = fabs(ref[k]) > s ? fabs(ref[k]) : s;
        e = fabs((double)got[k] - ref[k]) > e ? fabs((double)got[k] - ref[k]) : e;
    }
    return s > 0 ? e / s : e;
}

static int ffn__fixture(const char *dir, int json) {
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 2;
    int rc = 2;
    char path[4096], name[512], pre[256];
    ffn_safetensors_t model = NULL, io = NULL;
    ffn_block_t blk = NULL;
    float *grads[8] = {0}, *y = NULL, *dx = NULL;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (ffn_safetensors_open(ctx, path, &model)) goto out;
    snprintf(path, sizeof path, "%s/io.safetensors", dir);
    if (ffn_safetensors_open(ctx, path, &io)) goto out;
    const char *module = ffn_safetensors_metadata(io, "module");
    const char *layer = ffn_safetensors_metadata(io, "layer");
    int ai = -1;
    for (int k = 0; module && k < (int)(sizeof ffn__arches / sizeof ffn__arches[0]); k++)
        if (!strcmp(module, ffn__arches[k].module)) ai = k;
    if (ai < 0 || !layer) {
        fprintf(stderr, "ffn bench block: %s: module '%s' is not one this demo knows\n", dir,
                module ? module : "?");
        goto done;
    }
    snprintf(pre, sizeof pre, ffn__arches[ai].prefix, layer);
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_weight *wm[8] = {&w.gate, &w.up, &w.gate_up, &w.down,
                                &w.b_gate, &w.b_up, &w.b_gate_up, &w.b_down};
    struct ffn_file_tensor ft[8] = {0};
    for (int k = 0; k < 8; k++) {
        const char *n = ffn__arches[ai].names[k % 4];
        if (!n || (k >= 4 && !ffn__arches[ai].bias)) continue;
        snprintf(name, sizeof name, "%s%s.%s", pre, n, k < 4 ? "weight" : "bias");
        if (ffn_safetensors_find(ctx, model, name, &ft[k]) || ft[k].dtype != FFN_FILE_DTYPE_F32) goto out;
        *wm[k] = ffn_weight_dense(ft[k].data, FFN_DTYPE_F32, ffn__arches[ai].orient);
        wm[k]->rows = ft[k].n_dims == 2 ? ft[k].shape[0] : 1;
        wm[k]->cols = ft[k].shape[ft[k].n_dims - 1];
        grads[k] = calloc((size_t)ffn__numel(&ft[k]), sizeof(float));
    }
    struct ffn_file_tensor x, yr, dy, dxr;
    if (ffn_safetensors_find(ctx, io, "x", &x) || ffn_safetensors_find(ctx, io, "y", &yr) ||
        ffn_safetensors_find(ctx, io, "dy", &dy) || ffn_safetensors_find(ctx, io, "dx", &dxr))
        goto out;
    const int64_t T = x.shape[0], d = x.shape[1];
    const int64_t m = ffn__arches[ai].orient == FFN_WEIGHT_OUT_IN ? ft[3].shape[1] : ft[3].shape[0];
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = d, spec.d_ff = m, spec.act = ffn__arches[ai].act;
    spec.gated = ffn__arches[ai].gated, spec.gate_up_layout = ffn__arches[ai].layout;
    spec.bias_up = spec.bias_down = ffn__arches[ai].bias;
    spec.bias_gate = ffn__arches[ai].bias && spec.gated;
    if (ffn_block_create(ctx, &spec, &w, NULL, &blk)) goto out;
    y = malloc((size_t)(T * d) * 4), dx = malloc((size_t)(T * d) * 4);
    struct ffn_tensor tx = ffn_tensor_2d((void *)x.data, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor tdy = ffn_tensor_2d((void *)dy.data, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, d, d);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.gate = grads[0], g.up = grads[1], g.gate_up = grads[2], g.down = grads[3];
    g.b_gate = grads[4], g.b_up = grads[5], g.b_gate_up = grads[6], g.b_down = grads[7];
    double t_best = INFINITY;
    for (int r = 0; r < FIXTURE_REPS; r++) {
        const double t0 = ffn__now();
        if (ffn_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_SAVE) ||
            ffn_block_backward(ctx, blk, &g, &tdx, &tdy))
            goto out;
        const double t = ffn__now() - t0;
        t_best = t < t_best ? t : t_best;
    }
    // Errors against the reference: y, dx and every parameter gradient.
    double worst = 0, ey = ffn__relerr(yr.data, y, T * d), edx = ffn__relerr(dxr.data, dx, T * d);
    worst = ey > edx ? ey : edx;
    double eg[8] = {0};
    for (int k = 0; k < 8; k++) {
        if (!grads[k]) continue;
        snprintf(name, sizeof name, "grad.%s.%s", ffn__arches[ai].names[k % 4], k < 4 ? "weight" : "bias");
        struct ffn_file_tensor gr;
        if (ffn_safetensors_find(ctx, io, name, &gr)) goto out;
        eg[k] = ffn__relerr(gr.data, grads[k], ffn__numel(&gr));
        worst = eg[k] > worst ? eg[k] : worst;
    }
    struct ffn_block_cost cost = FFN_BLOCK_COST_INIT;
    ffn_block_cost(ctx, &spec, T, FFN_DTYPE_F32, FFN_DTYPE_F32, &cost);
    const double tol = 1e-4;  // float32 against a float64 reference (see tests/block)
    if (json)
        printf("{\"fixture\":\"%s\",\"module\":\"%s\",\"tokens\":%" PRId64 ",\"d\":%" PRId64
               ",\"m\":%" PRId64 ",\"err_y\":%.3g,\"err_dx\":%.3g,\"err_max\":%.3g,"
               "\"seconds_fwdbwd\":%.6g,\"gflops\":%.4g,\"ok\":%s}\n",
               dir, module, T, d, m, ey, edx, worst, t_best,
               (cost.flops_fwd + cost.flops_bwd) / t_best * 1e-9, worst <= tol ? "true" : "false");
    else {
        printf("%s: %s layer %s, %" PRId64 " tokens, d=%" PRId64 ", m=%" PRId64 " (%s %s)\n", dir,
               module, layer, T, d, m, spec.gated ? ffn_glu_name(spec.act) : ffn_act_name(spec.act),
               spec.gated ? "gated" : "plain");
        printf("  max |err| / max |ref| against transformers (float64): y %.2e, dx %.2e", ey, edx);
        for (int k = 0; k < 8; k++)
            if (grads[k]) printf(", d%s%s %.2e", k >= 4 ? "b_" : "", ffn__arches[ai].names[k % 4], eg[k]);
        printf("\n  forward+backward: %.1f us (best of %d), %.2f GFLOP/s -> %s\n", t_best * 1e6,
               FIXTURE_REPS, (cost.flops_fwd + cost.flops_bwd) / t_best * 1e-9,
               worst <= tol ? "OK" : "MISMATCH");
    }
    rc = worst <= tol ? 0 : 1;
    goto done;
out:
    fprintf(stderr, "ffn bench block: %s: %s\n", dir, ffn_ctx_last_error(ctx));
done:
    for (int k = 0; k < 8; k++) free(grads[k]);
    free(y);
    free(dx);
    ffn_block_destroy(blk);
    ffn_safetensors_close(model);
    ffn_safetensors_close(io);
    ffn_ctx_destroy(ctx);
    return rc;
}

int ffn_cmd_bench_block(int argc, char **argv) {
    for (int i = 1; i < argc; i++)  // tensor-parallel: its own file (tools/cmd_bench_tp.c)
        if (!strcmp(argv[i], "--tp")) return ffn_cmd_bench_tp(argc, argv);
    int json = 0, threads = 0, quick = 0, reps = REPS_DEFAULT;
    const char *fixture = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--quick")) quick = 1;
        else if (v && !strcmp(a, "--threads")) threads = atoi(v), i++;
        else if (v && !strcmp(a, "--reps")) reps = atoi(v), i++;
        else if (v && !strcmp(a, "--fixture")) fixture = v, i++;
        else {
            fprintf(stderr, "ffn bench block: unknown or incomplete option '%s'\n", a);
            ffn__usage(stderr);
            return 2;
        }
    }
    if (threads < 0 || reps < 1) {
        fprintf(stderr, "ffn bench block: --threads must be ≥ 1 and --reps ≥ 1\n");
        return 2;
    }
    if (quick && reps == REPS_DEFAULT) reps = REPS_QUICK;
    if (fixture) return ffn__fixture(fixture, json);
    return ffn__bench_shapes(json, threads, quick, reps);
}
