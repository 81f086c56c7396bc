// tp_kernels.cu — the two small kernels of a tensor-parallel block on the GPU that are neither its
// local block nor its all-reduce: y += b_down after the all-reduce (the plan's AFTER_REDUCE rule:
// the bias is added once, to the sum), and db_down = Σ_tokens dy (that bias's gradient, the same
// on every rank). Both are memory-bound passes over [tokens, d_model]; kernels, then launchers
// (C-callable, src/cuda/tp_cuda.h). Built with the backend's flags (-fmad=false: nothing fused).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/tp_cuda.h"
#include "ffn.h"

// --- kernels -------------------------------------------------------------------------------------

static __device__ float ffn__load(const void *p, int dt, int64_t i) {
    if (dt == FFN_DTYPE_BF16) return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (dt == FFN_DTYPE_F16) return __half2float(((const __half *)p)[i]);
    return ((const float *)p)[i];
}

// Rounds to nearest even, as the library's conversions do.
static __device__ void ffn__store(void *p, int dt, int64_t i, float v) {
    if (dt == FFN_DTYPE_BF16)
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    else if (dt == FFN_DTYPE_F16)
        ((__half *)p)[i] = __float2half_rn(v);
    else
        ((float *)p)[i] = v;
}

// y[r][j] += b[j]: rows over blockIdx.y (grid-stride), columns over the x threads.
static __global__ void ffn__tp_bias_add(void *y, int dt, int64_t rows, int64_t cols, int64_t rs,
                                        const float *b) {
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
        for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
             j += (int64_t)gridDim.x * blockDim.x)
            ffn__store(y, dt, r * rs + j, ffn__load(y, dt, r * rs + j) + b[j]);
}

// Column sums, first pass: block (32, 8) sums the rows [k·per, (k+1)·per) (k = blockIdx.y) of 32
// columns in double, 8 row lanes each taking every 8th row (a warp reads 32 consecutive columns
// of one row), then the lanes' sums in lane order: partial[k][j].
#define FFN__CS_COLS 32
#define FFN__CS_LANES 8
static __global__ void ffn__tp_colsum_part(double *partial, const void *dy, int dt, int64_t rows,
                                           int64_t cols, int64_t rs, int64_t per) {
    __shared__ double s[FFN__CS_LANES][FFN__CS_COLS + 1];
    const int64_t j = (int64_t)blockIdx.x * FFN__CS_COLS + threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.y * per;
    const int64_t r1 = r0 + per < rows ? r0 + per : rows;
    double acc = 0.0;
    if (j < cols)
        for (int64_t r = r0 + threadIdx.y; r < r1; r += FFN__CS_LANES)
            acc += (double)ffn__load(dy, dt, r * rs + j);
    s[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        double t = 0.0;
        for (int k = 0; k < FFN__CS_LANES; k++) t += s[k][threadIdx.x];
        partial[(int64_t)blockIdx.y * cols + j] = t;
    }
}

// Second pass: g[j] = (acc ? g[j] : 0) + (float)Σ_k partial[k][j], the chunks in order.
static __global__ void ffn__tp_colsum_final(void *g, int gdt, int acc, const double *partial,
                                            int64_t chunks, int64_t cols) {
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
         j += (int64_t)gridDim.x * blockDim.x) {
        double t = 0.0;
        for (int64_t k = 0; k < chunks; k++) t += partial[k * cols + j];
        const float s = (float)t;
        ffn__store(g, gdt, j, acc ? ffn__load(g, gdt, j) + s : s);
    }
}

// --- launchers -----------------------------------------------------------------------------------

#define FFN__THREADS 256
#define FFN__MAX_GRID_Y 65535

extern "C" int ffn_cuda_tp_bias_add(void *y, int y_dtype, int64_t rows, int64_t cols,
                                    int64_t row_stride, const float *b, void *stream) {
    if (rows <= 0 || cols <= 0) return (int)cudaSuccess;
    const int64_t bx = (cols + FFN__THREADS - 1) / FFN__THREADS;
    const dim3 grid((unsigned)(bx < 1024 ? bx : 1024),
                    (unsigned)(rows < FFN__MAX_GRID_Y ? rows : FFN__MAX_GRID_Y));
    ffn__tp_bias_add<<<grid, FFN__THREADS, 0, (cudaStream_t)stream>>>(y, y_dtype, rows, cols,
                                                                      row_stride, b);
    return (int)cudaGetLastError();
}

extern "C" int64_t ffn_cuda_tp_colsum_chunks(int64_t rows, int64_t cols) {
    // About 1024 blocks in all (several per SM), each chunk at least 64 rows.
    const int64_t bx = (cols + FFN__CS_COLS - 1) / FFN__CS_COLS;
    int64_t chunks = 1024 / (bx > 0 ? bx : 1);
    const int64_t most = (rows + 63) / 64;
    if (chunks > most) chunks = most;
    return chunks < 1 ? 1 : chunks;
}

extern "C" int ffn_cuda_tp_colsum(void *g, int g_dtype, bool accumulate, const void *dy,
                                  int dy_dtype, int64_t rows, int64_t cols, int64_t row_stride,
                                  void *partial, int64_t chunks, void *stream) {
    if (cols <= 0) return (int)cudaSuccess;
    const cudaStream_t st = (cudaStream_t)stream;
    if (chunks > FFN__MAX_GRID_Y) chunks = FFN__MAX_GRID_Y;
    const int64_t per = rows > 0 ? (rows + chunks - 1) / chunks : 0;
    const dim3 grid((unsigned)((cols + FFN__CS_COLS - 1) / FFN__CS_COLS), (unsigned)chunks);
    ffn__tp_colsum_part<<<grid, dim3(FFN__CS_COLS, FFN__CS_LANES), 0, st>>>(
        (double *)partial, dy, dy_dtype, rows, cols, row_stride, per);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
    const int64_t bx = (cols + FFN__THREADS - 1) / FFN__THREADS;
    ffn__tp_colsum_final<<<(unsigned)(bx < 1024 ? bx : 1024), FFN__THREADS, 0, st>>>(
        g, g_dtype, accumulate, (const double *)partial, chunks, cols);
    return (int)cudaGetLastError();
}
