// cuda_fused_gemm.cu — ffn's fused gated GEMM (src/cuda/glu_gemm.cuh) beside cuBLASLt: can a GEMM
// of ffn's own, with the gated combine in its epilogue, take the LLaMA-3-8B gate/up projection
// (8192 × 4096 → 2 × 14336, bf16) at cuBLASLt's speed? Every form of the kernel: plain (C = x·Wᵀ
// of both weights, as cuBLASLt computes it), h = silu(g)·u alone, g, u and h, h = g·u (the
// epilogue without the activation's math), each on one CTA or in clusters of two sharing the
// weight tile by TMA multicast, with tile rows walked in groups of 16 or 32; and the plain form
// with the weight stored [K, N] (plain-bt: the backward's dh = dy·W_down, the transposed wgmma),
// and that GEMM with the SwiGLU backward in its epilogue (dglu-bt: dg, du from g, u). Each is
// checked before it is timed: plain against cuBLASLt's output, h against this file's combine of
// cuBLASLt's g and u, h of the g, u, h form against the combine of its own g and u (bit for bit),
// every output element written (outputs poisoned with NaN first; dglu-bt is checked only so: its
// values are test_cuda_block --glu-gemm's). Times: CUDA events, medians
// (the L2 not flushed: a 235 MB weight stream), against cuBLASLt on the same shape, its down
// projection, and the unfused projection + combine, same run.
//   nvcc -O3 -std=c++17 -fmad=false -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude -Ibench \
//        -o cuda_fused_gemm bench/cuda_fused_gemm.cu -lcublasLt -lcuda
//   ./cuda_fused_gemm [M [N [K [reps]]]]        (8192 14336 4096 20: h is M × N, K the model dim)
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda_check.h"
#include "cuda_lt_gemm.h"

#include "cuda/glu_gemm.cuh"

using namespace ffn_gg;
typedef __nv_bfloat16 bf16;

// ffn's combine on bf16 g, u (the unfused form, for the bitwise check and a time): h = silu(g)·u,
// 8 elements a thread a step.
__global__ void k_combine(const bf16 *__restrict__ g, const bf16 *__restrict__ u, long ldg,
                          bf16 *__restrict__ h, long ldh, long rows, long cols) {
    const long cv = cols / 8, n = rows * cv;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        const long r = i / cv, c = (i - r * cv) * 8;
        const uint4 gv = *(const uint4 *)(g + r * ldg + c), uv = *(const uint4 *)(u + r * ldg + c);
        const bf16 *gp = (const bf16 *)&gv, *up = (const bf16 *)&uv;
        uint4 o;
        bf16 *op = (bf16 *)&o;
#pragma unroll
        for (int k = 0; k < 8; k++)
            op[k] = __float2bfloat16_rn(ffn_cm_elem(nullptr, 2, FFN_ACT_SILU, false, false,
                                                    FFN_DTYPE_BF16, __bfloat162float(gp[k]),
                                                    __bfloat162float(up[k]), 0.0f)
                                            .y0);
        *(uint4 *)(h + r * ldh + c) = o;
    }
}

// --- host ----------------------------------------------------------------------------------------
static cublasLtHandle_t lt;
static void *ws;
static const size_t WS = 32u << 20;

// Row-major C[M × N] = A[M × K] · B[N × K]ᵀ through cuBLASLt (its heuristic's first choice), bf16,
// f32 accumulation; ldc the row pitch of C. Column-major: Cᵀ[N × M] = (B as K × N)ᵀ · (A as K × M).
static Gemm lt_make(long M, long N, long K, long ldc) {
    return lt_gemm_make(lt, true, false, N, M, K, K, K, ldc, 0, WS);
}
static void lt_run(const Gemm &g, const bf16 *A, const bf16 *B, bf16 *C, cudaStream_t s) {
    lt_gemm_run(lt, g, B, A, C, ws, WS, s);
}

// A bf16 matrix of `rows` rows of `cols` (pitch ld elements) in boxes of 64 columns × box_rows.
static CUtensorMap tmap(const bf16 *base, long rows, long cols, long ld, int box_rows) {
    CUtensorMap m;
    cuuint64_t dim[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t str[1] = {(cuuint64_t)ld * 2};
    cuuint32_t box[2] = {64, (cuuint32_t)box_rows}, es[2] = {1, 1};
    DK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dim, str, box,
                              es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
}

static int n_sm;

struct Ours {
    CUtensorMap a, b0, b1, c, g, u;
    Params p;
    int mode, cl, grid;
};

// A launch of `grid` CTAs of the kernel in clusters of cl (at[0] holds the attribute).
static cudaLaunchConfig_t launch_cfg(int grid, int cl, cudaStream_t s, cudaLaunchAttribute *at) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(384);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = s;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cl;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cfg;
}

// A launch of form MODE in clusters of CL (BT: the weight stored [K, N], the transposed wgmma).
template <int MODE, int CL, int BT = 0>
static void launch_t(const Ours &o, cudaStream_t s) {
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(k_gemm<MODE, CL, BT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)SMEM));
        set = true;
    }
    cudaLaunchAttribute at[1];
    const cudaLaunchConfig_t cfg = launch_cfg(o.grid, CL, s, at);
    CK(cudaLaunchKernelEx(&cfg, k_gemm<MODE, CL, BT>, o.a, o.b0, o.b1, o.c, o.g, o.u, o.p));
    CK(cudaGetLastError());
}

static void launch(const Ours &o, cudaStream_t s) {
    switch (o.mode * 2 + (o.cl - 1)) {
    case 0: launch_t<0, 1>(o, s); break;
    case 1: launch_t<0, 2>(o, s); break;
    case 2: launch_t<1, 1>(o, s); break;
    case 3: launch_t<1, 2>(o, s); break;
    case 4: launch_t<2, 1>(o, s); break;
    case 5: launch_t<2, 2>(o, s); break;
    case 6: launch_t<3, 1>(o, s); break;
    case 7: launch_t<3, 2>(o, s); break;
    }
}

template <int MODE, int CL>
static int max_clusters() {
    CK(cudaFuncSetAttribute(k_gemm<MODE, CL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)SMEM));
    cudaLaunchAttribute at[1];
    const cudaLaunchConfig_t cfg = launch_cfg(n_sm, CL, NULL, at);
    int n = 0;
    CK(cudaOccupancyMaxActiveClusters(&n, k_gemm<MODE, CL>, &cfg));
    return n;
}

// ‖a - b‖ / ‖b‖ over n bf16 values with row pitches, and the count of NaNs in a (unwritten).
static double relerr(const bf16 *a, long lda, const bf16 *b, long ldb, long rows, long cols,
                     long *nan, long *differ) {
    std::vector<bf16> ha(rows * cols), hb(rows * cols);
    CK(cudaMemcpy2D(ha.data(), cols * 2, a, lda * 2, cols * 2, rows, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy2D(hb.data(), cols * 2, b, ldb * 2, cols * 2, rows, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    *nan = 0;
    *differ = 0;
    for (long i = 0; i < rows * cols; i++) {
        const double x = __bfloat162float(ha[i]), y = __bfloat162float(hb[i]);
        if (x != x) {
            (*nan)++;
            continue;
        }
        if (memcmp(&ha[i], &hb[i], 2)) (*differ)++;
        num += (x - y) * (x - y);
        den += y * y;
    }
    return sqrt(num / den);
}

int main(int argc, char **argv) {
    const long M = argc > 1 ? atol(argv[1]) : 8192, N = argc > 2 ? atol(argv[2]) : 14336,
               K = argc > 3 ? atol(argv[3]) : 4096;
    const int reps = argc > 4 ? atoi(argv[4]) : 20;
    if (M % 256 || N % 256 || K % BK) {
        fprintf(stderr, "M, N must be multiples of 256 and K of %d\n", BK);
        return 2;
    }
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    n_sm = pr.multiProcessorCount;
    LK(cublasLtCreate(&lt));
    CK(cudaMalloc(&ws, WS));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    bf16 *x, *w, *gu, *h, *h2, *g, *u, *c2, *wd, *y, *y2;
    CK(cudaMalloc(&x, M * K * 2));
    CK(cudaMalloc(&w, 2 * N * K * 2));  // gate rows, then up rows ([2N, K], nn.Linear)
    CK(cudaMalloc(&gu, M * 2 * N * 2));
    CK(cudaMalloc(&c2, M * 2 * N * 2));
    CK(cudaMalloc(&h, M * N * 2));
    CK(cudaMalloc(&h2, M * N * 2));
    CK(cudaMalloc(&g, M * N * 2));
    CK(cudaMalloc(&u, M * N * 2));
    CK(cudaMalloc(&wd, K * N * 2));  // W_down [K, N]: the down projection y = h · W_downᵀ
    CK(cudaMalloc(&y, M * K * 2));
    CK(cudaMalloc(&y2, M * K * 2));
    lt_fill_bf16<<<1024, 256, 0, s>>>(x, M * K, 1, 1.0f);
    lt_fill_bf16<<<1024, 256, 0, s>>>(w, 2 * N * K, 2, 2.0f / sqrtf((float)K));
    lt_fill_bf16<<<1024, 256, 0, s>>>(wd, K * N, 3, 2.0f / sqrtf((float)N));
    CK(cudaGetLastError());

    printf("device %s, %d SMs; h = silu(x·W_gateᵀ)·(x·W_upᵀ), M %ld, N %ld, K %ld, bf16\n", pr.name,
           n_sm, M, N, K);
    const int mc1 = max_clusters<0, 1>(), mc2 = max_clusters<0, 2>();
    printf("active clusters: size 1 %d, size 2 %d\n", mc1, mc2);

    Gemm lgu = lt_make(M, 2 * N, K, 2 * N), ldn = lt_make(M, K, N, K);
    auto time = [&](auto f) { return cuda_median_ms(f, s, e0, e1, reps); };
    const double fl_gu = 2.0 * M * 2 * N * K, fl_dn = 2.0 * M * N * K;

    // cuBLASLt and the unfused combine.
    const double t_lt = time([&] { lt_run(lgu, x, w, gu, s); });
    const double t_comb =
        time([&] { k_combine<<<n_sm * 8, 256, 0, s>>>(gu, gu + N, 2 * N, h2, N, M, N); });
    const double t_ltd = time([&] { lt_run(ldn, h2, wd, y, s); });
    CK(cudaMemcpyAsync(c2, gu, M * 2 * N * 2, cudaMemcpyDeviceToDevice, s));
    const double t_copy =
        time([&] { CK(cudaMemcpyAsync(c2, gu, M * 2 * N * 2, cudaMemcpyDeviceToDevice, s)); });
    const double copy_gbps = 2.0 * M * 2 * N * 2 / t_copy / 1e6;
    const double comb_floor = 3.0 * M * N * 2 / copy_gbps / 1e6;
    printf("cuBLASLt gate/up [%ld x %ld x %ld]  %.3f ms  %.0f TFLOP/s\n", M, 2 * N, K, t_lt,
           fl_gu / t_lt / 1e9);
    printf("cuBLASLt down    [%ld x %ld x %ld]  %.3f ms  %.0f TFLOP/s\n", M, K, N, t_ltd,
           fl_dn / t_ltd / 1e9);
    printf(
        "combine (this file's kernel) %.3f ms; copy %.0f GB/s: combine at the copy rate %.3f ms\n",
        t_comb, copy_gbps, comb_floor);

    int bad = 0;
    printf("%-28s %9s %8s %9s %10s %s\n", "ours", "ms", "TFLOP/s", "x cuBLASLt", "rel.err",
           "check");
    for (int cl = 1; cl <= 2; cl++)
        for (int group : {16, 32}) {
            for (int mode = 0; mode < 4; mode++) {
                Ours o;
                o.mode = mode;
                o.cl = cl;
                o.grid = cl == 1 ? n_sm : 2 * mc2;
                o.a = tmap(x, M, K, K, 128);
                o.b0 = tmap(w, mode == MODE_PLAIN ? 2 * N : N, K, K, 128);
                o.b1 = mode == MODE_PLAIN ? o.b0 : tmap(w + N * K, N, K, K, 128);
                o.c = mode == MODE_PLAIN ? tmap(c2, M, 2 * N, 2 * N, 64) : tmap(h, M, N, N, 64);
                o.g = tmap(g, M, N, N, 64);
                o.u = tmap(u, M, N, N, 64);
                Params &p = o.p;
                p.nk = (int)(K / BK);
                p.nk0 = p.nk;
                p.act = FFN_ACT_SILU;
                p.accurate = p.parity = 0;
                p.direct = 0;  // TMA stores (the tensors here are aligned)
                p.tiles_m = (int)(M / BM);
                p.tiles_n = (int)(mode == MODE_PLAIN ? 2 * N / BN : N / (BN / 2));
                p.group = group;
                p.b1_off = mode == MODE_PLAIN ? 128 : 0;
                // Poison the outputs (bf16 0xFFFF is a NaN) and check every element was written.
                if (mode == MODE_PLAIN)
                    CK(cudaMemsetAsync(c2, 0xFF, M * 2 * N * 2, s));
                else
                    CK(cudaMemsetAsync(h, 0xFF, M * N * 2, s));
                CK(cudaMemsetAsync(g, 0xFF, M * N * 2, s));
                CK(cudaMemsetAsync(u, 0xFF, M * N * 2, s));
                launch(o, s);
                CK(cudaStreamSynchronize(s));
                long nan = 0, differ = 0, nan2 = 0, d2 = 0;
                char chk[160];
                double err;
                if (mode == MODE_PLAIN) {
                    err = relerr(c2, 2 * N, gu, 2 * N, M, 2 * N, &nan, &differ);
                    snprintf(chk, sizeof chk, "vs cuBLASLt: %ld NaN, %ld differ", nan, differ);
                    bad |= nan != 0 || err > 1e-2;
                } else if (mode == MODE_HMUL) {
                    err = relerr(h, N, h2, N, M, N, &nan, &differ);
                    snprintf(chk, sizeof chk, "h = g*u (time only): %ld NaN", nan);
                    bad |= nan != 0;
                } else if (mode == MODE_H) {
                    err = relerr(h, N, h2, N, M, N, &nan, &differ);
                    snprintf(chk, sizeof chk, "h vs cuBLASLt + combine: %ld NaN, %ld differ", nan,
                             differ);
                    bad |= nan != 0 || err > 1e-2;
                } else {
                    // h against ffn's combine of this kernel's own g, u: bit for bit.
                    k_combine<<<n_sm * 8, 256, 0, s>>>(g, u, N, c2, N, M, N);
                    CK(cudaStreamSynchronize(s));
                    err = relerr(h, N, c2, N, M, N, &nan, &differ);
                    const double eg = relerr(g, N, gu, 2 * N, M, N, &nan2, &d2);
                    snprintf(chk, sizeof chk,
                             "h vs combine(own g,u): %ld NaN, %ld differ; g vs cuBLASLt %.1e, %ld "
                             "NaN",
                             nan, differ, eg, nan2);
                    bad |= nan != 0 || differ != 0 || nan2 != 0 || eg > 1e-2;
                }
                const double t = time([&] { launch(o, s); });
                char name[64];
                snprintf(name, sizeof name, "%s cl%d g%d",
                         mode == 0   ? "plain"
                         : mode == 1 ? "swiglu h"
                         : mode == 2 ? "swiglu g,u,h"
                                     : "g*u h",
                         cl, group);
                printf("%-28s %9.3f %8.0f %9.3f %10.1e %s\n", name, t, fl_gu / t / 1e9, t_lt / t,
                       err, chk);
                fflush(stdout);
            }
        }
    printf("unfused gate/up + combine: %.3f ms (x cuBLASLt %.3f; at the copy rate %.3f ms)\n",
           t_lt + t_comb, t_lt / (t_lt + t_comb), t_lt + comb_floor);
    // The backward's dh = dy·W_down shape: B = W_down stored [K, N] (N contiguous), the transposed
    // wgmma.
    {
        Gemm lbt = lt_gemm_make(lt, false, false, N, M, K, N, K, N, 0, WS);
        const double t_ltb = time([&] { lt_gemm_run(lt, lbt, wd, x, c2, ws, WS, s); });
        printf("cuBLASLt [%ld x %ld x %ld], B [K, N]  %.3f ms  %.0f TFLOP/s\n", M, N, K, t_ltb,
               fl_dn / t_ltb / 1e9);
        Ours o;
        o.mode = MODE_PLAIN;
        o.cl = 1;
        o.grid = n_sm;
        o.a = tmap(x, M, K, K, 128);
        o.b0 = o.b1 = tmap(wd, K, N, N, 64);
        o.c = o.g = o.u = tmap(h, M, N, N, 64);
        memset(&o.p, 0, sizeof o.p);
        o.p.tiles_m = (int)(M / BM);
        o.p.tiles_n = (int)(N / BN);
        o.p.group = 16;
        o.p.nk = (int)(K / BK);
        o.p.nk0 = o.p.nk;
        CK(cudaMemsetAsync(h, 0xFF, M * N * 2, s));
        launch_t<MODE_PLAIN, 1, 1>(o, s);
        CK(cudaStreamSynchronize(s));
        long nan = 0, differ = 0;
        const double err = relerr(h, N, c2, N, M, N, &nan, &differ);
        bad |= nan != 0 || err > 1e-2;
        const double t = time([&] { launch_t<MODE_PLAIN, 1, 1>(o, s); });
        printf("%-28s %9.3f %8.0f %9.3f %10.1e vs cuBLASLt: %ld NaN, %ld differ\n", "plain-bt", t,
               fl_dn / t / 1e9, t_ltb / t, err, nan, differ);
        // The same GEMM with the SwiGLU backward in its epilogue: dg, du from random g, u (out of
        // place here, so that every repetition reads the same inputs), against cuBLASLt's
        // dh and the backward pass at the copy rate (g, u, dh read, dg, du written).
        Ours f = o;
        f.mode = MODE_DGLU;
        f.p.act = FFN_ACT_SILU;
        f.p.T = (int)M;
        f.p.m = (int)N;
        f.p.g = (uint16_t *)g, f.p.u = (uint16_t *)u, f.p.ldg = f.p.ldu = N;
        f.p.dg = (uint16_t *)c2, f.p.du = (uint16_t *)(c2 + M * N), f.p.lddg = f.p.lddu = N;
        lt_fill_bf16<<<1024, 256, 0, s>>>(g, M * N, 7, 2.0f);  // (the forms above poison them)
        lt_fill_bf16<<<1024, 256, 0, s>>>(u, M * N, 8, 1.0f);
        CK(cudaMemsetAsync(c2, 0xFF, M * 2 * N * 2, s));
        launch_t<MODE_DGLU, 1, 1>(f, s);
        CK(cudaStreamSynchronize(s));
        long nan2 = 0, d2 = 0;
        relerr(c2, N, c2, N, 2 * M, N, &nan2, &d2);
        bad |= nan2 != 0;
        const double tf = time([&] { launch_t<MODE_DGLU, 1, 1>(f, s); });
        const double pass = 5.0 * M * N * 2 / copy_gbps / 1e6;
        printf(
            "%-28s %9.3f %8.0f %9.3f %10s dg, du: %ld NaN; x (cuBLASLt dh + pass at the copy "
            "rate, %.3f ms) %.3f\n",
            "dglu-bt (dh + swiglu bwd)", tf, fl_dn / tf / 1e9, t_ltb / tf, "", nan2, t_ltb + pass,
            (t_ltb + pass) / tf);
        lt_gemm_drop(lbt);
    }
    printf("%s\n", bad ? "FAILED" : "all checks passed");
    return bad;
}
