// gelu_tanh_avx2.c — tanh-approximated GeLU and GeGLU-tanh on AVX2 + FMA: forward, backward,
// gated forward and gated backward, for every (in, out) dtype pair. Accuracy (f32): forward and
// GeGLU forward ≤ 2 ulp in both tiers (the default tier's ≤ 4 is met by the same code); backward
// ≤ 8 ulp, absolute near the zero of the derivative at x ≈ -0.7518.
#include "cpu/x86_avx2/loops_avx2.h"

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
    const __m256 err = _mm256_add_ps(_mm256_sub_ps(kh, _mm256_sub_ps(qh, bb)), _mm256_sub_ps(ph, bb));
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
    const __m256 a = ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(zh, ffn__avx2_sign_mask()));
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

// --- per-vector functions ---------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__gt_fwd_v(__m256 x) {
    const struct ffn__gt s = ffn__gt_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__gt_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    return ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

FFN_AVX2_INLINE __m256 ffn__gtglu_v(__m256 g, __m256 u) {
    const struct ffn__gt s = ffn__gt_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__gt_value(&s, &hi, &lo, &ns);
    return ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

FFN_AVX2_INLINE __m256 ffn__gt_bwd_v(__m256 x, __m256 dy) {
    const struct ffn__gt s = ffn__gt_prep(x);
    __m256i ns;
    const __m256 m = ffn__gt_deriv(&s, &ns);
    return ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix,
                            _mm256_setzero_ps());
}

// dgate = dh·up·gelu'(g), dup = dh·gelu(g).
FFN_AVX2_INLINE void ffn__gtglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const struct ffn__gt s = ffn__gt_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__gt_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__gt_deriv(&s, &nsd);
    *dg = ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix, _mm256_setzero_ps());
    *du = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
}

// --- the kernels of kernels_avx2.inc -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_gelu_tanh_fwd__avx2) { ffn__avx2_act_fwd(cfg, n, y, x, ffn__gt_fwd_v); }
FFN_KPROTO_ACT_BWD(ffn_gelu_tanh_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__gt_bwd_v);
}
FFN_KPROTO_GLU_FWD(ffn_geglu_tanh_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__gt_fwd_v, ffn__gtglu_v);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_tanh_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__gtglu_bwd_v);
}
