// quick_gelu_avx512.c — AVX-512 quick-GeLU (CLIP's x·σ(1.702x)) and its gated combine: forward,
// backward, every (in, out) dtype pair. Same σ machinery as SiLU with the slope folded into the
// exponent's constant.
#include "cpu/x86_avx512/vmath_avx512.h"

#define FFN_QUICK_GELU_A 1.702f  // quick-GeLU slope
// 1.702·log2(e) as a float pair: exp(-1.702x) = 2^(-x·1.702·log2 e).
#define FFN_QG_L2E_HI 0x1.3a4cbep+1f
#define FFN_QG_L2E_LO -0x1.c08ecap-26f
// Fast lanes: |x| < 47, where e = exp(-1.702x) ∈ (2^-116, 2^116) is a normal float.
#define FFN_QG_FAST_LIM 47.0f

// quick_gelu(x) = x·σ(1.702x) = x/(1 + e), e = exp(-1.702x);
// quick_gelu'(x) = σ(ax)·(1 + a·x·(1 - σ(ax))), a = 1.702.
// The x·σ(k·x) kernel of vmath_avx512.h with k = 1.702 (≤ 1.6 ulp forward).
FFN_VINLINE struct ffn__pre ffn__qgelu_pre(__m512 x, enum ffn__mode mode, bool acc) {
    (void)acc;
    return ffn__xsig_pre(x, mode, FFN_QG_L2E_HI, FFN_QG_L2E_LO, FFN_QG_FAST_LIM);
}
FFN_VINLINE struct ffn__vo ffn__qgelu_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                          enum ffn__mode mode, bool acc) {
    (void)acc;
    return ffn__xsig_fin(x, s, a, b, mode, FFN_QG_L2E_HI, FFN_QG_L2E_LO, FFN_QG_FAST_LIM,
                         FFN_QUICK_GELU_A);
}
FFN_WHOLE(ffn__qgelu)
static const bool ffn__qgelu_tiers = false;

FFN_KPROTO_ACT_FWD(ffn_quick_gelu_fwd__avx512) {
    ffn__act_fwd(cfg, n, y, x, FFN_PIPED(ffn__qgelu));
}
FFN_KPROTO_ACT_BWD(ffn_quick_gelu_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, FFN_PIPED(ffn__qgelu));
}
FFN_KPROTO_GLU_FWD(ffn_quick_geglu_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, FFN_PIPED(ffn__qgelu));
}
FFN_KPROTO_GLU_BWD(ffn_quick_geglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_PIPED(ffn__qgelu));
}
