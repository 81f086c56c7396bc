// block_kernels.cu — the small kernels of the CUDA FFN block (cuda_block.c) around its cuBLASLt
// GEMMs: dtype conversion with an optional bias and accumulation (a GEMM output staged in f32,
// an activation converted for a GEMM, a strided bias gathered), column sums for bias gradients
// (deterministic: per-chunk partial sums in double, then one pass over the chunks in order), and
// a plain tiled GEMM used only where cuBLASLt offers no algorithm for a shape or layout (tiny or
// oddly strided operands). The activations and gated combines are the element-wise kernels of
// ew_kernel.cuh, called through the backend. Every kernel takes 64-bit sizes and strides.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda/cuda_block.h"

static __device__ __forceinline__ float ffn__ld(const void *p, int64_t i, int dt) {
    if (dt == FFN_DTYPE_F32) return ((const float *)p)[i];
    const unsigned short h = ((const unsigned short *)p)[i];
    if (dt == FFN_DTYPE_BF16) return __uint_as_float((uint32_t)h << 16);
    return __half2float(__ushort_as_half(h));
}

static __device__ __forceinline__ void ffn__st(void *p, int64_t i, int dt, float v) {
    if (dt == FFN_DTYPE_F32)
        ((float *)p)[i] = v;
    else if (dt == FFN_DTYPE_BF16)
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    else
        ((__half *)p)[i] = __float2half_rn(v);
}

// --- conversion, bias, accumulation -------------------------------------------------------------

// out[r, c] = in[r, c] + b[c·bs] (+ out[r, c] when acc), rounded once to out's dtype.
__global__ void ffn_cu_convert(struct ffn_cu_cvt a) {
    for (int64_t r = blockIdx.y; r < a.rows; r += gridDim.y)
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < a.cols;
             c += (int64_t)gridDim.x * blockDim.x) {
            float v = ffn__ld(a.in, r * a.ldi + c, a.in_dt);
            if (a.bias) v += ffn__ld(a.bias, c * a.bs, a.bias_dt);
            if (a.acc) v = ffn__ld(a.out, r * a.ldo + c, a.out_dt) + v;
            ffn__st(a.out, r * a.ldo + c, a.out_dt, v);
        }
}

// --- column sums --------------------------------------------------------------------------------

// part[chunk, j] = Σ A[r, j] over the chunk's rows, in double (threads along j: coalesced rows).
__global__ void ffn_cu_colsum_part(const void *A, int dt, int64_t lda, int64_t rows, int64_t n,
                                   int64_t rows_per_chunk, double *part) {
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    double s = 0.0;
    for (int64_t r = r0; r < r1; r++) s += (double)ffn__ld(A, r * lda + j, dt);
    part[(int64_t)blockIdx.y * n + j] = s;
}

// s[0..V) += the V values of one 16-byte word (V = 8 for 16-bit dtypes, 4 for f32).
template <int DT>
static __device__ __forceinline__ void ffn__colsum_add(double *s, const uint4 q) {
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (DT == FFN_DTYPE_F32) {
            s[k] += (double)__uint_as_float(w[k]);
        } else if (DT == FFN_DTYPE_BF16) {
            s[2 * k] += (double)__uint_as_float(w[k] << 16);
            s[2 * k + 1] += (double)__uint_as_float(w[k] & 0xffff0000u);
        } else {
            s[2 * k] += (double)__half2float(__ushort_as_half((unsigned short)(w[k] & 0xffffu)));
            s[2 * k + 1] += (double)__half2float(__ushort_as_half((unsigned short)(w[k] >> 16)));
        }
    }
}

// The same with V consecutive columns per thread and one 16-byte load per row (V = 8 for 16-bit
// dtypes, 4 for f32): rows 16-byte aligned, n a multiple of V. Thread t of the chunk's row takes
// columns [V·t, V·t + V). Four rows' loads are issued before their sums (in row order), so a
// thread has four loads in flight rather than one.
template <int DT>
__global__ void ffn_cu_colsum_part_vec(const void *A, int64_t lda, int64_t rows, int64_t n,
                                       int64_t rows_per_chunk, double *part) {
    constexpr int V = DT == FFN_DTYPE_F32 ? 4 : 8;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t * V >= n) return;
    const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    const int es = DT == FFN_DTYPE_F32 ? 4 : 2;
    const char *a = (const char *)A + t * V * es;
    double s[V];
#pragma unroll
    for (int k = 0; k < V; k++) s[k] = 0.0;
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        uint4 q[4];
#pragma unroll
        for (int i = 0; i < 4; i++) q[i] = *(const uint4 *)(a + (r + i) * lda * es);
#pragma unroll
        for (int i = 0; i < 4; i++) ffn__colsum_add<DT>(s, q[i]);
    }
    for (; r < r1; r++) ffn__colsum_add<DT>(s, *(const uint4 *)(a + r * lda * es));
#pragma unroll
    for (int k = 0; k < V; k++) part[(int64_t)blockIdx.y * n + t * V + k] = s[k];
}

// g[j·gs] = Σ_chunk part[chunk, j] (+ g[j·gs] when acc), rounded once to g's dtype. A block of
// 32 × FFN_CS_LANES threads takes 32 columns: lane y sums chunks y, y + L, ... in order (four
// loads in flight), then the L lane sums are added in lane order (the same order every run), so
// no thread walks many chunks alone.
#define FFN_CS_LANES 32
__global__ void ffn_cu_colsum_done(const double *part, int64_t chunks, int64_t n, void *g, int gdt,
                                   int64_t gs, int acc) {
    constexpr int L = FFN_CS_LANES;
    __shared__ double sh[L][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t j = (int64_t)blockIdx.x * 32 + tx;
    double s = 0.0;
    if (j < n) {
        int64_t c = ty;
        for (; c + 3 * L < chunks; c += 4 * L) {
            const double a0 = part[c * n + j], a1 = part[(c + L) * n + j];
            const double a2 = part[(c + 2 * L) * n + j], a3 = part[(c + 3 * L) * n + j];
            s += a0;
            s += a1;
            s += a2;
            s += a3;
        }
        for (; c < chunks; c += L) s += part[c * n + j];
    }
    sh[ty][tx] = s;
    __syncthreads();
    if (ty != 0 || j >= n) return;
    double t = 0.0;
    for (int k = 0; k < L; k++) t += sh[k][tx];
    if (acc) t += (double)ffn__ld(g, j * gs, gdt);
    ffn__st(g, j * gs, gdt, (float)t);
}

// --- the fallback GEMM --------------------------------------------------------------------------
// C[i, j] = Σ_k A[i, k]·B[k, j] (+ bias[j·bs]) (+ C[i, j] when acc), f32 products and sums (fma),
// one rounding to C's dtype. 32 × 32 tiles of C per block, K in steps of 32 through shared memory.
#define FFN_NV_TILE 32

__global__ void __launch_bounds__(FFN_NV_TILE * 8) ffn_cu_gemm_naive(struct ffn_cu_gemm a) {
    __shared__ float As[FFN_NV_TILE][FFN_NV_TILE + 1], Bs[FFN_NV_TILE][FFN_NV_TILE + 1];
    const int tx = threadIdx.x % FFN_NV_TILE, ty = threadIdx.x / FFN_NV_TILE;  // ty < 8
    const int64_t tn = (a.N + FFN_NV_TILE - 1) / FFN_NV_TILE;
    const int64_t tiles = tn * ((a.M + FFN_NV_TILE - 1) / FFN_NV_TILE);
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t i0 = t / tn * FFN_NV_TILE, j0 = t % tn * FFN_NV_TILE;
        float acc[FFN_NV_TILE / 8];
#pragma unroll
        for (int q = 0; q < FFN_NV_TILE / 8; q++) acc[q] = 0.0f;
        for (int64_t k0 = 0; k0 < a.K; k0 += FFN_NV_TILE) {
            for (int q = ty; q < FFN_NV_TILE; q += 8) {
                const int64_t i = i0 + q, k = k0 + tx;
                As[q][tx] = i < a.M && k < a.K ? ffn__ld(a.A, i * a.a0 + k * a.a1, a.dt) : 0.0f;
                const int64_t kb = k0 + q, j = j0 + tx;
                Bs[q][tx] = kb < a.K && j < a.N ? ffn__ld(a.B, kb * a.b0 + j * a.b1, a.dt) : 0.0f;
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < FFN_NV_TILE / 8; q++) {
                const int r = ty + 8 * q;
                float s = acc[q];
                for (int k = 0; k < FFN_NV_TILE; k++) s = fmaf(As[r][k], Bs[k][tx], s);
                acc[q] = s;
            }
            __syncthreads();
        }
#pragma unroll
        for (int q = 0; q < FFN_NV_TILE / 8; q++) {
            const int64_t i = i0 + ty + 8 * q, j = j0 + tx;
            if (i >= a.M || j >= a.N) continue;
            float v = acc[q];
            if (a.bias) v += ffn__ld(a.bias, j * a.bs, a.bias_dt);
            if (a.acc) v = ffn__ld(a.C, i * a.c0 + j, a.c_dt) + v;
            ffn__st(a.C, i * a.c0 + j, a.c_dt, v);
        }
        __syncthreads();  // the next tile's loads overwrite As, Bs
    }
}

// --- launchers ----------------------------------------------------------------------------------

extern "C" int ffn_cu_convert_launch(void *stream, const struct ffn_cu_cvt *a) {
    if (a->rows <= 0 || a->cols <= 0) return 0;
    // About 4096 blocks of 256 threads: columns along x, rows along y, grid-stride in both.
    int64_t gx = (a->cols + 255) / 256;
    if (gx > 1024) gx = 1024;
    int64_t gy = 4096 / gx;
    if (gy < 1) gy = 1;
    if (gy > a->rows) gy = a->rows;
    if (gy > 65535) gy = 65535;
    const dim3 grid((unsigned)gx, (unsigned)gy);
    ffn_cu_convert<<<grid, 256, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int ffn_cu_colsum_launch(void *stream, const void *A, int dt, int64_t lda, int64_t rows,
                                    int64_t n, double *part, int64_t part_cap, void *g, int gdt,
                                    int64_t gs, int acc) {
    if (n <= 0) return 0;
    const int es = dt == FFN_DTYPE_F32 ? 4 : 2, V = dt == FFN_DTYPE_F32 ? 4 : 8;
    const bool vec = (uintptr_t)A % 16 == 0 && (lda * es) % 16 == 0 && n % V == 0;
    const int64_t per_row = vec ? n / V : n;  // threads along a row
    // About 2^18 threads in all (132 SMs × 2048), chunks of at least 4 rows, at most 256 chunks
    // (the second pass reads 256 partials per column), no more than the partials buffer holds.
    int64_t chunks = ((int64_t)1 << 18) / per_row;
    if (chunks > (rows + 3) / 4) chunks = (rows + 3) / 4;
    if (chunks > 256) chunks = 256;
    if (chunks > part_cap / n) chunks = part_cap / n;
    if (chunks < 1) chunks = 1;
    const int64_t rpc = rows > 0 ? (rows + chunks - 1) / chunks : 0;
    if (rows > 0) chunks = (rows + rpc - 1) / rpc;
    cudaStream_t s = (cudaStream_t)stream;
    // Blocks of up to 256 threads along a row (a short row: a block of its width in warps).
    const int bt = per_row >= 256 ? 256 : (int)((per_row + 31) / 32 * 32);
    const dim3 grid((unsigned)((per_row + bt - 1) / bt), (unsigned)chunks);
    if (rows <= 0) {
        chunks = 0;
    } else if (!vec) {
        ffn_cu_colsum_part<<<grid, bt, 0, s>>>(A, dt, lda, rows, n, rpc, part);
    } else if (dt == FFN_DTYPE_F32) {
        ffn_cu_colsum_part_vec<FFN_DTYPE_F32><<<grid, bt, 0, s>>>(A, lda, rows, n, rpc, part);
    } else if (dt == FFN_DTYPE_BF16) {
        ffn_cu_colsum_part_vec<FFN_DTYPE_BF16><<<grid, bt, 0, s>>>(A, lda, rows, n, rpc, part);
    } else {
        ffn_cu_colsum_part_vec<FFN_DTYPE_F16><<<grid, bt, 0, s>>>(A, lda, rows, n, rpc, part);
    }
    const dim3 lanes(32, FFN_CS_LANES);
    ffn_cu_colsum_done<<<(unsigned)((n + 31) / 32), lanes, 0, s>>>(part, chunks, n, g, gdt, gs,
                                                                   acc);
    return (int)cudaGetLastError();
}

extern "C" int ffn_cu_gemm_naive_launch(void *stream, const struct ffn_cu_gemm *a) {
    if (a->M <= 0 || a->N <= 0) return 0;
    const int64_t tiles =
        ((a->N + FFN_NV_TILE - 1) / FFN_NV_TILE) * ((a->M + FFN_NV_TILE - 1) / FFN_NV_TILE);
    const unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
    ffn_cu_gemm_naive<<<grid, FFN_NV_TILE * 8, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}
