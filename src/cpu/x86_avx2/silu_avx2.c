// silu_avx2.c — SiLU (Swish-1) and SwiGLU on AVX2 + FMA: forward, backward, gated forward and
// gated backward, for every (in, out) dtype pair. Accuracy (f32, vs the exact function):
// forward and SwiGLU forward ≤ 2 ulp (one compensated quotient; measured 1.02); backward ≤ 8 ulp,
// absolute near the zero of silu' at x ≈ -1.2785. A short fast path serves the lanes with
// 2^-60 ≤ |x| ≤ 80; vectors with other lanes also run the general path below for those lanes.
#include "cpu/x86_avx2/loops_avx2.h"

// --- the general path
// ------------------------------------------------------------------------------

// silu(x) = x·σ(x) = (hi + lo)·2^ns:
//   x ≥ 0:  x / (1 + e^-x)
//   x < 0:  x·e^x / (1 + e^x), with e^x = (1 + pm1)·2^n and 2^n applied last (no subnormal
//           intermediate: correct down to the subnormal results near x = -104, and times any up)
// Clamps: the exp argument -|x| and the multiplier stop at FFN_AVX2_EXP_MIN = -300, where the
// result (even times two f32 factors) already rounds to the same zero as the exact one;
// x ≥ FFN_AVX2_XBIG gives x, the value silu(x) rounds to. x ≤ -745.13 (-inf included) are
// `fix` lanes (limits -0 and 0, see FFN_AVX2_SIGMOID_ZERO).
struct ffn__silu {
    __m256 x, xm, neg, big, fix, tiny;
    struct ffn__avx2_exp e;
    struct ffn__avx2_den d;
};

FFN_AVX2_INLINE struct ffn__silu ffn__silu_prep(__m256 x) {
    struct ffn__silu s;
    s.x = x;
    s.xm = ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, x);
    s.neg = ffn__avx2_neg_mask(x);
    s.big = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_AVX2_XBIG), _CMP_GE_OQ);
    s.fix = ffn__avx2_le(x, FFN_AVX2_SIGMOID_ZERO);
    s.tiny = ffn__avx2_tiny_mask(x);
    const __m256 a =
        ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(x, ffn__avx2_sign_mask()));
    s.e = ffn__avx2_exp_neg(a, a, false);
    s.d = ffn__avx2_den(s.e);
    return s;
}

FFN_AVX2_INLINE void ffn__silu_value(const struct ffn__silu *s, __m256 *hi, __m256 *lo,
                                     __m256i *ns) {
    ffn__avx2_xsigmoid(ffn__avx2_tiny_up(s->xm, s->tiny), s->neg, s->e, s->d, hi, lo, ns);
    *ns = ffn__avx2_tiny_ns(*ns, s->tiny);
    *hi = _mm256_blendv_ps(*hi, s->x, s->big);
    *lo = _mm256_andnot_ps(s->big, *lo);
}

// silu'(x) = σ(x)·(1 + x·(1 - σ(x))) = sm·(1 + x·sc)·2^ns; 1 for x ≥ XBIG (σ' terms < 2^-80).
FFN_AVX2_INLINE __m256 ffn__silu_deriv(const struct ffn__silu *s, __m256i *ns) {
    __m256 sm, sch, scl;
    ffn__avx2_sigmoid_pair(s->neg, s->e, s->d, &sm, &sch, &scl);
    const __m256 m = _mm256_mul_ps(sm, ffn__avx2_one_plus(s->xm, _mm256_setzero_ps(), sch, scl));
    *ns = _mm256_and_si256(s->e.n, _mm256_castps_si256(s->neg));
    return _mm256_blendv_ps(m, _mm256_set1_ps(1.0f), s->big);
}

// --- general per-vector functions (every lane; called for vectors with a rare lane)
// --------------- Each returns the general result in the lanes where `ok` is clear and `fast`
// elsewhere.
FFN_AVX2_SLOW __m256 ffn__silu_fwd_slow(__m256 x, __m256 fast, __m256 ok) {
    const struct ffn__silu s = ffn__silu_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__silu_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, x, x, 1), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__swiglu_slow(__m256 g, __m256 u, __m256 fast, __m256 ok) {
    const struct ffn__silu s = ffn__silu_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__silu_value(&s, &hi, &lo, &ns);
    const __m256 r = ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, g, u, u, 2), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__silu_bwd_slow(__m256 x, __m256 dy, __m256 fast, __m256 ok) {
    const struct ffn__silu s = ffn__silu_prep(x);
    __m256i ns;
    const __m256 m = ffn__silu_deriv(&s, &ns);
    const __m256 r =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, dy, dy, 2), fast, ok);
}

FFN_AVX2_SLOW void ffn__swiglu_bwd_slow(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                        __m256 ok) {
    const struct ffn__silu s = ffn__silu_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__silu_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__silu_deriv(&s, &nsd);
    const __m256 rg =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix, _mm256_setzero_ps());
    const __m256 ru = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    *dg = _mm256_blendv_ps(ffn__avx2_nan_fix(rg, g, u, dh, 3), *dg, ok);
    *du = _mm256_blendv_ps(ffn__avx2_nan_fix(ru, g, u, dh, 3), *du, ok);
}

// --- the fast path
// --------------------------------------------------------------------------------- Lanes with |x|
// ≤ 80: e = exp(-|x|) = 2^(-|x|·log2 e) ≥ 2^-116 is normal, and so are x·e and every result; |x| ≥
// 2^-60 keeps silu(x) normal for the gated product (the backward needs no lower bound: silu'(0) =
// 1/2). The gated forward also needs up finite and nonzero (an up of ±0 or ±inf makes hi·up + lo·up
// a zero of the wrong sign or NaN).
#define FFN_SILU_BITS_FAST 0x42a00000u  // 80.0f
#define FFN_SILU_FAST (-80.0f)

FFN_AVX2_INLINE __m256 ffn__silu_neg_abs(__m256 x) {
    return _mm256_or_ps(x, ffn__avx2_sign_mask());
}

FFN_AVX2_INLINE void ffn__silu_fast(__m256 x, __m256 xa, __m256 *q0, __m256 *lo) {
    const struct ffn__avx2_fe e = ffn__avx2_fexp2(xa, _mm256_set1_ps(FFN_AVX2_LOG2E_HI),
                                                  _mm256_set1_ps(FFN_AVX2_LOG2E_LO), true);
    ffn__avx2_fxsig(x, false, x, e, q0, lo);
}

// silu'(x) = σ(x)·(1 + x·(1 - σ(x))); sm: σ(x) (the dup multiplier of the gated backward).
FFN_AVX2_INLINE __m256 ffn__silu_fast_d(__m256 x, __m256 xa, __m256 *sm) {
    const struct ffn__avx2_fe e = ffn__avx2_fexp2(xa, _mm256_set1_ps(FFN_AVX2_LOG2E_HI),
                                                  _mm256_set1_ps(FFN_AVX2_LOG2E_LO), false);
    __m256 s, c;
    ffn__avx2_fsig_pair(x, e.h, &s, &c);
    *sm = s;
    return _mm256_mul_ps(s, _mm256_fmadd_ps(x, c, _mm256_set1_ps(1.0f)));
}

FFN_AVX2_INLINE __m256 ffn__silu_fwd_v(__m256 x) {
    const __m256 xa = ffn__silu_neg_abs(x);
    const __m256 ok = ffn__avx2_mag_in(xa, FFN_AVX2_BITS_TINY, FFN_SILU_BITS_FAST);
    __m256 q0, lo;
    ffn__silu_fast(x, xa, &q0, &lo);
    const __m256 y = _mm256_add_ps(q0, lo);
    return ffn__avx2_all(ok) ? y : ffn__silu_fwd_slow(x, y, ok);
}

// h = silu(g)·up = q0·up + lo·up, rounded once.
FFN_AVX2_INLINE __m256 ffn__swiglu_v(__m256 g, __m256 u) {
    const __m256 ga = ffn__silu_neg_abs(g);
    const __m256 ok = _mm256_and_ps(
        ffn__avx2_mag_in(ga, FFN_AVX2_BITS_TINY, FFN_SILU_BITS_FAST),
        ffn__avx2_mag_in(ffn__silu_neg_abs(u), FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_MAXFIN));
    __m256 q0, lo;
    ffn__silu_fast(g, ga, &q0, &lo);
    const __m256 h = _mm256_fmadd_ps(q0, u, _mm256_mul_ps(lo, u));
    return ffn__avx2_all(ok) ? h : ffn__swiglu_slow(g, u, h, ok);
}

FFN_AVX2_INLINE __m256 ffn__silu_bwd_v(__m256 x, __m256 dy) {
    const __m256 xa = ffn__silu_neg_abs(x);
    const __m256 ok = _mm256_cmp_ps(xa, _mm256_set1_ps(FFN_SILU_FAST), _CMP_GE_OQ);
    __m256 sm;
    const __m256 dx = _mm256_mul_ps(dy, ffn__silu_fast_d(x, xa, &sm));
    return ffn__avx2_all(ok) ? dx : ffn__silu_bwd_slow(x, dy, dx, ok);
}

// dgate = (dh·up)·silu'(g), dup = dh·(g·σ(g)).
FFN_AVX2_INLINE void ffn__swiglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const __m256 ga = ffn__silu_neg_abs(g);
    __m256 sm;
    const __m256 m = ffn__silu_fast_d(g, ga, &sm);
    const __m256 p = _mm256_mul_ps(dh, u);
    *dg = _mm256_mul_ps(p, m);
    *du = _mm256_mul_ps(dh, _mm256_mul_ps(g, sm));
    const __m256 ok = _mm256_and_ps(ffn__avx2_mag_in(ga, FFN_AVX2_BITS_TINY, FFN_SILU_BITS_FAST),
                                    ffn__avx2_finite(p));
    if (!ffn__avx2_all(ok)) ffn__swiglu_bwd_slow(g, u, dh, dg, du, ok);
}

// --- the kernels of kernels_avx2.inc
// -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_silu_fwd__avx2) {
    ffn__avx2_act_fwd(cfg, n, y, x, ffn__silu_fwd_v, ffn_silu_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__silu_bwd_v, ffn_silu_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__silu_fwd_v, ffn__swiglu_v, ffn_swiglu_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__swiglu_bwd_v, ffn_swiglu_bwd__avx2);
}
