// act_ref.h — the reference definitions of every activation and its derivative, in double, as
// inline functions that compile both as C (act_ref.c: the scalar reference, the oracle of every
// kernel) and as CUDA device code (src/cuda: the rare lanes and the accurate tier of the GPU
// kernels; the GPU ulp sweep of tools/cuda). One source, so the CPU and the GPU evaluate the same
// formulas; only exp and erfc come from each side's own libm (glibc, CUDA's libdevice), both
// within a few ulp of double, so the results rounded to f32 agree except within ~1e-7 ulp of a
// rounding boundary. Built without contraction on both sides (-ffp-contract=off, -fmad=false).
#ifndef FFN_ACT_REF_H
#define FFN_ACT_REF_H

#include <math.h>

#include "ffn.h"

#if defined(__CUDACC__)
#    define FFN_REF_FN static __host__ __device__ inline
#else
#    define FFN_REF_FN static inline
#endif

#define FFN_SQRT_2_OVER_PI 0.79788456080286535587989211986876373695  // √(2/π)
#define FFN_INV_SQRT_2 0.70710678118654752440084436210484903928      // 1/√2
#define FFN_INV_SQRT_2PI 0.39894228040143267793994605993438186848    // 1/√(2π)
#define FFN_GELU_C 0.044715                                          // tanh-GeLU cubic term
#define FFN_QUICK_GELU_A 1.702                                       // quick-GeLU slope

// e^t. On the device, CUDA's exp (libdevice 13.0) returns 0 for every t ≤ -745, where the
// correctly rounded value (glibc's) is still the smallest subnormal 2^-1074 down to
// t = -745.1332 (ln 2^-1075): the squared half, (e^(t/2))², rounds once into the subnormals
// instead, so both sides agree there (a difference that shows as inf·0 = NaN against inf·2^-1074
// = inf once a derivative is multiplied by an infinite dy).
FFN_REF_FN double ffn_ref_exp(double t) {
#if defined(__CUDA_ARCH__)
    if (t < -708.0) {
        const double h = exp(0.5 * t);
        return h * h;
    }
#endif
    return exp(t);
}

// σ(t) = 1/(1+e^-t), evaluated so that exp never overflows: for t < 0, e^t/(1+e^t).
FFN_REF_FN double ffn_ref_sigmoid(double t) {
    if (t >= 0) return 1.0 / (1.0 + ffn_ref_exp(-t));
    const double e = ffn_ref_exp(t);
    return e / (1.0 + e);
}

// gelu_tanh(x) = 0.5x(1+tanh u) = x·σ(2u), u = √(2/π)(x + 0.044715x³): no 1+tanh cancellation.
FFN_REF_FN double ffn_ref_gelu_tanh(double x) {
    const double u = FFN_SQRT_2_OVER_PI * (x + FFN_GELU_C * x * x * x);
    return x * ffn_ref_sigmoid(2.0 * u);
}

// gelu_tanh'(x) = s + x·s(1-s)·2u', s = σ(2u), 1-s = σ(-2u), u' = √(2/π)(1 + 3·0.044715x²).
FFN_REF_FN double ffn_ref_gelu_tanh_d(double x) {
    const double u = FFN_SQRT_2_OVER_PI * (x + FFN_GELU_C * x * x * x);
    const double du = FFN_SQRT_2_OVER_PI * (1.0 + 3.0 * FFN_GELU_C * x * x);
    const double s = ffn_ref_sigmoid(2.0 * u), sc = ffn_ref_sigmoid(-2.0 * u);
    return s + x * s * sc * 2.0 * du;
}

// gelu_erf(x) = x·Φ(x) = 0.5·x·erfc(-x/√2): erfc keeps the negative tail's relative accuracy.
FFN_REF_FN double ffn_ref_gelu_erf(double x) { return 0.5 * x * erfc(-x * FFN_INV_SQRT_2); }

// gelu_erf'(x) = Φ(x) + x·φ(x), φ(x) = e^{-x²/2}/√(2π).
FFN_REF_FN double ffn_ref_gelu_erf_d(double x) {
    return 0.5 * erfc(-x * FFN_INV_SQRT_2) + x * FFN_INV_SQRT_2PI * ffn_ref_exp(-0.5 * x * x);
}

// silu(x) = x·σ(x);  silu'(x) = σ(x) + x·σ(x)·σ(-x).
FFN_REF_FN double ffn_ref_silu(double x) { return x * ffn_ref_sigmoid(x); }
FFN_REF_FN double ffn_ref_silu_d(double x) {
    const double s = ffn_ref_sigmoid(x), sc = ffn_ref_sigmoid(-x);
    return s + x * s * sc;
}

// quick_gelu(x) = x·σ(ax), a = 1.702;  quick_gelu'(x) = σ(ax) + a·x·σ(ax)·σ(-ax).
FFN_REF_FN double ffn_ref_quick_gelu(double x) { return x * ffn_ref_sigmoid(FFN_QUICK_GELU_A * x); }
FFN_REF_FN double ffn_ref_quick_gelu_d(double x) {
    const double s = ffn_ref_sigmoid(FFN_QUICK_GELU_A * x),
                 sc = ffn_ref_sigmoid(-FFN_QUICK_GELU_A * x);
    return s + FFN_QUICK_GELU_A * x * s * sc;
}

// act(x) for every activation, special values included.
FFN_REF_FN double ffn_ref_act_eval(enum ffn_act act, double x) {
    if (isnan(x)) return x;
    if (isinf(x)) {
        // Limits: GeLU/SiLU/quick-GeLU(+inf) = +inf, (-inf) = -0; never -inf·0.
        switch (act) {
        case FFN_ACT_RELU: return x > 0 ? x : 0.0;
        case FFN_ACT_SIGMOID: return x > 0 ? 1.0 : 0.0;
        case FFN_ACT_IDENTITY: return x;
        default: return x > 0 ? x : -0.0;
        }
    }
    switch (act) {
    case FFN_ACT_GELU_TANH: return ffn_ref_gelu_tanh(x);
    case FFN_ACT_GELU_ERF: return ffn_ref_gelu_erf(x);
    case FFN_ACT_SILU: return ffn_ref_silu(x);
    case FFN_ACT_RELU: return x > 0 ? x : 0.0;
    case FFN_ACT_SIGMOID: return ffn_ref_sigmoid(x);
    case FFN_ACT_IDENTITY: return x;
    case FFN_ACT_QUICK_GELU: return ffn_ref_quick_gelu(x);
    default: return NAN;
    }
}

// act'(x) for every activation, special values included.
FFN_REF_FN double ffn_ref_dact_eval(enum ffn_act act, double x) {
    if (isnan(x)) return x;
    if (isinf(x)) {
        // Limits of the derivative: 1 at +inf for the x-like activations, 0 at -inf; sigmoid'
        // tends to 0 at both ends.
        switch (act) {
        case FFN_ACT_SIGMOID: return 0.0;
        case FFN_ACT_IDENTITY: return 1.0;
        default: return x > 0 ? 1.0 : 0.0;
        }
    }
    switch (act) {
    case FFN_ACT_GELU_TANH: return ffn_ref_gelu_tanh_d(x);
    case FFN_ACT_GELU_ERF: return ffn_ref_gelu_erf_d(x);
    case FFN_ACT_SILU: return ffn_ref_silu_d(x);
    case FFN_ACT_RELU: return x > 0 ? 1.0 : 0.0;
    case FFN_ACT_SIGMOID: {
        const double s = ffn_ref_sigmoid(x), sc = ffn_ref_sigmoid(-x);
        return s * sc;
    }
    case FFN_ACT_IDENTITY: return 1.0;
    case FFN_ACT_QUICK_GELU: return ffn_ref_quick_gelu_d(x);
    default: return NAN;
    }
}

#endif  // FFN_ACT_REF_H
