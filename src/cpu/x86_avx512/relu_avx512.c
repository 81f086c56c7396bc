// relu_avx512.c — AVX-512 ReLU and ReGLU: forward, backward, every (in, out) dtype pair.
// Exact: the only roundings are the products of the combines and the output conversion.
#include "cpu/x86_avx512/vmath_avx512.h"

// relu(x) = x > 0 ? x : +0 (NaN stays NaN: the compare is false and the blend keeps x's lane
// only for x > 0, so NaN is passed through explicitly);  relu'(x) = x > 0 ? 1 : 0 (as PyTorch).
static inline __attribute__((always_inline)) struct ffn__avd ffn__relu_v(__m512 x, bool acc) {
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    struct ffn__avd r;
    r.a.hi = _mm512_maskz_mov_ps(pos | nan, x);
    r.da.hi = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(pos, ffn__c(1.0f)), nan, x);
    r.a.lo = r.a.k = r.da.lo = r.da.k = _mm512_setzero_ps();
    return r;
}

FFN_KPROTO_ACT_FWD(ffn_relu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, ffn__relu_v, 0); }
FFN_KPROTO_ACT_BWD(ffn_relu_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, ffn__relu_v, 0); }
FFN_KPROTO_GLU_FWD(ffn_reglu_fwd__avx512) { ffn__glu_fwd(cfg, n, h, gate, up, ffn__relu_v, 0); }
FFN_KPROTO_GLU_BWD(ffn_reglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__relu_v, 0, 0);
}
