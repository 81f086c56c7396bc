// cuda_check.h — the standalone CUDA measurement programs' error check (bench/cuda_lab.cu,
// bench/cuda_overlap.cu, bench/cuda_overlap_block.cu, bench/cuda_fused_gemm.cu): a failed runtime
// call prints where and why, and the program exits (LK: a cuBLAS status; DK: a driver API
// result); and their timing (C++ only).
#ifndef FFN_BENCH_CUDA_CHECK_H
#define FFN_BENCH_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

// A failed call: where, which and why, then the program exits.
#define FFN_BENCH_FAIL_IF(bad, call, fmt, ...)                                              \
    do {                                                                                    \
        if (bad) {                                                                          \
            fprintf(stderr, "%s:%d: %s: " fmt "\n", __FILE__, __LINE__, call, __VA_ARGS__); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        FFN_BENCH_FAIL_IF(e_ != cudaSuccess, #call, "%s", cudaGetErrorString(e_)); \
    } while (0)

// The same for a cuBLAS / cuBLASLt call (the program includes cublasLt.h).
#define LK(call)                                                                     \
    do {                                                                             \
        cublasStatus_t s_ = (call);                                                  \
        FFN_BENCH_FAIL_IF(s_ != CUBLAS_STATUS_SUCCESS, #call, "status %d", (int)s_); \
    } while (0)

// The same for a driver API call (the program includes cuda.h).
#define DK(call)                                                              \
    do {                                                                      \
        CUresult r_ = (call);                                                 \
        FFN_BENCH_FAIL_IF(r_ != CUDA_SUCCESS, #call, "CUresult %d", (int)r_); \
    } while (0)

#ifdef __cplusplus
#    include <algorithm>
#    include <vector>

// The median ms of `reps` calls of f (which queues its work on s and may fork to other streams
// and join back), between the events a and b recorded on s, after two calls not counted.
template <class F>
static double cuda_median_ms(F f, cudaStream_t s, cudaEvent_t a, cudaEvent_t b, int reps) {
    std::vector<double> v;
    for (int r = 0; r < reps + 2; r++) {
        CK(cudaEventRecord(a, s));
        f();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
#endif

#endif  // FFN_BENCH_CUDA_CHECK_H
