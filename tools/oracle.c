// oracle.c — the accuracy oracle (see oracle.h): MPFR evaluation of every activation, its
// derivative and the gated products, correctly rounded to f32 by Ziv's strategy; the ulp metric;
// the bound table; the input sets of the sweeps. Used by `ffn ulp`, `ffn check` and the tests
// (which compile this file into their executables); never by the library.
#include "oracle.h"

#include "ulp_metric.h"

#include <limits.h>
#include <math.h>
#include <string.h>

// --- constants ---------------------------------------------------------------------------------
// The definitions use the decimal constants exactly as written: 0.044715 and 1.702.
#define FFN__GELU_C_STR "0.044715"
#define FFN__QUICK_A_STR "1.702"
#define FFN__GELU_C 0.044715
#define FFN__QUICK_A 1.702
#define FFN__SQRT_2_OVER_PI 0.79788456080286535587989211986876373695  // √(2/π)
#define FFN__INV_SQRT_2PI 0.39894228040143267793994605993438186848    // 1/√(2π)
#define FFN__LOG2E 1.44269504088896340735992468100189213743           // log2(e)

// Bits of slack for the rounding errors of the ~15 MPFR operations of one evaluation.
#define FFN__GUARD_BITS 8
// A result is "saturated" when the part that separates it from x·m (forward) or 1·m
// (derivative) is below 2^-FFN__SAT_BITS relative: see ffn__saturated().
#define FFN__SAT_BITS (FFN_ORACLE_PREC0 + 16)
// Φ(x) for x ≤ -FFN__MILLS_MIN by the continued fraction (ffn__mills), else by mpfr_erfc. Terms:
// about FFN__MILLS_N_FACTOR·(p·ln2/t)², doubled until two convergents agree.
#define FFN__MILLS_MIN 6
#define FFN__MILLS_N_FACTOR 0.6
#define FFN__MILLS_MAX_N 16384
// log2 of a magnitude that rounds to ±0 in every storage type (below half of 2^-149).
#define FFN__ZERO_LOG2 (-152.0)
// Below this |x| the first-order term of act(x) or act'(x) is under FFN_ORACLE_PREC0 bits.
#define FFN__TINY_X 0x1p-90f

// --- the MPFR oracle ---------------------------------------------------------------------------

#define FFN__N_TEMPS 14

static mpfr_ptr ffn__temp(struct ffn_oracle *o, int i) {
    mpfr_ptr all[FFN__N_TEMPS] = {o->xv,     o->t,       o->s,         o->sc,         o->a,
                                  o->b,      o->r,       o->w1,        o->w2,         o->k_tanh,
                                  o->c_tanh, o->a_quick, o->inv_sqrt2, o->inv_sqrt2pi};
    return all[i];
}

// Sets every temporary to p bits and recomputes the constants at that precision.
static void ffn__set_prec(struct ffn_oracle *o, mpfr_prec_t p) {
    if (o->prec == p) return;
    for (int i = 0; i < FFN__N_TEMPS; i++) mpfr_set_prec(ffn__temp(o, i), p);
    o->prec = p;
    mpfr_const_pi(o->w1, MPFR_RNDN);
    mpfr_ui_div(o->k_tanh, 2, o->w1, MPFR_RNDN);
    mpfr_sqrt(o->k_tanh, o->k_tanh, MPFR_RNDN);  // √(2/π)
    mpfr_set_str(o->c_tanh, FFN__GELU_C_STR, 10, MPFR_RNDN);
    mpfr_set_str(o->a_quick, FFN__QUICK_A_STR, 10, MPFR_RNDN);
    mpfr_sqrt_ui(o->inv_sqrt2, 2, MPFR_RNDN);
    mpfr_ui_div(o->inv_sqrt2, 1, o->inv_sqrt2, MPFR_RNDN);  // 1/√2
    mpfr_mul_2ui(o->w1, o->w1, 1, MPFR_RNDN);
    mpfr_sqrt(o->w1, o->w1, MPFR_RNDN);
    mpfr_ui_div(o->inv_sqrt2pi, 1, o->w1, MPFR_RNDN);  // 1/√(2π)
}

void ffn_oracle_init(struct ffn_oracle *o) {
    memset(o, 0, sizeof *o);
    for (int i = 0; i < FFN__N_TEMPS; i++) mpfr_init2(ffn__temp(o, i), FFN_ORACLE_PREC0);
    ffn__set_prec(o, FFN_ORACLE_PREC0 + 1);  // differs from the init precision: forces constants
    ffn__set_prec(o, FFN_ORACLE_PREC0);
}

void ffn_oracle_clear(struct ffn_oracle *o) {
    for (int i = 0; i < FFN__N_TEMPS; i++) mpfr_clear(ffn__temp(o, i));
}

// Bits by which exp/erfc amplify the relative error of an argument v: about log2|v|.
static long ffn__amp_bits(const mpfr_t v) {
    if (!mpfr_regular_p(v)) return 0;
    const long e = (long)mpfr_get_exp(v);
    return e > 0 ? e : 0;
}

// Bits lost to cancellation in r = a + b.
static long ffn__cancel_bits(const mpfr_t a, const mpfr_t b, const mpfr_t r) {
    if (!mpfr_regular_p(r)) return mpfr_zero_p(r) ? FFN_ORACLE_PREC_MAX : 0;
    long e = mpfr_regular_p(a) ? (long)mpfr_get_exp(a) : LONG_MIN;
    if (mpfr_regular_p(b) && (long)mpfr_get_exp(b) > e) e = (long)mpfr_get_exp(b);
    const long lost = e - (long)mpfr_get_exp(r);
    return lost > 0 ? lost : 0;
}

// r = σ(t): 1/(1+e^-t) for t ≥ 0, e^t/(1+e^t) for t < 0 (exp never overflows). Uses w1, w2.
static void ffn__sigma(struct ffn_oracle *o, mpfr_t r, const mpfr_t t) {
    if (mpfr_sgn(t) >= 0) {
        mpfr_neg(o->w1, t, MPFR_RNDN);
        mpfr_exp(o->w1, o->w1, MPFR_RNDN);
        mpfr_add_ui(o->w1, o->w1, 1, MPFR_RNDN);
        mpfr_ui_div(r, 1, o->w1, MPFR_RNDN);
    } else {
        mpfr_exp(o->w1, t, MPFR_RNDN);
        mpfr_add_ui(o->w2, o->w1, 1, MPFR_RNDN);
        mpfr_div(r, o->w1, o->w2, MPFR_RNDN);
    }
}

// Laplace's continued fraction of the Mills ratio: for t = -x > 0, Φ(x) = 1 - Φ(t) = φ(t)·R(t),
//   R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))),
// evaluated backwards from N terms. Its convergents alternate around R, so two consecutive ones
// bracket it and their difference bounds the truncation error. For t ≥ FFN__MILLS_MIN it is
// far cheaper than mpfr_erfc (~10 µs against 50-600 µs at 128 bits). Writes R(-x) to r and
// returns true, or false when N would exceed FFN__MILLS_MAX_N (the caller then uses erfc).
// Uses w1, w2, sc.
static bool ffn__mills(struct ffn_oracle *o, mpfr_t r, const mpfr_t x) {
    const double t = -mpfr_get_d(x, MPFR_RNDN);
    const double nats = (double)o->prec * 0.6931471805599453;
    long n = (long)(FFN__MILLS_N_FACTOR * (nats / t) * (nats / t)) + 8;
    for (; n <= FFN__MILLS_MAX_N; n *= 2) {
        for (int k = 0; k < 2; k++) {  // convergents n and n + 1
            mpfr_ptr s = k ? o->w2 : o->w1;
            mpfr_neg(s, x, MPFR_RNDN);
            for (long j = n + k; j >= 1; j--) {
                mpfr_ui_div(s, (unsigned long)j, s, MPFR_RNDN);
                mpfr_sub(s, s, x, MPFR_RNDN);  // t + j/s
            }
        }
        mpfr_sub(o->sc, o->w1, o->w2, MPFR_RNDN);
        if (mpfr_zero_p(o->sc) ||
            (long)mpfr_get_exp(o->sc) - (long)mpfr_get_exp(o->w1) < -(long)o->prec) {
            mpfr_ui_div(r, 1, o->w1, MPFR_RNDN);
            return true;
        }
    }
    return false;
}

// r = act(x) or act'(x) at the current precision, for finite non-zero x and the activations
// with a transcendental part. Returns an estimate of the bits lost (cancellation, amplification).
static long ffn__eval_p(struct ffn_oracle *o, enum ffn_act act, bool deriv, const mpfr_t x) {
    long lost = 0;
    switch (act) {
    case FFN_ACT_GELU_TANH:
        // t = 2u = 2·√(2/π)·(x + 0.044715x³); gelu = x·σ(t);
        // gelu' = σ(t) + x·σ(t)σ(-t)·2u', 2u' = 2√(2/π)(1 + 3·0.044715x²).
        mpfr_sqr(o->w1, x, MPFR_RNDN);
        mpfr_mul(o->w1, o->w1, x, MPFR_RNDN);
        mpfr_mul(o->w1, o->w1, o->c_tanh, MPFR_RNDN);
        mpfr_add(o->w1, o->w1, x, MPFR_RNDN);  // x and 0.044715x³ share a sign: no cancellation
        mpfr_mul(o->t, o->w1, o->k_tanh, MPFR_RNDN);
        mpfr_mul_2ui(o->t, o->t, 1, MPFR_RNDN);
        lost += ffn__amp_bits(o->t);
        ffn__sigma(o, o->s, o->t);
        if (!deriv) {
            mpfr_mul(o->r, x, o->s, MPFR_RNDN);
            break;
        }
        mpfr_neg(o->sc, o->t, MPFR_RNDN);
        ffn__sigma(o, o->sc, o->sc);
        mpfr_sqr(o->w1, x, MPFR_RNDN);
        mpfr_mul(o->w1, o->w1, o->c_tanh, MPFR_RNDN);
        mpfr_mul_ui(o->w1, o->w1, 3, MPFR_RNDN);
        mpfr_add_ui(o->w1, o->w1, 1, MPFR_RNDN);
        mpfr_mul(o->w1, o->w1, o->k_tanh, MPFR_RNDN);
        mpfr_mul_2ui(o->w1, o->w1, 1, MPFR_RNDN);  // 2u'
        mpfr_set(o->a, o->s, MPFR_RNDN);
        mpfr_mul(o->b, x, o->s, MPFR_RNDN);
        mpfr_mul(o->b, o->b, o->sc, MPFR_RNDN);
        mpfr_mul(o->b, o->b, o->w1, MPFR_RNDN);
        mpfr_add(o->r, o->a, o->b, MPFR_RNDN);
        lost += ffn__cancel_bits(o->a, o->b, o->r);
        break;
    case FFN_ACT_GELU_ERF:
        // gelu = x·Φ(x) = 0.5·x·erfc(-x/√2);  gelu' = Φ(x) + x·φ(x), φ(x) = e^{-x²/2}/√(2π).
        mpfr_sqr(o->t, x, MPFR_RNDN);
        mpfr_div_2ui(o->t, o->t, 1, MPFR_RNDN);
        lost += 2 * ffn__amp_bits(o->t) + 1;  // e^{-x²/2} and erfc: condition number ~x²
        mpfr_neg(o->t, o->t, MPFR_RNDN);
        mpfr_exp(o->t, o->t, MPFR_RNDN);
        mpfr_mul(o->t, o->t, o->inv_sqrt2pi, MPFR_RNDN);  // φ(x)
        if (mpfr_cmp_si(x, -FFN__MILLS_MIN) <= 0 && ffn__mills(o, o->s, x)) {
            mpfr_mul(o->s, o->s, o->t, MPFR_RNDN);  // Φ(x) = φ(x)·R(-x)
        } else {
            mpfr_mul(o->s, x, o->inv_sqrt2, MPFR_RNDN);
            mpfr_neg(o->s, o->s, MPFR_RNDN);
            mpfr_erfc(o->s, o->s, MPFR_RNDN);
            mpfr_div_2ui(o->s, o->s, 1, MPFR_RNDN);  // Φ(x)
        }
        if (!deriv) {
            mpfr_mul(o->r, x, o->s, MPFR_RNDN);
            break;
        }
        mpfr_mul(o->b, o->t, x, MPFR_RNDN);
        mpfr_set(o->a, o->s, MPFR_RNDN);
        mpfr_add(o->r, o->a, o->b, MPFR_RNDN);
        lost += ffn__cancel_bits(o->a, o->b, o->r);
        break;
    case FFN_ACT_SILU:
    case FFN_ACT_QUICK_GELU:
        // silu = x·σ(x), silu' = σ(x) + x·σ(x)σ(-x); quick_gelu = x·σ(ax),
        // quick_gelu' = σ(ax) + ax·σ(ax)σ(-ax), a = 1.702. Here t = x or ax.
        if (act == FFN_ACT_SILU)
            mpfr_set(o->t, x, MPFR_RNDN);
        else
            mpfr_mul(o->t, x, o->a_quick, MPFR_RNDN);
        lost += ffn__amp_bits(o->t);
        ffn__sigma(o, o->s, o->t);
        if (!deriv) {
            mpfr_mul(o->r, x, o->s, MPFR_RNDN);
            break;
        }
        mpfr_neg(o->sc, o->t, MPFR_RNDN);
        ffn__sigma(o, o->sc, o->sc);
        mpfr_set(o->a, o->s, MPFR_RNDN);
        mpfr_mul(o->b, o->t, o->s, MPFR_RNDN);
        mpfr_mul(o->b, o->b, o->sc, MPFR_RNDN);
        mpfr_add(o->r, o->a, o->b, MPFR_RNDN);
        lost += ffn__cancel_bits(o->a, o->b, o->r);
        break;
    case FFN_ACT_SIGMOID:
        // σ(x);  σ'(x) = σ(x)·σ(-x).
        lost += ffn__amp_bits(x);
        ffn__sigma(o, o->s, x);
        if (!deriv) {
            mpfr_set(o->r, o->s, MPFR_RNDN);
            break;
        }
        mpfr_neg(o->sc, x, MPFR_RNDN);
        ffn__sigma(o, o->sc, o->sc);
        mpfr_mul(o->r, o->s, o->sc, MPFR_RNDN);
        break;
    default: mpfr_set_nan(o->r); break;
    }
    return lost;
}

// The values the contract fixes, and the activations that are exact (relu, identity): sets r
// and returns true. NaN -> NaN; limits at ±inf; act(±0) and act'(0) (rational values there,
// which Ziv's loop could not separate from a rounding boundary).
static bool ffn__exact(struct ffn_oracle *o, enum ffn_act act, bool deriv, float x) {
    double v;
    if (isnan(x)) {
        mpfr_set_nan(o->r);
        return true;
    }
    if (act == FFN_ACT_RELU) {
        v = deriv ? (x > 0 ? 1.0 : 0.0) : (x > 0 ? (double)x : 0.0);  // relu(-0) = +0
    } else if (act == FFN_ACT_IDENTITY) {
        v = deriv ? 1.0 : (double)x;
    } else if (isinf(x)) {
        if (act == FFN_ACT_SIGMOID)
            v = deriv ? 0.0 : (x > 0 ? 1.0 : 0.0);
        else
            v = deriv ? (x > 0 ? 1.0 : 0.0) : (x > 0 ? (double)x : -0.0);  // act(-inf) = -0
    } else if (x == 0) {
        if (act == FFN_ACT_SIGMOID)
            v = deriv ? 0.25 : 0.5;
        else
            v = deriv ? 0.5 : (double)x;  // x·P(0) = ±0 with the sign of x
    } else {
        return false;
    }
    mpfr_set_d(o->r, v, MPFR_RNDN);
    return true;
}

// An upper bound on log2 ε(x), x > 0, where ε = 1 - P(x) is the complement of the sigmoid-like
// factor P of act (σ(t) or Φ(x)): σ(-t) < e^-t, 1 - Φ(x) < e^{-x²/2}. NAN for relu/identity.
static double ffn__log2_eps(enum ffn_act act, double x) {
    switch (act) {
    case FFN_ACT_GELU_TANH:
        return -2.0 * FFN__SQRT_2_OVER_PI * (x + FFN__GELU_C * x * x * x) * FFN__LOG2E;
    case FFN_ACT_GELU_ERF: return -0.5 * x * x * FFN__LOG2E;
    case FFN_ACT_SILU:
    case FFN_ACT_SIGMOID: return -x * FFN__LOG2E;
    case FFN_ACT_QUICK_GELU: return -FFN__QUICK_A * x * FFN__LOG2E;
    default: return NAN;
    }
}

// For x > 0 the sigmoid-like factor P of act (σ(t) or Φ(x)) tends to 1: act(x)·m = x·m·(1 - ε)
// and act'(x)·m = m·(1 + ε') with 0 < ε, ε'. When ε (times a cubic in x, which bounds the
// derivative's extra term) is below 2^-FFN__SAT_BITS the result is x·m (or m) nudged toward
// (away from) zero, which rounds correctly even at a midpoint, where exp/erfc would underflow
// and Ziv's loop would never terminate. Estimates log2(ε) in double; true when saturated.
static bool ffn__saturated(enum ffn_act act, bool deriv, float xf) {
    const double x = xf;
    if (!(x > 0)) return false;
    if (act == FFN_ACT_SIGMOID && deriv) return false;  // σ' → 0: no saturation to 1
    const double log2_eps = ffn__log2_eps(act, x);
    if (isnan(log2_eps)) return false;
    const double poly = 3.0 * log2(x > 2.0 ? x : 2.0) + 4.0;
    return log2_eps + poly < -(double)FFN__SAT_BITS;  // also true when log2_eps = -inf
}

// For x < 0 (and for σ' at x > 0) the value decays like ε of ffn__log2_eps(|x|). When a bound
// on log2|f(x)·m1·m2| lies below FFN__ZERO_LOG2, the result rounds to ±0 in every storage type:
// returns that bound's verdict and the sign of the (tiny) value in *neg.
static bool ffn__certainly_tiny(enum ffn_act act, bool deriv, float xf, float m1, float m2,
                                bool *neg) {
    const double x = xf;
    if (!isfinite(x) || x == 0 || !isfinite(m1) || !isfinite(m2) || m1 == 0 || m2 == 0)
        return false;
    const bool sigmoid = act == FFN_ACT_SIGMOID;
    if (x > 0 && !(sigmoid && deriv)) return false;
    const double ax = fabs(x);
    double bound = ffn__log2_eps(act, ax);
    if (isnan(bound)) return false;
    // x·P(x), P + x·P'(x): at most a cubic in |x| times ε.
    bound += 3.0 * log2(ax > 2.0 ? ax : 2.0) + 4.0;
    bound += log2(fabs((double)m1)) + log2(fabs((double)m2));
    if (!(bound < FFN__ZERO_LOG2)) return false;
    const bool neg_f = !sigmoid;  // act(x) and act'(x) for x ≪ 0 are negative; σ, σ' positive
    *neg = neg_f != ((m1 < 0) != (m2 < 0));
    return true;
}

double ffn_oracle_eval(struct ffn_oracle *o, enum ffn_act act, bool deriv, float x, float m1,
                       float m2, float *f32_out) {
    o->n_eval++;
    ffn__set_prec(o, FFN_ORACLE_PREC0);
    bool neg = false;
    if (ffn__exact(o, act, deriv, x)) {
        // r has ≤ 24 significant bits: r·m1·m2 (≤ 72 bits) is exact at FFN_ORACLE_PREC0.
        mpfr_mul_d(o->r, o->r, (double)m1, MPFR_RNDN);
        mpfr_mul_d(o->r, o->r, (double)m2, MPFR_RNDN);
    } else if (ffn__certainly_tiny(act, deriv, x, m1, m2, &neg)) {
        mpfr_set_zero(o->r, neg ? -1 : 1);
    } else if (ffn__saturated(act, deriv, x)) {
        const double base = deriv || act == FFN_ACT_SIGMOID ? 1.0 : (double)x;
        mpfr_set_d(o->r, base, MPFR_RNDN);
        mpfr_mul_d(o->r, o->r, (double)m1, MPFR_RNDN);
        mpfr_mul_d(o->r, o->r, (double)m2, MPFR_RNDN);
        if (mpfr_regular_p(o->r)) {
            // Forward: |value| is just below |r|; derivative: just above.
            if ((mpfr_sgn(o->r) > 0) == !deriv)
                mpfr_nextbelow(o->r);
            else
                mpfr_nextabove(o->r);
        }
    } else {
        // Near 0 the result is f(0)·(1 + O(x)): start where that O(x) is visible.
        const mpfr_prec_t p0 = fabsf(x) < FFN__TINY_X ? 2 * FFN_ORACLE_PREC0 : FFN_ORACLE_PREC0;
        for (mpfr_prec_t p = p0;; p *= 2) {
            ffn__set_prec(o, p);
            mpfr_set_flt(o->xv, x, MPFR_RNDN);  // exact
            const long lost = ffn__eval_p(o, act, deriv, o->xv);
            mpfr_mul_d(o->r, o->r, (double)m1, MPFR_RNDN);
            mpfr_mul_d(o->r, o->r, (double)m2, MPFR_RNDN);
            if (!mpfr_regular_p(o->r)) break;         // ±0 (underflow far below f32), NaN, ±inf
            const long e = (long)mpfr_get_exp(o->r);  // |r| in [2^(e-1), 2^e)
            if (e <= -151 || e >= 130) break;  // rounds to ±0 / ±inf whatever the last bits
            if (mpfr_can_round(o->r, (mpfr_exp_t)(p - lost - FFN__GUARD_BITS), MPFR_RNDN, MPFR_RNDZ,
                               25))
                break;
            if (p >= FFN_ORACLE_PREC_MAX) {
                o->n_unsure++;
                break;
            }
            if (p == p0) o->n_retry++;
        }
    }
    if (f32_out) *f32_out = mpfr_get_flt(o->r, MPFR_RNDN);
    return mpfr_get_d(o->r, MPFR_RNDN);
}

// --- the ulp metric and the bound table: tools/ulp_metric.h (shared with the GPU sweep) ------------

double ffn_round_double(double v, enum ffn_dtype dt) { return ffn_um_round(v, dt); }

bool ffn_near_rounding_boundary(double v, enum ffn_dtype dt, double margin) {
    return ffn_um_near_boundary(v, dt, margin);
}

double ffn_count_ulp(double got, double exact, enum ffn_dtype dt, double scale, bool strict_zero) {
    return ffn_um_count_ulp(got, exact, dt, scale, strict_zero);
}

double ffn_dact_scale(enum ffn_act act, double x) { return ffn_um_dact_scale(act, x); }

double ffn_ulp_error(enum ffn_op op, int out, enum ffn_act act, enum ffn_dtype dt, double got,
                     double exact, float x, float m1, float m2) {
    return ffn_um_ulp_error((int)op, out, act, dt, got, exact, x, m1, m2);
}

double ffn_ulp_bound(enum ffn_op op, enum ffn_act act, bool accurate) {
    return ffn_um_bound((int)op, act, accurate);
}

// --- input sets ----------------------------------------------------------------------------------

float ffn_f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

uint32_t ffn_f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

// Monotone map of finite floats to unsigned keys (and back): -max < ... < -0 < +0 < ... < max.
static uint32_t ffn__key(float x) {
    const uint32_t u = ffn_f32_bits(x);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static float ffn__unkey(uint32_t k) {
    return ffn_f32_from_bits(k & 0x80000000u ? k & 0x7fffffffu : ~k);
}

double ffn_dact_zero(enum ffn_act act) {
    double lo = -2.0, hi = -0.5, t1, t2;
    ffn_um_dact_terms(act, lo, &t1, &t2);
    if (t2 == 0) return NAN;
    // act'(-2) < 0 < act'(-0.5) for SiLU, both GeLUs and quick-GeLU: bisect.
    for (int i = 0; i < 200 && hi - lo > 0; i++) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        ffn_um_dact_terms(act, mid, &t1, &t2);
        if (t1 + t2 < 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int64_t ffn_inputs_strided(float *out, int64_t cap, uint32_t stride, uint32_t start) {
    int64_t n = 0;
    if (stride == 0) return 0;
    for (uint64_t k = start; k <= UINT32_MAX; k += stride, n++)
        if (out && n < cap) out[n] = ffn_f32_from_bits((uint32_t)k);
    return n;
}

// n points evenly spaced in key order over [lo, hi] (every float when there are fewer).
static int64_t ffn__region(float *out, int64_t cap, int64_t n0, float lo, float hi, int64_t n) {
    const uint32_t klo = ffn__key(lo), khi = ffn__key(hi);
    const uint64_t span = (uint64_t)(khi - klo) + 1;
    if ((uint64_t)n > span) n = (int64_t)span;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t k = klo + (n > 1 ? (uint64_t)i * (span - 1) / (uint64_t)(n - 1) : 0);
        if (out && n0 + i < cap) out[n0 + i] = ffn__unkey((uint32_t)k);
    }
    return n;
}

#define FFN__DZ_ULPS 2048   // every float within this many ulps of a derivative zero
#define FFN__DZ_WIDE 0.05f  // and a sample of [x0 - 0.05, x0 + 0.05]
#define FFN__DZ_WIDE_N 8192

int64_t ffn_inputs_hard(float *out, int64_t cap) {
    static const struct {
        float lo, hi;
        int64_t n;
    } regions[] = {
        {-15.0f, -3.0f, 32768},    // GeLU negative tail: the error of 2u is amplified by exp
        {-105.0f, -80.0f, 16384},  // SiLU tail: exp(-x) overflows, exp(x) is subnormal
        {80.0f, 100.0f, 4096},     // exp(x) overflows
        {-10.0f, 10.0f, 65536},    // the body
        {0x1p-126f, 1e-3f, 8192},       {-1e-3f, -0x1p-126f, 8192},      // tiny normals
        {0x1p-149f, 0x1p-126f, 4096},   {-0x1p-126f, -0x1p-149f, 4096},  // subnormals
        {1e12f, 1e14f, 2048},           {-1e14f, -1e12f, 2048},  // 0.044715x³ overflows f32
        {1e37f, 0x1.fffffep127f, 2048}, {-0x1.fffffep127f, -1e37f, 2048},  // near overflow
    };
    // The special values of the contract and of the two classic WGSL bugs (docs/numerics.md).
    static const float specials[] = {0.0f,     -0.0f,   INFINITY,  -INFINITY, NAN,    1000.0f,
                                     -1000.0f, 150.0f,  -150.0f,   -88.0f,    -92.0f, -104.0f,
                                     100.0f,   -100.0f, 0x1p-149f, -0x1p-149f};
    int64_t n = 0;
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++, n++)
        if (out && n < cap) out[n] = specials[i];
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++)
        n += ffn__region(out, cap, n, regions[i].lo, regions[i].hi, regions[i].n);
    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        const double z = ffn_dact_zero((enum ffn_act)a);
        if (isnan(z)) continue;
        const uint32_t k = ffn__key((float)z);
        n += ffn__region(out, cap, n, ffn__unkey(k - FFN__DZ_ULPS), ffn__unkey(k + FFN__DZ_ULPS),
                         2 * FFN__DZ_ULPS + 1);
        n += ffn__region(out, cap, n, (float)z - FFN__DZ_WIDE, (float)z + FFN__DZ_WIDE,
                         FFN__DZ_WIDE_N);
    }
    return n;
}
