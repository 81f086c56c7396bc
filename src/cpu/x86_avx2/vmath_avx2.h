// vmath_avx2.h — shared inline vector math of the AVX2 + FMA + F16C kernels (8 f32 lanes):
// per-dtype loads and stores, exp of a non-positive argument, the compensated quotient behind
// x·σ(z), and the "finish" that applies the exponent 2^n last, so that neither an overflow nor a
// subnormal intermediate ever decides a result. Included only by src/cpu/x86_avx2/*.c, which are
// compiled with -mavx2 -mfma -mf16c -ffp-contract=off (every FMA below is written out).
#ifndef FFN_VMATH_AVX2_H
#define FFN_VMATH_AVX2_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "cpu/cpu_impl.h"

// Every helper is inlined into the per-dtype loops, so that constant dtype / flag arguments fold.
#define FFN_AVX2_INLINE static inline __attribute__((always_inline))

#define FFN_AVX2_LANES 8

// --- constants ----------------------------------------------------------------------------------
#define FFN_AVX2_LOG2E 0x1.715476p+0f  // log2(e), rounded
#define FFN_AVX2_LN2_HI 0x1.62e43p-1f  // ln 2 = LN2_HI + LN2_LO
#define FFN_AVX2_LN2_LO (-0x1.05c61p-29f)
#define FFN_AVX2_ROUND_MAGIC 0x1.8p23f  // t + 1.5·2^23 rounds t to an integer in the low bits
// exp(r) = 1 + r + r²·P(r) on |r| ≤ ln2/2 (+ a small low part): P's Chebyshev fit (mpmath),
// relative error 0.19 ulp with these f32 coefficients.
#define FFN_AVX2_EXP_C2 0.5f
#define FFN_AVX2_EXP_C3 0x1.5554d4p-3f
#define FFN_AVX2_EXP_C4 0x1.555514p-5f
#define FFN_AVX2_EXP_C5 0x1.121582p-7f
#define FFN_AVX2_EXP_C6 0x1.6d1b1cp-10f
// Lower clamp of an exp argument. exp(-300)·300·2^256 < 2^-150: a clamped lane's result, even
// multiplied by two f32 values (an up and a dh), is a value that rounds to the same zero as the
// exact one. It keeps n ≥ -433, so that 2^n is a normal double in the hard path.
#define FFN_AVX2_EXP_MIN (-300.0f)
// Lanes whose result needs 2^n with n below this go through the double-precision finish: above
// it, 2^n is a normal f32 and |(hi + lo)·w| · 2^n cannot overflow in one step (see
// ffn__avx2_finish).
#define FFN_AVX2_FAST_NMIN (-100)
// |P| at or above this (or NaN) also sends a lane to the double finish: a product that overflowed
// in f32 may still be finite once scaled by 2^n, or may have met a second large factor.
#define FFN_AVX2_FAST_PMAX 0x1p126f
// Beyond this, x·σ(z) rounds to x for the x-like activations (σ(z) > 1 - e^-64 > 1 - 2^-92) and
// their derivatives to 1: the lanes take that value, which also keeps ±inf out of the quotient.
#define FFN_AVX2_XBIG 64.0f

// --- small utilities ----------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__avx2_set(float v) { return _mm256_set1_ps(v); }
FFN_AVX2_INLINE __m256 ffn__avx2_sign_mask(void) {
    return _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
}
FFN_AVX2_INLINE __m256 ffn__avx2_abs(__m256 x) {
    return _mm256_andnot_ps(ffn__avx2_sign_mask(), x);
}
// All-ones in the lanes whose sign bit is set (x < 0, -0, or a negative NaN), else zero.
FFN_AVX2_INLINE __m256 ffn__avx2_neg_mask(__m256 x) {
    return _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(x), 31));
}
// max/min that keep a NaN x: vmaxps returns its second operand when either is NaN.
FFN_AVX2_INLINE __m256 ffn__avx2_max_keepnan(float lo, __m256 x) {
    return _mm256_max_ps(_mm256_set1_ps(lo), x);
}
FFN_AVX2_INLINE __m256 ffn__avx2_min_keepnan(float hi, __m256 x) {
    return _mm256_min_ps(_mm256_set1_ps(hi), x);
}
// All-ones in the lanes where x ≤ z (x = -inf included; NaN excluded).
FFN_AVX2_INLINE __m256 ffn__avx2_le(__m256 x, float z) {
    return _mm256_cmp_ps(x, _mm256_set1_ps(z), _CMP_LE_OQ);
}
// Below the threshold of each activation's `fix` lanes the reference's value (in double) is
// exactly 0 (its exp underflows), so there the kernels return the limit itself, times the
// multiplicands: 0·inf = NaN as in the reference, instead of tiny·inf = inf. Between the
// clamps and these thresholds, and above, results are the mathematical ones.
#define FFN_AVX2_SIGMOID_ZERO (-0x1.74910ep+9f)  // -745.13: exp(x) = 0 in double
// 2^k for integer lanes k in [-126, 127], built in the exponent field.
FFN_AVX2_INLINE __m256 ffn__avx2_pow2i(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// --- loads and stores per dtype (dt is a compile-time constant at every call) -------------------
FFN_AVX2_INLINE __m256 ffn__avx2_load(const void *p, int64_t i, enum ffn_dtype dt) {
    switch (dt) {
    case FFN_DTYPE_BF16: {  // bf16 is the top half of an f32
        const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)p + i));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    case FFN_DTYPE_F16:  // vcvtph2ps is exact (subnormals included)
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
    default: return _mm256_loadu_ps((const float *)p + i);
    }
}

// f32 -> bf16, round to nearest even, as ffn_f32_to_bf16: add 0x7fff + (bit 16) and keep the top
// half; a NaN keeps its payload's top bits and is made quiet (bit 22 -> bf16 bit 6).
FFN_AVX2_INLINE __m128i ffn__avx2_to_bf16(__m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
    r = _mm256_srli_epi32(r, 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

// f32 -> f16 by vcvtps2ph with an explicit round-to-nearest-even: exact RNE, subnormals kept,
// NaN made quiet with its top payload bits: the same bits as ffn_f32_to_f16.
FFN_AVX2_INLINE __m128i ffn__avx2_to_f16(__m256 v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Stores 8 lanes at element i. `nt`: non-temporal store; the caller guarantees the alignment
// (32 bytes for f32, 16 for bf16/f16).
FFN_AVX2_INLINE void ffn__avx2_store(void *p, int64_t i, enum ffn_dtype dt, __m256 v, bool nt) {
    switch (dt) {
    case FFN_DTYPE_BF16: {
        __m128i *q = (__m128i *)((uint16_t *)p + i);
        if (nt)
            _mm_stream_si128(q, ffn__avx2_to_bf16(v));
        else
            _mm_storeu_si128(q, ffn__avx2_to_bf16(v));
        break;
    }
    case FFN_DTYPE_F16: {
        __m128i *q = (__m128i *)((uint16_t *)p + i);
        if (nt)
            _mm_stream_si128(q, ffn__avx2_to_f16(v));
        else
            _mm_storeu_si128(q, ffn__avx2_to_f16(v));
        break;
    }
    default:
        if (nt)
            _mm256_stream_ps((float *)p + i, v);
        else
            _mm256_storeu_ps((float *)p + i, v);
        break;
    }
}

// Rounds each lane to the storage type dt and back (identity for f32): parity mode.
FFN_AVX2_INLINE __m256 ffn__avx2_round_to(enum ffn_dtype dt, __m256 v) {
    switch (dt) {
    case FFN_DTYPE_BF16:
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(ffn__avx2_to_bf16(v)), 16));
    case FFN_DTYPE_F16: return _mm256_cvtph_ps(ffn__avx2_to_f16(v));
    default: return v;
    }
}

// --- exp of a non-positive argument -------------------------------------------------------------
// exp(a + alo) = (1 + pm1)·2^n, for a in [FFN_AVX2_EXP_MIN, 0] (or NaN) and |alo| ≪ 1 the low
// part of a double-float argument. n = round(a·log2 e), r = a - n·ln2 + alo with |r| ≤ 0.35
// (a - n·LN2_HI is exact in the fma: the difference is small and on a 2^-24 grid), then
// pm1 = r + r²·P(r). s = 2^max(n, -126) is a normal float: (1 + pm1)·s is exp(a) wherever that is
// normal, and a tiny stand-in (which only meets 1 + E) below.
struct ffn__avx2_exp {
    __m256 pm1;  // exp(r) - 1, r the reduced argument
    __m256 s;    // 2^max(n, -126)
    __m256i n;   // the integer exponent, in [-433, 0] (garbage in NaN lanes)
};

FFN_AVX2_INLINE struct ffn__avx2_exp ffn__avx2_exp_neg(__m256 a, __m256 alo, bool has_lo) {
    const __m256 magic = _mm256_set1_ps(FFN_AVX2_ROUND_MAGIC);
    const __m256 t = _mm256_fmadd_ps(a, _mm256_set1_ps(FFN_AVX2_LOG2E), magic);
    const __m256 nf = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(FFN_AVX2_LN2_HI), a);
    r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(FFN_AVX2_LN2_LO), r);
    if (has_lo) r = _mm256_add_ps(r, alo);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(FFN_AVX2_EXP_C6), r, _mm256_set1_ps(FFN_AVX2_EXP_C5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FFN_AVX2_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FFN_AVX2_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FFN_AVX2_EXP_C2));
    struct ffn__avx2_exp e;
    e.pm1 = _mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r);
    // n sits in t's low mantissa bits: t - magic as integers.
    e.n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
    e.s = ffn__avx2_pow2i(_mm256_max_epi32(e.n, _mm256_set1_epi32(-126)));
    return e;
}

// --- the denominator 1 + E ----------------------------------------------------------------------
// E = exp(-|z|) = (1 + pm1)·2^n ≤ 1 and D = 1 + E, both as double-floats: eh + el = (1 + pm1)·s
// to the exp polynomial's error (s - eh is exact: eh/s is in [0.7, 1.42]), dh + dl = 1 + eh + el
// (fast two-sum: 1 ≥ eh). Where E < 2^-126 its stand-in (1 + pm1)·2^-126 only meets 1 + E, or a
// term ≤ 2^-100 of a sum with 1.
struct ffn__avx2_den {
    __m256 eh;      // E, rounded
    __m256 dh, dl;  // 1 + E
};

FFN_AVX2_INLINE struct ffn__avx2_den ffn__avx2_den(struct ffn__avx2_exp e) {
    const __m256 one = _mm256_set1_ps(1.0f);
    struct ffn__avx2_den d;
    d.eh = _mm256_fmadd_ps(e.s, e.pm1, e.s);
    const __m256 el = _mm256_fmadd_ps(e.s, e.pm1, _mm256_sub_ps(e.s, d.eh));
    d.dh = _mm256_add_ps(one, d.eh);
    d.dl = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(one, d.dh), d.eh), el);
    return d;
}

// --- x·σ(z) for the forward passes --------------------------------------------------------------
// With E = exp(-|z|) = (1 + pm1)·2^n (e from ffn__avx2_exp_neg(-|z|)) and D = 1 + E:
//   z ≥ 0:  x·σ(z) = x / D
//   z < 0:  x·σ(z) = x·E / D = [x(1 + pm1) / D] · 2^n   (2^n applied by the finish)
// The numerator N is a double-float too (x - Nh is exact); the quotient is q0 = Nh/Dh (vdivps,
// correctly rounded) plus the correction (N - q0·D)/Dh, for which a 12-bit rcp is plenty:
// hi + lo = N/D to ~2^-40, so the result carries the exp polynomial's error (~0.2 ulp) and one
// final rounding. neg: all-ones on z < 0 lanes; xn: the multiplier (x, or 1 for σ itself).
// Returns hi, lo and the lane exponents ns (n on z < 0 lanes, 0 elsewhere).
FFN_AVX2_INLINE void ffn__avx2_xsigmoid(__m256 xn, __m256 neg, struct ffn__avx2_exp e,
                                        struct ffn__avx2_den d, __m256 *hi, __m256 *lo,
                                        __m256i *ns) {
    const __m256 pnh = _mm256_fmadd_ps(xn, e.pm1, xn);                      // x(1 + pm1)
    const __m256 pnl = _mm256_fmadd_ps(xn, e.pm1, _mm256_sub_ps(xn, pnh));  // its error
    const __m256 nh = _mm256_blendv_ps(xn, pnh, neg);
    const __m256 nl = _mm256_and_ps(pnl, neg);
    const __m256 q0 = _mm256_div_ps(nh, d.dh);
    __m256 rr = _mm256_fnmadd_ps(q0, d.dh, nh);  // exact remainder of the division
    rr = _mm256_fnmadd_ps(q0, d.dl, _mm256_add_ps(rr, nl));
    *hi = q0;
    *lo = _mm256_mul_ps(rr, _mm256_rcp_ps(d.dh));
    *ns = _mm256_and_si256(e.n, _mm256_castps_si256(neg));
}

// --- σ(z) and 1 - σ(z) for the backward passes --------------------------------------------------
// With inv = 1/D = ih + il (a double-float: il from the exact remainder 1 - ih·Dh):
//   z ≥ 0:  σ = inv,                 1 - σ = E·inv
//   z < 0:  σ = [(1 + pm1)·inv]·2^n,  1 - σ = inv
// sm is σ without the 2^n of the z < 0 lanes (the caller's ns); 1 - σ = sch + scl, whose low part
// matters where a derivative cancels (1 + x·(1 - σ) near silu's zero).
FFN_AVX2_INLINE void ffn__avx2_sigmoid_pair(__m256 neg, struct ffn__avx2_exp e,
                                            struct ffn__avx2_den d, __m256 *sm, __m256 *sch,
                                            __m256 *scl) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 ih = _mm256_div_ps(one, d.dh);
    const __m256 il =
        _mm256_mul_ps(_mm256_fnmadd_ps(ih, d.dl, _mm256_fnmadd_ps(ih, d.dh, one)), ih);
    *sm = _mm256_blendv_ps(ih, _mm256_fmadd_ps(e.pm1, ih, ih), neg);
    *sch = _mm256_blendv_ps(_mm256_mul_ps(d.eh, ih), ih, neg);
    *scl = _mm256_and_ps(il, neg);
}

// 1 + k·(1 - σ) for a multiplier k = kh + kl (kl may be 0), with its cancellation near a zero of
// the derivative kept to the rounding of the (small) result: fma(kh, sch, 1) is one rounding.
FFN_AVX2_INLINE __m256 ffn__avx2_one_plus(__m256 kh, __m256 kl, __m256 sch, __m256 scl) {
    const __m256 t = _mm256_fmadd_ps(kh, sch, _mm256_set1_ps(1.0f));
    return _mm256_add_ps(t, _mm256_fmadd_ps(kh, scl, _mm256_mul_ps(kl, sch)));
}

// --- tiny multipliers
// ----------------------------------------------------------------------------- act(x) ≈ x/2 for
// |x| < 2^-60 is subnormal or nearly so; a gated product act(x)·up may still be normal. Such lanes
// compute with x·2^64 and take 2^-64 back in the finish (ns - 64).
#define FFN_AVX2_TINY 0x1p-60f
#define FFN_AVX2_TINY_SHIFT 64
FFN_AVX2_INLINE __m256 ffn__avx2_tiny_mask(__m256 x) {
    return _mm256_cmp_ps(ffn__avx2_abs(x), _mm256_set1_ps(FFN_AVX2_TINY), _CMP_LT_OQ);
}
FFN_AVX2_INLINE __m256 ffn__avx2_tiny_up(__m256 x, __m256 tiny) {
    return _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(0x1p64f)), tiny);
}
FFN_AVX2_INLINE __m256i ffn__avx2_tiny_ns(__m256i ns, __m256 tiny) {
    return _mm256_sub_epi32(
        ns, _mm256_and_si256(_mm256_castps_si256(tiny), _mm256_set1_epi32(FFN_AVX2_TINY_SHIFT)));
}

// --- NaN results
// ---------------------------------------------------------------------------------- A NaN result
// takes the first NaN input (x, then w1, then w2), made quiet, else the default NaN: the same bits
// wherever the element lies (the compiler may order a commutative op's operands differently in the
// body and tail copies, and x86 keeps the first operand's NaN).
FFN_AVX2_INLINE __m256 ffn__avx2_quiet(__m256 v) {
    return _mm256_or_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
}
FFN_AVX2_INLINE __m256 ffn__avx2_nan_fix(__m256 r, __m256 x, __m256 w1, __m256 w2, int n_in) {
    const __m256 rn = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
    if (__builtin_expect(_mm256_movemask_ps(rn) == 0, 1)) return r;
    __m256 c = _mm256_castsi256_ps(_mm256_set1_epi32((int)0xffc00000u));
    if (n_in > 2) c = _mm256_blendv_ps(c, ffn__avx2_quiet(w2), _mm256_cmp_ps(w2, w2, _CMP_UNORD_Q));
    if (n_in > 1) c = _mm256_blendv_ps(c, ffn__avx2_quiet(w1), _mm256_cmp_ps(w1, w1, _CMP_UNORD_Q));
    c = _mm256_blendv_ps(c, ffn__avx2_quiet(x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_ps(r, c, rn);
}

// --- the finish: (hi + lo)·w1·w2·2^ns
// ------------------------------------------------------------- Every sigmoid-type kernel ends
// here: r = (hi + lo)·w1·w2·2^ns, ns ≤ 0 per lane, with w1, w2 the multiplicands of the op (up; dy;
// dh and up; or 1). Fast lanes (ns ≥ FFN_AVX2_FAST_NMIN and |P| < 2^126, P = (hi + lo)·w1·w2 in
// f32): P is rounded once (fma with the low part) and 2^ns is a normal f32, so r = P·2^ns is exact,
// or rounded once more only where r is subnormal (≤ 1 subnormal ulp). Hard lanes (rare: an exp
// below 2^-100, huge multiplicands, NaN): the same expression in double, where 2^ns (≥ 2^-433) and
// every product are normal, rounded once to f32. `fix` lanes (x = ±inf, where the clamped formula
// is not the limit) take (lim·w1)·w2, as the reference's limit value times the multiplicands (0·inf
// = NaN included); they must have ns < FFN_AVX2_FAST_NMIN or be listed in fix only (they are made
// hard here).
FFN_AVX2_INLINE __m256 ffn__avx2_finish(__m256 hi, __m256 lo, __m256 w1, __m256 w2, bool has_w2,
                                        __m256i ns, __m256 fix, __m256 lim) {
    const __m256 w = has_w2 ? _mm256_mul_ps(w1, w2) : w1;
    const __m256 p = _mm256_fmadd_ps(hi, w, _mm256_mul_ps(lo, w));
    const __m256 sf = ffn__avx2_pow2i(_mm256_max_epi32(ns, _mm256_set1_epi32(-126)));
    __m256 r = _mm256_mul_ps(p, sf);
    const __m256 small_n =
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(FFN_AVX2_FAST_NMIN), ns));
    const __m256 not_ok = _mm256_cmp_ps(ffn__avx2_abs(p), _mm256_set1_ps(FFN_AVX2_FAST_PMAX),
                                        _CMP_NLT_UQ);  // |P| ≥ 2^126 or NaN
    const __m256 hard = _mm256_or_ps(_mm256_or_ps(small_n, not_ok), fix);
    if (__builtin_expect(_mm256_movemask_ps(hard) != 0, 0)) {
        __m256 rh[2];
        for (int k = 0; k < 2; k++) {
            const __m128 h4 = k ? _mm256_extractf128_ps(hi, 1) : _mm256_castps256_ps128(hi);
            const __m128 l4 = k ? _mm256_extractf128_ps(lo, 1) : _mm256_castps256_ps128(lo);
            const __m128 a4 = k ? _mm256_extractf128_ps(w1, 1) : _mm256_castps256_ps128(w1);
            const __m128 b4 = k ? _mm256_extractf128_ps(w2, 1) : _mm256_castps256_ps128(w2);
            const __m128i n4 = k ? _mm256_extracti128_si256(ns, 1) : _mm256_castsi256_si128(ns);
            // 2^ns as a double: (ns + 1023) << 52, ns ≥ -433 in every lane that uses it.
            const __m256d s4 = _mm256_castsi256_pd(_mm256_slli_epi64(
                _mm256_add_epi64(_mm256_cvtepi32_epi64(n4), _mm256_set1_epi64x(1023)), 52));
            __m256d v = _mm256_add_pd(_mm256_cvtps_pd(h4), _mm256_cvtps_pd(l4));
            v = _mm256_mul_pd(v, _mm256_cvtps_pd(a4));
            if (has_w2) v = _mm256_mul_pd(v, _mm256_cvtps_pd(b4));
            v = _mm256_mul_pd(v, s4);
            rh[k] = _mm256_castps128_ps256(_mm256_cvtpd_ps(v));
            if (k) rh[0] = _mm256_insertf128_ps(rh[0], _mm256_castps256_ps128(rh[1]), 1);
        }
        __m256 lw = _mm256_mul_ps(lim, w1);
        if (has_w2) lw = _mm256_mul_ps(lw, w2);
        r = _mm256_blendv_ps(r, _mm256_blendv_ps(rh[0], lw, fix), hard);
    }
    // A zero result has the sign of the exact product (hi + lo)·w1·w2: hi's sign times w's (lo
    // is far smaller than hi, and hi·w + lo·w would make -0 + +0 = +0 of act(-0) = -0 or of an
    // up = -0). Backward outputs are not held to it, and it costs nothing to keep them alike.
    const __m256 zero = _mm256_cmp_ps(r, _mm256_setzero_ps(), _CMP_EQ_OQ);
    const __m256 zs = _mm256_and_ps(_mm256_xor_ps(hi, w), ffn__avx2_sign_mask());
    return _mm256_blendv_ps(r, zs, zero);
}

// ================================================================================================
// The fast path. Every exp-based kernel computes all 8 lanes with the short sequence below, which
// is exact to the bounds only for "common" lanes (finite, not tiny, the exp argument in the
// normal range, ...: each kernel states its range), and tests the whole vector with ONE movemask.
// A vector with a rare lane calls the kernel's noinline general path (the code above: clamps,
// the 2^n finish in double, limits, NaN payloads) and takes from it exactly the rare lanes, so
// each element's result depends only on itself. For N(0,1) data no vector is ever rare.
// ================================================================================================

// The general path of a kernel: out of line, one copy per kernel, shared by the dtype pairs.
#define FFN_AVX2_SLOW __attribute__((noinline)) static

// True (all-ones) in the lanes where |v| lies in [lo, hi], given va = -|v| (v with its sign bit
// set) and the bit patterns of lo and hi. bits(va), read as a signed integer, is INT_MIN +
// bits(|v|); subtracting bits(lo) puts [lo, hi] onto [INT_MIN, INT_MIN + bits(hi) - bits(lo)],
// sends |v| < lo around to large positive values and leaves |v| > hi (NaN included) above: one
// signed compare tests both ends.
FFN_AVX2_INLINE __m256 ffn__avx2_mag_in(__m256 va, uint32_t lo_bits, uint32_t hi_bits) {
    const __m256i d = _mm256_sub_epi32(_mm256_castps_si256(va), _mm256_set1_epi32((int)lo_bits));
    const __m256i lim = _mm256_set1_epi32((int)(0x80000000u + (hi_bits - lo_bits) + 1u));
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(lim, d));
}
// Bit patterns for mag_in.
#define FFN_AVX2_BITS_TINY 0x21800000u    // 2^-60 = FFN_AVX2_TINY
#define FFN_AVX2_BITS_MINSUB 0x00000001u  // the smallest subnormal
#define FFN_AVX2_BITS_MAXFIN 0x7f7fffffu  // the largest finite float

// All 8 lanes set in a compare mask.
FFN_AVX2_INLINE bool ffn__avx2_all(__m256 m) { return _mm256_movemask_ps(m) == 0xff; }

// --- 2^z for z = xa·(c + cl) ≤ 0, z ≥ -125
// -------------------------------------------------------- xa ≤ 0 and c > 0 (cl a small correction:
// c + cl is a constant or an argument as a float pair). n = round(xa·c) by the 1.5·2^23 trick (t
// keeps n in its low mantissa bits), r = xa·c - n exactly up to one rounding of a value ≤ 1/2
// (fmsub), plus xa·cl; 2^r = 1 + pm1 with pm1 = C1·r + r²·Q(r), Q a degree-4 Chebyshev fit
// (tools/fit/fit_exp2.py): relative error 1.0e-8 on |r| ≤ 0.5005 with these f32 coefficients. Then
// 2^z = E·2^n with E = 1 + pm1 rounded (and its rounding error El when asked), 2^n put into E's
// exponent field by an integer add (n ≥ -125 keeps E·2^n normal).
#define FFN_AVX2_EXP2_C1 0x1.62e43p-1f  // ln 2, rounded (its error is covered by the fit)
#define FFN_AVX2_EXP2_Q0 0x1.ebfbep-3f
#define FFN_AVX2_EXP2_Q1 0x1.c6afdcp-5f
#define FFN_AVX2_EXP2_Q2 0x1.3b2a8p-7f
#define FFN_AVX2_EXP2_Q3 0x1.5ecf9p-10f
#define FFN_AVX2_EXP2_Q4 0x1.43e788p-13f
#define FFN_AVX2_LOG2E_HI 0x1.715476p+0f  // log2(e) = HI + LO
#define FFN_AVX2_LOG2E_LO 0x1.4ae0cp-26f

struct ffn__avx2_fe {
    __m256 h;  // 2^z, rounded (normal)
    __m256 l;  // 2^z - h (when asked; may be subnormal: it only corrects h)
};

// The reduction: t (n in its low bits) and r, with z = n + r.
FFN_AVX2_INLINE void ffn__avx2_fexp2_red(__m256 xa, __m256 c, __m256 cl, __m256 *t, __m256 *r) {
    const __m256 magic = _mm256_set1_ps(FFN_AVX2_ROUND_MAGIC);
    *t = _mm256_fmadd_ps(xa, c, magic);
    const __m256 nf = _mm256_sub_ps(*t, magic);
    *r = _mm256_fmadd_ps(xa, cl, _mm256_fmsub_ps(xa, c, nf));
}

// 2^(n + r) = E·2^n from the reduction (|r| ≤ 0.5005).
FFN_AVX2_INLINE struct ffn__avx2_fe ffn__avx2_fexp2_fin(__m256 t, __m256 r, bool low) {
    const __m256 one = _mm256_set1_ps(1.0f);
    // Q by Estrin's scheme (short dependency chains: the loops are latency-bound otherwise):
    // Q = (Q0 + Q1·r) + r²·((Q2 + Q3·r) + r²·Q4).
    const __m256 r2 = _mm256_mul_ps(r, r);
    const __m256 qa =
        _mm256_fmadd_ps(_mm256_set1_ps(FFN_AVX2_EXP2_Q1), r, _mm256_set1_ps(FFN_AVX2_EXP2_Q0));
    const __m256 qb =
        _mm256_fmadd_ps(_mm256_set1_ps(FFN_AVX2_EXP2_Q3), r, _mm256_set1_ps(FFN_AVX2_EXP2_Q2));
    const __m256 q =
        _mm256_fmadd_ps(r2, _mm256_fmadd_ps(r2, _mm256_set1_ps(FFN_AVX2_EXP2_Q4), qb), qa);
    const __m256 pm1 = _mm256_fmadd_ps(r, _mm256_set1_ps(FFN_AVX2_EXP2_C1), _mm256_mul_ps(r2, q));
    const __m256 e = _mm256_add_ps(one, pm1);
    // n·2^23: t's bits are those of 1.5·2^23 + n; shifted left by 23 only n's bits remain.
    const __m256i n23 = _mm256_slli_epi32(_mm256_castps_si256(t), 23);
    struct ffn__avx2_fe f;
    f.h = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(e), n23));
    f.l = _mm256_setzero_ps();
    if (low) {  // (1 - e) + pm1 is exact (fast two-sum, |pm1| < 1), then times 2^n
        const __m256 el = _mm256_add_ps(_mm256_sub_ps(one, e), pm1);
        const __m256 s = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(one), n23));
        f.l = _mm256_mul_ps(el, s);
    }
    return f;
}

FFN_AVX2_INLINE struct ffn__avx2_fe ffn__avx2_fexp2(__m256 xa, __m256 c, __m256 cl, bool low) {
    __m256 t, r;
    ffn__avx2_fexp2_red(xa, c, cl, &t, &r);
    return ffn__avx2_fexp2_fin(t, r, low);
}

// --- x·σ(z) = q0 + lo, compensated
// ---------------------------------------------------------------- With e = exp(-|z|) = eh + el
// (normal, from ffn__avx2_fexp2) and D = 1 + eh:
//   z ≥ 0:  x·σ(z) = x / (1 + e)        z < 0:  x·σ(z) = x·e / (1 + e)
// N = Nh + Nl is x, or x·e as a float pair (x·eh exactly by fmsub, plus x·el). q0 = Nh/D is
// correctly rounded (vdivps); the remainder N - q0·(1 + e) = (Nh - q0) - q0·eh - q0·el + Nl is
// exact up to roundings far below q0's ulp (Nh - q0 is exact by Sterbenz: q0 ∈ [Nh/2, Nh]), so
// lo = remainder/D needs only the 12-bit rcp. q0 + lo is x·σ(z) within ~2^-40 plus e's error
// (≤ 0.2 ulp of e, weighted by ≤ 1): the sum rounded once is within ~0.8 ulp.
// zs: the lanes where z < 0 are those with zs's sign bit set. sig: σ itself (x = 1).
FFN_AVX2_INLINE void ffn__avx2_fxsig(__m256 x, bool sig, __m256 zs, struct ffn__avx2_fe e,
                                     __m256 *q0, __m256 *lo) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e1 = _mm256_blendv_ps(one, e.h, zs);
    const __m256 l1 = _mm256_blendv_ps(_mm256_setzero_ps(), e.l, zs);
    __m256 nh = e1, nl = l1;
    if (!sig) {
        nh = _mm256_mul_ps(x, e1);
        nl = _mm256_fmadd_ps(x, l1, _mm256_fmsub_ps(x, e1, nh));
    }
    const __m256 d = _mm256_add_ps(one, e.h);
    const __m256 q = _mm256_div_ps(nh, d);
    __m256 rr = _mm256_fnmadd_ps(q, e.h, _mm256_sub_ps(nh, q));
    rr = _mm256_fnmadd_ps(q, e.l, _mm256_add_ps(rr, nl));
    *q0 = q;
    *lo = _mm256_mul_ps(rr, _mm256_rcp_ps(d));
}

// --- σ(z) and 1 - σ(z) for the backward passes (one division, 8-ulp tier)
// -------------------------- With e = exp(-|z|) (normal) and inv = 1/(1 + e):  z ≥ 0: σ = inv, 1-σ
// = e·inv; z < 0: σ = e·inv, 1-σ = inv.
FFN_AVX2_INLINE void ffn__avx2_fsig_pair(__m256 zs, __m256 eh, __m256 *s, __m256 *c) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 inv = _mm256_div_ps(one, _mm256_add_ps(one, eh));
    const __m256 ei = _mm256_mul_ps(eh, inv);
    *s = _mm256_blendv_ps(inv, ei, zs);
    *c = _mm256_blendv_ps(ei, inv, zs);
}

// The backward's dgate = (dh·up)·act'(g) is exact to the bound while dh·up is finite (|act'| is
// at most ~1.2 on the fast path, so only a product that already overflowed can be spurious):
// lanes where it is not (or NaN) are rare.
FFN_AVX2_INLINE __m256 ffn__avx2_finite(__m256 p) {
    return _mm256_cmp_ps(ffn__avx2_abs(p), _mm256_set1_ps(INFINITY), _CMP_LT_OQ);
}

#endif  // FFN_VMATH_AVX2_H
