// act_math.h — the element math of the CUDA activation kernels: one element of every op (act,
// act·up, dy·act', the gated backward pair), for every activation and both accuracy tiers, in f32.
// Written once, as portable C that compiles two ways:
//   - as CUDA device code (src/cuda/*.cu, nvcc with -fmad=false: no contraction; every fma is an
//     explicit fmaf), the kernels' math;
//   - as host C (gcc, -ffp-contract=off), by tests/cuda/test_cuda_math.c, which checks this very
//     math against the scalar reference and MPFR on any CPU, in CI where there is no GPU.
// Every operation is an IEEE-exact one (+ - * / fma, conversions, integer bit manipulation), so
// both give the same bits, with one exception: ffn_cm_rcp_approx (the GPU's rcp.approx.ftz.f32,
// 1 ulp; the host takes the correctly rounded 1/x). It only scales a correction ~2^-23 of the
// result, so the two agree but for a rare last bit.
//
// The fast lanes port the AVX-512 kernels' fast paths (src/cpu/x86_avx512/) operation for
// operation, with their constants and tables (cpu/exp2_tab.h, cpu/gelu_erf_fast.h): the same
// error analysis holds, and the GPU results equal the AVX-512 ones bit for bit wherever neither
// side takes its rare path (rcp14 there against rcp.approx here aside), except where the AVX-512
// forward divides (SiLU, quick-GeLU, tanh-GeLU): a division costs ~10 instructions on the GPU,
// so the compensated quotient of the combines serves there too (closer as well). Every other
// lane (NaN, ±inf, the tails, tiny inputs in a product) and the accurate tier's forward take the
// scalar reference itself, in double on the device (cpu/scalar/act_ref.h): within 0.5 ulp +
// 2^-29.
#ifndef FFN_CUDA_ACT_MATH_H
#define FFN_CUDA_ACT_MATH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpu/exp2_tab.h"
#include "cpu/gelu_erf_fast.h"
#include "cpu/scalar/act_ref.h"
#include "ffn.h"

#ifdef __CUDACC__
#    include <cuda_bf16.h>
#    include <cuda_fp16.h>
#    define FFN_CM static __host__ __device__ __forceinline__
#    define FFN_CM_RARE static __host__ __device__ __noinline__
#else
#    define FFN_CM static inline
#    define FFN_CM_RARE static __attribute__((noinline, unused))
#endif

// --- modes ---------------------------------------------------------------------------------------
// The four ways an activation is evaluated (the op families of the kernel table, plus parity):
enum ffn_cm_mode {
    FFN_CM_ACT = 0,   // y0 = act(x)                         (forward; parity's act(gate))
    FFN_CM_ACT_MUL,   // y0 = act(x)·a                       (gated forward, a = up)
    FFN_CM_DACT_MUL,  // y0 = act'(x)·a                      (backward, a = dy)
    FFN_CM_BOTH,      // y0 = act'(x)·a·b, y1 = act(x)·b     (gated backward, a = up, b = dh)
};

struct ffn_cm_out {
    float y0, y1;
};

// A fast lane's outputs, and whether the lane is rare: then the outputs are to be replaced by the
// reference's (ffn_cm_elem does it per element; the kernels gather the rare lanes of a chunk and
// fix them outside the fast path).
struct ffn_cm_res {
    float y0, y1;
    bool rare;
};

// --- tables --------------------------------------------------------------------------------------
// The source (ffn_cm_tabs_src: the lists of cpu/exp2_tab.h and cpu/gelu_erf_fast_tab.inc as they
// are) is defined where used, with the table rows included into the initializer:
//     const struct ffn_cm_tabs_src S = {{FFN_EXP2_TAB_HI}, {FFN_EXP2_TAB_LO}, {
//     #include "cpu/gelu_erf_fast_tab.inc"
//     }};
// The math reads ffn_cm_tabs, filled from it by ffn_cm_tabs_fill: the kernels' copy in shared
// memory (each block fills its own), the host test's in plain memory. 2^(j/16) as (hi, lo) pairs,
// one 8-byte access for both; erf rows of 32 floats. Either is one conflict-free shared-memory
// access for any pattern of lane indices (the same index is a broadcast). 1,920 bytes.
struct ffn_cm_tabs_src {
    float exp2_hi[16], exp2_lo[16];    // 2^(j/16) as a float pair (cpu/exp2_tab.h)
    float erf[FFN_ERF_FAST_ROWS][32];  // erf-GeLU fast lanes (cpu/gelu_erf_fast.h)
};

struct
#ifdef __CUDACC__
    __align__(8)
#endif
        ffn_cm_pair {
    float hi, lo;
};

struct ffn_cm_tabs {
    struct ffn_cm_pair exp2[16];
    float erf[FFN_ERF_FAST_ROWS][32];
};

// Fills the words i, i + stride, ... of T from S (a block's threads: i = its index, stride = its
// size): the exponential's pairs (exp) and the erf rows (erf), as the math needs them.
FFN_CM void ffn_cm_tabs_fill(struct ffn_cm_tabs *T, const struct ffn_cm_tabs_src *S, int i,
                             int stride, bool exp, bool erf) {
    if (exp)
        for (int k = i; k < 32; k += stride)
            (&T->exp2[0].hi)[k] = k & 1 ? S->exp2_lo[k >> 1] : S->exp2_hi[k >> 1];
    if (erf)
        for (int k = i; k < FFN_ERF_FAST_ROWS * 32; k += stride)
            (&T->erf[0][0])[k] = (&S->erf[0][0])[k];
}

// Whether act's math reads the exponential's table (tanh-GeLU, SiLU, sigmoid, quick-GeLU), the
// erf rows (erf-GeLU).
FFN_CM bool ffn_cm_uses_exp(enum ffn_act act) {
    return act == FFN_ACT_GELU_TANH || act == FFN_ACT_SILU || act == FFN_ACT_SIGMOID ||
           act == FFN_ACT_QUICK_GELU;
}
FFN_CM bool ffn_cm_uses_erf(enum ffn_act act) { return act == FFN_ACT_GELU_ERF; }

// --- bits, fma, reciprocal -----------------------------------------------------------------------

FFN_CM uint32_t ffn_cm_bits(float x) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
#endif
}

FFN_CM float ffn_cm_float(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, 4);
    return x;
#endif
}

// A reciprocal within ~1 ulp for the correction terms of the compensated quotients (the AVX-512
// kernels use rcp14 there: only the size of the term matters). Device: rcp.approx.ftz.f32; host:
// the correctly rounded 1/x. Arguments are in [1, 2^117) in the f32 lanes: never subnormal (the
// 16-bit tier's erf-GeLU also passes up to 1 + |x|/(2√2) for any x, whose reciprocal flushing to
// 0 beyond 2^126 leaves its Φ(-|x|) at 0, as it is in f32).
FFN_CM float ffn_cm_rcp_approx(float x) {
#ifdef __CUDA_ARCH__
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return 1.0f / x;
#endif
}

// 2^z for the 16-bit tier (below): device: ex2.approx.ftz.f32 (relative error below 2^-22, 0 for
// results below 2^-126); host: exp2f.
FFN_CM float ffn_cm_ex2_approx(float z) {
#ifdef __CUDA_ARCH__
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z));
    return e;
#else
    return exp2f(z);
#endif
}

// 1/x for the derivatives' inverses 1/(1 + e), x in [1, 2^117): device: the estimate and one
// Newton step, r + r·(1 - x·r), within 0.5 ulp + ~2^-22 ulp, so the correctly rounded value but
// within ~2^-22 ulp of a midpoint (where the result may be the other neighbour); host: the
// correctly rounded 1/x. Three instructions where an IEEE division takes about eight and a check.
FFN_CM float ffn_cm_rcp(float x) {
#ifdef __CUDA_ARCH__
    const float r = ffn_cm_rcp_approx(x);
    return fmaf(r, fmaf(-x, r, 1.0f), r);
#else
    return 1.0f / x;
#endif
}

FFN_CM bool ffn_cm_subnormal(float x) { return x != 0.0f && fabsf(x) < 0x1p-126f; }

// --- storage types -------------------------------------------------------------------------------
// f32 -> bf16 / f16 rounded to nearest even, and back. The device uses cvt.rn, the host the
// library's integer rounding (ffn_f32_to_bf16 / ffn_f32_to_f16): the same bits but for the payload
// of a NaN (both NaN).

FFN_CM uint16_t ffn_cm_to_bf16(float v) {
#ifdef __CUDA_ARCH__
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
    return ffn_f32_to_bf16(v);
#endif
}

FFN_CM uint16_t ffn_cm_to_f16(float v) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));
#else
    return ffn_f32_to_f16(v);
#endif
}

FFN_CM float ffn_cm_from_bf16(uint16_t h) { return ffn_cm_float((uint32_t)h << 16); }

FFN_CM float ffn_cm_from_f16(uint16_t h) {
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h));
#else
    return ffn_f16_to_f32(h);
#endif
}

// v rounded to the storage type dt and back (parity mode); v itself for f32.
FFN_CM float ffn_cm_round_to(enum ffn_dtype dt, float v) {
    if (dt == FFN_DTYPE_BF16) return ffn_cm_from_bf16(ffn_cm_to_bf16(v));
    if (dt == FFN_DTYPE_F16) return ffn_cm_from_f16(ffn_cm_to_f16(v));
    return v;
}

// --- the rare lanes: the scalar reference in double ----------------------------------------------
// The expressions of src/cpu/scalar/elementwise.c, operand for operand: each output is the double
// value rounded once to f32 (the reference's own result, up to the last bits of exp/erfc).
FFN_CM struct ffn_cm_out ffn_cm_ref_eval(enum ffn_act act, enum ffn_cm_mode mode, float x, float a,
                                         float b) {
    struct ffn_cm_out o;
    switch (mode) {
    case FFN_CM_ACT: o.y0 = (float)ffn_ref_act_eval(act, x); break;
    case FFN_CM_ACT_MUL: o.y0 = (float)(ffn_ref_act_eval(act, x) * (double)a); break;
    case FFN_CM_DACT_MUL: o.y0 = (float)((double)a * ffn_ref_dact_eval(act, x)); break;
    default:
        o.y0 = (float)((double)b * (double)a * ffn_ref_dact_eval(act, x));
        o.y1 = (float)((double)b * ffn_ref_act_eval(act, x));
        return o;
    }
    o.y1 = o.y0;
    return o;
}

// One out-of-line copy per activation (a kernel's fast path then carries no double code).
#define FFN_CM_REF_FN(name, ACT)                                                             \
    FFN_CM_RARE struct ffn_cm_out ffn_cm_ref_##name(enum ffn_cm_mode mode, float x, float a, \
                                                    float b) {                               \
        return ffn_cm_ref_eval(ACT, mode, x, a, b);                                          \
    }
FFN_CM_REF_FN(gelu_tanh, FFN_ACT_GELU_TANH)
FFN_CM_REF_FN(gelu_erf, FFN_ACT_GELU_ERF)
FFN_CM_REF_FN(silu, FFN_ACT_SILU)
FFN_CM_REF_FN(sigmoid, FFN_ACT_SIGMOID)
FFN_CM_REF_FN(quick_gelu, FFN_ACT_QUICK_GELU)
#undef FFN_CM_REF_FN

// --- 2^z by table (cpu/exp2_tab.h) ---------------------------------------------------------------

// 2^floor(n16) for t = n16 + FFN_EXP2_MAGIC, from t's bits: t = 1.5·2^19 + n16 has ulp 1/16, so
// bits(t) >> 4 = C + floor(n16) with C ≡ 0 mod 2^9, and shifting that into the exponent field
// (mod 2^32) adds floor(n16) to 127. The AVX-512 kernels' vscalefps(·, n16) factor, for
// floor(n16) in [-126, 127] (the fast lanes use [-120, 120]).
FFN_CM float ffn_cm_pow2_floor(float t) {
    return ffn_cm_float(((ffn_cm_bits(t) >> 4) << 23) + 0x3f800000u);
}

// E·2^floor(n16) (E in [0.97, 2), floor(n16) in [-121, 121]: normal, so exact) as an integer add
// into E's exponent field: bits(t) & ~15 = C + 16·floor(n16), and (C << 19) ≡ 0 mod 2^32 (C =
// bits(MAGIC) = 0x49400000), so ((bits(t) & ~15) << 19) = floor(n16)·2^23: two integer
// instructions (and, shift-add) where the product with ffn_cm_pow2_floor takes four.
FFN_CM float ffn_cm_scale2(float E, float t) {
    return ffn_cm_float(ffn_cm_bits(E) + ((ffn_cm_bits(t) & ~15u) << 19));
}

// E = 2^(j/16 + r) for t = z + MAGIC (rounded) and r = z - n16. precise: with the table's low
// part (within 0.5 ulp + 0.04), else within ~1 ulp.
FFN_CM float ffn_cm_exp2_frac(const struct ffn_cm_tabs *T, float t, float r, bool precise) {
    const uint32_t j = ffn_cm_bits(t) & 15u;
    float p = fmaf(FFN_EXP2_C3, r, FFN_EXP2_C2);
    p = fmaf(p, r, FFN_EXP2_C1);
    p = p * r;  // 2^r - 1
    if (!precise) {
        const float th = T->exp2[j].hi;
        return fmaf(th, p, th);
    }
    const struct ffn_cm_pair tj = T->exp2[j];  // one 8-byte access
    return tj.hi + fmaf(tj.hi, p, tj.lo);
}

// exp(-c·x·ln 2) = 2^(-x·c) for c = c_hi + c_lo (a slope times log2 e, as a float pair) and
// |x·c| ≤ 120: n16 = round16(-x·c_hi), r = (-x·c_hi - n16) - x·c_lo, each exact up to one rounding
// of a value ≤ 1/32 (the AVX-512 ffn__exp_lin).
FFN_CM float ffn_cm_exp_lin(const struct ffn_cm_tabs *T, float x, float c_hi, float c_lo,
                            bool precise) {
    const float t = fmaf(-x, c_hi, FFN_EXP2_MAGIC);
    const float n = t - FFN_EXP2_MAGIC;
    float r = fmaf(-x, c_hi, -n);
    r = fmaf(-x, c_lo, r);
    return ffn_cm_scale2(ffn_cm_exp2_frac(T, t, r, precise), t);
}

// --- compensated quotient N/(1 + e) (the AVX-512 ffn__quot_comp / ffn__quot_fin) -----------------
// D = 1 + e = Dh + Dl exactly (Fast2Sum of max(1, e) and min(1, e); with lt24, e < 2^24 and
// 1 - Dh is exact, so Dl = (1 - Dh) + e), r ≈ 1/Dh, q0 = N·r, c = (q0·Dh - N) + q0·Dl, and
// N/D = q0 - c/D ≈ q0 - c·r: the quotient's own error is corrected far below an ulp, so the value
// is within 0.5 ulp (the final rounding) + e's error times e/(1 + e).
struct ffn_cm_quot {
    float hi, c, r;  // the value is hi - c·r
};

FFN_CM struct ffn_cm_quot ffn_cm_quot_comp(float N, float e, bool lt24) {
    const float a = lt24 ? 1.0f : fmaxf(1.0f, e), b = lt24 ? e : fminf(1.0f, e);
    const float Dh = a + b;
    const float Dl = (a - Dh) + b;
    struct ffn_cm_quot q;
    q.r = ffn_cm_rcp_approx(Dh);
    q.hi = N * q.r;
    q.c = fmaf(q.hi, Dl, fmaf(q.hi, Dh, -N));
    return q;
}

// hi - c·r with one rounding (ACT), or (hi - c·r)·a as hi·a - l with one rounding, l = c·r·a
// (ACT_MUL). l is taken as +0 where it is ±0, ±inf or NaN: then hi·a stands alone, so a zero
// product keeps its sign, a = ±inf gives ±inf (not inf - inf), and a NaN a gives NaN.
FFN_CM float ffn_cm_quot_fin(struct ffn_cm_quot q, float a, enum ffn_cm_mode mode) {
    if (mode == FFN_CM_ACT) return fmaf(-q.c, q.r, q.hi);
    const float l = (q.c * q.r) * a;
    const float lf = (l != 0.0f && fabsf(l) <= 0x1.fffffep127f) ? l : 0.0f;
    return fmaf(q.hi, a, -lf);
}

// Lanes outside a symmetric fast range: !(|x| < lim) (NaN included), and with small_too also
// |x| ≤ ~2^-19 (act(x) may be subnormal there, or ±0 whose product sign the fast finish does not
// keep): | |x| - lim/2 | ≥ lim/2 catches both ends in one compare.
FFN_CM bool ffn_cm_rare_sym(float x, float lim, bool small_too) {
    const float ax = fabsf(x);
    if (!small_too) return !(ax < lim);
    return !(fabsf(ax - 0.5f * lim) < 0.5f * lim);
}

// --- x·σ(k·x): SiLU (k = 1) and quick-GeLU (k = 1.702) -------------------------------------------
// act(x) = x/(1 + e), e = exp(-kx), k·log2(e) as the float pair (l2e_hi, l2e_lo).
//   ACT, |x| < fast_lim: the compensated quotient x/(1 + e) (the AVX-512 kernel divides, ≤ 2 ulp,
//     and takes e' - e'^2 for k·x ≤ -16; here a reciprocal estimate and three fmas replace the
//     division, ~10 instructions on the GPU, and the rounding of 1 + e is compensated too, by the
//     Fast2Sum of max(1, e) and min(1, e), which holds for every e: no left-tail branch).
//   ACT_MUL, fast_lim > |x| > ~2^-19: the compensated quotient, one final rounding (≤ 1.6 ulp).
//   DACT_MUL / BOTH, |x| < fast_lim (BOTH: x not subnormal): act' = σ·(1 + kx·(1 - σ)) with
//     inv = 1/(1 + e), σ = inv, 1 - σ = e·inv, from x clamped to ±fast_lim.
// The rest: the reference.
#define FFN_CM_LOG2E_HI 0x1.715476p+0f
#define FFN_CM_LOG2E_LO 0x1.4ae0cp-26f
#define FFN_CM_SILU_FAST_LIM 80.0f
#define FFN_CM_QG_K 1.702f
#define FFN_CM_QG_L2E_HI 0x1.3a4cbep+1f
#define FFN_CM_QG_L2E_LO -0x1.c08ecap-26f
#define FFN_CM_QG_FAST_LIM 47.0f

FFN_CM struct ffn_cm_res ffn_cm_xsig(const struct ffn_cm_tabs *T, enum ffn_act act,
                                     enum ffn_cm_mode mode, float x, float a, float b) {
    const bool silu = act == FFN_ACT_SILU;
    const float l2e_hi = silu ? FFN_CM_LOG2E_HI : FFN_CM_QG_L2E_HI;
    const float l2e_lo = silu ? FFN_CM_LOG2E_LO : FFN_CM_QG_L2E_LO;
    const float lim = silu ? FFN_CM_SILU_FAST_LIM : FFN_CM_QG_FAST_LIM;
    const float k = silu ? 1.0f : FFN_CM_QG_K;
    struct ffn_cm_res o;
    if (mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL) {
        const float e = ffn_cm_exp_lin(T, x, l2e_hi, l2e_lo, true);
        o.y0 = o.y1 = ffn_cm_quot_fin(ffn_cm_quot_comp(x, e, false), a, mode);
        o.rare = ffn_cm_rare_sym(x, lim, mode == FFN_CM_ACT_MUL);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        const float xc = fmaxf(-lim, fminf(lim, x));
        const float e = ffn_cm_exp_lin(T, xc, l2e_hi, l2e_lo, false);
        const float inv = ffn_cm_rcp(1.0f + e);
        const float kx = silu ? xc : k * xc;
        const float d = inv * fmaf(kx, e * inv, 1.0f);
        o.y0 = d * (both ? a * b : a);
        o.y1 = both ? (x * inv) * b : o.y0;
        o.rare = ffn_cm_rare_sym(x, lim, false) || (both && ffn_cm_subnormal(x));
    }
    return o;
}

// --- σ: sigmoid and the original GLU -------------------------------------------------------------
//   ACT, |x| < 80: the compensated quotient 1/(1 + e), e = exp(-x) with the table's low part
//     (≤ 1.6 ulp), 1 + e by the Fast2Sum of max(1, e) and min(1, e) (no left-tail branch).
//   ACT_MUL, |x| < 80: the compensated quotient, one rounding of hi·a - lo·a.
//   DACT_MUL / BOTH, |x| < 80: σ' = e/(1 + e)² = 2^n·E·inv², e = exp(-|x|) = E·2^n for either
//     sign, inv = 1/(1 + e); σ = inv (x ≥ 0) or 2^n·E·inv (x < 0). The powers of two are applied
//     last, after the multiplicands (the AVX-512 general form, here for the fast range only).
FFN_CM struct ffn_cm_res ffn_cm_sigmoid(const struct ffn_cm_tabs *T, enum ffn_cm_mode mode, float x,
                                        float a, float b) {
    struct ffn_cm_res o;
    const bool rare = ffn_cm_rare_sym(x, 80.0f, false);
    o.rare = rare;
    if (mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL) {
        const float e = ffn_cm_exp_lin(T, x, FFN_CM_LOG2E_HI, FFN_CM_LOG2E_LO, true);
        o.y0 = o.y1 = ffn_cm_quot_fin(ffn_cm_quot_comp(1.0f, e, false), a, mode);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        // E, n of exp(-|x|) (the AVX-512 ffn__exp_neg with a = -|x|).
        const float ax = -fabsf(x);
        const float t = fmaf(ax, FFN_CM_LOG2E_HI, FFN_EXP2_MAGIC);
        const float n = t - FFN_EXP2_MAGIC;
        float r = fmaf(ax, FFN_CM_LOG2E_HI, -n);
        r = fmaf(ax, FFN_CM_LOG2E_LO, r);
        const float E = ffn_cm_exp2_frac(T, t, r, false);
        const float p2n = ffn_cm_pow2_floor(t);
        const bool neg = (ffn_cm_bits(x) >> 31) != 0;
        const float e = E * p2n;
        const float inv = ffn_cm_rcp(1.0f + e);
        const float S = neg ? E * inv : inv;
        const float da = (E * inv) * inv;
        o.y0 = (da * (both ? a * b : a)) * p2n;
        o.y1 = both ? (S * b) * (neg ? p2n : 1.0f) : o.y0;
    }
    return o;
}

// --- tanh-GeLU: x·σ(A), A = x·(K + M·x²), K = √(8/π), M = 0.044715·K -----------------------------
// exp(-A) = 2^(-x·(KL + ML·x²)) with KL, ML the constants times log2(e), as float pairs.
//   ACT / ACT_MUL (x ≥ -4.5; ACT_MUL also |x| ≥ 2^-100; both finite): x/(1 + e) as a compensated
//     quotient (the AVX-512 kernel divides: ≤ 3.52 ulp, a combine one rounding more), e from x
//     clamped at 9 (beyond, 1 + e = 1 exactly), the argument's error terms (the AVX-512
//     ffn__gelu_fast_e, the same bits; the combine keeps those that grow as |x|³, and so does
//     ACT below -3.5, where the AVX-512 forward takes its general form: selected per lane, so a
//     lane at or above -3.5 keeps the AVX-512 bits). The range is the combine's, not the AVX-512
//     forward's -3.5: on the GPU a rare lane stalls its warp, and 1 in 4,300 N(0,1) inputs below
//     -3.5 put one in 3 % of the warps of an f32 call (GeLU-tanh forward 0.87 of a device copy).
//   DACT_MUL / BOTH (x ≥ -3.5; BOTH: x not subnormal): act' = inv·(1 + x·A'·e·inv),
//     A' = K + 3M·x², inv = 1/(1 + e).
// The accurate tier's forward, and every other lane: the reference.
#define FFN_CM_KL_HI 0x1.26aec2p+1f  // √(8/π)·log2 e
#define FFN_CM_KL_LO 0x1.bce75ap-27f
#define FFN_CM_ML_HI 0x1.a5a7dp-4f  // 0.044715·√(8/π)·log2 e
#define FFN_CM_ML_LO -0x1.151aaep-29f
#define FFN_CM_K_HI 0x1.988454p+0f   // √(8/π)
#define FFN_CM_M3_HI 0x1.b6676cp-3f  // 3·0.044715·√(8/π)

// full: 0 the short argument, 1 the full one, 2 the full one below -3.5 (per lane).
FFN_CM float ffn_cm_gelu_fast_e(const struct ffn_cm_tabs *T, float xc, float x2, int full) {
    const float q = fmaf(x2, FFN_CM_ML_HI, FFN_CM_KL_HI);
    const float d = (FFN_CM_KL_HI - q) + FFN_CM_KL_LO;
    float ql = fmaf(x2, FFN_CM_ML_HI, d);
    if (full) {
        const float x2l = fmaf(xc, xc, -x2);
        float qf = fmaf(x2, FFN_CM_ML_LO, ql);
        qf = fmaf(x2l, FFN_CM_ML_HI, qf);
        ql = full == 1 || xc < -3.5f ? qf : ql;
    }
    const float t = fmaf(-xc, q, FFN_EXP2_MAGIC);
    const float n = t - FFN_EXP2_MAGIC;
    float r = fmaf(-xc, q, -n);
    r = fmaf(-xc, ql, r);
    return ffn_cm_scale2(ffn_cm_exp2_frac(T, t, r, false), t);
}

FFN_CM struct ffn_cm_res ffn_cm_gelu_tanh(const struct ffn_cm_tabs *T, enum ffn_cm_mode mode,
                                          bool acc, float x, float a, float b) {
    const bool fwd = mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL;
    const float w = 9.0f < x ? 9.0f : x;  // NaN stays (a rare lane)
    const float x2 = w * w;
    const float e = ffn_cm_gelu_fast_e(T, w, x2, mode == FFN_CM_ACT_MUL ? 1 : mode == FFN_CM_ACT);
    struct ffn_cm_res o;
    if (fwd) {
        // x/(1 + e) compensated (e < 2^24 for x ≥ -4.5), and for a combine one final rounding of
        // q·a, where the AVX-512 kernel divides and then multiplies. +inf is a rare lane here
        // (inf - inf in the residual).
        const bool act_only = mode == FFN_CM_ACT;
        o.y0 = o.y1 = ffn_cm_quot_fin(ffn_cm_quot_comp(x, e, true), a, mode);
        o.rare =
            acc || !(x >= -4.5f && x <= 0x1.fffffep127f) || (!act_only && fabsf(x) < 0x1p-100f);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        const float inv = ffn_cm_rcp(1.0f + e);
        const float dA = fmaf(x2, FFN_CM_M3_HI, FFN_CM_K_HI);
        const float d = inv * fmaf(w * dA, e * inv, 1.0f);
        o.y0 = d * (both ? a * b : a);
        o.y1 = both ? (x * inv) * b : o.y0;
        o.rare = !(x >= -3.5f) || (both && ffn_cm_subnormal(x));
    }
    return o;
}

// --- erf-GeLU: x·Φ(x) ----------------------------------------------------------------------------
// Fast lanes |x| < 5 (cpu/gelu_erf_fast.h): Φ(-s) ≈ F_j(t) and H(s) = Φ(-s) - s·φ(s) ≈ H_j(t),
// s = |x|, per-interval degree-5 polynomials; gelu = x·G, G = Φ(-s) (x < 0) or 1 - Φ(-s)
// (x ≥ 0: no cancellation, Φ(-s) ≤ 1/2); gelu' = H(s) (x < 0) or 1 - H(s). In a product also
// |x| ≥ 2^-100 (ACT_MUL) or x not subnormal (BOTH). The accurate tier's forward, and every other
// lane: the reference.
struct ffn_cm_erf_iv {
    uint32_t j;  // interval
    float t;     // s - c_j
};

FFN_CM struct ffn_cm_erf_iv ffn_cm_erf_interval(const struct ffn_cm_tabs *T, float x) {
    // s ≥ 5 (and NaN) only in rare lanes, whose results are replaced: any in-range index.
    const float s0 = fabsf(x);
    const float s = s0 < FFN_ERF_FAST_LIM ? s0 : 0.0f;
    const float kb = fmaf(s, FFN_ERF_FAST_K, FFN_ERF_FAST_B * FFN_ERF_FAST_K);
    struct ffn_cm_erf_iv iv;
    iv.j = (uint32_t)(int32_t)(s * kb) & 31u;  // truncation, as cvttps2dq
    iv.t = s0 - T->erf[FFN_ERF_ROW_C][iv.j];
    return iv;
}

FFN_CM float ffn_cm_erf_poly(const struct ffn_cm_tabs *T, int row, struct ffn_cm_erf_iv iv) {
    float p = T->erf[row + FFN_ERF_FAST_DEG][iv.j];
    for (int k = FFN_ERF_FAST_DEG - 1; k >= 0; k--) p = fmaf(p, iv.t, T->erf[row + k][iv.j]);
    return p;
}

FFN_CM struct ffn_cm_res ffn_cm_gelu_erf(const struct ffn_cm_tabs *T, enum ffn_cm_mode mode,
                                         bool acc, float x, float a, float b) {
    const bool fwd = mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL;
    const struct ffn_cm_erf_iv iv = ffn_cm_erf_interval(T, x);
    const bool pos = !(x < 0.0f);
    struct ffn_cm_res o;
    bool rare = ffn_cm_rare_sym(x, FFN_ERF_FAST_LIM, false) || (fwd && acc);
    if (fwd) {
        const float f = ffn_cm_erf_poly(T, FFN_ERF_ROW_F, iv);
        const float y = x * (pos ? 1.0f - f : f);
        o.y0 = o.y1 = mode == FFN_CM_ACT ? y : y * a;
        rare = rare || (mode == FFN_CM_ACT_MUL && fabsf(x) < FFN_ERF_FAST_TINY);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        const float h = ffn_cm_erf_poly(T, FFN_ERF_ROW_H, iv);
        const float d = pos ? 1.0f - h : h;
        o.y0 = d * (both ? a * b : a);
        if (both) {
            const float f = ffn_cm_erf_poly(T, FFN_ERF_ROW_F, iv);
            o.y1 = (x * (pos ? 1.0f - f : f)) * b;
        } else {
            o.y1 = o.y0;
        }
        rare = rare || (both && ffn_cm_subnormal(x));
    }
    o.rare = rare;
    return o;
}

// --- ReLU and identity: exact --------------------------------------------------------------------
// relu(x) = x > 0 ? x : +0, relu'(x) = x > 0 ? 1 : 0; identity(x) = x, identity' = 1; NaN at NaN
// (as the reference: act' of NaN is NaN). The gated backward's dgate = (act'·dh)·up keeps the
// reference's 0·inf = NaN; the only roundings are the products'.
FFN_CM struct ffn_cm_res ffn_cm_relu_ident(enum ffn_act act, enum ffn_cm_mode mode, float x,
                                           float a, float b) {
    const bool nan = x != x;
    float v, d;
    if (act == FFN_ACT_RELU) {
        v = (x > 0.0f || nan) ? x : 0.0f;
        d = x > 0.0f ? 1.0f : (nan ? x : 0.0f);
    } else {
        v = x;
        d = nan ? x : 1.0f;
    }
    struct ffn_cm_res o;
    o.rare = false;
    switch (mode) {
    case FFN_CM_ACT: o.y0 = v; break;
    case FFN_CM_ACT_MUL: o.y0 = v * a; break;
    case FFN_CM_DACT_MUL: o.y0 = d * a; break;
    default:
        o.y0 = (d * b) * a;
        o.y1 = v * b;
        return o;
    }
    o.y1 = o.y0;
    return o;
}

// --- the 16-bit tier: the fast lanes of an output stored in bf16 or f16 --------------------------
// An output rounded to bf16 (8 significant bits) or f16 (11) needs act in f32 to about 2^-14, not
// to an ulp of f32: the f32 fast lanes' compensated quotients, split arguments and exponential
// table (about 30 instructions an element) make a 16-bit call compute-bound on the GPU, where an
// element has the time of about 32 lane-instructions at a device copy's speed (H200, a unary bf16
// forward: 4 bytes an element; a gated forward about 47).
// So for a bf16 / f16 output (default tier, not parity) the activations take
// e = 2^z from the special-function unit (ex2.approx.ftz.f32: relative error below 2^-22) and
// r = 1/(1 + e) from its reciprocal (rcp.approx.ftz.f32: 1 ulp), about 8 instructions:
//   tanh-GeLU z = -x·(KL + ML·x²); SiLU z = -x·log2 e; quick-GeLU z = -1.702·x·log2 e;
//   sigmoid z = -x·log2 e; erf-GeLU: a rational fit of erfc around one exponential (below);
//   act = x·r (sigmoid: r); act' = r·(1 + k·x·A'·e·r) (x·σ(kx) family: A' = 1, tanh-GeLU:
//   A' = K + 3M·x²; sigmoid: σ' = (e·r)·r); products as the f32 lanes form them.
// Error: z carries three roundings (|z|·2^-23 absolute, ≤ 2^-16 for |z| ≤ 128), ex2.approx 2^-22,
// 1 + e, the reciprocal and each product one rounding of f32: act within ~2^-15 relative (the
// backward's two terms each; the ulp metric measures act' against its larger term), so a bf16
// or f16 output is within 0.5 + 2^-4 ulp before the bounds (2 / 4 forward, 8 backward) are
// reached. Fast lanes: x ≥ -9 (tanh-GeLU, its argument from x clamped at 9; +inf included),
// |x| < 80 (SiLU, sigmoid), |x| < 47 (quick-GeLU): e ≤ 2^116, so 1/(1 + e) is normal; in a
// product also |x| ≥ 2^-100 (act normal: its rounding keeps the relative error a large
// multiplier needs).
// NaN and the rest: the reference, as in every tier. The outputs differ from the f32 lanes'
// rounded ones in the last bit where the value lies within ~2^-15 ulp of a rounding midpoint:
// both are within the bounds, measured over every 16-bit input (test_cuda_math on the host, where
// the two approximations are exp2f and 1/x; `ffn ulp --backend cuda --all` on the device).

// Whether an element of act with output dtype out takes the 16-bit tier: a bf16 / f16 output of
// the default tier, not parity, and an activation with a transcendental (ReLU and identity are
// exact). The kernels (which then read no table) and the backend's choice of grid ask this too.
FFN_CM bool ffn_cm_tier16_on(enum ffn_act act, enum ffn_dtype out, bool acc, bool parity) {
    return out != FFN_DTYPE_F32 && !acc && !parity &&
           (ffn_cm_uses_exp(act) || ffn_cm_uses_erf(act));
}

// erf-GeLU's 16-bit tier: Φ(-s), s = |x|, as erfc(s/√2)/2 in the form of Numerical Recipes' erfcc,
// erfc(z) = t·exp(-z² + P(t)), t = 1/(1 + z/2), with a degree-5 P fitted on s ≤ 12
// (tools/fit/fit_erfc16.py: within 2^-16.8 in the exponent, so relative in erfc), z² = s²/2 (one
// rounding) and Φ(-s) = t·exp(v)/2 = t·2^(v·log2 e - 1) from ex2.approx: within ~2^-16 relative
// down to s = 12 (Φ = 1.8e-33); gelu = max(x, 0) - |x|·Φ(-s) in one fma (x ≥ 0: no
// cancellation, Φ(-s) ≤ 1/2); gelu' = Φ(x) + x·φ(x), φ(x) = 2^(-s²/2·log2 e)/√(2π), Φ(x) =
// 1 - Φ(-s) (x ≥ 0) or Φ(-s). Fast lanes x ∈ [-12, +inf)
// (an infinite x: the reference). Beyond s = 12 on the positive side P is extrapolated, but
// Φ(-s) stays far below 2^-25 there, so 1 - Φ(-s) = 1.
#define FFN_CM_ERFC16_P0 -0x1.44488ap+0f
#define FFN_CM_ERFC16_P1 0x1.051d9cp+0f
#define FFN_CM_ERFC16_P2 0x1.f9c3a4p-3f
#define FFN_CM_ERFC16_P3 0x1.f372e2p-2f
#define FFN_CM_ERFC16_P4 -0x1.70c32cp-1f
#define FFN_CM_ERFC16_P5 0x1.dbbf62p-3f
FFN_CM struct ffn_cm_res ffn_cm_tier16_erf(enum ffn_cm_mode mode, float x, float a, float b) {
    const float s = fabsf(x), q = s * s;
    const float t = ffn_cm_rcp_approx(fmaf(s, 0x1.6a09e6p-2f, 1.0f));  // 1/(1 + s/(2√2))
    float p = fmaf(FFN_CM_ERFC16_P5, t, FFN_CM_ERFC16_P4);
    p = fmaf(p, t, FFN_CM_ERFC16_P3);
    p = fmaf(p, t, FFN_CM_ERFC16_P2);
    p = fmaf(p, t, FFN_CM_ERFC16_P1);
    p = fmaf(p, t, FFN_CM_ERFC16_P0);
    const float v = fmaf(q, -0.5f, p);                                          // -z² + P(t)
    const float phin = t * ffn_cm_ex2_approx(fmaf(v, FFN_CM_LOG2E_HI, -1.0f));  // Φ(-s)
    const bool pos = !(x < 0.0f);
    const float y = fmaf(-s, phin, pos ? x : 0.0f);  // gelu(x) = max(x, 0) - |x|·Φ(-|x|)
    struct ffn_cm_res o;
    bool rare = !(x >= -12.0f && x <= 0x1.fffffep127f);
    if (mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL) {
        o.y0 = o.y1 = mode == FFN_CM_ACT ? y : y * a;
        rare = rare || (mode == FFN_CM_ACT_MUL && s < 0x1p-100f);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        const float phi = 0x1.988454p-2f * ffn_cm_ex2_approx(q * (-0.5f * FFN_CM_LOG2E_HI));
        const float G = pos ? 1.0f - phin : phin;  // Φ(x)
        const float d = fmaf(x, phi, G);           // 1/√(2π) = 0x1.988454p-2
        o.y0 = d * (both ? a * b : a);
        o.y1 = both ? y * b : o.y0;
        rare = rare || (both && s < 0x1p-100f);
    }
    o.rare = rare;
    return o;
}

FFN_CM struct ffn_cm_res ffn_cm_tier16(enum ffn_act act, enum ffn_cm_mode mode, float x, float a,
                                       float b) {
    if (act == FFN_ACT_GELU_ERF) return ffn_cm_tier16_erf(mode, x, a, b);
    const bool gelu = act == FFN_ACT_GELU_TANH, sig = act == FFN_ACT_SIGMOID;
    const bool qg = act == FFN_ACT_QUICK_GELU;
    // tanh-GeLU's argument from x clamped at 9 (as the f32 lanes: 1 + e = 1 beyond, and x² stays
    // finite); NaN stays (a rare lane).
    const float w = gelu && 9.0f < x ? 9.0f : x;
    const float x2 = w * w;
    const float z = gelu ? -w * fmaf(x2, FFN_CM_ML_HI, FFN_CM_KL_HI)
                         : -x * (qg ? FFN_CM_QG_L2E_HI : FFN_CM_LOG2E_HI);
    const float e = ffn_cm_ex2_approx(z);
    const float r = ffn_cm_rcp_approx(1.0f + e);
    const float v = sig ? r : x * r;  // act
    struct ffn_cm_res o;
    const float lim = qg ? FFN_CM_QG_FAST_LIM : FFN_CM_SILU_FAST_LIM;
    bool rare = gelu ? !(x >= -9.0f) : !(fabsf(x) < lim);
    if (mode == FFN_CM_ACT || mode == FFN_CM_ACT_MUL) {
        o.y0 = o.y1 = mode == FFN_CM_ACT ? v : v * a;
        rare = rare || (mode == FFN_CM_ACT_MUL && fabsf(x) < 0x1p-100f);
    } else {
        const bool both = mode == FFN_CM_BOTH;
        const float er = e * r;
        const float kx = gelu ? w * fmaf(x2, FFN_CM_M3_HI, FFN_CM_K_HI) : qg ? FFN_CM_QG_K * x : x;
        const float d = sig ? er * r : r * fmaf(kx, er, 1.0f);
        o.y0 = d * (both ? a * b : a);
        o.y1 = both ? v * b : o.y0;
        rare = rare || (both && fabsf(x) < 0x1p-100f);
    }
    o.rare = rare;
    return o;
}

// --- one element of an op ------------------------------------------------------------------------

// The fast lane of activation act in mode `mode`, and whether the lane is rare.
FFN_CM struct ffn_cm_res ffn_cm_act_fast(const struct ffn_cm_tabs *T, enum ffn_act act,
                                         enum ffn_cm_mode mode, bool acc, float x, float a,
                                         float b) {
    switch (act) {
    case FFN_ACT_GELU_TANH: return ffn_cm_gelu_tanh(T, mode, acc, x, a, b);
    case FFN_ACT_GELU_ERF: return ffn_cm_gelu_erf(T, mode, acc, x, a, b);
    case FFN_ACT_SILU:
    case FFN_ACT_QUICK_GELU: return ffn_cm_xsig(T, act, mode, x, a, b);
    case FFN_ACT_SIGMOID: return ffn_cm_sigmoid(T, mode, x, a, b);
    default: return ffn_cm_relu_ident(act, mode, x, a, b);
    }
}

// The reference's outputs for a rare lane (out of line: one copy per activation).
FFN_CM struct ffn_cm_out ffn_cm_act_ref(enum ffn_act act, enum ffn_cm_mode mode, float x, float a,
                                        float b) {
    switch (act) {
    case FFN_ACT_GELU_TANH: return ffn_cm_ref_gelu_tanh(mode, x, a, b);
    case FFN_ACT_GELU_ERF: return ffn_cm_ref_gelu_erf(mode, x, a, b);
    case FFN_ACT_SILU: return ffn_cm_ref_silu(mode, x, a, b);
    case FFN_ACT_QUICK_GELU: return ffn_cm_ref_quick_gelu(mode, x, a, b);
    case FFN_ACT_SIGMOID: return ffn_cm_ref_sigmoid(mode, x, a, b);
    default: {  // ReLU and identity have no rare lanes; their exact math serves
        const struct ffn_cm_res r = ffn_cm_relu_ident(act, mode, x, a, b);
        const struct ffn_cm_out o = {r.y0, r.y1};
        return o;
    }
    }
}

// The mode of op family `op` (FFN_KOP_*: 0 act fwd, 1 act bwd, 2 glu fwd, 3 glu bwd); parity's
// gated forward evaluates act(gate) alone.
FFN_CM enum ffn_cm_mode ffn_cm_mode_of(int op, bool parity) {
    return op == 0   ? FFN_CM_ACT
           : op == 1 ? FFN_CM_DACT_MUL
           : op == 2 ? (parity ? FFN_CM_ACT : FFN_CM_ACT_MUL)
                     : FFN_CM_BOTH;
}

// The fast lane of one element of op family `op`, in f32 before the output's rounding to `out`
// (the 16-bit tier for a bf16 / f16 out): inputs x (x or gate), a (dy or up), b (dh); rare: the
// outputs are to be replaced by ffn_cm_elem_ref_in's. parity: gated forward with a 16-bit output,
// h = round(round(act(gate))·round(up)).
FFN_CM struct ffn_cm_res ffn_cm_elem_fast(const struct ffn_cm_tabs *T, int op, enum ffn_act act,
                                          bool acc, bool parity, enum ffn_dtype out, float x,
                                          float a, float b) {
    const enum ffn_cm_mode mode = ffn_cm_mode_of(op, parity);
    if (ffn_cm_tier16_on(act, out, acc, parity))
        return ffn_cm_tier16(act, mode, x, a, mode == FFN_CM_BOTH ? b : a);
    struct ffn_cm_res o = ffn_cm_act_fast(T, act, mode, acc, x, a, mode == FFN_CM_BOTH ? b : a);
    if (op == 2 && parity) o.y0 = o.y1 = ffn_cm_round_to(out, o.y0) * ffn_cm_round_to(out, a);
    return o;
}

// The outputs of a rare lane of op family `op` (the reference; parity as above). inl: the
// reference's double math in line (ffn_cm_ref_eval), else through its out-of-line copy per
// activation (ffn_cm_act_ref); the same operations either way.
FFN_CM struct ffn_cm_out ffn_cm_elem_ref_in(int op, enum ffn_act act, bool parity,
                                            enum ffn_dtype out, float x, float a, float b,
                                            bool inl) {
    const enum ffn_cm_mode mode = ffn_cm_mode_of(op, parity);
    const float m = mode == FFN_CM_BOTH ? b : a;
    struct ffn_cm_out o =
        inl ? ffn_cm_ref_eval(act, mode, x, a, m) : ffn_cm_act_ref(act, mode, x, a, m);
    if (op == 2 && parity) o.y0 = o.y1 = ffn_cm_round_to(out, o.y0) * ffn_cm_round_to(out, a);
    return o;
}

// The outputs of one element of op family `op`: the fast lane, or the reference where it is rare
// (inl as above).
FFN_CM struct ffn_cm_out ffn_cm_elem_in(const struct ffn_cm_tabs *T, int op, enum ffn_act act,
                                        bool acc, bool parity, enum ffn_dtype out, float x, float a,
                                        float b, bool inl) {
    const struct ffn_cm_res r = ffn_cm_elem_fast(T, op, act, acc, parity, out, x, a, b);
    if (r.rare) return ffn_cm_elem_ref_in(op, act, parity, out, x, a, b, inl);
    const struct ffn_cm_out o = {r.y0, r.y1};
    return o;
}

FFN_CM struct ffn_cm_out ffn_cm_elem(const struct ffn_cm_tabs *T, int op, enum ffn_act act,
                                     bool acc, bool parity, enum ffn_dtype out, float x, float a,
                                     float b) {
    return ffn_cm_elem_in(T, op, act, acc, parity, out, x, a, b, false);
}

// Whether act's math reads the tables (ReLU and identity do not).
FFN_CM bool ffn_cm_uses_tabs(enum ffn_act act) {
    return act != FFN_ACT_RELU && act != FFN_ACT_IDENTITY;
}

#endif  // FFN_CUDA_ACT_MATH_H
