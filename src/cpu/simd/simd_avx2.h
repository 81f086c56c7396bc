// simd_avx2.h — the SIMD vocabulary of simd.h for AVX2 + FMA + F16C: 8 f32 lanes. What AVX2
// lacks is emulated here: lane masks are vectors (all-ones lanes, selected by vblendvps), vscalefps
// is a multiply by a constructed power of two (in double where that power is not a normal
// float), vfixupimmps and vfpclassps are integer compares on the bits, vrcp14ps is vrcpps plus a
// Newton step, a 16- or 32-entry lookup is two or four vpermps and the blends of the index's high
// bits, and 16-bit tails go through a small buffer. Included first by the files of
// src/cpu/x86_avx2/, which are built with -mavx2 -mfma -mf16c -ffp-contract=off.
#ifndef FFN_SIMD_AVX2_H
#define FFN_SIMD_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "cpu/simd/simd.h"

#define FFN_V_ISA avx2
#define FFN_VL 8            // f32 lanes per vector
#define FFN_V_FIXUP 0       // nan_take is three: a blend after a test is cheaper
#define FFN_V_LUT_FAST 8    // vpermps: one register of 8
#define FFN_V_SCALEF_1OP 0  // scalef: a multiply and its test; masked operations: blends
// A mask test is a vmovmskps and a branch, a class test two or three integer operations: the
// fast path of SwiGLU and quick-GeGLU backward tests its rare and NaN lanes by one range compare
// and one branch (vmath.h; same-process A/B at n = 16384 f32, AMD EPYC Zen 4: 0.94 -> 1.05x
// against the separate AVX2 kernels).
#define FFN_V_FEW_TESTS 1
// Calls in cache (not cfg->stream) walk one range, except the gated forward two (bits 4k..4k+3: the
// sub-ranges of enum ffn_kop k), and only the gated forward runs its pre stage a vector ahead: with
// 16 registers more sub-ranges and the other pipelines spill (same-process A/B at n = 16384: Intel
// Xeon (AMX), without, gelu_tanh forward 1.22x, SwiGLU backward 1.03x; with, the gated forwards
// 1.04-1.10x; AMD EPYC Zen 4, two sub-ranges: the gated forwards f32 and f16 1.02-1.16x, bf16
// 0.98-1.01x, SwiGLU backward 0.86x). A streaming call keeps both: memory waits dominate.
#ifndef FFN_V_CACHE_WAYS  // (a -D of an experiment: bench/ab.sh AB_NEW_CFLAGS)
#    define FFN_V_CACHE_WAYS 0x1211
#endif
// ReLU and identity (no pre stage: a load, a conversion or a max, a store) walk three: with one
// range the loop's overhead is half a cycle of a 4-cycle vector (same-process A/B at n = 16384,
// AMD EPYC Zen 5: one/three sub-ranges, ReLU forward f32 0.81/1.03-1.10, identity forward f16
// 0.98/1.03-1.13 of the separate AVX2 kernels).
#ifndef FFN_V_CACHE_WAYS_PLAIN
#    define FFN_V_CACHE_WAYS_PLAIN 0x1213
#endif
#ifndef FFN_V_CACHE_AHEAD
#    define FFN_V_CACHE_AHEAD (1 << FFN_KOP_GLU_FWD)
#endif
// A streaming call: ffn_stream_ways() sub-ranges, the pre stage ahead, in the kernel's function,
// unless the file of an activation sets otherwise before it includes this header
// (gelu_erf_avx2.c, gelu_tanh_avx2.c: which setting pays differs per activation,
// docs/performance.md).
#ifndef FFN_V_STREAM_WAYS
#    define FFN_V_STREAM_WAYS 0
#endif
#ifndef FFN_V_STREAM_AHEAD
#    define FFN_V_STREAM_AHEAD 0xf
#endif
#ifndef FFN_V_STREAM_NT
#    define FFN_V_STREAM_NT 0
#endif
#ifndef FFN_V_APART
#    define FFN_V_APART 0
#endif

typedef __m256 ffn__vf;
typedef __m256i ffn__vi;
typedef __m256 ffn__vm;  // all-ones lanes where set

// --- arithmetic ----------------------------------------------------------------------------------
FFN_VINLINE ffn__vf ffn__c(float v) { return _mm256_set1_ps(v); }
FFN_VINLINE ffn__vf ffn__zero(void) { return _mm256_setzero_ps(); }
FFN_VINLINE ffn__vf ffn__cbits(uint32_t bits) {  // every lane the float with these bits
    return _mm256_castsi256_ps(_mm256_set1_epi32((int)bits));
}
// -0: the neutral element of addition for every x (+0 would turn -0 + 0 into +0).
FFN_VINLINE ffn__vf ffn__negzero(void) { return ffn__cbits(0x80000000u); }
FFN_VINLINE ffn__vf ffn__add(ffn__vf a, ffn__vf b) { return _mm256_add_ps(a, b); }
FFN_VINLINE ffn__vf ffn__sub(ffn__vf a, ffn__vf b) { return _mm256_sub_ps(a, b); }
FFN_VINLINE ffn__vf ffn__mul(ffn__vf a, ffn__vf b) { return _mm256_mul_ps(a, b); }
FFN_VINLINE ffn__vf ffn__div(ffn__vf a, ffn__vf b) { return _mm256_div_ps(a, b); }
FFN_VINLINE ffn__vf ffn__fmadd(ffn__vf a, ffn__vf b, ffn__vf c) { return _mm256_fmadd_ps(a, b, c); }
FFN_VINLINE ffn__vf ffn__fmsub(ffn__vf a, ffn__vf b, ffn__vf c) { return _mm256_fmsub_ps(a, b, c); }
FFN_VINLINE ffn__vf ffn__fnmadd(ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm256_fnmadd_ps(a, b, c);
}
FFN_VINLINE ffn__vf ffn__fnmsub(ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm256_fnmsub_ps(a, b, c);
}
FFN_VINLINE ffn__vf ffn__min(ffn__vf a, ffn__vf b) { return _mm256_min_ps(a, b); }
FFN_VINLINE ffn__vf ffn__max(ffn__vf a, ffn__vf b) { return _mm256_max_ps(a, b); }
FFN_VINLINE ffn__vf ffn__abs(ffn__vf x) { return _mm256_andnot_ps(ffn__negzero(), x); }
FFN_VINLINE ffn__vf ffn__neg_abs(ffn__vf x) { return _mm256_or_ps(x, ffn__negzero()); }
FFN_VINLINE ffn__vf ffn__floor(ffn__vf x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
FFN_VINLINE ffn__vi ffn__cvtt_i(ffn__vf x) { return _mm256_cvttps_epi32(x); }
FFN_VINLINE ffn__vi ffn__as_i(ffn__vf x) { return _mm256_castps_si256(x); }
FFN_VINLINE ffn__vf ffn__as_f(ffn__vi x) { return _mm256_castsi256_ps(x); }
FFN_VINLINE ffn__vi ffn__ci(uint32_t v) { return _mm256_set1_epi32((int)v); }
FFN_VINLINE ffn__vi ffn__add_i(ffn__vi a, ffn__vi b) { return _mm256_add_epi32(a, b); }
FFN_VINLINE ffn__vi ffn__and_i(ffn__vi a, ffn__vi b) { return _mm256_and_si256(a, b); }
FFN_VINLINE ffn__vi ffn__slli_i(ffn__vi a, int k) { return _mm256_slli_epi32(a, k); }

// vrcpps (relative error ≤ 1.5·2^-12) and one Newton step r + r·(1 - d·r): ~2^-22.
FFN_VINLINE ffn__vf ffn__rcp14(ffn__vf d) {
    const ffn__vf r = _mm256_rcp_ps(d);
    return _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, ffn__c(1.0f)), r);
}

// 2^k as a float for integer lanes k in [-126, 127], built in the exponent field.
FFN_VINLINE ffn__vf ffn__pow2i(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}
// v·2^k for any k (clamped to ±1000, beyond which every f32 v gives 0 or inf), in double: v·2^k
// is exact there and rounds once to f32, subnormal results included. Out of line: it serves the
// rare vectors with a lane whose 2^k is not a normal float.
__attribute__((noinline, cold, unused)) static ffn__vf ffn__scalef_wide(ffn__vf v, __m256i k) {
    const __m256i kc =
        _mm256_max_epi32(_mm256_min_epi32(k, _mm256_set1_epi32(1000)), _mm256_set1_epi32(-1000));
    __m128 r[2];
    for (int h = 0; h < 2; h++) {
        const __m128 vh = h ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v);
        const __m128i kh = h ? _mm256_extracti128_si256(kc, 1) : _mm256_castsi256_si128(kc);
        const __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(
            _mm256_add_epi64(_mm256_cvtepi32_epi64(kh), _mm256_set1_epi64x(1023)), 52));
        r[h] = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(vh), s));
    }
    return _mm256_set_m128(r[1], r[0]);
}
// v·2^floor(n) rounded once, as vscalefps: one multiply by 2^k where that is a normal float in
// every lane (rounded once even into a subnormal result), else the double form above.
FFN_VINLINE ffn__vf ffn__scalef(ffn__vf v, ffn__vf n) {
    const ffn__vf kf = ffn__floor(n);  // ≤ 127: n < 128
    const __m256i k = _mm256_cvttps_epi32(kf);
    const ffn__vf low = _mm256_cmp_ps(kf, ffn__c(-126.0f), _CMP_NGE_UQ);  // or NaN
    if (__builtin_expect(_mm256_movemask_ps(low) == 0, 1)) return _mm256_mul_ps(v, ffn__pow2i(k));
    return ffn__scalef_wide(v, k);
}
// --- masks: all-ones lanes -----------------------------------------------------------------------
FFN_VINLINE ffn__vm ffn__cmp_lt(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
FFN_VINLINE ffn__vm ffn__cmp_le(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
FFN_VINLINE ffn__vm ffn__cmp_gt(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
FFN_VINLINE ffn__vm ffn__cmp_nlt(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }
FFN_VINLINE ffn__vm ffn__cmp_nge(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_NGE_UQ); }
FFN_VINLINE ffn__vm ffn__cmp_nle(ffn__vf a, ffn__vf b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }
FFN_VINLINE ffn__vm ffn__isnan(ffn__vf x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }
FFN_VINLINE ffn__vm ffn__signmask(ffn__vf x) {
    return _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(x), 31));
}
// The classes of vfpclassps from a = |x|'s bits: ±0 (a = 0), subnormal (0 < a < 0x800000), ±inf
// (a = 0x7f800000), NaN (a > 0x7f800000).
FFN_VINLINE __m256i ffn__absbits(ffn__vf x) {
    return _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
}
// Lanes with lo ≤ |x|'s bits ≤ hi, in one compare: the bits of -|x| read as a signed integer are
// INT_MIN + a; minus lo, a ∈ [lo, hi] lands on [INT_MIN, INT_MIN + hi - lo] and a < lo wraps
// around to the top.
FFN_VINLINE ffn__vm ffn__bits_in(ffn__vf x, uint32_t lo, uint32_t hi) {
    const __m256i d =
        _mm256_sub_epi32(_mm256_castps_si256(ffn__neg_abs(x)), _mm256_set1_epi32((int)lo));
    const __m256i lim = _mm256_set1_epi32((int)(0x80000000u + (hi - lo) + 1u));
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(lim, d));
}
// The other lanes (NaN included), also in one compare.
FFN_VINLINE ffn__vm ffn__bits_out(ffn__vf x, uint32_t lo, uint32_t hi) {
    const __m256i d =
        _mm256_sub_epi32(_mm256_castps_si256(ffn__neg_abs(x)), _mm256_set1_epi32((int)lo));
    const __m256i lim = _mm256_set1_epi32((int)(0x80000000u + (hi - lo)));
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(d, lim));
}
FFN_VINLINE ffn__vm ffn__is_sub(ffn__vf x) { return ffn__bits_in(x, 1, 0x7fffff); }
FFN_VINLINE ffn__vm ffn__is_zero_inf(ffn__vf x) {
    const __m256i a = ffn__absbits(x);
    return _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_cmpeq_epi32(a, _mm256_setzero_si256()),
                        _mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7f800000))));
}
FFN_VINLINE ffn__vm ffn__is_inf(ffn__vf x) {
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(ffn__absbits(x), _mm256_set1_epi32(0x7f800000)));
}
FFN_VINLINE ffn__vm ffn__is_ninf(ffn__vf x) {
    return _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_castps_si256(x), _mm256_set1_epi32((int)0xff800000u)));
}
FFN_VINLINE ffn__vm ffn__is_special(ffn__vf x) {  // NaN, ±0, ±inf: not finite nonzero
    return _mm256_xor_ps(ffn__bits_in(x, 1, 0x7f7fffff), ffn__cbits(0xffffffffu));
}
FFN_VINLINE ffn__vm ffn__m_or(ffn__vm a, ffn__vm b) { return _mm256_or_ps(a, b); }
FFN_VINLINE ffn__vm ffn__m_and(ffn__vm a, ffn__vm b) { return _mm256_and_ps(a, b); }
FFN_VINLINE ffn__vm ffn__m_andn(ffn__vm a, ffn__vm b) { return _mm256_andnot_ps(b, a); }
FFN_VINLINE ffn__vm ffn__m_not(ffn__vm a) { return _mm256_xor_ps(a, ffn__cbits(0xffffffffu)); }
FFN_VINLINE bool ffn__m_any(ffn__vm a) { return _mm256_movemask_ps(a) != 0; }
FFN_VINLINE ffn__vm ffn__m_zero(void) { return _mm256_setzero_ps(); }
FFN_VINLINE ffn__vm ffn__m_tail(int64_t k) {
    return _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}
FFN_VINLINE ffn__vf ffn__mask_mov(ffn__vf src, ffn__vm m, ffn__vf a) {
    return _mm256_blendv_ps(src, a, m);
}
FFN_VINLINE ffn__vf ffn__maskz_mov(ffn__vm m, ffn__vf a) { return _mm256_and_ps(m, a); }
FFN_VINLINE ffn__vf ffn__mask_mul(ffn__vf src, ffn__vm m, ffn__vf a, ffn__vf b) {
    return _mm256_blendv_ps(src, _mm256_mul_ps(a, b), m);
}
FFN_VINLINE ffn__vf ffn__mask_sub(ffn__vf src, ffn__vm m, ffn__vf a, ffn__vf b) {
    return _mm256_blendv_ps(src, _mm256_sub_ps(a, b), m);
}
// vblendvps reads x's sign bit itself: no compare (same-process A/B at n = 16384 f32, AMD EPYC
// Zen 5, against a compare ≥ 0 and a blend: GeLU-erf forward 1.04x, backward 1.05x).
FFN_VINLINE ffn__vf ffn__mask_sub_pos(ffn__vf src, ffn__vf x, ffn__vf a, ffn__vf b) {
    return _mm256_blendv_ps(_mm256_sub_ps(a, b), src, x);
}
FFN_VINLINE ffn__vf ffn__maskz_fmsub(ffn__vm m, ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm256_and_ps(m, _mm256_fmsub_ps(a, b, c));
}

// --- special values ------------------------------------------------------------------------------
FFN_VINLINE ffn__vf ffn__nan_take(ffn__vf r, ffn__vf src) {
    return _mm256_blendv_ps(r, _mm256_or_ps(src, ffn__cbits(0x00400000u)), ffn__isnan(src));
}
FFN_VINLINE ffn__vf ffn__zero_special(ffn__vf v) {
    return _mm256_and_ps(ffn__bits_in(v, 1, 0x7f7fffff), v);
}

// --- table lookups: vpermps reads the low 3 bits; bits 3 and 4 pick the register ---------------
FFN_VINLINE ffn__vf ffn__lut_fast(const float *tab, ffn__vi j) {
    return _mm256_permutevar8x32_ps(_mm256_load_ps(tab), j);
}
FFN_VINLINE ffn__vf ffn__lut16(const float *tab, ffn__vi j) {
    const ffn__vf lo = ffn__lut_fast(tab, j), hi = ffn__lut_fast(tab + 8, j);
    return _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(j, 28)));
}
FFN_VINLINE ffn__vf ffn__lut32(const float *tab, ffn__vi j) {
    const ffn__vf lo = ffn__lut16(tab, j), hi = ffn__lut16(tab + 16, j);
    return _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(j, 27)));
}

// --- per-dtype loads and stores ------------------------------------------------------------------
// Lanes of a tail mask (a prefix of the vector).
FFN_VINLINE int ffn__tail_count(ffn__vm m) { return __builtin_popcount(_mm256_movemask_ps(m)); }

// 8 16-bit elements from p[i..] (all, or the first `count`, the others 0) as f32.
FFN_VINLINE ffn__vf ffn__vload16(const uint16_t *q, enum ffn_dtype dt, bool full, ffn__vm m) {
    __m128i h;
    if (full) {
        h = _mm_loadu_si128((const __m128i *)q);
    } else {
        uint16_t b[8] = {0};
        memcpy(b, q, (size_t)ffn__tail_count(m) * 2);
        h = _mm_loadu_si128((const __m128i *)b);
    }
    if (dt == FFN_DTYPE_BF16)  // bf16 is the top half of an f32
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);  // exact, subnormals included
}
// 8 elements from p[i..i+7] as f32; `full` = all 8 lanes, else only the lanes of m (others 0).
FFN_VINLINE ffn__vf ffn__vload(const void *p, int64_t i, enum ffn_dtype dt, bool full, ffn__vm m) {
    if (dt == FFN_DTYPE_F32) {
        const float *q = (const float *)p + i;
        return full ? _mm256_loadu_ps(q) : _mm256_maskload_ps(q, _mm256_castps_si256(m));
    }
    return ffn__vload16((const uint16_t *)p + i, dt, full, m);
}

// f32 -> bf16 by integer ops: round to nearest even, NaN kept quiet, subnormals kept (as
// ffn_f32_to_bf16): bits + 0x7fff + lsb, the result in the high half of each lane (the low half
// is not cleared).
FFN_VINLINE __m256i ffn__bf16_round_hi(ffn__vf v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    const __m256i q = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));  // quiet, no rounding
    return _mm256_blendv_epi8(r, q, _mm256_castps_si256(ffn__isnan(v)));
}
// f32 -> 8 bf16 (RNE, as ffn_f32_to_bf16).
FFN_VINLINE __m128i ffn__bf16_from_f32(ffn__vf v) {
    const __m256i r = _mm256_srli_epi32(ffn__bf16_round_hi(v), 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}
// f32 -> f16: vcvtps2ph with round-to-nearest-even is exact RNE (subnormals, NaN quieted).
FFN_VINLINE __m128i ffn__f16_from_f32(ffn__vf v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Rounds v to the storage type dt and back (parity mode); identity for f32.
FFN_VINLINE ffn__vf ffn__vround_to(ffn__vf v, enum ffn_dtype dt) {
    if (dt == FFN_DTYPE_BF16)
        return _mm256_castsi256_ps(
            _mm256_and_si256(ffn__bf16_round_hi(v), _mm256_set1_epi32((int)0xffff0000u)));
    if (dt == FFN_DTYPE_F16) return _mm256_cvtph_ps(ffn__f16_from_f32(v));
    return v;
}

// Stores v to p[i..]: all 8 lanes, the lanes of m, or all 8 non-temporally (p + i aligned to
// the 32 (f32) or 16 (16-bit) bytes of one vector). cvt: unused (no AVX2 bf16 conversion).
FFN_VINLINE void ffn__vstore(void *p, int64_t i, enum ffn_dtype dt, ffn__vf v, enum ffn__st st,
                             ffn__vm m, bool cvt) {
    (void)cvt;
    if (dt == FFN_DTYPE_F32) {
        float *q = (float *)p + i;
        if (st == FFN_ST_STREAM)
            _mm256_stream_ps(q, v);
        else if (st == FFN_ST_MASK)
            _mm256_maskstore_ps(q, _mm256_castps_si256(m), v);
        else
            _mm256_storeu_ps(q, v);
        return;
    }
    uint16_t *q = (uint16_t *)p + i;
    const __m128i h = dt == FFN_DTYPE_BF16 ? ffn__bf16_from_f32(v) : ffn__f16_from_f32(v);
    if (st == FFN_ST_STREAM) {
        _mm_stream_si128((__m128i *)q, h);
    } else if (st == FFN_ST_MASK) {
        uint16_t b[8];
        _mm_storeu_si128((__m128i *)b, h);
        memcpy(q, b, (size_t)ffn__tail_count(m) * 2);
    } else {
        _mm_storeu_si128((__m128i *)q, h);
    }
}

// --- bf16 pairs: 16 elements to a 256-bit load ----------------------------------------------
// One 256-bit load gives the odd elements (the high halves of its 32-bit lanes, the low halves
// cleared) and the even ones (shifted up) as two f32 vectors; the integer rounding of both and
// one vpblendw put them back in order.
FFN_VINLINE void ffn__eo_load(const void *p, int64_t i, ffn__vf *o, ffn__vf *e) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i));
    *o = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)));
    *e = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}
// Stores the pair (o, e) to p[i..i+15] as bf16, all 16 (FFN_ST_FULL) or non-temporally
// (FFN_ST_STREAM: p + i 32-byte aligned); the same bits as two ffn__vstore.
FFN_VINLINE void ffn__eo_store(void *p, int64_t i, ffn__vf o, ffn__vf e, enum ffn__st st,
                               bool cvt) {
    (void)cvt;
    const __m256i r = _mm256_blend_epi16(_mm256_srli_epi32(ffn__bf16_round_hi(e), 16),
                                         ffn__bf16_round_hi(o), 0xaa);  // odd words from o
    __m256i *q = (__m256i *)((uint16_t *)p + i);
    if (st == FFN_ST_STREAM)
        _mm256_stream_si256(q, r);
    else
        _mm256_storeu_si256(q, r);
}

FFN_VINLINE void ffn__sfence(void) { _mm_sfence(); }

#endif  // FFN_SIMD_AVX2_H
