// relu_avx512.c — AVX-512 ReLU and ReGLU: forward, backward, every (in, out) dtype pair.
// Exact: the only roundings are the products of the combines and the output conversion.
#include "cpu/x86_avx512/vmath_avx512.h"

// relu(x) = x > 0 ? x : +0 (NaN stays NaN: the compare is false, so NaN lanes keep x
// explicitly);  relu'(x) = x > 0 ? 1 : 0 (as PyTorch; NaN at NaN, as the reference: dx = dy·NaN).
FFN_VINLINE struct ffn__vo ffn__relu_v(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                       enum ffn__mode mode, bool acc) {
    (void)s, (void)acc;
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512 act = _mm512_maskz_mov_ps(pos | nan, x);
    const __m512 dact = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(pos, ffn__c(1.0f)), nan, x);
    struct ffn__vo o;
    switch (mode) {
    case FFN_MODE_ACT: o.y0 = o.y1 = act; break;
    case FFN_MODE_ACT_MUL: o.y0 = o.y1 = _mm512_mul_ps(act, a); break;
    case FFN_MODE_DACT_MUL: o.y0 = o.y1 = _mm512_mul_ps(dact, a); break;
    default:
        o.y0 = _mm512_mul_ps(_mm512_mul_ps(dact, b), a);  // (0·dh)·up keeps 0·inf = NaN
        o.y1 = _mm512_mul_ps(act, b);
        break;
    }
    return ffn__nan_fix_mode(o, x, a, b, mode);
}
#define FFN_RELU ffn__pre_none, ffn__relu_v, false

FFN_KPROTO_ACT_FWD(ffn_relu_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, FFN_RELU); }
FFN_KPROTO_ACT_BWD(ffn_relu_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, FFN_RELU); }
FFN_KPROTO_GLU_FWD(ffn_reglu_fwd__avx512) { ffn__glu_fwd(cfg, n, h, gate, up, FFN_RELU); }
FFN_KPROTO_GLU_BWD(ffn_reglu_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_RELU);
}
