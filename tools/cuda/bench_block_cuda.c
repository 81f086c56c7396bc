// bench_block_cuda.c — `ffn bench block --backend cuda`: FFN block forward (fwd, policy NONE) and
// forward + backward (fwdbwd, SAVE, pre-activations saved in the row's dtype) on the GPU, against
// the same GEMMs alone through cuBLASLt (the fastest matrix-multiply path on the GPU, the one the
// block itself uses: same shapes, layouts, dtypes, bias epilogues, heuristic), measured in the
// same process: ratio_to_gemm is the cost of everything that is not a GEMM (the activation or
// gated combine and its backward, bias gradients, conversions). act_seconds times the
// element-wise passes alone (floor_ratio: a block that does not fuse them into its GEMMs cannot
// go below (gemm + act) / gemm). GPU time by CUDA events; before every timed call a read of twice
// the L2 cache evicts the data and keeps the stream busy while the host queues the call (the
// host's own time is reported apart, host_us). The JSON rows carry the CPU benchmark's fields
// (tools/cmd_bench_block.c; triad_gbs is the same-run device-to-device copy here) plus backend,
// device, copy_gbps, math, host_us. bench/torch_cuda_block.py times PyTorch on the same rows.
// Shapes: GPT-2 small (768 -> 3072, GeLU-tanh, biases) and LLaMA-3-8B's FFN (4096 -> 14336,
// SwiGLU), weights [out, in] as nn.Linear holds them.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "args.h"
#include "cuda/cuda_block.h"
#include "cuda/cuda_lt.h"
#include "ffn.h"
#include "tools.h"
#include "tools_cuda.h"

#define BB_MAX_REPS 50
#define BB_MIN_REPS 5
#define BB_ROW_BUDGET_S 0.4  // about this much timed GPU work per row (auto reps)
#define BB_HOST_CALLS 10
#define BB_SEED 0x5eedb10cULL
#define BB_GEMMS 10

struct bb_shape {
    const char *name;
    int64_t d, m;
    enum ffn_act act;
    bool gated, bias;
    bool fused;  // one gate_up weight [2m, d] ([gate | up], Phi-3's gate_up_proj)
};

static const struct bb_shape bb_shapes[] = {
    {"gpt2-small", 768, 3072, FFN_ACT_GELU_TANH, false, true, false},
    {"llama3-8b", 4096, 14336, FFN_ACT_SILU, true, false, false},
    {"phi3-mini", 3072, 8192, FFN_ACT_SILU, true, false, true},
};
static const int64_t bb_tokens[] = {16, 512, 8192};

int ffn_cmd_bench_block_cuda(int argc, char **argv);
int ffn_bbcu_scale(void *stream, void *p, int dt, int64_t n,
                   float scale);  // bench_block_kernels.cu

static double bb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bb_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bb_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bb_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void bb_usage(FILE *f) {
    fprintf(f,
            "usage: ffn bench block --backend cuda [--json] [--shape NAME] [--tokens N]\n"
            "                       [--dtype f32|bf16|all] [--math strict|tf32|bf16] [--reps N]\n"
            "                       [--pass fwd|fwdbwd|all] [--device D] [--stages] [--gemms]\n"
            "                       [--parity]\n"
            "  FFN block forward (fwd) and forward+backward (fwdbwd, SAVE) on the GPU for\n"
            "  gpt2-small (768 -> 3072, GeLU-tanh, biases), llama3-8b (4096 -> 14336, SwiGLU) and\n"
            "  phi3-mini (3072 -> 8192, SwiGLU, one fused gate_up weight) at 16, 512 and 8192\n"
            "  tokens, bf16 by default, against the same GEMMs alone through\n"
            "  cuBLASLt; GPU time by CUDA events, the L2 cache evicted before every timed call.\n"
            "  --math applies to f32 weights (strict: true f32, the default).\n"
            "  --stages: the block's own stages timed (an event after each GEMM and pass).\n"
            "  --gemms: each GEMM alone, with the block's algorithm (the fastest of cuBLASLt's\n"
            "  first $FFN_CUDA_GEMM_ALGOS heuristic candidates, default 8) and the heuristic's\n"
            "  first.\n"
            "  --parity: a context with bf16_parity (the gated forward rounds act(gate) first).\n");
}

// --- the same GEMMs alone, through cuBLASLt -----------------------------------------------------

// One row-major GEMM C[M, N] = A[M, K]·B[K, N] (+ bias) (+ C), as the block issues it.
struct bb_gemm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;   // the one used (timed pick of candidates, as the block)
    cublasLtMatmulAlgo_t first;  // the heuristic's first
    const void *A, *B;
    void *C;
    float beta;
    const char *name;  // the block's stage name ("P0", "dh", ...)
    int64_t M, N, K;
    char op[3];  // cuBLASLt's transa, transb ("TN": the forward of a weight [out, in])
    int pick, n_algos;
    char impl[64], first_impl[64];
};

struct bb_gemms {
    const struct ffn_lt *lt;
    cublasLtHandle_t h;
    void *ws;
    size_t ws_bytes;
    void *stream;
    int n;
    struct bb_gemm g[BB_GEMMS];
    char impl[96];
};

static cudaDataType_t bb_cdt(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_F32 ? CUDA_R_32F : dt == FFN_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

// Operands as (pointer, s0, s1): element (i, j) at i·s0 + j·s1, s0 or s1 = 1; the same mapping to
// cuBLASLt's column-major terms as the block (src/cuda/cuda_block.c).
static void bb_algo_name(const struct ffn_lt *lt, const cublasLtMatmulAlgo_t *a, char *buf,
                         size_t size) {
    int32_t id = 0, splitk = 1;
    uint32_t tile = 0;
    size_t w;
    char tn[32];
    lt->algo_get(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    lt->algo_get(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    lt->algo_get(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    snprintf(buf, size, "algo %d, %s, splitK %d", id, ffn_lt_tile_name((int)tile, tn, sizeof tn),
             splitk);
}

static int bb_add(struct bb_gemms *G, const char *name, int64_t M, int64_t N, int64_t K,
                  const void *A, int64_t a0, int64_t a1, const void *B, int64_t b0, int64_t b1,
                  void *C, int64_t c0, enum ffn_dtype ab, enum ffn_dtype cdt, const void *bias,
                  bool acc, cublasComputeType_t compute) {
    const struct ffn_lt *lt = G->lt;
    struct bb_gemm *g = &G->g[G->n];
    memset(g, 0, sizeof *g);
    const int32_t ta = b1 == 1 ? CUBLAS_OP_N : CUBLAS_OP_T,
                  tb = a1 == 1 ? CUBLAS_OP_N : CUBLAS_OP_T;
    const int64_t lda = b1 == 1 ? b0 : b1, ldb = a1 == 1 ? a0 : a1;
    if (lt->desc_create(&g->desc, compute, CUDA_R_32F)) return -1;
    lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (bias) {
        const uint32_t ep = CUBLASLT_EPILOGUE_BIAS;
        const int32_t bt = bb_cdt(ab);
        lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
        lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
        lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    }
    if (lt->layout_create(&g->la, bb_cdt(ab), ta == CUBLAS_OP_N ? N : K, ta == CUBLAS_OP_N ? K : N,
                          lda) ||
        lt->layout_create(&g->lb, bb_cdt(ab), tb == CUBLAS_OP_N ? K : M, tb == CUBLAS_OP_N ? M : K,
                          ldb) ||
        lt->layout_create(&g->lc, bb_cdt(cdt), N, M, c0))
        return -1;
    cublasLtMatmulPreference_t pref;
    lt->pref_create(&pref);
    const uint64_t wsb = G->ws_bytes;
    lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    cublasLtMatmulHeuristicResult_t res[FFN_LT_ALGOS_MAX];
    int n = 0;
    const cublasStatus_t s =
        lt->heuristic(G->h, g->desc, g->la, g->lb, g->lc, g->lc, pref,
                      ffn_lt_algos(2.0 * (double)M * (double)N * (double)K), res, &n);
    lt->pref_destroy(pref);
    if (s || n < 1) return -1;
    g->A = A, g->B = B, g->C = C, g->beta = acc ? 1.0f : 0.0f;
    // The block's choice: the fastest of the heuristic's candidates, timed on these operands.
    g->pick = ffn_lt_pick(lt, G->h, g->desc, g->la, g->lb, g->lc, res, n, B, A, C, C, g->beta,
                          G->ws, G->ws_bytes, G->stream, 3, NULL);
    g->n_algos = n;
    g->algo = res[g->pick].algo, g->first = res[0].algo;
    g->name = name, g->M = M, g->N = N, g->K = K;
    g->op[0] = ta == CUBLAS_OP_N ? 'N' : 'T', g->op[1] = tb == CUBLAS_OP_N ? 'N' : 'T',
    g->op[2] = 0;
    bb_algo_name(lt, &g->algo, g->impl, sizeof g->impl);
    bb_algo_name(lt, &g->first, g->first_impl, sizeof g->first_impl);
    if (G->n == 0) snprintf(G->impl, sizeof G->impl, "cuBLASLt %s", g->impl);
    G->n++;
    return 0;
}

static void bb_gemms_clear(struct bb_gemms *G) {
    for (int k = 0; k < G->n; k++) {
        struct bb_gemm *g = &G->g[k];
        if (g->desc) G->lt->desc_destroy(g->desc);
        if (g->la) G->lt->layout_destroy(g->la);
        if (g->lb) G->lt->layout_destroy(g->lb);
        if (g->lc) G->lt->layout_destroy(g->lc);
    }
    G->n = 0;
}

// GEMM k of G (all of them when k < 0), with the chosen algorithm or the heuristic's first.
static int bb_gemm_run(struct bb_gemms *G, int k, bool first, cudaStream_t s) {
    const float alpha = 1.0f;
    for (int j = k < 0 ? 0 : k; j < (k < 0 ? G->n : k + 1); j++) {
        struct bb_gemm *g = &G->g[j];
        if (G->lt->matmul(G->h, g->desc, &alpha, g->B, g->la, g->A, g->lb, &g->beta, g->C, g->lc,
                          g->C, g->lc, first ? &g->first : &g->algo, G->ws, G->ws_bytes, s))
            return -1;
    }
    return 0;
}

static int bb_gemms_run(struct bb_gemms *G, cudaStream_t s) { return bb_gemm_run(G, -1, false, s); }

// --- a row ----------------------------------------------------------------------------------------

struct bb_dev {
    ffn_ctx_t ctx;
    cudaStream_t s;
    void *flush;
    size_t flush_bytes;
    float *sink;
    double copy_gbps;
    char name[256];
};

struct bb_bufs {
    void *x, *y, *dy, *dx, *Wg, *Wu, *Wd, *bu, *bd, *gWg, *gWu, *gWd, *gbu, *gbd, *P, *H, *dH;
};

struct bb_opts {
    bool json, fwd, fwdbwd, stages, gemms, parity;
    bool dtypes[2];  // f32, bf16
    enum ffn_block_math math;
    const char *shape;
    int64_t tokens;
    int reps, device;
};

static void *bb_alloc(size_t bytes, bool *ok) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 16) != cudaSuccess) *ok = false;
    return p;
}

// The element-wise passes alone (the floor above the GEMMs): the activation from P (the row's
// dtype) to h, and for a training step its backward over P with dh.
static enum ffn_status bb_act(ffn_ctx_t ctx, const struct bb_shape *s, const struct bb_bufs *b,
                              int64_t T, enum ffn_dtype dt, bool bwd) {
    const int64_t m = s->m, pc = s->gated ? 2 * m : m;
    const struct ffn_tensor P = ffn_tensor_2d(b->P, dt, T, pc, pc),
                            H = ffn_tensor_2d(b->H, dt, T, m, m);
    const struct ffn_tensor dH = ffn_tensor_2d(b->dH, dt, T, m, m);
    enum ffn_status st;
    if (s->gated) {
        const struct ffn_tensor g = ffn_tensor_cols(&P, 0, m), u = ffn_tensor_cols(&P, m, m);
        if ((st = ffn_glu_forward(ctx, s->act, &H, &g, &u))) return st;
        if (bwd) return ffn_glu_backward(ctx, s->act, &g, &u, &g, &u, &dH);
        return FFN_STATUS_OK;
    }
    if ((st = ffn_act_forward(ctx, s->act, &H, &P))) return st;
    return bwd ? ffn_act_backward(ctx, s->act, &P, &P, &dH) : FFN_STATUS_OK;
}

#define BB_STAGES 32
#define BB_STAGE_REPS 10

// --stages: the block's own stages (ffn_cuda_block_profile: an event after each GEMM, element-wise
// pass, column sum), median over a few calls, the L2 evicted before the forward and before the
// backward. Rows "bench":"block_stage".
static void bb_stages(const struct bb_opts *o, struct bb_dev *dv, ffn_block_t blk,
                      const struct bb_shape *s, int64_t T, const char *math, bool bwd,
                      const struct ffn_tensor *ty, const struct ffn_tensor *tx,
                      const struct ffn_tensor *tdx, const struct ffn_tensor *tdy,
                      const struct ffn_block_grads *gr) {
    if (ffn_cuda_block_profile(blk, true)) return;
    static float ms[2][BB_STAGES][BB_STAGE_REPS];
    static char names[2][BB_STAGES][16], impls[2][BB_STAGES][80];
    int n[2] = {0, 0}, reps = 0;
    const enum ffn_block_policy pol = bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE;
    for (int r = 0; r < BB_STAGE_REPS; r++, reps++) {
        for (int p = 0; p < (bwd ? 2 : 1); p++) {
            const char *nm[BB_STAGES], *im[BB_STAGES];
            float t[BB_STAGES];
            ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
            const enum ffn_status st = p == 0 ? ffn_block_forward(dv->ctx, blk, ty, tx, pol)
                                              : ffn_block_backward(dv->ctx, blk, gr, tdx, tdy);
            const int k = st ? -1 : ffn_cuda_block_stages(blk, BB_STAGES, nm, im, t);
            if (k < 0 || (r > 0 && k != n[p])) goto done;
            n[p] = k;
            for (int j = 0; j < k; j++) {  // (nm, im point into the block: copied)
                ms[p][j][r] = t[j];
                snprintf(names[p][j], sizeof names[p][j], "%s", nm[j]);
                snprintf(impls[p][j], sizeof impls[p][j], "%s", im[j]);
            }
        }
    }
done:
    for (int p = 0; p < (bwd ? 2 : 1) && reps > 0; p++) {
        for (int j = 0; j < n[p]; j++) {
            double v[BB_STAGE_REPS];
            for (int r = 0; r < reps; r++) v[r] = ms[p][j][r];
            const double med = bb_median(v, reps);
            if (o->json)
                printf("{\"bench\":\"block_stage\",\"shape\":\"%s\",\"tokens\":%" PRId64
                       ",\"math\":\"%s\",\"pass\":\"%s\",\"call\":\"%s\",\"stage\":\"%s\","
                       "\"index\":%d,\"ms\":%.5f,\"impl\":\"%s\",\"reps\":%d}\n",
                       s->name, T, math, bwd ? "fwdbwd" : "fwd", p ? "backward" : "forward",
                       names[p][j], j, med, impls[p][j], reps);
            else
                printf("    stage %-8s %-9s %9.4f ms  %s\n", p ? "backward" : "forward",
                       names[p][j], med, impls[p][j]);
        }
    }
    ffn_cuda_block_profile(blk, false);
}

// --gemms: each GEMM of the row alone (the L2 evicted before each call), with the algorithm the
// block would pick (timed pick of the heuristic's candidates) and with the heuristic's first.
// Rows "bench":"block_gemm".
static int bb_per_gemm(const struct bb_opts *o, struct bb_dev *dv, struct bb_gemms *G,
                       const struct bb_shape *s, int64_t T, const char *math, bool bwd, int reps) {
    cudaEvent_t ev[2 * BB_MAX_REPS];
    for (int k = 0; k < 2 * reps; k++) cudaEventCreate(&ev[k]);
    int rc = 0;
    for (int k = 0; k < G->n && !rc; k++) {
        const struct bb_gemm *g = &G->g[k];
        double med[2];
        for (int f = 0; f < 2 && !rc; f++) {
            for (int r = 0; r < reps && !rc; r++) {
                ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
                cudaEventRecord(ev[2 * r], dv->s);
                rc = bb_gemm_run(G, k, f == 1, dv->s);
                cudaEventRecord(ev[2 * r + 1], dv->s);
            }
            if (cudaStreamSynchronize(dv->s)) rc = -1;
            double t[BB_MAX_REPS];
            for (int r = 0; r < reps && !rc; r++) {
                float ms = 0;
                cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]);
                t[r] = ms;
            }
            med[f] = rc ? 0 : bb_median(t, reps);
        }
        if (rc) break;
        if (o->json)
            printf("{\"bench\":\"block_gemm\",\"shape\":\"%s\",\"tokens\":%" PRId64
                   ",\"math\":\"%s\",\"pass\":\"%s\",\"gemm\":\"%s\",\"M\":%" PRId64
                   ",\"N\":%" PRId64 ",\"K\":%" PRId64
                   ",\"op\":\"%s\",\"beta\":%g,\"ms\":%.5f,\"first_ms\":%.5f,"
                   "\"pick\":%d,\"n_algos\":%d,\"impl\":\"%s\",\"first_impl\":\"%s\","
                   "\"tflops\":%.1f,\"reps\":%d}\n",
                   s->name, T, math, bwd ? "fwdbwd" : "fwd", g->name, g->M, g->N, g->K, g->op,
                   g->beta, med[0], med[1], g->pick, g->n_algos, g->impl, g->first_impl,
                   2.0 * (double)g->M * (double)g->N * (double)g->K / (med[0] * 1e-3) * 1e-12,
                   reps);
        else
            printf("    gemm %-8s %6" PRId64 " x %6" PRId64 " x %6" PRId64
                   " %s %9.4f ms (first "
                   "%9.4f, #%d of %d)  %s\n",
                   g->name, g->M, g->N, g->K, g->op, med[0], med[1], g->pick + 1, g->n_algos,
                   g->impl);
    }
    for (int k = 0; k < 2 * reps; k++) cudaEventDestroy(ev[k]);
    fflush(stdout);
    return rc ? 2 : 0;
}

static int bb_row(const struct bb_opts *o, struct bb_dev *dv, struct bb_gemms *G,
                  const struct bb_shape *s, int64_t T, enum ffn_dtype dt, bool bwd) {
    const int64_t d = s->d, m = s->m;
    const size_t es = ffn_dtype_size(dt), Td = (size_t)(T * d), md = (size_t)(m * d);
    bool ok = true;
    struct bb_bufs b;
    memset(&b, 0, sizeof b);
    b.x = bb_alloc(Td * es, &ok), b.y = bb_alloc(Td * es, &ok), b.dy = bb_alloc(Td * es, &ok);
    b.dx = bb_alloc(Td * es, &ok);
    // fused: Wg holds [gate | up] ([2m, d]), Wu its second half (not freed apart), gWg likewise.
    b.Wd = bb_alloc(md * es, &ok), b.gWd = bb_alloc(md * es, &ok);
    b.Wg = s->gated ? bb_alloc(md * es * (s->fused ? 2 : 1), &ok) : NULL;
    b.gWg = s->gated ? bb_alloc(md * es * (s->fused ? 2 : 1), &ok) : NULL;
    b.Wu = s->fused ? (char *)b.Wg + md * es : bb_alloc(md * es, &ok);
    b.gWu = s->fused ? (char *)b.gWg + md * es : bb_alloc(md * es, &ok);
    b.bu = bb_alloc((size_t)m * es, &ok), b.bd = bb_alloc((size_t)d * es, &ok);
    b.gbu = bb_alloc((size_t)m * es, &ok), b.gbd = bb_alloc((size_t)d * es, &ok);
    b.P = bb_alloc((size_t)(T * 2 * m) * es, &ok), b.H = bb_alloc((size_t)(T * m) * es, &ok);
    b.dH = bb_alloc((size_t)(T * m) * es, &ok);
    int rc = 0;
    ffn_block_t blk = NULL;
    cudaEvent_t ev[6 * BB_MAX_REPS];
    int n_ev = 0;
    if (!ok) {
        fprintf(stderr, "ffn bench block: out of device memory for %s at %" PRId64 " tokens\n",
                s->name, T);
        rc = 2;
        goto out;
    }
    // Activations N(0, 1); weights N(0, 1/fan-in) (the scale of nn.Linear's initialisation), so
    // the pre-activations are O(1) as in a trained model: the activations' cost depends on their
    // range (far tails take the exact path), the GEMMs' does not.
    ffn_benchcu_fill(dv->s, b.x, dt, (int64_t)Td, 0, BB_SEED + 1);
    ffn_benchcu_fill(dv->s, b.dy, dt, (int64_t)Td, 0, BB_SEED + 2);
    ffn_benchcu_fill(dv->s, b.Wu, dt, (int64_t)md, 0, BB_SEED + 3);
    ffn_benchcu_fill(dv->s, b.Wd, dt, (int64_t)md, 0, BB_SEED + 4);
    if (b.Wg) ffn_benchcu_fill(dv->s, b.Wg, dt, (int64_t)md, 0, BB_SEED + 5);
    ffn_benchcu_fill(dv->s, b.bu, dt, m, 0, BB_SEED + 6);
    ffn_benchcu_fill(dv->s, b.bd, dt, d, 0, BB_SEED + 7);
    ffn_benchcu_fill(dv->s, b.dH, dt, T * m, 0, BB_SEED + 9);
    ffn_bbcu_scale(dv->s, b.Wu, dt, (int64_t)md, (float)(1.0 / sqrt((double)d)));
    ffn_bbcu_scale(dv->s, b.Wd, dt, (int64_t)md, (float)(1.0 / sqrt((double)m)));
    if (b.Wg) ffn_bbcu_scale(dv->s, b.Wg, dt, (int64_t)md, (float)(1.0 / sqrt((double)d)));
    ffn_bbcu_scale(dv->s, b.bu, dt, m, 0.1f);
    ffn_bbcu_scale(dv->s, b.bd, dt, d, 0.1f);

    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = d, spec.d_ff = m, spec.act = s->act, spec.gated = s->gated;
    spec.bias_up = spec.bias_down = s->bias;
    if (s->fused) spec.gate_up_layout = FFN_GATE_UP_FUSED;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    w.down = ffn_weight_dense(b.Wd, dt, FFN_WEIGHT_OUT_IN);
    if (s->fused) {
        w.gate_up = ffn_weight_dense(b.Wg, dt, FFN_WEIGHT_OUT_IN);
    } else {
        w.up = ffn_weight_dense(b.Wu, dt, FFN_WEIGHT_OUT_IN);
        if (s->gated) w.gate = ffn_weight_dense(b.Wg, dt, FFN_WEIGHT_OUT_IN);
    }
    if (s->bias) {
        w.b_up = ffn_weight_dense(b.bu, dt, FFN_WEIGHT_OUT_IN);
        w.b_down = ffn_weight_dense(b.bd, dt, FFN_WEIGHT_OUT_IN);
    }
    struct ffn_block_grads gr = FFN_BLOCK_GRADS_INIT;
    gr.dtype = dt;
    gr.down = b.gWd;
    if (s->fused)
        gr.gate_up = b.gWg;
    else
        gr.up = b.gWu, gr.gate = b.gWg;
    if (s->bias) gr.b_up = b.gbu, gr.b_down = b.gbd;
    struct ffn_block_opts bo = FFN_BLOCK_OPTS_INIT;
    bo.save_dtype = dt;
    bo.math = dt == FFN_DTYPE_F32 ? o->math : FFN_BLOCK_MATH_STRICT;
    bo.max_tokens = T;
    if (ffn_block_create(dv->ctx, &spec, &w, &bo, &blk)) {
        fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(dv->ctx));
        rc = 2;
        goto out;
    }
    const struct ffn_tensor tx = ffn_tensor_2d(b.x, dt, T, d, d),
                            ty = ffn_tensor_2d(b.y, dt, T, d, d);
    const struct ffn_tensor tdy = ffn_tensor_2d(b.dy, dt, T, d, d),
                            tdx = ffn_tensor_2d(b.dx, dt, T, d, d);
    const enum ffn_block_policy pol = bwd ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE;

    // The GEMMs the block issues for this pass (P and h in dt, gradients in dt).
    const cublasComputeType_t compute =
        dt == FFN_DTYPE_BF16             ? CUBLAS_COMPUTE_32F
        : bo.math == FFN_BLOCK_MATH_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
        : bo.math == FFN_BLOCK_MATH_BF16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                         : CUBLAS_COMPUTE_32F;
    char *Pg = b.P, *Pu = (char *)b.P + (size_t)(T * m) * es;
    int e = 0;
    bb_gemms_clear(G);
    // Names as the block's stages: P0 = gate (gated) or up, P1 = up (gated).
    const char *nu = s->gated ? "P1" : "P0", *ndwu = s->gated ? "dW_P1" : "dW_P0";
    const char *ndxu = s->gated ? "dx_P1" : "dx_P0";
    if (s->fused)  // one GEMM over all 2m outputs, P [T, 2m]
        e |= bb_add(G, "P0", T, 2 * m, d, b.x, d, 1, b.Wg, 1, d, b.P, 2 * m, dt, dt, NULL, false,
                    compute);
    if (s->gated && !s->fused)
        e |= bb_add(G, "P0", T, m, d, b.x, d, 1, b.Wg, 1, d, Pg, m, dt, dt, NULL, false, compute);
    if (!s->fused)
        e |= bb_add(G, nu, T, m, d, b.x, d, 1, b.Wu, 1, d, Pu, m, dt, dt, s->bias ? b.bu : NULL,
                    false, compute);
    e |= bb_add(G, "down", T, d, m, b.H, m, 1, b.Wd, 1, m, b.y, d, dt, dt, s->bias ? b.bd : NULL,
                false, compute);
    if (bwd) {  // dW_down = dyᵀ·h; dh = dy·W_down; dW = dPᵀ·x; dx = dP·W (+ the second)
        e |= bb_add(G, "dW_down", d, m, T, b.dy, 1, d, b.H, m, 1, b.gWd, m, dt, dt, NULL, false,
                    compute);
        e |=
            bb_add(G, "dh", T, m, d, b.dy, d, 1, b.Wd, m, 1, b.dH, m, dt, dt, NULL, false, compute);
        if (s->fused) {  // dW_gate_up = dPᵀ·x, dx = dP·W_gate_up (dP [T, 2m])
            e |= bb_add(G, "dW_P0", 2 * m, d, T, b.P, 1, 2 * m, b.x, d, 1, b.gWg, d, dt, dt, NULL,
                        false, compute);
            e |= bb_add(G, "dx_P0", T, d, 2 * m, b.P, 2 * m, 1, b.Wg, d, 1, b.dx, d, dt, dt, NULL,
                        false, compute);
        } else {
            if (s->gated)
                e |= bb_add(G, "dW_P0", m, d, T, Pg, 1, m, b.x, d, 1, b.gWg, d, dt, dt, NULL, false,
                            compute);
            e |= bb_add(G, ndwu, m, d, T, Pu, 1, m, b.x, d, 1, b.gWu, d, dt, dt, NULL, false,
                        compute);
            if (s->gated)
                e |= bb_add(G, "dx_P0", T, d, m, Pg, m, 1, b.Wg, d, 1, b.dx, d, dt, dt, NULL, false,
                            compute);
            e |= bb_add(G, ndxu, T, d, m, Pu, m, 1, b.Wu, d, 1, b.dx, d, dt, dt, NULL, s->gated,
                        compute);
        }
    }
    if (e) {
        fprintf(stderr, "ffn bench block: cuBLASLt has no algorithm for a GEMM of %s %s\n", s->name,
                ffn_dtype_name(dt));
        rc = 2;
        goto out;
    }
    // Warm-up: plans, heuristics, workspaces.
    for (int k = 0; k < 2; k++) {
        if (ffn_block_forward(dv->ctx, blk, &ty, &tx, pol) ||
            (bwd && ffn_block_backward(dv->ctx, blk, &gr, &tdx, &tdy)) || bb_gemms_run(G, dv->s) ||
            bb_act(dv->ctx, s, &b, T, dt, bwd)) {
            fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(dv->ctx));
            rc = 2;
            goto out;
        }
    }
    cudaEvent_t w0, w1;
    cudaEventCreate(&w0), cudaEventCreate(&w1);
    cudaEventRecord(w0, dv->s);
    ffn_block_forward(dv->ctx, blk, &ty, &tx, pol);
    if (bwd) ffn_block_backward(dv->ctx, blk, &gr, &tdx, &tdy);
    cudaEventRecord(w1, dv->s);
    if (cudaStreamSynchronize(dv->s)) {
        fprintf(stderr, "ffn bench block: %s\n", cudaGetErrorString(cudaGetLastError()));
        rc = 2;
        goto out;
    }
    float wms = 0;
    cudaEventElapsedTime(&wms, w0, w1);
    cudaEventDestroy(w0), cudaEventDestroy(w1);
    int reps = o->reps;
    if (!reps) {
        reps = (int)(BB_ROW_BUDGET_S / (2.2e-3 * (wms > 1e-3f ? wms : 1e-3f)));
        reps = reps < BB_MIN_REPS ? BB_MIN_REPS : reps > BB_MAX_REPS ? BB_MAX_REPS : reps;
    }
    for (n_ev = 0; n_ev < 6 * reps; n_ev++) cudaEventCreate(&ev[n_ev]);
    for (int r = 0; r < reps; r++) {
        ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
        cudaEventRecord(ev[6 * r], dv->s);
        enum ffn_status st = ffn_block_forward(dv->ctx, blk, &ty, &tx, pol);
        if (!st && bwd) st = ffn_block_backward(dv->ctx, blk, &gr, &tdx, &tdy);
        cudaEventRecord(ev[6 * r + 1], dv->s);
        ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
        cudaEventRecord(ev[6 * r + 2], dv->s);
        if (!st && bb_gemms_run(G, dv->s)) st = FFN_STATUS_BACKEND;
        cudaEventRecord(ev[6 * r + 3], dv->s);
        ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
        cudaEventRecord(ev[6 * r + 4], dv->s);
        if (!st) st = bb_act(dv->ctx, s, &b, T, dt, bwd);
        cudaEventRecord(ev[6 * r + 5], dv->s);
        if (st) {
            fprintf(stderr, "ffn bench block: %s\n", ffn_ctx_last_error(dv->ctx));
            rc = 2;
            goto out;
        }
    }
    if (cudaStreamSynchronize(dv->s)) {
        fprintf(stderr, "ffn bench block: %s\n", cudaGetErrorString(cudaGetLastError()));
        rc = 2;
        goto out;
    }
    double tb[BB_MAX_REPS], tg[BB_MAX_REPS], ta[BB_MAX_REPS], th[BB_HOST_CALLS];
    for (int r = 0; r < reps; r++) {
        float a = 0, g = 0, c = 0;
        cudaEventElapsedTime(&a, ev[6 * r], ev[6 * r + 1]);
        cudaEventElapsedTime(&g, ev[6 * r + 2], ev[6 * r + 3]);
        cudaEventElapsedTime(&c, ev[6 * r + 4], ev[6 * r + 5]);
        tb[r] = 1e-3 * a, tg[r] = 1e-3 * g, ta[r] = 1e-3 * c;
    }
    // The host's own time per block call (checks, plans, launches), the GPU kept busy meanwhile.
    ffn_benchcu_flush(dv->s, dv->flush, dv->flush_bytes, dv->sink);
    for (int k = 0; k < BB_HOST_CALLS; k++) {
        const double t0 = bb_now();
        ffn_block_forward(dv->ctx, blk, &ty, &tx, pol);
        if (bwd) ffn_block_backward(dv->ctx, blk, &gr, &tdx, &tdy);
        th[k] = bb_now() - t0;
    }
    cudaStreamSynchronize(dv->s);
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    ffn_block_info(dv->ctx, blk, T, &info);
    struct ffn_block_cost cost = FFN_BLOCK_COST_INIT;
    ffn_block_cost(dv->ctx, &spec, T, dt, dt, &cost);
    const double sec = bb_median(tb, reps), gsec = bb_median(tg, reps), asec = bb_median(ta, reps);
    const double host_us = 1e6 * bb_median(th, BB_HOST_CALLS);
    const double flops = cost.flops_fwd + (bwd ? cost.flops_bwd : 0.0);
    const double wgbs = (double)info.weight_bytes / sec * 1e-9;
    const char *math = dt == FFN_DTYPE_BF16             ? "bf16"
                       : bo.math == FFN_BLOCK_MATH_TF32 ? "tf32"
                       : bo.math == FFN_BLOCK_MATH_BF16 ? "f32-as-bf16"
                                                        : "f32";
    const bool epi = strstr(info.gemm_impl, "GELU epilogue") != NULL;
    if (o->json) {
        printf("{\"shape\":\"%s\",\"tokens\":%" PRId64 ",\"d\":%" PRId64 ",\"m\":%" PRId64
               ",\"act\":\"%s\",\"gated\":%s,\"dtype\":\"%s\",\"math\":\"%s\",\"pass\":\"%s\","
               "\"schedule\":\"separate\",\"tile_rows\":%" PRId64
               ",\"threads\":0,"
               "\"seconds\":%.6g,\"gflops\":%.4g,\"gemm_seconds\":%.6g,\"gemm_gflops\":%.4g,"
               "\"ratio_to_gemm\":%.4f,\"act_seconds\":%.6g,\"floor_ratio\":%.4f,"
               "\"weight_gbs\":%.4g,\"triad_gbs\":%.4g,\"weight_to_triad\":%.4f,"
               "\"impl\":\"%s\",\"gemm_impl\":\"%s\",\"gelu_epilogue\":%s,\"isa\":\"cuda\","
               "\"cpu\":\"%s\",\"backend\":\"cuda\",\"device\":\"%s\",\"copy_gbps\":%.4g,"
               "\"host_us\":%.2f,\"reps\":%d,\"parity\":%s}\n",
               s->name, T, d, m, s->gated ? ffn_glu_name(s->act) : ffn_act_name(s->act),
               s->gated ? "true" : "false", ffn_dtype_name(dt), math, bwd ? "fwdbwd" : "fwd", T,
               sec, flops / sec * 1e-9, gsec, flops / gsec * 1e-9, sec / gsec, asec,
               (gsec + asec) / gsec, wgbs, dv->copy_gbps, wgbs / dv->copy_gbps, info.gemm_impl,
               G->impl, epi ? "true" : "false", dv->name, dv->name, dv->copy_gbps, host_us, reps,
               o->parity ? "true" : "false");
    } else {
        printf("%-11s %5" PRId64 " %-5s %-6s %10.3f %9.1f %10.3f %7.3f %7.3f %8.1f", s->name, T,
               math, bwd ? "fwdbwd" : "fwd", sec * 1e3, flops / sec * 1e-12, gsec * 1e3, sec / gsec,
               (gsec + asec) / gsec, host_us);
        if (T <= 16 && !bwd) printf("  %6.0f GB/s = %.2f copy", wgbs, wgbs / dv->copy_gbps);
        if (epi) printf("  (GELU epilogue)");
        printf("\n");
    }
    fflush(stdout);
    if (o->stages) bb_stages(o, dv, blk, s, T, math, bwd, &ty, &tx, &tdx, &tdy, &gr);
    if (o->gemms && (bwd || !o->fwdbwd))
        rc = bb_per_gemm(o, dv, G, s, T, math, bwd, reps < 10 ? 10 : reps);
    fflush(stdout);
out:
    for (int k = 0; k < n_ev; k++) cudaEventDestroy(ev[k]);
    ffn_block_destroy(blk);
    if (s->fused) b.Wu = b.gWu = NULL;  // halves of Wg and gWg
    void *all[] = {b.x,   b.y,   b.dy,  b.dx,  b.Wg,  b.Wu, b.Wd, b.bu, b.bd,
                   b.gWg, b.gWu, b.gWd, b.gbu, b.gbd, b.P,  b.H,  b.dH};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k]) cudaFree(all[k]);
    return rc;
}

// Device-to-device copy bandwidth (bytes read + written), best of 5 over 1 GiB.
static double bb_copy(cudaStream_t s) {
    const size_t n = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    double best = 0;
    if (cudaMalloc(&a, n) || cudaMalloc(&b, n)) {
        cudaFree(a);
        return 0;
    }
    cudaMemsetAsync(a, 1, n, s);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    for (int r = 0; r < 6; r++) {
        cudaEventRecord(e0, s);
        cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        const double g = 2.0 * (double)n / (1e-3 * ms) * 1e-9;
        if (r > 0 && g > best) best = g;
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaFree(a), cudaFree(b);
    return best;
}

int ffn_cmd_bench_block_cuda(int argc, char **argv) {
    struct bb_opts o = {.fwd = true, .fwdbwd = true};
    bool any_dt = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            bb_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--backend") && v) {
            i++;
        } else if (!strncmp(a, "--backend=", 10)) {
        } else if (!strcmp(a, "--json")) {
            o.json = true;
        } else if (!strcmp(a, "--stages")) {
            o.stages = true;
        } else if (!strcmp(a, "--gemms")) {
            o.gemms = true;
        } else if (!strcmp(a, "--parity")) {
            o.parity = true;
        } else if (!strcmp(a, "--shape") && v) {
            o.shape = v, i++;
        } else if (!strcmp(a, "--tokens") && v) {
            if (!ffn_arg_i64("bench block", a, v, 1, (int64_t)1 << 20, &o.tokens)) return 2;
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (!ffn_arg_int("bench block", a, v, 1, BB_MAX_REPS, &o.reps)) return 2;
            i++;
        } else if (!strcmp(a, "--device") && v) {
            if (!ffn_arg_int("bench block", a, v, 0, 1024, &o.device)) return 2;
            i++;
        } else if (!strcmp(a, "--dtype") && v) {
            i++;
            any_dt = true;
            if (!strcmp(v, "all"))
                o.dtypes[0] = o.dtypes[1] = true;
            else if (!strcmp(v, "f32"))
                o.dtypes[0] = true;
            else if (!strcmp(v, "bf16"))
                o.dtypes[1] = true;
            else {
                fprintf(stderr, "ffn bench block: --dtype '%s' is not f32, bf16 or all\n",
                        ffn_tool_esc(v));
                return 2;
            }
        } else if (!strcmp(a, "--math") && v) {
            i++;
            if (!strcmp(v, "strict"))
                o.math = FFN_BLOCK_MATH_STRICT;
            else if (!strcmp(v, "tf32"))
                o.math = FFN_BLOCK_MATH_TF32;
            else if (!strcmp(v, "bf16"))
                o.math = FFN_BLOCK_MATH_BF16;
            else {
                fprintf(stderr, "ffn bench block: --math '%s' is not strict, tf32 or bf16\n",
                        ffn_tool_esc(v));
                return 2;
            }
        } else if (!strcmp(a, "--pass") && v) {
            i++;
            o.fwd = !strcmp(v, "fwd") || !strcmp(v, "all");
            o.fwdbwd = !strcmp(v, "fwdbwd") || !strcmp(v, "all");
            if (!o.fwd && !o.fwdbwd) {
                fprintf(stderr, "ffn bench block: --pass must be fwd, fwdbwd or all\n");
                return 2;
            }
        } else {
            fprintf(stderr, "ffn bench block --backend cuda: unknown or incomplete option '%s'\n",
                    ffn_tool_esc(a));
            bb_usage(stderr);
            return 2;
        }
    }
    if (!any_dt) o.dtypes[1] = true;
    if (o.shape) {
        bool found = false;
        for (size_t k = 0; k < sizeof bb_shapes / sizeof bb_shapes[0]; k++)
            found = found || !strcmp(o.shape, bb_shapes[k].name);
        if (!found) {
            fprintf(stderr,
                    "ffn bench block: --shape '%s' is not gpt2-small, llama3-8b or phi3-mini\n",
                    ffn_tool_esc(o.shape));
            return 2;
        }
    }
    char why[512];
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why)) {
        fprintf(stderr, "ffn bench block --backend cuda: %s\n", why);
        return 2;
    }
    struct bb_dev dv;
    memset(&dv, 0, sizeof dv);
    struct bb_gemms G;
    memset(&G, 0, sizeof G);
    if (!(G.lt = ffn_lt_get(why, sizeof why))) {
        fprintf(stderr, "ffn bench block --backend cuda: %s\n", why);
        return 2;
    }
    if (cudaSetDevice(o.device) || cudaStreamCreate(&dv.s)) {
        fprintf(stderr, "ffn bench block: CUDA device %d: %s\n", o.device,
                cudaGetErrorString(cudaGetLastError()));
        return 2;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, o.device);
    snprintf(dv.name, sizeof dv.name, "%s", prop.name);
    struct ffn_ctx_opts co = FFN_CTX_OPTS_INIT;
    co.backend = FFN_BACKEND_CUDA;
    co.device = o.device;
    co.stream = dv.s;
    co.bf16_parity = o.parity;
    G.ws_bytes = (size_t)32 << 20;
    G.stream = dv.s;
    dv.flush_bytes = ((size_t)2 * (size_t)prop.l2CacheSize + 15) / 16 * 16;
    if (ffn_ctx_create(&co, &dv.ctx) || G.lt->create(&G.h) || cudaMalloc(&G.ws, G.ws_bytes) ||
        cudaMalloc(&dv.flush, dv.flush_bytes) || cudaMalloc((void **)&dv.sink, sizeof(float))) {
        fprintf(stderr, "ffn bench block: could not set up device %d\n", o.device);
        return 2;
    }
    cudaMemsetAsync(dv.flush, 1, dv.flush_bytes, dv.s);
    dv.copy_gbps = bb_copy(dv.s);
    if (o.json) {
        printf(
            "{\"bench\":\"block\",\"header\":true,\"backend\":\"cuda\",\"device\":\"%s\","
            "\"sm_count\":%d,\"l2_mib\":%d,\"copy_gbps\":%.4g,\"cublaslt\":\"%s\","
            "\"cublaslt_version\":%zu}\n",
            dv.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, dv.copy_gbps, G.lt->path,
            G.lt->version());
    } else {
        printf("# ffn bench block --backend cuda: %s (%d SMs), copy %.0f GB/s, cuBLASLt %zu (%s)\n",
               dv.name, prop.multiProcessorCount, dv.copy_gbps, G.lt->version(), G.lt->path);
        printf(
            "# ms = median GPU time (events, L2 evicted before each call); gemm = the same GEMMs "
            "alone through cuBLASLt, same run; floor = (gemm + element-wise passes) / gemm\n");
        printf("%-11s %5s %-5s %-6s %10s %9s %10s %7s %7s %8s\n", "shape", "T", "math", "pass",
               "ms", "TFLOP/s", "gemm_ms", "ratio", "floor", "host_us");
    }
    int rc = 0;
    for (size_t si = 0; si < sizeof bb_shapes / sizeof bb_shapes[0] && !rc; si++) {
        const struct bb_shape *s = &bb_shapes[si];
        if (o.shape && strcmp(o.shape, s->name)) continue;
        for (size_t ti = 0; ti < sizeof bb_tokens / sizeof bb_tokens[0] && !rc; ti++) {
            const int64_t T = o.tokens ? o.tokens : bb_tokens[ti];
            if (o.tokens && ti > 0) break;
            for (int di = 1; di >= 0 && !rc; di--) {
                if (!o.dtypes[di]) continue;
                const enum ffn_dtype dt = di ? FFN_DTYPE_BF16 : FFN_DTYPE_F32;
                if (o.fwd) rc = bb_row(&o, &dv, &G, s, T, dt, false);
                if (o.fwdbwd && !rc) rc = bb_row(&o, &dv, &G, s, T, dt, true);
            }
        }
    }
    bb_gemms_clear(&G);
    G.lt->destroy(G.h);
    cudaFree(G.ws), cudaFree(dv.flush), cudaFree(dv.sink);
    ffn_ctx_destroy(dv.ctx);
    cudaStreamDestroy(dv.s);
    return rc;
}
