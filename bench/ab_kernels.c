// ab_kernels.c — the SIMD kernels of one ISA from two source trees in one process (bench/ab.sh):
// those of a git revision, their symbols prefixed with old_, and the working tree's. The kernel
// list is AB_KERNELS_INC (default: the AVX-512 entries of kernels.inc).
//
//   ab_kernels check               every kernel: the two trees' outputs bitwise equal, over the
//                                  9 dtype pairs, both accuracy tiers, parity, streaming and
//                                  plain stores, two offsets, N(0,1), wide, random-bits and
//                                  special inputs; exit 1 on any difference
//   ab_kernels N REPS [FILTER...]  speed, f32 (with the FILTER word bf16 or f16: that type in
//                                  and out), N(0,1) inputs (with `wide`: x or gate uniform on
//                                  [-20, 20]), kernels whose "KOP:ACT" name
//                                  contains a FILTER: for N ≤ 65536 the fastest of REPS calls in
//                                  cycles per 16 elements (at a nominal 3.45 GHz), else per
//                                  rep a triad then each tree's kernel in alternating order, with
//                                  each one's ratio to its triad and the median new/old speed
//
// The two trees' kernels share one process, one set of buffers and one machine state, so a
// difference of a few percent is visible on a host whose bandwidth drifts by more than that
// between two runs of `ffn bench act`.
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_time.h"
#include "cpu/kernels.h"

#ifndef AB_KERNELS_INC
#    define AB_KERNELS_INC "cpu/x86_avx512/kernels_avx512.inc"
#endif

#define FFN_KERNEL(isa, kop, act, fn) \
    void fn(void);                    \
    void old_##fn(void);
#include AB_KERNELS_INC
#undef FFN_KERNEL

struct ab_kernel {
    enum ffn_kop kop;
    const char *name;
    void (*new_fn)(void), (*old_fn)(void);
};
#define FFN_KERNEL(isa, kop, act, fn) {FFN_KOP_##kop, #kop ":" #act, fn, old_##fn},
static const struct ab_kernel ab_kernels[] = {
#include AB_KERNELS_INC
};
#undef FFN_KERNEL
#define AB_NK (sizeof ab_kernels / sizeof ab_kernels[0])

static uint32_t ab_rs = 12345u;
static uint32_t ab_rand(void) {  // xorshift32
    ab_rs ^= ab_rs << 13;
    ab_rs ^= ab_rs >> 17;
    ab_rs ^= ab_rs << 5;
    return ab_rs;
}
static float ab_gauss(void) {
    const double u = (ab_rand() + 1.0) / 4294967297.0, v = ab_rand() / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

// 2 MiB aligned, on huge pages where the kernel gives them, or NULL.
static void *ab_alloc(size_t bytes) {
    const size_t huge = (size_t)2 << 20, b = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, b);
    if (p) madvise(p, b, MADV_HUGEPAGE);
    return p;
}

// One call: inputs in[0..2], outputs out[0..1] (unused ones ignored).
static void ab_call(const struct ab_kernel *k, void (*fn)(void), const struct ffn_kcfg *c,
                    int64_t n, void *out0, void *out1, const void *in0, const void *in1,
                    const void *in2) {
    switch (k->kop) {
    case FFN_KOP_ACT_FWD: ((ffn_act_fwd_fn)(void *)fn)(c, n, out0, in0); break;
    case FFN_KOP_ACT_BWD: ((ffn_act_bwd_fn)(void *)fn)(c, n, out0, in0, in1); break;
    case FFN_KOP_GLU_FWD: ((ffn_glu_fwd_fn)(void *)fn)(c, n, out0, in0, in1); break;
    default: ((ffn_glu_bwd_fn)(void *)fn)(c, n, out0, out1, in0, in1, in2); break;
    }
}

static int ab_check(void) {
    enum { N = 70000 };
    const size_t bytes = (size_t)N * 4 + 256;
    unsigned char *in[3], *out[2][2];
    for (int k = 0; k < 3; k++) in[k] = ab_alloc(bytes);
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) out[t][k] = ab_alloc(bytes);
    long configs = 0, differ = 0;
    for (int din = 0; din < 3; din++)
        for (int dout = 0; dout < 3; dout++) {
            const size_t ei = din == FFN_DTYPE_F32 ? 4 : 2, eo = dout == FFN_DTYPE_F32 ? 4 : 2;
            for (int k = 0; k < 3; k++)
                for (long i = 0; i < N; i++) {
                    const uint32_t r = ab_rand() % 100;
                    float v;
                    uint32_t bits = ab_rand();
                    if (r < 60)
                        v = ab_gauss() * (k == 0 ? 3.0f : 1.0f);
                    else if (r < 80)
                        v = ((float)ab_rand() / 4294967296.0f - 0.5f) * 200.0f;
                    else if (r < 97)
                        memcpy(&v, &bits, 4);
                    else
                        v = r == 97   ? (bits & 1 ? 0.0f : -0.0f)
                            : r == 98 ? NAN
                                      : (bits & 1 ? INFINITY : -INFINITY);
                    memcpy(&bits, &v, 4);
                    if (din == FFN_DTYPE_F32) {
                        memcpy(in[k] + i * 4, &v, 4);
                    } else {  // bf16: the top half; f16: random bits (every class)
                        const uint16_t h =
                            din == FFN_DTYPE_BF16 ? (uint16_t)(bits >> 16) : (uint16_t)ab_rand();
                        memcpy(in[k] + i * 2, &h, 2);
                    }
                }
            for (int flags = 0; flags < 8; flags++)
                for (int off = 0; off < 3; off += 2)
                    for (size_t j = 0; j < AB_NK; j++) {
                        const struct ab_kernel *k = &ab_kernels[j];
                        const struct ffn_kcfg c = {din,       dout,      flags & 1,
                                                   flags & 2, flags & 4, true};
                        const int64_t n = N - off - 7;
                        for (int t = 0; t < 2; t++) {
                            memset(out[t][0], 0x55, bytes);
                            memset(out[t][1], 0x55, bytes);
                            ab_call(k, t ? k->new_fn : k->old_fn, &c, n, out[t][0] + off * eo,
                                    out[t][1] + off * eo, in[0] + off * ei, in[1] + off * ei,
                                    in[2] + off * ei);
                        }
                        configs++;
                        if (memcmp(out[0][0], out[1][0], bytes) ||
                            memcmp(out[0][1], out[1][1], bytes)) {
                            if (differ++ < 20)
                                printf(
                                    "DIFFER %s in %d out %d accurate %d parity %d stream %d "
                                    "offset %d\n",
                                    k->name, din, dout, flags & 1, !!(flags & 2), !!(flags & 4),
                                    off);
                        }
                    }
        }
    printf("%ld configurations, %ld differ\n", configs, differ);
    return differ != 0;
}

__attribute__((noinline)) static void ab_triad(float *a, const float *b, const float *c,
                                               int64_t n) {
#ifdef __AVX512F__
    for (int64_t i = 0; i + 16 <= n; i += 16)
        _mm512_store_ps(a + i, _mm512_fmadd_ps(_mm512_set1_ps(0.5f), _mm512_load_ps(c + i),
                                               _mm512_load_ps(b + i)));
#else
    for (int64_t i = 0; i + 8 <= n; i += 8)
        _mm256_store_ps(a + i, _mm256_fmadd_ps(_mm256_set1_ps(0.5f), _mm256_load_ps(c + i),
                                               _mm256_load_ps(b + i)));
#endif
}

static int ab_time(int64_t n, int reps, int nf, char **filters) {
    enum { MAXREPS = 10000 };
    if (n < 16 || reps < 1 || reps > MAXREPS) {
        fprintf(stderr, "ab_kernels: N ≥ 16 and 1 ≤ REPS ≤ %d\n", MAXREPS);
        return 2;
    }
    // The filter words "bf16" and "f16": 16-bit inputs and outputs of that type; "wide": the
    // first input (x, gate) uniform on [-20, 20], the worst-case set of `ffn bench act`.
    enum ffn_dtype dt = FFN_DTYPE_F32;
    bool wide = false;
    for (int f = 0; f < nf; f++)
        if (!strcmp(filters[f], "bf16") || !strcmp(filters[f], "f16"))
            dt = filters[f][0] == 'b' ? FFN_DTYPE_BF16 : FFN_DTYPE_F16,
            filters[f--] = filters[--nf];
        else if (!strcmp(filters[f], "wide"))
            wide = true, filters[f--] = filters[--nf];
    const bool half = dt != FFN_DTYPE_F32;
    float *buf[5], *t[3];
    for (int k = 0; k < 5; k++) {
        buf[k] = ab_alloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) {
            const float v =
                wide && k == 0 ? (float)(ab_rand() / 4294967296.0 * 40.0 - 20.0) : ab_gauss();
            uint32_t bits;
            memcpy(&bits, &v, 4);
            const uint16_t h = dt == FFN_DTYPE_BF16 ? (uint16_t)(bits >> 16) : _cvtss_sh(v, 0);
            if (half)
                memcpy((uint16_t *)buf[k] + i, &h, 2);
            else
                buf[k][i] = v;
        }
    }
    for (int k = 0; k < 3; k++) {
        t[k] = ab_alloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) t[k][i] = (float)k;
    }
    const struct ffn_kcfg c = {dt, dt, false, false, n >= (1 << 20), true};
    for (size_t j = 0; j < AB_NK; j++) {
        const struct ab_kernel *k = &ab_kernels[j];
        bool take = nf == 0;
        for (int f = 0; f < nf; f++) take |= strstr(k->name, filters[f]) != NULL;
        if (!take) continue;
        const double bytes = (k->kop == FFN_KOP_ACT_FWD   ? 8
                              : k->kop == FFN_KOP_GLU_BWD ? 20
                                                          : 12) *
                             (double)n / (half ? 2 : 1);
        if (n <= 65536) {
            double best[2] = {1e30, 1e30};
            for (int r = 0; r < reps; r++)
                for (int s = 0; s < 2; s++) {
                    const double t0 = bench_now();
                    ab_call(k, s ? k->new_fn : k->old_fn, &c, n, buf[3], buf[4], buf[0], buf[1],
                            buf[2]);
                    const double dt = bench_now() - t0;
                    if (dt < best[s]) best[s] = dt;
                }
            const double vec = (double)n / 16 / 3.45e9;
            printf("%-22s cycles/vector old %6.2f new %6.2f   new/old speed %.3f\n", k->name,
                   best[0] / vec, best[1] / vec, best[0] / best[1]);
            continue;
        }
        double ratio[2][MAXREPS], speed[MAXREPS];
        for (int r = 0; r < reps; r++) {
            double dt[2];
            for (int s = 0; s < 2; s++) {
                const int is_new = (s + r) & 1;  // alternate which goes first
                const double t0 = bench_now();
                ab_triad(t[0], t[1], t[2], n);
                const double t1 = bench_now();
                ab_call(k, is_new ? k->new_fn : k->old_fn, &c, n, buf[3], buf[4], buf[0], buf[1],
                        buf[2]);
                const double t2 = bench_now();
                dt[is_new] = t2 - t1;
                ratio[is_new][r] = (bytes / dt[is_new]) / (12.0 * (double)n / (t1 - t0));
            }
            speed[r] = dt[0] / dt[1];
        }
        printf("%-22s ratio to triad: old %.3f new %.3f   new/old speed (median) %.3f\n", k->name,
               bench_median(ratio[0], reps), bench_median(ratio[1], reps),
               bench_median(speed, reps));
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "check")) return ab_check();
    if (argc >= 3) return ab_time(atoll(argv[1]), atoi(argv[2]), argc - 3, argv + 3);
    fprintf(stderr, "usage: ab_kernels check | ab_kernels N REPS [KOP:ACT filter...]\n");
    return 2;
}
