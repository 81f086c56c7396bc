// gelu_tanh_avx512.c — AVX-512 tanh-GeLU and GeGLU (tanh): forward, backward, every (in, out)
// dtype pair. Fast paths serve the lanes x ≥ -4.5 (all but ~1 in 300,000 of N(0,1) inputs); the
// other lanes (and every lane of the accurate tier's forward) take the general form with the
// exact argument and the compensated quotient, selected per lane, so no lane's result depends
// on its neighbours.
#include "cpu/x86_avx512/vmath_avx512.h"

// Limits at -inf (act) and +inf (act'), see ffn__lim.
static const struct ffn__lim ffn__lims = {-0.0f, 1.0f};

// gelu_tanh(x) = 0.5x(1 + tanh u) = x·σ(A),  A = 2u = x·(K + M·x²),  K = √(8/π), M = 0.044715·K.
// exp(-A) = 2^(-A·log2 e): the constants below carry log2(e), as float pairs (hi + lo):
#define FFN_KL_HI 0x1.26aec2p+1f  // √(8/π)·log2 e
#define FFN_KL_LO 0x1.bce75ap-27f
#define FFN_ML_HI 0x1.a5a7dp-4f  // 0.044715·√(8/π)·log2 e
#define FFN_ML_LO -0x1.151aaep-29f
// The derivative's dA/dx = K + 3M·x² (plain f32: the backward tier is 8 ulp).
#define FFN_K_HI 0x1.988454p+0f   // √(8/π)
#define FFN_M3_HI 0x1.b6676cp-3f  // 3·0.044715·√(8/π)
// Fast lanes: x ≥ -3.5 (all but ~1 in 4,300 N(0,1) inputs) for gelu itself and the derivative,
// whose argument (ffn__gelu_fast_e, full = false) leaves out error terms that grow as |x|³;
// x ≥ -4.5 for a combine (h = gelu(g)·up rounds once more), whose argument keeps them. For
// |x| ≤ 4.72 (K + M·x² ≤ 2K) the exact error term of q = K + M·x² comes from Sterbenz' lemma;
// beyond on the positive side e is so small that its error no longer matters.
#define FFN_GELU_FAST_MIN -4.5f
#define FFN_GELU_FAST_MIN_D -3.5f
// The fast paths clamp the exponent's argument at x = 9 (which keeps x·q far from overflow): there
// A·log2 e = 95.8, e = 2^-95.8 is already below half an ulp of 1, so 1 + e = 1 for every x ≥ 9
// and the clamp changes no result.
#define FFN_GELU_FAST_CLAMP 9.0f
// A combine's fast lanes also need act(x) = x/(1 + e) normal: |x| ≥ 2^-100 (1 + e ≤ 2^20 there).
#define FFN_GELU_FAST_TINY 0x1p-100f
// |x| ≥ 20: A ≥ 600, e^-A = 0 in f32, so gelu(x) is x (x > 0) or -0 (x < 0) exactly; clamping
// the argument there changes no result and keeps x³ finite (general form).
#define FFN_GELU_CLAMP 20.0f

// Exact argument, any x in [-20, 20]: A·log2 e = xa·(qh + ql) with qh + ql = KL + ML·xa² to
// ~2^-46 (two-sum of KL_hi + ML_hi·x², plus the product and constant error terms).
// Returns n16 (in *n) and E with exp(A') = E·2^n16 for A' = xa·(qh + ql)·ln 2.
FFN_VINLINE __m512 ffn__gelu_exact_arg(__m512 xa, bool precise, __m512 *n) {
    const __m512 x2h = _mm512_mul_ps(xa, xa);
    const __m512 x2l = _mm512_fmsub_ps(xa, xa, x2h);
    const __m512 ph = _mm512_mul_ps(ffn__c(FFN_ML_HI), x2h);
    __m512 lo = _mm512_fmsub_ps(ffn__c(FFN_ML_HI), x2h, ph);  // ML_hi·x2h - ph exactly
    const __m512 qh = _mm512_add_ps(ffn__c(FFN_KL_HI), ph);
    const __m512 bb = _mm512_sub_ps(qh, ffn__c(FFN_KL_HI));  // two-sum error of KL_hi + ph
    const __m512 er = _mm512_add_ps(_mm512_sub_ps(ffn__c(FFN_KL_HI), _mm512_sub_ps(qh, bb)),
                                    _mm512_sub_ps(ph, bb));
    lo = _mm512_fmadd_ps(ffn__c(FFN_ML_HI), x2l, lo);
    lo = _mm512_fmadd_ps(ffn__c(FFN_ML_LO), x2h, lo);
    const __m512 ql = _mm512_add_ps(er, _mm512_add_ps(lo, ffn__c(FFN_KL_LO)));
    const __m512 t = _mm512_fmadd_ps(xa, qh, ffn__c(FFN_EXP2_MAGIC));
    *n = _mm512_sub_ps(t, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fmsub_ps(xa, qh, *n);
    r = _mm512_fmadd_ps(xa, ql, r);
    return ffn__exp2_frac(t, r, precise);
}

// The general form, any x: e = exp(-|A|) from xa = -|x| (A is odd), then the compensated
// x·σ(A) of ffn__xsig (within ~1 ulp).
FFN_VINLINE struct ffn__av ffn__gelu_general(__m512 x) {
    const __mmask16 tiny = ffn__tiny_pre(&x);
    const __m512 xa = _mm512_max_ps(ffn__c(-FFN_GELU_CLAMP), ffn__neg_abs(x));
    __m512 n;
    const __m512 E = ffn__gelu_exact_arg(xa, true, &n);
    const __m512 xm = _mm512_max_ps(ffn__c(-FFN_GELU_CLAMP), x);
    struct ffn__av v = ffn__xsig(xm, E, n, ffn__signmask(x));
    ffn__tiny_post(&v, tiny);
    return v;
}

// e = exp(-A) for the signed x, fast lanes (x ∈ [-4.5, 9] after the clamp), from x2 = x² (rounded,
// shared with A' in the derivative): q = KL_hi + ML_hi·x2 is one fma; since q ≤ 2·KL_hi, KL_hi - q
// is exact (Sterbenz) and ql = ML_hi·x2 + (KL_hi - q) + KL_lo recovers q's rounding error and the
// constant's low part (they reach 2^-21 in A·log2 e). With full, ql also gets x2's rounding error
// and ML_lo·x² (three fmas); without, those are left out: each ≤ 2^-25 for x ≥ -3.5, ≤ 0.4 ulp
// of σ (the exhaustive sweep: gelu 3.52 ulp; a combine would reach 4.66, so it keeps them).
// Then -A·log2 e = -x·(q + ql) is reduced with fmas, and e = E·2^n16 (E without its table low
// part: ~1 ulp; the power of two by vscalefps).
FFN_VINLINE __m512 ffn__gelu_fast_e(__m512 xc, __m512 x2, bool full) {
    const __m512 q = _mm512_fmadd_ps(x2, ffn__c(FFN_ML_HI), ffn__c(FFN_KL_HI));
    const __m512 d = _mm512_add_ps(_mm512_sub_ps(ffn__c(FFN_KL_HI), q), ffn__c(FFN_KL_LO));
    __m512 ql = _mm512_fmadd_ps(x2, ffn__c(FFN_ML_HI), d);
    if (full) {
        const __m512 x2l = _mm512_fmsub_ps(xc, xc, x2);
        ql = _mm512_fmadd_ps(x2, ffn__c(FFN_ML_LO), ql);
        ql = _mm512_fmadd_ps(x2l, ffn__c(FFN_ML_HI), ql);
    }
    const __m512 t = _mm512_fnmadd_ps(xc, q, ffn__c(FFN_EXP2_MAGIC));
    const __m512 n = _mm512_sub_ps(t, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fnmsub_ps(xc, q, n);  // -x·q - n16
    r = _mm512_fnmadd_ps(xc, ql, r);
    return _mm512_scalef_ps(ffn__exp2_frac(t, r, false), n);
}

// gelu_tanh'(x) = σ(A) + x·σ(A)·(1 - σ(A))·A',  A' = K + 3M·x²  (σ and 1-σ from e = exp(-|A|),
// never cosh), as S·(1 + x·A'·C)·2^k with the pieces of ffn__sig_pieces: the general form.
FFN_VINLINE struct ffn__avd ffn__gelu_general_d(__m512 x) {
    const __mmask16 tiny = ffn__tiny_pre(&x);  // act' is flat there: only act needs the scale
    const __m512 xa = _mm512_max_ps(ffn__c(-FFN_GELU_CLAMP), ffn__neg_abs(x));
    __m512 n;
    const __m512 E = ffn__gelu_exact_arg(xa, false, &n);
    const struct ffn__sigd s = ffn__sig_pieces(E, n, ffn__signmask(x));
    const __m512 xc =
        _mm512_min_ps(ffn__c(FFN_GELU_CLAMP), _mm512_max_ps(ffn__c(-FFN_GELU_CLAMP), x));
    const __m512 dA = _mm512_fmadd_ps(_mm512_mul_ps(xc, xc), ffn__c(FFN_M3_HI), ffn__c(FFN_K_HI));
    struct ffn__avd r;
    r.a.hi = _mm512_mul_ps(_mm512_max_ps(ffn__c(-FFN_GELU_CLAMP), x), s.S);
    r.a.lo = _mm512_setzero_ps();
    r.a.k = s.k;
    r.da.hi = _mm512_mul_ps(s.S, _mm512_fmadd_ps(_mm512_mul_ps(xc, dA), s.C, ffn__c(1.0f)));
    r.da.lo = _mm512_setzero_ps();
    r.da.k = s.k;
    ffn__tiny_post(&r.a, tiny);
    return r;
}

// Forward: fast lanes (x ≥ -3.5; in a combine x ≥ -4.5 and the full argument) gelu(x) = x/(1 + e)
// with e = exp(-A) for the signed x (e ≤ e^13.7: no overflow), a plain division: ≤ 3.52 ulp (a
// combine one rounding more). Rare lanes (below, NaN; in a combine also |x| < 2^-100) and the
// accurate tier: the general form.
// Backward: fast lanes (x ≥ -3.5) act' = inv·(1 + x·A'·e·inv), inv = 1/(1 + e), act = x·inv;
// rare lanes (x < -3.5, NaN; for act·dh also subnormal x): the general form.
// pre: the fast lanes' e = exp(-A) from x clamped at 9 (s.w), and x² for the derivative (s.v);
// nothing for the accurate tier's forward.
FFN_VINLINE struct ffn__pre ffn__gelu_pre(__m512 x, enum ffn__mode mode, bool acc) {
    struct ffn__pre s = {x, x, x};
    const bool fwd = mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL;
    if (fwd && acc) return s;
    s.w = _mm512_min_ps(ffn__c(FFN_GELU_FAST_CLAMP), x);  // NaN stays
    s.v = _mm512_mul_ps(s.w, s.w);
    s.u = ffn__gelu_fast_e(s.w, s.v, mode == FFN_MODE_ACT_MUL);
    return s;
}
FFN_VINLINE struct ffn__vo ffn__gelu_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                         enum ffn__mode mode, bool acc) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    struct ffn__vo o;
    const __m512 one = ffn__c(1.0f);
    const __m512 e = s.u;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        if (acc) {
            o.y0 = o.y1 = ffn__av_fwd(ffn__gelu_general(x), x, a, mode, FL, ffn__lims);
            return o;
        }
        const bool act = mode == FFN_MODE_ACT;
        const __m512 q = _mm512_div_ps(x, _mm512_add_ps(one, e));
        o.y0 = act ? q : _mm512_mul_ps(q, a);
        __mmask16 rare = _mm512_cmp_ps_mask(
            x, ffn__c(act ? FFN_GELU_FAST_MIN_D : FFN_GELU_FAST_MIN), _CMP_NGE_UQ);
        if (mode == FFN_MODE_ACT_MUL)
            rare |= _mm512_cmp_ps_mask(_mm512_abs_ps(x), ffn__c(FFN_GELU_FAST_TINY), _CMP_LT_OQ);
        if (rare)
            o.y0 = _mm512_mask_mov_ps(o.y0, rare,
                                      ffn__av_fwd(ffn__gelu_general(x), x, a, mode, FL, ffn__lims));
        o.y1 = o.y0;
        return o;
    }
    const bool both = mode == FFN_MODE_BOTH;
    const __m512 xc = s.w, x2 = s.v;
    const __m512 inv = _mm512_div_ps(one, _mm512_add_ps(one, e));
    const __m512 dA = _mm512_fmadd_ps(x2, ffn__c(FFN_M3_HI), ffn__c(FFN_K_HI));
    const __m512 br = _mm512_fmadd_ps(_mm512_mul_ps(xc, dA), _mm512_mul_ps(e, inv), one);
    const __m512 d = _mm512_mul_ps(inv, br);
    o.y0 = both ? _mm512_mul_ps(d, _mm512_mul_ps(a, b)) : _mm512_mul_ps(d, a);
    o.y1 = both ? _mm512_mul_ps(_mm512_mul_ps(x, inv), b) : o.y0;
    __mmask16 rare = _mm512_cmp_ps_mask(x, ffn__c(FFN_GELU_FAST_MIN_D), _CMP_NGE_UQ);
    if (both) rare |= _mm512_fpclass_ps_mask(x, 0x20);  // subnormal: x·inv would lose bits
    if (rare) {
        const struct ffn__vo g =
            ffn__avd_bwd(ffn__gelu_general_d(x), x, a, b, mode, DFL, DFL, ffn__lims);
        o.y0 = _mm512_mask_mov_ps(o.y0, rare, g.y0);
        if (both) o.y1 = _mm512_mask_mov_ps(o.y1, rare, g.y1);
    }
    if (!both) o.y1 = o.y0;
    // Fast DACT_MUL lanes have x finite: a NaN result can only come from dy, and is its quieted
    // copy. The BOTH products meet two multiplicands, which may both be NaN.
    return both ? ffn__nan_fix_mode(o, x, a, b, mode) : o;
}
FFN_WHOLE(ffn__gelu)
static const bool ffn__gelu_tiers = true;

FFN_KPROTO_ACT_FWD(ffn_gelu_tanh_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, FFN_PIPED(ffn__gelu)); }
FFN_KPROTO_ACT_BWD(ffn_gelu_tanh_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, FFN_PIPED(ffn__gelu));
}
FFN_KPROTO_GLU_FWD(ffn_geglu_tanh_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, FFN_PIPED(ffn__gelu));
}
FFN_KPROTO_GLU_BWD(ffn_geglu_tanh_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_PIPED(ffn__gelu));
}
