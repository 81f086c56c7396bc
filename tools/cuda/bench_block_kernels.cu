// bench_block_kernels.cu — a kernel of `ffn bench block --backend cuda` (bench_block_cuda.c):
// scaling the N(0, 1) fill of tools/cuda/bench_kernels.cu to the weights' scale, 1/sqrt(fan-in) as
// nn.Linear initialises them, so that the pre-activations the blocks see are O(1) as in a trained
// model (the activations' cost depends on their inputs' range: far tails take the exact path).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "ffn.h"

__global__ void ffn_bbcu_scale_kernel(void *p, int dt, int64_t n, float scale) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (dt == FFN_DTYPE_F32) {
            ((float *)p)[i] *= scale;
        } else if (dt == FFN_DTYPE_BF16) {
            __nv_bfloat16 *q = (__nv_bfloat16 *)p;
            q[i] = __float2bfloat16_rn(__bfloat162float(q[i]) * scale);
        } else {
            __half *q = (__half *)p;
            q[i] = __float2half_rn(__half2float(q[i]) * scale);
        }
    }
}

// p[i] *= scale for i < n (dtype dt), on `stream`; a cudaError_t as int.
extern "C" int ffn_bbcu_scale(void *stream, void *p, int dt, int64_t n, float scale) {
    if (n <= 0) return 0;
    ffn_bbcu_scale_kernel<<<1024, 256, 0, (cudaStream_t)stream>>>(p, dt, n, scale);
    return (int)cudaGetLastError();
}
