// cuda_lt_gemm.h — one bf16 cuBLASLt GEMM for the standalone CUDA measurement programs
// (bench/cuda_overlap_block.cu, bench/cuda_fused_gemm.cu): made once (the heuristic's first
// algorithm), run many times; the program owns the handle and the workspace. And their random
// bf16 operands.
#ifndef FFN_BENCH_CUDA_LT_GEMM_H
#define FFN_BENCH_CUDA_LT_GEMM_H

#include <cublasLt.h>
#include <cuda_bf16.h>

#include "cuda_check.h"

// Column-major C[n × m] = op(A)[n × k] · op(B)[k × m], bf16 in and out, f32 accumulation; the
// heuristic's first algorithm, told to target sm_target SMs when sm_target > 0.
struct Gemm {
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
};

static Gemm lt_gemm_make(cublasLtHandle_t lt, bool ta, bool tb, long n, long m, long k, long lda,
                         long ldb, long ldc, int sm_target, size_t ws) {
    Gemm g{};
    LK(cublasLtMatmulDescCreate(&g.d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    LK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_TRANSA, &oa, sizeof oa));
    LK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_TRANSB, &ob, sizeof ob));
    if (sm_target)
        LK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target,
                                          sizeof sm_target));
    LK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16BF, ta ? k : n, ta ? n : k, lda));
    LK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16BF, tb ? m : k, tb ? k : m, ldb));
    LK(cublasLtMatrixLayoutCreate(&g.c, CUDA_R_16BF, n, m, ldc));
    cublasLtMatmulPreference_t p;
    LK(cublasLtMatmulPreferenceCreate(&p));
    LK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                            sizeof ws));
    cublasLtMatmulHeuristicResult_t r[1];
    int got = 0;
    LK(cublasLtMatmulAlgoGetHeuristic(lt, g.d, g.a, g.b, g.c, g.c, p, 1, r, &got));
    if (!got) {
        fprintf(stderr, "no algo\n");
        exit(1);
    }
    g.algo = r[0].algo;
    cublasLtMatmulPreferenceDestroy(p);
    return g;
}

static void lt_gemm_drop(Gemm &g) {
    cublasLtMatrixLayoutDestroy(g.a);
    cublasLtMatrixLayoutDestroy(g.b);
    cublasLtMatrixLayoutDestroy(g.c);
    cublasLtMatmulDescDestroy(g.d);
}

static void lt_gemm_run(cublasLtHandle_t lt, const Gemm &g, const void *A, const void *B, void *C,
                        void *ws, size_t wsz, cudaStream_t s) {
    float one = 1, zero = 0;
    LK(cublasLtMatmul(lt, g.d, &one, A, g.a, B, g.b, &zero, C, g.c, C, g.c, &g.algo, ws, wsz, s));
}

// p[i] uniform in [-scale, scale) from a hash of i and seed (random data: a product of zeros runs
// faster than one of real data).
__global__ void lt_fill_bf16(__nv_bfloat16 *p, long n, unsigned seed, float scale) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = __float2bfloat16(((x & 0xffffff) / 16777216.f * 2.f - 1.f) * scale);
    }
}

#endif  // FFN_BENCH_CUDA_LT_GEMM_H
