// bench_time.h — the clock and the median of the stand-alone bench programs (skinny_gemm.c,
// transpose.c, ab_kernels.c, zmm_throughput.c): header-only, each program includes it once.
#ifndef FFN_BENCH_TIME_H
#define FFN_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

// Seconds on the monotonic clock.
static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline int bench_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// The median of v[0..n) (n ≥ 1; the upper one of an even count); sorts v.
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp);
    return v[n / 2];
}

#endif  // FFN_BENCH_TIME_H
