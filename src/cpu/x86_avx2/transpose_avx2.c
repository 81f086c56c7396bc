// transpose_avx2.c — the f32 and 16-bit transposes of the CPU layer (ffn_cpu_transpose,
// transpose.c) in 8 x 8 blocks of registers (AVX for f32, SSE for 16-bit elements): eight row
// loads, three rounds of shuffles, eight stores. Source rows go two blocks at a time (16 rows),
// so each destination row receives 64 (f32) or 32 contiguous bytes per pass, in tiles of 64 x 64
// elements; f32 lines go to a 64-byte aligned destination non-temporally, each line's two halves
// stored back to back. Rows and columns left over are copied one element at a time. Contract:
// kernels.h.
#include <immintrin.h>
#include <string.h>

#include "cpu/kernels.h"

// The 8 x 8 block at s, transposed into o[0..7] (o[k]: column k of the block).
static inline __attribute__((always_inline)) void ffn__tr8x8_regs(__m256 o[8], const float *s,
                                                                  int64_t lds) {
    const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + lds),
                 r2 = _mm256_loadu_ps(s + 2 * lds), r3 = _mm256_loadu_ps(s + 3 * lds),
                 r4 = _mm256_loadu_ps(s + 4 * lds), r5 = _mm256_loadu_ps(s + 5 * lds),
                 r6 = _mm256_loadu_ps(s + 6 * lds), r7 = _mm256_loadu_ps(s + 7 * lds);
    // Pairs of rows interleaved, then groups of four, then the 128-bit halves exchanged.
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)),
                 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
                 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)),
                 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
                 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)),
                 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
                 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)),
                 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    o[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    o[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    o[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    o[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    o[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    o[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    o[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    o[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

static inline __attribute__((always_inline)) void ffn__st8(float *d, __m256 v, bool nt) {
    if (nt)
        _mm256_stream_ps(d, v);
    else
        _mm256_storeu_ps(d, v);
}

// Two blocks side by side in the destination (source rows s and s + 8·lds): each destination
// row's 16 elements stored by two stores in a row. nt (the lines whole, ffn_tr_lines_whole):
// non-temporally, as the destination is not read again before the GEMM reads it whole (a copy of
// weights: 46 MB), so its lines need not be read first; a line's halves stored apart (eight other
// lines' stores between them) cost 5-8x a copy on an Intel Xeon (family 6 model 207).
static inline __attribute__((always_inline)) void ffn__tr8x16(float *d, int64_t ldd, const float *s,
                                                              int64_t lds, bool nt) {
    __m256 a[8], b[8];
    ffn__tr8x8_regs(a, s, lds);
    ffn__tr8x8_regs(b, s + 8 * lds, lds);
    for (int k = 0; k < 8; k++) {
        ffn__st8(d + k * ldd, a[k], nt);
        ffn__st8(d + k * ldd + 8, b[k], nt);
    }
}

static inline __attribute__((always_inline)) void ffn__tr8x8_u16(uint16_t *d, int64_t ldd,
                                                                 const uint16_t *s, int64_t lds) {
    __m128i r[8], t[8], u[8];
    for (int k = 0; k < 8; k++) r[k] = _mm_loadu_si128((const __m128i *)(s + k * lds));
    // Pairs of rows interleaved by 16 bits, then by 32, then by 64.
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    for (int k = 0; k < 2; k++) {
        u[4 * k] = _mm_unpacklo_epi32(t[4 * k], t[4 * k + 2]);
        u[4 * k + 1] = _mm_unpackhi_epi32(t[4 * k], t[4 * k + 2]);
        u[4 * k + 2] = _mm_unpacklo_epi32(t[4 * k + 1], t[4 * k + 3]);
        u[4 * k + 3] = _mm_unpackhi_epi32(t[4 * k + 1], t[4 * k + 3]);
    }
    for (int k = 0; k < 4; k++) {
        _mm_storeu_si128((__m128i *)(d + 2 * k * ldd), _mm_unpacklo_epi64(u[k], u[k + 4]));
        _mm_storeu_si128((__m128i *)(d + (2 * k + 1) * ldd), _mm_unpackhi_epi64(u[k], u[k + 4]));
    }
}

// Tiles of the source (rows x columns) the 8 x 8 blocks are walked in: a tile's source rows and
// destination rows stay within a few dozen pages. (Strips of 16 rows across all the columns
// touched one destination page per column: the TLB missed on nearly every store; a 2048 x 5632
// f32 matrix took 20-28 ms.)
#define FFN_TR_TILE_R 64  // a multiple of 16
#define FFN_TR_TILE_C 64  // a multiple of 8

// Source rows [r0, r1): 16 rows (two 8 x 8 blocks side by side, tr8x16: 16 contiguous elements
// of each destination row per pass) by 8 columns at a time, tile by tile; then what is left one
// element at a time; esz-byte elements.
static inline __attribute__((always_inline)) void ffn__tr_strips(
    char *d, int64_t ldd, const char *s, int64_t lds, int64_t C, int64_t r0, int64_t r1, size_t esz,
    void (*tr8x16)(char *, int64_t, const char *, int64_t)) {
    const int64_t r16 = r0 + (r1 - r0) / 16 * 16, c8 = C / 8 * 8;
    for (int64_t ib = r0; ib < r16; ib += FFN_TR_TILE_R)
        for (int64_t jb = 0; jb < c8; jb += FFN_TR_TILE_C) {
            const int64_t ie = ib + FFN_TR_TILE_R < r16 ? ib + FFN_TR_TILE_R : r16,
                          je = jb + FFN_TR_TILE_C < c8 ? jb + FFN_TR_TILE_C : c8;
            for (int64_t i = ib; i < ie; i += 16)
                for (int64_t j = jb; j < je; j += 8)
                    tr8x16(d + (j * ldd + i) * esz, ldd, s + (i * lds + j) * esz, lds);
        }
    for (int64_t i = r0; i < r16; i++)
        for (int64_t j = c8; j < C; j++)
            memcpy(d + (j * ldd + i) * esz, s + (i * lds + j) * esz, esz);
    for (int64_t i = r16; i < r1; i++)
        for (int64_t j = 0; j < C; j++)
            memcpy(d + (j * ldd + i) * esz, s + (i * lds + j) * esz, esz);
}

static inline __attribute__((always_inline)) void ffn__tr8x16_f32_at(char *d, int64_t ldd,
                                                                     const char *s, int64_t lds) {
    ffn__tr8x16((float *)d, ldd, (const float *)s, lds, false);
}

static inline __attribute__((always_inline)) void ffn__tr8x16_f32_nt_at(char *d, int64_t ldd,
                                                                        const char *s,
                                                                        int64_t lds) {
    ffn__tr8x16((float *)d, ldd, (const float *)s, lds, true);
}

static inline __attribute__((always_inline)) void ffn__tr8x16_u16_at(char *d, int64_t ldd,
                                                                     const char *s, int64_t lds) {
    ffn__tr8x8_u16((uint16_t *)d, ldd, (const uint16_t *)s, lds);
    ffn__tr8x8_u16((uint16_t *)d + 8, ldd, (const uint16_t *)s + 8 * lds, lds);
}

void ffn_f32_transpose__avx2(float *d, int64_t ldd, const float *s, int64_t lds, int64_t C,
                             int64_t r0, int64_t r1) {
    // Every pair of blocks on whole 64-byte lines: non-temporal, fenced before the GEMM reads
    // them.
    if (ffn_tr_lines_whole(d, ldd, r0, sizeof *d)) {
        ffn__tr_strips((char *)d, ldd, (const char *)s, lds, C, r0, r1, 4, ffn__tr8x16_f32_nt_at);
        _mm_sfence();
    } else {
        ffn__tr_strips((char *)d, ldd, (const char *)s, lds, C, r0, r1, 4, ffn__tr8x16_f32_at);
    }
}

void ffn_u16_transpose__avx2(uint16_t *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t C,
                             int64_t r0, int64_t r1) {
    ffn__tr_strips((char *)d, ldd, (const char *)s, lds, C, r0, r1, 2, ffn__tr8x16_u16_at);
}
