// tp_cuda.h — the launchers of src/cuda/tp_kernels.cu, for the tensor-parallel layer's host code
// (src/tp/tp_dev.c, C). No CUDA type appears: a stream is a cudaStream_t passed as void *, a
// result a cudaError_t as int, a dtype an enum ffn_dtype as int. Never installed.
#ifndef FFN_CUDA_TP_CUDA_H
#define FFN_CUDA_TP_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// y[r][j] = y[r][j] + b[j] for r < rows, j < cols (rows row_stride elements apart), in f32,
// rounded once to y's dtype (f32, bf16, f16: round to nearest even). Queued on `stream`.
int ffn_cuda_tp_bias_add(void *y, int y_dtype, int64_t rows, int64_t cols, int64_t row_stride,
                         const float *b, void *stream);

// Rows of partial sums ffn_cuda_tp_colsum needs for dy [rows, cols]: its scratch holds
// chunks × cols doubles.
int64_t ffn_cuda_tp_colsum_chunks(int64_t rows, int64_t cols);

// g[j] = (accumulate ? g[j] : 0) + (float)Σ_r dy[r][j], the sum in double over row chunks (the
// chunks' partial sums in `partial`, then summed in chunk order: deterministic), g rounded once
// to g_dtype. Queued on `stream`.
int ffn_cuda_tp_colsum(void *g, int g_dtype, bool accumulate, const void *dy, int dy_dtype,
                       int64_t rows, int64_t cols, int64_t row_stride, void *partial,
                       int64_t chunks, void *stream);

#ifdef __cplusplus
}
#endif

#endif  // FFN_CUDA_TP_CUDA_H
