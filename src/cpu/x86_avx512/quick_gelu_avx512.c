// quick_gelu_avx512.c — AVX-512 quick-GeLU (CLIP's x·σ(1.702x)) and its gated combine: forward,
// backward, every (in, out) dtype pair. Same σ machinery as SiLU with the slope folded into the
// exponent's constant.
#include "cpu/x86_avx512/vmath_avx512.h"

// Limits at -inf (act) and +inf (act'), see ffn__lim.
static const struct ffn__lim ffn__lims = {-0.0f, 1.0f};

#define FFN_QUICK_GELU_A 1.702f  // quick-GeLU slope
// 1.702·log2(e) as a float pair: exp(-1.702x) = 2^(-x·1.702·log2 e).
#define FFN_QG_L2E_HI 0x1.3a4cbep+1f
#define FFN_QG_L2E_LO -0x1.c08ecap-26f
// Fast lanes: |x| < 47, where e = exp(-1.702x) ∈ (2^-116, 2^116) is a normal float.
#define FFN_QG_FAST_LIM 47.0f

// quick_gelu(x) = x·σ(1.702x) = x/(1 + e), e = exp(-1.702x): the compensated quotient on fast
// lanes, the general scaled form elsewhere (see ffn__silu_v), both within ~1.6 ulp.
static inline __attribute__((always_inline)) struct ffn__vo ffn__qgelu_v(__m512 x, __m512 a,
                                                                         __m512 b,
                                                                         enum ffn__mode mode,
                                                                         bool acc) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    struct ffn__vo o;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        const __m512 e = ffn__exp_lin(x, FFN_QG_L2E_HI, FFN_QG_L2E_LO, true);
        o.y0 = ffn__quot_fin(ffn__quot_comp(x, e), a, mode);
        const __mmask16 rare = ffn__rare_sym(x, FFN_QG_FAST_LIM, mode == FFN_MODE_ACT_MUL);
        if (rare) {
            const struct ffn__av v = ffn__sigfam(x, FFN_QG_L2E_HI, FFN_QG_L2E_LO, true);
            o.y0 = _mm512_mask_mov_ps(o.y0, rare, ffn__av_fwd(v, x, a, mode, FL, ffn__lims));
        }
        o.y1 = o.y0;
        return o;
    }
    // quick_gelu'(x) = σ(ax)·(1 + a·x·(1 - σ(ax))), a = 1.702.
    const struct ffn__avd r = ffn__sigfam_d(x, FFN_QG_L2E_HI, FFN_QG_L2E_LO, FFN_QUICK_GELU_A);
    return ffn__avd_bwd(r, x, a, b, mode, DFL, DFL, ffn__lims);
}

FFN_KPROTO_ACT_FWD(ffn_quick_gelu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, ffn__qgelu_v); }
FFN_KPROTO_ACT_BWD(ffn_quick_gelu_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, ffn__qgelu_v); }
FFN_KPROTO_GLU_FWD(ffn_quick_geglu_fwd__avx512) { ffn__glu_fwd(cfg, n, h, gate, up, ffn__qgelu_v); }
FFN_KPROTO_GLU_BWD(ffn_quick_geglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__qgelu_v);
}
