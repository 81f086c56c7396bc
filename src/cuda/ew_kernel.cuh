// ew_kernel.cuh — the element-wise kernel of the CUDA backend: one template for every op family
// and activation, instantiated per activation by ew_<act>.cu (one translation unit each, so nvcc
// builds them in parallel). The math of an element is act_math.h's; this file only moves data:
// 8 consecutive elements of a row per thread and step, loaded and stored with 16-byte accesses
// when every row of every view is 16-byte aligned (FFN_CUDA_VEC), element by element otherwise
// (and byte by byte for views not aligned to their element size), over a grid-stride loop in rows
// and in units of a row, with 64-bit indices. Dtypes, the accuracy tier and parity are uniform
// run-time flags (a branch per 8 elements), so there are 28 kernels, not 28 × 9 × 4.
#ifndef FFN_CUDA_EW_KERNEL_CUH
#define FFN_CUDA_EW_KERNEL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "core/core_impl.h"  // enum ffn_kop
#include "cuda/act_math.h"
#include "cuda/cuda_impl.h"

// The tables (act_math.h), copied to shared memory by every block that uses them.
// clang-format off
static __device__ const struct ffn_cm_tabs ffn_cu_tabs = {{FFN_EXP2_TAB_HI}, {FFN_EXP2_TAB_LO}, {
#include "cpu/gelu_erf_fast_tab.inc"
}};
// clang-format on

// --- loads and stores --------------------------------------------------------------------------

// 8 elements of dtype dt at p (16-byte aligned) as f32.
static __device__ __forceinline__ void ffn_cu_load8(const char *p, int dt, float v[8]) {
    if (dt == FFN_DTYPE_F32) {
        const float4 a = *(const float4 *)p, b = *(const float4 *)(p + 16);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
        v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
        return;
    }
    const uint4 q = *(const uint4 *)p;
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (dt == FFN_DTYPE_BF16) {  // the low half is element 2k (little-endian)
            v[2 * k] = __uint_as_float(w[k] << 16);
            v[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
        } else {
            v[2 * k] = __half2float(__ushort_as_half((unsigned short)(w[k] & 0xffffu)));
            v[2 * k + 1] = __half2float(__ushort_as_half((unsigned short)(w[k] >> 16)));
        }
    }
}

// Two f32 values rounded to nearest even into one 32-bit word of 16-bit dt (a in the low half).
static __device__ __forceinline__ uint32_t ffn_cu_pack2(float a, float b, int dt) {
    if (dt == FFN_DTYPE_BF16) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        return (uint32_t)__bfloat16_as_ushort(h.x) | ((uint32_t)__bfloat16_as_ushort(h.y) << 16);
    }
    const __half2 h = __floats2half2_rn(a, b);
    return (uint32_t)__half_as_ushort(h.x) | ((uint32_t)__half_as_ushort(h.y) << 16);
}

// 8 f32 values to dtype dt at p (16-byte aligned).
static __device__ __forceinline__ void ffn_cu_store8(char *p, int dt, const float v[8]) {
    if (dt == FFN_DTYPE_F32) {
        *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
        *(float4 *)(p + 16) = make_float4(v[4], v[5], v[6], v[7]);
        return;
    }
    *(uint4 *)p = make_uint4(ffn_cu_pack2(v[0], v[1], dt), ffn_cu_pack2(v[2], v[3], dt),
                             ffn_cu_pack2(v[4], v[5], dt), ffn_cu_pack2(v[6], v[7], dt));
}

// One element of dtype dt at p: naturally aligned, or (bytes) at any address.
static __device__ __forceinline__ float ffn_cu_load1(const char *p, int dt, bool bytes) {
    const unsigned char *b = (const unsigned char *)p;
    if (dt == FFN_DTYPE_F32) {
        const uint32_t u = bytes ? (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
                                       ((uint32_t)b[3] << 24)
                                 : *(const uint32_t *)p;
        return __uint_as_float(u);
    }
    const uint16_t h = bytes ? (uint16_t)(b[0] | (b[1] << 8)) : *(const uint16_t *)p;
    return dt == FFN_DTYPE_BF16 ? ffn_cm_from_bf16(h) : ffn_cm_from_f16(h);
}

static __device__ __forceinline__ void ffn_cu_store1(char *p, int dt, bool bytes, float v) {
    unsigned char *b = (unsigned char *)p;
    if (dt == FFN_DTYPE_F32) {
        const uint32_t u = __float_as_uint(v);
        if (!bytes) {
            *(uint32_t *)p = u;
        } else {
            b[0] = (unsigned char)u, b[1] = (unsigned char)(u >> 8);
            b[2] = (unsigned char)(u >> 16), b[3] = (unsigned char)(u >> 24);
        }
        return;
    }
    const uint16_t h = dt == FFN_DTYPE_BF16 ? ffn_cm_to_bf16(v) : ffn_cm_to_f16(v);
    if (!bytes) {
        *(uint16_t *)p = h;
    } else {
        b[0] = (unsigned char)h, b[1] = (unsigned char)(h >> 8);
    }
}

// --- the kernel ----------------------------------------------------------------------------------
// OP: enum ffn_kop (inputs x | x, dy | gate, up | gate, up, dh; outputs y | dx | h | dgate, dup).
// Every input element is read before any output element of its unit is written, so an output may
// be exactly an input (in place): each unit is one thread's own, and the units of a step are
// disjoint.
template <int OP, int ACT>
__global__ void __launch_bounds__(FFN_CUDA_THREADS) ffn_cu_ew(const struct ffn_cuda_ew_args a) {
    constexpr int NI = OP == FFN_KOP_ACT_FWD ? 1 : OP == FFN_KOP_GLU_BWD ? 3 : 2;
    constexpr int NO = OP == FFN_KOP_GLU_BWD ? 2 : 1;
    constexpr bool TABS = ACT != FFN_ACT_RELU && ACT != FFN_ACT_IDENTITY;
    constexpr int NU = OP == FFN_KOP_ACT_FWD ? 2 : 1;  // units per step (see the loop)
    __shared__ struct ffn_cm_tabs T;
    if (TABS) {
        const float *src = (const float *)&ffn_cu_tabs;
        float *dst = (float *)&T;
        for (int i = threadIdx.x; i < (int)(sizeof T / sizeof(float)); i += blockDim.x)
            dst[i] = src[i];
        __syncthreads();
    }
    const int ies = a.in_dt == FFN_DTYPE_F32 ? 4 : 2, oes = a.out_dt == FFN_DTYPE_F32 ? 4 : 2;
    const bool acc = a.flags & FFN_CUDA_ACC, par = a.flags & FFN_CUDA_PAR;
    const bool vec = a.flags & FFN_CUDA_VEC, bytes = a.flags & FFN_CUDA_BYTES;
    const enum ffn_dtype odt = (enum ffn_dtype)a.out_dt;
    const int lanes = 1 << a.lpr_log2, rpb = FFN_CUDA_THREADS >> a.lpr_log2;
    const int tu = threadIdx.x & (lanes - 1), tr = threadIdx.x >> a.lpr_log2;
    const int64_t upr = (a.cols + FFN_CUDA_UNIT - 1) / FFN_CUDA_UNIT;  // units per row
    const int64_t ustep = (int64_t)gridDim.x * lanes, rstep = (int64_t)gridDim.y * rpb;

    for (int64_t r = (int64_t)blockIdx.y * rpb + tr; r < a.rows; r += rstep) {
        const char *in[NI];
        char *out[NO];
#pragma unroll
        for (int k = 0; k < NI; k++) in[k] = (const char *)a.in[k] + r * a.in_rs[k] * ies;
#pragma unroll
        for (int k = 0; k < NO; k++) out[k] = (char *)a.out[k] + r * a.out_rs[k] * oes;
        // NU units per step, all loaded before the first is computed: a unary forward has one
        // input, so two units keep as many bytes in flight per thread as the other ops' one.
        for (int64_t u = (int64_t)blockIdx.x * lanes + tu; u < upr; u += NU * ustep) {
            float x[NU][NI][FFN_CUDA_UNIT];
            int n[NU];
            bool full[NU];
#pragma unroll
            for (int q = 0; q < NU; q++) {
                const int64_t uq = u + q * ustep, c0 = uq * FFN_CUDA_UNIT;
                const int64_t left = uq < upr ? a.cols - c0 : 0;
                n[q] = left < FFN_CUDA_UNIT ? (int)left : FFN_CUDA_UNIT;
                full[q] = vec && n[q] == FFN_CUDA_UNIT;
#pragma unroll
                for (int k = 0; k < NI; k++) {
                    if (full[q]) {
                        ffn_cu_load8(in[k] + c0 * ies, a.in_dt, x[q][k]);
                    } else {
#pragma unroll
                        for (int e = 0; e < FFN_CUDA_UNIT; e++)
                            x[q][k][e] = e < n[q]
                                             ? ffn_cu_load1(in[k] + (c0 + e) * ies, a.in_dt, bytes)
                                             : 0.0f;
                    }
                }
            }
#pragma unroll
            for (int q = 0; q < NU; q++) {
                if (n[q] == 0) break;
                const int64_t c0 = (u + q * ustep) * FFN_CUDA_UNIT;
                float y[NO][FFN_CUDA_UNIT];
#pragma unroll
                for (int e = 0; e < FFN_CUDA_UNIT; e++) {
                    const struct ffn_cm_out o =
                        ffn_cm_elem(&T, OP, (enum ffn_act)ACT, acc, par, odt, x[q][0][e],
                                    x[q][NI > 1 ? 1 : 0][e], x[q][NI > 2 ? 2 : 0][e]);
                    y[0][e] = o.y0;
                    y[NO - 1][e] = NO > 1 ? o.y1 : o.y0;
                }
#pragma unroll
                for (int k = 0; k < NO; k++) {
                    if (full[q]) {
                        ffn_cu_store8(out[k] + c0 * oes, a.out_dt, y[k]);
                    } else {
#pragma unroll
                        for (int e = 0; e < FFN_CUDA_UNIT; e++)
                            if (e < n[q])
                                ffn_cu_store1(out[k] + (c0 + e) * oes, a.out_dt, bytes, y[k][e]);
                    }
                }
            }
        }
    }
}

// --- the flat kernel: contiguous views, every one 16-byte aligned ------------------------------
// The common case (whole tensors, a GEMM's output): the elements as 16-byte chunks of every view,
// C = 4 elements of f32 or 8 of bf16/f16 a chunk (in and out of the same width: F32, or H16 with
// bf16/f16 chosen per side at run time). A thread takes U chunks a step, blockDim apart, so that
// each warp access is 512 contiguous bytes; the U chunks of the next step are loaded before the
// current ones are computed (in flight while the math runs), over a grid-stride loop. The math
// of a chunk is the fast lanes' (ffn_cm_elem_fast); a chunk with rare lanes (NaN, ±inf, the
// tails, tiny inputs of a product: the reference's) fixes those after its fast lanes, on a path
// the others do not take. The last n mod C elements are block 0's, one a thread.
template <int OP, int ACT, bool H16>
__global__ void __launch_bounds__(FFN_CUDA_THREADS) ffn_cu_flat(const struct ffn_cuda_ew_args a) {
    constexpr int NI = OP == FFN_KOP_ACT_FWD ? 1 : OP == FFN_KOP_GLU_BWD ? 3 : 2;
    constexpr int NO = OP == FFN_KOP_GLU_BWD ? 2 : 1;
    constexpr int C = H16 ? 8 : 4;
    constexpr int U = FFN_CUDA_FLAT_U(H16, NI);
    constexpr int B = FFN_CUDA_THREADS;
    constexpr bool TABS = ACT != FFN_ACT_RELU && ACT != FFN_ACT_IDENTITY;
    __shared__ struct ffn_cm_tabs T;
    if (TABS) {
        const float *src = (const float *)&ffn_cu_tabs;
        float *dst = (float *)&T;
        for (int i = threadIdx.x; i < (int)(sizeof T / sizeof(float)); i += B) dst[i] = src[i];
        __syncthreads();
    }
    const bool acc = a.flags & FFN_CUDA_ACC, par = a.flags & FFN_CUDA_PAR;
    const bool ibf = a.in_dt == FFN_DTYPE_BF16, obf = a.out_dt == FFN_DTYPE_BF16;
    const enum ffn_dtype odt = (enum ffn_dtype)a.out_dt;
    const enum ffn_act act = (enum ffn_act)ACT;
    const int64_t n = a.cols, nch = n / C, step = (int64_t)gridDim.x * (U * B);
    const uint4 *in[NI];
    uint4 *out[NO];
#pragma unroll
    for (int k = 0; k < NI; k++) in[k] = (const uint4 *)a.in[k];
#pragma unroll
    for (int k = 0; k < NO; k++) out[k] = (uint4 *)a.out[k];

    int64_t c = (int64_t)blockIdx.x * (U * B) + threadIdx.x;
    uint4 cur[U][NI];
#pragma unroll
    for (int u = 0; u < U; u++)
        if (c + u * B < nch)
#pragma unroll
            for (int k = 0; k < NI; k++) cur[u][k] = in[k][c + u * B];
    for (; c < nch; c += step) {
        uint4 nxt[U][NI];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c + step + u * B < nch)
#pragma unroll
                for (int k = 0; k < NI; k++) nxt[u][k] = in[k][c + step + u * B];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t i = c + u * B;
            if (i >= nch) break;
            float x[NI][C];
#pragma unroll
            for (int k = 0; k < NI; k++) {
                const uint32_t w[4] = {cur[u][k].x, cur[u][k].y, cur[u][k].z, cur[u][k].w};
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (!H16) {
                        x[k][j] = __uint_as_float(w[j]);
                    } else if (ibf) {  // the low half is element 2j (little-endian)
                        x[k][2 * j] = __uint_as_float(w[j] << 16);
                        x[k][2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
                    } else {
                        const float2 f = __half22float2(*(const __half2 *)&w[j]);
                        x[k][2 * j] = f.x, x[k][2 * j + 1] = f.y;
                    }
                }
            }
            float y[NO][C];
            uint32_t rare = 0;
#pragma unroll
            for (int e = 0; e < C; e++) {
                const struct ffn_cm_res r =
                    ffn_cm_elem_fast(&T, OP, act, acc, par, odt, x[0][e], x[NI > 1 ? 1 : 0][e],
                                     x[NI > 2 ? 2 : 0][e]);
                y[0][e] = r.y0;
                if (NO > 1) y[NO - 1][e] = r.y1;
                rare |= (uint32_t)r.rare << e;
            }
            if (rare) {
#pragma unroll
                for (int e = 0; e < C; e++)
                    if (rare >> e & 1) {
                        const struct ffn_cm_out o =
                            ffn_cm_elem_ref(OP, act, par, odt, x[0][e], x[NI > 1 ? 1 : 0][e],
                                            x[NI > 2 ? 2 : 0][e]);
                        y[0][e] = o.y0;
                        if (NO > 1) y[NO - 1][e] = o.y1;
                    }
            }
#pragma unroll
            for (int k = 0; k < NO; k++) {
                uint32_t w[4];
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (!H16) {
                        w[j] = __float_as_uint(y[k][j]);
                    } else {
                        w[j] = ffn_cu_pack2(y[k][2 * j], y[k][2 * j + 1],
                                            obf ? FFN_DTYPE_BF16 : FFN_DTYPE_F16);
                    }
                }
                out[k][i] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < NI; k++) cur[u][k] = nxt[u][k];
    }
    // The last n mod C elements.
    const int64_t e = nch * C + threadIdx.x;
    if (blockIdx.x == 0 && e < n) {
        const int es = H16 ? 2 : 4;
        const int idt = a.in_dt;
        float x[3];
#pragma unroll
        for (int k = 0; k < NI; k++) x[k] = ffn_cu_load1((const char *)a.in[k] + e * es, idt, false);
        const struct ffn_cm_out o = ffn_cm_elem(&T, OP, act, acc, par, odt, x[0],
                                                x[NI > 1 ? 1 : 0], x[NI > 2 ? 2 : 0]);
        ffn_cu_store1((char *)a.out[0] + e * es, a.out_dt, false, o.y0);
        if (NO > 1) ffn_cu_store1((char *)a.out[1] + e * es, a.out_dt, false, o.y1);
    }
}

// --- the lookup table of a 16-bit forward --------------------------------------------------------
// tab[i] = the forward's output (16-bit type out_dt) for the input whose bits are i (16-bit type
// in_dt): the element math and the rounding of the kernel above, so a call through the table
// (lut.cu) gives the same bits as the kernel itself.
template <int ACT>
__global__ void __launch_bounds__(FFN_CUDA_THREADS)
    ffn_cu_lut_build(uint16_t *tab, int in_dt, int out_dt, int acc) {
    __shared__ struct ffn_cm_tabs T;
    const float *src = (const float *)&ffn_cu_tabs;
    float *dst = (float *)&T;
    for (int i = threadIdx.x; i < (int)(sizeof T / sizeof(float)); i += blockDim.x) dst[i] = src[i];
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 65536; i += gridDim.x * blockDim.x) {
        const uint16_t h = (uint16_t)i;
        const float x = in_dt == FFN_DTYPE_BF16 ? ffn_cm_from_bf16(h) : ffn_cm_from_f16(h);
        const struct ffn_cm_out o = ffn_cm_elem(&T, FFN_KOP_ACT_FWD, (enum ffn_act)ACT, acc != 0,
                                                false, (enum ffn_dtype)out_dt, x, x, x);
        tab[i] = out_dt == FFN_DTYPE_BF16 ? ffn_cm_to_bf16(o.y0) : ffn_cm_to_f16(o.y0);
    }
}

// The getters of ew_<name>.cu: the kernels of activation ACT (kind: FFN_CUDA_K_*), and its table
// builder (op -1).
#define FFN_CUDA_EW_CASE(OPV)                                                  \
    case OPV:                                                                  \
        return kind == FFN_CUDA_K_FLAT32   ? (const void *)ffn_cu_flat<OPV, ACT_, false> \
               : kind == FFN_CUDA_K_FLAT16 ? (const void *)ffn_cu_flat<OPV, ACT_, true>  \
                                           : (const void *)ffn_cu_ew<OPV, ACT_>;
#define FFN_CUDA_EW_GETTER(name, ACT)                             \
    extern "C" const void *ffn_cuda_ew_##name(int op, int kind) { \
        constexpr int ACT_ = ACT;                                 \
        switch (op) {                                             \
            FFN_CUDA_EW_CASE(FFN_KOP_ACT_FWD)                     \
            FFN_CUDA_EW_CASE(FFN_KOP_ACT_BWD)                     \
            FFN_CUDA_EW_CASE(FFN_KOP_GLU_FWD)                     \
            FFN_CUDA_EW_CASE(FFN_KOP_GLU_BWD)                     \
        case -1: return (const void *)ffn_cu_lut_build<ACT_>;     \
        default: return NULL;                                     \
        }                                                         \
    }

#endif  // FFN_CUDA_EW_KERNEL_CUH
