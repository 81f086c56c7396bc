// silu_avx512.c — AVX-512 SiLU and SwiGLU: forward, backward and the gated combine, for every
// (in, out) dtype pair. The σ machinery (exp by table, compensated quotients) is in
// vmath_avx512.h.
#include "cpu/x86_avx512/vmath_avx512.h"

// log2(e) as a float pair: exp(-x) = 2^(-x·log2 e).
#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f
// Fast lanes: |x| < 80, where e = exp(-x) ∈ (2^-116, 2^116) is a normal float.
#define FFN_SILU_FAST_LIM 80.0f

// silu(x) = x·σ(x) = x/(1 + e), e = exp(-x);  silu'(x) = σ(x)·(1 + x·(1 - σ(x))).
// The x·σ(k·x) kernel of vmath_avx512.h with k = 1 (≤ 1.6 ulp forward).
FFN_VINLINE struct ffn__pre ffn__silu_pre(__m512 x, enum ffn__mode mode, bool acc) {
    (void)acc;
    return ffn__xsig_pre(x, mode, FFN_LOG2E_HI, FFN_LOG2E_LO, FFN_SILU_FAST_LIM);
}
FFN_VINLINE struct ffn__vo ffn__silu_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                         enum ffn__mode mode, bool acc) {
    (void)acc;
    return ffn__xsig_fin(x, s, a, b, mode, FFN_LOG2E_HI, FFN_LOG2E_LO, FFN_SILU_FAST_LIM, 1.0f);
}
FFN_WHOLE(ffn__silu)
static const bool ffn__silu_tiers = false;

// y[i] = silu(x[i])
FFN_KPROTO_ACT_FWD(ffn_silu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, FFN_PIPED(ffn__silu)); }

// dx[i] = dy[i]·silu'(x[i])
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, FFN_PIPED(ffn__silu)); }

// h[i] = silu(gate[i])·up[i]
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, FFN_PIPED(ffn__silu));
}

// dgate[i] = dh[i]·up[i]·silu'(gate[i]),  dup[i] = dh[i]·silu(gate[i])
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_PIPED(ffn__silu));
}
