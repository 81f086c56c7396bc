// identity_avx2.c — the identity activation (dtype conversion, ffn_tensor_convert) and the
// Bilinear GLU on AVX2: forward, backward, gated forward and gated backward, for every (in, out)
// dtype pair. Exact: every f32 result is one rounding of the exact value, as in the reference.
// NaN results carry the first NaN input, made quiet (ffn__avx2_nan_fix), as every AVX2 kernel.
#include "cpu/x86_avx2/loops_avx2.h"

// identity'(x) = 1, NaN for NaN (as the reference).
FFN_AVX2_INLINE __m256 ffn__id_d(__m256 x) {
    return _mm256_blendv_ps(_mm256_set1_ps(1.0f), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

FFN_AVX2_INLINE __m256 ffn__id_fwd_v(__m256 x) { return ffn__avx2_nan_fix(x, x, x, x, 1); }
FFN_AVX2_INLINE __m256 ffn__bilinear_v(__m256 g, __m256 u) {
    return ffn__avx2_nan_fix(_mm256_mul_ps(g, u), g, u, u, 2);
}
FFN_AVX2_INLINE __m256 ffn__id_bwd_v(__m256 x, __m256 dy) {
    return ffn__avx2_nan_fix(_mm256_mul_ps(dy, ffn__id_d(x)), x, dy, dy, 2);
}
// dgate = (dh·1)·up (NaN where gate is), dup = dh·gate.
FFN_AVX2_INLINE void ffn__bilinear_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    *dg = ffn__avx2_nan_fix(_mm256_mul_ps(_mm256_mul_ps(dh, ffn__id_d(g)), u), g, u, dh, 3);
    *du = ffn__avx2_nan_fix(_mm256_mul_ps(dh, g), g, u, dh, 3);
}

FFN_KPROTO_ACT_FWD(ffn_identity_fwd__avx2) {
    ffn__avx2_act_fwd(cfg, n, y, x, ffn__id_fwd_v, ffn_identity_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_identity_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__id_bwd_v, ffn_identity_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_bilinear_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__id_fwd_v, ffn__bilinear_v, ffn_bilinear_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_bilinear_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__bilinear_bwd_v,
                      ffn_bilinear_bwd__avx2);
}
