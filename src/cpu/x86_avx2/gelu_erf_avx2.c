// gelu_erf_avx2.c — exact (erf) GeLU and GeGLU-erf on AVX2 + FMA: forward, backward, gated
// forward and gated backward, for every (in, out) dtype pair. Accuracy (f32): forward and GeGLU
// forward ≤ 4 ulp in the default tier (a table path: Φ by per-interval polynomials, for |x| < 5)
// and ≤ 2 ulp in the accurate tier (the exp-based form below, measured 1.36, which also serves the
// default tier's other lanes); backward ≤ 8 ulp (gelu': the same table path with the derivative's
// own table on |x| < 5, the exp-based form elsewhere; the GeGLU backward: the exp-based form),
// absolute near the zero of the derivative at x ≈ -0.7518. No erf/erfc library call: a vector erfc
// of the form exp(-t²/2)·W(t)/t. A short fast path serves the lanes with x ≥ -13 and |x| ≥ 2^-60;
// vectors with other lanes also run the general path below for those lanes.
#include "cpu/x86_avx2/loops_avx2.h"

// --- the general path
// ------------------------------------------------------------------------------

// With t = |x|, Q(t) = Φ(-t) = 0.5·erfc(t/√2) and Wc(t) = t·Q(t)·e^{t²/2} (smooth, from 0.175 at
// t = 0.5 to 1/√(2π) as t → ∞):
//   |x| < 0.5:  gelu(x) = x·Φ(x) = 0.5x + x²·Ps(x²)          (Φ(x) = 0.5 + x·Ps(x²))
//   x ≤ -0.5:   gelu(x) = -t·Q(t) = -e^{-t²/2}·Wc(t)           (relative accuracy down to the
//                                                              underflow near x = -14)
//   x ≥ 0.5:    gelu(x) = t·(1 - Q(t)) = x - e^{-t²/2}·Wc(t)   (no cancellation: Q ≤ 0.31)
// e^{-t²/2} comes from ffn__avx2_exp_neg with t² split exactly into two floats, and its 2^n is
// applied last (the finish). gelu'(x) = Φ(x) + x·φ(x), φ(x) = e^{-x²/2}/√(2π):
//   |x| < 0.5:  0.5 + x·(Ps(x²) + φ(x)·√(2π)/√(2π))   = 0.5 + x·(Ps + E/√(2π))
//   x ≤ -0.5:   E·(Mc(t) - t/√(2π)),  Mc = Wc/t           (zero at x ≈ -0.7518: absolute there)
//   x ≥ 0.5:    1 - E·(Mc(t) - t/√(2π))
#define FFN_INV_SQRT_2PI_F 0x1.988454p-2f  // 1/√(2π), rounded
// Upper clamp of t: Wc is fitted up to 32; e^{-24²/2} = e^-288 is below the exp clamp's reach, so
// x ≤ -24 gives the same zero as the exact value (even times two f32 factors), and x ≥ 24 gives
// x - (a term below 2^-400·x) = x.
#define FFN_GELU_ERF_TMAX 24.0f
#define FFN_GELU_ERF_TSMALL 0.5f
// The reference's gelu (erfc) and gelu' (erfc and e^{-x²/2}) are exactly 0 in double below these:
// `fix` lanes (limits -0 and 0, -inf included).
#define FFN_GELU_ERF_ZERO (-0x1.3407fap+5f)
#define FFN_GELU_ERF_DZERO (-0x1.34d4eep+5f)

// Ps(v), v = x² ≤ 0.25: Chebyshev fit (mpmath) of (Φ(√v) - 1/2)/√v, relative error 0.48 ulp
// (that of its constant term 1/√(2π) in f32), amplified at most 0.63× in gelu(x).
#define FFN_ERF_PS0 0x1.988454p-2f
#define FFN_ERF_PS1 (-0x1.105838p-4f)
#define FFN_ERF_PS2 0x1.46d04p-7f
#define FFN_ERF_PS3 (-0x1.373f14p-10f)
#define FFN_ERF_PS4 0x1.e399ep-14f
#define FFN_ERF_PS5 (-0x1.2ca074p-17f)

// Wc(t) on the binades [0.5,1), [1,2), [2,4), [4,8), [8,16), [16,32): per binade k a degree-9
// polynomial in s = t - center_k with a double-float constant term (c0h + c0l); Chebyshev fits
// (mpmath, 40 digits), relative error ≤ 0.12 ulp with these f32 coefficients. Lane k of each
// table is binade k (picked with vpermps); lanes 6, 7 repeat binade 5.
static const float ffn__erfw_center[8] __attribute__((aligned(32))) = {
    0x1.8p-1f, 0x1.8p+0f, 0x1.8p+1f, 0x1.8p+2f, 0x1.8p+3f, 0x1.8p+4f, 0x1.8p+4f, 0x1.8p+4f};
static const float ffn__erfw_c0h[8]
    __attribute__((aligned(32))) = {0x1.cd2836p-3f, 0x1.3c144p-2f,  0x1.754a76p-2f, 0x1.8e010ep-2f,
                                    0x1.95bcb4p-2f, 0x1.97cfb4p-2f, 0x1.97cfb4p-2f, 0x1.97cfb4p-2f};
static const float ffn__erfw_c0l[8] __attribute__((aligned(32))) = {
    -0x1.8ca21ap-28f, 0x1.860944p-29f,  -0x1.d3273ep-27f, -0x1.c97cp-27f,
    -0x1.86bb92p-28f, -0x1.d5fd58p-27f, -0x1.d5fd58p-27f, -0x1.d5fd58p-27f};
static const float ffn__erfw_c1[8] __attribute__((aligned(32))) = {
    0x1.5bf7f2p-3f,  0x1.204038p-4f,  0x1.2c08cap-6f,  0x1.a0eee4p-9f,
    0x1.d0fb68p-12f, 0x1.df3082p-15f, 0x1.df3082p-15f, 0x1.df3082p-15f};
static const float ffn__erfw_c2[8] __attribute__((aligned(32))) = {
    -0x1.c2c6ecp-4f,  -0x1.332042p-5f,  -0x1.c6429cp-8f,  -0x1.7b57ep-11f,
    -0x1.c4c9fap-15f, -0x1.dbe16cp-19f, -0x1.dbe16cp-19f, -0x1.dbe16cp-19f};
static const float ffn__erfw_c3[8] __attribute__((aligned(32))) = {
    0x1.d68c6ep-5f, 0x1.0d602ep-6f,  0x1.239d7ap-9f,  0x1.2caa8ap-13f,
    0x1.857a5p-18f, 0x1.a3682ep-23f, 0x1.a3682ep-23f, 0x1.a3682ep-23f};
static const float ffn__erfw_c4[8] __attribute__((aligned(32))) = {
    -0x1.a8949ap-6f,  -0x1.9ef158p-8f, -0x1.50904ep-11f, -0x1.b6c08p-16f,
    -0x1.38d23ep-21f, -0x1.5af9bp-27f, -0x1.5af9bp-27f,  -0x1.5af9bp-27f};
static const float ffn__erfw_c5[8] __attribute__((aligned(32))) = {
    0x1.572cacp-7f,  0x1.21ca2ap-9f,  0x1.66dc9p-13f,  0x1.2d759ep-18f,
    0x1.de490ep-25f, 0x1.123558p-31f, 0x1.123558p-31f, 0x1.123558p-31f};
static const float ffn__erfw_c6[8] __attribute__((aligned(32))) = {
    -0x1.fbb2d6p-9f,  -0x1.75cb4cp-11f, -0x1.651806p-15f, -0x1.82fp-21f,
    -0x1.5204bep-28f, -0x1.8dad72p-36f, -0x1.8dad72p-36f, -0x1.8dad72p-36f};
static const float ffn__erfw_c7[8] __attribute__((aligned(32))) = {
    0x1.5cbd92p-10f, 0x1.c3c782p-13f, 0x1.535f6p-17f,  0x1.eac2bp-24f,
    0x1.e80e9p-32f,  0x1.2b5554p-40f, 0x1.2b5554p-40f, 0x1.2b5554p-40f};
static const float ffn__erfw_c8[8] __attribute__((aligned(32))) = {
    -0x1.c7bc24p-12f, -0x1.0da848p-14f, -0x1.5b3d92p-19f, -0x1.7ecc6ap-26f,
    -0x1.e514bp-35f,  -0x1.4683aep-44f, -0x1.4683aep-44f, -0x1.4683aep-44f};
static const float ffn__erfw_c9[8] __attribute__((aligned(32))) = {
    0x1.154e86p-13f, 0x1.23a7aap-16f, 0x1.2c3d5p-21f,  0x1.c3d918p-29f,
    0x1.4c90fcp-38f, 0x1.d76d66p-49f, 0x1.d76d66p-49f, 0x1.d76d66p-49f};

struct ffn__ge {
    __m256 x, tc, neg, small, big, fix, fixd, tiny;
    struct ffn__avx2_exp e;  // e^{-t²/2}
    __m256 wh, wl;           // Wc(t) as a double-float (unused on small lanes)
};

FFN_AVX2_INLINE __m256 ffn__ge_pick(const float *tab, __m256i idx) {
    return _mm256_permutevar8x32_ps(_mm256_load_ps(tab), idx);
}

// Wc(t) = wh + wl for t in [0.5, 32) (any value below: unused there): binade index from the
// exponent field, then the binade's polynomial in s = t - center (exact) by Horner.
FFN_AVX2_INLINE void ffn__ge_w(__m256 tc, __m256 *wh, __m256 *wl) {
    __m256i idx =
        _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(tc), 23), _mm256_set1_epi32(126));
    idx = _mm256_max_epi32(idx, _mm256_setzero_si256());
    const __m256 sv = _mm256_sub_ps(tc, ffn__ge_pick(ffn__erfw_center, idx));  // exact
    __m256 p = ffn__ge_pick(ffn__erfw_c9, idx);
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c8, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c7, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c6, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c5, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c4, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c3, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c2, idx));
    p = _mm256_fmadd_ps(p, sv, ffn__ge_pick(ffn__erfw_c1, idx));
    const __m256 u1 = _mm256_mul_ps(p, sv);
    const __m256 c0h = ffn__ge_pick(ffn__erfw_c0h, idx);
    *wh = _mm256_add_ps(c0h, u1);  // fast two-sum: |u1| < |c0h| within a binade
    *wl =
        _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(c0h, *wh), u1), ffn__ge_pick(ffn__erfw_c0l, idx));
}

FFN_AVX2_INLINE struct ffn__ge ffn__ge_prep(__m256 x) {
    struct ffn__ge s;
    s.x = x;
    s.neg = ffn__avx2_neg_mask(x);
    s.big = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_AVX2_XBIG), _CMP_GE_OQ);
    s.fix = ffn__avx2_le(x, FFN_GELU_ERF_ZERO);
    s.fixd = ffn__avx2_le(x, FFN_GELU_ERF_DZERO);
    s.tiny = ffn__avx2_tiny_mask(x);
    const __m256 t = ffn__avx2_abs(x);
    s.small = _mm256_cmp_ps(t, _mm256_set1_ps(FFN_GELU_ERF_TSMALL), _CMP_LT_OQ);
    s.tc = ffn__avx2_min_keepnan(FFN_GELU_ERF_TMAX, t);
    // -t²/2 = a + alo exactly (t² by FMA, the halving is exact).
    const __m256 t2h = _mm256_mul_ps(s.tc, s.tc);
    const __m256 t2l = _mm256_fmsub_ps(s.tc, s.tc, t2h);
    const __m256 mhalf = _mm256_set1_ps(-0.5f);
    s.e = ffn__avx2_exp_neg(_mm256_mul_ps(mhalf, t2h), _mm256_mul_ps(mhalf, t2l), true);
    ffn__ge_w(s.tc, &s.wh, &s.wl);
    return s;
}

FFN_AVX2_INLINE __m256 ffn__ge_ps(__m256 v) {
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(FFN_ERF_PS5), v, _mm256_set1_ps(FFN_ERF_PS4));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(FFN_ERF_PS3));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(FFN_ERF_PS2));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(FFN_ERF_PS1));
    return _mm256_fmadd_ps(p, v, _mm256_set1_ps(FFN_ERF_PS0));
}

// gelu_erf(x) = (hi + lo)·2^ns.
FFN_AVX2_INLINE void ffn__ge_value(const struct ffn__ge *s, __m256 *hi, __m256 *lo, __m256i *ns) {
    const __m256 x = s->x, pm1 = s->e.pm1;
    // |x| < 0.5: 0.5x + x²·Ps(x²) (0.5x - ysh is exact: ysh/0.5x is in [0.62, 1.38]).
    const __m256 x2h = _mm256_mul_ps(x, x);
    const __m256 x2l = _mm256_fmsub_ps(x, x, x2h);
    const __m256 ps = ffn__ge_ps(x2h);
    const __m256 hx = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
    const __m256 ysh = _mm256_fmadd_ps(x2h, ps, hx);
    const __m256 ysl = _mm256_fmadd_ps(x2l, ps, _mm256_fmadd_ps(x2h, ps, _mm256_sub_ps(hx, ysh)));
    // x ≤ -0.5: -(1 + pm1)·Wc·2^n, the product kept as a double-float.
    const __m256 ph = _mm256_fmadd_ps(pm1, s->wh, s->wh);
    const __m256 pl = _mm256_fmadd_ps(
        pm1, s->wl, _mm256_add_ps(s->wl, _mm256_fmadd_ps(pm1, s->wh, _mm256_sub_ps(s->wh, ph))));
    // x ≥ 0.5: x - E·Wc, E = (1 + pm1)·s; s·pm1 and s·wh are exact scalings.
    const __m256 sp = _mm256_mul_ps(s->e.s, pm1), sw = _mm256_mul_ps(s->e.s, s->wh);
    const __m256 ew = _mm256_fmadd_ps(sp, s->wh, sw);
    const __m256 ewl =
        _mm256_fmadd_ps(_mm256_fmadd_ps(sp, s->wl, _mm256_mul_ps(s->e.s, s->wl)),
                        _mm256_set1_ps(1.0f), _mm256_fmadd_ps(sp, s->wh, _mm256_sub_ps(sw, ew)));
    const __m256 yh = _mm256_sub_ps(x, ew);
    const __m256 yl = _mm256_sub_ps(_mm256_sub_ps(_mm256_sub_ps(x, yh), ew), ewl);
    const __m256 sgn = ffn__avx2_sign_mask();
    __m256 h = _mm256_blendv_ps(yh, _mm256_xor_ps(ph, sgn), s->neg);
    __m256 l = _mm256_blendv_ps(yl, _mm256_xor_ps(pl, sgn), s->neg);
    h = _mm256_blendv_ps(h, ysh, s->small);
    l = _mm256_blendv_ps(l, ysl, s->small);
    // tiny |x|: x/2 as x·2^63, 2^-64 applied by the finish; x ≥ XBIG: x.
    h = _mm256_blendv_ps(h, _mm256_mul_ps(x, _mm256_set1_ps(0x1p63f)), s->tiny);
    l = _mm256_andnot_ps(s->tiny, l);
    *hi = _mm256_blendv_ps(h, x, s->big);
    *lo = _mm256_andnot_ps(s->big, l);
    const __m256 scaled = _mm256_andnot_ps(s->small, s->neg);
    *ns = ffn__avx2_tiny_ns(_mm256_and_si256(s->e.n, _mm256_castps_si256(scaled)), s->tiny);
}

// gelu_erf'(x) = m·2^ns.
FFN_AVX2_INLINE __m256 ffn__ge_deriv(const struct ffn__ge *s, __m256i *ns) {
    const __m256 c = _mm256_set1_ps(FFN_INV_SQRT_2PI_F), one = _mm256_set1_ps(1.0f);
    const __m256 big_e = _mm256_fmadd_ps(s->e.s, s->e.pm1, s->e.s);
    const __m256 ds =
        _mm256_fmadd_ps(s->x, _mm256_fmadd_ps(big_e, c, ffn__ge_ps(_mm256_mul_ps(s->x, s->x))),
                        _mm256_set1_ps(0.5f));
    const __m256 q = _mm256_fnmadd_ps(s->tc, c, _mm256_div_ps(s->wh, s->tc));  // Mc - t/√(2π)
    const __m256 dn = _mm256_fmadd_ps(s->e.pm1, q, q);                         // ·(1 + pm1)
    const __m256 dp = _mm256_fnmadd_ps(big_e, q, one);
    __m256 m = _mm256_blendv_ps(dp, dn, s->neg);
    m = _mm256_blendv_ps(m, ds, s->small);
    const __m256 scaled = _mm256_andnot_ps(s->small, s->neg);
    *ns = _mm256_and_si256(s->e.n, _mm256_castps_si256(scaled));
    return _mm256_blendv_ps(m, one, s->big);
}

// --- general per-vector functions (every lane; called for vectors with a rare lane)
// --------------- Each returns the general result in the lanes where `ok` is clear and `fast`
// elsewhere.
FFN_AVX2_SLOW __m256 ffn__ge_fwd_slow(__m256 x, __m256 fast, __m256 ok) {
    const struct ffn__ge s = ffn__ge_prep(x);
    __m256 hi, lo;
    __m256i ns;
    ffn__ge_value(&s, &hi, &lo, &ns);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = ffn__avx2_finish(hi, lo, one, one, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, x, x, 1), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__geglu_slow(__m256 g, __m256 u, __m256 fast, __m256 ok) {
    const struct ffn__ge s = ffn__ge_prep(g);
    __m256 hi, lo;
    __m256i ns;
    ffn__ge_value(&s, &hi, &lo, &ns);
    const __m256 r = ffn__avx2_finish(hi, lo, u, u, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, g, u, u, 2), fast, ok);
}

FFN_AVX2_SLOW __m256 ffn__ge_bwd_slow(__m256 x, __m256 dy, __m256 fast, __m256 ok) {
    const struct ffn__ge s = ffn__ge_prep(x);
    __m256i ns;
    const __m256 m = ffn__ge_deriv(&s, &ns);
    const __m256 r =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dy, dy, false, ns, s.fixd, _mm256_setzero_ps());
    return _mm256_blendv_ps(ffn__avx2_nan_fix(r, x, dy, dy, 2), fast, ok);
}

FFN_AVX2_SLOW void ffn__geglu_bwd_slow(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                       __m256 ok) {
    const struct ffn__ge s = ffn__ge_prep(g);
    __m256 hi, lo;
    __m256i ns, nsd;
    ffn__ge_value(&s, &hi, &lo, &ns);
    const __m256 m = ffn__ge_deriv(&s, &nsd);
    const __m256 rg =
        ffn__avx2_finish(m, _mm256_setzero_ps(), dh, u, true, nsd, s.fixd, _mm256_setzero_ps());
    const __m256 ru = ffn__avx2_finish(hi, lo, dh, dh, false, ns, s.fix, _mm256_set1_ps(-0.0f));
    *dg = _mm256_blendv_ps(ffn__avx2_nan_fix(rg, g, u, dh, 3), *dg, ok);
    *du = _mm256_blendv_ps(ffn__avx2_nan_fix(ru, g, u, dh, 3), *du, ok);
}

// --- the fast path
// --------------------------------------------------------------------------------- Lanes with x ≥
// -13, 2^-60 ≤ |x| (gelu(x) normal for the gated product) and x finite: e^{-t²/2} ≥ 2^-122 is
// normal there, and so is every result; the arguments are taken at t = min(|x|, 13) (beyond, x -
// e^{-t²/2}·Wc is x to f32, and the derivative 1). The same three regimes as the general path, with
// e^{-t²/2} = eh + el from ffn__avx2_fexp2 and Wc = wh + wl:
//   |x| < 0.5:  0.5x + x²·Ps(x²)            x ≤ -0.5:  -(eh + el)(wh + wl)
//   x ≥ 0.5:    x - (eh + el)(wh + wl)
// with the products and the difference kept as float pairs: within ~1 ulp (measured 1.04; the
// gated product 1.6).
#define FFN_GELU_ERF_FAST (-13.0f)
#define FFN_LOG2E_HALF_HI 0x1.715476p-1f  // log2(e)/2 = HI + LO
#define FFN_LOG2E_HALF_LO 0x1.4ae0cp-27f

struct ffn__gef {
    __m256 t, tc, t2h, small;
    struct ffn__avx2_fe e;  // e^{-t²/2}
    __m256 wh, wl;          // Wc(t)
};

FFN_AVX2_INLINE struct ffn__gef ffn__ge_fprep(__m256 x, bool low) {
    struct ffn__gef f;
    f.t = ffn__avx2_abs(x);
    f.tc = _mm256_min_ps(_mm256_set1_ps(-FFN_GELU_ERF_FAST), f.t);
    f.small = _mm256_cmp_ps(f.t, _mm256_set1_ps(FFN_GELU_ERF_TSMALL), _CMP_LT_OQ);
    // -t²/2·log2 e with t² = t2h + t2l exactly.
    f.t2h = _mm256_mul_ps(f.tc, f.tc);
    const __m256 t2l = _mm256_fmsub_ps(f.tc, f.tc, f.t2h);
    __m256 tt, r;
    ffn__avx2_fexp2_red(_mm256_xor_ps(f.t2h, ffn__avx2_sign_mask()),
                        _mm256_set1_ps(FFN_LOG2E_HALF_HI), _mm256_set1_ps(FFN_LOG2E_HALF_LO), &tt,
                        &r);
    r = _mm256_fnmadd_ps(t2l, _mm256_set1_ps(FFN_LOG2E_HALF_HI), r);
    f.e = ffn__avx2_fexp2_fin(tt, r, low);
    ffn__ge_w(f.tc, &f.wh, &f.wl);
    return f;
}

// The value as a float pair hi + lo: e·Wc = ph + pl (ph = eh·wh rounded, pl its exact error plus
// the low products), x - e·Wc = yh + yl (x - ph: fast two-sum, x ≥ 2ph); lo = 0 for |x| < 0.5.
FFN_AVX2_INLINE void ffn__ge_fvalue(__m256 x, const struct ffn__gef *f, __m256 *hi, __m256 *lo) {
    const __m256 ysmall =
        _mm256_fmadd_ps(f->t2h, ffn__ge_ps(f->t2h), _mm256_mul_ps(_mm256_set1_ps(0.5f), x));
    const __m256 sgn = ffn__avx2_sign_mask();
    const __m256 ph = _mm256_mul_ps(f->e.h, f->wh);
    const __m256 pl = _mm256_fmadd_ps(
        f->e.h, f->wl, _mm256_fmadd_ps(f->e.l, f->wh, _mm256_fmsub_ps(f->e.h, f->wh, ph)));
    const __m256 yh = _mm256_sub_ps(x, ph);
    const __m256 yl = _mm256_sub_ps(_mm256_sub_ps(_mm256_sub_ps(x, yh), ph), pl);
    *hi = _mm256_blendv_ps(_mm256_blendv_ps(yh, _mm256_xor_ps(ph, sgn), x), ysmall, f->small);
    *lo = _mm256_andnot_ps(f->small, _mm256_blendv_ps(yl, _mm256_xor_ps(pl, sgn), x));
}

FFN_AVX2_INLINE __m256 ffn__ge_fok(__m256 x) {
    const __m256 xa = _mm256_or_ps(x, ffn__avx2_sign_mask());
    return _mm256_and_ps(ffn__avx2_mag_in(xa, FFN_AVX2_BITS_TINY, FFN_AVX2_BITS_MAXFIN),
                         _mm256_cmp_ps(x, _mm256_set1_ps(FFN_GELU_ERF_FAST), _CMP_GE_OQ));
}

// gelu'(x) (see ffn__ge_deriv): 0.5 + x·(Ps(x²) + E/√(2π)) for |x| < 0.5, else E·q (x < 0) or
// 1 - E·q (x > 0) with q = Wc/t - t/√(2π).
FFN_AVX2_INLINE __m256 ffn__ge_fderiv(__m256 x, const struct ffn__gef *f) {
    const __m256 c = _mm256_set1_ps(FFN_INV_SQRT_2PI_F), one = _mm256_set1_ps(1.0f);
    const __m256 ds =
        _mm256_fmadd_ps(x, _mm256_fmadd_ps(f->e.h, c, ffn__ge_ps(f->t2h)), _mm256_set1_ps(0.5f));
    const __m256 q = _mm256_fnmadd_ps(f->tc, c, _mm256_div_ps(f->wh, f->tc));
    const __m256 dn = _mm256_mul_ps(f->e.h, q);
    const __m256 dp = _mm256_fnmadd_ps(f->e.h, q, one);
    return _mm256_blendv_ps(_mm256_blendv_ps(dp, dn, x), ds, f->small);
}

// --- the table path (forward, |x| < 5) ----------------------------------------------------------
// Φ(-s), s = |x| < 5, by one degree-8 polynomial in t = s - c_j on each of 8 intervals uniform in
// v = s·(s + 4) (j = floor(v·8/45)), coefficients picked by vpermps (8-entry tables: one
// instruction each on AVX2): the fit of tools/fit/avx512/tab5.c (`tab5 8 5 8 4 0 print`), c0 a
// float pair, relative error ≤ 0.45 ulp. gelu(x) = x·Φ(-s) (x < 0) or x·(1 - Φ(-s)) (x ≥ 0, no
// cancellation: Φ(-s) ≤ 1/2). About half the instructions of the exp-based form below, for the
// forward's 4-ulp tier; other lanes (|x| ≥ 5, NaN; in a combine also |x| < 2^-60 or up not finite
// and nonzero) take that form.
#define FFN_ERF8_K 0x1.6c16c2p-3f  // 8/45: v·K ∈ [0, 8) for s < 5
#define FFN_ERF8_DEG 8
#define FFN_ERF8_ROW_C 0
#define FFN_ERF8_ROW_F 1  // c0 .. c8
#define FFN_ERF8_ROW_FLO (FFN_ERF8_ROW_F + FFN_ERF8_DEG + 1)
static const float ffn__erf8_tab[FFN_ERF8_DEG + 3][8] __attribute__((aligned(32))) = {
    {
        // centre
        0x1.1a3818p-1,
        0x1.80f72cp+0,
        0x1.1e56b2p+1,
        0x1.6ddeeep+1,
        0x1.b4348cp+1,
        0x1.f3f7b8p+1,
        0x1.175cc2p+2,
        0x1.32c044p+2,
    },
    {
        // c0 (high part)
        0x1.29b918p-2,
        0x1.0fa5aap-4,
        0x1.9e44eap-7,
        0x1.17124ap-9,
        0x1.57486cp-12,
        0x1.899552p-15,
        0x1.aa7b64p-18,
        0x1.b9166ep-21,
    },
    {
        // c1
        -0x1.5ef0d6p-2,
        -0x1.07c0f8p-3,
        -0x1.0bb1ap-5,
        -0x1.b7c94ap-8,
        -0x1.3a7f7cp-10,
        -0x1.96f8e2p-13,
        -0x1.e7c262p-16,
        -0x1.12ef6ep-18,
    },
    {
        // c2
        0x1.82e22ep-4,
        0x1.8ca01cp-4,
        0x1.2b6b18p-5,
        0x1.3a447cp-7,
        0x1.0bf0d6p-9,
        0x1.8d6878p-12,
        0x1.0a22cap-14,
        0x1.4970aep-17,
    },
    {
        // c3
        0x1.45c086p-5,
        -0x1.bb92bap-6,
        -0x1.654e3ep-6,
        -0x1.06c81ap-7,
        -0x1.1628ccp-9,
        -0x1.e382b2p-12,
        -0x1.6ee86p-14,
        -0x1.f76c4cp-17,
    },
    {
        // c4
        -0x1.5bb194p-6,
        -0x1.86a31ep-8,
        0x1.90134ap-8,
        0x1.0eceaap-8,
        0x1.80a656p-10,
        0x1.95e9bcp-12,
        0x1.64090ap-14,
        0x1.1228aap-16,
    },
    {
        // c5
        -0x1.db32f4p-9,
        0x1.7f9312p-8,
        0x1.1b62fp-11,
        -0x1.2feb8p-10,
        -0x1.657552p-11,
        -0x1.e92868p-13,
        -0x1.ff8ea6p-15,
        -0x1.c210bep-17,
    },
    {
        // c6
        0x1.9de774p-9,
        -0x1.600fe2p-11,
        -0x1.0a2c52p-10,
        0x1.5cf92ap-20,
        0x1.91c8c2p-13,
        0x1.a4661cp-14,
        0x1.153b56p-15,
        0x1.1e704cp-17,
    },
    {
        // c7
        0x1.82a5fcp-13,
        -0x1.1d8092p-11,
        0x1.08f762p-12,
        0x1.210b8ap-13,
        -0x1.768dcep-17,
        -0x1.d5af56p-16,
        -0x1.c18ffp-17,
        -0x1.1fb78ap-18,
    },
    {
        // c8
        -0x1.5afbp-12,
        0x1.626f5ep-13,
        0x1.3742cep-15,
        -0x1.975658p-15,
        -0x1.046aaap-16,
        0x1.85e122p-19,
        0x1.f4ac4cp-19,
        0x1.b79928p-20,
    },
    {
        // c0 (low part)
        -0x1.27218ap-27,
        0x1.fa7368p-30,
        0x1.0cd1dcp-32,
        -0x1.ffed4ep-36,
        -0x1.b2a5a2p-37,
        0x1.42ec6p-43,
        0x1.7beb3cp-43,
        0x1.fe4c4ap-47,
    },
};
#define FFN_GELU_ERF_TABLIM 5.0f
// The derivative's H(s) = Φ(-s) - s·φ(s) on the same intervals (`tab5 8 5 8 4 1 print`, c0 a
// float: ≤ 1.48 ulp of Φ(-s) + s·φ(s), the larger of its terms; H has the zero of gelu_erf' at
// s ≈ 0.7518, where the bound is absolute): gelu_erf'(x) = H(s) (x < 0) or 1 - H(s) (x ≥ 0).
static const float ffn__erf8_htab[FFN_ERF8_DEG + 1][8] __attribute__((aligned(32))) = {
    {
        // H: c0
        0x1.a11ffep-4,
        -0x1.04cd48p-3,
        -0x1.ef44f6p-5,
        -0x1.176232p-6,
        -0x1.ecf89ep-9,
        -0x1.74cf24p-11,
        -0x1.f99ddep-14,
        -0x1.3ba7fcp-16,
    },
    {
        // H: c1
        -0x1.29a09ap-1,
        0x1.13b4b6p-5,
        0x1.921c76p-4,
        0x1.5332fep-5,
        0x1.79ed4cp-7,
        0x1.51327cp-9,
        0x1.03f032p-11,
        0x1.68623p-14,
    },
    {
        // H: c2
        0x1.657f1ep-2,
        0x1.58ccf4p-3,
        -0x1.2cb1c4p-5,
        -0x1.47a4d8p-5,
        -0x1.fdfd4ep-7,
        -0x1.1798cap-8,
        -0x1.f4c938p-11,
        -0x1.86a5fp-13,
    },
    {
        // H: c3
        0x1.cbdab6p-4,
        -0x1.27370cp-3,
        -0x1.0b1f9ap-5,
        0x1.f10198p-7,
        0x1.794176p-7,
        0x1.137f04p-8,
        0x1.28cccp-10,
        0x1.0994f8p-12,
    },
    {
        // H: c4
        -0x1.db87bap-4,
        0x1.d1a04p-7,
        0x1.2b8658p-5,
        0x1.0c295p-8,
        -0x1.187eaap-8,
        -0x1.575dd6p-9,
        -0x1.db4c44p-11,
        -0x1.f6d138p-13,
    },
    {
        // H: c5
        -0x1.72bda8p-7,
        0x1.dc125cp-6,
        -0x1.543eeap-7,
        -0x1.c66fbap-8,
        -0x1.6beef4p-13,
        0x1.f1d27cp-11,
        0x1.05f7fp-11,
        0x1.5a1138p-13,
    },
    {
        // H: c6
        0x1.756ccp-6,
        -0x1.587adep-7,
        -0x1.8dc83p-9,
        0x1.69be54p-9,
        0x1.13e382p-10,
        -0x1.1ea018p-14,
        -0x1.7234e2p-13,
        -0x1.5b354cp-14,
    },
    {
        // H: c7
        0x1.dad396p-16,
        -0x1.2f9dfp-9,
        0x1.5e5504p-9,
        -0x1.63cf3p-18,
        -0x1.0bf01ep-11,
        -0x1.176656p-13,
        0x1.80c31p-16,
        0x1.dd4026p-16,
    },
    {
        // H: c8
        -0x1.7fa432p-9,
        0x1.e26a2ap-10,
        -0x1.6694c8p-12,
        -0x1.9260aep-12,
        0x1.32a5c4p-14,
        0x1.43d44cp-14,
        0x1.cadca8p-17,
        -0x1.4649f8p-18,
    },
};

// The entries of one table row (8 intervals) for the lanes' intervals j (vpermps reads 3 bits).
FFN_AVX2_INLINE __m256 ffn__erf8_pick(const float *row, __m256i j) {
    return _mm256_permutevar8x32_ps(_mm256_load_ps(row), j);
}
FFN_AVX2_INLINE __m256 ffn__erf8_row(int row, __m256i j) {
    return ffn__erf8_pick(ffn__erf8_tab[row], j);
}

// G = Φ(-|x|) or 1 - Φ(-|x|) by sign, so that gelu(x) = x·G; meaningful for |x| < 5 (elsewhere
// the index wraps: vpermps reads 3 bits).
struct ffn__erf8_iv {
    __m256i j;  // interval
    __m256 t;   // s - c_j
};
FFN_AVX2_INLINE struct ffn__erf8_iv ffn__erf8_interval(__m256 x) {
    const __m256 s = ffn__avx2_abs(x);
    const __m256 k = _mm256_set1_ps(FFN_ERF8_K);
    const __m256 v =
        _mm256_mul_ps(s, _mm256_fmadd_ps(s, k, _mm256_mul_ps(_mm256_set1_ps(4.0f), k)));
    struct ffn__erf8_iv iv;
    iv.j = _mm256_cvttps_epi32(v);
    iv.t = _mm256_sub_ps(s, ffn__erf8_row(FFN_ERF8_ROW_C, iv.j));
    return iv;
}

FFN_AVX2_INLINE __m256 ffn__ge_tG_iv(__m256 x, struct ffn__erf8_iv iv) {
    __m256 p = ffn__erf8_row(FFN_ERF8_ROW_F + FFN_ERF8_DEG, iv.j);
    for (int q = FFN_ERF8_DEG - 1; q >= 1; q--)
        p = _mm256_fmadd_ps(p, iv.t, ffn__erf8_row(FFN_ERF8_ROW_F + q, iv.j));
    p = _mm256_fmadd_ps(p, iv.t, ffn__erf8_row(FFN_ERF8_ROW_FLO, iv.j));
    const __m256 f = _mm256_add_ps(ffn__erf8_row(FFN_ERF8_ROW_F, iv.j), p);
    return _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), f), f, x);
}
FFN_AVX2_INLINE __m256 ffn__ge_tG(__m256 x) { return ffn__ge_tG_iv(x, ffn__erf8_interval(x)); }

// gelu_erf'(x) = H(s) or 1 - H(s) by sign, same range as ffn__ge_tG.
FFN_AVX2_INLINE __m256 ffn__ge_tD_iv(__m256 x, struct ffn__erf8_iv iv) {
    __m256 p = ffn__erf8_pick(ffn__erf8_htab[FFN_ERF8_DEG], iv.j);
    for (int q = FFN_ERF8_DEG - 1; q >= 0; q--)
        p = _mm256_fmadd_ps(p, iv.t, ffn__erf8_pick(ffn__erf8_htab[q], iv.j));
    return _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), p), p, x);
}

FFN_AVX2_INLINE __m256 ffn__ge_tok(__m256 x) {
    return _mm256_cmp_ps(ffn__avx2_abs(x), _mm256_set1_ps(FFN_GELU_ERF_TABLIM), _CMP_LT_OQ);
}

// --- per-vector functions
// ---------------------------------------------------------------------------
// The exp-based fast path (and, for its own rare lanes, the general one): the accurate tier, and
// the default tier's lanes outside the table path's range.
FFN_AVX2_INLINE __m256 ffn__ge_fwd_exp(__m256 x) {
    const struct ffn__gef f = ffn__ge_fprep(x, true);
    __m256 hi, lo;
    ffn__ge_fvalue(x, &f, &hi, &lo);
    const __m256 y = _mm256_add_ps(hi, lo);
    const __m256 ok = ffn__ge_fok(x);
    return ffn__avx2_all(ok) ? y : ffn__ge_fwd_slow(x, y, ok);
}

FFN_AVX2_INLINE __m256 ffn__ge_fwd_v(__m256 x) {
    const __m256 yt = _mm256_mul_ps(x, ffn__ge_tG(x));
    const __m256 okt = ffn__ge_tok(x);
    return ffn__avx2_all(okt) ? yt : _mm256_blendv_ps(ffn__ge_fwd_exp(x), yt, okt);
}

// h = gelu(g)·up = hi·up + lo·up rounded once; up must be finite and nonzero (see silu_avx2.c).
FFN_AVX2_INLINE __m256 ffn__geglu_exp(__m256 g, __m256 u) {
    const struct ffn__gef f = ffn__ge_fprep(g, true);
    __m256 hi, lo;
    ffn__ge_fvalue(g, &f, &hi, &lo);
    const __m256 h = _mm256_fmadd_ps(hi, u, _mm256_mul_ps(lo, u));
    const __m256 ok =
        _mm256_and_ps(ffn__ge_fok(g), ffn__avx2_mag_in(_mm256_or_ps(u, ffn__avx2_sign_mask()),
                                                       FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_MAXFIN));
    return ffn__avx2_all(ok) ? h : ffn__geglu_slow(g, u, h, ok);
}

// h = g·G·up on the table path's lanes with one rounding: P = g·up as an exact pair (Ph + Pl),
// h = Ph·G + Pl·G (fma), so the combine rounds as often as gelu itself (two roundings reached
// 4.09 ulp near |g| = 5 over all 2^32 gates). Lanes: |g| < 4.5, |g| ≥ 2^-60 (gelu(g) normal),
// 2^-149 ≤ |up| < 2^100 (Ph finite, Pl its exact error); the others take the exp-based form.
#define FFN_GELU_ERF_TABLIM_GLU 4.5f
#define FFN_AVX2_BITS_2P100 0x71800000u  // 2^100
FFN_AVX2_INLINE __m256 ffn__geglu_v(__m256 g, __m256 u) {
    const __m256 G = ffn__ge_tG(g);
    const __m256 ph = _mm256_mul_ps(g, u);
    const __m256 pl = _mm256_fmsub_ps(g, u, ph);
    const __m256 h = _mm256_fmadd_ps(ph, G, _mm256_mul_ps(pl, G));
    const __m256 sgn = ffn__avx2_sign_mask();
    const __m256 okt = _mm256_and_ps(
        _mm256_and_ps(
            _mm256_cmp_ps(ffn__avx2_abs(g), _mm256_set1_ps(FFN_GELU_ERF_TABLIM_GLU), _CMP_LT_OQ),
            ffn__avx2_mag_in(_mm256_or_ps(g, sgn), FFN_AVX2_BITS_TINY, FFN_AVX2_BITS_MAXFIN)),
        ffn__avx2_mag_in(_mm256_or_ps(u, sgn), FFN_AVX2_BITS_MINSUB, FFN_AVX2_BITS_2P100));
    return ffn__avx2_all(okt) ? h : _mm256_blendv_ps(ffn__geglu_exp(g, u), h, okt);
}

FFN_AVX2_INLINE __m256 ffn__ge_bwd_exp(__m256 x, __m256 dy) {
    const struct ffn__gef f = ffn__ge_fprep(x, false);
    const __m256 dx = _mm256_mul_ps(dy, ffn__ge_fderiv(x, &f));
    const __m256 ok = _mm256_cmp_ps(x, _mm256_set1_ps(FFN_GELU_ERF_FAST), _CMP_GE_OQ);
    return ffn__avx2_all(ok) ? dx : ffn__ge_bwd_slow(x, dy, dx, ok);
}

// dx = dy·gelu'(x) from the H table on |x| < 5, the exp-based form elsewhere.
FFN_AVX2_INLINE __m256 ffn__ge_bwd_v(__m256 x, __m256 dy) {
    const __m256 dx = _mm256_mul_ps(dy, ffn__ge_tD_iv(x, ffn__erf8_interval(x)));
    const __m256 okt = ffn__ge_tok(x);
    return ffn__avx2_all(okt) ? dx : _mm256_blendv_ps(ffn__ge_bwd_exp(x, dy), dx, okt);
}

// dgate = (dh·up)·gelu'(g), dup = dh·gelu(g).
FFN_AVX2_INLINE void ffn__geglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    const struct ffn__gef f = ffn__ge_fprep(g, true);
    const __m256 p = _mm256_mul_ps(dh, u);
    __m256 hi, lo;
    ffn__ge_fvalue(g, &f, &hi, &lo);
    *dg = _mm256_mul_ps(p, ffn__ge_fderiv(g, &f));
    *du = _mm256_mul_ps(dh, _mm256_add_ps(hi, lo));
    const __m256 ok = _mm256_and_ps(ffn__ge_fok(g), ffn__avx2_finite(p));
    if (!ffn__avx2_all(ok)) ffn__geglu_bwd_slow(g, u, dh, dg, du, ok);
}

// --- the kernels of kernels_avx2.inc
// -------------------------------------------------------------------
FFN_KPROTO_ACT_FWD(ffn_gelu_erf_fwd__avx2) {
    if (cfg->accurate)
        ffn__avx2_act_fwd(cfg, n, y, x, ffn__ge_fwd_exp, ffn_gelu_erf_fwd__avx2);
    else
        ffn__avx2_act_fwd(cfg, n, y, x, ffn__ge_fwd_v, ffn_gelu_erf_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_gelu_erf_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__ge_bwd_v, ffn_gelu_erf_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_geglu_erf_fwd__avx2) {
    if (cfg->accurate)
        ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__ge_fwd_exp, ffn__geglu_exp,
                          ffn_geglu_erf_fwd__avx2);
    else
        ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__ge_fwd_v, ffn__geglu_v,
                          ffn_geglu_erf_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_erf_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__geglu_bwd_v, ffn_geglu_erf_bwd__avx2);
}
