// sigmoid_avx512.c — AVX-512 σ and the original GLU (σ(gate)·up): forward, backward, every
// (in, out) dtype pair, on the σ machinery of vmath_avx512.h.
#include "cpu/x86_avx512/vmath_avx512.h"

#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f

// σ(x) = 1/(1 + e) (x ≥ 0),  2^n·E/(1 + e) (x < 0), e = exp(-|x|) = E·2^n: within ~1 ulp;
// σ(+inf) = 1, σ(-inf) = 0.
static inline __attribute__((always_inline)) struct ffn__avd ffn__sigmoid_v(__m512 x, bool acc) {
    struct ffn__avd r;
    r.a = ffn__sigfam(x, FFN_LOG2E_HI, FFN_LOG2E_LO, false);
    r.da = r.a;  // unused (forward only)
    return r;
}

// σ'(x) = σ(x)(1 - σ(x)) = e/(1 + e)² = 2^n·E·inv², inv = 1/(1 + e), for either sign; → 0 at ±inf.
static inline __attribute__((always_inline)) struct ffn__avd ffn__sigmoid_dv(__m512 x, bool acc) {
    const __m512 a = _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));
    __m512 n;
    const __m512 E = ffn__exp_neg(a, FFN_LOG2E_HI, FFN_LOG2E_LO, false, &n);
    const struct ffn__sigd s = ffn__sig_pieces(E, n, ffn__signmask(x));
    struct ffn__avd r;
    r.a.hi = s.S;
    r.a.lo = _mm512_setzero_ps();
    r.a.k = s.k;
    r.da.hi = _mm512_mul_ps(_mm512_mul_ps(E, s.inv), s.inv);
    r.da.lo = _mm512_setzero_ps();
    r.da.k = n;
    return r;
}

enum { FFN_SIG_FL = FFN_AV_LO | FFN_AV_K, FFN_SIG_DFL = FFN_AV_K };

FFN_KPROTO_ACT_FWD(ffn_sigmoid_fwd__avx512) {
    ffn__act_fwd(cfg, n, y, x, ffn__sigmoid_v, FFN_SIG_FL);
}
FFN_KPROTO_ACT_BWD(ffn_sigmoid_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, ffn__sigmoid_dv, FFN_SIG_DFL);
}
FFN_KPROTO_GLU_FWD(ffn_glu_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, ffn__sigmoid_v, FFN_SIG_FL);
}
FFN_KPROTO_GLU_BWD(ffn_glu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__sigmoid_dv, FFN_SIG_DFL, FFN_SIG_DFL);
}
