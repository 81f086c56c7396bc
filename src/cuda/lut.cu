// lut.cu — a 16-bit forward (bf16 / f16 in and out) through a lookup table of all 65,536 inputs:
// the table holds the kernel's own outputs (ffn_cu_lut_build, ew_kernel.cuh), so the result is
// the same bits, while each element costs a shared-memory load instead of the activation's
// arithmetic. Used for large contiguous calls of the accurate tier (cuda_backend.c), whose
// forward is the reference in double: far below the memory's speed computed element by element.
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
