// cmd_size.c — `ffn size`: FFN sizing at a glance. Widths by the LLaMA rule (or given), parameter
// and FLOP counts of the plain and the gated block, and for a token count the bytes moved and the
// arithmetic intensity of forward and backward, with the batch at which the block turns from
// memory-bound to compute-bound on an H200 (bf16) and, with --machine, on this CPU (f32, its GEMM
// rate over its triad bandwidth, both measured here in well under a second).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if __has_include(<cblas.h>)
#    include <cblas.h>
#    define FFN_TOOL_HAVE_CBLAS 1
#endif

#include "args.h"
#include "ffn.h"
#include "model.h"
#include "tools.h"
#include "tp.h"

// H200 SXM: 989 dense bf16 TFLOP/s over 4.8 TB/s of HBM3e = ~206 FLOP per byte.
#define H200_BF16_FLOPS 989e12
#define H200_BYTES_PER_S 4.8e12
// Option ranges: far above any real model (d ≈ 2^14, m ≈ 2^16 today), low enough that every
// count below stays exact (parameters 3·d·m ≤ 3·2^50 < 2^53).
#define SIZE_MAX_D (INT64_C(1) << 24)
#define SIZE_MAX_M (INT64_C(1) << 26)
#define SIZE_MAX_MULTIPLE (INT64_C(1) << 20)
#define SIZE_MAX_MULTIPLIER 64.0
#define SIZE_MAX_TOKENS (INT64_C(1) << 40)
// --machine: a square GEMM of this size and a triad over arrays of this many floats.
#define MACHINE_GEMM_N 1024
#define MACHINE_TRIAD_N ((size_t)1 << 24)

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn size --d D [--m M] [--multiple-of K] [--multiplier F] [--tokens T]\n"
            "                [--machine] [--json]\n"
            "  Widths: plain m = 4d; gated m = K·ceil(int(F·int(2/3·4d))/K) (LLaMA rule; K 256,\n"
            "  F 1.0 by default) unless --m gives the checkpoint's own width.\n"
            "  --tokens T   FLOPs, bytes and arithmetic intensity of one call on T tokens\n"
            "  --machine    measure this CPU's f32 GEMM rate and triad bandwidth (< 1 s)\n"
            "  --tp P       per-rank parameters and all-reduce bytes per token over P ranks\n"
            "               (--align K: d_ff split in units of K columns)\n"
            "  Ranges: D in [1, 2^24], M in [1, 2^26], K in [1, 2^20], F in (0, 64],\n"
            "  T in [1, 2^40], P in [1, 65536], --align in [1, 2^20].\n");
}

// Measured f32 GEMM FLOP/s and triad bytes/s of the CPU the tool runs on (best of a few runs).
static void ffn__machine(double *flops, double *bw) {
    *flops = 0;
    *bw = 0;
#ifdef FFN_TOOL_HAVE_CBLAS
    const int n = MACHINE_GEMM_N;
    float *a = calloc((size_t)n * n, 4), *b = calloc((size_t)n * n, 4),
          *c = calloc((size_t)n * n, 4);
    if (a && b && c)
        for (int rep = 0; rep < 4; rep++) {
            const double t0 = ffn_tool_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c,
                        n);
            const double r = 2.0 * n * n * (double)n / (ffn_tool_now() - t0);
            *flops = r > *flops ? r : *flops;
        }
    free(a), free(b), free(c);
#endif
    const size_t N = MACHINE_TRIAD_N;
    float *x = malloc(N * 4), *y = malloc(N * 4), *z = malloc(N * 4);
    if (x && y && z) {
        for (size_t i = 0; i < N; i++) x[i] = 1.0f, y[i] = 2.0f, z[i] = 0.0f;
        for (int rep = 0; rep < 3; rep++) {
            const double t0 = ffn_tool_now();
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < N; i++) z[i] = x[i] + 3.0f * y[i];  // triad: 2 reads + 1 write
            const double r = 3.0 * 4.0 * (double)N / (ffn_tool_now() - t0);
            *bw = r > *bw ? r : *bw;
        }
        if (z[N / 2] != 7.0f) *bw = 0;  // keeps the loop alive and checks it
    }
    free(x), free(y), free(z);
}

// Smallest T at which the intensity of `which` (0 fwd, 1 bwd) reaches `ridge` FLOP/byte.
static double ffn__crossover(ffn_ctx_t ctx, const struct ffn_block_spec *s, enum ffn_dtype dt,
                             double ridge, int which) {
    int64_t lo = 1, hi = (int64_t)1 << 30;
    struct ffn_block_cost c = FFN_BLOCK_COST_INIT;
    ffn_block_cost(ctx, s, hi, dt, dt, &c);
    if ((which ? c.intensity_bwd : c.intensity_fwd) < ridge) return INFINITY;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        ffn_block_cost(ctx, s, mid, dt, dt, &c);
        if ((which ? c.intensity_bwd : c.intensity_fwd) >= ridge)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (double)lo;
}

int ffn_cmd_size(int argc, char **argv) {
    int64_t d = 0, m_given = 0, multiple_of = 256, tokens = 0, tp = 0, tp_align = 1;
    double multiplier = 1.0;
    int json = 0, machine = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool ok = true;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--machine")) {
            machine = 1;
        } else if (!strcmp(a, "--d") || !strcmp(a, "--m") || !strcmp(a, "--multiple-of") ||
                   !strcmp(a, "--multiplier") || !strcmp(a, "--tokens") || !strcmp(a, "--tp") ||
                   !strcmp(a, "--align")) {
            if (!(v = ffn_arg_value("size", argc, argv, &i))) return 2;
            if (!strcmp(a, "--d"))
                ok = ffn_arg_i64("size", a, v, 1, SIZE_MAX_D, &d);
            else if (!strcmp(a, "--m"))
                ok = ffn_arg_i64("size", a, v, 1, SIZE_MAX_M, &m_given);
            else if (!strcmp(a, "--multiple-of"))
                ok = ffn_arg_i64("size", a, v, 1, SIZE_MAX_MULTIPLE, &multiple_of);
            else if (!strcmp(a, "--multiplier"))
                ok = ffn_arg_f64("size", a, v, 0.0, SIZE_MAX_MULTIPLIER, true, &multiplier);
            else if (!strcmp(a, "--tp"))
                ok = ffn_arg_i64("size", a, v, 1, FFN_TP_MAX_WORLD, &tp);
            else if (!strcmp(a, "--align"))
                ok = ffn_arg_i64("size", a, v, 1, SIZE_MAX_MULTIPLE, &tp_align);
            else
                ok = ffn_arg_i64("size", a, v, 1, SIZE_MAX_TOKENS, &tokens);
        } else {
            fprintf(stderr, "ffn size: unknown option '%s'\n", ffn_tool_esc(a));
            ffn__usage(stderr);
            return 2;
        }
        if (!ok) return 2;
    }
    if (d < 1) {
        fprintf(stderr, "ffn size: --d D is required\n");
        ffn__usage(stderr);
        return 2;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 2;
    int64_t m_gated = m_given;
    if (!m_gated && ffn_block_size_rule(ctx, d, multiplier, multiple_of, &m_gated)) {
        fprintf(stderr, "ffn size: %s\n", ffn_tool_errmsg(ctx));
        ffn_ctx_destroy(ctx);
        return 2;
    }
    const int64_t m_plain = m_given ? m_given : 4 * d;
    struct ffn_block_spec sp = FFN_BLOCK_SPEC_INIT, sg = FFN_BLOCK_SPEC_INIT;
    sp.d_model = sg.d_model = d;
    sp.d_ff = m_plain, sp.gated = false;
    sg.d_ff = m_gated, sg.gated = true;
    const int64_t T = tokens ? tokens : 1;
    struct ffn_block_cost cp = FFN_BLOCK_COST_INIT, cg = FFN_BLOCK_COST_INIT;
    struct ffn_block_cost cpf = FFN_BLOCK_COST_INIT, cgf = FFN_BLOCK_COST_INIT;
    if (ffn_block_cost(ctx, &sp, T, FFN_DTYPE_BF16, FFN_DTYPE_BF16, &cp) ||
        ffn_block_cost(ctx, &sg, T, FFN_DTYPE_BF16, FFN_DTYPE_BF16, &cg) ||
        ffn_block_cost(ctx, &sp, T, FFN_DTYPE_F32, FFN_DTYPE_F32, &cpf) ||
        ffn_block_cost(ctx, &sg, T, FFN_DTYPE_F32, FFN_DTYPE_F32, &cgf)) {
        fprintf(stderr, "ffn size: %s\n", ffn_tool_errmsg(ctx));
        ffn_ctx_destroy(ctx);
        return 2;
    }
    const double h200 = H200_BF16_FLOPS / H200_BYTES_PER_S;
    double cpu_flops = 0, cpu_bw = 0;
    if (machine) ffn__machine(&cpu_flops, &cpu_bw);
    const double cpu_ridge = cpu_bw > 0 ? cpu_flops / cpu_bw : 0;

    const struct ffn_block_spec *specs[2] = {&sp, &sg};
    const struct ffn_block_cost *cb[2] = {&cp, &cg}, *cf[2] = {&cpf, &cgf};
    if (json) {
        printf(
            "{\"d\":%lld,\"m_plain\":%lld,\"m_gated\":%lld,\"multiple_of\":%lld,"
            "\"multiplier\":%g,\"tokens\":%lld",
            (long long)d, (long long)m_plain, (long long)m_gated, (long long)multiple_of,
            multiplier, (long long)T);
        for (int k = 0; k < 2; k++) {
            printf(
                ",\"%s\":{\"params\":%lld,\"flops_fwd\":%.6g,\"flops_bwd\":%.6g,"
                "\"bytes_fwd_bf16\":%.6g,\"bytes_bwd_bf16\":%.6g,\"intensity_fwd_bf16\":%.4g,"
                "\"intensity_bwd_bf16\":%.4g,\"intensity_fwd_f32\":%.4g,\"intensity_bwd_f32\":%.4g,"
                "\"h200_crossover_tokens_fwd\":%.0f",
                k ? "gated" : "plain", (long long)cb[k]->n_params, cb[k]->flops_fwd,
                cb[k]->flops_bwd, cb[k]->bytes_fwd, cb[k]->bytes_bwd, cb[k]->intensity_fwd,
                cb[k]->intensity_bwd, cf[k]->intensity_fwd, cf[k]->intensity_bwd,
                ffn__crossover(ctx, specs[k], FFN_DTYPE_BF16, h200, 0));
            if (machine)
                printf(",\"cpu_crossover_tokens_fwd\":%.0f",
                       ffn__crossover(ctx, specs[k], FFN_DTYPE_F32, cpu_ridge, 0));
            printf("}");
        }
        printf(",\"h200_ridge\":%.4g", h200);
        if (machine)
            printf(",\"cpu_gemm_gflops\":%.4g,\"cpu_triad_gbs\":%.4g,\"cpu_ridge\":%.4g",
                   cpu_flops * 1e-9, cpu_bw * 1e-9, cpu_ridge);
        printf("}\n");
    } else {
        printf("d = %lld; plain m = %lld; gated m = %lld%s\n", (long long)d, (long long)m_plain,
               (long long)m_gated, m_given ? " (given)" : " (LLaMA rule)");
        printf("%-6s %14s %12s %14s %14s %10s %10s %10s\n", "block", "params", "GFLOP fwd",
               "MB fwd (bf16)", "MB bwd (bf16)", "AI fwd", "AI bwd", "AI f32 fwd");
        for (int k = 0; k < 2; k++)
            printf("%-6s %14lld %12.4g %14.4g %14.4g %10.4g %10.4g %10.4g\n", k ? "gated" : "plain",
                   (long long)cb[k]->n_params, cb[k]->flops_fwd * 1e-9, cb[k]->bytes_fwd * 1e-6,
                   cb[k]->bytes_bwd * 1e-6, cb[k]->intensity_fwd, cb[k]->intensity_bwd,
                   cf[k]->intensity_fwd);
        printf(
            "(T = %lld tokens; AI = arithmetic intensity, FLOP per byte moved: weights once, "
            "activations once)\n",
            (long long)T);
        printf(
            "H200 bf16 ridge %.0f FLOP/B: forward compute-bound from T = %.0f (plain), %.0f "
            "(gated)\n",
            h200, ffn__crossover(ctx, &sp, FFN_DTYPE_BF16, h200, 0),
            ffn__crossover(ctx, &sg, FFN_DTYPE_BF16, h200, 0));
        if (machine) {
            if (cpu_ridge > 0)
                printf(
                    "this CPU: f32 GEMM %.1f GFLOP/s, triad %.1f GB/s, ridge %.1f FLOP/B: "
                    "forward compute-bound from T = %.0f (plain), %.0f (gated)\n",
                    cpu_flops * 1e-9, cpu_bw * 1e-9, cpu_ridge,
                    ffn__crossover(ctx, &sp, FFN_DTYPE_F32, cpu_ridge, 0),
                    ffn__crossover(ctx, &sg, FFN_DTYPE_F32, cpu_ridge, 0));
            else
                printf("this CPU: no BLAS in this build; cannot measure the GEMM rate\n");
        }
    }
    if (tp) ffn_tool_size_tp(ctx, tp, tp_align, d, m_plain, m_gated, json);
    ffn_ctx_destroy(ctx);
    return 0;
}
