// cuda_check.h — the standalone CUDA measurement programs' error check (bench/cuda_lab.cu,
// bench/cuda_overlap.cu): a failed runtime call prints where and why, and the program exits.
#ifndef FFN_BENCH_CUDA_CHECK_H
#define FFN_BENCH_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif  // FFN_BENCH_CUDA_CHECK_H
