// cmd_bench_block.c — `ffn bench block`: FFN block forward and forward+backward on the CPU, in
// f32 and bf16, at 1, 16, 256 and 4096 tokens, against the same GEMMs alone through oneDNN (the
// fastest matrix-multiply path on the CPU, the one the block itself uses), measured in the same
// process: ratio_to_gemm is the cost of everything that is not a GEMM (bias, activation, its
// backward, conversions, the recomputed h). At a few tokens with bf16 weights the block runs its
// own skinny GEMM (docs/blocks.md), faster than oneDNN's there, so those rows read below 1; their
// measure is the other one: at 1 token the rows give the GB/s of weight bytes read against a
// same-run STREAM triad (decode is bound by reading the weights). Shapes:
// GPT-2 small (plain GeLU-tanh with biases) and a LLaMA-like SwiGLU block. bench/torch_block.py
// runs the same rows in PyTorch; scripts/bench_block.sh merges both into one table.
// `--fixture DIR` instead runs one Hugging Face fixture (tests/data/hf/<arch>) and prints its
// error against the transformers reference and its speed: the `make demo` entry.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#    include <omp.h>
#endif
#ifdef FFN_TOOL_HAVE_DNNL
#    include <oneapi/dnnl/dnnl.h>
#endif

#include "args.h"
#include "ffn.h"
#include "tools.h"

#define REPS_DEFAULT 7
#define REPS_QUICK 3
#define REP_BUDGET_S 1.5  // a row stops repeating once this much time is spent (≥ 3 reps)
#define FIXTURE_REPS 200

struct bshape {
    const char *name;
    int64_t d, m;
    enum ffn_act act;
    bool gated, bias;
};

static const struct bshape ffn__shapes[] = {
    {"gpt2-small", 768, 3072, FFN_ACT_GELU_TANH, false, true},
    {"llama-like", 2048, 5632, FFN_ACT_SILU, true, false},
};

static const int64_t ffn__tokens[] = {1, 16, 256, 4096};

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
    fprintf(
        f,
        "usage: ffn bench block [--json] [--threads T] [--tokens N] [--dtype f32|bf16]\n"
        "                       [--shape NAME] [--quick] [--reps N] [--pages 4k|huge] [--pack]\n"
        "       ffn bench block --fixture DIR [--json]\n"
        "       ffn bench block --backend cuda [--help]   (the GPU rows)\n"
        "  Times FFN block forward (fwd) and forward+backward (fwdbwd, SAVE policy) for\n"
        "  gpt2-small (768 -> 3072, GeLU-tanh, biases) and llama-like (2048 -> 5632, SwiGLU)\n"
        "  at 1, 16, 256 and 4096 tokens, f32 and bf16 (weights, activations, gradients),\n"
        "  on 1 and 2 threads, against the same GEMMs alone through oneDNN (at <= 6 tokens,\n"
        "  and in the backward at 16, the block's own skinny GEMM is faster:\n"
        "  ratios below 1; the weight GB/s against the triad is the 1-token rows' measure).\n"
        "  Rows at <= 16 tokens run over copies of the weights spanning 4x the last-level\n"
        "  cache, as a model's layers (each call reads its weights from memory), and report\n"
        "  weight GB/s against a same-run triad.\n"
        "  --quick       fewer repetitions, the AUTO schedule only (else also TILED)\n"
        "  --pages huge  weights and weight gradients advised onto 2 MiB transparent huge\n"
        "                pages (default 4k, as a memory-mapped checkpoint's)\n"
        "  --pack        the blocks with opts.pack_weights, and the GEMMs alone on the\n"
        "                forward's weights packed alike\n"
        "  --fixture DIR a Hugging Face fixture (e.g. tests/data/hf/llama): error against the\n"
        "                transformers reference and time per forward+backward\n");
}

// --- memory: the triad and the copies of the weights ------------------------------------------

// STREAM triad a = b + s·c on `threads` threads over arrays as large as the last-level cache
// (128-512 MiB each); GB/s counting 3 arrays, best of 5.
static double ffn__triad(int threads) {
    size_t bytes = ffn_tool_llc_bytes();
    bytes = bytes < ((size_t)128 << 20)   ? (size_t)128 << 20
            : bytes > ((size_t)512 << 20) ? (size_t)512 << 20
                                          : bytes;
    const size_t n = bytes / 4;
    float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
    double best = 0;
    if (a && b && c) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
        for (int r = 0; r < 5; r++) {
            const double t0 = ffn__now();
#pragma omp parallel for num_threads(threads) schedule(static)
            for (size_t i = 0; i < n; i++) a[i] = b[i] + 0.5f * c[i];
            const double gbs = 3.0 * (double)n * 4 / (ffn__now() - t0) * 1e-9;
            best = gbs > best ? gbs : best;
        }
    }
    free(a), free(b), free(c);
    return best;
}

// Rows at <= 16 tokens run as a model decodes: each call on the next of nc copies of the weights
// (a model's layers, each with its own gradients), the copies spanning 4x the last-level cache,
// so that every call reads its weights from memory while the caches hold other layers' weights.
// (A flush by writing over the cache instead leaves it full of dirty lines, and the timed call
// pays the write-back of as many bytes as it reads: docs/blocks.md, "Cold rows".)
#define COPIES_MAX 256
#define COPIES_BYTES_MAX ((size_t)4 << 30)

// bytes: of one copy's weights; each copy allocates `per` times that (its gradients, and with
// --pack the block's and the GEMMs-alone's packed weights).
static int ffn__copies(size_t bytes, size_t per) {
    size_t n = (4 * ffn_tool_llc_bytes() + bytes - 1) / bytes;
    if (n < 2) n = 2;
    if (n > COPIES_BYTES_MAX / (per * bytes)) n = COPIES_BYTES_MAX / (per * bytes);
    return n < 1 ? 1 : n > COPIES_MAX ? COPIES_MAX : (int)n;
}

// --- the same GEMMs alone, through oneDNN ----------------------------------------------------

#ifdef FFN_TOOL_HAVE_DNNL
#    define GEMM_MAX 12

// A list of matmul primitives bound to their buffers, run in order.
struct gemms {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    int n;
    dnnl_primitive_t prim[GEMM_MAX];
    dnnl_memory_t mem[GEMM_MAX][3];
    char impl[GEMM_MAX][48];
    int copy;     // the copy of the weights and gradients the primitives are bound to
    bool pack_b;  // GEMMs added while set read their B (a weight) packed, as oneDNN prefers
    // Packed B of GEMM k (--pack): the layout, the weight's own descriptor and pointer (copy 0),
    // and the packed copy of each copy of the weights, made when first bound.
    bool pk_on[GEMM_MAX];
    dnnl_memory_desc_t pk_md[GEMM_MAX], pk_plain[GEMM_MAX];
    void *pk_src[GEMM_MAX];
    void *pk[GEMM_MAX][COPIES_MAX];
};

static dnnl_data_type_t ffn__ddt(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_BF16 ? dnnl_bf16 : dnnl_f32;
}

// C[M, N] (+)= A[M, K] · B[K, N]; each operand: pointer, dtype, strides.
static int ffn__gemm_add(struct gemms *g, int64_t M, int64_t N, int64_t K, void *A,
                         enum ffn_dtype ta, int64_t a0, int64_t a1, void *B, enum ffn_dtype tb,
                         int64_t b0, int64_t b1, void *C, enum ffn_dtype tc, int64_t c0, bool acc) {
    dnnl_memory_desc_t a, b, c;
    dnnl_dims_t da = {M, K}, db = {K, N}, dc = {M, N};
    dnnl_dims_t sa = {a0, a1}, sb = {b0, b1}, sc = {c0, 1};
    if (dnnl_memory_desc_init_by_strides(&a, 2, da, ffn__ddt(ta), sa) ||
        dnnl_memory_desc_init_by_strides(&b, 2, db, ffn__ddt(tb), sb) ||
        dnnl_memory_desc_init_by_strides(&c, 2, dc, ffn__ddt(tc), sc))
        return -1;
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    const int k = g->n;
    const bool pack = g->pack_b;
    dnnl_memory_desc_t bany;
    if (pack && dnnl_memory_desc_init_by_tag(&bany, 2, db, ffn__ddt(tb), dnnl_format_tag_any))
        return -1;
    if (dnnl_matmul_desc_init(&md, &a, pack ? &bany : &b, NULL, &c) ||
        dnnl_primitive_attr_create(&attr))
        return -1;
    dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict);
    if (acc) {
        dnnl_post_ops_t po;
        dnnl_post_ops_create(&po);
        dnnl_post_ops_append_sum(po, 1.0f);
        dnnl_primitive_attr_set_post_ops(attr, po);
        dnnl_post_ops_destroy(po);
    }
    const int bad = dnnl_primitive_desc_create(&pd, &md, attr, g->eng, NULL) != dnnl_success;
    dnnl_primitive_attr_destroy(attr);
    if (bad) return -1;
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(g->impl[g->n], sizeof g->impl[0], "%s", impl);
    g->pk_on[k] = pack;
    if (pack) {
        g->pk_md[k] = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        g->pk_plain[k] = b, g->pk_src[k] = B;
    }
    if (dnnl_primitive_create(&g->prim[k], pd)) return -1;
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_create(&g->mem[k][0], &a, g->eng, A);
    dnnl_memory_create(&g->mem[k][1], pack ? &g->pk_md[k] : &b, g->eng,
                       pack ? DNNL_MEMORY_NONE : B);
    dnnl_memory_create(&g->mem[k][2], &c, g->eng, C);
    g->n++;
    return 0;
}

// Binds g's operands from copy g->copy of the weights and gradients to copy c (cw: nc sets of
// CW_N pointers; the other operands are shared).
#    define CW_N 6
static int ffn__gemms_bind(struct gemms *g, void *const *cw, int c) {
    for (int k = 0; k < g->n; k++) {
        if (g->pk_on[k]) {  // the packed copy of this copy's weight, reordered once
            int j = 0;
            while (j < CW_N && cw[j] != g->pk_src[k]) j++;
            if (j == CW_N) return -1;
            if (!g->pk[k][c]) {
                dnnl_primitive_desc_t rpd;
                dnnl_primitive_t rp;
                dnnl_memory_t from, to;
                g->pk[k][c] = malloc(dnnl_memory_desc_get_size(&g->pk_md[k]));
                if (!g->pk[k][c] || dnnl_reorder_primitive_desc_create(
                                        &rpd, &g->pk_plain[k], g->eng, &g->pk_md[k], g->eng, NULL))
                    return -1;
                dnnl_primitive_create(&rp, rpd);
                dnnl_memory_create(&from, &g->pk_plain[k], g->eng, cw[c * CW_N + j]);
                dnnl_memory_create(&to, &g->pk_md[k], g->eng, g->pk[k][c]);
                dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
                dnnl_primitive_execute(rp, g->st, 2, args);
                dnnl_stream_wait(g->st);
                dnnl_memory_destroy(to), dnnl_memory_destroy(from);
                dnnl_primitive_destroy(rp), dnnl_primitive_desc_destroy(rpd);
            }
            dnnl_memory_set_data_handle(g->mem[k][1], g->pk[k][c]);
        }
        for (int r = 0; r < 3; r++) {
            void *p = NULL;
            dnnl_memory_get_data_handle(g->mem[k][r], &p);
            for (int j = 0; j < CW_N; j++)
                if (p && p == cw[g->copy * CW_N + j])
                    dnnl_memory_set_data_handle(g->mem[k][r], cw[c * CW_N + j]);
        }
    }
    g->copy = c;
    return 0;
}

static void ffn__gemms_run(struct gemms *g) {
    for (int k = 0; k < g->n; k++) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, g->mem[k][0]},
                                   {DNNL_ARG_WEIGHTS, g->mem[k][1]},
                                   {DNNL_ARG_DST, g->mem[k][2]}};
        dnnl_primitive_execute(g->prim[k], g->st, 3, args);
    }
    dnnl_stream_wait(g->st);
}

static void ffn__gemms_free(struct gemms *g) {
    for (int k = 0; k < g->n; k++) {
        dnnl_primitive_destroy(g->prim[k]);
        for (int j = 0; j < 3; j++) dnnl_memory_destroy(g->mem[k][j]);
        for (int c = 0; g->pk_on[k] && c < COPIES_MAX; c++) free(g->pk[k][c]), g->pk[k][c] = NULL;
        g->pk_on[k] = false;
    }
    g->n = 0;
    g->copy = 0;
}
#endif

// --- the benchmark shapes ----------------------------------------------------------------------

// Buffers of one (shape, tokens, dtype): weights [out, in] (nn.Linear), activations, gradients,
// and the GEMM-alone scratch (P planes, h).
struct bufs {
    void *x, *y, *dy, *dx, *Wg, *Wu, *Wd, *bu, *bd, *gWg, *gWu, *gWd, *gbu, *gbd;
    void *P, *H, *dH, *Pd;
    int nc;     // copies of the weights and their gradients (1 but for the cold rows)
    void **cw;  // nc sets {Wg, Wu, Wd, gWg, gWu, gWd}; the first is the ones above
};

// The elementwise passes a block cannot avoid, alone (the floor above the GEMMs): the
// activation from the f32 pre-activations to h (dtype of the row), and for a training step its
// backward over the saved pre-activations (in the row's dtype).
static void ffn__act_passes(ffn_ctx_t ctx, const struct bshape *s, const struct bufs *b, int64_t T,
                            enum ffn_dtype dt, int bwd) {
    const int64_t m = s->m, pc = s->gated ? 2 * m : m;
    struct ffn_tensor P = ffn_tensor_2d(b->P, FFN_DTYPE_F32, T, pc, pc);
    struct ffn_tensor H = ffn_tensor_2d(b->H, dt, T, m, m);
    struct ffn_tensor Pd = ffn_tensor_2d(b->Pd, dt, T, pc, pc);
    struct ffn_tensor dH = ffn_tensor_2d(b->dH, dt, T, m, m);
    if (s->gated) {
        struct ffn_tensor g = ffn_tensor_cols(&P, 0, m), u = ffn_tensor_cols(&P, m, m);
        ffn_glu_forward(ctx, s->act, &H, &g, &u);
        if (bwd) {
            struct ffn_tensor gd = ffn_tensor_cols(&Pd, 0, m), ud = ffn_tensor_cols(&Pd, m, m);
            ffn_glu_backward(ctx, s->act, &gd, &ud, &gd, &ud, &dH);
        }
    } else {
        ffn_act_forward(ctx, s->act, &H, &P);
        if (bwd) ffn_act_backward(ctx, s->act, &Pd, &Pd, &dH);
    }
}

// n random values in [-scale, scale] (huge: on 2 MiB pages, ffn_tool_alloc_touched).
static void *ffn__rand(size_t n, float scale, enum ffn_dtype dt, uint64_t *st, bool huge) {
    const size_t es = ffn_dtype_size(dt);
    void *p = ffn_tool_alloc_touched(n * es, huge);
    for (size_t i = 0; p && i < n; i++) {
        *st = *st * 6364136223846793005ull + 1442695040888963407ull;
        const float v = scale * (float)((double)(*st >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        if (dt == FFN_DTYPE_F32)
            ((float *)p)[i] = v;
        else
            ((uint16_t *)p)[i] = ffn_f32_to_bf16(v);
    }
    return p;
}

struct row {
    const struct bshape *s;
    int64_t T;
    enum ffn_dtype dt;
    int threads, bwd;
    const char *sched;
    int64_t tile_rows;
    double sec, gsec, asec, triad;  // block, GEMMs alone, elementwise passes alone
    double peak;                    // the CPU's multiply-add peak for dt on these threads
    const char *peak_instr;
    int reps;
    const char *impl, *gimpl;
    double weight_bytes;
    struct ffn_block_cost cost;
    const char *pages;  // of the weights and weight gradients: "4k" or "huge"
    int copies;         // of the weights the calls rotate over (1: the same weights every call)
    bool packed;        // opts.pack_weights (and the GEMMs alone on packed forward weights)
};

static void ffn__print(const struct row *r, int json, const char *cpu, const char *isa) {
    const double flops = r->cost.flops_fwd + (r->bwd ? r->cost.flops_bwd : 0.0);
    const double wgbs = r->weight_bytes / r->sec * 1e-9;
    if (json) {
        printf("{\"shape\":\"%s\",\"tokens\":%" PRId64 ",\"d\":%" PRId64 ",\"m\":%" PRId64
               ",\"act\":\"%s\",\"gated\":%s,\"dtype\":\"%s\",\"pass\":\"%s\",\"schedule\":\"%s\","
               "\"tile_rows\":%" PRId64
               ",\"threads\":%d,\"seconds\":%.6g,\"gflops\":%.4g,"
               "\"gemm_seconds\":%.6g,\"gemm_gflops\":%.4g,\"ratio_to_gemm\":%.4f,"
               "\"act_seconds\":%.6g,\"floor_ratio\":%.4f,"
               "\"weight_gbs\":%.4g,\"triad_gbs\":%.4g,\"weight_to_triad\":%.4f,"
               "\"peak_gflops\":%.4g,\"peak_instr\":\"%s\",\"to_peak\":%.4f,"
               "\"impl\":\"%s\",\"gemm_impl\":\"%s\",\"weight_bytes\":%.0f,\"copies\":%d,"
               "\"pages\":\"%s\",\"packed\":%s,\"isa\":\"%s\",\"cpu\":\"%s\",\"reps\":%d}\n",
               r->s->name, r->T, r->s->d, r->s->m,
               r->s->gated ? ffn_glu_name(r->s->act) : ffn_act_name(r->s->act),
               r->s->gated ? "true" : "false", ffn_dtype_name(r->dt), r->bwd ? "fwdbwd" : "fwd",
               r->sched, r->tile_rows, r->threads, r->sec, flops / r->sec * 1e-9, r->gsec,
               flops / r->gsec * 1e-9, r->sec / r->gsec, r->asec, (r->gsec + r->asec) / r->gsec,
               wgbs, r->triad, wgbs / r->triad, r->peak, r->peak_instr,
               r->peak > 0 ? flops / r->sec * 1e-9 / r->peak : 0.0, r->impl, r->gimpl,
               r->weight_bytes, r->copies, r->pages, r->packed ? "true" : "false", isa, cpu,
               r->reps);
    } else {
        printf("%-11s %5" PRId64 " %-4s %-6s %-8s %3d %10.5f %9.1f %10.5f %7.3f %7.3f %6.3f",
               r->s->name, r->T, ffn_dtype_name(r->dt), r->bwd ? "fwdbwd" : "fwd", r->sched,
               r->threads, r->sec, flops / r->sec * 1e-9, r->gsec, r->sec / r->gsec,
               (r->gsec + r->asec) / r->gsec, r->peak > 0 ? flops / r->sec * 1e-9 / r->peak : 0.0);
        if (r->T == 1 && !r->bwd) printf("  %6.1f GB/s = %.2f triad", wgbs, wgbs / r->triad);
        printf("\n");
    }
    fflush(stdout);
}

static int ffn__bench_shapes(int json, int threads, int64_t only_T, int only_dt,
                             const char *only_shape, int quick, int reps, bool huge, bool pack) {
#ifndef FFN_TOOL_HAVE_DNNL
    (void)json, (void)threads, (void)only_T, (void)only_dt, (void)only_shape, (void)quick,
        (void)reps, (void)huge, (void)pack;
    fprintf(stderr, "ffn bench block: this build has no oneDNN\n");
    return 2;
#else
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 2;
    char cpu[256];
    ffn_tool_cpu_name(cpu, sizeof cpu, NULL);
    const char *isa = ffn_isa_name(ffn_ctx_isa(ctx));
    const int t_lo = threads ? threads : 1, t_hi = threads ? threads : 2;
    double triad[3] = {0}, peak[3][2] = {{0}};
    const char *peak_instr[2] = {"none", "none"};
    for (int t = t_lo; t <= t_hi && t <= 2; t++) {
        triad[t] = ffn__triad(t);
        for (int k = 0; k < 2; k++)
            if (only_dt < 0 || only_dt == (int)(k ? FFN_DTYPE_BF16 : FFN_DTYPE_F32))
                peak[t][k] =
                    ffn_tool_peak_gflops(k ? FFN_DTYPE_BF16 : FFN_DTYPE_F32, t, &peak_instr[k]);
    }
    const dnnl_version_t *v = dnnl_version();
    int rc = 0;
    bool header = false;
    struct gemms g = {0};
    dnnl_engine_create(&g.eng, dnnl_cpu, 0);
    dnnl_stream_create(&g.st, g.eng, dnnl_stream_default_flags);
    for (size_t si = 0; si < sizeof ffn__shapes / sizeof ffn__shapes[0]; si++) {
        const struct bshape *s = &ffn__shapes[si];
        if (only_shape && strcmp(only_shape, s->name)) continue;
        for (size_t ti = 0; ti < sizeof ffn__tokens / sizeof ffn__tokens[0]; ti++) {
            const int64_t T = ffn__tokens[ti];
            if (only_T && T != only_T) continue;
            for (int dti = 0; dti < 2; dti++) {
                const enum ffn_dtype dt = dti ? FFN_DTYPE_BF16 : FFN_DTYPE_F32;
                if (only_dt >= 0 && (int)dt != only_dt) continue;
                const size_t d = (size_t)s->d, m = (size_t)s->m, Tn = (size_t)T,
                             es = ffn_dtype_size(dt);
                uint64_t st = 42;
                struct bufs b = {0};
                const float ws = 1.0f / sqrtf((float)d);
                b.x = ffn__rand(Tn * d, 1.0f, dt, &st, false);
                b.dy = ffn__rand(Tn * d, 1.0f, dt, &st, false);
                b.y = calloc(Tn * d, es), b.dx = calloc(Tn * d, es);
                b.Wu = ffn__rand(m * d, ws, dt, &st, huge);
                b.Wd = ffn__rand(d * m, ws, dt, &st, huge);
                b.Wg = s->gated ? ffn__rand(m * d, ws, dt, &st, huge) : NULL;
                b.bu = ffn__rand(m, 0.1f, dt, &st, false);
                b.bd = ffn__rand(d, 0.1f, dt, &st, false);
                b.gWg = s->gated ? ffn_tool_alloc_touched(m * d * es, huge) : NULL;
                b.gWu = ffn_tool_alloc_touched(m * d * es, huge);
                b.gWd = ffn_tool_alloc_touched(d * m * es, huge);
                b.gbu = calloc(m, es), b.gbd = calloc(d, es);
                b.P = calloc(Tn * 2 * m, 4), b.H = calloc(Tn * m, es), b.dH = calloc(Tn * m, es);
                b.Pd = calloc(Tn * 2 * m, es);
                const bool cold = T <= 16;
                const size_t wn = (s->gated ? 3 : 2) * m * d;
                b.nc = cold ? ffn__copies(wn * es, pack ? 4 : 2) : 1;
                b.cw = calloc((size_t)b.nc * CW_N, sizeof(void *));
                bool oom =
                    !b.cw || !b.Wu || !b.Wd || !b.gWu || !b.gWd || (s->gated && (!b.Wg || !b.gWg));
                for (int c = 0; !oom && c < b.nc; c++) {
                    void **cw = b.cw + c * CW_N;
                    if (c == 0) {
                        void *first[CW_N] = {b.Wg, b.Wu, b.Wd, b.gWg, b.gWu, b.gWd};
                        memcpy(cw, first, sizeof first);
                        continue;
                    }
                    for (int j = 0; j < 3; j++) {
                        const size_t n = (j == 0 && !s->gated ? 0 : m * d) * es;
                        if (!n) continue;
                        cw[j] = ffn_tool_alloc_touched(n, huge);
                        cw[3 + j] = ffn_tool_alloc_touched(n, huge);
                        if (!cw[j] || !cw[3 + j]) {
                            oom = true;
                            break;
                        }
                        memcpy(cw[j], b.cw[j], n);
                    }
                }
                if (oom) {
                    fprintf(stderr, "ffn bench block: out of memory for %d copies of %s %s\n", b.nc,
                            s->name, ffn_dtype_name(dt));
                    rc = 2;
                }

                struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
                spec.d_model = s->d, spec.d_ff = s->m, spec.act = s->act, spec.gated = s->gated;
                spec.bias_up = spec.bias_down = s->bias;
                struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
                w.up = ffn_weight_dense(b.Wu, dt, FFN_WEIGHT_OUT_IN);
                w.down = ffn_weight_dense(b.Wd, dt, FFN_WEIGHT_OUT_IN);
                if (s->gated) w.gate = ffn_weight_dense(b.Wg, dt, FFN_WEIGHT_OUT_IN);
                if (s->bias) {
                    w.b_up = ffn_weight_dense(b.bu, dt, FFN_WEIGHT_OUT_IN);
                    w.b_down = ffn_weight_dense(b.bd, dt, FFN_WEIGHT_OUT_IN);
                }
                struct ffn_block_grads gr = FFN_BLOCK_GRADS_INIT;
                gr.dtype = dt;
                gr.up = b.gWu, gr.down = b.gWd, gr.gate = s->gated ? b.gWg : NULL;
                if (s->bias) gr.b_up = b.gbu, gr.b_down = b.gbd;
                struct ffn_block_cost cost = FFN_BLOCK_COST_INIT;
                ffn_block_cost(ctx, &spec, T, dt, dt, &cost);
                struct ffn_tensor tx = ffn_tensor_2d(b.x, dt, T, s->d, s->d);
                struct ffn_tensor ty = ffn_tensor_2d(b.y, dt, T, s->d, s->d);
                struct ffn_tensor tdy = ffn_tensor_2d(b.dy, dt, T, s->d, s->d);
                struct ffn_tensor tdx = ffn_tensor_2d(b.dx, dt, T, s->d, s->d);

                for (int t = t_lo; !oom && t <= t_hi; t++) {
                    ffn_ctx_set_threads(ctx, t);
                    omp_set_num_threads(t);  // oneDNN's GEMM-alone primitives follow it
                    for (int bwd = 0; bwd < 2; bwd++) {
                        // The GEMMs alone: those the block issues for this pass (dense planes
                        // of P, f32 pre-activations, h and gradients in the dtype).
                        const int64_t Ti = T, di = s->d, mi = s->m;
                        const enum ffn_dtype F = FFN_DTYPE_F32;
                        char *Pg = b.P, *Pu = (char *)b.P + Tn * m * 4;
                        int e = 0;
                        ffn__gemms_free(&g);
                        // --pack: the forward's weights packed, as the block packs them.
                        g.pack_b = pack;
                        if (s->gated)
                            e |= ffn__gemm_add(&g, Ti, mi, di, b.x, dt, di, 1, b.Wg, dt, 1, di, Pg,
                                               F, mi, false);
                        e |= ffn__gemm_add(&g, Ti, mi, di, b.x, dt, di, 1, b.Wu, dt, 1, di, Pu, F,
                                           mi, false);
                        e |= ffn__gemm_add(&g, Ti, di, mi, b.H, dt, mi, 1, b.Wd, dt, 1, mi, b.y, dt,
                                           di, false);
                        g.pack_b = false;
                        if (bwd) {
                            // dW_down = dyᵀ·h; dh = dy·W_down; dW = dPᵀ·x; dx = dP·W (+ second), each
                            // in the operand layout oneDNN runs fast (src row-major, weights
                            // [N][K]; the block copies to it, docs/blocks.md "Operand layouts").
                            e |= ffn__gemm_add(&g, di, mi, Ti, b.dy, dt, Ti, 1, b.H, dt, 1, Ti,
                                               b.gWd, dt, mi, false);
                            e |= ffn__gemm_add(&g, Ti, mi, di, b.dy, dt, di, 1, b.Wd, dt, 1, di,
                                               b.dH, dt, mi, false);
                            if (s->gated)
                                e |= ffn__gemm_add(&g, mi, di, Ti, b.H, dt, Ti, 1, b.x, dt, 1, Ti,
                                                   b.gWg, dt, di, false);
                            e |= ffn__gemm_add(&g, mi, di, Ti, b.dH, dt, Ti, 1, b.x, dt, 1, Ti,
                                               b.gWu, dt, di, false);
                            if (s->gated)
                                e |= ffn__gemm_add(&g, Ti, di, mi, b.H, dt, mi, 1, b.Wg, dt, 1, mi,
                                                   b.dx, F == dt ? dt : dt, di, false);
                            e |= ffn__gemm_add(&g, Ti, di, mi, b.dH, dt, mi, 1, b.Wu, dt, 1, mi,
                                               b.dx, dt, di, s->gated);
                        }
                        if (e) {
                            fprintf(stderr, "ffn bench block: oneDNN refused a GEMM of %s %s\n",
                                    s->name, ffn_dtype_name(dt));
                            rc = 2;
                            continue;
                        }
                        for (int sched = 0; sched < (quick || T < 256 ? 1 : 2); sched++) {
                            struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
                            o.schedule = sched ? FFN_BLOCK_SCHEDULE_TILED : FFN_BLOCK_SCHEDULE_AUTO;
                            o.save_dtype = dt;
                            o.pack_weights = pack;
                            // One block and one set of gradients per copy of the weights.
                            ffn_block_t blks[COPIES_MAX] = {0};
                            struct ffn_block_grads grs[COPIES_MAX];
                            int nb = 0;
                            for (; nb < b.nc; nb++) {
                                void *const *cw = b.cw + nb * CW_N;
                                struct ffn_block_weights wc = w;
                                wc.up.data = cw[1], wc.down.data = cw[2];
                                if (s->gated) wc.gate.data = cw[0];
                                grs[nb] = gr;
                                grs[nb].up = cw[4], grs[nb].down = cw[5];
                                if (s->gated) grs[nb].gate = cw[3];
                                if (ffn_block_create(ctx, &spec, &wc, &o, &blks[nb])) break;
                            }
                            if (nb < b.nc) {
                                fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(ctx));
                                rc = 2;
                                for (int c = 0; c < nb; c++) ffn_block_destroy(blks[c]);
                                continue;
                            }
                            const enum ffn_block_policy pol =
                                bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE;
                            // Warm-up of every copy, in the order of the timed calls below:
                            // primitives, workspaces, page faults, packed weights.
                            int warm = 0;
                            for (; warm < b.nc && !ffn__gemms_bind(&g, b.cw, warm); warm++) {
                                ffn_block_forward(ctx, blks[warm], &ty, &tx, pol);
                                if (bwd)
                                    ffn_block_backward(ctx, blks[warm], &grs[warm], &tdx, &tdy);
                                ffn__gemms_run(&g);
                            }
                            if (warm < b.nc) {
                                fprintf(stderr,
                                        "ffn bench block: out of memory for the packed "
                                        "weights of the GEMMs alone\n");
                                rc = 2;
                                for (int c = 0; c < b.nc; c++) ffn_block_destroy(blks[c]);
                                continue;
                            }
                            struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
                            ffn_block_info(ctx, blks[0], T, &info);
                            if (!header && !json) {
                                printf(
                                    "cpu %s, isa %s, oneDNN %d.%d.%d, first GEMM: %s (%s), "
                                    "weights on %s pages%s\n",
                                    cpu, isa, v->major, v->minor, v->patch, info.gemm_impl,
                                    ffn_dtype_name(dt), huge ? "huge" : "4k",
                                    pack ? ", packed" : "");
                                printf("%-11s %5s %-4s %-6s %-8s %3s %10s %9s %10s %7s %7s %6s\n",
                                       "shape", "T", "dt", "pass", "schedule", "thr", "seconds",
                                       "GFLOP/s", "gemm_s", "ratio", "floor", "peak");
                                header = true;
                            }
                            double tb[64], tg[64], ta[64];
                            int n = 0, next = 0;  // the copy of the next call (block or GEMMs)
                            const double budget0 = ffn__now();
                            for (; n < (reps < 64 ? reps : 64); n++) {
                                if (n >= 3 && ffn__now() - budget0 > REP_BUDGET_S) break;
                                const int cb = next;
                                next = (next + 1) % b.nc;
                                double t0 = ffn__now();
                                enum ffn_status es2 =
                                    ffn_block_forward(ctx, blks[cb], &ty, &tx, pol);
                                if (!es2 && bwd)
                                    es2 = ffn_block_backward(ctx, blks[cb], &grs[cb], &tdx, &tdy);
                                tb[n] = ffn__now() - t0;
                                if (es2) {
                                    fprintf(stderr, "ffn bench block: %s\n",
                                            ffn_ctx_last_error(ctx));
                                    rc = 2;
                                }
                                (void)ffn__gemms_bind(&g, b.cw, next);  // warmed: no reorder
                                next = (next + 1) % b.nc;
                                t0 = ffn__now();
                                ffn__gemms_run(&g);
                                tg[n] = ffn__now() - t0;
                                t0 = ffn__now();
                                ffn__act_passes(ctx, s, &b, T, dt, bwd);
                                ta[n] = ffn__now() - t0;
                            }
                            struct row r = {
                                s,
                                T,
                                dt,
                                t,
                                bwd,
                                info.schedule == FFN_BLOCK_SCHEDULE_TILED ? "tiled" : "separate",
                                info.tile_rows,
                                ffn__median(tb, n),
                                ffn__median(tg, n),
                                ffn__median(ta, n),
                                triad[t < 3 ? t : 2],
                                peak[t < 3 ? t : 2][dti],
                                peak_instr[dti],
                                n,
                                info.gemm_impl,
                                g.impl[0],
                                (double)info.weight_bytes,
                                cost,
                                huge ? "huge" : "4k",
                                b.nc,
                                pack};
                            ffn__print(&r, json, cpu, isa);
                            for (int c = 0; c < b.nc; c++) ffn_block_destroy(blks[c]);
                        }
                    }
                }
                ffn__gemms_free(&g);  // bound to buffers freed below
                for (int c = 1; b.cw && c < b.nc; c++)
                    for (int j = 0; j < CW_N; j++) free(b.cw[c * CW_N + j]);
                free(b.cw);
                void *all[] = {b.x,   b.y,   b.dy,  b.dx,  b.Wg,  b.Wu, b.Wd, b.bu, b.bd,
                               b.gWg, b.gWu, b.gWd, b.gbu, b.gbd, b.P,  b.H,  b.dH, b.Pd};
                for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
            }
        }
    }
    for (int t = t_lo; t <= t_hi && t <= 2; t++) {
        if (json)
            printf(
                "{\"triad_threads\":%d,\"triad_gbs\":%.4g,\"cpu\":\"%s\",\"onednn\":\"%d.%d.%d\"}"
                "\n",
                t, triad[t], cpu, v->major, v->minor, v->patch);
        else
            printf("triad %d thread%s: %.1f GB/s\n", t, t > 1 ? "s" : "", triad[t]);
        for (int k = 0; k < 2; k++) {
            if (peak[t][k] <= 0) continue;
            const char *dn = ffn_dtype_name(k ? FFN_DTYPE_BF16 : FFN_DTYPE_F32);
            if (json)
                printf(
                    "{\"peak_threads\":%d,\"dtype\":\"%s\",\"peak_gflops\":%.4g,"
                    "\"peak_instr\":\"%s\",\"cpu\":\"%s\"}\n",
                    t, dn, peak[t][k], peak_instr[k], cpu);
            else
                printf("peak %s %d thread%s: %.1f GFLOP/s (%s)\n", dn, t, t > 1 ? "s" : "",
                       peak[t][k], peak_instr[k]);
        }
    }
    ffn__gemms_free(&g);
    dnnl_stream_destroy(g.st);
    dnnl_engine_destroy(g.eng);
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
    {"LlamaMLP",
     "model.layers.%s.mlp.",
     FFN_ACT_SILU,
     true,
     FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN,
     false,
     {"gate_proj", "up_proj", NULL, "down_proj"}},
    {"GemmaMLP",
     "model.layers.%s.mlp.",
     FFN_ACT_GELU_TANH,
     true,
     FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN,
     false,
     {"gate_proj", "up_proj", NULL, "down_proj"}},
    {"Phi3MLP",
     "model.layers.%s.mlp.",
     FFN_ACT_SILU,
     true,
     FFN_GATE_UP_FUSED,
     FFN_WEIGHT_OUT_IN,
     false,
     {NULL, NULL, "gate_up_proj", "down_proj"}},
    {"GPT2MLP",
     "transformer.h.%s.mlp.",
     FFN_ACT_GELU_TANH,
     false,
     FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_IN_OUT,
     true,
     {NULL, "c_fc", NULL, "c_proj"}},
    {"T5DenseGatedActDense",
     "encoder.block.%s.layer.1.DenseReluDense.",
     FFN_ACT_GELU_TANH,
     true,
     FFN_GATE_UP_SEPARATE,
     FFN_WEIGHT_OUT_IN,
     false,
     {"wi_0", "wi_1", NULL, "wo"}},
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

// The context's last error without the library function's name in front (as model.c's
// ffn_tool_errmsg; this file does not link the model glue).
static const char *ffn_bench__errmsg(ffn_ctx_t ctx) {
    const char *m = ffn_ctx_last_error(ctx), *p = m;
    if (strncmp(m, "ffn_", 4)) return m[0] ? m : "a tensor is missing or is not F32";
    for (p += 4; (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';) p++;
    return p[0] == ':' && p[1] == ' ' ? p + 2 : m;
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
        fprintf(stderr, "ffn bench block: %s: module '%s' is not one this demo knows\n",
                ffn_tool_esc(dir), module ? ffn_tool_esc(module) : "?");
        goto done;
    }
    snprintf(pre, sizeof pre, ffn__arches[ai].prefix, layer);
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_weight *wm[8] = {&w.gate,   &w.up,   &w.gate_up,   &w.down,
                                &w.b_gate, &w.b_up, &w.b_gate_up, &w.b_down};
    struct ffn_file_tensor ft[8] = {0};
    for (int k = 0; k < 8; k++) {
        const char *n = ffn__arches[ai].names[k % 4];
        if (!n || (k >= 4 && !ffn__arches[ai].bias)) continue;
        snprintf(name, sizeof name, "%s%s.%s", pre, n, k < 4 ? "weight" : "bias");
        if (ffn_safetensors_find(ctx, model, name, &ft[k]) || ft[k].dtype != FFN_FILE_DTYPE_F32)
            goto out;
        *wm[k] = ffn_weight_dense(ft[k].data, FFN_DTYPE_F32, ffn__arches[ai].orient);
        wm[k]->rows = ft[k].n_dims == 2 ? ft[k].shape[0] : 1;
        wm[k]->cols = ft[k].shape[ft[k].n_dims - 1];
        grads[k] = calloc((size_t)ffn__numel(&ft[k]), sizeof(float));
        if (!grads[k]) goto oom;
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
    if (!y || !dx) goto oom;
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
        snprintf(name, sizeof name, "grad.%s.%s", ffn__arches[ai].names[k % 4],
                 k < 4 ? "weight" : "bias");
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
               ",\"m\":%" PRId64
               ",\"err_y\":%.3g,\"err_dx\":%.3g,\"err_max\":%.3g,"
               "\"seconds_fwdbwd\":%.6g,\"gflops\":%.4g,\"ok\":%s}\n",
               dir, module, T, d, m, ey, edx, worst, t_best,
               (cost.flops_fwd + cost.flops_bwd) / t_best * 1e-9, worst <= tol ? "true" : "false");
    else {
        printf("%s: %s layer %s, %" PRId64 " tokens, d=%" PRId64 ", m=%" PRId64 " (%s %s)\n", dir,
               module, layer, T, d, m, spec.gated ? ffn_glu_name(spec.act) : ffn_act_name(spec.act),
               spec.gated ? "gated" : "plain");
        printf("  max |err| / max |ref| against transformers (float64): y %.2e, dx %.2e", ey, edx);
        for (int k = 0; k < 8; k++)
            if (grads[k])
                printf(", d%s%s %.2e", k >= 4 ? "b_" : "", ffn__arches[ai].names[k % 4], eg[k]);
        printf("\n  forward+backward: %.1f us (best of %d), %.2f GFLOP/s -> %s\n", t_best * 1e6,
               FIXTURE_REPS, (cost.flops_fwd + cost.flops_bwd) / t_best * 1e-9,
               worst <= tol ? "OK" : "MISMATCH");
    }
    rc = worst <= tol ? 0 : 1;
    goto done;
oom:
    fprintf(stderr, "ffn bench block: %s: out of memory for the gradients and outputs\n",
            ffn_tool_esc(dir));
    goto done;
out:
    fprintf(stderr, "ffn bench block: %s: %s\n", ffn_tool_esc(dir), ffn_bench__errmsg(ctx));
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

#ifdef FFN_HAVE_CUDA
int ffn_cmd_bench_block_cuda(int argc, char **argv);  // tools/cuda/bench_block_cuda.c
#endif

int ffn_cmd_bench_block(int argc, char **argv) {
    for (int i = 1; i < argc; i++)  // tensor-parallel: its own file (tools/cmd_bench_tp.c)
        if (!strcmp(argv[i], "--tp")) return ffn_cmd_bench_tp(argc, argv);
    enum ffn_backend be;
    if (ffn_tool_backend(argc, argv, "ffn bench block", &be)) return 2;
    if (be == FFN_BACKEND_CUDA) {
#ifdef FFN_HAVE_CUDA
        return ffn_cmd_bench_block_cuda(argc, argv);
#else
        char why[256];
        ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why);
        fprintf(stderr, "ffn bench block --backend cuda: %s\n", why);
        return 2;
#endif
    }
    int json = 0, threads = 0, quick = 0, reps = REPS_DEFAULT, dt = -1;
    bool huge = false, pack = false;
    int64_t tokens = 0;
    const char *fixture = NULL, *shape = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--pack"))
            pack = true;
        else if (v && !strcmp(a, "--threads")) {
            if (!ffn_arg_int("bench block", a, v, 1, 1024, &threads)) return 2;
            i++;
        } else if (v && !strcmp(a, "--reps")) {
            if (!ffn_arg_int("bench block", a, v, 1, 1000, &reps)) return 2;
            i++;
        } else if (v && !strcmp(a, "--tokens")) {
            if (!ffn_arg_i64("bench block", a, v, 1, (int64_t)1 << 24, &tokens)) return 2;
            i++;
        } else if (v && !strcmp(a, "--shape"))
            shape = v, i++;
        else if (v && !strcmp(a, "--pages")) {
            if (strcmp(v, "huge") && strcmp(v, "4k")) {
                fprintf(stderr, "ffn bench block: --pages must be 4k or huge (got '%s')\n",
                        ffn_tool_esc(v));
                return 2;
            }
            huge = !strcmp(v, "huge"), i++;
        } else if (v && !strcmp(a, "--dtype")) {
            enum ffn_dtype d;
            if (ffn_dtype_from_name(v, &d) || d == FFN_DTYPE_F16) {
                fprintf(stderr, "ffn bench block: --dtype '%s' is not f32 or bf16\n",
                        ffn_tool_esc(v));
                return 2;
            }
            dt = (int)d, i++;
        } else if (v && !strcmp(a, "--fixture"))
            fixture = v, i++;
        else if (v && !strcmp(a, "--backend"))
            i++;  // cpu (ffn_tool_backend read it)
        else if (!strncmp(a, "--backend=", 10))
            continue;
        else {
            fprintf(stderr, "ffn bench block: unknown or incomplete option '%s'\n",
                    ffn_tool_esc(a));
            ffn__usage(stderr);
            return 2;
        }
    }
    // A fixture is a directory (model.safetensors + io.safetensors).
    if (fixture && !ffn_arg_want("bench block", "--fixture", fixture, true)) return 2;
    if (quick && reps == REPS_DEFAULT) reps = REPS_QUICK;
    if (fixture) return ffn__fixture(fixture, json);
    return ffn__bench_shapes(json, threads, tokens, dt, shape, quick, reps, huge, pack);
}
