// transpose.c — the CPU layer's transpose (ffn_cpu_transpose: the copy that puts a GEMM operand
// in the layout oneDNN runs fast, block_dnnl.c) against a copy of the same bytes (memcpy on the
// same threads) in the same run: an R x C matrix of f32 or 16-bit (bf16) elements into a 64-byte aligned destination, as the
// block's scratch is, on each SIMD context the CPU has. Each repetition times the copy and every
// context in turn; prints the medians and the median of each repetition's ratio to the copy
// (docs/blocks.md, "Operand layouts").
//   build/bench_transpose [R C [threads [reps [f32|bf16]]]]   (default: 2048 x 5632 and
//       5632 x 2048, the LLaMA-like weights, f32 and bf16, on 1 and 2 threads)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "cpu/cpu_impl.h"
#include "ffn.h"
#include "tools.h"

#define REPS_MAX 64

static void copy(char *d, const char *s, size_t n, int nt) {
#pragma omp parallel num_threads(nt)
    {
        const size_t t = (size_t)omp_get_thread_num(), a = n * t / (size_t)nt,
                     b = n * (t + 1) / (size_t)nt;
        memcpy(d + a, s + a, b - a);
    }
}

static int one(long R, long C, int nt, int reps, size_t esz) {
    const enum ffn_isa isas[] = {FFN_ISA_AVX2, FFN_ISA_AVX512};
    enum { NI = sizeof isas / sizeof isas[0] };
    ffn_ctx_t ctx[NI] = {NULL};
    const size_t n = (size_t)R * (size_t)C, bytes = (n * esz + 63) / 64 * 64;
    char *s = aligned_alloc(64, bytes), *d = aligned_alloc(64, bytes);
    if (!s || !d) {
        free(s), free(d);
        fprintf(stderr, "bench_transpose: out of memory for %ld x %ld\n", R, C);
        return 1;
    }
    for (size_t k = 0; k < bytes; k++) s[k] = (char)(k * 2654435761u >> 13);
    memset(d, 0, bytes);  // pages touched once, as the block's reused scratch is
    for (int k = 0; k < NI; k++) {
        struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
        o.force_isa = isas[k];
        o.n_threads = nt;
        if (ffn_ctx_create(&o, &ctx[k]) != FFN_STATUS_OK) ctx[k] = NULL;  // not on this CPU
    }
    double tc[REPS_MAX], tt[NI][REPS_MAX], ratio[NI][REPS_MAX];
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        copy(d, s, n * esz, nt);
        tc[r] = bench_now() - t0;
        for (int k = 0; k < NI; k++) {
            if (!ctx[k]) continue;
            t0 = bench_now();
            ffn_cpu_transpose(ctx[k], d, R, s, C, R, C, esz);
            tt[k][r] = bench_now() - t0;
            ratio[k][r] = tt[k][r] / tc[r];
        }
    }
    // The last transpose's result, checked on a lattice of elements.
    long bad = 0;
    for (long i = 0; i < R; i += 7)
        for (long j = 0; j < C; j += 3)
            bad += memcmp(d + ((size_t)j * (size_t)R + (size_t)i) * esz,
                          s + ((size_t)i * (size_t)C + (size_t)j) * esz, esz) != 0;
    const double mc = bench_median(tc, reps), gb = 2.0 * (double)(n * esz) / 1e9;
    printf("%ld x %ld %s, %d thread%s: copy %.2f ms (%.1f GB/s)", R, C, esz == 4 ? "f32" : "bf16",
           nt, nt > 1 ? "s" : "", mc * 1e3, gb / mc);
    for (int k = 0; k < NI; k++) {
        if (!ctx[k]) continue;
        const double m = bench_median(tt[k], reps);
        printf("; %s transpose %.2f ms (%.1f GB/s, %.2fx the copy)", ffn_isa_name(isas[k]), m * 1e3,
               gb / m, bench_median(ratio[k], reps));
        ffn_ctx_destroy(ctx[k]);
    }
    printf("%s\n", bad ? "  WRONG RESULT" : "");
    free(s), free(d);
    return bad != 0;
}

int main(int argc, char **argv) {
    char cpu[128];
    double mhz = 0;
    ffn_tool_cpu_name(cpu, sizeof cpu, &mhz);
    printf("cpu: %s\n", cpu);
    const int reps = argc > 4 ? atoi(argv[4]) : 11;
    if (reps < 1 || reps > REPS_MAX) {
        fprintf(stderr, "bench_transpose: reps must be 1..%d\n", REPS_MAX);
        return 2;
    }
    int rc = 0;
    if (argc > 2) {
        const long R = atol(argv[1]), C = atol(argv[2]);
        const int nt = argc > 3 ? atoi(argv[3]) : 1;
        const char *dt = argc > 5 ? argv[5] : "f32";
        if (R < 1 || C < 1 || nt < 1 || (strcmp(dt, "f32") && strcmp(dt, "bf16"))) {
            fprintf(stderr, "usage: bench_transpose [R C [threads [reps [f32|bf16]]]]\n");
            return 2;
        }
        return one(R, C, nt, reps, strcmp(dt, "f32") ? 2 : 4);
    }
    for (size_t esz = 4; esz >= 2; esz -= 2)
        for (int nt = 1; nt <= 2; nt++)
            rc |= one(2048, 5632, nt, reps, esz) | one(5632, 2048, nt, reps, esz);
    return rc;
}
