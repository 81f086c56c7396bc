// silu_avx512.c — AVX-512 SiLU and SwiGLU: forward, backward and the gated combine, for every
// (in, out) dtype pair. The σ machinery (exp by table, compensated quotient) is in vmath_avx512.h.
#include "cpu/x86_avx512/vmath_avx512.h"

// log2(e) as a float pair: exp(-|x|) = 2^(-|x|·log2 e).
#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f

// silu(x) = x·σ(x) = x/(1 + e^-x) (x ≥ 0),  x·e^x/(1 + e^x) (x < 0), e = exp(-|x|) ≤ 1:
// no overflow, and for x < 0 the power of two of e^x is applied last (subnormal results stay
// correct down to x ≈ -103). Within ~1 ulp (compensated quotient).
static inline __attribute__((always_inline)) struct ffn__avd ffn__silu_v(__m512 x, bool acc) {
    struct ffn__avd r;
    r.a = ffn__sigfam(x, FFN_LOG2E_HI, FFN_LOG2E_LO, true);
    r.da = r.a;  // unused (forward only)
    return r;
}

// silu'(x) = σ(x)·(1 + x·(1 - σ(x))), with σ and 1-σ from e = exp(-|x|) (never cosh).
static inline __attribute__((always_inline)) struct ffn__avd ffn__silu_dv(__m512 x, bool acc) {
    return ffn__sigfam_d(x, FFN_LOG2E_HI, FFN_LOG2E_LO, 1.0f);
}

enum { FFN_SILU_FL = FFN_AV_LO | FFN_AV_K, FFN_SILU_DFL = FFN_AV_K };

// y[i] = silu(x[i])
FFN_KPROTO_ACT_FWD(ffn_silu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, ffn__silu_v, FFN_SILU_FL); }

// dx[i] = dy[i]·silu'(x[i])
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, ffn__silu_dv, FFN_SILU_DFL);
}

// h[i] = silu(gate[i])·up[i]
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, ffn__silu_v, FFN_SILU_FL);
}

// dgate[i] = dh[i]·up[i]·silu'(gate[i]),  dup[i] = dh[i]·silu(gate[i])
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__silu_dv, FFN_SILU_DFL, FFN_SILU_DFL);
}
