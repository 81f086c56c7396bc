// identity_avx512.c — AVX-512 identity (also dtype conversion) and the Bilinear GLU
// (gate·up): forward, backward, every (in, out) dtype pair.
#include "cpu/x86_avx512/vmath_avx512.h"

// identity(x) = x;  identity'(x) = 1 (NaN at NaN, as the reference: dx = dy·NaN).
static inline __attribute__((always_inline)) struct ffn__avd ffn__ident_v(__m512 x, bool acc) {
    struct ffn__avd r;
    r.a.hi = x;
    r.da.hi = _mm512_mask_mov_ps(ffn__c(1.0f), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
    r.a.lo = r.a.k = r.da.lo = r.da.k = _mm512_setzero_ps();
    return r;
}

FFN_KPROTO_ACT_FWD(ffn_identity_fwd__avx512) { ffn__act_fwd(cfg, n, y, x, ffn__ident_v, 0); }
FFN_KPROTO_ACT_BWD(ffn_identity_bwd__avx512) {
    ffn__act_bwd(cfg, n, dx, x, dy, ffn__ident_v, 0);
}
FFN_KPROTO_GLU_FWD(ffn_bilinear_fwd__avx512) {
    ffn__glu_fwd(cfg, n, h, gate, up, ffn__ident_v, 0);
}
FFN_KPROTO_GLU_BWD(ffn_bilinear_bwd__avx512) {
    ffn__glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__ident_v, 0, 0);
}
