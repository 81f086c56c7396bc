// relu_avx2.c — ReLU and ReGLU on AVX2: forward, backward, gated forward and gated backward, for
// every (in, out) dtype pair. Exact: every f32 result is the reference's (one rounding of the
// exact product, in the reference's order), so outputs equal the scalar kernels' bit for bit.
// NaN results carry the first NaN input, made quiet (ffn__avx2_nan_fix), as every AVX2 kernel.
#include "cpu/x86_avx2/loops_avx2.h"

// relu(x) = x > 0 ? x : +0 (NaN stays NaN: the unordered compare keeps the lane).
FFN_AVX2_INLINE __m256 ffn__relu_v(__m256 x) {
    return _mm256_and_ps(x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ));
}

// relu'(x) = x > 0 ? 1 : 0, NaN for NaN (as PyTorch's threshold_backward, and the reference).
FFN_AVX2_INLINE __m256 ffn__relu_d(__m256 x) {
    const __m256 d =
        _mm256_and_ps(_mm256_set1_ps(1.0f), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
    return _mm256_blendv_ps(d, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

FFN_AVX2_INLINE __m256 ffn__relu_fwd_v(__m256 x) {
    return ffn__avx2_nan_fix(ffn__relu_v(x), x, x, x, 1);
}
FFN_AVX2_INLINE __m256 ffn__reglu_v(__m256 g, __m256 u) {
    return ffn__avx2_nan_fix(_mm256_mul_ps(ffn__relu_v(g), u), g, u, u, 2);
}
FFN_AVX2_INLINE __m256 ffn__relu_bwd_v(__m256 x, __m256 dy) {
    return ffn__avx2_nan_fix(_mm256_mul_ps(dy, ffn__relu_d(x)), x, dy, dy, 2);
}
// dgate = (dh·relu'(g))·up (a product that is ±0 exactly when the reference's is, even where
// dh·up would overflow), dup = dh·relu(g).
FFN_AVX2_INLINE void ffn__reglu_bwd_v(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du) {
    *dg = ffn__avx2_nan_fix(_mm256_mul_ps(_mm256_mul_ps(dh, ffn__relu_d(g)), u), g, u, dh, 3);
    *du = ffn__avx2_nan_fix(_mm256_mul_ps(dh, ffn__relu_v(g)), g, u, dh, 3);
}

FFN_KPROTO_ACT_FWD(ffn_relu_fwd__avx2) {
    ffn__avx2_act_fwd(cfg, n, y, x, ffn__relu_fwd_v, ffn_relu_fwd__avx2);
}
FFN_KPROTO_ACT_BWD(ffn_relu_bwd__avx2) {
    ffn__avx2_act_bwd(cfg, n, dx, x, dy, ffn__relu_bwd_v, ffn_relu_bwd__avx2);
}
FFN_KPROTO_GLU_FWD(ffn_reglu_fwd__avx2) {
    ffn__avx2_glu_fwd(cfg, n, h, gate, up, ffn__relu_fwd_v, ffn__reglu_v, ffn_reglu_fwd__avx2);
}
FFN_KPROTO_GLU_BWD(ffn_reglu_bwd__avx2) {
    ffn__avx2_glu_bwd(cfg, n, dgate, dup, gate, up, dh, ffn__reglu_bwd_v, ffn_reglu_bwd__avx2);
}
