// zmm_throughput.c — issue cost of the AVX-512 instructions the activation kernels are made of,
// on this core: 12 independent chains of one instruction, cycles per instruction at a nominal
// 3.45 GHz (docs/performance.md "One core"). A mask-producing op is timed with the masked move that
// consumes it. Also a 16-lane vpgatherdd from a 128 KiB table (a bf16-input lookup table), and
// the same lookups by scalar loads (four results packed into one 64-bit store).
//   cc -O2 -march=native bench/zmm_throughput.c -o /tmp/zmm_throughput && /tmp/zmm_throughput
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"

#define GHZ 3.45
#define ITERS 10000000L
#define I(x) _mm512_castps_si512(x)
#define F(x) _mm512_castsi512_ps(x)
// Distinct starting values, so the compiler cannot merge the chains.
#define TIME(NAME, OP)                                                                          \
    do {                                                                                        \
        volatile float q = 1.0f;                                                                \
        __m512 a[12];                                                                           \
        for (int k = 0; k < 12; k++) a[k] = _mm512_set1_ps(q + (float)k);                       \
        const __m512 c = _mm512_set1_ps(0.9999f), d = _mm512_set1_ps(1e-7f);                    \
        const __m512i ci = _mm512_set1_epi32(3);                                                \
        (void)c, (void)d, (void)ci;                                                             \
        const double t0 = bench_now();                                                          \
        for (long i = 0; i < ITERS; i++) {                                                      \
            _Pragma("GCC unroll 12") for (int k = 0; k < 12; k++) {                             \
                __m512 x = a[k];                                                                \
                OP;                                                                             \
                a[k] = x;                                                                       \
            }                                                                                   \
            __asm__ volatile("" ::"v"(a[0]), "v"(a[1]), "v"(a[2]), "v"(a[3]), "v"(a[4]),        \
                             "v"(a[5]), "v"(a[6]), "v"(a[7]), "v"(a[8]), "v"(a[9]), "v"(a[10]), \
                             "v"(a[11]));                                                       \
        }                                                                                       \
        const double t = bench_now() - t0;                                                      \
        printf("%-26s %.2f cycles\n", NAME, t *GHZ * 1e9 / (ITERS * 12.0));                     \
    } while (0)

__attribute__((noinline)) static void gather16(const uint16_t *x, uint16_t *y, long n,
                                               const uint16_t *table) {
    for (long i = 0; i < n; i += 32) {
        const __m512i v = _mm512_loadu_si512(x + i);
        const __m512i lo = _mm512_and_si512(v, _mm512_set1_epi32(0xffff));
        const __m512i hi = _mm512_srli_epi32(v, 16);
        const __m512i a = _mm512_i32gather_epi32(lo, (const void *)table, 2);
        const __m512i b = _mm512_i32gather_epi32(hi, (const void *)table, 2);
        _mm512_storeu_si512(y + i, _mm512_ternarylogic_epi32(_mm512_slli_epi32(b, 16), a,
                                                             _mm512_set1_epi32(0xffff), 0xf8));
    }
}

__attribute__((noinline)) static void scalar16(const uint16_t *x, uint16_t *y, long n,
                                               const uint16_t *table) {
    for (long i = 0; i < n; i += 4) {
        uint64_t r = table[x[i + 3]];
        r = r << 16 | table[x[i + 2]];
        r = r << 16 | table[x[i + 1]];
        r = r << 16 | table[x[i]];
        memcpy(y + i, &r, 8);
    }
}

int main(void) {
    TIME("vfmadd231ps", x = _mm512_fmadd_ps(x, c, d));
    TIME("vmulps", x = _mm512_mul_ps(x, c));
    TIME("vaddps", x = _mm512_add_ps(x, d));
    TIME("vpermps", x = _mm512_permutexvar_ps(I(c), x));
    TIME("vpermt2ps (32 entries)", x = _mm512_permutex2var_ps(x, I(c), d));
    TIME("vscalefps", x = _mm512_scalef_ps(x, d));
    TIME("vrcp14ps", x = _mm512_rcp14_ps(x));
    TIME("vdivps", x = _mm512_div_ps(c, x));
    TIME("vcvtneps2bf16", x = F(_mm512_castsi256_si512((__m256i)_mm512_cvtneps_pbh(x))));
    TIME("vcvtne2ps2bf16", x = (__m512)_mm512_cvtne2ps_pbh(x, c));
    TIME("vpmovzxwd", x = F(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(I(x)))));
    TIME("vpslld", x = F(_mm512_slli_epi32(I(x), 1)));
    TIME("vpandd", x = _mm512_and_ps(x, c));
    TIME("vpermw", x = F(_mm512_permutexvar_epi16(I(c), I(x))));
    TIME("vfpclassps + masked move", x = _mm512_mask_mov_ps(x, _mm512_fpclass_ps_mask(x, 0x20), c));
    enum { N = 4096 };
    uint16_t *x = aligned_alloc(64, N * 2), *y = aligned_alloc(64, N * 2);
    uint16_t *table = aligned_alloc(64, 65536 * 2 + 64);
    for (long i = 0; i < 65536; i++) table[i] = (uint16_t)(i * 7);
    uint64_t s = 1;
    for (long i = 0; i < N; i++) {  // bf16 of roughly N(0,1)-sized values
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (uint16_t)(0x3e00 + (s >> 33) % 0x400) ^ (uint16_t)((s >> 20) & 0x8000);
    }
    static const struct {
        const char *name;
        void (*fn)(const uint16_t *, uint16_t *, long, const uint16_t *);
    } lookups[] = {{"table lookup (vpgatherdd)", gather16}, {"table lookup (scalar)", scalar16}};
    for (int k = 0; k < 2; k++) {
        double best = 1e30;
        for (int r = 0; r < 2000; r++) {
            const double t0 = bench_now();
            lookups[k].fn(x, y, N, table);
            const double t = bench_now() - t0;
            if (t < best) best = t;
        }
        printf("%-26s %.2f cycles per 16 elements (y[1] %u)\n", lookups[k].name,
               best * GHZ * 1e9 / (N / 16.0), (unsigned)y[1]);
    }
    free(x), free(y), free(table);
    return 0;
}
