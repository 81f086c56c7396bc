// sigmoid_avx2.c — the logistic sigmoid and the original GLU (sigmoid gate) on AVX2 + FMA:
// forward, backward, gated forward and gated backward, for every (in, out) dtype pair.
// Accuracy (f32): forward and GLU forward ≤ 2 ulp; backward ≤ 8 ulp.
#include "cpu/x86_avx2/loops_avx2.h"

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
    const __m256 a = ffn__avx2_max_keepnan(FFN_AVX2_EXP_MIN, _mm256_or_ps(x, ffn__avx2_sign_mask()));
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

// --- per-vector functions ---------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__sig_fwd_v(__m256 x) {
    const struct ffn__sig s = ffn__sig_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__sig_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    return ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix_lo, _mm256_setzero_ps());
}

FFN_AVX2_INLINE __m256 ffn__glu_v(__m256 g, __m256 u) {
    const struct ffn__sig s = ffn__sig_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__sig_value(&s, &hi, &lo, &ns);
    return ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix_lo, _mm256_setzero_ps());
}

FFN_AVX2_INLINE __m256 ffn__sig_bwd_v(__m256 x, __m256 dy) {
    const struct ffn__sig s = ffn__sig_prep(x);
    __m256i ns;
    const __m256 m = ffn__sig_deriv(&s, &ns);
    return ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fix_both,
                            _mm256_setzero_ps());
}

// dgate = dh·up·σ'(g), dup = dh·σ(g).
FFN_AVX2_INLINE void ffn__glu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const struct ffn__sig s = ffn__sig_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__sig_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__sig_deriv(&s, &nsd);
    *dg = ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fix_both,
                           _mm256_setzero_ps());
    *du = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix_lo, _mm256_setzero_ps());
}

// --- the kernels of kernels_avx2.inc -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_sigmoid_fwd__avx2) { ffn__avx2_act_fwd(cfg, n, y, x, ffn__sig_fwd_v); }
FFN_KPROTO_ACT_BWD(ffn_sigmoid_bwd__avx2) { ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__sig_bwd_v); }
FFN_KPROTO_GLU_FWD(ffn_glu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__sig_fwd_v, ffn__glu_v);
}
FFN_KPROTO_GLU_BWD(ffn_glu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__glu_bwd_v);
}
