// transpose_avx512.c — the transposes of the CPU layer (ffn_cpu_transpose, transpose.c) in
// blocks whose every store is one whole 64-byte destination line: f32 16 x 16 (sixteen row
// loads, four rounds of shuffles), 16-bit 32 x 16 (row pairs interleaved into 32-bit elements,
// then the same 16 x 16 transpose). Into a 64-byte aligned destination the lines are stored
// non-temporally: the copy of a weight (tens of MB) is not read again before the GEMM reads it
// whole, so its lines need not be read first, and each store fills a write-combining buffer at
// once. (Half lines stored apart, as an earlier AVX2 kernel did, cost 5-8x a copy of the same
// bytes on an Intel Xeon, family 6 model 207: docs/blocks.md, "Operand layouts".) Blocks are
// walked in tiles of the source; the rows and columns left over go to the AVX2 kernels.
// Contract: kernels.h.
#include <immintrin.h>

#include "cpu/kernels.h"

// Tiles of the source (rows x columns) the blocks are walked in: a tile's source and destination
// lines stay within a few dozen pages. 64 x 64 f32 measured as fast as 16 x 256, 32 x 64 and
// 128 x 128 on the Xeon (within its run-to-run spread).
#define FFN_TR_TILE_R 64  // a multiple of 32
#define FFN_TR_TILE_C 64  // a multiple of 16

// r[0..15], 16 rows of 16 32-bit elements, transposed in place (t: scratch). Pairs of rows
// interleaved by 32 bits, then by 64 (within 128-bit lanes), then the 128-bit lanes gathered in
// two rounds.
static inline __attribute__((always_inline)) void ffn__tr16_regs(__m512 r[16], __m512 t[16]) {
    for (int k = 0; k < 8; k++) {
        t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (int k = 0; k < 4; k++) {
        const __m512d a = _mm512_castps_pd(t[4 * k]), b = _mm512_castps_pd(t[4 * k + 1]),
                      c = _mm512_castps_pd(t[4 * k + 2]), e = _mm512_castps_pd(t[4 * k + 3]);
        r[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
        r[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
    }
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) {
            t[8 * h + k] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + k + 4], 0x88);
            t[8 * h + k + 4] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + k + 4], 0xdd);
        }
    for (int k = 0; k < 8; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
        r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xdd);
    }
}

static inline __attribute__((always_inline)) void ffn__line(char *d, __m512 v, bool nt) {
    if (nt)
        _mm512_stream_ps((float *)d, v);
    else
        _mm512_storeu_ps((float *)d, v);
}

// f32: 16 source rows by 16 columns.
static inline __attribute__((always_inline)) void ffn__blk_f32(char *d, int64_t ldd, const char *s,
                                                               int64_t lds, bool nt) {
    __m512 r[16], t[16];
    for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps((const float *)s + k * lds);
    ffn__tr16_regs(r, t);
    for (int k = 0; k < 16; k++) ffn__line(d + k * ldd * 4, r[k], nt);
}

// 16-bit: 32 source rows by 16 columns. Row 2p's element j and row 2p + 1's form the 32-bit
// element j of pair p; the interleave (within 128-bit lanes) leaves the columns in the order
// 0-3, 8-11, 4-7, 12-15, so transposed row k is column ffn__u16_col[k].
static const int ffn__u16_col[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};

static inline __attribute__((always_inline)) void ffn__blk_u16(char *d, int64_t ldd, const char *s,
                                                               int64_t lds, bool nt) {
    __m512 r[16], t[16];
    for (int p = 0; p < 16; p++) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)((const uint16_t *)s + 2 * p * lds)),
                      b = _mm256_loadu_si256(
                          (const __m256i *)((const uint16_t *)s + (2 * p + 1) * lds));
        r[p] = _mm512_castsi512_ps(_mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_unpacklo_epi16(a, b)), _mm256_unpackhi_epi16(a, b), 1));
    }
    ffn__tr16_regs(r, t);
    for (int k = 0; k < 16; k++) ffn__line(d + ffn__u16_col[k] * ldd * 2, r[k], nt);
}

// Source rows [r0, r0 + nr) (nr a multiple of br) by columns [0, nc) (a multiple of 16), in
// blocks of br rows x 16 columns of esz-byte elements (br·esz = 64: one destination line), tile
// by tile; non-temporally (then fenced) where every line starts on a 64-byte boundary.
static inline __attribute__((always_inline)) void ffn__tiles(
    char *d, int64_t ldd, const char *s, int64_t lds, int64_t nc, int64_t r0, int64_t nr,
    int64_t br, size_t esz, void (*blk)(char *, int64_t, const char *, int64_t, bool)) {
    const int64_t r1 = r0 + nr, es = (int64_t)esz;
    const bool nt = ffn_tr_lines_whole(d, ldd, r0, esz);
    for (int64_t ib = r0; ib < r1; ib += FFN_TR_TILE_R)
        for (int64_t jb = 0; jb < nc; jb += FFN_TR_TILE_C) {
            const int64_t ie = ib + FFN_TR_TILE_R < r1 ? ib + FFN_TR_TILE_R : r1,
                          je = jb + FFN_TR_TILE_C < nc ? jb + FFN_TR_TILE_C : nc;
            for (int64_t i = ib; i < ie; i += br)
                for (int64_t j = jb; j < je; j += 16) {
                    char *q = d + (j * ldd + i) * es;
                    const char *p = s + (i * lds + j) * es;
                    if (nt)  // a constant in each call: two inlined blocks, no test per line
                        blk(q, ldd, p, lds, true);
                    else
                        blk(q, ldd, p, lds, false);
                }
        }
    if (nt) _mm_sfence();
}

// The rows and columns the blocks leave over go to the AVX2 kernels: first the columns past nc
// of the full blocks' rows, then the rows past r0 + nr.
void ffn_f32_transpose__avx512(float *d, int64_t ldd, const float *s, int64_t lds, int64_t C,
                               int64_t r0, int64_t r1) {
    const int64_t nr = (r1 - r0) / 16 * 16, nc = C / 16 * 16;
    ffn__tiles((char *)d, ldd, (const char *)s, lds, nc, r0, nr, 16, 4, ffn__blk_f32);
    if (nc < C && nr) ffn_f32_transpose__avx2(d + nc * ldd, ldd, s + nc, lds, C - nc, r0, r0 + nr);
    if (r0 + nr < r1) ffn_f32_transpose__avx2(d, ldd, s, lds, C, r0 + nr, r1);
}

void ffn_u16_transpose__avx512(uint16_t *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t C,
                               int64_t r0, int64_t r1) {
    const int64_t nr = (r1 - r0) / 32 * 32, nc = C / 16 * 16;
    ffn__tiles((char *)d, ldd, (const char *)s, lds, nc, r0, nr, 32, 2, ffn__blk_u16);
    if (nc < C && nr) ffn_u16_transpose__avx2(d + nc * ldd, ldd, s + nc, lds, C - nc, r0, r0 + nr);
    if (r0 + nr < r1) ffn_u16_transpose__avx2(d, ldd, s, lds, C, r0 + nr, r1);
}
