// gemv_avx512.c — the skinny GEMM kernels for AVX-512 F/BW: C = A·B (+ bias) (+ C) for a few
// rows of A (M ≤ FFN_SKINNY_MAX_M) and bf16 or f32 weights B, the decode case where the time is
// that of reading B once from memory. Not a general GEMM: gemm_skinny.c decides when they run,
// packs A and splits the columns over threads; kernels.h states the contract. Each driver below is
// written once for both weight dtypes (a constant argument, inlined: one instance per dtype).
//
// Widening: a bf16 weight is the top half of an f32, so a 512-bit load of 32 weights gives the
// odd-k ones by a mask (0xffff0000) and the even-k ones by a 16-bit shift: exact, subnormals,
// infinities and NaNs kept (vdpbf16ps is not used: it flushes subnormals). f32 weights are loaded
// as they are, 16 per vector. Products and sums are f32 FMAs (MXCSR as the caller has it: IEEE by
// default).
//
//   "ba" (weights contiguous in k, nn.Linear [out, in]): column n is a dot product of A's row
//        with weight row n. 4 weight rows are streamed side by side, so the hardware prefetchers
//        see 4 independent streams (bf16 rows that start off a 64-byte boundary by aligned loads
//        and a permutation); A (packed to match the two weight
//        vectors of a 32-k chunk) comes from L1. Each (m, n) sums in its own register: lane i of
//        chunk c holds k = 32c + 2i then 32c + 2i + 1 (bf16 weights) or k = 32c + i then
//        32c + 16 + i (f32), and the 16 lanes are reduced by a fixed tree.
//   "ab" (weights contiguous in n, Conv1D [in, out], or [out, in] read transposed by the
//        backward; M ≤ FFN_SKINNY_AB_MAX_M): an axpy per weight row k, two vectors of 16 columns
//        per broadcast of A, 8 rows k in flight (bf16 rows that start off a 64-byte boundary, at
//        one or two rows of A: aligned loads and a permutation that widens as well); the partial
//        sums of a piece of up to 8192 / M columns live in an L1-resident buffer between row
//        groups. Each column sums over k in order. With g->A2 (bf16 weights and A, beyond
//        FFN_SKINNY_MAX_M rows) blocks of 32 columns go through vdpbf16ps instead (ffn__ab_dp).
#include "cpu/simd/simd_avx512.h"

#define FFN_NOINLINE __attribute__((noinline))

// The hint of the software prefetches of the next weight rows (one block of rows ahead: "ba"'s
// next NB rows, "ab"'s next 8 rows of the piece): into L1 as well (T0), or into L2 only (T1) in
// the twin of these kernels that gemv_avx512_l2.c compiles (FFN_GEMV_L2: the same code, the
// entry points named ffn_gemv_*_l2__avx512). Which hint streams faster depends on the CPU
// (dispatch.c picks; docs/blocks.md, "One token: the skinny GEMM"): on AMD EPYC Zen 5 (family 26,
// one thread, cold weights, M = 1) T0 streamed bf16 weights 15-30% faster than T1 at every shape
// measured, f32 ones alike; on Zen 4 (family 25) and an Intel Xeon (family 6 model 207) T1 streamed
// the one-token blocks as fast or faster (Zen 4 1.1-1.6x, the Xeon's f32 1.1-1.4x).
#ifdef FFN_GEMV_L2
#    define FFN_PF_HINT _MM_HINT_T1
#    define ffn_gemv_ba__avx512 ffn_gemv_ba_l2__avx512
#    define ffn_gemv_ab__avx512 ffn_gemv_ab_l2__avx512
#else
#    define FFN_PF_HINT _MM_HINT_T0
#endif

// bf16 weight rows that all start sh elements past a 64-byte boundary (a malloc'd or mmapped
// tensor; rows a multiple of 64 bytes) are read by aligned loads and a permutation, the same
// weights in the same lanes: the same sums, and no load split across two lines. sh (1-31) when
// g's weights are such rows, else 0.
static inline int ffn__bf16_shift(const struct ffn_skinny *g) {
    const uintptr_t off = (uintptr_t)g->B % 64;
    return g->bdt == FFN_DTYPE_BF16 && off % 2 == 0 && g->ldb % 32 == 0 ? (int)(off / 2) : 0;
}

// The two 64-byte lines that the 32 bf16 weights at a + sh lie across, by aligned loads masked
// to those weights (the rest zero).
FFN_VINLINE void ffn__bf16_lines(const uint16_t *a, int sh, __m512i *l0, __m512i *l1) {
    *l0 = _mm512_maskz_loadu_epi16((__mmask32)(0xffffffffu << sh), a);
    *l1 = _mm512_maskz_loadu_epi16((__mmask32)((1u << sh) - 1), a + 32);
}

// --- "ba": dot products ------------------------------------------------------------------------

// k elements per block when A's rows are taken in two groups (M > 4): both groups read the
// block's 4 weight rows (4 × 1 KiB in bf16, 4 × 2 KiB in f32) while they are in L1.
#define FFN_BA_KB 512

// The 32 weights of weight row n at k..k+31 as two f32 vectors, each matching 16 floats of the
// packed A (kernels.h): bf16 even k / odd k, f32 k..k+15 / k+16..k+31. km: the valid k lanes
// (masked lanes read as zero). With pf, the same k of the weight row `ahead` rows further, one
// line per 64 bytes (FFN_PF_HINT). RA (bf16): the rows start sh elements past a 64-byte boundary
// (k is a multiple of 32, so the chunk does too); a full chunk is then read from the two lines it
// lies across (masked to its own weights) and put in place by one permutation.
FFN_VINLINE void ffn__ba_load(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n, int64_t k,
                              __mmask32 km, bool full, bool pf, int64_t ahead, bool RA, int sh,
                              __m512 *lo, __m512 *hi) {
    if (bdt == FFN_DTYPE_F32) {
        const float *w = (const float *)g->B + n * g->ldb + k;
        if (pf) {
            _mm_prefetch((const char *)(w + ahead * g->ldb), FFN_PF_HINT);
            _mm_prefetch((const char *)(w + ahead * g->ldb + 16), FFN_PF_HINT);
        }
        *lo = full ? _mm512_loadu_ps(w) : _mm512_maskz_loadu_ps((__mmask16)km, w);
        *hi = full ? _mm512_loadu_ps(w + 16) : _mm512_maskz_loadu_ps((__mmask16)(km >> 16), w + 16);
    } else {
        const uint16_t *w = (const uint16_t *)g->B + n * g->ldb + k;
        if (pf) _mm_prefetch((const char *)(w + ahead * g->ldb), FFN_PF_HINT);
        __m512i raw;
        if (RA && full) {  // the two lines the 32 weights lie across, by aligned loads
            const __m512i ix = _mm512_add_epi16(
                _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15,
                                 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                _mm512_set1_epi16((short)sh));
            __m512i l0, l1;
            ffn__bf16_lines(w - sh, sh, &l0, &l1);
            raw = _mm512_permutex2var_epi16(l0, ix, l1);
        } else {
            raw = full ? _mm512_loadu_si512(w) : _mm512_maskz_loadu_epi16(km, w);
        }
        *lo = _mm512_castsi512_ps(_mm512_slli_epi32(raw, 16));
        *hi = _mm512_castsi512_ps(_mm512_and_si512(raw, _mm512_set1_epi32((int)0xffff0000u)));
    }
}

// One 32-k chunk at k for weight rows n..n+NB-1 and A rows m0..m0+MG-1: acc[m][j] += products.
// km: the valid k lanes (a partial last chunk; A's padding is zero, the weights masked to zero).
FFN_VINLINE void ffn__ba_chunk(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n,
                               int64_t m0, int MG, int NB, int64_t k, __mmask32 km, bool full,
                               bool pf, bool RA, int sh, __m512 acc[4][8]) {
#pragma GCC unroll 8
    for (int j = 0; j < NB; j++) {
        __m512 lo, hi;
        ffn__ba_load(g, bdt, n + j, k, km, full, pf, NB, RA, sh, &lo, &hi);
#pragma GCC unroll 4
        for (int m = 0; m < MG; m++) {
            const float *a = g->A + (m0 + m) * g->lda + k;
            acc[m][j] = _mm512_fmadd_ps(lo, _mm512_load_ps(a), acc[m][j]);
            acc[m][j] = _mm512_fmadd_ps(hi, _mm512_load_ps(a + 16), acc[m][j]);
        }
    }
}

// The final value of C[m, n] from its sum s: + bias, + old C, rounded to C's dtype.
static inline void ffn__put(const struct ffn_skinny *g, int64_t m, int64_t n, float s) {
    if (g->bias) s += g->bias[n];
    if (g->cdt == FFN_DTYPE_F32) {
        float *c = (float *)g->C + m * g->ldc + n;
        *c = g->acc ? s + *c : s;
    } else {
        uint16_t *c = (uint16_t *)g->C + m * g->ldc + n;
        *c = ffn_f32_to_bf16(g->acc ? s + ffn_bf16_to_f32(*c) : s);
    }
}

// Weight rows n..n+NB-1, A rows m0..m0+MG-1, k in [k0, k1) (k0 a multiple of 32). The sums start
// from zero (first) or from sp; they end in sp, or in C (last).
FFN_VINLINE void ffn__ba_run(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n, int64_t m0,
                             int MG, int NB, int64_t k0, int64_t k1, bool first, bool last, bool RA,
                             int sh, __m512 *sp) {
    __m512 acc[4][8];
#pragma GCC unroll 4
    for (int m = 0; m < MG; m++)
#pragma GCC unroll 8
        for (int j = 0; j < NB; j++) acc[m][j] = first ? _mm512_setzero_ps() : sp[m * NB + j];
    // The next block's weight rows are prefetched as this one streams (each chunk's lines):
    // the hardware prefetchers alone start each short row late (K = 768: 11 -> 20
    // GB/s, one thread, AMD EPYC Zen 4).
    const bool pf = n + 2 * NB <= g->N;
    int64_t k = k0;
    if (pf)
        for (; k + 32 <= k1; k += 32)
            ffn__ba_chunk(g, bdt, n, m0, MG, NB, k, 0, true, true, RA, sh, acc);
    else
        for (; k + 32 <= k1; k += 32)
            ffn__ba_chunk(g, bdt, n, m0, MG, NB, k, 0, true, false, RA, sh, acc);
    if (k < k1)
        ffn__ba_chunk(g, bdt, n, m0, MG, NB, k, (__mmask32)((1ull << (k1 - k)) - 1), false, false,
                      false, 0, acc);
#pragma GCC unroll 4
    for (int m = 0; m < MG; m++)
#pragma GCC unroll 8
        for (int j = 0; j < NB; j++) {
            if (last)
                ffn__put(g, m0 + m, n + j, _mm512_reduce_add_ps(acc[m][j]));
            else
                sp[m * NB + j] = acc[m][j];
        }
}

// One instance per (MG, NB) the driver below uses, so that every accumulator is a register.
FFN_VINLINE void ffn__ba_group(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n,
                               int64_t m0, int mg, int nb, int64_t k0, int64_t k1, bool first,
                               bool last, bool RA, int sh, __m512 *sp) {
    switch (nb * 8 + mg) {
    case 4 * 8 + 1: ffn__ba_run(g, bdt, n, m0, 1, 4, k0, k1, first, last, RA, sh, sp); break;
    case 4 * 8 + 2: ffn__ba_run(g, bdt, n, m0, 2, 4, k0, k1, first, last, RA, sh, sp); break;
    case 4 * 8 + 3: ffn__ba_run(g, bdt, n, m0, 3, 4, k0, k1, first, last, RA, sh, sp); break;
    case 4 * 8 + 4: ffn__ba_run(g, bdt, n, m0, 4, 4, k0, k1, first, last, RA, sh, sp); break;
    case 1 * 8 + 1: ffn__ba_run(g, bdt, n, m0, 1, 1, k0, k1, first, last, RA, sh, sp); break;
    case 1 * 8 + 2: ffn__ba_run(g, bdt, n, m0, 2, 1, k0, k1, first, last, RA, sh, sp); break;
    case 1 * 8 + 3: ffn__ba_run(g, bdt, n, m0, 3, 1, k0, k1, first, last, RA, sh, sp); break;
    case 1 * 8 + 4: ffn__ba_run(g, bdt, n, m0, 4, 1, k0, k1, first, last, RA, sh, sp); break;
    default: break;
    }
}

// nb weight rows from n: all of A's rows, in groups of at most 4, the
// k range in blocks only when there are two groups.
FFN_VINLINE void ffn__ba_cols(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n, int nb,
                              bool RA, int sh) {
    const int gmax = 4;
    __m512 sp[4 * 8];
    const int64_t K = g->K, kb = g->M > gmax ? FFN_BA_KB : K;
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
        const int64_t k1 = k0 + kb < K ? k0 + kb : K;
        for (int64_t m0 = 0; m0 < g->M; m0 += gmax) {
            const int mg = (int)(g->M - m0 < gmax ? g->M - m0 : gmax);
            // The second group's sums wait in sp between blocks: one spill buffer per group.
            ffn__ba_group(g, bdt, n, m0, mg, nb, k0, k1, k0 == 0, k1 == K, RA, sh,
                          sp + (m0 / gmax) * 16);
        }
    }
}

FFN_VINLINE void ffn__ba(const struct ffn_skinny *g, enum ffn_dtype bdt, int64_t n0, int64_t n1,
                         bool RA, int sh) {
    // 4 weight rows in flight at any M (Zen 5, M 1-2, bf16: 4 rows streamed 8-25% faster than 8).
    const int nb = 4;
    int64_t n = n0;
    for (; n + nb <= n1; n += nb) ffn__ba_cols(g, bdt, n, nb, RA, sh);
    for (; n < n1; n++) ffn__ba_cols(g, bdt, n, 1, RA, sh);
}

// One function per instance, each compiled on its own (all inlined into one, the bf16 llama-like
// block streamed 23.9 against 26.8 GB/s: register allocation and layout of the shared body).
static FFN_NOINLINE void ffn__ba_f32(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    ffn__ba(g, FFN_DTYPE_F32, n0, n1, false, 0);
}
static FFN_NOINLINE void ffn__ba_bf16(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    ffn__ba(g, FFN_DTYPE_BF16, n0, n1, false, 0);
}
static FFN_NOINLINE void ffn__ba_bf16_ra(const struct ffn_skinny *g, int64_t n0, int64_t n1,
                                         int sh) {
    ffn__ba(g, FFN_DTYPE_BF16, n0, n1, true, sh);
}

void ffn_gemv_ba__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    // Realigned bf16 rows (ffn__bf16_shift): Zen 5, M 1, 16 bytes off: 0.61-0.65 -> 0.67-0.72 of
    // the triad, 0.72-0.77 aligned. f32 weights keep their unaligned loads: there the three
    // aligned loads and two permutations per chunk were slower (llama-like, 16 bytes off: 27.5
    // against 30 GB/s).
    const int sh = ffn__bf16_shift(g);
    if (g->bdt == FFN_DTYPE_F32)
        ffn__ba_f32(g, n0, n1);
    else if (sh)
        ffn__ba_bf16_ra(g, n0, n1, sh);
    else
        ffn__ba_bf16(g, n0, n1);
}

// --- "ab": axpy over weight rows -----------------------------------------------------------------

// f32 partial sums of one piece of columns, all rows of A: M · piece ≤ FFN_AB_BUF.
#define FFN_AB_BUF 8192

// Rows k0..k0+KU-1 of bf16 weights, the 32 columns at n, by vdpbf16ps (g->A2): pairs of rows
// interleaved, (k + 1, k) in each 32-bit lane, by vpunpck[lh]wd within 128-bit lanes, so the
// sums of a block lie in buf permuted: its first 16 floats are the columns 0-3, 8-11, 16-19,
// 24-27, the next 16 the columns 4-7, 12-15, 20-23, 28-31 (ffn__ab_put puts them back). k0 even;
// an odd KU (the last row of K) pairs its last row with zeros.
FFN_VINLINE void ffn__ab_dp(const struct ffn_skinny *g, float *s, int64_t ld, int64_t n, int64_t k0,
                            int KU, bool first, bool pf) {
    const uint16_t *B = (const uint16_t *)g->B;
    __m512i bl[4], bh[4];
#pragma GCC unroll 4
    for (int j = 0; j < (KU + 1) / 2; j++) {
        const uint16_t *r0 = B + (k0 + 2 * j) * g->ldb + n;
        if (pf) {
            _mm_prefetch((const char *)(r0 + KU * g->ldb), _MM_HINT_T1);
            _mm_prefetch((const char *)(r0 + (KU + 1) * g->ldb), _MM_HINT_T1);
        }
        const __m512i x0 = _mm512_loadu_si512(r0);
        const __m512i x1 =
            2 * j + 1 < KU ? _mm512_loadu_si512(r0 + g->ldb) : _mm512_setzero_si512();
        bl[j] = _mm512_unpacklo_epi16(x1, x0);
        bh[j] = _mm512_unpackhi_epi16(x1, x0);
    }
    const int64_t lda2 = g->lda / 2;
    for (int64_t m = 0; m < g->M; m++) {
        const uint32_t *a = g->A2 + m * lda2 + k0 / 2;
        __m512 acc0 = first ? _mm512_setzero_ps() : _mm512_load_ps(s + m * ld);
        __m512 acc1 = first ? _mm512_setzero_ps() : _mm512_load_ps(s + m * ld + 16);
#pragma GCC unroll 4
        for (int j = 0; j < (KU + 1) / 2; j++) {
            const __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[j]);
            acc0 = _mm512_dpbf16_ps(acc0, av, (__m512bh)bl[j]);
            acc1 = _mm512_dpbf16_ps(acc1, av, (__m512bh)bh[j]);
        }
        _mm512_store_ps(s + m * ld, acc0);
        _mm512_store_ps(s + m * ld + 16, acc1);
    }
}

// NV vectors of columns at n (of the piece from p0) by widening and FMAs: each broadcast of A
// serves NV FMAs; nm masks the last vector's columns. With pf, the next group's rows, one line
// per 64 bytes of the piece (FFN_PF_HINT; N = 768, bf16: 11 -> 19 GB/s into L2).
FFN_VINLINE void ffn__ab_fma(const struct ffn_skinny *g, enum ffn_dtype bdt, float *s, int64_t ld,
                             int64_t p0, int64_t n, int64_t k0, int KU, int NV, bool full,
                             __mmask16 nm, bool first, bool pf, bool RA, int sh) {
    const int64_t esz = bdt == FFN_DTYPE_F32 ? 4 : 2;
    const char *B = (const char *)g->B;
    __m512 b[2][8];
#pragma GCC unroll 8
    for (int u = 0; u < KU; u++) {
        const char *row = B + (k0 + u) * g->ldb * esz;
        if (pf)
            for (int64_t off = 0; off < 16 * NV * esz; off += 64)
                if (!(((n - p0) * esz + off) & 63))
                    _mm_prefetch(B + ((k0 + KU + u) * g->ldb + n) * esz + off, FFN_PF_HINT);
        if (RA && NV == 2) {  // the two lines the 32 weights lie across, by aligned loads
            __m512i l0, l1;
            ffn__bf16_lines((const uint16_t *)row + n - sh, sh, &l0, &l1);
            // Weight n + i into the top half of lane i (the bottom half zero): widened as is.
            const __m512i ix = _mm512_add_epi16(
                _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0, 7, 0, 6, 0,
                                 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0),
                _mm512_set1_epi16((short)sh));
            b[0][u] = _mm512_castsi512_ps(
                _mm512_maskz_permutex2var_epi16((__mmask32)0xaaaaaaaau, l0, ix, l1));
            b[1][u] = _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi16(
                (__mmask32)0xaaaaaaaau, l0, _mm512_add_epi16(ix, _mm512_set1_epi16(16)), l1));
            continue;
        }
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            b[v][u] =
                ffn__vload(row, n + 16 * v, bdt, full || v + 1 < NV, v + 1 < NV ? 0xffff : nm);
    }
    for (int64_t m = 0; m < g->M; m++) {
        const float *a = g->A + m * g->lda + k0;
        __m512 acc[2];
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[v] = first ? _mm512_setzero_ps() : _mm512_load_ps(s + m * ld + 16 * v);
#pragma GCC unroll 8
        for (int u = 0; u < KU; u++) {
            const __m512 av = _mm512_set1_ps(a[u]);
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++) acc[v] = _mm512_fmadd_ps(av, b[v][u], acc[v]);
        }
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) _mm512_store_ps(s + m * ld + 16 * v, acc[v]);
    }
}

// Rows k0..k0+KU-1 of the weights, columns [p0, p1) (a piece), into the partial sums buf
// (row m at buf + m·ld): buf[m][n] = buf[m][n] + A[m][k]·B[k][n], k in order. Full blocks of 32
// columns by vdpbf16ps when g->A2 is set (then k0 is even), else two vectors at a time; the rest
// one vector at a time.
FFN_VINLINE void ffn__ab_rows(const struct ffn_skinny *g, enum ffn_dtype bdt, float *buf,
                              int64_t ld, int64_t p0, int64_t p1, int64_t k0, int KU, bool first,
                              bool pf, bool RA, int sh) {
    int64_t n = p0;
    if (bdt == FFN_DTYPE_BF16 && g->A2)
        for (; n + 32 <= p1; n += 32) ffn__ab_dp(g, buf + (n - p0), ld, n, k0, KU, first, pf);
    for (; n + 32 <= p1; n += 32)
        ffn__ab_fma(g, bdt, buf + (n - p0), ld, p0, n, k0, KU, 2, true, 0xffff, first, pf, RA, sh);
    for (; n < p1; n += 16) {
        const bool full = n + 16 <= p1;
        const __mmask16 nm = full ? 0xffff : (__mmask16)((1u << (p1 - n)) - 1);
        ffn__ab_fma(g, bdt, buf + (n - p0), ld, p0, n, k0, KU, 1, full, nm, first, pf, false, 0);
    }
}

// C[m, n..n+15] from the sums r (+ bias) (+ old C), rounded once to C's dtype.
FFN_VINLINE void ffn__ab_put(const struct ffn_skinny *g, int64_t m, int64_t n, __m512 r, bool full,
                             __mmask16 nm) {
    if (g->bias) r = _mm512_add_ps(r, ffn__vload(g->bias, n, FFN_DTYPE_F32, full, nm));
    void *c = (char *)g->C + (size_t)(m * g->ldc) * ffn_dtype_size(g->cdt);
    if (g->acc) r = _mm512_add_ps(r, ffn__vload(c, n, g->cdt, full, nm));
    ffn__vstore(c, n, g->cdt, r, full ? FFN_ST_FULL : FFN_ST_MASK, nm, g->cvt);
}

// buf: FFN_AB_BUF floats, 64-byte aligned.
FFN_VINLINE void ffn__ab(const struct ffn_skinny *g, enum ffn_dtype bdt, float *buf, int64_t n0,
                         int64_t n1, bool RA, int sh) {
    const int64_t K = g->K, M = g->M;
    // Piece width: a multiple of 32 columns, so that every piece starts on a 64-byte boundary of
    // the weight rows when the thread's range does (bf16 M = 12: 2.30 -> 1.72 ms unaligned).
    // With vdpbf16ps (7+ rows of A) the sums' rows are one line longer than the piece: rows of
    // exactly 2 KiB (M = 16) cost 16 gpt2-small bf16 blocks, forward + backward at 16 tokens
    // through ffn.h with weights from malloc (each its own mapping), 4.8 against 3.8 ms, and
    // bench/skinny_gemm.c at M = 16 0-7 % (AMD EPYC Zen 4).
    const bool dp = bdt == FFN_DTYPE_BF16 && g->A2;
    const int64_t pad = dp ? 16 : 0, cw = (FFN_AB_BUF / M - pad) / 32 * 32;
    for (int64_t p0 = n0; p0 < n1; p0 += cw) {
        const int64_t p1 = p0 + cw < n1 ? p0 + cw : n1, ld = (p1 - p0 + 15) / 16 * 16 + pad;
        int64_t k = 0;
        for (; k + 16 <= K; k += 8)
            ffn__ab_rows(g, bdt, buf, ld, p0, p1, k, 8, k == 0, true, RA, sh);
        for (; k + 8 <= K; k += 8)
            ffn__ab_rows(g, bdt, buf, ld, p0, p1, k, 8, k == 0, false, RA, sh);
        if (dp)  // pairs of rows (k0 even), then the odd last one
            for (; k + 2 <= K; k += 2)
                ffn__ab_rows(g, bdt, buf, ld, p0, p1, k, 2, k == 0, false, RA, sh);
        for (; k < K; k++) ffn__ab_rows(g, bdt, buf, ld, p0, p1, k, 1, k == 0, false, RA, sh);
        // C = sums (+ bias) (+ old C); vdpbf16ps blocks put back in column order.
        const int64_t pd = dp ? p0 + (p1 - p0) / 32 * 32 : p0;  // [p0, pd): permuted blocks
        const __m512i lo =
            _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
        const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
        for (int64_t m = 0; m < M; m++) {
            int64_t n = p0;
            for (; n < pd; n += 32) {
                const __m512 x = _mm512_load_ps(buf + m * ld + (n - p0)),
                             y = _mm512_load_ps(buf + m * ld + (n - p0) + 16);
                ffn__ab_put(g, m, n, _mm512_permutex2var_ps(x, lo, y), true, 0xffff);
                ffn__ab_put(g, m, n + 16, _mm512_permutex2var_ps(x, hi, y), true, 0xffff);
            }
            for (; n < p1; n += 16) {
                const bool full = n + 16 <= p1;
                const __mmask16 nm = full ? 0xffff : (__mmask16)((1u << (p1 - n)) - 1);
                ffn__ab_put(g, m, n, _mm512_load_ps(buf + m * ld + (n - p0)), full, nm);
            }
        }
    }
}

// Realigned bf16 rows (ffn__bf16_shift), one permutation per 16 weights (into the top halves of
// the lanes, the bottom halves zeroed: the widening as well). An instance of its own
// (as "ba"'s): compiled into the function of the others, the 16-row vdpbf16ps path it leaves
// alone streamed 0.38 against 0.35 ms. Only at 1-2 rows of A, where the weights' bandwidth
// bounds the GEMM (bench/skinny_gemm.c, M 1 bf16 K 768 N 3072, one thread, AMD EPYC Zen 5,
// weights 16 bytes off: 0.206 -> 0.197 ms, 5 alternated pairs).
static FFN_NOINLINE void ffn__ab_bf16_ra(const struct ffn_skinny *g, int64_t n0, int64_t n1,
                                         int sh) {
    float buf[FFN_AB_BUF] __attribute__((aligned(64)));
    ffn__ab(g, FFN_DTYPE_BF16, buf, n0, n1, true, sh);
}

// The other instances, one function each (as "ba"'s).
static FFN_NOINLINE void ffn__ab_f32(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    float buf[FFN_AB_BUF] __attribute__((aligned(64)));
    ffn__ab(g, FFN_DTYPE_F32, buf, n0, n1, false, 0);
}
static FFN_NOINLINE void ffn__ab_bf16(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    float buf[FFN_AB_BUF] __attribute__((aligned(64)));
    ffn__ab(g, FFN_DTYPE_BF16, buf, n0, n1, false, 0);
}

void ffn_gemv_ab__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1) {
    const int sh = ffn__bf16_shift(g);
    if (g->bdt == FFN_DTYPE_F32)
        ffn__ab_f32(g, n0, n1);
    else if (sh && n0 % 32 == 0 && g->M <= 2 && !g->A2)
        ffn__ab_bf16_ra(g, n0, n1, sh);
    else
        ffn__ab_bf16(g, n0, n1);
}
