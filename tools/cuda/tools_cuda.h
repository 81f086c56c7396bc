// tools_cuda.h — the kernels of the `ffn` tool's GPU paths (tools/cuda/*.cu), behind C functions
// for the C code that drives them (ulp_cuda.c, bench_act_cuda.c). Streams travel as void *
// (cudaStream_t); each function returns a cudaError_t as int (0: success). Not part of libffn.
#ifndef FFN_TOOLS_CUDA_H
#define FFN_TOOLS_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// --- `ffn ulp --backend cuda` (ulp_kernels.cu) ---------------------------------------------------

// The inputs of elements i0 .. i0+n-1 of a sweep, stored in dtype dt: x from list[i0 + i] (a
// device array) or, with list NULL, the f32 bit pattern i0 + i (f32), or the 16-bit pattern
// (bf16, f16); the multipliers as `ffn ulp` cycles them (op: the op family, 0..3): m1 = 1 (unary)
// or up = {1, -0.75, 2.5, 0.0078125}[i % 4], m2 = dh = {1, -1.25, 0.375}[i % 3] (gated backward)
// or 1. i counts from the start of the sweep.
int ffn_ulpcu_gen(void *stream, int op, int dt, const float *list, uint64_t i0, int64_t n, void *x,
                  void *m1, void *m2);

// Per-block statistics of one output of a chunk.
struct ffn_ulpcu_stat {
    double max, sum;          // largest error, sum of the errors below FFN_ULP_HUGE
    int64_t n, n_cr, n_over;  // elements, correctly rounded, above the bound
    int64_t i_max;            // sweep index of the largest error (-1: none)
    float x, m1, m2, got;     // its inputs and output
};

// The ulp error of each output of the chunk against the double-precision reference evaluated on
// the device (cpu/scalar/act_ref.h; metric tools/ulp_metric.h), reduced per block into
// stats[o * n_blocks + b] (o = output 0 or 1). out1 NULL for single-output ops.
int ffn_ulpcu_metric(void *stream, int op, int act, int dt, bool accurate, const void *x,
                     const void *m1, const void *m2, const void *out0, const void *out1, int64_t n,
                     uint64_t i0, struct ffn_ulpcu_stat *stats, int n_blocks);

// --- `ffn bench act --backend cuda` (bench_kernels.cu) -------------------------------------------

// n elements of dtype dt at p: N(0, 1) (dist 0) or uniform on [-20, 20] (dist 1), from a
// counter-based generator (the same values for any launch shape).
int ffn_benchcu_fill(void *stream, void *p, int dt, int64_t n, int dist, uint64_t seed);

// Reads `bytes` (a multiple of 16) at p and adds them into *sink (a device float): a pass that
// evicts the L2 cache with clean lines and keeps the stream busy while the host queues a timed
// call behind it.
int ffn_benchcu_flush(void *stream, const void *p, size_t bytes, float *sink);

// Keeps the stream busy for about `cycles` GPU clock cycles (one thread): the warm benchmark's
// stand-in for the flush, which hides the host's queuing of the timed call without touching L2.
int ffn_benchcu_spin(void *stream, int64_t cycles);

#ifdef __cplusplus
}
#endif

#endif  // FFN_TOOLS_CUDA_H
