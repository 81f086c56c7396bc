// oracle.h — the accuracy oracle shared by the `ffn ulp` / `ffn check` tools and the test suite:
// correctly rounded values of every activation, its derivative and the gated products from MPFR,
// the ulp metric (SLEEF's count_ulp, plus the absolute form near the zeros of a derivative), the
// one table of ulp bounds (docs/numerics.md copies it), and the input sets of the sweeps.
// Not part of the library: libffn never links MPFR.
#ifndef FFN_ORACLE_H
#define FFN_ORACLE_H

#include <mpfr.h>
#include <stdbool.h>
#include <stdint.h>

#include "ffn.h"

// --- the MPFR oracle ----------------------------------------------------------------------------
// One oracle per thread (it owns its MPFR temporaries); no global state besides MPFR's own.
// Working precision starts at FFN_ORACLE_PREC0 bits and doubles (Ziv's strategy) until the
// result rounds unambiguously to f32, allowing for the bits lost to cancellation (a derivative
// near its zero) and to the amplification of an argument's error by exp/erfc.
#define FFN_ORACLE_PREC0 128
#define FFN_ORACLE_PREC_MAX 2048

struct ffn_oracle {
    mpfr_prec_t prec;                  // precision the temporaries currently have
    mpfr_t xv;                         // the input x (or gate), exactly
    mpfr_t t, s, sc, a, b, r, w1, w2;  // working values
    mpfr_t k_tanh;                     // √(2/π)
    mpfr_t c_tanh;                     // 0.044715 (the decimal constant, to `prec` bits)
    mpfr_t a_quick;                    // 1.702
    mpfr_t inv_sqrt2, inv_sqrt2pi;     // 1/√2, 1/√(2π)
    int64_t n_eval;                    // evaluations done
    int64_t n_retry;                   // of which needed more than FFN_ORACLE_PREC0 bits
    int64_t n_unsure;                  // gave up at FFN_ORACLE_PREC_MAX (should stay 0)
};

void ffn_oracle_init(struct ffn_oracle *o);
void ffn_oracle_clear(struct ffn_oracle *o);

// The value v = f(x) · m1 · m2, where f is act (deriv = false) or act' (deriv = true), rounded
// once. Returns v rounded to double (the "exact" value the ulp metric uses; a signed zero when
// |v| < 2^-152, which rounds to ±0 in every storage type) and stores the correctly rounded f32
// in *f32_out when non-NULL. Special values follow the contract: NaN in ->
// NaN; act(+inf) = +inf (sigmoid: 1), act(-inf) = -0 (relu, sigmoid: +0; identity: -inf);
// act'(±inf) is its limit (1 or 0). The product with m1, m2 follows IEEE rules (0·inf = NaN).
// The unary and gated ops are:
//   y = act(x)               ffn_oracle_eval(o, act, false, x, 1, 1)
//   dx = dy·act'(x)          ffn_oracle_eval(o, act, true, x, dy, 1)
//   h = act(gate)·up         ffn_oracle_eval(o, act, false, gate, up, 1)
//   dgate = dh·up·act'(gate) ffn_oracle_eval(o, act, true, gate, up, dh)
//   dup = dh·act(gate)       ffn_oracle_eval(o, act, false, gate, dh, 1)
double ffn_oracle_eval(struct ffn_oracle *o, enum ffn_act act, bool deriv, float x, float m1,
                       float m2, float *f32_out);

// --- the ulp metric -----------------------------------------------------------------------------
// Returned for a wrong NaN, infinity or sign of an exact zero: larger than every bound.
#ifndef FFN_ULP_HUGE
#    define FFN_ULP_HUGE 1e9
#endif

// SLEEF-style error of `got` (a value stored in `dt`) against `exact`, in ulps of `dt`:
// |got - exact| / ulp(max(|exact|, scale)), where ulp(v) is the spacing of `dt` at v (the
// subnormal spacing below the smallest normal, the largest spacing above the largest finite).
// scale = 0 gives the plain relative measure; scale > 0 the absolute measure used near the
// zeros of a derivative. NaN vs NaN = 0; a NaN, an infinity or an overflow that does not match
// = FFN_ULP_HUGE; both zero: 0, or FFN_ULP_HUGE when strict_zero and the signs differ.
double ffn_count_ulp(double got, double exact, enum ffn_dtype dt, double scale, bool strict_zero);

// Magnitude of the largest term of act'(x) (see docs/numerics.md): σ(x) or |x·σ(x)·σ(-x)| for
// SiLU', Φ(x) or |x·φ(x)| for GeLU-erf', σ(2u) or |2x·u'·σ(2u)σ(-2u)| for GeLU-tanh',
// σ(ax) or |a·x·σ(ax)σ(-ax)| for quick-GeLU'; 0 where act' is a single term. In double.
double ffn_dact_scale(enum ffn_act act, double x);

// The error of output `out` (0, or 1 for dup) of a kernel of family `op`, in ulps of `dt`, with
// the measure the bound table uses: relative for forward outputs (zero signs strict), and for
// dx / dgate absolute in ulps of max(|exact|, |dy|·ffn_dact_scale(x)) (|dh·up|·... for dgate).
// x is the input (gate), m1 the first factor (dy, or up), m2 the second (dh).
double ffn_ulp_error(enum ffn_op op, int out, enum ffn_act act, enum ffn_dtype dt, double got,
                     double exact, float x, float m1, float m2);

// The bound on ffn_ulp_error for every kernel (docs/numerics.md, "Bounds"), in ulps of the
// output's storage type. accurate: the FFN_ACCURACY_HIGH tier.
double ffn_ulp_bound(enum ffn_op op, enum ffn_act act, bool accurate);

// Rounds v to the nearest value of `dt` (ties to even; subnormals; ±inf past the overflow
// threshold), by double arithmetic independent of the library's bit manipulation.
double ffn_round_double(double v, enum ffn_dtype dt);

// True when v lies within `margin` ulps of `dt` of a rounding boundary of `dt`: a midpoint between
// two neighbours, or the overflow threshold. (Not the powers of two where the spacing changes:
// they affect the size of an ulp, not the rounding.)
bool ffn_near_rounding_boundary(double v, enum ffn_dtype dt, double margin);

// --- input sets ---------------------------------------------------------------------------------
// The zero of act' in [-2, -0.5] (SiLU' -1.2785, GeLU' -0.7518, quick-GeLU' -0.7511), or NAN when
// act' has none (relu, sigmoid, identity).
double ffn_dact_zero(enum ffn_act act);

// Every `stride`-th f32 bit pattern from `start` (all 2^32 patterns / stride values; NaNs
// included). Writes min(count, cap) values to out when out is non-NULL; returns the count.
int64_t ffn_inputs_strided(float *out, int64_t cap, uint32_t stride, uint32_t start);

// The hard regions (docs/numerics.md): the GeLU negative tail [-15, -3], |x| near 0 with the
// subnormals, near overflow, the SiLU tail [-105, -80], the neighbourhood of every derivative
// zero, and a dense [-10, 10]. Same contract as ffn_inputs_strided.
int64_t ffn_inputs_hard(float *out, int64_t cap);

// Value of a f32 bit pattern, and the reverse.
float ffn_f32_from_bits(uint32_t u);
uint32_t ffn_f32_bits(float x);

#endif  // FFN_ORACLE_H
