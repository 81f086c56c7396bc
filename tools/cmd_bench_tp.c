// cmd_bench_tp.c — `ffn bench block --tp P` under `mpirun -np P`: the tensor-parallel FFN block
// (each rank its columns of d_ff, one all-reduce of y per forward and of dx per backward) on the
// shapes of `ffn bench block` (GPT-2 small, plain GeLU-tanh with biases; a LLaMA-like SwiGLU),
// f32. Rank 0 reports per pass the block time (the slowest rank's), the all-reduce time inside
// it (MPI is synchronous: transfer plus waiting for the slowest rank), the small agreement calls,
// the bytes each rank hands to the all-reduce and those it sends in a ring all-reduce, and the
// same block unsharded on rank 0 alone (the others waiting) as a same-run baseline.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#    include <omp.h>
#endif
#ifdef FFN_HAVE_MPI
#    include <mpi.h>
#endif

#include "args.h"
#include "model.h"
#include "tools.h"
#include "tp.h"

#define REPS_DEFAULT 5
#define REPS_QUICK 2
#define REPS_MAX 64

struct tshape {
    const char *name;
    int64_t T, d, m;
    enum ffn_act act;
    bool gated, bias;
};

static const struct tshape ffn__shapes[] = {
    {"gpt2-small", 512, 768, 3072, FFN_ACT_GELU_TANH, false, true},
    {"llama-like", 256, 2048, 5632, FFN_ACT_SILU, true, false},
};

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: mpirun -np P ffn bench block --tp P [--json] [--threads T] [--quick]\n"
            "                                    [--reps N] [--align K]\n"
            "  Times the tensor-parallel FFN block forward (fwd) and forward+backward (fwdbwd)\n"
            "  for gpt2-small and llama-like (f32) over P ranks: block seconds (slowest rank,\n"
            "  median), all-reduce seconds and share, bytes per rank, and the unsharded block on\n"
            "  rank 0 alone. T threads per rank (default 1).\n");
}

static int ffn__cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double ffn__median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ffn__cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float *ffn__rand(size_t n, float scale, uint64_t *st) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; p && i < n; i++) {
        *st = *st * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = scale * (float)((double)(*st >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return p;
}

#ifdef FFN_HAVE_MPI
static double ffn__max(double v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

// One shape: TP fwd and fwdbwd, then the unsharded block on rank 0. 0 on success.
static int ffn__shape(ffn_ctx_t ctx, const struct ffn_tool_tp *tp, const struct tshape *s, int reps,
                      int threads, int json) {
    const size_t T = (size_t)s->T, d = (size_t)s->d, m = (size_t)s->m;
    uint64_t seed = 42;  // the same weights and inputs on every rank
    float *x = ffn__rand(T * d, 1.0f, &seed), *dy = ffn__rand(T * d, 1.0f, &seed);
    const float ws = 1.0f / sqrtf((float)d);
    float *Wu = ffn__rand(m * d, ws, &seed), *Wd = ffn__rand(d * m, ws, &seed);
    float *Wg = s->gated ? ffn__rand(m * d, ws, &seed) : NULL;
    float *bu = ffn__rand(m, 0.1f, &seed), *bd = ffn__rand(d, 0.1f, &seed);
    float *y = calloc(T * d, 4), *dx = calloc(T * d, 4);
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = s->d, spec.d_ff = s->m, spec.act = s->act, spec.gated = s->gated;
    spec.bias_up = spec.bias_down = s->bias;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    w.up = ffn_weight_dense(Wu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    w.down = ffn_weight_dense(Wd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    if (s->gated) w.gate = ffn_weight_dense(Wg, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    if (s->bias) {
        w.b_up = ffn_weight_dense(bu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        w.b_down = ffn_weight_dense(bd, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    }
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    ffn_tp_shard_t sh = NULL;
    ffn_tp_block_t blk = NULL;
    enum ffn_status st = ffn_tp_plan_make(ctx, &spec, &w, tp->world, &tp->opts, &plan);
    if (!st) st = ffn_tp_shard_create(ctx, &plan, tp->rank, &w, &sh);
    st = ffn_comm_agree(ctx, tp->comm, st);
    if (!st) st = ffn_tp_block_create(ctx, tp->comm, &plan, ffn_tp_shard_weights(sh), NULL, &blk);
    // Gradient buffers in the shard's layout (as large as the shard).
    const struct ffn_block_weights *sw = sh ? ffn_tp_shard_weights(sh) : NULL;
    float *gbuf[8] = {0};
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    if (!st) {
        const struct ffn_weight *t[8] = {&sw->gate,   &sw->up,   &sw->gate_up,   &sw->down,
                                         &sw->b_gate, &sw->b_up, &sw->b_gate_up, &sw->b_down};
        for (int k = 0; k < 8; k++)
            if (t[k]->data) gbuf[k] = calloc((size_t)(t[k]->rows * t[k]->cols), 4);
        g.gate = gbuf[0], g.up = gbuf[1], g.gate_up = gbuf[2], g.down = gbuf[3];
        g.b_gate = gbuf[4], g.b_up = gbuf[5], g.b_gate_up = gbuf[6], g.b_down = gbuf[7];
    }
    struct ffn_tp_cost cost = FFN_TP_COST_INIT;
    struct ffn_block_cost bc = FFN_BLOCK_COST_INIT;
    ffn_tp_plan_cost(ctx, &plan, tp->rank, s->T, FFN_DTYPE_F32, &cost);
    ffn_block_cost(ctx, &spec, s->T, FFN_DTYPE_F32, FFN_DTYPE_F32, &bc);
    const struct ffn_tensor tx = ffn_tensor_2d(x, FFN_DTYPE_F32, s->T, s->d, s->d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, s->T, s->d, s->d);
    const struct ffn_tensor tdy = ffn_tensor_2d(dy, FFN_DTYPE_F32, s->T, s->d, s->d);
    const struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, s->T, s->d, s->d);
    int rc = 0;
    for (int bwd = 0; bwd < 2 && !st; bwd++) {
        const enum ffn_block_policy pol = bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE;
        double tb[REPS_MAX], ta[REPS_MAX], tc[REPS_MAX], tu[REPS_MAX];
        struct ffn_comm_stats c0 = FFN_COMM_STATS_INIT, c1 = FFN_COMM_STATS_INIT;
        // Warm-up: page faults, OpenBLAS buffers, MPI's shared-memory segments.
        st = ffn_tp_block_forward(ctx, blk, &ty, &tx, pol);
        if (!st && bwd) st = ffn_tp_block_backward(ctx, blk, &g, &tdx, &tdy);
        for (int r = 0; r < reps && !st; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            ffn_comm_stats(ctx, tp->comm, &c0);
            const double t0 = ffn_tool_now();
            st = ffn_tp_block_forward(ctx, blk, &ty, &tx, pol);
            if (!st && bwd) st = ffn_tp_block_backward(ctx, blk, &g, &tdx, &tdy);
            const double t = ffn_tool_now() - t0;
            ffn_comm_stats(ctx, tp->comm, &c1);
            tb[r] = ffn__max(t);
            ta[r] = ffn__max(c1.data_seconds - c0.data_seconds);
            tc[r] = ffn__max(c1.control_seconds - c0.control_seconds);
        }
        if (st) break;
        const double bytes = c1.data_bytes - c0.data_bytes,
                     sent = c1.data_sent_bytes - c0.data_sent_bytes;
        const int64_t calls = c1.data_calls - c0.data_calls;
        // The same block unsharded, on rank 0 alone (same weights, same threads).
        double useq = NAN;
        if (tp->rank == 0) {
            ffn_block_t ub = NULL;
            if (!ffn_block_create(ctx, &spec, &w, NULL, &ub)) {
                struct ffn_block_grads ug = FFN_BLOCK_GRADS_INIT;  // weight grads: sized whole
                float *uw[4] = {calloc(m * d, 4), calloc(m * d, 4), calloc(d * m, 4), NULL};
                ug.up = uw[0], ug.down = uw[2];
                if (s->gated) ug.gate = uw[1];
                ffn_block_forward(ctx, ub, &ty, &tx, pol);
                if (bwd) ffn_block_backward(ctx, ub, &ug, &tdx, &tdy);
                for (int r = 0; r < reps; r++) {
                    const double t0 = ffn_tool_now();
                    ffn_block_forward(ctx, ub, &ty, &tx, pol);
                    if (bwd) ffn_block_backward(ctx, ub, &ug, &tdx, &tdy);
                    tu[r] = ffn_tool_now() - t0;
                }
                useq = ffn__median(tu, reps);
                for (int k = 0; k < 3; k++) free(uw[k]);
            }
            ffn_block_destroy(ub);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const double sec = ffn__median(tb, reps), ar = ffn__median(ta, reps),
                     cs = ffn__median(tc, reps);
        const double flops = bc.flops_fwd + (bwd ? bc.flops_bwd : 0.0);
        if (tp->rank == 0) {
            if (json)
                printf(
                    "{\"shape\":\"%s\",\"tokens\":%" PRId64 ",\"d\":%" PRId64 ",\"m\":%" PRId64
                    ",\"gated\":%s,\"pass\":\"%s\",\"tp\":%" PRId64
                    ",\"threads_per_rank\":%d,"
                    "\"d_ff_rank0\":%" PRId64
                    ",\"seconds\":%.6g,\"allreduce_seconds\":%.6g,"
                    "\"allreduce_share\":%.4f,\"agree_seconds\":%.6g,\"allreduce_calls\":%" PRId64
                    ",\"allreduce_bytes_per_rank\":%.0f,\"sent_bytes_per_rank\":%.0f,"
                    "\"gflops\":%.4g,\"unsharded_seconds\":%.6g,\"comm\":\"%s\",\"reps\":%d}\n",
                    s->name, s->T, s->d, s->m, s->gated ? "true" : "false", bwd ? "fwdbwd" : "fwd",
                    tp->world, threads, cost.d_ff, sec, ar, ar / sec, cs, calls, bytes, sent,
                    flops / sec * 1e-9, useq, ffn_comm_backend(tp->comm), reps);
            else
                printf("%-11s %-7s %2" PRId64 " %5" PRId64
                       " %9.4f %9.4f %6.1f%% %8.5f %10.3f %10.3f "
                       "%8.1f %10.4f\n",
                       s->name, bwd ? "fwdbwd" : "fwd", tp->world, cost.d_ff, sec, ar,
                       100.0 * ar / sec, cs, bytes * 1e-6, sent * 1e-6, flops / sec * 1e-9, useq);
            fflush(stdout);
        }
    }
    if (st) {
        fprintf(stderr, "ffn bench block --tp: rank %" PRId64 ": %s\n", tp->rank,
                ffn_tool_errmsg(ctx));
        rc = 2;
    }
    for (int k = 0; k < 8; k++) free(gbuf[k]);
    ffn_tp_block_destroy(blk);
    ffn_tp_shard_destroy(sh);
    free(x), free(dy), free(Wu), free(Wd), free(Wg), free(bu), free(bd), free(y), free(dx);
    return rc;
}
#endif  // FFN_HAVE_MPI

int ffn_cmd_bench_tp(int argc, char **argv) {
    int json = 0, threads = 1, reps = REPS_DEFAULT, quick = 0;
    struct ffn_tool_tp tp = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        }
        const int k = ffn_tool_tp_option("ffn bench block", argc, argv, &i, &tp);
        if (k < 0) return 2;
        if (k) continue;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--threads") || !strcmp(a, "--reps")) {
            const char *v = ffn_arg_value("bench block", argc, argv, &i);
            if (!v) return 2;
            if (!strcmp(a, "--threads") ? !ffn_arg_int("bench block", a, v, 1, 1024, &threads)
                                        : !ffn_arg_int("bench block", a, v, 1, REPS_MAX, &reps))
                return 2;
        } else {
            fprintf(stderr, "ffn bench block: unknown option '%s'\n", ffn_tool_esc(a));
            ffn__usage(stderr);
            return 2;
        }
    }
    if (quick && reps == REPS_DEFAULT) reps = REPS_QUICK;
    if (tp.shards) {
        fprintf(stderr, "ffn bench block: --shards is not an option of bench\n");
        return 2;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 2;
    ffn_ctx_set_threads(ctx, threads);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    int rc = ffn_tool_tp_start("ffn bench block", ctx, &tp);
#ifdef FFN_HAVE_MPI
    if (!rc) {
        char cpu[256];
        ffn_tool_cpu_name(cpu, sizeof cpu, NULL);
        if (!json) {
            printf("tensor-parallel FFN block, f32, %" PRId64
                   " ranks x %d thread%s (%s, %s, isa %s)\n",
                   tp.world, threads, threads > 1 ? "s" : "", cpu, ffn_comm_backend(tp.comm),
                   ffn_isa_name(ffn_ctx_isa(ctx)));
            printf("%-11s %-7s %2s %5s %9s %9s %7s %8s %10s %10s %8s %10s\n", "shape", "pass", "P",
                   "m_r", "seconds", "allreduce", "share", "agree", "MB/rank", "MB sent", "GFLOP/s",
                   "unsharded");
        }
        for (size_t i = 0; i < sizeof ffn__shapes / sizeof ffn__shapes[0] && !rc; i++)
            rc = ffn__shape(ctx, &tp, &ffn__shapes[i], reps, threads, json);
        if (!json && tp.rank == 0)
            printf(
                "(seconds: median over %d runs of the slowest rank; allreduce: the all-reduces of "
                "y / dx in it, and their share; agree: the agreement steps before them, where a "
                "rank waits for the slowest; MB/rank: handed to the all-reduce per run; MB sent: "
                "ring model 2(P-1)/P; unsharded: the whole block on rank 0 alone)\n",
                reps);
    }
#else
    (void)json, (void)reps;
#endif
    ffn_tool_tp_stop(&tp);
    ffn_ctx_destroy(ctx);
    return rc;
}
