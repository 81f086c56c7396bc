// simd_avx512.h — the SIMD vocabulary of simd.h for AVX-512 F/BW/DQ/VL (+ BF16 where the CPU has
// it): 16 f32 lanes, mask registers, vscalefps, vfixupimmps, one-instruction 16- and 32-entry
// table lookups (vpermps, vpermt2ps). Included first by the files of src/cpu/x86_avx512/, which
// are built with -mavx512f/bw/dq/vl/bf16 -mfma -mf16c -ffp-contract=off.
#ifndef FFN_SIMD_AVX512_H
#define FFN_SIMD_AVX512_H

#include <immintrin.h>

#include "cpu/simd/simd.h"

#define FFN_V_ISA avx512
#define FFN_VL 16           // f32 lanes per vector
#define FFN_V_FIXUP 1       // vfixupimmps: nan_take is one instruction
#define FFN_V_LUT_FAST 32   // vpermt2ps: two registers of 16
#define FFN_V_SCALEF_1OP 1  // vscalefps, and masked operations at no extra cost
#define FFN_V_FEW_TESTS 0   // kortest: a mask test costs next to nothing
// Calls in cache walk sub-ranges with the pre stage ahead as streaming calls do.
#define FFN_V_CACHE_WAYS 0
#define FFN_V_CACHE_WAYS_PLAIN 0
#define FFN_V_CACHE_AHEAD 0xf  // every op kind (bit 1 << enum ffn_kop)
#define FFN_V_STREAM_WAYS 0
#define FFN_V_STREAM_AHEAD 0xf
#define FFN_V_STREAM_NT 0
#define FFN_V_APART 0

typedef __m512 ffn__vf;
typedef __m512i ffn__vi;
typedef __mmask16 ffn__vm;

// --- arithmetic ----------------------------------------------------------------------------------
FFN_VINLINE ffn__vf ffn__c(float v) { return _mm512_set1_ps(v); }
FFN_VINLINE ffn__vf ffn__zero(void) { return _mm512_setzero_ps(); }
FFN_VINLINE ffn__vf ffn__cbits(uint32_t bits) {  // every lane the float with these bits
    return _mm512_castsi512_ps(_mm512_set1_epi32((int)bits));
}
// -0: the neutral element of addition for every x (+0 would turn -0 + 0 into +0).
FFN_VINLINE ffn__vf ffn__negzero(void) { return ffn__cbits(0x80000000u); }
FFN_VINLINE ffn__vf ffn__add(ffn__vf a, ffn__vf b) { return _mm512_add_ps(a, b); }
FFN_VINLINE ffn__vf ffn__sub(ffn__vf a, ffn__vf b) { return _mm512_sub_ps(a, b); }
FFN_VINLINE ffn__vf ffn__mul(ffn__vf a, ffn__vf b) { return _mm512_mul_ps(a, b); }
FFN_VINLINE ffn__vf ffn__div(ffn__vf a, ffn__vf b) { return _mm512_div_ps(a, b); }
FFN_VINLINE ffn__vf ffn__fmadd(ffn__vf a, ffn__vf b, ffn__vf c) { return _mm512_fmadd_ps(a, b, c); }
FFN_VINLINE ffn__vf ffn__fmsub(ffn__vf a, ffn__vf b, ffn__vf c) { return _mm512_fmsub_ps(a, b, c); }
FFN_VINLINE ffn__vf ffn__fnmadd(ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm512_fnmadd_ps(a, b, c);
}
FFN_VINLINE ffn__vf ffn__fnmsub(ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm512_fnmsub_ps(a, b, c);
}
FFN_VINLINE ffn__vf ffn__min(ffn__vf a, ffn__vf b) { return _mm512_min_ps(a, b); }
FFN_VINLINE ffn__vf ffn__max(ffn__vf a, ffn__vf b) { return _mm512_max_ps(a, b); }
FFN_VINLINE ffn__vf ffn__abs(ffn__vf x) { return _mm512_abs_ps(x); }
FFN_VINLINE ffn__vf ffn__neg_abs(ffn__vf x) { return _mm512_or_ps(x, ffn__negzero()); }
FFN_VINLINE ffn__vf ffn__floor(ffn__vf x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
FFN_VINLINE ffn__vi ffn__cvtt_i(ffn__vf x) { return _mm512_cvttps_epi32(x); }
FFN_VINLINE ffn__vi ffn__as_i(ffn__vf x) { return _mm512_castps_si512(x); }
FFN_VINLINE ffn__vf ffn__as_f(ffn__vi x) { return _mm512_castsi512_ps(x); }
FFN_VINLINE ffn__vi ffn__ci(uint32_t v) { return _mm512_set1_epi32((int)v); }
FFN_VINLINE ffn__vi ffn__add_i(ffn__vi a, ffn__vi b) { return _mm512_add_epi32(a, b); }
FFN_VINLINE ffn__vi ffn__and_i(ffn__vi a, ffn__vi b) { return _mm512_and_si512(a, b); }
FFN_VINLINE ffn__vi ffn__slli_i(ffn__vi a, int k) { return _mm512_slli_epi32(a, k); }
FFN_VINLINE ffn__vf ffn__rcp14(ffn__vf d) { return _mm512_rcp14_ps(d); }
FFN_VINLINE ffn__vf ffn__scalef(ffn__vf v, ffn__vf n) { return _mm512_scalef_ps(v, n); }

// --- masks ---------------------------------------------------------------------------------------
FFN_VINLINE ffn__vm ffn__cmp_lt(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
FFN_VINLINE ffn__vm ffn__cmp_le(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ);
}
FFN_VINLINE ffn__vm ffn__cmp_gt(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ);
}
FFN_VINLINE ffn__vm ffn__cmp_nlt(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ);
}
FFN_VINLINE ffn__vm ffn__cmp_nge(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_NGE_UQ);
}
FFN_VINLINE ffn__vm ffn__cmp_nle(ffn__vf a, ffn__vf b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ);
}
FFN_VINLINE ffn__vm ffn__isnan(ffn__vf x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }
FFN_VINLINE ffn__vm ffn__signmask(ffn__vf x) {
    return _mm512_movepi32_mask(_mm512_castps_si512(x));
}
// vfpclassps categories: 0x01 QNaN, 0x02 +0, 0x04 -0, 0x08 +inf, 0x10 -inf, 0x20 subnormal,
// 0x80 SNaN.
FFN_VINLINE ffn__vm ffn__is_sub(ffn__vf x) { return _mm512_fpclass_ps_mask(x, 0x20); }
FFN_VINLINE ffn__vm ffn__is_zero_inf(ffn__vf x) { return _mm512_fpclass_ps_mask(x, 0x1e); }
FFN_VINLINE ffn__vm ffn__is_inf(ffn__vf x) { return _mm512_fpclass_ps_mask(x, 0x18); }
FFN_VINLINE ffn__vm ffn__is_ninf(ffn__vf x) { return _mm512_fpclass_ps_mask(x, 0x10); }
FFN_VINLINE ffn__vm ffn__is_special(ffn__vf x) { return _mm512_fpclass_ps_mask(x, 0x9f); }
FFN_VINLINE ffn__vm ffn__m_or(ffn__vm a, ffn__vm b) { return a | b; }
FFN_VINLINE ffn__vm ffn__m_and(ffn__vm a, ffn__vm b) { return a & b; }
FFN_VINLINE ffn__vm ffn__m_andn(ffn__vm a, ffn__vm b) { return a & (ffn__vm)~b; }
FFN_VINLINE ffn__vm ffn__m_not(ffn__vm a) { return (ffn__vm)~a; }
FFN_VINLINE bool ffn__m_any(ffn__vm a) { return a != 0; }
FFN_VINLINE ffn__vm ffn__m_zero(void) { return 0; }
FFN_VINLINE ffn__vm ffn__m_tail(int64_t k) { return (ffn__vm)((1u << k) - 1u); }
FFN_VINLINE ffn__vf ffn__mask_mov(ffn__vf src, ffn__vm m, ffn__vf a) {
    return _mm512_mask_mov_ps(src, m, a);
}
FFN_VINLINE ffn__vf ffn__maskz_mov(ffn__vm m, ffn__vf a) { return _mm512_maskz_mov_ps(m, a); }
FFN_VINLINE ffn__vf ffn__mask_mul(ffn__vf src, ffn__vm m, ffn__vf a, ffn__vf b) {
    return _mm512_mask_mul_ps(src, m, a, b);
}
FFN_VINLINE ffn__vf ffn__mask_sub(ffn__vf src, ffn__vm m, ffn__vf a, ffn__vf b) {
    return _mm512_mask_sub_ps(src, m, a, b);
}
FFN_VINLINE ffn__vf ffn__mask_sub_pos(ffn__vf src, ffn__vf x, ffn__vf a, ffn__vf b) {
    return _mm512_mask_sub_ps(src, ffn__cmp_nlt(x, ffn__zero()), a, b);
}
FFN_VINLINE ffn__vf ffn__maskz_fmsub(ffn__vm m, ffn__vf a, ffn__vf b, ffn__vf c) {
    return _mm512_maskz_fmsub_ps(m, a, b, c);
}

// --- special values: vfixupimmps ---------------------------------------------------------------
// With this table vfixupimmps replaces the destination by QNaN(src) where src is a NaN.
#define FFN_FIXUP_QNAN_SRC 0x22
FFN_VINLINE ffn__vf ffn__nan_take(ffn__vf r, ffn__vf src) {
    return _mm512_fixupimm_ps(r, src, _mm512_set1_epi32(FFN_FIXUP_QNAN_SRC), 0);
}
// QNaN, SNaN, ±0, ±inf -> +0.
#define FFN_FIXUP_SPECIAL_POSZERO 0x00880888
FFN_VINLINE ffn__vf ffn__zero_special(ffn__vf v) {
    return _mm512_fixupimm_ps(v, v, _mm512_set1_epi32(FFN_FIXUP_SPECIAL_POSZERO), 0);
}

// --- table lookups: one vpermps (16 entries) or vpermt2ps (32) ---------------------------------
FFN_VINLINE ffn__vf ffn__lut16(const float *tab, ffn__vi j) {
    return _mm512_permutexvar_ps(j, _mm512_load_ps(tab));
}
FFN_VINLINE ffn__vf ffn__lut32(const float *tab, ffn__vi j) {
    return _mm512_permutex2var_ps(_mm512_load_ps(tab), j, _mm512_load_ps(tab + 16));
}
FFN_VINLINE ffn__vf ffn__lut_fast(const float *tab, ffn__vi j) { return ffn__lut32(tab, j); }

// --- per-dtype loads and stores ------------------------------------------------------------------

// 16 elements from p[i..i+15] as f32; `full` = all 16 lanes, else only the lanes of m (others 0).
FFN_VINLINE ffn__vf ffn__vload(const void *p, int64_t i, enum ffn_dtype dt, bool full, ffn__vm m) {
    if (dt == FFN_DTYPE_F32) {
        const float *q = (const float *)p + i;
        return full ? _mm512_loadu_ps(q) : _mm512_maskz_loadu_ps(m, q);
    }
    const uint16_t *q = (const uint16_t *)p + i;
    const __m256i h =
        full ? _mm256_loadu_si256((const __m256i *)q) : _mm256_maskz_loadu_epi16(m, q);
    if (dt == FFN_DTYPE_BF16)  // bf16 is the top half of an f32
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

// f32 -> bf16 by integer ops: round to nearest even, NaN kept quiet, subnormals kept (as
// ffn_f32_to_bf16): bits + 0x7fff + lsb, the result in the high half of each lane (the low half
// is not cleared).
FFN_VINLINE __m512i ffn__bf16_round_hi(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));  // quiet, no rounding
}

// f32 -> bf16. With cvt (the CPU has AVX512_BF16) a vector without subnormal lanes takes one
// vcvtneps2bf16 (vcvtne2ps2bf16 for a pair, below): the same RNE and quiet NaN as the integer
// rounding, but subnormal inputs flushed to zero, so a vector with a subnormal lane keeps the
// integer rounding. Either way every lane's bits depend on its own value only.
FFN_VINLINE __m256i ffn__bf16_from_f32(__m512 v, bool cvt) {
    if (cvt && !_mm512_fpclass_ps_mask(v, 0x20)) return (__m256i)_mm512_cvtneps_pbh(v);
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(ffn__bf16_round_hi(v), 16));
}

// f32 -> f16: vcvtps2ph with round-to-nearest-even is exact RNE (subnormals, NaN quieted).
FFN_VINLINE __m256i ffn__f16_from_f32(__m512 v) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Rounds v to the storage type dt and back (parity mode); identity for f32.
FFN_VINLINE ffn__vf ffn__vround_to(ffn__vf v, enum ffn_dtype dt) {
    if (dt == FFN_DTYPE_BF16)
        return _mm512_castsi512_ps(
            _mm512_and_si512(ffn__bf16_round_hi(v), _mm512_set1_epi32((int)0xffff0000u)));
    if (dt == FFN_DTYPE_F16) return _mm512_cvtph_ps(ffn__f16_from_f32(v));
    return v;
}

// Stores v to p[i..]: all 16 lanes, the lanes of m, or all 16 non-temporally (p + i aligned to
// the 64 (f32) or 32 (16-bit) bytes of one vector).
FFN_VINLINE void ffn__vstore(void *p, int64_t i, enum ffn_dtype dt, ffn__vf v, enum ffn__st st,
                             ffn__vm m, bool cvt) {
    if (dt == FFN_DTYPE_F32) {
        float *q = (float *)p + i;
        if (st == FFN_ST_STREAM)
            _mm512_stream_ps(q, v);
        else if (st == FFN_ST_MASK)
            _mm512_mask_storeu_ps(q, m, v);
        else
            _mm512_storeu_ps(q, v);
        return;
    }
    uint16_t *q = (uint16_t *)p + i;
    const __m256i h = dt == FFN_DTYPE_BF16 ? ffn__bf16_from_f32(v, cvt) : ffn__f16_from_f32(v);
    if (st == FFN_ST_STREAM)
        _mm256_stream_si256((__m256i *)q, h);
    else if (st == FFN_ST_MASK)
        _mm256_mask_storeu_epi16(q, m, h);
    else
        _mm256_storeu_si256((__m256i *)q, h);
}

// --- bf16 pairs: 32 elements to a 512-bit load ----------------------------------------------
// One 512-bit load gives the odd elements (the high halves of its 32-bit lanes, the low halves
// cleared) and the even ones (shifted up) as two f32 vectors; one vcvtne2ps2bf16 and one vpermw
// (or the integer rounding and one vpternlogd) put both back in order.
FFN_VINLINE void ffn__eo_load(const void *p, int64_t i, ffn__vf *o, ffn__vf *e) {
    const __m512i v = _mm512_loadu_si512((const uint16_t *)p + i);
    *o = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)));
    *e = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}
// Stores the pair (o, e) to p[i..i+31] as bf16, all 32 (FFN_ST_FULL) or non-temporally
// (FFN_ST_STREAM: p + i 64-byte aligned); the same bits as two ffn__vstore.
FFN_VINLINE void ffn__eo_store(void *p, int64_t i, ffn__vf o, ffn__vf e, enum ffn__st st,
                               bool cvt) {
    __m512i r;
    if (cvt && !(_mm512_fpclass_ps_mask(o, 0x20) | _mm512_fpclass_ps_mask(e, 0x20))) {
        // words 0..15 of the conversion are the even elements, 16..31 the odd ones
        const __m512i idx =
            _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                             22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        r = _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(o, e));
    } else {
        r = _mm512_ternarylogic_epi32(ffn__bf16_round_hi(o),
                                      _mm512_srli_epi32(ffn__bf16_round_hi(e), 16),
                                      _mm512_set1_epi32((int)0xffff0000u), 0xe4);  // c ? a : b
    }
    uint16_t *q = (uint16_t *)p + i;
    if (st == FFN_ST_STREAM)
        _mm512_stream_si512((void *)q, r);
    else
        _mm512_storeu_si512(q, r);
}

FFN_VINLINE void ffn__sfence(void) { _mm_sfence(); }

#endif  // FFN_SIMD_AVX512_H
