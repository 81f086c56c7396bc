// cuda_overlap.cu — can a block hide its element-wise pass behind a GEMM by running the two on
// two streams? Measures, at a LLaMA-like backward's shapes (T tokens, d, m; bf16), a weight-
// gradient GEMM (dW_down = dyᵀ·h: [d × m], K = T, f32 out, cuBLASLt's heuristic) and ffn's SwiGLU
// backward over [T × m] (libffn, CUDA context), alone, one after the other on one stream, and at
// once on two streams: the element-wise pass with its grid capped (ffn's looping form,
// $FFN_CUDA_FLAT_BLOCKS) and the GEMM told to leave SMs free (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET).
// CUDA events, medians of reps.
//   nvcc -O3 -arch=sm_90 -Iinclude -o cuda_overlap bench/cuda_overlap.cu -Lbuild -lffn -lcublasLt
//   ./cuda_overlap [T d m reps]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "ffn.h"

static int64_t T = 8192, D = 4096, M = 14336;
static int reps = 10, sms;
static cublasLtHandle_t lt;
static void *ws;
static const size_t ws_cap = 64u << 20;
static __nv_bfloat16 *dy, *h, *gate, *up, *dh, *dgate, *dup;
static float *dw;

struct gemm {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    int sm_target;
};

// dW[d × m] (row-major) = dyᵀ·h: column-major C[m × d] = h'[m × T] · (dy'[d × T])ᵀ.
static gemm gemm_make(int sm_target) {
    gemm g;
    g.sm_target = sm_target;
    LK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t tn = CUBLAS_OP_N, tt = CUBLAS_OP_T;
    LK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &tn, sizeof tn));
    LK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tt, sizeof tt));
    if (sm_target)
        LK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target,
                                          sizeof sm_target));
    LK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16BF, M, T, M));
    LK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16BF, D, T, D));
    LK(cublasLtMatrixLayoutCreate(&g.c, CUDA_R_32F, M, D, M));
    cublasLtMatmulPreference_t pref;
    LK(cublasLtMatmulPreferenceCreate(&pref));
    LK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_cap,
                                            sizeof ws_cap));
    cublasLtMatmulHeuristicResult_t r;
    int n = 0;
    LK(cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.a, g.b, g.c, g.c, pref, 1, &r, &n));
    if (n < 1) {
        fprintf(stderr, "no algorithm\n");
        exit(1);
    }
    g.algo = r.algo;
    cublasLtMatmulPreferenceDestroy(pref);
    return g;
}

static void gemm_run(const gemm &g, cudaStream_t s) {
    const float one = 1.0f, zero = 0.0f;
    LK(cublasLtMatmul(lt, g.op, &one, h, g.a, dy, g.b, &zero, dw, g.c, dw, g.c, &g.algo, ws, ws_cap,
                      s));
}

static ffn_ctx_t ctx_make(cudaStream_t s, const char *form, const char *blocks) {
    if (form)
        setenv("FFN_CUDA_FLAT_FORM", form, 1);
    else
        unsetenv("FFN_CUDA_FLAT_FORM");
    if (blocks)
        setenv("FFN_CUDA_FLAT_BLOCKS", blocks, 1);
    else
        unsetenv("FFN_CUDA_FLAT_BLOCKS");
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA;
    o.stream = s;
    ffn_ctx_t c = NULL;
    if (ffn_ctx_create(&o, &c) != FFN_STATUS_OK) {
        fprintf(stderr, "ffn_ctx_create: %s\n", c ? ffn_ctx_last_error(c) : "?");
        exit(1);
    }
    return c;
}

static void ew_run(ffn_ctx_t c) {
    struct ffn_tensor tg = ffn_tensor_2d(gate, FFN_DTYPE_BF16, T, M, M);
    struct ffn_tensor tu = ffn_tensor_2d(up, FFN_DTYPE_BF16, T, M, M);
    struct ffn_tensor td = ffn_tensor_2d(dh, FFN_DTYPE_BF16, T, M, M);
    struct ffn_tensor og = ffn_tensor_2d(dgate, FFN_DTYPE_BF16, T, M, M);
    struct ffn_tensor ou = ffn_tensor_2d(dup, FFN_DTYPE_BF16, T, M, M);
    if (ffn_glu_backward(c, FFN_ACT_SILU, &og, &ou, &tg, &tu, &td) != FFN_STATUS_OK) {
        fprintf(stderr, "ffn_glu_backward: %s\n", ffn_ctx_last_error(c));
        exit(1);
    }
}

__global__ void k_fill(__nv_bfloat16 *p, int64_t n, uint32_t seed) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u + seed;
        x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
        p[i] = __float2bfloat16(((float)(x & 0xffff) - 32768.0f) / 16384.0f);
    }
}

static cudaStream_t sa, sb;
static cudaEvent_t e0, e1, fork_ev, join_ev;

// Median ms of `reps` runs of f (which queues on sa and may fork to sb).
template <class F>
static double timed(F f) {
    return cuda_median_ms(f, sa, e0, e1, reps);
}

int main(int argc, char **argv) {
    if (argc > 3) T = atoll(argv[1]), D = atoll(argv[2]), M = atoll(argv[3]);
    if (argc > 4) reps = atoi(argv[4]);
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    sms = p.multiProcessorCount;
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&sb, cudaStreamNonBlocking, hi));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
    LK(cublasLtCreate(&lt));
    CK(cudaMalloc(&ws, ws_cap));
    const size_t tm = (size_t)(T * M), td = (size_t)(T * D);
    __nv_bfloat16 **bufs[] = {&h, &gate, &up, &dh, &dgate, &dup};
    uint32_t seed = 1;
    for (auto b : bufs) {
        CK(cudaMalloc(b, tm * 2));
        k_fill<<<4 * sms, 256, 0, sa>>>(*b, (int64_t)tm, seed++);
    }
    CK(cudaMalloc(&dy, td * 2));
    k_fill<<<4 * sms, 256, 0, sa>>>(dy, (int64_t)td, seed++);
    CK(cudaMalloc(&dw, (size_t)(D * M) * 4));
    CK(cudaStreamSynchronize(sa));
    printf("device: %s, %d SMs; T %lld d %lld m %lld bf16; reps %d\n", p.name, sms, (long long)T,
           (long long)D, (long long)M, reps);

    const double ew_bytes = 5.0 * (double)tm * 2;
    ffn_ctx_t cfull = ctx_make(sb, NULL, NULL);
    const int caps[] = {4, 8, 16, 33, 66};
    ffn_ctx_t ccap[5];
    char buf[32];
    for (int i = 0; i < 5; i++) {
        snprintf(buf, sizeof buf, "%d", caps[i]);
        ccap[i] = ctx_make(sb, "2,1", buf);
    }
    gemm g0 = gemm_make(0);
    const double t_g = timed([&] { gemm_run(g0, sa); });
    auto ew_on_b = [&](ffn_ctx_t c) {
        CK(cudaEventRecord(fork_ev, sa));
        CK(cudaStreamWaitEvent(sb, fork_ev, 0));
        ew_run(c);
        CK(cudaEventRecord(join_ev, sb));
        CK(cudaStreamWaitEvent(sa, join_ev, 0));
    };
    const double t_e = timed([&] { ew_on_b(cfull); });
    printf("GEMM dW alone: %.3f ms (%.0f TFLOP/s)   SwiGLU bwd alone: %.3f ms (%.0f GB/s)\n", t_g,
           2.0 * T * D * M / t_g * 1e-9, t_e, ew_bytes / t_e * 1e-6);
    printf("sequential (one stream): %.3f ms = sum %.3f\n", timed([&] {
               gemm_run(g0, sa);
               ew_on_b(cfull);
           }),
           t_g + t_e);
    printf("%-28s %8s %8s %8s %8s\n", "ew grid / GEMM SM target", "ew ms", "gemm ms", "both ms",
           "÷ gemm");
    for (int i = -1; i < 5; i++) {
        ffn_ctx_t c = i < 0 ? cfull : ccap[i];
        const int blocks = i < 0 ? 0 : caps[i];
        const double te = timed([&] { ew_on_b(c); });
        const int targets[] = {0, sms - 4, sms - 8, sms - 16};
        for (int tgt : targets) {
            if (i < 0 && tgt) continue;
            gemm g = tgt ? gemm_make(tgt) : g0;
            const double tg = timed([&] { gemm_run(g, sa); });
            // Element-wise first (its blocks take their SMs), then the GEMM on the other stream.
            const double tb = timed([&] {
                CK(cudaEventRecord(fork_ev, sa));
                CK(cudaStreamWaitEvent(sb, fork_ev, 0));
                ew_run(c);
                CK(cudaEventRecord(join_ev, sb));
                gemm_run(g, sa);
                CK(cudaStreamWaitEvent(sa, join_ev, 0));
            });
            snprintf(buf, sizeof buf, "%s%d / %d", i < 0 ? "full " : "", blocks, tgt);
            printf("%-28s %8.3f %8.3f %8.3f %8.3f\n", buf, te, tg, tb, tb / t_g);
        }
    }
    return 0;
}
