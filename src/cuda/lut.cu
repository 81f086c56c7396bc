// lut.cu — a 16-bit forward (bf16 / f16 in and out) through a lookup table of all 65,536 inputs:
// the table holds the kernel's own outputs (ffn_cu_lut_build, ew_kernel.cuh), so the result is
// the same bits, while each element costs a shared-memory load instead of the activation's
// arithmetic. Used for large contiguous calls (cuda_backend.c), where the arithmetic of the
// transcendental activations would otherwise bound a 16-bit forward below the memory's speed.
#include <stdint.h>

#include "cuda/cuda_impl.h"

// 8 outputs for the 8 inputs of a 16-byte word, through the table in shared memory.
static __device__ __forceinline__ uint32_t ffn__map2(const uint16_t *t, uint32_t w) {
    return (uint32_t)t[w & 0xffffu] | ((uint32_t)t[w >> 16] << 16);
}

static __device__ __forceinline__ uint4 ffn__map8(const uint16_t *t, uint4 v) {
    return make_uint4(ffn__map2(t, v.x), ffn__map2(t, v.y), ffn__map2(t, v.z), ffn__map2(t, v.w));
}

__global__ void __launch_bounds__(FFN_CUDA_LUT_THREADS, 1)
    ffn_cu_lut_apply(const uint16_t *tab, const uint16_t *x, uint16_t *y, int64_t n, int mode) {
    extern __shared__ uint4 ffn_lut_smem[];
    const uint4 *src = (const uint4 *)tab;
    for (int i = threadIdx.x; i < FFN_CUDA_LUT_SMEM / 16; i += blockDim.x) ffn_lut_smem[i] = src[i];
    __syncthreads();
    const uint16_t *t = (const uint16_t *)ffn_lut_smem;
    const uint4 *xv = (const uint4 *)x;
    uint4 *yv = (uint4 *)y;
    const int64_t nv = n / 8;
    // mode 0: the blocks interleaved (block b takes vectors b·blockDim + k·gridDim·blockDim);
    // mode 1: each block a contiguous range of the vectors.
    int64_t v, end, stride;
    if (mode == 1) {
        const int64_t per = (nv + gridDim.x - 1) / gridDim.x;
        v = (int64_t)blockIdx.x * per + threadIdx.x;
        end = min(nv, (int64_t)(blockIdx.x + 1) * per);
        stride = blockDim.x;
    } else {
        v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        end = nv;
        stride = (int64_t)gridDim.x * blockDim.x;
    }
    // Four independent 16-byte loads in flight per thread before the first use.
    for (; v + 3 * stride < end; v += 4 * stride) {
        uint4 a[4];
#pragma unroll
        for (int k = 0; k < 4; k++) a[k] = xv[v + k * stride];
#pragma unroll
        for (int k = 0; k < 4; k++) yv[v + k * stride] = ffn__map8(t, a[k]);
    }
    for (; v < end; v += stride) yv[v] = ffn__map8(t, xv[v]);
    // The last n mod 8 elements.
    if (blockIdx.x == 0 && threadIdx.x < (int)(n - nv * 8)) {
        const int64_t i = nv * 8 + threadIdx.x;
        y[i] = t[x[i]];
    }
}

extern "C" const void *ffn_cuda_lut_apply(void) { return (const void *)ffn_cu_lut_apply; }

// --- the 16-bit gated forward through a table of act(gate) ---------------------------------------
// h = round16(a·up) with a = act(gate) from a table of all 65,536 gates (act_math.h,
// ffn_cm_glut_*: the reference's act(g) to 16 significant bits, 24 bits an entry), so an element
// costs two shared-memory loads, a product and a conversion instead of act's arithmetic, which
// bounds the direct kernel at about half the memory's speed for the transcendental activations.
// Layout (FFN_CUDA_GLUT_BYTES, 192 KiB): the entries' high 16 bits for every gate, then their low
// 8 bits. Every block copies it into shared memory (one block an SM), then takes 8 elements per
// 16-byte access of gate, up and h, four accesses of each input in flight per thread. A chunk
// with a rare entry (act(g) zero, subnormal or not finite: NaN, ±inf, ±0 gates among them) is
// recomputed out of line with the reference on those lanes (ffn_cm_glut_h). With deriv, the same
// kernel computes the 16-bit backward dx = act'(x)·dy from a table of act'(x) (gate = x, up = dy).
#include "cuda/act_math.h"

__global__ void ffn_cu_glut_build(uint8_t *tab, int in_dt, int act, int deriv) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 65536) return;
    const uint16_t b = (uint16_t)i;
    const float g = in_dt == FFN_DTYPE_BF16 ? ffn_cm_from_bf16(b) : ffn_cm_from_f16(b);
    const enum ffn_act a = (enum ffn_act)act;
    const uint32_t e =
        ffn_cm_glut_entry(deriv ? ffn_ref_dact_eval(a, (double)g) : ffn_ref_act_eval(a, (double)g));
    ((uint16_t *)tab)[i] = (uint16_t)(e >> 8);
    tab[2 * 65536 + i] = (uint8_t)(e & 0xffu);
}

template <bool IN_F16>
static __device__ __forceinline__ float ffn__glut_in(uint32_t h16) {
    return IN_F16 ? __half2float(__ushort_as_half((unsigned short)h16))
                  : __uint_as_float(h16 << 16);
}

template <bool OUT_F16>
static __device__ __forceinline__ uint32_t ffn__glut_pack(float a, float b) {
    if (OUT_F16) {
        const __half2 h = __floats2half2_rn(a, b);
        return (uint32_t)__half_as_ushort(h.x) | ((uint32_t)__half_as_ushort(h.y) << 16);
    }
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return (uint32_t)__bfloat16_as_ushort(h.x) | ((uint32_t)__bfloat16_as_ushort(h.y) << 16);
}

static __device__ __forceinline__ uint32_t ffn__glut_entry(const uint16_t *hi, const uint8_t *lo,
                                                           uint32_t g16) {
    return ((uint32_t)hi[g16] << 8) | lo[g16];
}

// A chunk with a rare lane: all 8 elements through ffn_cm_glut_h (out of line).
template <bool IN_F16, bool OUT_F16>
static __device__ __noinline__ uint4 ffn__glut_fix(const uint16_t *hi, const uint8_t *lo, int act,
                                                   bool deriv, uint4 gv, uint4 uv) {
    const uint32_t gw[4] = {gv.x, gv.y, gv.z, gv.w}, uw[4] = {uv.x, uv.y, uv.z, uv.w};
    uint32_t o[4];
    for (int j = 0; j < 4; j++) {
        float h[2];
        for (int k = 0; k < 2; k++) {
            const uint32_t g16 = (gw[j] >> (16 * k)) & 0xffffu, u16 = (uw[j] >> (16 * k)) & 0xffffu;
            h[k] = ffn_cm_glut_h((enum ffn_act)act, deriv, ffn__glut_entry(hi, lo, g16),
                                 ffn__glut_in<IN_F16>(g16), ffn__glut_in<IN_F16>(u16));
        }
        o[j] = ffn__glut_pack<OUT_F16>(h[0], h[1]);
    }
    return make_uint4(o[0], o[1], o[2], o[3]);
}

// 8 outputs of a chunk; *rare: some entry is rare (the chunk is then to be fixed).
template <bool IN_F16, bool OUT_F16>
static __device__ __forceinline__ uint4 ffn__glut8(const uint16_t *hi, const uint8_t *lo, uint4 gv,
                                                   uint4 uv, bool *rare) {
    const uint32_t gw[4] = {gv.x, gv.y, gv.z, gv.w}, uw[4] = {uv.x, uv.y, uv.z, uv.w};
    uint32_t o[4];
    bool r = false;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t e0 = ffn__glut_entry(hi, lo, gw[j] & 0xffffu);
        const uint32_t e1 = ffn__glut_entry(hi, lo, gw[j] >> 16);
        r = r || (e0 & 0x7f8000u) == 0 || (e1 & 0x7f8000u) == 0;
        o[j] = ffn__glut_pack<OUT_F16>(
            __uint_as_float(e0 << 8) * ffn__glut_in<IN_F16>(uw[j] & 0xffffu),
            __uint_as_float(e1 << 8) * ffn__glut_in<IN_F16>(uw[j] >> 16));
    }
    *rare = r;
    return make_uint4(o[0], o[1], o[2], o[3]);
}

template <bool IN_F16, bool OUT_F16, int THREADS>
__global__ void __launch_bounds__(THREADS, 1)
    ffn_cu_glut_apply(const uint8_t *tab, const uint16_t *gate, const uint16_t *up, uint16_t *h,
                      int64_t n, int act, int deriv) {
    extern __shared__ uint4 ffn_glut_smem[];
    const uint4 *gv = (const uint4 *)gate, *uv = (const uint4 *)up;
    uint4 *hv = (uint4 *)h;
    const int64_t nv = n / 8, stride = (int64_t)gridDim.x * blockDim.x;
    int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    // The first step's loads are issued before the table's copy, so the memory is busy meanwhile.
    uint4 g[4], u[4];
    if (v + 3 * stride < nv) {
#pragma unroll
        for (int k = 0; k < 4; k++) g[k] = gv[v + k * stride], u[k] = uv[v + k * stride];
    }
    const uint4 *src = (const uint4 *)tab;
    for (int i = threadIdx.x; i < FFN_CUDA_GLUT_BYTES / 16; i += blockDim.x)
        ffn_glut_smem[i] = src[i];
    __syncthreads();
    const uint16_t *hi = (const uint16_t *)ffn_glut_smem;
    const uint8_t *lo = (const uint8_t *)ffn_glut_smem + 2 * 65536;
    // Four chunks of each input in flight per thread before the first use.
    for (; v + 3 * stride < nv; v += 4 * stride) {
        if (v != (int64_t)blockIdx.x * blockDim.x + threadIdx.x) {
#pragma unroll
            for (int k = 0; k < 4; k++) g[k] = gv[v + k * stride], u[k] = uv[v + k * stride];
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            bool rare;
            uint4 o = ffn__glut8<IN_F16, OUT_F16>(hi, lo, g[k], u[k], &rare);
            if (rare) o = ffn__glut_fix<IN_F16, OUT_F16>(hi, lo, act, deriv, g[k], u[k]);
            hv[v + k * stride] = o;
        }
    }
    for (; v < nv; v += stride) {
        bool rare;
        uint4 o = ffn__glut8<IN_F16, OUT_F16>(hi, lo, gv[v], uv[v], &rare);
        if (rare) o = ffn__glut_fix<IN_F16, OUT_F16>(hi, lo, act, deriv, gv[v], uv[v]);
        hv[v] = o;
    }
    // The last n mod 8 elements.
    if (blockIdx.x == 0 && threadIdx.x < (int)(n - nv * 8)) {
        const int64_t i = nv * 8 + threadIdx.x;
        const uint4 o = ffn__glut_fix<IN_F16, OUT_F16>(
            hi, lo, act, deriv, make_uint4(gate[i], 0, 0, 0), make_uint4(up[i], 0, 0, 0));
        h[i] = (uint16_t)(o.x & 0xffffu);
    }
}

extern "C" const void *ffn_cuda_glut_build(void) { return (const void *)ffn_cu_glut_build; }

extern "C" const void *ffn_cuda_glut_apply(int in_dt, int out_dt, int threads) {
    const bool i16 = in_dt == FFN_DTYPE_F16, o16 = out_dt == FFN_DTYPE_F16;
#define FFN__GLUT_K(T)                                             \
    (i16 ? (o16 ? (const void *)ffn_cu_glut_apply<true, true, T>   \
                : (const void *)ffn_cu_glut_apply<true, false, T>) \
         : (o16 ? (const void *)ffn_cu_glut_apply<false, true, T>  \
                : (const void *)ffn_cu_glut_apply<false, false, T>))
    return threads == 512 ? FFN__GLUT_K(512) : FFN__GLUT_K(1024);
#undef FFN__GLUT_K
}
