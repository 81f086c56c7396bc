// cuda_block.h — internals of the CUDA FFN block shared by its host code (cuda_block.c, C) and
// its kernels (block_kernels.cu, CUDA C), and the two hooks it takes from the backend
// (cuda_backend.c). Nothing here names a CUDA type. Never installed.
#ifndef FFN_CUDA_BLOCK_H
#define FFN_CUDA_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "ffn.h"

#ifdef __cplusplus
extern "C" {
#endif

// out[r, c] = in[r, c] + bias[c·bs] (bias optional) (+ out[r, c] when acc), for r < rows,
// c < cols, rounded once to out's dtype; row strides in elements. Dtypes: enum ffn_dtype.
struct ffn_cu_cvt {
    const void *in;
    void *out;
    const void *bias;
    int64_t rows, cols, ldi, ldo, bs;
    int32_t in_dt, out_dt, bias_dt, acc;
};

// C[M, N] = A[M, K]·B[K, N] (+ bias[j·bs]) (+ C when acc): A(i, k) at A + i·a0 + k·a1, B(k, j) at
// B + k·b0 + j·b1 (elements of dtype dt), C(i, j) at C + i·c0 + j (dtype c_dt).
struct ffn_cu_gemm {
    const void *A, *B, *bias;
    void *C;
    int64_t M, N, K, a0, a1, b0, b1, c0, bs;
    int32_t dt, c_dt, bias_dt, acc;
};

// Launchers (block_kernels.cu): a cudaError_t as int, 0 on success; streams as void *.
int ffn_cu_convert_launch(void *stream, const struct ffn_cu_cvt *a);
// Column sums of A [rows, n] (dtype dt, row stride lda) into g[j·gs] (dtype gdt; + g when acc),
// through `part` (part_cap doubles of device memory, ≥ n).
int ffn_cu_colsum_launch(void *stream, const void *A, int dt, int64_t lda, int64_t rows, int64_t n,
                         double *part, int64_t part_cap, void *g, int gdt, int64_t gs, int acc);
int ffn_cu_gemm_naive_launch(void *stream, const struct ffn_cu_gemm *a);

// The gated first projection in one GEMM with the combine in its epilogue (glu_gemm.cu, sm_90a):
// h[T, m] = act(x·W_gateᵀ) ⊙ (x·W_upᵀ), and g = x·W_gateᵀ, u = x·W_upᵀ when g is not NULL. x:
// [T, K]; W_gate, W_up: [m, K] ([out, in] rows; a row-interleaved gate_up is a row stride of two
// rows); h, g, u: [T, m]; all bf16 (or all f16: f16), row strides in elements. x and the weights
// 16-byte aligned with row strides a multiple of 8 (the tensor memory accelerator's terms:
// ffn_cu_glu_gemm_fits); outputs that are not are stored by the kernel's epilogue instead of the
// TMA. sms: the persistent grid, ffn_cu_glu_gemm_prepare's count.
struct ffn_cu_glu_gemm {
    const void *x, *wg, *wu;
    void *h, *g, *u;
    int64_t T, m, K, ldx, ldwg, ldwu, ldh, ldg, ldu;
    int32_t act, accurate, parity, f16, sms;
};
// Readies the current device for the kernel, once (its code is sm_90a: compute capability 9.0
// only; the kernels' shared-memory limits raised): its multiprocessor count, 0 where it does not
// run.
int ffn_cu_glu_gemm_prepare(void);
// Whether a call's pointers, strides and sizes fit the kernel.
int ffn_cu_glu_gemm_fits(const struct ffn_cu_glu_gemm *a);
int ffn_cu_glu_gemm_launch(void *stream, const struct ffn_cu_glu_gemm *a);

// The gated backward's dh GEMM with the backward combine in its epilogue (the same kernel): dh =
// dy·W_down (dy [T, K]; W_down stored [K, m] with w_kn — [out, in] — or [m, K]) rounded to the
// dtype, then dg = act'(g)·u·dh and du = act(g)·dh from g, u [T, m] into dg, du, which may be g
// and u themselves (in place); dh never leaves the chip. Alignment as above.
struct ffn_cu_dglu_gemm {
    const void *dy, *w, *g, *u;
    void *dg, *du;
    int64_t T, m, K, lddy, ldw, ldg, ldu, lddg, lddu;
    int32_t w_kn, act, accurate, f16, sms;
};
int ffn_cu_dglu_gemm_fits(const struct ffn_cu_dglu_gemm *a);
int ffn_cu_dglu_gemm_launch(void *stream, const struct ffn_cu_dglu_gemm *a);

// The same kernel's plain form: C[M, N] = A0·B0 (+ A1·B1 when a1 is not NULL), the sums over K0
// (+ K1) in f32 and rounded once to the dtype: the backward's dx = dgate·W_gate + dup·W_up of
// separate gate and up weights in one GEMM. A: [M, K] rows; B stored [K, N] (b_kn: an [out, in]
// weight read transposed) or [N, K]; C [M, N]. Everything 16-byte aligned with row strides a
// multiple of 8 (the TMA's terms).
struct ffn_cu_gemm_pair {
    const void *a0, *a1, *b0, *b1;
    void *c;
    int64_t M, N, K0, K1, lda0, lda1, ldb0, ldb1, ldc;
    int32_t b_kn, f16, sms;
};
int ffn_cu_gemm_pair_fits(const struct ffn_cu_gemm_pair *a);
int ffn_cu_gemm_pair_launch(void *stream, const struct ffn_cu_gemm_pair *a);

#ifndef __CUDACC__
// Stage timing of a CUDA block (benchmarks; ffn bench block --backend cuda --stages): with `on`,
// every following call records an event before its first stage and after each (GEMMs, element-wise
// passes, column sums, conversions: the device time between them is the stage's). -1 for a block
// that is not a CUDA block or when the events cannot be made.
int ffn_cuda_block_profile(ffn_block_t block, bool on);
// The stages of the block's last call (at most max): names ("P0", "act fwd", "dh", ...), the
// GEMMs' implementations ("" for other stages), milliseconds. Waits for that call's end. Returns
// the count, -1 when profiling is off.
int ffn_cuda_block_stages(ffn_block_t block, int max, const char **names, const char **impls,
                          float *ms);

// From cuda_backend.c: the pointer check of the element-wise calls (device memory of ctx's
// device, inside its allocation), for a view `name` of a function `fn`.
enum ffn_status ffn_cuda_check_view(ffn_ctx_t ctx, const char *fn, const char *name,
                                    const struct ffn_tensor *t);
#endif

#ifdef __cplusplus
}
#endif

#endif  // FFN_CUDA_BLOCK_H
