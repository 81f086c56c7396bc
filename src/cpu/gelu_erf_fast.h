// gelu_erf_fast.h — the fast lanes of the erf-GeLU kernels: per-interval polynomials of Φ(-s)
// and of the derivative's H(s), shared by the CPU kernels (src/cpu/act/gelu_erf.inc) and the CUDA
// kernels (src/cuda), so both evaluate one fit. The table itself is gelu_erf_fast_tab.inc (the
// rows of an initializer, included where each side defines its array). A CPU whose table lookup
// reads fewer than 32 entries at once (AVX2) has its own table of the same form with fewer
// intervals (src/cpu/act/gelu_erf_tables.h): it defines FFN_ERF_FAST_DEG and FFN_ERF_FAST_K
// before including this header and shares the rest.
#ifndef FFN_GELU_ERF_FAST_H
#define FFN_GELU_ERF_FAST_H

// --- fast lanes: Φ(-s) and H(s) by per-interval polynomials ------------------------------------
// s = |x| ∈ [0, 5) is cut into 32 intervals uniform in v = s·(s + 4): their width shrinks like
// 1/(2s + 4), about as fast as the logarithmic slope of Φ(-s) (≈ s) grows, so one degree fits
// all. j = floor(v·32/45), t = s - c_j (c_j the interval's midpoint), and on each interval
//   Φ(-s) ≈ F_j(t) (degree 5, c0 as a float pair: relative error ≤ 0.33 ulp of f32, fit in long
//   double of glibc's erfcl with the coefficients rounded to f32 one at a time, refitting the
//   lower ones),
//   H(s) = Φ(-s) - s·φ(s) ≈ H_j(t) (degree 5, error ≤ 1.04 ulp of Φ(-s) + s·φ(s), the larger of
//   its terms: H has the zero of gelu_erf' at s ≈ 0.7518, where the bound is absolute).
// Rows of the table: the centres, F's c0..c5, F's c0 low part, H's c0..c5.
#ifndef FFN_ERF_FAST_DEG
#    define FFN_ERF_FAST_DEG 5
#    define FFN_ERF_FAST_K 0x1.6c16c2p-1f  // 32/45: v·K ∈ [0, 32) for s < 5
#endif
#define FFN_ERF_FAST_ROWS (2 * FFN_ERF_FAST_DEG + 4)
enum {
    FFN_ERF_ROW_C = 0,
    FFN_ERF_ROW_F = 1,
    FFN_ERF_ROW_FLO = FFN_ERF_ROW_F + FFN_ERF_FAST_DEG + 1,
    FFN_ERF_ROW_H = FFN_ERF_ROW_FLO + 1
};
#define FFN_ERF_FAST_B 4.0f
// Fast lanes: |x| < 5 (all but ~1 in 1.7 million N(0,1) inputs); the others take the general
// path (for x ≥ 5 too: there Φ(-x) must still be right to 2^-25 absolute up to x ≈ 5.42).
#define FFN_ERF_FAST_LIM 5.0f
// A product act(x)·m of the fast path needs act(x) normal: |x| ≥ 2^-100.
#define FFN_ERF_FAST_TINY 0x1p-100f

#endif  // FFN_GELU_ERF_FAST_H
