// identity_avx512.c — AVX-512 identity (also dtype conversion) and the Bilinear GLU
// (gate·up): forward, backward, every (in, out) dtype pair.
#include "cpu/x86_avx512/vmath_avx512.h"

// identity(x) = x;  identity'(x) = 1 (NaN at NaN, as the reference: dx = dy·NaN).
FFN_VINLINE struct ffn__vo ffn__ident_v(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                        enum ffn__mode mode, bool acc) {
    (void)s, (void)acc;
    const __m512 dact = _mm512_mask_mov_ps(ffn__c(1.0f), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
    struct ffn__vo o;
    switch (mode) {
    case FFN_MODE_ACT: o.y0 = o.y1 = x; break;
    case FFN_MODE_ACT_MUL: o.y0 = o.y1 = _mm512_mul_ps(x, a); break;
    case FFN_MODE_DACT_MUL: o.y0 = o.y1 = _mm512_mul_ps(dact, a); break;
    default:
        o.y0 = _mm512_mul_ps(_mm512_mul_ps(dact, b), a);  // (0·dh)·up keeps 0·inf = NaN
        o.y1 = _mm512_mul_ps(x, b);
        break;
    }
    return ffn__nan_fix_mode(o, x, a, b, mode);
}
#define FFN_IDENT ffn__pre_none, ffn__ident_v, false

FFN_KPROTO_ACT_FWD(ffn_identity_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, FFN_IDENT); }
FFN_KPROTO_ACT_BWD(ffn_identity_bwd__avx512) { ffn__act_bwd(cfg, n, dx, x, dy, FFN_IDENT); }
FFN_KPROTO_GLU_FWD(ffn_bilinear_fwd__avx512) { ffn__glu_fwd(cfg, n, h, gate, up, FFN_IDENT); }
FFN_KPROTO_GLU_BWD(ffn_bilinear_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, FFN_IDENT);
}
