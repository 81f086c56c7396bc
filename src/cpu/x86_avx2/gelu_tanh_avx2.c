// gelu_tanh_avx2.c — tanh-approximated GeLU and GeGLU-tanh on AVX2 + FMA: forward, backward,
// gated forward and gated backward, for every (in, out) dtype pair. Accuracy (f32): forward and
// GeGLU forward ≤ 4 ulp in the default tier (one uncompensated quotient, measured 2.5), ≤ 2 ulp
// in the accurate tier (compensated, measured 1.5); backward ≤ 8 ulp, absolute near the zero of
// the derivative at x ≈ -0.7518. Short fast paths serve the lanes with x ≥ -4.7 (all but ~1 in
// 10^5 vectors of N(0,1) data); vectors with other lanes also run the general path below for
// those lanes.
#include "cpu/x86_avx2/loops_avx2.h"

// --- the general path
// ------------------------------------------------------------------------------

// 2u = K·x + M·x³ = x·(K + M·x²), K = √(8/π), M = 0.044715·K, as f32 pairs (HI + LO).
#define FFN_GELU_K_HI 0x1.988454p+0f
#define FFN_GELU_K_LO (-0x1.857936p-25f)
#define FFN_GELU_M_HI 0x1.2444f2p-4f
#define FFN_GELU_M_LO 0x1.49b16ap-29f
// Lower clamp of x: 2u(-20) = -603, far below the exp clamp, so gelu(x ≤ -20) rounds to the same
// zero as the exact value (even times two f32 factors); also keeps x³ finite.
#define FFN_GELU_TANH_XMIN (-20.0f)
// The reference's value is exactly 0 below this (e^{2u} underflows in double): `fix` lanes.
#define FFN_GELU_TANH_ZERO (-0x1.58441ep+4f)

// gelu_tanh(x) = 0.5x(1 + tanh u) = x·σ(2u) = (hi + lo)·2^ns (ffn__avx2_xsigmoid, z = 2u): no
// 1 + tanh cancellation for negative x. 2u is a double-float (zh + zl): exp(2u) amplifies its
// rounding error by |2u| in the negative tail (~200 ulp near x = -9 otherwise).
// gelu_tanh'(x) = σ(2u)·(1 + x·(1 - σ(2u))·2u'), 2u' = K + 3M·x².
// x ≥ FFN_AVX2_XBIG gives x (derivative 1); x ≤ FFN_GELU_TANH_ZERO (-inf included) are `fix`
// lanes (limits -0 and 0).
struct ffn__gt {
    __m256 x, xc, neg, big, fix, tiny;
    struct ffn__avx2_exp e;
    struct ffn__avx2_den d;
};

// zh + zl = x·(K + M·x²) with the product and sum errors kept (x² and M·x² exactly by FMA,
// K + M·x² by Knuth's two-sum, then x·q exactly): ~2^-44 relative.
FFN_AVX2_INLINE void ffn__gt_arg(__m256 x, __m256 *zh, __m256 *zl) {
    const __m256 mh = _mm256_set1_ps(FFN_GELU_M_HI), kh = _mm256_set1_ps(FFN_GELU_K_HI);
    const __m256 x2h = _mm256_mul_ps(x, x);
    const __m256 x2l = _mm256_fmsub_ps(x, x, x2h);
    const __m256 ph = _mm256_mul_ps(mh, x2h);
    __m256 pl = _mm256_fmsub_ps(mh, x2h, ph);
    pl = _mm256_fmadd_ps(mh, x2l, pl);
    pl = _mm256_fmadd_ps(_mm256_set1_ps(FFN_GELU_M_LO), x2h, pl);
    const __m256 qh = _mm256_add_ps(kh, ph);  // two-sum of K_HI + ph
    const __m256 bb = _mm256_sub_ps(qh, kh);
    const __m256 err =
        _mm256_add_ps(_mm256_sub_ps(kh, _mm256_sub_ps(qh, bb)), _mm256_sub_ps(ph, bb));
    const __m256 ql = _mm256_add_ps(_mm256_add_ps(err, pl), _mm256_set1_ps(FFN_GELU_K_LO));
    *zh = _mm256_mul_ps(x, qh);
    *zl = _mm256_fmadd_ps(x, ql, _mm256_fmsub_ps(x, qh, *zh));
}

FFN_AVX2_INLINE struct ffn__gt ffn__gt_prep(__m256 x) {
    struct ffn__gt s;
    s.x = x;
    s.xc = ffn__avx2_min_keepnan(FFN_AVX2_XBIG, ffn__avx2_max_keepnan(FFN_GELU_TANH_XMIN, x));
    s.neg = ffn__avx2_neg_mask(x);
    s.big = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_AVX2_XBIG), _CMP_GE_OQ);
    s.fix = ffn__avx2_le(x, FFN_GELU_TANH_ZERO);
    s.tiny = ffn__avx2_tiny_mask(x);
    __m256 zh, zl;
    ffn__gt_arg(s.xc, &zh, &zl);
    // -|2u|: the low part only matters (and is only used) where 2u < 0.
    const __m256 a =
        ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(zh, ffn__avx2_sign_mask()));
    s.e = ffn__avx2_exp_neg(a, _mm256_and_ps(zl, s.neg), true);
    s.d = ffn__avx2_den(s.e);
    return s;
}

FFN_AVX2_INLINE void ffn__gt_value(const struct ffn__gt *s, __m256 *hi, __m256 *lo, __m256i *ns) {
    ffn__avx2_xsigmoid(ffn__avx2_tiny_up(s->xc, s->tiny), s->neg, s->e, s->d, hi, lo, ns);
    *ns = ffn__avx2_tiny_ns(*ns, s->tiny);
    *hi = _mm256_blendv_ps(*hi, s->x, s->big);
    *lo = _mm256_andnot_ps(s->big, *lo);
}

FFN_AVX2_INLINE __m256 ffn__gt_deriv(const struct ffn__gt *s, __m256i *ns) {
    __m256 sm, sch, scl;
    ffn__avx2_sigmoid_pair(s->neg, s->e, s->d, &sm, &sch, &scl);
    const __m256 dz = _mm256_fmadd_ps(_mm256_set1_ps(3.0f * FFN_GELU_M_HI),
                                      _mm256_mul_ps(s->xc, s->xc), _mm256_set1_ps(FFN_GELU_K_HI));
    const __m256 k = _mm256_mul_ps(s->xc, dz);  // x·2u' = k + kl exactly
    const __m256 kl = _mm256_fmsub_ps(s->xc, dz, k);
    const __m256 m = _mm256_mul_ps(sm, ffn__avx2_one_plus(k, kl, sch, scl));
    *ns = _mm256_and_si256(s->e.n, _mm256_castps_si256(s->neg));
    return _mm256_blendv_ps(m, _mm256_set1_ps(1.0f), s->big);
}

// --- general per-vector functions (every lane; called for vectors with a rare lane)
// --------------- Each returns the general result in the lanes where `ok` is clear and `fast`
// elsewhere.
FFN_AVX2_SLOW __m256 ffn__gt_fwd_slow(__m256 x, __m256 fast, __m256 ok) {
    const struct ffn__gt s = ffn__gt_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__gt_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, x, x, 1), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__gtglu_slow(__m256 g, __m256 u, __m256 fast, __m256 ok) {
    const struct ffn__gt s = ffn__gt_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__gt_value(&s, &hi, &lo, &ns);
    const __m256 r = ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, g, u, u, 2), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__gt_bwd_slow(__m256 x, __m256 dy, __m256 fast, __m256 ok) {
    const struct ffn__gt s = ffn__gt_prep(x);
    __m256i ns;
    const __m256 m = ffn__gt_deriv(&s, &ns);
    const __m256 r =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, dy, dy, 2), fast, ok);
}

FFN_AVX2_SLOW void ffn__gtglu_bwd_slow(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                       __m256 ok) {
    const struct ffn__gt s = ffn__gt_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__gt_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__gt_deriv(&s, &nsd);
    const __m256 rg =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix, _mm256_setzero_ps());
    const __m256 ru = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    *dg = _mm256_blendv_ps(ffn__avx2_nan_fix(rg, g, u, dh, 3), *dg, ok);
    *du = _mm256_blendv_ps(ffn__avx2_nan_fix(ru, g, u, dh, 3), *du, ok);
}

// --- the fast paths
// -------------------------------------------------------------------------------- A·log2 e = x·(KL
// + ML·x²), A = 2u: the constants carry log2(e), as float pairs (HI + LO).
#define FFN_GELU_KL_HI 0x1.26aec2p+1f  // √(8/π)·log2 e
#define FFN_GELU_KL_LO 0x1.bce75ap-27f
#define FFN_GELU_ML_HI 0x1.a5a7d0p-4f  // 0.044715·√(8/π)·log2 e
#define FFN_GELU_ML_LO (-0x1.151aaep-29f)
// Fast lanes: x ≥ -4.7, where KL + ML·x² ≤ 2·KL_HI (x² ≤ 22.36), so that KL_HI - q below is exact
// (Sterbenz) and q + ql carries the argument to ~2^-46; e^-|A| ≥ 2^-22 there. Above, the argument
// is taken at min(x, 9.5): A ≥ 76 makes e^-A < 2^-110, far below any ulp of the results (which
// are x, and derivative 1), and keeps x³ and 2^n in range.
#define FFN_GELU_FAST (-4.7f)
#define FFN_GELU_ARG_MAX 9.5f

// q + ql = KL + ML·x² for the clamped x: w + wl = x·ML exactly (ML_LO folded into wl), q = one fma,
// its rounding error KL_HI + w·x - q recovered by the exact KL_HI - q and an fma.
FFN_AVX2_INLINE void ffn__gt_q(__m256 xc, __m256 *q, __m256 *ql) {
    const __m256 mh = _mm256_set1_ps(FFN_GELU_ML_HI), kh = _mm256_set1_ps(FFN_GELU_KL_HI);
    const __m256 w = _mm256_mul_ps(xc, mh);
    const __m256 wl =
        _mm256_fmadd_ps(xc, _mm256_set1_ps(FFN_GELU_ML_LO), _mm256_fmsub_ps(xc, mh, w));
    *q = _mm256_fmadd_ps(w, xc, kh);
    const __m256 d = _mm256_add_ps(_mm256_sub_ps(kh, *q), _mm256_set1_ps(FFN_GELU_KL_LO));
    *ql = _mm256_fmadd_ps(wl, xc, _mm256_fmadd_ps(w, xc, d));
}

// Default tier: gelu(x) = x / (1 + e^-A), e^-A = 2^(-x·(q + ql)) ≤ 2^22 for x ≥ -4.7 (no
// overflow), one quotient: within ~3 ulp. x = ±0 gives ±0, NaN stays NaN (x is the numerator),
// +inf gives +inf: only x < -4.7 and -inf are rare.
FFN_AVX2_INLINE __m256 ffn__gt_fast(__m256 x) {
    const __m256 xc = _mm256_min_ps(_mm256_set1_ps(FFN_GELU_ARG_MAX), x);
    __m256 q, ql;
    ffn__gt_q(xc, &q, &ql);
    const __m256 magic = _mm256_set1_ps(FFN_AVX2_ROUND_MAGIC);
    const __m256 t = _mm256_fnmadd_ps(xc, q, magic);
    const __m256 r = _mm256_fnmadd_ps(xc, ql, _mm256_fnmsub_ps(xc, q, _mm256_sub_ps(t, magic)));
    const __m256 e = ffn__avx2_fexp2_fin(t, r, false).h;
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
FFN_AVX2_INLINE __m256 ffn__gt_fast_ok(__m256 x) {
    return _mm256_cmp_ps(x, _mm256_set1_ps(FFN_GELU_FAST), _CMP_NLT_UQ);  // x ≥ -4.7 or NaN
}

// Accurate tier and the backward: e = e^-|A| from xa = -|x| (A is odd), clamped at -9.5.
FFN_AVX2_INLINE struct ffn__avx2_fe ffn__gt_exp(__m256 xa, bool low) {
    const __m256 xac = _mm256_max_ps(_mm256_set1_ps(-FFN_GELU_ARG_MAX), xa);
    __m256 q, ql;
    ffn__gt_q(xac, &q, &ql);
    return ffn__avx2_fexp2(xac, q, ql, low);
}
// Lanes with x ≥ -4.7, 2^-60 ≤ |x| (gelu(x) normal for the gated product) and x finite.
FFN_AVX2_INLINE __m256 ffn__gt_acc_ok(__m256 x, __m256 xa) {
    return _mm256_and_ps(ffn__avx2_mag_in(xa, FFN_AVX2_BITS_TINY, FFN_AVX2_BITS_MAXFIN),
                         _mm256_cmp_ps(x, _mm256_set1_ps(FFN_GELU_FAST), _CMP_GE_OQ));
}

// gelu'(x) = σ(A)·(1 + x·A'·(1 - σ(A))), A' = K + 3M·x² (x clamped at 9.5: beyond, 1 - σ(A) is
// 0 to f32 and the bracket 1); sm: σ(A).
FFN_AVX2_INLINE __m256 ffn__gt_fast_d(__m256 x, __m256 xa, __m256 *sm) {
    __m256 s, c;
    ffn__avx2_fsig_pair(x, ffn__gt_exp(xa, false).h, &s, &c);
    *sm = s;
    const __m256 xc = _mm256_min_ps(_mm256_set1_ps(FFN_GELU_ARG_MAX), x);
    const __m256 da = _mm256_fmadd_ps(_mm256_set1_ps(3.0f * FFN_GELU_M_HI), _mm256_mul_ps(xc, xc),
                                      _mm256_set1_ps(FFN_GELU_K_HI));
    return _mm256_mul_ps(s, _mm256_fmadd_ps(_mm256_mul_ps(xc, da), c, _mm256_set1_ps(1.0f)));
}

// --- per-vector functions
// ---------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__gt_fwd_v(__m256 x) {
    const __m256 y = ffn__gt_fast(x);
    const __m256 ok = ffn__gt_fast_ok(x);
    return ffn__avx2_all(ok) ? y : ffn__gt_fwd_slow(x, y, ok);
}

// h = gelu(g)·up: the product of the default tier's value, rounded (≤ 4 ulp in all); any up.
// |g| < 2^-60 is rare here: gelu(g) may be subnormal, and rounded before the product.
FFN_AVX2_INLINE __m256 ffn__gtglu_v(__m256 g, __m256 u) {
    const __m256 h = _mm256_mul_ps(ffn__gt_fast(g), u);
    const __m256 ga = _mm256_or_ps(g, ffn__avx2_sign_mask());
    const __m256 ok = _mm256_and_ps(ffn__gt_fast_ok(g),
                                    _mm256_cmp_ps(ga, _mm256_set1_ps(-FFN_AVX2_TINY), _CMP_LE_OQ));
    return ffn__avx2_all(ok) ? h : ffn__gtglu_slow(g, u, h, ok);
}

// Accurate tier: the compensated x·σ(A) (ffn__avx2_fxsig), summed or times up rounded once.
FFN_AVX2_INLINE __m256 ffn__gt_fwd_acc_v(__m256 x) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    __m256 q0, lo;
    ffn__avx2_fxsig(x, false, x, ffn__gt_exp(xa, true), &q0, &lo);
    const __m256 y = _mm256_add_ps(q0, lo);
    const __m256 ok = ffn__gt_acc_ok(x, xa);
    return ffn__avx2_all(ok) ? y : ffn__gt_fwd_slow(x, y, ok);
}

FFN_AVX2_INLINE __m256 ffn__gtglu_acc_v(__m256 g, __m256 u) {
    const __m256 sm = ffn__avx2_sign_mask();
    const __m256 ga = _mm256_or_ps(g, sm);
    __m256 q0, lo;
    ffn__avx2_fxsig(g, false, g, ffn__gt_exp(ga, true), &q0, &lo);
    const __m256 h = _mm256_fmadd_ps(q0, u, _mm256_mul_ps(lo, u));
    const __m256 ok = _mm256_and_ps(
        ffn__gt_acc_ok(g, ga),
        ffn__avx2_mag_in(_mm256_or_ps(u, sm), FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_MAXFIN));
    return ffn__avx2_all(ok) ? h : ffn__gtglu_slow(g, u, h, ok);
}

FFN_AVX2_INLINE __m256 ffn__gt_bwd_v(__m256 x, __m256 dy) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    __m256 sm;
    const __m256 dx = _mm256_mul_ps(dy, ffn__gt_fast_d(x, xa, &sm));
    const __m256 ok = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_GELU_FAST), _CMP_GE_OQ);
    return ffn__avx2_all(ok) ? dx : ffn__gt_bwd_slow(x, dy, dx, ok);
}

// dgate = (dh·up)·gelu'(g), dup = dh·(g·σ(A)).
FFN_AVX2_INLINE void ffn__gtglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const __m256 ga = _mm256_or_ps(g, ffn__avx2_sign_mask());
    __m256 sm;
    const __m256 m = ffn__gt_fast_d(g, ga, &sm);
    const __m256 p = _mm256_mul_ps(dh, u);
    *dg = _mm256_mul_ps(p, m);
    *du = _mm256_mul_ps(dh, _mm256_mul_ps(g, sm));
    const __m256 ok = _mm256_and_ps(ffn__gt_acc_ok(g, ga), ffn__avx2_finite(p));
    if (!ffn__avx2_all(ok)) ffn__gtglu_bwd_slow(g, u, dh, dg, du, ok);
}

// --- the kernels of kernels_avx2.inc
// -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_gelu_tanh_fwd__avx2) {
    if (cfg->accurate)
        ffn__avx2_act_fwd(cfg, n, y, x, ffn__gt_fwd_acc_v, ffn_gelu_tanh_fwd__avx2);
    else
        ffn__avx2_act_fwd(cfg, n, y, x, ffn__gt_fwd_v, ffn_gelu_tanh_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_gelu_tanh_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__gt_bwd_v, ffn_gelu_tanh_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_geglu_tanh_fwd__avx2) {
    if (cfg->accurate)
        ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__gt_fwd_acc_v, ffn__gtglu_acc_v,
                          ffn_geglu_tanh_fwd__avx2);
    else
        ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__gt_fwd_v, ffn__gtglu_v,
                          ffn_geglu_tanh_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_tanh_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__gtglu_bwd_v, ffn_geglu_tanh_bwd__avx2);
}
