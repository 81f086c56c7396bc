// sigmoid_avx2.c — the logistic sigmoid and the original GLU (sigmoid gate) on AVX2 + FMA:
// forward, backward, gated forward and gated backward, for every (in, out) dtype pair.
// Accuracy (f32): forward and GLU forward ≤ 2 ulp (measured ≤ 1); backward ≤ 8 ulp. A short fast
// path serves the lanes with |x| ≤ 80; vectors with other lanes also run the general path below
// for those lanes.
#include "cpu/x86_avx2/loops_avx2.h"

// --- the general path
// ------------------------------------------------------------------------------

// σ(x) = (hi + lo)·2^ns:  x ≥ 0: 1/(1 + e^-x);  x < 0: e^x/(1 + e^x) = [(1 + pm1)/(1 + E)]·2^n.
// σ'(x) = σ(x)·σ(-x) = E/(1 + E)² = [(1 + pm1)/(1 + E)²]·2^n on both sides (E = e^-|x|), so
// the exponent is applied last for large |x| of either sign.
// Clamp: -|x| ≥ FFN_AVX2_EXP_MIN (σ there is far below the smallest subnormal, even times two
// f32 factors). `fix` lanes (FFN_AVX2_SIGMOID_ZERO): σ(x ≤ -745.13) = 0, σ'(|x| ≥ 745.13) = 0.
struct ffn__sig {
    __m256 neg, fix_lo, fix_both;
    struct ffn__avx2_exp e;
    struct ffn__avx2_den d;
};

FFN_AVX2_INLINE struct ffn__sig ffn__sig_prep(__m256 x) {
    struct ffn__sig s;
    s.neg = ffn__avx2_neg_mask(x);
    s.fix_lo = ffn__avx2_le(x, FFN_AVX2_SIGMOID_ZERO);
    s.fix_both = ffn__avx2_le(_mm256_or_ps(x, ffn__avx2_sign_mask()), FFN_AVX2_SIGMOID_ZERO);
    const __m256 a =
        ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(x, ffn__avx2_sign_mask()));
    s.e = ffn__avx2_exp_neg(a, a, false);
    s.d = ffn__avx2_den(s.e);
    return s;
}

FFN_AVX2_INLINE void ffn__sig_value(const struct ffn__sig *s, __m256 *hi, __m256 *lo, __m256i *ns) {
    ffn__avx2_xsigmoid(_mm256_set1_ps(1.0f), s->neg, s->e, s->d, hi, lo, ns);
}

// σ'·2^-n = (1 + pm1)·inv², inv = 1/(1 + E); ns = n on every lane.
FFN_AVX2_INLINE __m256 ffn__sig_deriv(const struct ffn__sig *s, __m256i *ns) {
    const __m256 inv = _mm256_div_ps(_mm256_set1_ps(1.0f), s->d.dh);
    *ns = s->e.n;
    return _mm256_mul_ps(_mm256_fmadd_ps(s->e.pm1, inv, inv), inv);
}

// --- general per-vector functions (every lane; called for vectors with a rare lane)
// --------------- Each returns the general result in the lanes where `ok` is clear and `fast`
// elsewhere.
FFN_AVX2_SLOW __m256 ffn__sig_fwd_slow(__m256 x, __m256 fast, __m256 ok) {
    const struct ffn__sig s = ffn__sig_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__sig_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix_lo, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, x, x, 1), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__glu_slow(__m256 g, __m256 u, __m256 fast, __m256 ok) {
    const struct ffn__sig s = ffn__sig_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__sig_value(&s, &hi, &lo, &ns);
    const __m256 r = ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix_lo, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, g, u, u, 2), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__sig_bwd_slow(__m256 x, __m256 dy, __m256 fast, __m256 ok) {
    const struct ffn__sig s = ffn__sig_prep(x);
    __m256i ns;
    const __m256 m = ffn__sig_deriv(&s, &ns);
    const __m256 r = ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix_both,
                                      _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, dy, dy, 2), fast, ok);
}

FFN_AVX2_SLOW void ffn__glu_bwd_slow(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                     __m256 ok) {
    const struct ffn__sig s = ffn__sig_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__sig_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__sig_deriv(&s, &nsd);
    const __m256 rg =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix_both, _mm256_setzero_ps());
    const __m256 ru = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix_lo, _mm256_setzero_ps());
    *dg = _mm256_blendv_ps(ffn__avx2_nan_fix(rg, g, u, dh, 3), *dg, ok);
    *du = _mm256_blendv_ps(ffn__avx2_nan_fix(ru, g, u, dh, 3), *du, ok);
}

// --- the fast path
// --------------------------------------------------------------------------------- Lanes with |x|
// ≤ 80: e = exp(-|x|) ≥ 2^-116 and σ(x) ≥ e/2 are normal. σ has no small-x issue (σ(±0) = 1/2); the
// gated forward needs up finite and nonzero (see silu_avx2.c).
#define FFN_SIG_FAST (-80.0f)

FFN_AVX2_INLINE __m256 ffn__sig_ok(__m256 xa) {
    return _mm256_cmp_ps(xa, _mm256_set1_ps(FFN_SIG_FAST), _CMP_GE_OQ);  // NaN: false
}

FFN_AVX2_INLINE struct ffn__avx2_fe ffn__sig_exp(__m256 xa, bool low) {
    return ffn__avx2_fexp2(xa, _mm256_set1_ps(FFN_AVX2_LOG2E_HI), _mm256_set1_ps(FFN_AVX2_LOG2E_LO),
                           low);
}

FFN_AVX2_INLINE __m256 ffn__sig_fwd_v(__m256 x) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    const __m256 ok = ffn__sig_ok(xa);
    __m256 q0, lo;
    ffn__avx2_fxsig(x, true, x, ffn__sig_exp(xa, true), &q0, &lo);
    const __m256 y = _mm256_add_ps(q0, lo);
    return ffn__avx2_all(ok) ? y : ffn__sig_fwd_slow(x, y, ok);
}

// h = σ(g)·up = q0·up + lo·up, rounded once.
FFN_AVX2_INLINE __m256 ffn__glu_v(__m256 g, __m256 u) {
    const __m256 sm = ffn__avx2_sign_mask();
    const __m256 ga = _mm256_or_ps(g, sm);
    const __m256 ok = _mm256_and_ps(
        ffn__sig_ok(ga),
        ffn__avx2_mag_in(_mm256_or_ps(u, sm), FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_MAXFIN));
    __m256 q0, lo;
    ffn__avx2_fxsig(g, true, g, ffn__sig_exp(ga, true), &q0, &lo);
    const __m256 h = _mm256_fmadd_ps(q0, u, _mm256_mul_ps(lo, u));
    return ffn__avx2_all(ok) ? h : ffn__glu_slow(g, u, h, ok);
}

// σ'(x) = σ(x)·(1 - σ(x)).
FFN_AVX2_INLINE __m256 ffn__sig_bwd_v(__m256 x, __m256 dy) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    const __m256 ok = ffn__sig_ok(xa);
    __m256 s, c;
    ffn__avx2_fsig_pair(x, ffn__sig_exp(xa, false).h, &s, &c);
    const __m256 dx = _mm256_mul_ps(dy, _mm256_mul_ps(s, c));
    return ffn__avx2_all(ok) ? dx : ffn__sig_bwd_slow(x, dy, dx, ok);
}

// dgate = (dh·up)·σ'(g), dup = dh·σ(g).
FFN_AVX2_INLINE void ffn__glu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const __m256 ga = _mm256_or_ps(g, ffn__avx2_sign_mask());
    __m256 s, c;
    ffn__avx2_fsig_pair(g, ffn__sig_exp(ga, false).h, &s, &c);
    const __m256 p = _mm256_mul_ps(dh, u);
    *dg = _mm256_mul_ps(p, _mm256_mul_ps(s, c));
    *du = _mm256_mul_ps(dh, s);
    const __m256 ok = _mm256_and_ps(ffn__sig_ok(ga), ffn__avx2_finite(p));
    if (!ffn__avx2_all(ok)) ffn__glu_bwd_slow(g, u, dh, dg, du, ok);
}

// --- the kernels of kernels_avx2.inc
// -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_sigmoid_fwd__avx2) {
    ffn__avx2_act_fwd(cfg, n, y, x, ffn__sig_fwd_v, ffn_sigmoid_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_sigmoid_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__sig_bwd_v, ffn_sigmoid_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_glu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__sig_fwd_v, ffn__glu_v, ffn_glu_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_glu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__glu_bwd_v, ffn_glu_bwd__avx2);
}
