// silu_avx2.c — SiLU (Swish-1) and SwiGLU on AVX2 + FMA: forward, backward, gated forward and
// gated backward, for every (in, out) dtype pair. Accuracy (f32, vs the exact function):
// forward and SwiGLU forward ≤ 2 ulp (one compensated quotient, see ffn__avx2_xsigmoid);
// backward ≤ 8 ulp, absolute near the zero of silu' at x ≈ -1.2785.
#include "cpu/x86_avx2/loops_avx2.h"

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
    const __m256 a = ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(x, ffn__avx2_sign_mask()));
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

// --- per-vector functions ---------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__silu_fwd_v(__m256 x) {
    const struct ffn__silu s = ffn__silu_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__silu_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    return ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

// h = silu(g)·up: the double-float silu times up, rounded once (≤ 2 ulp in all).
FFN_AVX2_INLINE __m256 ffn__swiglu_v(__m256 g, __m256 u) {
    const struct ffn__silu s = ffn__silu_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__silu_value(&s, &hi, &lo, &ns);
    return ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

FFN_AVX2_INLINE __m256 ffn__silu_bwd_v(__m256 x, __m256 dy) {
    const struct ffn__silu s = ffn__silu_prep(x);
    __m256i ns;
    const __m256 m = ffn__silu_deriv(&s, &ns);
    return ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix,
                            _mm256_setzero_ps());
}

// dgate = dh·up·silu'(g), dup = dh·silu(g).
FFN_AVX2_INLINE void ffn__swiglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const struct ffn__silu s = ffn__silu_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__silu_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__silu_deriv(&s, &nsd);
    *dg = ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix, _mm256_setzero_ps());
    *du = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

// --- the kernels of kernels_avx2.inc -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_silu_fwd__avx2) { ffn__avx2_act_fwd(cfg, n, y, x, ffn__silu_fwd_v); }
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__avx2) { ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__silu_bwd_v); }
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__silu_fwd_v, ffn__swiglu_v);
}
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__swiglu_bwd_v);
}
