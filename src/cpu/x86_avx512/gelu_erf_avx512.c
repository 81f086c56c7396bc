// gelu_erf_avx512.c — AVX-512 erf-GeLU and GeGLU (erf): forward, backward, every (in, out) dtype
// pair. Fast lanes (|x| < 5: all but ~1 in 1.7 million N(0,1) inputs) need no exp: Φ(-|x|) and the
// derivative's H(|x|) = Φ(-|x|) - |x|·φ(x) come from per-interval polynomials. The other lanes,
// and the accurate tier's forward, use Φ(-s) = exp(-s²/2)·g(s) with g, the scaled Mills ratio,
// fitted per interval: relative accuracy down to the underflow of the result (x ≈ -14.5).
#include "cpu/x86_avx512/vmath_avx512.h"

// Limits at -inf (act) and +inf (act'), see ffn__lim.
static const struct ffn__lim ffn__lims = {-0.0f, 1.0f};

#include "cpu/gelu_erf_fast.h"

static const float ffn__erf_fast_tab[FFN_ERF_FAST_ROWS][32] __attribute__((aligned(64))) = {
#include "cpu/gelu_erf_fast_tab.inc"
};

FFN_VINLINE __m512 ffn__erf_row(int row, __m512i j) {
    return _mm512_permutex2var_ps(_mm512_load_ps(ffn__erf_fast_tab[row]), j,
                                  _mm512_load_ps(ffn__erf_fast_tab[row] + 16));
}

struct ffn__erf_iv {
    __m512i j;  // interval
    __m512 t;   // s - c_j
};
FFN_VINLINE struct ffn__erf_iv ffn__erf_interval(__m512 x) {
    // s ≥ 5 only in rare lanes, whose results are replaced: there j may leave [0, 32) (or be
    // 0x80000000 for NaN and huge s), and vpermt2ps reads only its low 5 bits.
    const __m512 s = _mm512_abs_ps(x);
    const __m512 kb =
        _mm512_fmadd_ps(s, ffn__c(FFN_ERF_FAST_K), ffn__c(FFN_ERF_FAST_B * FFN_ERF_FAST_K));
    struct ffn__erf_iv iv;
    iv.j = _mm512_cvttps_epi32(_mm512_mul_ps(s, kb));  // NaN: any index (the lane is rare)
    iv.t = _mm512_sub_ps(s, ffn__erf_row(FFN_ERF_ROW_C, iv.j));
    return iv;
}

// Φ(-s) = c0 + t·P1(t) by Horner, c0 without its low part: 1.09 ulp of f32 instead of 0.33 (the
// fit, tools/fit/avx512/tab5.c), for one table lookup fewer (on Zen 4 a two-table vpermt2ps
// costs about as much as an fma), well inside the forward's 4-ulp tier.
FFN_VINLINE __m512 ffn__erf_F(struct ffn__erf_iv iv) {
    __m512 p = ffn__erf_row(FFN_ERF_ROW_F + FFN_ERF_FAST_DEG, iv.j);
    for (int k = FFN_ERF_FAST_DEG - 1; k >= 0; k--)
        p = _mm512_fmadd_ps(p, iv.t, ffn__erf_row(FFN_ERF_ROW_F + k, iv.j));
    return p;
}

// H(s) = Φ(-s) - s·φ(s).
FFN_VINLINE __m512 ffn__erf_H(struct ffn__erf_iv iv) {
    __m512 p = ffn__erf_row(FFN_ERF_ROW_H + FFN_ERF_FAST_DEG, iv.j);
    for (int k = FFN_ERF_FAST_DEG - 1; k >= 0; k--)
        p = _mm512_fmadd_ps(p, iv.t, ffn__erf_row(FFN_ERF_ROW_H + k, iv.j));
    return p;
}

// --- general lanes: Φ(-s) = exp(-s²/2)·g(s) -----------------------------------------------------
// g(s) = e^{s²/2}·Φ(-s) = e^{s²/2}·erfc(s/√2)/2 on [j/2, (j+1)/2], j = 0..31, as a degree-6
// polynomial in t = s - j/2 (fit in long double of glibc's erfcl, c6..c1 rounded to f32 one at a
// time with the lower ones refitted, c0 a float pair: relative error ≤ 0.31 ulp of f32).
// Tables by coefficient (c0, c1..c6, c0's low part), then j.
#define FFN_ERF_DEG 6
#define FFN_ERF_ROW_C0LO (FFN_ERF_DEG + 1)
static const float ffn__erf_g_tab[FFN_ERF_DEG + 2][32] __attribute__((aligned(64))) = {
    {
        // c0 (high part)
        0x1p-1,        0x1.66027ap-2, 0x1.0bdb2ep-2, 0x1.a57056p-3, 0x1.5845dcp-3, 0x1.217252p-3,
        0x1.f1b89cp-4, 0x1.b396fap-4, 0x1.82b4bcp-4, 0x1.5b5acep-4, 0x1.3b0fbcp-4, 0x1.201faap-4,
        0x1.095608p-4, 0x1.eba5fep-5, 0x1.c9e12p-5,  0x1.ac6292p-5, 0x1.926972p-5, 0x1.7b5f34p-5,
        0x1.66ccb8p-5, 0x1.545298p-5, 0x1.43a38ap-5, 0x1.34805ap-5, 0x1.26b4dp-5,  0x1.1a1574p-5,
        0x1.0e7dcep-5, 0x1.03cf06p-5, 0x1.f3ddc2p-6, 0x1.e18ddcp-6, 0x1.d087aep-6, 0x1.c0a9c4p-6,
        0x1.b1d706p-6, 0x1.a3f60ap-6,
    },
    {
        // c1
        -0x1.988426p-2,  -0x1.cb0612p-3,  -0x1.195242p-3, -0x1.71c046p-4, -0x1.00f9d8p-4,
        -0x1.75ab62p-5,  -0x1.19cefp-5,   -0x1.b6038ap-6, -0x1.5cf97ap-6, -0x1.1be2c6p-6,
        -0x1.d614ecp-7,  -0x1.8b1956p-7,  -0x1.5068c2p-7, -0x1.21ae92p-7, -0x1.f7d59ep-8,
        -0x1.b9fa6ap-8,  -0x1.86b844p-8,  -0x1.5bcb3ep-8, -0x1.378124p-8, -0x1.188feep-8,
        -0x1.fbf2dp-9,   -0x1.cdeeacp-9,  -0x1.a5dac2p-9, -0x1.82bdeep-9, -0x1.63cfc8p-9,
        -0x1.486db4p-9,  -0x1.3012a8p-9,  -0x1.1a5102p-9, -0x1.06cdbep-9, -0x1.ea79b4p-10,
        -0x1.cabcdap-10, -0x1.adf8e8p-10,
    },
    {
        // c2
        0x1.fff76cp-3,  0x1.e67d08p-4,  0x1.fcc51ap-5,  0x1.203f2cp-5,  0x1.5d2f4p-6,
        0x1.bf38fap-7,  0x1.2c0884p-7,  0x1.a29ec4p-8,  0x1.2dd9e4p-8,  0x1.bfbacep-9,
        0x1.542a88p-9,  0x1.07e3ep-9,   0x1.a0eed8p-10, 0x1.4ea5p-10,   0x1.10637p-10,
        0x1.c0f9cep-11, 0x1.7625d4p-11, 0x1.3ae802p-11, 0x1.0b6e08p-11, 0x1.c9eb5cp-12,
        0x1.8af23ep-12, 0x1.56ee3cp-12, 0x1.2b9aa2p-12, 0x1.073c62p-12, 0x1.d0fb62p-13,
        0x1.9ca85p-13,  0x1.6fdc4p-13,  0x1.494a5p-13,  0x1.27e806p-13, 0x1.0ade66p-13,
        0x1.e2fd9p-14,  0x1.b6748ep-14,
    },
    {
        // c3
        -0x1.0ffc28p-3,  -0x1.c1753p-5,   -0x1.9abfb8p-6,  -0x1.99539ep-7,  -0x1.b73d92p-8,
        -0x1.f60c38p-9,  -0x1.2ecb72p-9,  -0x1.7e775p-10,  -0x1.f69a74p-11, -0x1.55b6a6p-11,
        -0x1.dea176p-12, -0x1.57fc5ep-12, -0x1.f9c8fep-13, -0x1.7b5d94p-13, -0x1.21a4dp-13,
        -0x1.c1582ep-14, -0x1.61880ep-14, -0x1.19b984p-14, -0x1.c638a8p-15, -0x1.7206ep-15,
        -0x1.30550ap-15, -0x1.f8fe92p-16, -0x1.a65aap-16,  -0x1.63da76p-16, -0x1.2ddf6ap-16,
        -0x1.01b354p-16, -0x1.ba910ep-17, -0x1.7e19a4p-17, -0x1.4b932cp-17, -0x1.211988p-17,
        -0x1.fa60b6p-18, -0x1.bd54e8p-18,
    },
    {
        // c4
        0x1.f809dp-5,   0x1.7191e6p-6,  0x1.2c7d0ap-7,  0x1.0b7546p-8,  0x1.0191b6p-9,
        0x1.099978p-10, 0x1.229d2ep-11, 0x1.4ec914p-12, 0x1.9357cep-13, 0x1.f952bcp-14,
        0x1.47953ep-14, 0x1.b5bb04p-15, 0x1.2c5d14p-15, 0x1.a61774p-16, 0x1.2ee948p-16,
        0x1.bb13b4p-17, 0x1.499ee4p-17, 0x1.f20b1cp-18, 0x1.7d8dbep-18, 0x1.280dp-18,
        0x1.d0c8c8p-19, 0x1.70bfa6p-19, 0x1.276f1ap-19, 0x1.ddaf0cp-20, 0x1.856ad4p-20,
        0x1.3fed38p-20, 0x1.08bbbap-20, 0x1.b9118ep-21, 0x1.71bbfcp-21, 0x1.37c178p-21,
        0x1.08508ap-21, 0x1.c2800ap-22,
    },
    {
        // c5
        -0x1.83b0e4p-6,  -0x1.023c56p-7,  -0x1.7d9e5ep-9,  -0x1.35233ep-10, -0x1.0f9666p-11,
        -0x1.003fcp-12,  -0x1.016becp-13, -0x1.113f44p-14, -0x1.307414p-15, -0x1.620aap-16,
        -0x1.ab928cp-17, -0x1.0aff7ap-17, -0x1.5791aap-18, -0x1.c6114ep-19, -0x1.335498p-19,
        -0x1.a91a8p-20,  -0x1.2bcc02p-20, -0x1.ae675ep-21, -0x1.39f8fcp-21, -0x1.d0dd88p-22,
        -0x1.5ccedep-22, -0x1.08fcbcp-22, -0x1.973d64p-23, -0x1.3c3f12p-23, -0x1.effdcp-24,
        -0x1.887e5cp-24, -0x1.393ap-24,   -0x1.f7e3c6p-25, -0x1.984d0ap-25, -0x1.4d22a8p-25,
        -0x1.11927ep-25, -0x1.c40f4ap-26,
    },
    {
        // c6
        0x1.728b62p-8,  0x1.ce5d12p-10, 0x1.3fc084p-11, 0x1.e4d24cp-13, 0x1.8ed536p-14,
        0x1.60bb66p-15, 0x1.4c9dbp-16,  0x1.4bf874p-17, 0x1.5c6e46p-18, 0x1.7e6daap-19,
        0x1.b4ca0ep-20, 0x1.0276eap-20, 0x1.3bc82p-21,  0x1.8d01f4p-22, 0x1.0015cap-22,
        0x1.522b98p-23, 0x1.c82092p-24, 0x1.399afcp-24, 0x1.b6e5a8p-25, 0x1.381ed8p-25,
        0x1.c28f86p-26, 0x1.49ad6ap-26, 0x1.e8951p-27,  0x1.6e4c14p-27, 0x1.159dc4p-27,
        0x1.a914f6p-28, 0x1.4884e4p-28, 0x1.00228p-28,  0x1.92b3d6p-29, 0x1.3f073ap-29,
        0x1.fd2a9cp-30, 0x1.991a82p-30,
    },
    {
        // c0 (low part)
        -0x1.3f65bcp-27, 0x1.4737c2p-27,  -0x1.c023ccp-30, -0x1.066fbp-28,  0x1.4a6b02p-28,
        0x1.5d5b2ep-30,  0x1.25414ep-32,  -0x1.774004p-31, -0x1.fb7ff4p-30, -0x1.7aff5cp-29,
        0x1.762ff4p-29,  -0x1.a666bp-29,  0x1.8d873cp-29,  0x1.55f17ap-31,  0x1.d47a1p-30,
        0x1.6d4712p-30,  0x1.99fb0cp-32,  -0x1.ef4538p-30, -0x1.f7e57ap-32, -0x1.93d914p-30,
        0x1.c9c39cp-30,  -0x1.63302cp-32, -0x1.940f06p-32, 0x1.c551bap-31,  -0x1.c84aeap-30,
        -0x1.f60dfp-30,  0x1.72f078p-32,  -0x1.cb7408p-32, -0x1.2c483cp-31, -0x1.467c6p-34,
        0x1.a7db7p-31,   0x1.4cbc06p-31,
    },
};

// -s²/2·log2 e as a float pair: exp(-s²/2) = 2^(s²·NHL).
#define FFN_NHL_HI -0x1.715476p-1f
#define FFN_NHL_LO -0x1.4ae0cp-27f
#define FFN_INV_SQRT_2PI 0x1.988454p-2f  // 1/√(2π)
// g's argument is clamped to 15.75 (the last interval is [15.5, 16)): beyond, Φ(-s) < 2^-180 and
// only its underflow matters. The exponential keeps s up to 40 (e^{-800} < 2^-1150), so that
// x·Φ(-s) underflows even times the largest up (2^128); so is the multiplier clamped to ±40,
// which keeps ±inf from meeting a zero and changes no result.
#define FFN_ERF_SCLAMP 15.75f
#define FFN_ERF_XCLAMP 40.0f

// Φ(-s) = 2^n·E·g(s) for s = |x| (clamped), plain f32 (the derivative's 8-ulp tier). Returns
// E·g, n in *n.
FFN_VINLINE __m512 ffn__phi_neg(__m512 x, bool precise, __m512 *n, __m512 *E_out) {
    const __m512 sx = _mm512_min_ps(ffn__c(FFN_ERF_XCLAMP), _mm512_abs_ps(x));  // NaN stays
    const __m512 s = _mm512_min_ps(ffn__c(FFN_ERF_SCLAMP), sx);
    // Interval j = floor(2s) and t = s - j/2 ∈ [0, 0.5].
    const __m512 s2 = _mm512_add_ps(s, s);
    const __m512 fl = _mm512_roundscale_ps(s2, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 t = _mm512_fmadd_ps(fl, ffn__c(-0.5f), s);
    const __m512i j = _mm512_cvttps_epi32(s2);  // NaN: any index (the result is NaN anyway)
    __m512 g = _mm512_permutex2var_ps(_mm512_load_ps(ffn__erf_g_tab[FFN_ERF_DEG]), j,
                                      _mm512_load_ps(ffn__erf_g_tab[FFN_ERF_DEG] + 16));
    for (int k = FFN_ERF_DEG - 1; k >= 0; k--) {
        const __m512 c = _mm512_permutex2var_ps(_mm512_load_ps(ffn__erf_g_tab[k]), j,
                                                _mm512_load_ps(ffn__erf_g_tab[k] + 16));
        g = _mm512_fmadd_ps(g, t, c);
    }
    // exp(-sx²/2) with sx² = s2h + s2l exactly.
    const __m512 s2h = _mm512_mul_ps(sx, sx);
    const __m512 s2l = _mm512_fmsub_ps(sx, sx, s2h);
    const __m512 tt = _mm512_fmadd_ps(s2h, ffn__c(FFN_NHL_HI), ffn__c(FFN_EXP2_MAGIC));
    *n = _mm512_sub_ps(tt, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fmsub_ps(s2h, ffn__c(FFN_NHL_HI), *n);
    r = _mm512_fmadd_ps(s2h, ffn__c(FFN_NHL_LO), r);
    r = _mm512_fmadd_ps(s2l, ffn__c(FFN_NHL_HI), r);
    const __m512 E = ffn__exp2_frac(tt, r, precise);
    *E_out = E;
    return _mm512_mul_ps(E, g);
}

// The accurate form: x·Φ(-s) = (yh + yl)·2^n with every rounding compensated but the last one:
// g = gh + gl from c0's pair and the last Horner step's error (c0 - gh is exact: the step changes
// c0 by at most 30%), E = th + u (the table's 2^(j/16) and the rest, as a pair), and the products
// E·g and x·(E·g) as exact pairs (fmsub) plus the cross terms. Error: the fit (0.31 ulp), the
// plain part t·P1(t) of g (≤ 0.3 ulp of g), a few 2^-30, then the final rounding: ≤ ~1.2 ulp.
// gelu_erf(x):  x < 0: (yh + yl)·2^n;  x ≥ 0: x - (Yh + Yl) with Y = y·2^n ≤ x/2 (Fast2Sum).
FFN_VINLINE struct ffn__av ffn__gelu_erf_general(__m512 x) {
    const __mmask16 tiny = ffn__tiny_pre(&x);
    const __m512 sx = _mm512_min_ps(ffn__c(FFN_ERF_XCLAMP), _mm512_abs_ps(x));  // NaN stays
    const __m512 s = _mm512_min_ps(ffn__c(FFN_ERF_SCLAMP), sx);
    const __m512 s2 = _mm512_add_ps(s, s);
    const __m512 fl = _mm512_roundscale_ps(s2, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 t = _mm512_fmadd_ps(fl, ffn__c(-0.5f), s);
    const __m512i j = _mm512_cvttps_epi32(s2);
#define FFN__G(k)                                                \
    _mm512_permutex2var_ps(_mm512_load_ps(ffn__erf_g_tab[k]), j, \
                           _mm512_load_ps(ffn__erf_g_tab[k] + 16))
    __m512 p1 = FFN__G(FFN_ERF_DEG);
    for (int k = FFN_ERF_DEG - 1; k >= 1; k--) p1 = _mm512_fmadd_ps(p1, t, FFN__G(k));
    const __m512 c0 = FFN__G(0);
    const __m512 gh = _mm512_fmadd_ps(t, p1, c0);
    const __m512 gl =
        _mm512_add_ps(_mm512_fmadd_ps(t, p1, _mm512_sub_ps(c0, gh)), FFN__G(FFN_ERF_ROW_C0LO));
#undef FFN__G
    // exp(-sx²/2) = 2^n·(th + u), sx² = s2h + s2l exactly.
    const __m512 s2h = _mm512_mul_ps(sx, sx);
    const __m512 s2l = _mm512_fmsub_ps(sx, sx, s2h);
    const __m512 tt = _mm512_fmadd_ps(s2h, ffn__c(FFN_NHL_HI), ffn__c(FFN_EXP2_MAGIC));
    const __m512 n = _mm512_sub_ps(tt, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fmsub_ps(s2h, ffn__c(FFN_NHL_HI), n);
    r = _mm512_fmadd_ps(s2h, ffn__c(FFN_NHL_LO), r);
    r = _mm512_fmadd_ps(s2l, ffn__c(FFN_NHL_HI), r);
    const __m512i ji = _mm512_castps_si512(tt);
    const __m512 th = _mm512_permutexvar_ps(ji, ffn__exp2_thi());
    __m512 pe = _mm512_fmadd_ps(ffn__c(FFN_EXP2_C3), r, ffn__c(FFN_EXP2_C2));
    pe = _mm512_fmadd_ps(pe, r, ffn__c(FFN_EXP2_C1));
    pe = _mm512_mul_ps(pe, r);
    const __m512 u = _mm512_fmadd_ps(th, pe, _mm512_permutexvar_ps(ji, ffn__exp2_tlo()));
    // P = E·g = Ph + Pl;  y = x·P = yh + yl.
    const __m512 ph = _mm512_mul_ps(th, gh);
    __m512 pl = _mm512_fmadd_ps(th, gl, _mm512_fmsub_ps(th, gh, ph));
    pl = _mm512_fmadd_ps(u, gh, pl);
    const __m512 xm =
        _mm512_min_ps(ffn__c(FFN_ERF_XCLAMP), _mm512_max_ps(ffn__c(-FFN_ERF_XCLAMP), x));
    const __m512 yh = _mm512_mul_ps(xm, ph);
    const __m512 yl = _mm512_fmadd_ps(xm, pl, _mm512_fmsub_ps(xm, ph, yh));
    const __mmask16 neg = ffn__signmask(x);
    const __m512 Yh = _mm512_scalef_ps(yh, n), Yl = _mm512_scalef_ps(yl, n);
    const __m512 hp = _mm512_sub_ps(x, Yh);
    const __m512 lp = _mm512_sub_ps(_mm512_sub_ps(_mm512_sub_ps(x, hp), Yh), Yl);
    struct ffn__av v;
    v.hi = _mm512_mask_mov_ps(hp, neg, yh);
    v.lo = _mm512_mask_mov_ps(lp, neg, yl);
    // At x = ±0 and ±inf the sum is exact or infinite: lo is hi itself (see ffn__xsig).
    v.lo = _mm512_mask_mov_ps(v.lo, _mm512_fpclass_ps_mask(x, 0x1e), v.hi);
    v.k = _mm512_maskz_mov_ps(neg, n);
    ffn__tiny_post(&v, tiny);
    return v;
}

// gelu_erf'(x) = Φ(x) + x·φ(x), φ(x) = e^{-x²/2}/√(2π) = 2^n·E/√(2π):
//   x < 0:  2^n·E·(g + x/√(2π));      x ≥ 0:  1 + 2^n·E·(x/√(2π) - g).
FFN_VINLINE struct ffn__avd ffn__gelu_erf_general_d(__m512 x) {
    const __mmask16 tiny = ffn__tiny_pre(&x);  // act' is flat there: only act needs the scale
    __m512 n, E;
    const __m512 eg = ffn__phi_neg(x, false, &n, &E);
    const __m512 xm =
        _mm512_min_ps(ffn__c(FFN_ERF_XCLAMP), _mm512_max_ps(ffn__c(-FFN_ERF_XCLAMP), x));
    const __m512 ex = _mm512_mul_ps(E, _mm512_mul_ps(xm, ffn__c(FFN_INV_SQRT_2PI)));  // 2^-n·x·φ
    const __mmask16 neg = ffn__signmask(x);
    const __m512 p = _mm512_mul_ps(xm, eg);
    struct ffn__avd r;
    r.a.hi = _mm512_mask_mov_ps(_mm512_sub_ps(x, _mm512_scalef_ps(p, n)), neg, p);
    r.a.lo = _mm512_setzero_ps();
    r.a.k = _mm512_maskz_mov_ps(neg, n);
    const __m512 dpos = _mm512_add_ps(ffn__c(1.0f), _mm512_scalef_ps(_mm512_sub_ps(ex, eg), n));
    r.da.hi = _mm512_mask_mov_ps(dpos, neg, _mm512_add_ps(eg, ex));
    r.da.lo = _mm512_setzero_ps();
    r.da.k = r.a.k;
    ffn__tiny_post(&r.a, tiny);
    return r;
}

// Forward. Fast lanes: gelu(x) = x·G, G = Φ(-s) (x < 0) or 1 - Φ(-s) (x ≥ 0; no cancellation,
// Φ(-s) ≤ 1/2), Φ(-s) from F_j: within ~2 ulp, a combine one rounding more. Rare lanes (|x| ≥ 5,
// NaN; in a combine also |x| < 2^-100) and the accurate tier: the compensated general form.
// Backward. Fast lanes: gelu'(x) = Φ(x) + x·φ(x) = H(s) (x < 0) or 1 - H(s) (x ≥ 0), from H_j;
// act for dup as in the forward. Rare lanes (|x| ≥ 5, NaN; for dup also subnormal x): the general
// form with exp.
// pre: the fast lanes' interval (t in s.v, j in s.w) and Φ(-s) (forward) or H(s) (derivative)
// in s.u; nothing for the accurate tier's forward.
FFN_VINLINE struct ffn__pre ffn__gelu_erf_pre(__m512 x, enum ffn__mode mode, bool acc) {
    struct ffn__pre s = {x, x, x};
    const bool fwd = mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL;
    if (fwd && acc) return s;
    const struct ffn__erf_iv iv = ffn__erf_interval(x);
    s.u = fwd ? ffn__erf_F(iv) : ffn__erf_H(iv);
    s.v = iv.t;
    s.w = _mm512_castsi512_ps(iv.j);
    return s;
}
FFN_VINLINE struct ffn__vo ffn__gelu_erf_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                             enum ffn__mode mode, bool acc) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    struct ffn__vo o;
    const __m512 one = ffn__c(1.0f);
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLT_UQ);
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        if (acc) {
            o.y0 = o.y1 = ffn__av_fwd(ffn__gelu_erf_general(x), x, a, mode, FL, ffn__lims);
            return o;
        }
        const __m512 f = s.u;
        const __m512 y = _mm512_mul_ps(x, _mm512_mask_sub_ps(f, pos, one, f));
        o.y0 = mode == FFN_MODE_ACT ? y : _mm512_mul_ps(y, a);
        const __mmask16 rare =
            ffn__rare_sym(x, FFN_ERF_FAST_LIM, false) |
            (mode == FFN_MODE_ACT_MUL
                 ? _mm512_cmp_ps_mask(_mm512_abs_ps(x), ffn__c(FFN_ERF_FAST_TINY), _CMP_LT_OQ)
                 : 0);
        if (rare) {
            const __m512 g = ffn__av_fwd(ffn__gelu_erf_general(x), x, a, mode, FL, ffn__lims);
            o.y0 = _mm512_mask_mov_ps(o.y0, rare, g);
        }
        o.y1 = o.y0;
        return o;
    }
    const bool both = mode == FFN_MODE_BOTH;
    const __m512 h = s.u;
    const __m512 d = _mm512_mask_sub_ps(h, pos, one, h);
    o.y0 = _mm512_mul_ps(d, both ? _mm512_mul_ps(a, b) : a);
    if (both) {
        const struct ffn__erf_iv iv = {_mm512_castps_si512(s.w), s.v};
        const __m512 f = ffn__erf_F(iv);
        o.y1 = _mm512_mul_ps(_mm512_mul_ps(x, _mm512_mask_sub_ps(f, pos, one, f)), b);
    }
    __mmask16 rare = ffn__rare_sym(x, FFN_ERF_FAST_LIM, false);
    if (both) rare |= _mm512_fpclass_ps_mask(x, 0x20);  // subnormal: x·G would lose bits
    if (rare) {
        const struct ffn__vo g =
            ffn__avd_bwd(ffn__gelu_erf_general_d(x), x, a, b, mode, DFL, DFL, ffn__lims);
        o.y0 = _mm512_mask_mov_ps(o.y0, rare, g.y0);
        if (both) o.y1 = _mm512_mask_mov_ps(o.y1, rare, g.y1);
    }
    if (!both) o.y1 = o.y0;
    // Fast DACT_MUL lanes have x finite: a NaN result can only come from dy, and is its quieted
    // copy. The BOTH products meet two multiplicands, which may both be NaN.
    return both ? ffn__nan_fix_mode(o, x, a, b, mode) : o;
}
FFN_WHOLE(ffn__gelu_erf)
static const bool ffn__gelu_erf_tiers = true;
FFN_KPROTO_ACT_FWD(ffn_gelu_erf_fwd__avx512) {
    ffn__act_fwd(cfg, n, y, x, FFN_PIPED(ffn__gelu_erf));
}
FFN_KPROTO_ACT_BWD(ffn_gelu_erf_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, FFN_PIPED(ffn__gelu_erf));
}
FFN_KPROTO_GLU_FWD(ffn_geglu_erf_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, FFN_PIPED(ffn__gelu_erf));
}
FFN_KPROTO_GLU_BWD(ffn_geglu_erf_bwd__avx512) {
    // One vector at a time: pipelined, the state of two streaming sub-ranges (the interval and
    // H, beside the 14 table registers) spills, 24% slower at 32M.
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_PLAIN(ffn__gelu_erf));
}
