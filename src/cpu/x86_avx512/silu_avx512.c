// silu_avx512.c — AVX-512 SiLU and SwiGLU: forward, backward and the gated combine, for every
// (in, out) dtype pair. The σ machinery (exp by table, compensated quotients) is in
// vmath_avx512.h.
#include "cpu/x86_avx512/vmath_avx512.h"

// Limits at -inf (act) and +inf (act'), see ffn__lim.
static const struct ffn__lim ffn__lims = {-0.0f, 1.0f};

// log2(e) as a float pair: exp(-x) = 2^(-x·log2 e).
#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f
// Fast lanes: |x| < 80, where e = exp(-x) ∈ (2^-116, 2^116) is a normal float.
#define FFN_SILU_FAST_LIM 80.0f

// silu(x) = x·σ(x) = x/(1 + e), e = exp(-x).
// Fast lanes (|x| < 80): the compensated quotient x/(1 + e) of ffn__quot_comp, e from the table
// exp with its low part (0.54 ulp): within 0.5 ulp + 1.1·2^-24 relative, ≤ 1.6 ulp.
// Other lanes: the general form x·σ(x) = 2^n·x·E/(1 + e') with e' = exp(-|x|) = E·2^n ≤ 1 (no
// overflow; the power of two applied last, subnormal results correct down to x ≈ -103),
// within ~1 ulp.
static inline __attribute__((always_inline)) struct ffn__vo ffn__silu_v(__m512 x, __m512 a,
                                                                        __m512 b,
                                                                        enum ffn__mode mode,
                                                                        bool acc) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    struct ffn__vo o;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        const __m512 e = ffn__exp_lin(x, FFN_LOG2E_HI, FFN_LOG2E_LO, true);
        o.y0 = ffn__quot_fin(ffn__quot_comp(x, e), a, mode);
        const __mmask16 rare = ffn__rare_sym(x, FFN_SILU_FAST_LIM, mode == FFN_MODE_ACT_MUL);
        if (rare) {
            const struct ffn__av v = ffn__sigfam(x, FFN_LOG2E_HI, FFN_LOG2E_LO, true);
            o.y0 = _mm512_mask_mov_ps(o.y0, rare, ffn__av_fwd(v, x, a, mode, FL, ffn__lims));
        }
        o.y1 = o.y0;
        return o;
    }
    // silu'(x) = σ(x)·(1 + x·(1 - σ(x))), with σ and 1-σ from e = exp(-|x|) (never cosh).
    const struct ffn__avd r = ffn__sigfam_d(x, FFN_LOG2E_HI, FFN_LOG2E_LO, 1.0f);
    return ffn__avd_bwd(r, x, a, b, mode, DFL, DFL, ffn__lims);
}

// y[i] = silu(x[i])
FFN_KPROTO_ACT_FWD(ffn_silu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, ffn__silu_v); }

// dx[i] = dy[i]·silu'(x[i])
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, ffn__silu_v); }

// h[i] = silu(gate[i])·up[i]
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__avx512) { ffn__glu_fwd(cfg, n, h, gate, up, ffn__silu_v); }

// dgate[i] = dh[i]·up[i]·silu'(gate[i]),  dup[i] = dh[i]·silu(gate[i])
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__silu_v);
}
