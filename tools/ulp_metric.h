// ulp_metric.h — the ulp metric of the accuracy tools and tests (docs/numerics.md, "The ulp
// metric") and the bound table, as inline functions that compile both as C (tools/oracle.c, which
// exports them as ffn_count_ulp, ffn_ulp_error, ...) and as CUDA device code (the GPU sweep of
// `ffn ulp --backend cuda`, tools/cuda/ulp_kernels.cu): one definition of what an ulp error is.
#ifndef FFN_ULP_METRIC_H
#define FFN_ULP_METRIC_H

#include <math.h>
#include <stdbool.h>

#include "cpu/scalar/act_ref.h"  // FFN_REF_FN, the constants of the definitions
#include "ffn.h"

// Returned for a wrong NaN, infinity or sign of an exact zero: larger than every bound.
#define FFN_ULP_HUGE 1e9

// The op families: the values of enum ffn_op (ffn.h), as plain numbers for the device code.
#define FFN_UM_ACT_FWD 0
#define FFN_UM_ACT_BWD 1
#define FFN_UM_GLU_FWD 2
#define FFN_UM_GLU_BWD 3

// Storage formats: significand bits (hidden bit included), exponents of the smallest and largest
// normal binades, and the overflow threshold |v| ≥ (2 - 2^-prec)·2^emax that rounds to inf.
FFN_REF_FN int ffn_um_prec(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_BF16 ? 8 : dt == FFN_DTYPE_F16 ? 11 : 24;
}
FFN_REF_FN int ffn_um_emin(enum ffn_dtype dt) { return dt == FFN_DTYPE_F16 ? -14 : -126; }
FFN_REF_FN int ffn_um_emax(enum ffn_dtype dt) { return dt == FFN_DTYPE_F16 ? 15 : 127; }
FFN_REF_FN double ffn_um_overflow(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_BF16 ? 0x1.ffp127 : dt == FFN_DTYPE_F16 ? 65520.0 : 0x1.ffffffp127;
}

// Spacing of dt's values at magnitude m (finite, ≥ 0).
FFN_REF_FN double ffn_um_spacing(double m, enum ffn_dtype dt) {
    int e = m > 0 && isfinite(m) ? ilogb(m) : (m > 0 ? ffn_um_emax(dt) : ffn_um_emin(dt));
    if (e < ffn_um_emin(dt)) e = ffn_um_emin(dt);
    if (e > ffn_um_emax(dt)) e = ffn_um_emax(dt);
    return ldexp(1.0, e - (ffn_um_prec(dt) - 1));
}

// v rounded to the nearest value of dt (ties to even; subnormals; ±inf past the overflow
// threshold), by double arithmetic independent of the library's bit manipulation.
FFN_REF_FN double ffn_um_round(double v, enum ffn_dtype dt) {
    if (!isfinite(v) || v == 0) return v;
    const double a = fabs(v);
    if (a >= ffn_um_overflow(dt)) return copysign(INFINITY, v);
    const double q = ffn_um_spacing(a, dt);
    return copysign(nearbyint(a / q) * q, v);  // a/q is exact: q is a power of two
}

// True when v lies within `margin` ulps of dt of a rounding boundary of dt (a midpoint, or the
// overflow threshold).
FFN_REF_FN bool ffn_um_near_boundary(double v, enum ffn_dtype dt, double margin) {
    if (!isfinite(v) || v == 0) return false;
    const double a = fabs(v), q = ffn_um_spacing(a, dt);
    const double pos = a / q - floor(a / q);  // 0: a value of dt; 0.5: a midpoint
    if (fabs(pos - 0.5) < margin) return true;
    return fabs(a - ffn_um_overflow(dt)) < margin * q;
}

// SLEEF-style error of `got` (a value stored in dt) against `exact`, in ulps of dt:
// |got - exact| / ulp(max(|exact|, scale)); see ffn_count_ulp in oracle.h.
FFN_REF_FN double ffn_um_count_ulp(double got, double exact, enum ffn_dtype dt, double scale,
                                   bool strict_zero) {
    if (isnan(exact)) return isnan(got) ? 0.0 : FFN_ULP_HUGE;
    if (isnan(got)) return FFN_ULP_HUGE;
    if (isinf(got)) return got == ffn_um_round(exact, dt) ? 0.0 : FFN_ULP_HUGE;
    if (isinf(exact)) return FFN_ULP_HUGE;
    // A result that rounds to zero must carry the sign of the exact value (forward ops).
    if (strict_zero && got == 0 && ffn_um_round(exact, dt) == 0 && !signbit(got) != !signbit(exact))
        return FFN_ULP_HUGE;
    if (got == 0 && exact == 0) return 0.0;
    const double m = fabs(exact) > scale ? fabs(exact) : scale;
    return fabs(got - exact) / ffn_um_spacing(m, dt);
}

// The two terms of act'(x) = t1 + t2 (t2 = 0 where act' is a single term), in double.
FFN_REF_FN void ffn_um_dact_terms(enum ffn_act act, double x, double *t1, double *t2) {
    *t1 = *t2 = 0;
    switch (act) {
    case FFN_ACT_GELU_TANH: {
        const double t = 2.0 * FFN_SQRT_2_OVER_PI * (x + FFN_GELU_C * x * x * x);
        const double du2 = 2.0 * FFN_SQRT_2_OVER_PI * (1.0 + 3.0 * FFN_GELU_C * x * x);
        *t1 = ffn_ref_sigmoid(t);
        *t2 = x * ffn_ref_sigmoid(t) * ffn_ref_sigmoid(-t) * du2;
        break;
    }
    case FFN_ACT_GELU_ERF:
        *t1 = 0.5 * erfc(-x / sqrt(2.0));
        *t2 = x * FFN_INV_SQRT_2PI * exp(-0.5 * x * x);
        break;
    case FFN_ACT_SILU:
    case FFN_ACT_QUICK_GELU: {
        const double t = act == FFN_ACT_SILU ? x : FFN_QUICK_GELU_A * x;
        *t1 = ffn_ref_sigmoid(t);
        *t2 = t * ffn_ref_sigmoid(t) * ffn_ref_sigmoid(-t);
        break;
    }
    default: break;
    }
    if (isnan(*t2)) *t2 = 0;  // 0·inf at huge |x|, where the term vanishes
}

// Magnitude of the largest term of act'(x), or 0 where act' is a single term.
FFN_REF_FN double ffn_um_dact_scale(enum ffn_act act, double x) {
    if (!isfinite(x)) return 0;
    double t1, t2;
    ffn_um_dact_terms(act, x, &t1, &t2);
    if (t2 == 0) return 0;  // a single term: the relative measure
    return fabs(t1) > fabs(t2) ? fabs(t1) : fabs(t2);
}

// The error of output `out` (0, or 1 for dup) of a kernel of op family `op` (FFN_UM_*), in ulps of
// dt, with the measure the bound table uses (see ffn_ulp_error in oracle.h).
FFN_REF_FN double ffn_um_ulp_error(int op, int out, enum ffn_act act, enum ffn_dtype dt, double got,
                                   double exact, float x, float m1, float m2) {
    switch (op) {
    case FFN_UM_ACT_FWD:
    case FFN_UM_GLU_FWD: return ffn_um_count_ulp(got, exact, dt, 0, true);
    case FFN_UM_ACT_BWD:
        return ffn_um_count_ulp(got, exact, dt, fabs((double)m1) * ffn_um_dact_scale(act, x),
                                false);
    case FFN_UM_GLU_BWD:
        if (out == 1) return ffn_um_count_ulp(got, exact, dt, 0, false);  // dup = dh·act(gate)
        return ffn_um_count_ulp(got, exact, dt,
                                fabs((double)m1 * (double)m2) * ffn_um_dact_scale(act, x), false);
    default: return FFN_ULP_HUGE;
    }
}

// The bound table (docs/numerics.md copies it: change both). Forward bounds hold for y = act(x)
// and the gated h = act(gate)·up; backward bounds for dx, dgate (absolute near the derivative's
// zero) and dup. accurate: FFN_ACCURACY_HIGH.
FFN_REF_FN double ffn_um_bound(int op, enum ffn_act act, bool accurate) {
    if ((unsigned)act >= FFN_ACT_COUNT) return 0;
    if (op == FFN_UM_ACT_FWD || op == FFN_UM_GLU_FWD) {
        const bool gelu = act == FFN_ACT_GELU_TANH || act == FFN_ACT_GELU_ERF;
        return gelu && !accurate ? 4 : 2;
    }
    return 8;
}

#endif  // FFN_ULP_METRIC_H
