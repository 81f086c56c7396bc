// ew_kernel.cuh — the element-wise kernel of the CUDA backend: one template for every op family
// and activation, instantiated per activation by ew_<act>.cu (one translation unit each, so nvcc
// builds them in parallel). The math of an element is act_math.h's; this file only moves data:
// 8 consecutive elements of a row per thread and step, loaded and stored with 16-byte accesses
// when every row of every view is 16-byte aligned (FFN_CUDA_VEC), element by element otherwise
// (and byte by byte for views not aligned to their element size), over a grid-stride loop in rows
// and in units of a row, with 64-bit indices. Dtypes, the accuracy tier and parity are uniform
// run-time flags (a branch per 8 elements), so there are 28 kernels, not 28 × 9 × 4. Views of one
// dtype, 16-byte aligned, contiguous or in rows of whole 16-byte chunks, take the flat kernel
// (below), compiled per dtype, form and layout.
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
static __device__ const struct ffn_cm_tabs_src ffn_cu_tabs = {{FFN_EXP2_TAB_HI}, {FFN_EXP2_TAB_LO}, {
#include "cpu/gelu_erf_fast_tab.inc"
}};
// clang-format on

// The inputs and outputs of op family OP (enum ffn_kop): x | x, dy | gate, up | gate, up, dh in;
// y | dx | h | dgate, dup out.
template <int OP>
struct ffn_cu_arity {
    static constexpr int ni = OP == FFN_KOP_ACT_FWD ? 1 : OP == FFN_KOP_GLU_BWD ? 3 : 2;
    static constexpr int no = OP == FFN_KOP_GLU_BWD ? 2 : 1;
};

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
    constexpr int NI = ffn_cu_arity<OP>::ni, NO = ffn_cu_arity<OP>::no;
    constexpr bool TABS = ACT != FFN_ACT_RELU && ACT != FFN_ACT_IDENTITY;
    constexpr int NU = OP == FFN_KOP_ACT_FWD ? 2 : 1;  // units per step (see the loop)
    __shared__ struct ffn_cm_tabs T;
    if (TABS) {
        ffn_cm_tabs_fill(&T, &ffn_cu_tabs, threadIdx.x, blockDim.x,
                         ffn_cm_uses_exp((enum ffn_act)ACT), ffn_cm_uses_erf((enum ffn_act)ACT));
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

// --- the flat kernel: views of one dtype, 16-byte aligned ----------------------------------------
// The common case (whole tensors, a GEMM's output; ROWS: the halves of a fused gate_up output, or
// any views whose rows are whole numbers of chunks at their own row strides): every view of one
// dtype DT, taken as 16-byte chunks, C = 4 elements of f32 or 8 of bf16/f16 a chunk, numbered row
// by row (ffn_cu_at). A thread takes U chunks a step, blockDim apart (each warp access is 512
// contiguous bytes), and steps gridDim·U·blockDim chunks on; the chunks of its first step are
// loaded before the block fills its tables (the loads are in flight across the barrier), and
// those of its next step before the math of the current one (software pipelining: the math of one
// step overlaps the next step's loads). Two grids (cuda_backend.c, ffn__flat_form): one pass (a
// step a thread; blocks that finish make room for the next, which keeps the memory busier than a
// persistent loop: measured 1.00 against 0.92-0.95 of a device copy for the copy-limited ops), or
// a few waves of resident blocks looping (the compute-heavy ops, whose math would otherwise not
// overlap any load). Dtypes, op, parity, U and the layout are compile-time (the accuracy tier
// too, by one branch of the kernel), so the fast lanes carry no branch but their own; a chunk
// with a rare lane (NaN, ±inf, the tails, tiny inputs of a product: the reference's) recomputes
// its elements through ffn_cu_fix, in line, on a path the other chunks do not take. Every form
// computes every element with the same math: the outputs are the same bits, contiguous or ROWS.
// The last n mod C elements of contiguous views are block 0's, one a thread (ROWS has none).
template <int DT>
static __device__ __forceinline__ void ffn_cu_unpack(const uint4 v,
                                                     float x[DT == FFN_DTYPE_F32 ? 4 : 8]) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (DT == FFN_DTYPE_F32) {
            x[j] = __uint_as_float(w[j]);
        } else if (DT == FFN_DTYPE_BF16) {  // the low half is element 2j (little-endian)
            x[2 * j] = __uint_as_float(w[j] << 16);
            x[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
        } else {
            const float2 f = __half22float2(*(const __half2 *)&w[j]);
            x[2 * j] = f.x, x[2 * j + 1] = f.y;
        }
    }
}

template <int DT>
static __device__ __forceinline__ uint4 ffn_cu_pack(const float y[DT == FFN_DTYPE_F32 ? 4 : 8]) {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; j++)
        w[j] =
            DT == FFN_DTYPE_F32 ? __float_as_uint(y[j]) : ffn_cu_pack2(y[2 * j], y[2 * j + 1], DT);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// A chunk's outputs (NO 16-byte words).
struct ffn_cu_words {
    uint4 w[2];
};

// A chunk with a rare lane: every element through ffn_cm_elem_in (the fast lane, or the reference
// where it is rare), from the chunk's input words to its output words. In line, with the
// reference's double math in line too, and one copy of it in the loop over the elements (not
// unrolled): the steps' loop then holds no call. A call, even one never taken, cost the fast path:
// the bf16 erf-GeLU forward in one pass of four chunks ran at 0.90 of a device copy with this
// function out of line, 0.96 in line (0.97 with no rare lanes handled at all; H200, 8192 × 14336,
// bench/cuda_lab.cu part `flat16`). The tail's elements (below) still call the out-of-line copy:
// outside the loop, it costs nothing measurable.
template <int OP, int ACT, int DT, bool PAR>
static __device__ __forceinline__ struct ffn_cu_words ffn_cu_fix(const struct ffn_cm_tabs *T,
                                                                 bool acc, uint4 v0, uint4 v1,
                                                                 uint4 v2) {
    constexpr int NI = ffn_cu_arity<OP>::ni, NO = ffn_cu_arity<OP>::no;
    constexpr int C = DT == FFN_DTYPE_F32 ? 4 : 8;
    float x[3][C], y[2][C];
    ffn_cu_unpack<DT>(v0, x[0]);
    if (NI > 1) ffn_cu_unpack<DT>(v1, x[1]);
    if (NI > 2) ffn_cu_unpack<DT>(v2, x[2]);
#pragma unroll 1
    for (int e = 0; e < C; e++) {
        const struct ffn_cm_out o =
            ffn_cm_elem_in(T, OP, (enum ffn_act)ACT, acc, PAR, (enum ffn_dtype)DT, x[0][e],
                           x[NI > 1 ? 1 : 0][e], x[NI > 2 ? 2 : 0][e], true);
        y[0][e] = o.y0;
        y[1][e] = o.y1;
    }
    struct ffn_cu_words r;
    r.w[0] = ffn_cu_pack<DT>(y[0]);
    r.w[1] = NO > 1 ? ffn_cu_pack<DT>(y[1]) : r.w[0];
    return r;
}

// One chunk: its input words to its output words (the fast lanes; the chunk again by ffn_cu_fix
// when one of them is rare).
template <int OP, int ACT, int DT, bool PAR>
static __device__ __forceinline__ struct ffn_cu_words ffn_cu_chunk(const struct ffn_cm_tabs *T,
                                                                   bool acc, const uint4 *v) {
    constexpr int NI = ffn_cu_arity<OP>::ni, NO = ffn_cu_arity<OP>::no;
    constexpr int C = DT == FFN_DTYPE_F32 ? 4 : 8;
    float x[NI][C];
#pragma unroll
    for (int k = 0; k < NI; k++) ffn_cu_unpack<DT>(v[k], x[k]);
    float y[NO][C];
    bool rare = false;
#pragma unroll
    for (int e = 0; e < C; e++) {
        const struct ffn_cm_res r =
            ffn_cm_elem_fast(T, OP, (enum ffn_act)ACT, acc, PAR, (enum ffn_dtype)DT, x[0][e],
                             x[NI > 1 ? 1 : 0][e], x[NI > 2 ? 2 : 0][e]);
        y[0][e] = r.y0;
        if (NO > 1) y[NO - 1][e] = r.y1;
        rare |= r.rare;
    }
    struct ffn_cu_words o;
#pragma unroll
    for (int k = 0; k < NO; k++) o.w[k] = ffn_cu_pack<DT>(y[k]);
    if (rare) o = ffn_cu_fix<OP, ACT, DT, PAR>(T, acc, v[0], v[NI > 1 ? 1 : 0], v[NI > 2 ? 2 : 0]);
    return o;
}

// Where chunk c of view v (the inputs, then the outputs) lies, in chunks from the view's start:
// c itself for contiguous views; for views of rows (ROWS: every row of every view 16-byte aligned
// and a whole number of chunks long, fewer than 2^31 chunks in all) chunk c mod cpr of row
// c / cpr, the quotient by a multiply and a shift (cuda_impl.h, ffn_cuda_div).
struct ffn_cu_rows {
    int64_t ld[5];  // row strides in chunks
    uint32_t cpr, mul, shift;
};

template <bool ROWS>
static __device__ __forceinline__ int64_t ffn_cu_at(const struct ffn_cu_rows &m, int v, int64_t c) {
    if (!ROWS) return c;
    const uint32_t n = (uint32_t)c, q = ffn_cuda_div(n, m.mul, m.shift);
    return (int64_t)q * m.ld[v] + (int64_t)(n - q * m.cpr);
}

// The steps of a thread from chunk c on (cur: its first step's chunks, loaded). acc is a
// compile-time constant where it picks the element math (a 16-bit output of a transcendental
// activation: the 16-bit tier or the accurate one; the kernel branches once, on the call's flag,
// and inlines this twice). With the tier a run-time flag, the element math held both tiers'
// lanes (the 16-bit tier's, and the f32 fast lanes with their table reads) under a per-element
// condition: on the H200 the bf16 erf-GeLU forward in one pass of four chunks ran at 0.86 of a
// device copy, with the tier fixed 0.91, the 16-bit tanh-GeLU forward in its looping form 0.89
// and 0.94 (both with the rare-lane fix-up out of line; 8192 × 14336, N(0,1) inputs).
template <int OP, int ACT, int DT, bool PAR, int U, bool PIPE, bool ROWS>
static __device__ __forceinline__ void ffn_cu_flat_steps(const struct ffn_cm_tabs *T,
                                                         const uint4 *const *in, uint4 *const *out,
                                                         const struct ffn_cu_rows &m,
                                                         uint4 (*cur)[ffn_cu_arity<OP>::ni],
                                                         int64_t c, int64_t step, int64_t nch,
                                                         int64_t bt, bool acc) {
    constexpr int NI = ffn_cu_arity<OP>::ni, NO = ffn_cu_arity<OP>::no;
    for (; c < nch; c += step) {
        uint4 nxt[U][NI];  // PIPE only
        if (PIPE) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (c + step + u * bt < nch)
#pragma unroll
                    for (int k = 0; k < NI; k++)
                        nxt[u][k] = in[k][ffn_cu_at<ROWS>(m, k, c + step + u * bt)];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t i = c + u * bt;
            if (i >= nch) break;
            const struct ffn_cu_words o = ffn_cu_chunk<OP, ACT, DT, PAR>(T, acc, cur[u]);
#pragma unroll
            for (int k = 0; k < NO; k++) out[k][ffn_cu_at<ROWS>(m, NI + k, i)] = o.w[k];
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < NI; k++) {
                if (PIPE)
                    cur[u][k] = nxt[u][k];
                else if (c + step + u * bt < nch)
                    cur[u][k] = in[k][ffn_cu_at<ROWS>(m, k, c + step + u * bt)];
            }
    }
}

template <int OP, int ACT, int DT, bool PAR, int U, bool PIPE, bool ROWS>
__global__ void __launch_bounds__(FFN_CUDA_FLAT_MAX_THREADS)
    ffn_cu_flat(const struct ffn_cuda_ew_args a) {
    constexpr int NI = ffn_cu_arity<OP>::ni, NO = ffn_cu_arity<OP>::no;
    constexpr int C = DT == FFN_DTYPE_F32 ? 4 : 8;
    constexpr bool TABS = ACT != FFN_ACT_RELU && ACT != FFN_ACT_IDENTITY;
    constexpr enum ffn_dtype dt = (enum ffn_dtype)DT;
    constexpr enum ffn_act act = (enum ffn_act)ACT;
    __shared__ struct ffn_cm_tabs T;
    const bool acc = a.flags & FFN_CUDA_ACC;
    // ROWS: a.rows rows of a.cols elements (a multiple of C), no tail.
    const int64_t n = ROWS ? a.rows * a.cols : a.cols, nch = n / C, bt = blockDim.x;
    const uint4 *in[NI];
    uint4 *out[NO];
    struct ffn_cu_rows m;
#pragma unroll
    for (int k = 0; k < NI; k++) in[k] = (const uint4 *)a.in[k];
#pragma unroll
    for (int k = 0; k < NO; k++) out[k] = (uint4 *)a.out[k];
    if (ROWS) {
        m.cpr = (uint32_t)(a.cols / C), m.mul = a.div_mul, m.shift = a.div_shift;
#pragma unroll
        for (int k = 0; k < NI; k++) m.ld[k] = a.in_rs[k] / C;
#pragma unroll
        for (int k = 0; k < NO; k++) m.ld[NI + k] = a.out_rs[k] / C;
    }

    // Chunk c + u·bt of every input is cur[u]. PIPE (a looping grid): the next step's, nxt[u], are
    // loaded before the math of this one; one pass (a step a thread, but for a grid cut at its
    // limit) loads a step's chunks after the last one's math instead, and its registers hold one
    // step, not two (f32 SiLU forward, four chunks: 70 registers pipelined, 58 not: four blocks
    // of 256 threads an SM, not three). A chunk past the end is never loaded, nor used.
    const int64_t step = (int64_t)gridDim.x * U * bt;
    int64_t c = (int64_t)blockIdx.x * U * bt + threadIdx.x;
    uint4 cur[U][NI];
#pragma unroll
    for (int u = 0; u < U; u++)
        if (c + u * bt < nch)
#pragma unroll
            for (int k = 0; k < NI; k++) cur[u][k] = in[k][ffn_cu_at<ROWS>(m, k, c + u * bt)];
    // The 16-bit tier reads no table (uniform across the block: the barrier is safe).
    if (TABS && !ffn_cm_tier16_on(act, dt, acc, PAR)) {
        ffn_cm_tabs_fill(&T, &ffn_cu_tabs, threadIdx.x, blockDim.x, ffn_cm_uses_exp(act),
                         ffn_cm_uses_erf(act));
        __syncthreads();
    }
    // Whether the tier picks the element math (folded at compile time).
    const bool split =
        ffn_cm_tier16_on(act, dt, false, PAR) != ffn_cm_tier16_on(act, dt, true, PAR);
    if (!split)
        ffn_cu_flat_steps<OP, ACT, DT, PAR, U, PIPE, ROWS>(&T, in, out, m, cur, c, step, nch, bt,
                                                           acc);
    else if (acc)
        ffn_cu_flat_steps<OP, ACT, DT, PAR, U, PIPE, ROWS>(&T, in, out, m, cur, c, step, nch, bt,
                                                           true);
    else
        ffn_cu_flat_steps<OP, ACT, DT, PAR, U, PIPE, ROWS>(&T, in, out, m, cur, c, step, nch, bt,
                                                           false);
    // The last n mod C elements.
    const int64_t e = nch * C + threadIdx.x;
    if (!ROWS && blockIdx.x == 0 && e < n) {
        constexpr int es = DT == FFN_DTYPE_F32 ? 4 : 2;
        float x[3];
#pragma unroll
        for (int k = 0; k < NI; k++) x[k] = ffn_cu_load1((const char *)a.in[k] + e * es, DT, false);
        const struct ffn_cm_out o =
            ffn_cm_elem(&T, OP, act, acc, PAR, dt, x[0], x[NI > 1 ? 1 : 0], x[NI > 2 ? 2 : 0]);
        ffn_cu_store1((char *)a.out[0] + e * es, DT, false, o.y0);
        if (NO > 1) ffn_cu_store1((char *)a.out[1] + e * es, DT, false, o.y1);
    }
}

// --- the lookup table of a 16-bit forward --------------------------------------------------------
// tab[i] = the accurate tier's forward output (16-bit type out_dt) for the input whose bits are i
// (16-bit type in_dt): the element math and the rounding of the kernel above, so a call through
// the table (lut.cu) gives the same bits as the kernel itself.
template <int ACT>
__global__ void __launch_bounds__(FFN_CUDA_THREADS)
    ffn_cu_lut_build(uint16_t *tab, int in_dt, int out_dt) {
    __shared__ struct ffn_cm_tabs T;
    ffn_cm_tabs_fill(&T, &ffn_cu_tabs, threadIdx.x, blockDim.x, ffn_cm_uses_exp((enum ffn_act)ACT),
                     ffn_cm_uses_erf((enum ffn_act)ACT));
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 65536; i += gridDim.x * blockDim.x) {
        const uint16_t h = (uint16_t)i;
        const float x = in_dt == FFN_DTYPE_BF16 ? ffn_cm_from_bf16(h) : ffn_cm_from_f16(h);
        const struct ffn_cm_out o = ffn_cm_elem(&T, FFN_KOP_ACT_FWD, (enum ffn_act)ACT, true, false,
                                                (enum ffn_dtype)out_dt, x, x, x);
        tab[i] = out_dt == FFN_DTYPE_BF16 ? ffn_cm_to_bf16(o.y0) : ffn_cm_to_f16(o.y0);
    }
}

// The getters of ew_<name>.cu: the kernel of activation ACT for op family `op`, kind (the generic
// one, or a flat one: FFN_CUDA_K_FLAT + dtype, + FFN_CUDA_K_PAR for the parity of a 16-bit gated
// forward) and, for a flat one, u chunks a thread and step (1, 2 or 4) and its mode
// (FFN_CUDA_FLAT_LOOP, FFN_CUDA_FLAT_ROWS); op -1: its table builder.
template <int OP, int ACT, int DT, bool PAR, bool PIPE, bool ROWS>
static const void *ffn_cu_flat_of(int u) {
    return u == 4   ? (const void *)ffn_cu_flat<OP, ACT, DT, PAR, 4, PIPE, ROWS>
           : u == 2 ? (const void *)ffn_cu_flat<OP, ACT, DT, PAR, 2, PIPE, ROWS>
                    : (const void *)ffn_cu_flat<OP, ACT, DT, PAR, 1, PIPE, ROWS>;
}

template <int OP, int ACT, int DT, bool PAR>
static const void *ffn_cu_flat_of(int u, int mode) {
    const bool pipe = mode & FFN_CUDA_FLAT_LOOP;
    if (mode & FFN_CUDA_FLAT_ROWS)
        return pipe ? ffn_cu_flat_of<OP, ACT, DT, PAR, true, true>(u)
                    : ffn_cu_flat_of<OP, ACT, DT, PAR, false, true>(u);
    return pipe ? ffn_cu_flat_of<OP, ACT, DT, PAR, true, false>(u)
                : ffn_cu_flat_of<OP, ACT, DT, PAR, false, false>(u);
}

template <int OP, int ACT, bool PAR>
static const void *ffn_cu_kernel_of(int kind, int u, int mode) {
    switch (kind) {
    case FFN_CUDA_K_FLAT + FFN_DTYPE_F32:
        return ffn_cu_flat_of<OP, ACT, FFN_DTYPE_F32, false>(u, mode);
    case FFN_CUDA_K_FLAT + FFN_DTYPE_BF16:
        return ffn_cu_flat_of<OP, ACT, FFN_DTYPE_BF16, PAR>(u, mode);
    case FFN_CUDA_K_FLAT + FFN_DTYPE_F16:
        return ffn_cu_flat_of<OP, ACT, FFN_DTYPE_F16, PAR>(u, mode);
    default: return (const void *)ffn_cu_ew<OP, ACT>;
    }
}

#define FFN_CUDA_EW_GETTER(name, ACT)                                                              \
    extern "C" const void *ffn_cuda_ew_##name(int op, int kind, int u, int mode) {                 \
        const bool par = kind >= FFN_CUDA_K_PAR;                                                   \
        if (par) kind -= FFN_CUDA_K_PAR;                                                           \
        switch (op) {                                                                              \
        case FFN_KOP_ACT_FWD: return ffn_cu_kernel_of<FFN_KOP_ACT_FWD, ACT, false>(kind, u, mode); \
        case FFN_KOP_ACT_BWD: return ffn_cu_kernel_of<FFN_KOP_ACT_BWD, ACT, false>(kind, u, mode); \
        case FFN_KOP_GLU_FWD:                                                                      \
            return par ? ffn_cu_kernel_of<FFN_KOP_GLU_FWD, ACT, true>(kind, u, mode)               \
                       : ffn_cu_kernel_of<FFN_KOP_GLU_FWD, ACT, false>(kind, u, mode);             \
        case FFN_KOP_GLU_BWD: return ffn_cu_kernel_of<FFN_KOP_GLU_BWD, ACT, false>(kind, u, mode); \
        case -1: return (const void *)ffn_cu_lut_build<ACT>;                                       \
        default: return NULL;                                                                      \
        }                                                                                          \
    }

#endif  // FFN_CUDA_EW_KERNEL_CUH
