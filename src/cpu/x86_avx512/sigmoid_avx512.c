// sigmoid_avx512.c — AVX-512 σ and the original GLU (σ(gate)·up): forward, backward, every
// (in, out) dtype pair, on the σ machinery of vmath_avx512.h.
#include "cpu/x86_avx512/vmath_avx512.h"

// Limits at -inf (act) and +inf (act'), see ffn__lim.
static const struct ffn__lim ffn__lims = {0.0f, 0.0f};

#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f
// Fast lanes: |x| < 80, where e = exp(-x) ∈ (2^-116, 2^116) is a normal float.
#define FFN_SIG_FAST_LIM 80.0f

// σ(x) = 1/(1 + e), e = exp(-x) with its table low part. Lanes:
//   σ alone, (-16, 80): the compensated quotient (ffn__quot_comp, lt24), ≤ 1.6 ulp (a plain
//     division reaches 2.03); (-80, -16]: σ = e' - e'^2, e' = exp(x) (ffn__sig_tail).
//   σ·a (GLU), |x| < 80: the compensated quotient and one rounding of hi·a - lo·a.
//   the rest: the general form 2^n·E/(1 + e') (x < 0) or 1/(1 + e') (x ≥ 0), e' = exp(-|x|) =
//     E·2^n. σ(+inf) = 1, σ(-inf) = 0.
// pre: e = exp(-x) with its table low part (forward modes); for σ' E and n of exp(-|x|) = E·2^n.
FFN_VINLINE struct ffn__pre ffn__sigmoid_pre(__m512 x, enum ffn__mode mode, bool acc) {
    (void)acc;
    struct ffn__pre s = {x, x, x};
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        s.u = ffn__exp_lin(x, FFN_LOG2E_HI, FFN_LOG2E_LO, true);
    } else {
        const __m512 ax = _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));
        s.u = ffn__exp_neg(ax, FFN_LOG2E_HI, FFN_LOG2E_LO, false, &s.v);
    }
    return s;
}
FFN_VINLINE struct ffn__vo ffn__sigmoid_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                            enum ffn__mode mode, bool acc) {
    (void)acc;
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    struct ffn__vo o;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        const __m512 one = ffn__c(1.0f);
        const __m512 e = s.u;
        const bool act = mode == FFN_MODE_ACT;
        o.y0 = ffn__quot_fin(ffn__quot_comp(one, e, act), a, mode);
        const __mmask16 rare = ffn__rare_sym(x, FFN_SIG_FAST_LIM, false);
        const __mmask16 tail =
            act ? _mm512_cmp_ps_mask(x, ffn__c(-FFN_SIG_TAIL), _CMP_LE_OQ) & (__mmask16)~rare : 0;
        if (rare | tail) {
            if (tail)
                o.y0 = _mm512_mask_mov_ps(o.y0, tail,
                                          ffn__sig_tail(x, FFN_LOG2E_HI, FFN_LOG2E_LO, false));
            if (rare) {
                const struct ffn__av v = ffn__sigfam(x, FFN_LOG2E_HI, FFN_LOG2E_LO, false);
                o.y0 = _mm512_mask_mov_ps(o.y0, rare, ffn__av_fwd(v, x, a, mode, FL, ffn__lims));
            }
        }
        o.y1 = o.y0;
        return o;
    }
    // σ'(x) = σ(x)(1 - σ(x)) = e/(1 + e)² = 2^n·E·inv², inv = 1/(1 + e), e = exp(-|x|), for
    // either sign; → 0 at ±inf.
    const __m512 E = s.u, n = s.v;
    const struct ffn__sigd sd = ffn__sig_pieces(E, n, ffn__signmask(x));
    struct ffn__avd r;
    r.a.hi = sd.S;
    r.a.lo = _mm512_setzero_ps();
    r.a.k = sd.k;
    r.da.hi = _mm512_mul_ps(_mm512_mul_ps(E, sd.inv), sd.inv);
    r.da.lo = _mm512_setzero_ps();
    r.da.k = n;
    return ffn__avd_bwd(r, x, a, b, mode, DFL, DFL, ffn__lims);
}
FFN_WHOLE(ffn__sigmoid)
static const bool ffn__sigmoid_tiers = false;

FFN_KPROTO_ACT_FWD(ffn_sigmoid_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, FFN_PIPED(ffn__sigmoid)); }
FFN_KPROTO_ACT_BWD(ffn_sigmoid_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, FFN_PIPED(ffn__sigmoid));
}
FFN_KPROTO_GLU_FWD(ffn_glu_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, FFN_PIPED(ffn__sigmoid));
}
FFN_KPROTO_GLU_BWD(ffn_glu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_PIPED(ffn__sigmoid));
}
