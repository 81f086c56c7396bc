// cuda_overlap_block.cu — can a whole LLaMA-3-8B block (bf16, cuBLASLt) hide its SwiGLU passes
// by running them beside its GEMMs? The forward in row chunks (the combine of chunk i on a second,
// high-priority stream while the GEMMs of chunk i + 1 run; down projection per chunk or whole),
// the backward with its SwiGLU backward beside the weight-gradient GEMM dW_down, and the passes'
// grid either the whole GPU or capped at k blocks of 1024 threads, one per SM (shared memory
// reserved so no second one fits). Also the passes alone on k SMs, and row chunks small enough
// (512 rows) for a chunk's GEMM output to be read back from L2. The passes here are plain SwiGLU
// kernels that move the bytes of ffn's (not its accuracy contract: __expf), since the question is
// how the two kinds of work share the GPU. Every variant is timed in rounds, alternating the
// order, against that round's GEMMs alone; prints each round and the medians of the ratios.
// CUDA events, medians of 9 calls a variant a round; random bf16 data.
//   nvcc -O3 -gencode=arch=compute_90,code=sm_90 -Ibench -o cuda_overlap_block \
//        bench/cuda_overlap_block.cu -lcublasLt
//   ./cuda_overlap_block [T [rounds]]          (T = 8192 tokens, 7 rounds)
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "cuda_lt_gemm.h"

static cublasLtHandle_t lt;
static int n_sm;

static Gemm make(bool ta, bool tb, long n, long m, long k, long lda, long ldb, long ldc,
                 int sm_target, size_t ws) {
    return lt_gemm_make(lt, ta, tb, n, m, k, lda, ldb, ldc, sm_target, ws);
}
static void drop(Gemm &g) { lt_gemm_drop(g); }
static void run(const Gemm &g, const void *A, const void *B, void *C, void *ws, size_t wsz,
                cudaStream_t s) {
    lt_gemm_run(lt, g, A, B, C, ws, wsz, s);
}

__device__ __forceinline__ float silu(float x) { return x / (1.f + __expf(-x)); }

// h[r, j] = silu(gu[r, j]) * gu[r, m + j]; rows of gu have 2m; 8 bf16 per vector; grid-stride,
// one vector a thread at a time.
__global__ void combine_fwd(const __nv_bfloat16 *__restrict__ gu, __nv_bfloat16 *__restrict__ h,
                            long rows, long m) {
    const long mv = m / 8, n = rows * mv;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        const long r = i / mv, c = i - r * mv;
        const uint4 g = __ldcs((const uint4 *)(gu + r * 2 * m) + c),
                    u = __ldcs((const uint4 *)(gu + r * 2 * m + m) + c);
        const __nv_bfloat162 *g2 = (const __nv_bfloat162 *)&g, *u2 = (const __nv_bfloat162 *)&u;
        uint4 o;
        __nv_bfloat162 *o2 = (__nv_bfloat162 *)&o;
        for (int k = 0; k < 4; k++) {
            const float2 gf = __bfloat1622float2(g2[k]), uf = __bfloat1622float2(u2[k]);
            o2[k] = __floats2bfloat162_rn(silu(gf.x) * uf.x, silu(gf.y) * uf.y);
        }
        ((uint4 *)(h + r * m))[c] = o;
    }
}

// dg, du in place over gu from dh; grid-stride, one vector a thread at a time.
__global__ void combine_bwd(__nv_bfloat16 *__restrict__ gu, const __nv_bfloat16 *__restrict__ dh,
                            long rows, long m) {
    const long mv = m / 8, n = rows * mv;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        const long r = i / mv, c = i - r * mv;
        uint4 *gp = (uint4 *)(gu + r * 2 * m) + c, *up = (uint4 *)(gu + r * 2 * m + m) + c;
        const uint4 g = *gp, u = *up, d = ((const uint4 *)(dh + r * m))[c];
        const __nv_bfloat162 *g2 = (const __nv_bfloat162 *)&g, *u2 = (const __nv_bfloat162 *)&u,
                             *d2 = (const __nv_bfloat162 *)&d;
        uint4 og, ou;
        __nv_bfloat162 *og2 = (__nv_bfloat162 *)&og, *ou2 = (__nv_bfloat162 *)&ou;
        for (int k = 0; k < 4; k++) {
            const float2 gf = __bfloat1622float2(g2[k]), uf = __bfloat1622float2(u2[k]),
                         df = __bfloat1622float2(d2[k]);
            const float s0 = 1.f / (1.f + __expf(-gf.x)), s1 = 1.f / (1.f + __expf(-gf.y));
            const float da0 = s0 * (1.f + gf.x * (1.f - s0)), da1 = s1 * (1.f + gf.y * (1.f - s1));
            og2[k] = __floats2bfloat162_rn(df.x * uf.x * da0, df.y * uf.y * da1);
            ou2[k] = __floats2bfloat162_rn(df.x * (gf.x * s0), df.y * (gf.y * s1));
        }
        *gp = og;
        *up = ou;
    }
}

// Row-wise forms (no 64-bit division): each CTA takes RP rows at a time; a thread's loads are all
// issued before its math.
template <int RP, int U>
__global__ void __launch_bounds__(1024, 1)
    rfwd(const __nv_bfloat16 *__restrict__ gu, __nv_bfloat16 *__restrict__ h, long rows, long m) {
    const int mv = (int)(m / 8);
    for (long r0 = (long)blockIdx.x * RP; r0 < rows; r0 += (long)gridDim.x * RP) {
        uint4 g[RP][U], u[RP][U];
#pragma unroll
        for (int a = 0; a < RP; a++)
#pragma unroll
            for (int j = 0; j < U; j++) {
                int c = threadIdx.x + j * blockDim.x;
                if (r0 + a < rows && c < mv) {
                    g[a][j] = __ldcs((const uint4 *)(gu + (r0 + a) * 2 * m) + c);
                    u[a][j] = __ldcs((const uint4 *)(gu + (r0 + a) * 2 * m + m) + c);
                }
            }
#pragma unroll
        for (int a = 0; a < RP; a++)
#pragma unroll
            for (int j = 0; j < U; j++) {
                int c = threadIdx.x + j * blockDim.x;
                if (r0 + a < rows && c < mv) {
                    const __nv_bfloat162 *g2 = (const __nv_bfloat162 *)&g[a][j],
                                         *u2 = (const __nv_bfloat162 *)&u[a][j];
                    uint4 o;
                    __nv_bfloat162 *o2 = (__nv_bfloat162 *)&o;
#pragma unroll
                    for (int k = 0; k < 4; k++) {
                        float2 gf = __bfloat1622float2(g2[k]), uf = __bfloat1622float2(u2[k]);
                        o2[k] = __floats2bfloat162_rn(silu(gf.x) * uf.x, silu(gf.y) * uf.y);
                    }
                    __stcs((uint4 *)(h + (r0 + a) * m) + c, o);
                }
            }
    }
}

template <int RP, int U>
__global__ void __launch_bounds__(1024, 1)
    rbwd(__nv_bfloat16 *__restrict__ gu, const __nv_bfloat16 *__restrict__ dh, long rows, long m) {
    const int mv = (int)(m / 8);
    for (long r0 = (long)blockIdx.x * RP; r0 < rows; r0 += (long)gridDim.x * RP) {
        uint4 G[RP][U], UU[RP][U], DD[RP][U];
#pragma unroll
        for (int a = 0; a < RP; a++)
#pragma unroll
            for (int j = 0; j < U; j++) {
                int c = threadIdx.x + j * blockDim.x;
                if (r0 + a < rows && c < mv) {
                    G[a][j] = __ldcs((const uint4 *)(gu + (r0 + a) * 2 * m) + c);
                    UU[a][j] = __ldcs((const uint4 *)(gu + (r0 + a) * 2 * m + m) + c);
                    DD[a][j] = __ldcs((const uint4 *)(dh + (r0 + a) * m) + c);
                }
            }
#pragma unroll
        for (int a = 0; a < RP; a++)
#pragma unroll
            for (int j = 0; j < U; j++) {
                int c = threadIdx.x + j * blockDim.x;
                if (r0 + a < rows && c < mv) {
                    const __nv_bfloat162 *g2 = (const __nv_bfloat162 *)&G[a][j],
                                         *u2 = (const __nv_bfloat162 *)&UU[a][j],
                                         *d2 = (const __nv_bfloat162 *)&DD[a][j];
                    uint4 og, ou;
                    __nv_bfloat162 *og2 = (__nv_bfloat162 *)&og, *ou2 = (__nv_bfloat162 *)&ou;
#pragma unroll
                    for (int k = 0; k < 4; k++) {
                        float2 gf = __bfloat1622float2(g2[k]), uf = __bfloat1622float2(u2[k]),
                               df = __bfloat1622float2(d2[k]);
                        float s0 = 1.f / (1.f + __expf(-gf.x)), s1 = 1.f / (1.f + __expf(-gf.y));
                        float da0 = s0 * (1.f + gf.x * (1.f - s0)),
                              da1 = s1 * (1.f + gf.y * (1.f - s1));
                        og2[k] = __floats2bfloat162_rn(df.x * uf.x * da0, df.y * uf.y * da1);
                        ou2[k] = __floats2bfloat162_rn(df.x * gf.x * s0, df.y * gf.y * s1);
                    }
                    __stcs((uint4 *)(gu + (r0 + a) * 2 * m) + c, og);
                    __stcs((uint4 *)(gu + (r0 + a) * 2 * m + m) + c, ou);
                }
            }
    }
}

// A pass's launch: grid (0: 4 blocks an SM), threads a block, dynamic shared memory (120 KB: one
// block an SM), form: 1 the grid-stride kernels; 22, 12, 14 the row kernels rfwd / rbwd <RP, U>
// (RP rows a step, U vectors a thread a row).
struct Comb {
    int grid, threads, smem, form;
};
static Comb comb = {0, 512, 0, 1};

static void cfwd(const void *gu, void *h, long rows, long m, cudaStream_t s) {
    int grid = comb.grid ? comb.grid : n_sm * 4;
    auto G = (const __nv_bfloat16 *)gu;
    auto H = (__nv_bfloat16 *)h;
    if (comb.form == 22)
        rfwd<2, 2><<<grid, comb.threads, comb.smem, s>>>(G, H, rows, m);
    else if (comb.form == 12)
        rfwd<1, 2><<<grid, comb.threads, comb.smem, s>>>(G, H, rows, m);
    else if (comb.form == 14)
        rfwd<1, 4><<<grid, comb.threads, comb.smem, s>>>(G, H, rows, m);
    else
        combine_fwd<<<grid, comb.threads, comb.smem, s>>>(G, H, rows, m);
    CK(cudaGetLastError());
}
static void cbwd(void *gu, const void *dh, long rows, long m, cudaStream_t s) {
    int grid = comb.grid ? comb.grid : n_sm * 4;
    auto G = (__nv_bfloat16 *)gu;
    auto D = (const __nv_bfloat16 *)dh;
    if (comb.form == 22)
        rbwd<2, 2><<<grid, comb.threads, comb.smem, s>>>(G, D, rows, m);
    else if (comb.form == 12)
        rbwd<1, 2><<<grid, comb.threads, comb.smem, s>>>(G, D, rows, m);
    else if (comb.form == 14)
        rbwd<1, 4><<<grid, comb.threads, comb.smem, s>>>(G, D, rows, m);
    else
        combine_bwd<<<grid, comb.threads, comb.smem, s>>>(G, D, rows, m);
    CK(cudaGetLastError());
}

template <class F>
static double timeit(F f, cudaStream_t s, int reps = 9) {
    static cudaEvent_t a, b;
    if (!a) {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    return cuda_median_ms(f, s, a, b, reps);
}

int main(int argc, char **argv) {
    long T = argc > 1 ? atol(argv[1]) : 8192, d = 4096, m = 14336;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    CK(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, 0));
    LK(cublasLtCreate(&lt));
    size_t ws = 64 << 20;
    void *x, *wgu, *gu, *h, *wd, *y, *dy, *dh, *dwd, *dwgu, *dx, *ws0, *ws1;
    CK(cudaMalloc(&x, T * d * 2));
    CK(cudaMalloc(&wgu, 2 * m * d * 2));
    CK(cudaMalloc(&gu, T * 2 * m * 2));
    CK(cudaMalloc(&h, T * m * 2));
    CK(cudaMalloc(&wd, d * m * 2));
    CK(cudaMalloc(&y, T * d * 2));
    CK(cudaMalloc(&dy, T * d * 2));
    CK(cudaMalloc(&dh, T * m * 2));
    CK(cudaMalloc(&dwd, d * m * 2));
    CK(cudaMalloc(&dwgu, 2 * m * d * 2));
    CK(cudaMalloc(&dx, T * d * 2));
    CK(cudaMalloc(&ws0, ws));
    CK(cudaMalloc(&ws1, ws));
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)x, T * d, 1, 1.f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)wgu, 2 * m * d, 2, 0.03f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)wd, d * m, 3, 0.02f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)dy, T * d, 4, 1.f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)gu, T * 2 * m, 5, 2.f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)h, T * m, 6, 1.f);
    lt_fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)dh, T * m, 7, 1.f);
    CK(cudaDeviceSynchronize());
    for (auto f : {(const void *)combine_fwd, (const void *)combine_bwd, (const void *)rfwd<2, 2>,
                   (const void *)rfwd<1, 2>, (const void *)rfwd<1, 4>, (const void *)rbwd<2, 2>,
                   (const void *)rbwd<1, 2>, (const void *)rbwd<1, 4>})
        CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 << 10));
    cudaStream_t s0, s1;
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&s0, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithPriority(&s1, cudaStreamNonBlocking, hi));
    const int NE = 80;
    cudaEvent_t ev[NE];
    for (int i = 0; i < NE; i++) CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    printf("T=%ld d=%ld m=%ld sms=%d\n", T, d, m, n_sm);

    char *guc = (char *)gu, *hc = (char *)h, *xc = (char *)x, *yc = (char *)y;
    // Forward. mode 0: GEMMs only; 1: serial; 2: overlap (D chunked); 3: overlap, D whole.
    auto fwd = [&](int nc, int mode, int smt) {
        long R = T / nc;
        Gemm gu_g = make(true, false, 2 * m, R, d, d, d, 2 * m, smt, ws);
        Gemm d_g = make(true, false, d, R, m, m, m, d, smt, ws);
        Gemm d_all = make(true, false, d, T, m, m, m, d, smt, ws);
        const double t = timeit(
            [&] {
                if (mode < 2) {
                    for (int i = 0; i < nc; i++) {
                        run(gu_g, wgu, xc + i * R * d * 2, guc + i * R * 2 * m * 2, ws0, ws, s0);
                        if (mode == 1) cfwd(guc + i * R * 2 * m * 2, hc + i * R * m * 2, R, m, s0);
                        run(d_g, wd, hc + i * R * m * 2, yc + i * R * d * 2, ws0, ws, s0);
                    }
                    return;
                }
                CK(cudaEventRecord(ev[NE - 1], s0));
                CK(cudaStreamWaitEvent(s1, ev[NE - 1]));
                for (int i = 0; i <= nc; i++) {
                    if (i < nc) {
                        run(gu_g, wgu, xc + i * R * d * 2, guc + i * R * 2 * m * 2, ws0, ws, s0);
                        CK(cudaEventRecord(ev[2 * i], s0));
                        CK(cudaStreamWaitEvent(s1, ev[2 * i]));
                        cfwd(guc + i * R * 2 * m * 2, hc + i * R * m * 2, R, m, s1);
                        CK(cudaEventRecord(ev[2 * i + 1], s1));
                    }
                    if (mode == 2 && i > 0) {
                        CK(cudaStreamWaitEvent(s0, ev[2 * (i - 1) + 1]));
                        run(d_g, wd, hc + (i - 1) * R * m * 2, yc + (i - 1) * R * d * 2, ws0, ws,
                            s0);
                    }
                }
                if (mode == 3) {
                    CK(cudaStreamWaitEvent(s0, ev[2 * (nc - 1) + 1]));
                    run(d_all, wd, h, y, ws0, ws, s0);
                }
            },
            s0);
        drop(gu_g), drop(d_g), drop(d_all);
        return t;
    };
    // Backward. mode 0: GEMMs only; 1: serial; 2: combine overlapping dW_down.
    auto bwd = [&](int mode, int smt) {
        Gemm g0 = make(false, false, m, T, d, m, d, m, smt, ws);
        Gemm g1 = make(false, true, m, d, T, m, d, m, smt, ws);
        Gemm g2 = make(false, false, d, T, 2 * m, d, 2 * m, d, smt, ws);
        Gemm g3 = make(false, true, d, 2 * m, T, d, 2 * m, d, smt, ws);
        const double t = timeit(
            [&] {
                run(g0, wd, dy, dh, ws0, ws, s0);
                if (mode == 2) {
                    CK(cudaEventRecord(ev[0], s0));
                    CK(cudaStreamWaitEvent(s1, ev[0]));
                    cbwd(gu, dh, T, m, s1);
                    CK(cudaEventRecord(ev[1], s1));
                    run(g1, h, dy, dwd, ws1, ws, s0);
                    CK(cudaStreamWaitEvent(s0, ev[1]));
                } else {
                    if (mode == 1) cbwd(gu, dh, T, m, s0);
                    run(g1, h, dy, dwd, ws0, ws, s0);
                }
                run(g2, wgu, gu, dx, ws0, ws, s0);
                run(g3, x, gu, dwgu, ws0, ws, s0);
            },
            s0);
        drop(g0), drop(g1), drop(g2), drop(g3);
        return t;
    };
    struct V {
        const char *name;
        bool fw;
        int nc, mode, smt;
        Comb c;
    };
    const Comb full = {0, 512, 0, 1};
    auto K = [](int k, int u) { return Comb{k, u == 14 ? 512 : 1024, 120 << 10, u}; };
    std::vector<V> vs = {
        {"fwd gemms", true, 1, 0, 0, full},
        {"fwd serial", true, 1, 1, 0, full},
        {"fwd gemms nc2", true, 2, 0, 0, full},
        {"fwd gemms nc4", true, 4, 0, 0, full},
        {"fwd ovl nc2 full", true, 2, 2, 0, full},
        {"fwd ovl nc4 Dwhole full", true, 4, 3, 0, full},
        {"fwd ovl nc2 k24r22", true, 2, 2, 0, K(24, 22)},
        {"fwd ovl nc2 k32r22", true, 2, 2, 0, K(32, 22)},
        {"fwd ovl nc2 k48r22", true, 2, 2, 0, K(48, 22)},
        {"fwd ovl nc4 k32r22", true, 4, 2, 0, K(32, 22)},
        {"fwd ovl nc4 Dwhole k32r22", true, 4, 3, 0, K(32, 22)},
        {"fwd gemms nc8", true, 8, 0, 0, full},
        {"fwd serial nc8", true, 8, 1, 0, full},
        {"fwd gemms nc16", true, 16, 0, 0, full},
        {"fwd serial nc16", true, 16, 1, 0, full},
        {"fwd ovl nc16 full", true, 16, 2, 0, full},
        {"fwd ovl nc16 k32r22", true, 16, 2, 0, K(32, 22)},
        {"bwd gemms", false, 1, 0, 0, full},
        {"bwd serial", false, 1, 1, 0, full},
        {"bwd ovl full", false, 1, 2, 0, full},
        {"bwd ovl k16r22", false, 1, 2, 0, K(16, 22)},
        {"bwd ovl k24r22", false, 1, 2, 0, K(24, 22)},
        {"bwd ovl k32r22", false, 1, 2, 0, K(32, 22)},
        {"bwd ovl k48r22", false, 1, 2, 0, K(48, 22)},
        {"bwd ovl k32r12", false, 1, 2, 0, K(32, 12)},
    };
    // Combine alone, by grid.
    for (Comb c : {full, Comb{0, 1024, 0, 22}, Comb{0, 512, 0, 14}, K(16, 22), K(32, 22), K(48, 22),
                   K(64, 22), K(32, 12), K(32, 14), K(16, 12)}) {
        comb = c;
        double a = timeit([&] { cfwd(gu, h, T, m, s0); }, s0),
               b = timeit([&] { cbwd(gu, dh, T, m, s0); }, s0);
        printf(
            "pass alone, grid %d (0: the GPU), %d threads, form %d: fwd %.3f ms %.0f GB/s, bwd "
            "%.3f ms %.0f GB/s\n",
            c.grid, c.threads, c.form, a, 3.0 * T * m * 2 / a / 1e6, b, 5.0 * T * m * 2 / b / 1e6);
    }
    std::vector<std::vector<double>> t(vs.size());
    for (int r = 0; r < rounds; r++) {
        for (size_t k = 0; k < vs.size(); k++) {
            size_t j = r % 2 ? vs.size() - 1 - k : k;
            comb = vs[j].c;
            t[j].push_back(vs[j].fw ? fwd(vs[j].nc, vs[j].mode, vs[j].smt)
                                    : bwd(vs[j].mode, vs[j].smt));
        }
        printf("round %d:", r);
        for (size_t k = 0; k < vs.size(); k++) printf(" %.3f", t[k].back());
        printf("\n");
    }
    // Ratios per round to that round's GEMMs alone, median.
    for (size_t k = 0; k < vs.size(); k++) {
        size_t base = 0;
        if (!vs[k].fw)
            while (strcmp(vs[base].name, "bwd gemms")) base++;
        std::vector<double> q, a = t[k];
        for (int r = 0; r < rounds; r++) q.push_back(t[k][r] / t[base][r]);
        std::sort(q.begin(), q.end());
        std::sort(a.begin(), a.end());
        printf("%-28s median %.3f ms  ratio median %.3f  [%.3f .. %.3f]\n", vs[k].name,
               a[rounds / 2], q[rounds / 2], q[0], q[rounds - 1]);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
