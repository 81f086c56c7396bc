// quick_gelu_avx2.c — quick-GeLU x·σ(1.702x) (CLIP) and its gated form on AVX2 + FMA: forward,
// backward, gated forward and gated backward, for every (in, out) dtype pair. Accuracy (f32):
// forward ≤ 2 ulp (measured ≤ 1); backward ≤ 8 ulp, absolute near the zero of the derivative at
// x ≈ -0.751. A short fast path serves the lanes with 2^-60 ≤ |x| ≤ 50; vectors with other lanes
// also run the general path below for those lanes.
#include "cpu/x86_avx2/loops_avx2.h"

// --- the general path
// ------------------------------------------------------------------------------

// z = a·x with a = 1.702 = A_HI + A_LO; z is formed as a double-float (zh + zl) because exp(z)
// amplifies z's rounding error by |z| in the negative tail (≈ 100 ulp at z = -100 otherwise).
#define FFN_QUICK_GELU_A_HI 0x1.b3b646p+0f
#define FFN_QUICK_GELU_A_LO (-0x1.78d4fep-26f)
// The reference's value is exactly 0 below this (e^{1.702x} underflows in double): `fix` lanes.
#define FFN_QUICK_GELU_ZERO (-0x1.b5cc72p+8f)

// quick_gelu(x) = x·σ(z) = (hi + lo)·2^ns, exactly as SiLU (ffn__avx2_xsigmoid) with argument z.
// quick_gelu'(x) = σ(z)·(1 + z·(1 - σ(z))).
// Clamps: x ≥ FFN_AVX2_EXP_MIN (z = -510 there, far past the clamp of the exp argument, so the
// results already round to the same zero as the exact ones); x ≥ FFN_AVX2_XBIG gives x (and a
// derivative of 1). x ≤ FFN_QUICK_GELU_ZERO (-inf included) are `fix` lanes (limits -0 and 0).
struct ffn__qg {
    __m256 x, xm, zh, zl, neg, big, fix, tiny;
    struct ffn__avx2_exp e;
    struct ffn__avx2_den d;
};

FFN_AVX2_INLINE struct ffn__qg ffn__qg_prep(__m256 x) {
    struct ffn__qg s;
    s.x = x;
    s.xm = ffn__avx2_min_keepnan(FFN_AVX2_XBIG, ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, x));
    s.neg = ffn__avx2_neg_mask(x);
    s.big = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_AVX2_XBIG), _CMP_GE_OQ);
    s.fix = ffn__avx2_le(x, FFN_QUICK_GELU_ZERO);
    s.tiny = ffn__avx2_tiny_mask(x);
    const __m256 ah = _mm256_set1_ps(FFN_QUICK_GELU_A_HI);
    s.zh = _mm256_mul_ps(ah, s.xm);
    s.zl =
        _mm256_fmadd_ps(_mm256_set1_ps(FFN_QUICK_GELU_A_LO), s.xm, _mm256_fmsub_ps(ah, s.xm, s.zh));
    // -|z|: the low part only matters (and is only used) where z < 0.
    const __m256 a =
        ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(s.zh, ffn__avx2_sign_mask()));
    s.e = ffn__avx2_exp_neg(a, _mm256_and_ps(s.zl, s.neg), true);
    s.d = ffn__avx2_den(s.e);
    return s;
}

FFN_AVX2_INLINE void ffn__qg_value(const struct ffn__qg *s, __m256 *hi, __m256 *lo, __m256i *ns) {
    ffn__avx2_xsigmoid(ffn__avx2_tiny_up(s->xm, s->tiny), s->neg, s->e, s->d, hi, lo, ns);
    *ns = ffn__avx2_tiny_ns(*ns, s->tiny);
    *hi = _mm256_blendv_ps(*hi, s->x, s->big);
    *lo = _mm256_andnot_ps(s->big, *lo);
}

FFN_AVX2_INLINE __m256 ffn__qg_deriv(const struct ffn__qg *s, __m256i *ns) {
    __m256 sm, sch, scl;
    ffn__avx2_sigmoid_pair(s->neg, s->e, s->d, &sm, &sch, &scl);
    const __m256 m = _mm256_mul_ps(sm, ffn__avx2_one_plus(s->zh, s->zl, sch, scl));
    *ns = _mm256_and_si256(s->e.n, _mm256_castps_si256(s->neg));
    return _mm256_blendv_ps(m, _mm256_set1_ps(1.0f), s->big);
}

// --- general per-vector functions (every lane; called for vectors with a rare lane)
// --------------- Each returns the general result in the lanes where `ok` is clear and `fast`
// elsewhere.
FFN_AVX2_SLOW __m256 ffn__qg_fwd_slow(__m256 x, __m256 fast, __m256 ok) {
    const struct ffn__qg s = ffn__qg_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__qg_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, x, x, 1), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__qgglu_slow(__m256 g, __m256 u, __m256 fast, __m256 ok) {
    const struct ffn__qg s = ffn__qg_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__qg_value(&s, &hi, &lo, &ns);
    const __m256 r = ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, g, u, u, 2), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__qg_bwd_slow(__m256 x, __m256 dy, __m256 fast, __m256 ok) {
    const struct ffn__qg s = ffn__qg_prep(x);
    __m256i ns;
    const __m256 m = ffn__qg_deriv(&s, &ns);
    const __m256 r =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, dy, dy, 2), fast, ok);
}

FFN_AVX2_SLOW void ffn__qgglu_bwd_slow(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                       __m256 ok) {
    const struct ffn__qg s = ffn__qg_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__qg_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__qg_deriv(&s, &nsd);
    const __m256 rg =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix, _mm256_setzero_ps());
    const __m256 ru = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    *dg = _mm256_blendv_ps(ffn__avx2_nan_fix(rg, g, u, dh, 3), *dg, ok);
    *du = _mm256_blendv_ps(ffn__avx2_nan_fix(ru, g, u, dh, 3), *du, ok);
}

// --- the fast path
// --------------------------------------------------------------------------------- Lanes with
// 2^-60 ≤ |x| ≤ 50: e = exp(-1.702|x|) = 2^(-|x|·1.702·log2 e) ≥ 2^-123 is normal, and so are x·e
// and every result (the backward needs no lower bound). The gated forward also needs up finite and
// nonzero (see silu_avx2.c). 1.702·log2(e) as a float pair:
#define FFN_QG_AL_HI 0x1.3a4cbep+1f
#define FFN_QG_AL_LO (-0x1.c08ecap-26f)
#define FFN_QG_BITS_FAST 0x42480000u  // 50.0f
#define FFN_QG_FAST (-50.0f)

FFN_AVX2_INLINE struct ffn__avx2_fe ffn__qg_exp(__m256 xa, bool low) {
    return ffn__avx2_fexp2(xa, _mm256_set1_ps(FFN_QG_AL_HI), _mm256_set1_ps(FFN_QG_AL_LO), low);
}

// quick_gelu'(x) = σ(z)·(1 + z·(1 - σ(z))), z = 1.702x; sm: σ(z).
FFN_AVX2_INLINE __m256 ffn__qg_fast_d(__m256 x, __m256 xa, __m256 *sm) {
    __m256 s, c;
    ffn__avx2_fsig_pair(x, ffn__qg_exp(xa, false).h, &s, &c);
    *sm = s;
    const __m256 z = _mm256_mul_ps(x, _mm256_set1_ps(FFN_QUICK_GELU_A_HI));
    return _mm256_mul_ps(s, _mm256_fmadd_ps(z, c, _mm256_set1_ps(1.0f)));
}

FFN_AVX2_INLINE __m256 ffn__qg_fwd_v(__m256 x) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    const __m256 ok = ffn__avx2_mag_in(xa, FFN_AVX2_BITS_TINY, FFN_QG_BITS_FAST);
    __m256 q0, lo;
    ffn__avx2_fxsig(x, false, x, ffn__qg_exp(xa, true), &q0, &lo);
    const __m256 y = _mm256_add_ps(q0, lo);
    return ffn__avx2_all(ok) ? y : ffn__qg_fwd_slow(x, y, ok);
}

// h = quick_gelu(g)·up = q0·up + lo·up, rounded once.
FFN_AVX2_INLINE __m256 ffn__qgglu_v(__m256 g, __m256 u) {
    const __m256 sm = ffn__avx2_sign_mask();
    const __m256 ga = _mm256_or_ps(g, sm);
    const __m256 ok = _mm256_and_ps(
        ffn__avx2_mag_in(ga, FFN_AVX2_BITS_TINY, FFN_QG_BITS_FAST),
        ffn__avx2_mag_in(_mm256_or_ps(u, sm), FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_MAXFIN));
    __m256 q0, lo;
    ffn__avx2_fxsig(g, false, g, ffn__qg_exp(ga, true), &q0, &lo);
    const __m256 h = _mm256_fmadd_ps(q0, u, _mm256_mul_ps(lo, u));
    return ffn__avx2_all(ok) ? h : ffn__qgglu_slow(g, u, h, ok);
}

FFN_AVX2_INLINE __m256 ffn__qg_bwd_v(__m256 x, __m256 dy) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    const __m256 ok = _mm256_cmp_ps(xa, _mm256_set1_ps(FFN_QG_FAST), _CMP_GE_OQ);
    __m256 sm;
    const __m256 dx = _mm256_mul_ps(dy, ffn__qg_fast_d(x, xa, &sm));
    return ffn__avx2_all(ok) ? dx : ffn__qg_bwd_slow(x, dy, dx, ok);
}

// dgate = (dh·up)·quick_gelu'(g), dup = dh·(g·σ(1.702g)).
FFN_AVX2_INLINE void ffn__qgglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const __m256 ga = _mm256_or_ps(g, ffn__avx2_sign_mask());
    __m256 sm;
    const __m256 m = ffn__qg_fast_d(g, ga, &sm);
    const __m256 p = _mm256_mul_ps(dh, u);
    *dg = _mm256_mul_ps(p, m);
    *du = _mm256_mul_ps(dh, _mm256_mul_ps(g, sm));
    const __m256 ok = _mm256_and_ps(ffn__avx2_mag_in(ga, FFN_AVX2_BITS_TINY, FFN_QG_BITS_FAST),
                                    ffn__avx2_finite(p));
    if (!ffn__avx2_all(ok)) ffn__qgglu_bwd_slow(g, u, dh, dg, du, ok);
}

// --- the kernels of kernels_avx2.inc
// -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_quick_gelu_fwd__avx2) {
    ffn__avx2_act_fwd(cfg, n, y, x, ffn__qg_fwd_v, ffn_quick_gelu_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_quick_gelu_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__qg_bwd_v, ffn_quick_gelu_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_quick_geglu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__qg_fwd_v, ffn__qgglu_v, ffn_quick_geglu_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_quick_geglu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__qgglu_bwd_v,
                      ffn_quick_geglu_bwd__avx2);
}
