// gelu_erf_avx512.c — AVX-512 erf-GeLU and GeGLU (erf): forward, backward, every (in, out) dtype
// pair. Φ(-|x|) is computed as exp(-x²/2)·g(|x|) with g, the scaled Mills ratio, fitted per
// interval: relative accuracy holds down to the underflow of the result (x ≈ -14.5).
#include "cpu/x86_avx512/vmath_avx512.h"

// g(s) = e^{s²/2}·Φ(-s) = e^{s²/2}·erfc(s/√2)/2 on [j/2, (j+1)/2], j = 0..31, as a degree-6
// polynomial in t = s - j/2 (Chebyshev interpolation in long double of glibc's erfcl, coefficients
// rounded to f32: relative error ≤ 5e-9 before that rounding). Tables by coefficient, then j.
#define FFN_ERF_DEG 6
static const float ffn__erf_g_tab[FFN_ERF_DEG + 1][32] __attribute__((aligned(64))) = {
    {  // c0
        0x1p-1f, 0x1.66027ap-2f, 0x1.0bdb2ep-2f, 0x1.a57056p-3f,
        0x1.5845dcp-3f, 0x1.217252p-3f, 0x1.f1b89cp-4f, 0x1.b396fap-4f,
        0x1.82b4bcp-4f, 0x1.5b5acep-4f, 0x1.3b0fbcp-4f, 0x1.201faap-4f,
        0x1.095608p-4f, 0x1.eba5fep-5f, 0x1.c9e12p-5f, 0x1.ac6292p-5f,
        0x1.926972p-5f, 0x1.7b5f34p-5f, 0x1.66ccb8p-5f, 0x1.545298p-5f,
        0x1.43a38ap-5f, 0x1.34805ap-5f, 0x1.26b4dp-5f, 0x1.1a1574p-5f,
        0x1.0e7dcep-5f, 0x1.03cf06p-5f, 0x1.f3ddc2p-6f, 0x1.e18ddcp-6f,
        0x1.d087aep-6f, 0x1.c0a9c4p-6f, 0x1.b1d706p-6f, 0x1.a3f60ap-6f,
    },
    {  // c1
        -0x1.988438p-2f, -0x1.cb061cp-3f, -0x1.195246p-3f, -0x1.71c048p-4f,
        -0x1.00f9dap-4f, -0x1.75ab62p-5f, -0x1.19cefp-5f, -0x1.b6038ap-6f,
        -0x1.5cf97ap-6f, -0x1.1be2c6p-6f, -0x1.d614ecp-7f, -0x1.8b1956p-7f,
        -0x1.5068c2p-7f, -0x1.21ae92p-7f, -0x1.f7d59ep-8f, -0x1.b9fa6ap-8f,
        -0x1.86b844p-8f, -0x1.5bcb3ep-8f, -0x1.378124p-8f, -0x1.188feep-8f,
        -0x1.fbf2dp-9f, -0x1.cdeeacp-9f, -0x1.a5dac2p-9f, -0x1.82bdeep-9f,
        -0x1.63cfc8p-9f, -0x1.486db4p-9f, -0x1.3012a8p-9f, -0x1.1a5102p-9f,
        -0x1.06cdbep-9f, -0x1.ea79b4p-10f, -0x1.cabcdap-10f, -0x1.adf8e8p-10f,
    },
    {  // c2
        0x1.fff938p-3f, 0x1.e67e0cp-4f, 0x1.fcc5bep-5f, 0x1.203f66p-5f,
        0x1.5d2f6cp-6f, 0x1.bf391ep-7f, 0x1.2c0892p-7f, 0x1.a29ed2p-8f,
        0x1.2dd9ecp-8f, 0x1.bfbad4p-9f, 0x1.542a8cp-9f, 0x1.07e3e2p-9f,
        0x1.a0eedcp-10f, 0x1.4ea502p-10f, 0x1.10637p-10f, 0x1.c0f9cep-11f,
        0x1.7625d4p-11f, 0x1.3ae802p-11f, 0x1.0b6e08p-11f, 0x1.c9eb5ep-12f,
        0x1.8af23ep-12f, 0x1.56ee3ep-12f, 0x1.2b9aa2p-12f, 0x1.073c62p-12f,
        0x1.d0fb62p-13f, 0x1.9ca85p-13f, 0x1.6fdc4p-13f, 0x1.494a5p-13f,
        0x1.27e806p-13f, 0x1.0ade66p-13f, 0x1.e2fd9p-14f, 0x1.b6748ep-14f,
    },
    {  // c3
        -0x1.10055p-3f, -0x1.c17f96p-5f, -0x1.9ac646p-6f, -0x1.995828p-7f,
        -0x1.b740fep-8f, -0x1.f60f02p-9f, -0x1.2ecca8p-9f, -0x1.7e786ep-10f,
        -0x1.f69b8ap-11f, -0x1.55b734p-11f, -0x1.dea20ep-12f, -0x1.57fcb2p-12f,
        -0x1.f9c96p-13f, -0x1.7b5dcep-13f, -0x1.21a4f4p-13f, -0x1.c1585ap-14f,
        -0x1.61882ap-14f, -0x1.19b996p-14f, -0x1.c638c2p-15f, -0x1.7206f2p-15f,
        -0x1.305514p-15f, -0x1.f8fea2p-16f, -0x1.a65aaap-16f, -0x1.63da7ep-16f,
        -0x1.2ddf7p-16f, -0x1.01b35ap-16f, -0x1.ba9114p-17f, -0x1.7e19aap-17f,
        -0x1.4b933p-17f, -0x1.21198ap-17f, -0x1.fa60bap-18f, -0x1.bd54ecp-18f,
    },
    {  // c4
        0x1.f85ac2p-5f, 0x1.71bfe4p-6f, 0x1.2c9a1p-7f, 0x1.0b8964p-8f,
        0x1.01a0e4p-9f, 0x1.09a5dp-10f, 0x1.22a7ecp-11f, 0x1.4ed302p-12f,
        0x1.93617cp-13f, 0x1.f95ca4p-14f, 0x1.479a88p-14f, 0x1.b5c0e2p-15f,
        0x1.2c6074p-15f, 0x1.a61b76p-16f, 0x1.2eebb8p-16f, 0x1.bb16c2p-17f,
        0x1.49a0dap-17f, 0x1.f20dacp-18f, 0x1.7d8f74p-18f, 0x1.280e2ap-18f,
        0x1.d0ca62p-19f, 0x1.70c0c6p-19f, 0x1.276fe8p-19f, 0x1.ddb034p-20f,
        0x1.856bacp-20f, 0x1.3fedd6p-20f, 0x1.08bc32p-20f, 0x1.b9124p-21f,
        0x1.71bc84p-21f, 0x1.37c1ep-21f, 0x1.0850dcp-21f, 0x1.c28088p-22f,
    },
    {  // c5
        -0x1.8431ep-6f, -0x1.0285a8p-7f, -0x1.7dfaeap-9f, -0x1.35636cp-10f,
        -0x1.0fc6d4p-11f, -0x1.006728p-12f, -0x1.018e3ap-13f, -0x1.115ef8p-14f,
        -0x1.3093p-15f, -0x1.622a44p-16f, -0x1.abb458p-17f, -0x1.0b123cp-17f,
        -0x1.57a738p-18f, -0x1.c62adep-19f, -0x1.33643p-19f, -0x1.a92e06p-20f,
        -0x1.2bd884p-20f, -0x1.ae77bep-21f, -0x1.3a03eap-21f, -0x1.d0ec62p-22f,
        -0x1.5cd922p-22f, -0x1.0903fp-22f, -0x1.9747a4p-23f, -0x1.3c4676p-23f,
        -0x1.f0088ap-24f, -0x1.888652p-24f, -0x1.393ff2p-24f, -0x1.f7ecbcp-25f,
        -0x1.9853dap-25f, -0x1.4d27e2p-25f, -0x1.119686p-25f, -0x1.c41594p-26f,
    },
    {  // c6
        0x1.728b62p-8f, 0x1.ce5d12p-10f, 0x1.3fc084p-11f, 0x1.e4d24cp-13f,
        0x1.8ed536p-14f, 0x1.60bb66p-15f, 0x1.4c9dbp-16f, 0x1.4bf874p-17f,
        0x1.5c6e46p-18f, 0x1.7e6daap-19f, 0x1.b4ca0ep-20f, 0x1.0276eap-20f,
        0x1.3bc82p-21f, 0x1.8d01f4p-22f, 0x1.0015cap-22f, 0x1.522b98p-23f,
        0x1.c82092p-24f, 0x1.399afcp-24f, 0x1.b6e5a8p-25f, 0x1.381ed8p-25f,
        0x1.c28f86p-26f, 0x1.49ad6ap-26f, 0x1.e8951p-27f, 0x1.6e4c14p-27f,
        0x1.159dc4p-27f, 0x1.a914f6p-28f, 0x1.4884e4p-28f, 0x1.00228p-28f,
        0x1.92b3d6p-29f, 0x1.3f073ap-29f, 0x1.fd2a9cp-30f, 0x1.991a82p-30f,
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

// Φ(-s) = 2^n·E·g(s) for s = |x| (clamped). Returns E·g, n in *n.
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

// gelu_erf(x) = x·Φ(x) = 0.5·x·erfc(-x/√2):  x < 0: x·Φ(-|x|) (scaled by 2^n last);
// x ≥ 0: x - x·Φ(-|x|) (no cancellation: Φ(-|x|) ≤ 1/2).
static inline __attribute__((always_inline)) struct ffn__avd ffn__gelu_erf_v(__m512 x, bool acc) {
    const __mmask16 tiny = ffn__tiny_pre(&x);
    __m512 n, E;
    const __m512 eg = ffn__phi_neg(x, true, &n, &E);
    const __m512 xm =
        _mm512_min_ps(ffn__c(FFN_ERF_XCLAMP), _mm512_max_ps(ffn__c(-FFN_ERF_XCLAMP), x));
    const __m512 p = _mm512_mul_ps(xm, eg);  // x·Φ(-|x|)·2^-n
    const __mmask16 neg = ffn__signmask(x);
    struct ffn__avd r;
    r.a.hi = _mm512_mask_mov_ps(_mm512_sub_ps(x, _mm512_scalef_ps(p, n)), neg, p);
    r.a.lo = _mm512_setzero_ps();
    r.a.k = _mm512_maskz_mov_ps(neg, n);
    ffn__tiny_post(&r.a, tiny);
    r.da = r.a;  // unused (forward only)
    return r;
}

// gelu_erf'(x) = Φ(x) + x·φ(x), φ(x) = e^{-x²/2}/√(2π) = 2^n·E/√(2π):
//   x < 0:  2^n·E·(g + x/√(2π));      x ≥ 0:  1 + 2^n·E·(x/√(2π) - g).
static inline __attribute__((always_inline)) struct ffn__avd ffn__gelu_erf_dv(__m512 x, bool acc) {
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

enum { FFN_GELU_ERF_FL = FFN_AV_K };

FFN_KPROTO_ACT_FWD(ffn_gelu_erf_fwd__avx512) {
    ffn__act_fwd(cfg, n, y, x, ffn__gelu_erf_v, FFN_GELU_ERF_FL);
}
FFN_KPROTO_ACT_BWD(ffn_gelu_erf_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, ffn__gelu_erf_dv, FFN_GELU_ERF_FL);
}
FFN_KPROTO_GLU_FWD(ffn_geglu_erf_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, ffn__gelu_erf_v, FFN_GELU_ERF_FL);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_erf_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__gelu_erf_dv, FFN_GELU_ERF_FL,
                 FFN_GELU_ERF_FL);
}
