// bench_kernels.cu — the GPU side of `ffn bench act --backend cuda`: random inputs generated on the
// device (a counter-based generator: the same values whatever the launch shape), and the L2
// flush (a read of a buffer larger than the cache).
#include <stdint.h>

#include "cuda/act_math.h"  // dtype conversions on the device
#include "tools_cuda.h"

// splitmix64 of a counter: 64 well-mixed bits.
static __device__ __forceinline__ uint64_t ffn__mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform on (0, 1), never 0.
static __device__ __forceinline__ double ffn__unit(uint64_t z) {
    return ((double)(z >> 11) + 0.5) * 0x1p-53;
}

__global__ void ffn__fill(void *p, int dt, int64_t n, int dist, uint64_t seed) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t z1 = ffn__mix(seed ^ (2 * (uint64_t)i)),
                       z2 = ffn__mix(seed ^ (2 * (uint64_t)i + 1));
        double v;
        if (dist == 1) {
            v = 20.0 * (2.0 * ffn__unit(z1) - 1.0);
        } else {  // Box-Muller: r cos 2πu2
            v = sqrt(-2.0 * log(ffn__unit(z1))) * cospi(2.0 * ffn__unit(z2));
        }
        const float f = (float)v;
        if (dt == FFN_DTYPE_F32)
            ((float *)p)[i] = f;
        else
            ((uint16_t *)p)[i] = dt == FFN_DTYPE_BF16 ? ffn_cm_to_bf16(f) : ffn_cm_to_f16(f);
    }
}

__global__ void ffn__flush(const uint4 *p, int64_t n, float *sink) {
    uint32_t acc = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink += 1.0f;  // keeps the loads; practically never true
}

// Keeps one SM busy for about `cycles` clock cycles.
__global__ void ffn__spin(int64_t cycles) {
    const int64_t t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

extern "C" int ffn_benchcu_spin(void *stream, int64_t cycles) {
    ffn__spin<<<1, 1, 0, (cudaStream_t)stream>>>(cycles);
    return (int)cudaGetLastError();
}

extern "C" int ffn_benchcu_fill(void *stream, void *p, int dt, int64_t n, int dist, uint64_t seed) {
    ffn__fill<<<2048, 256, 0, (cudaStream_t)stream>>>(p, dt, n, dist, seed);
    return (int)cudaGetLastError();
}

extern "C" int ffn_benchcu_flush(void *stream, const void *p, size_t bytes, float *sink) {
    ffn__flush<<<2048, 256, 0, (cudaStream_t)stream>>>((const uint4 *)p, (int64_t)(bytes / 16),
                                                       sink);
    return (int)cudaGetLastError();
}
