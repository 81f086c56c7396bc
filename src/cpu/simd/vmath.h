// vmath.h — the vector math every activation shares, written once over the SIMD vocabulary
// (simd.h; include a vocabulary header first): the per-vector modes and stages, the NaN rule,
// 2^z by a 16-entry table, the value of an activation as hi + lo times a power of two, and the σ
// machinery (a fast compensated quotient for the common lanes, the general scaled form for the
// rare ones). Header-only; no state, no allocation.
#ifndef FFN_VMATH_H
#define FFN_VMATH_H

#ifndef FFN_VL
#    error "include a SIMD vocabulary (cpu/simd/simd_<isa>.h) before cpu/simd/vmath.h"
#endif

// log2(e) as a float pair (hi + lo to ~2^-50): exp(x) = 2^(x·log2 e).
#define FFN_LOG2E_HI 0x1.715476p+0f
#define FFN_LOG2E_LO 0x1.4ae0cp-26f

// --- per-vector functions: modes and stages -------------------------------------------------
// Each activation is a pair of functions evaluated in a mode (a compile-time constant after
// inlining) so that a fast path can finish with the fewest operations:
//   FFN_MODE_ACT:       y0 = act(x)
//   FFN_MODE_ACT_MUL:   y0 = act(x)·a                       (gated forward, a = up)
//   FFN_MODE_DACT_MUL:  y0 = act'(x)·a                      (backward, a = dy)
//   FFN_MODE_BOTH:      y0 = act'(x)·a·b, y1 = act(x)·b     (gated backward, a = up, b = dh)
// Every lane is computed from its own inputs only: where a function has a fast path for the
// common lanes and a general one for the rest, it selects per lane (a rare lane is always taken
// from the general path, whichever lanes share its vector). Each function's outputs follow the
// NaN rule below (ffn__nan_fix_mode), which a fast path may skip where it cannot apply.
//
// The two stages: `pre` computes from x alone what heads the fast path's longest dependency chain
// (an exponential, a table lookup and its polynomial), `fin` the rest, the rare lanes included.
// The loop drivers run the pre stage of the next vector ahead of the fin stage of this one (see
// ffn__pipe in loops.h): the result is fin(x, pre(x)) either way, bit for bit.
enum ffn__mode { FFN_MODE_ACT, FFN_MODE_ACT_MUL, FFN_MODE_DACT_MUL, FFN_MODE_BOTH };

struct ffn__vo {
    ffn__vf y0, y1;
};
struct ffn__pre {  // what a pre stage hands its fin stage (members it does not use: x)
    ffn__vf u, v, w;
};
typedef struct ffn__pre (*ffn__vpre)(ffn__vf x, enum ffn__mode mode, bool accurate);
typedef struct ffn__vo (*ffn__vfin)(ffn__vf x, struct ffn__pre s, ffn__vf a, ffn__vf b,
                                    enum ffn__mode mode, bool accurate);

// The pre stage of an activation whose work is all in fin (ReLU, identity).
FFN_VINLINE struct ffn__pre ffn__pre_none(ffn__vf x, enum ffn__mode mode, bool accurate) {
    (void)mode, (void)accurate;
    const struct ffn__pre s = {x, x, x};
    return s;
}

// An activation `name` is defined as name##_pre, name##_fin and name##_tiers (whether it has an
// accurate tier: the GeLUs; the others get no loops for one); a kernel runs it with the pre stage
// of the next vector ahead (FFN_PIPED) or a vector at a time (FFN_PLAIN), whichever is faster.
#define FFN_PIPED(name) name##_pre, name##_fin, name##_tiers, true
#define FFN_PLAIN(name) name##_pre, name##_fin, name##_tiers, false

// The bits of a float (a compile-time constant for a constant f).
FFN_VINLINE uint32_t ffn__f32_bits(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

// --- NaN results ----------------------------------------------------------------------------
// A NaN result is the first NaN input (x, then a, then b), made quiet, else the default NaN
// 0xffc00000 (an invalid operation such as 0·inf): the same bits wherever the element lies (the
// compiler may order a commutative operation's operands differently in the body and the tail,
// and x86 keeps the first operand's NaN), on every ISA.
FFN_VINLINE ffn__vf ffn__nan_default(void) { return ffn__cbits(0xffc00000u); }
// The NaN rule for the result r of an op with n_in inputs (x, a, b). With one input a result is
// NaN exactly where x is (every activation is defined on ±inf): one nan_take where that is one
// instruction (FFN_V_FIXUP). Otherwise the rare NaN lanes are fixed after one compare.
FFN_VINLINE ffn__vf ffn__nan_fix(ffn__vf r, ffn__vf x, ffn__vf a, ffn__vf b, int n_in) {
    if (n_in == 1 && FFN_V_FIXUP) return ffn__nan_take(r, x);
    const ffn__vm rn = ffn__isnan(r);
    if (__builtin_expect(!ffn__m_any(rn), 1)) return r;
    ffn__vf c = ffn__nan_default();
    if (n_in > 2) c = ffn__nan_take(c, b);
    c = ffn__nan_take(ffn__nan_take(c, a), x);
    return ffn__mask_mov(r, rn, c);
}
// The NaN rule applied to a function's outputs in a mode (x and the multiplicands a, b).
FFN_VINLINE struct ffn__vo ffn__nan_fix_mode(struct ffn__vo o, ffn__vf x, ffn__vf a, ffn__vf b,
                                             enum ffn__mode mode) {
    switch (mode) {
    case FFN_MODE_ACT: o.y0 = ffn__nan_fix(o.y0, x, x, x, 1); break;
    case FFN_MODE_ACT_MUL:
    case FFN_MODE_DACT_MUL: o.y0 = ffn__nan_fix(o.y0, x, a, a, 2); break;
    default: {  // both outputs: one test (y0 + y1 is NaN where either is, or inf - inf)
        if (__builtin_expect(!ffn__m_any(ffn__isnan(ffn__add(o.y0, o.y1))), 1)) break;
        const ffn__vm n0 = ffn__isnan(o.y0), n1 = ffn__isnan(o.y1);
        const ffn__vf c = ffn__nan_take(ffn__nan_take(ffn__nan_take(ffn__nan_default(), b), a), x);
        o.y0 = ffn__mask_mov(o.y0, n0, c);
        o.y1 = ffn__mask_mov(o.y1, n1, c);
        break;
    }
    }
    return o;
}

// --- 2^z by table: z = nN + r, nN a multiple of 1/N, |r| ≤ 1/(2N) -----------------------------
// Adding FFN_V_EXP2_MAGIC = 1.5·2^(23 - b) (ulp 1/N, N = 2^b) rounds z to nN and leaves N·nN mod N
// in the low mantissa bits: the lookup reads exactly those b bits as the table index j, and
// scalef(·, nN) scales by 2^floor(nN). So 2^z = scalef(T_j·2^r, nN), T_j = 2^(j/N) (a hi + lo
// pair), 2^r = 1 + r·P(r). The table has the entries one lookup instruction reads: N = 16 where
// it reads 16 or more (AVX-512 vpermps), with P of degree 2 on |r| ≤ 1/32 + 1e-4 (relative error
// 2.4e-9, 0.04 ulp); else N = 8 (AVX2 vpermps), P of degree 3 on |r| ≤ 1/16 + 1e-4 (relative
// error 2.1e-10: a least-squares fit of the relative error at Chebyshev nodes with C1 = ln 2
// rounded, the rest rounded to f32; tools/fit/fit_avx2_tables.py regenerates and checks it). The
// 8 entries are the even ones of the 16.
// The 16-entry table, its MAGIC and its P are those of cpu/exp2_tab.h (the CUDA kernels' too).
#include "cpu/exp2_tab.h"
#if FFN_V_LUT_FAST >= 16
#    define FFN_V_EXP2_N 16
#    define FFN_V_EXP2_BITS 4
#    define FFN_V_EXP2_MAGIC FFN_EXP2_MAGIC
#    define FFN_V_EXP2_C1 FFN_EXP2_C1
#    define FFN_V_EXP2_C2 FFN_EXP2_C2
#    define FFN_V_EXP2_C3 FFN_EXP2_C3
static const float ffn__exp2_thi[16] __attribute__((aligned(64))) = {FFN_EXP2_TAB_HI};
static const float ffn__exp2_tlo[16] __attribute__((aligned(64))) = {FFN_EXP2_TAB_LO};
FFN_VINLINE ffn__vf ffn__exp2_lut(const float *tab, ffn__vi j) { return ffn__lut16(tab, j); }
#else
#    define FFN_V_EXP2_N 8
#    define FFN_V_EXP2_BITS 3
#    define FFN_V_EXP2_MAGIC 0x1.8p20f
#    define FFN_V_EXP2_C1 FFN_EXP2_C1  // ln 2 rounded
#    define FFN_V_EXP2_C2 0x1.ebfbe2p-3f
#    define FFN_V_EXP2_C3 0x1.c6b8eap-5f
#    define FFN_V_EXP2_C4 0x1.3b0b2ap-7f
// Entries 0, 2, .., 14 of a list of 16 (an extra level expands the table's macro first).
#    define FFN__EVEN16(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15) \
        a0, a2, a4, a6, a8, a10, a12, a14
#    define FFN__EVEN(...) FFN__EVEN16(__VA_ARGS__)
static const float ffn__exp2_thi[8] __attribute__((aligned(32))) = {FFN__EVEN(FFN_EXP2_TAB_HI)};
static const float ffn__exp2_tlo[8] __attribute__((aligned(32))) = {FFN__EVEN(FFN_EXP2_TAB_LO)};
FFN_VINLINE ffn__vf ffn__exp2_lut(const float *tab, ffn__vi j) { return ffn__lut_fast(tab, j); }
#endif

// 2^r - 1 = r·P(r), Horner.
FFN_VINLINE ffn__vf ffn__exp2_pm1(ffn__vf r) {
#if FFN_V_EXP2_N == 16
    ffn__vf p = ffn__fmadd(ffn__c(FFN_V_EXP2_C3), r, ffn__c(FFN_V_EXP2_C2));
#else
    ffn__vf p = ffn__fmadd(ffn__c(FFN_V_EXP2_C4), r, ffn__c(FFN_V_EXP2_C3));
    p = ffn__fmadd(p, r, ffn__c(FFN_V_EXP2_C2));
#endif
    p = ffn__fmadd(p, r, ffn__c(FFN_V_EXP2_C1));
    return ffn__mul(p, r);
}

// E = 2^(j/N + r) ∈ [0.97, 1.03·1.96) for t = z + MAGIC (rounded) and r = z - nN.
// precise: the table's low part too (E within 0.5 ulp + 0.04); else within ~1 ulp.
FFN_VINLINE ffn__vf ffn__exp2_frac(ffn__vf t, ffn__vf r, bool precise) {
    const ffn__vi j = ffn__as_i(t);
    const ffn__vf th = ffn__exp2_lut(ffn__exp2_thi, j);
    const ffn__vf p = ffn__exp2_pm1(r);  // 2^r - 1
    if (!precise) return ffn__fmadd(th, p, th);
    const ffn__vf tl = ffn__exp2_lut(ffn__exp2_tlo, j);
    return ffn__add(th, ffn__fmadd(th, p, tl));
}

// E·2^floor(nN) for t = z + MAGIC, nN = t - MAGIC, where E and the result are normal floats (in
// other lanes any value): scalef where that is one instruction; else floor(nN) straight from t's
// low bits (N·nN, shifted up so that the index bits fall off and floor(nN) lands in the exponent
// field, MAGIC's own bits shifting out) added to E's exponent: exact.
FFN_VINLINE ffn__vf ffn__exp2_scale(ffn__vf E, ffn__vf t, ffn__vf n) {
    if (FFN_V_SCALEF_1OP) return ffn__scalef(E, n);
    const ffn__vi k =
        ffn__and_i(ffn__slli_i(ffn__as_i(t), 23 - FFN_V_EXP2_BITS), ffn__ci(0xff800000u));
    return ffn__as_f(ffn__add_i(ffn__as_i(E), k));
}

// --- the value of an activation, general form -------------------------------------------------
// act(x) = (hi + lo)·2^floor(k). The split lets a σ-based activation leave its power of two (and
// a small correction term) for the very end, so that a combine multiplies before the single
// rounding into a subnormal result, and a dtype conversion sees one value. The general paths
// (rare lanes, accurate tier, derivatives) compute these; the fast paths finish directly.
struct ffn__av {
    ffn__vf hi, lo, k;
};
struct ffn__avd {
    struct ffn__av a;   // act(x)
    struct ffn__av da;  // act'(x)
};

// Flags of what the value carries (compile-time constants at each call).
enum { FFN_AV_LO = 1, FFN_AV_K = 2 };

FFN_VINLINE ffn__vf ffn__av_eval(struct ffn__av v, int flags) {
    ffn__vf y = (flags & FFN_AV_LO) ? ffn__add(v.hi, v.lo) : v.hi;
    return (flags & FFN_AV_K) ? ffn__scalef(y, v.k) : y;
}

// (hi + lo)·2^k · m with one final rounding of hi·m + lo·m (fma) before the scaling (an exact
// tiny sum keeps its sign when it underflows). lo·m is taken as -0 where m is ±0, ±inf or NaN:
// hi·m is the answer there (lo·m could be 0·inf, or a zero of the other sign).
FFN_VINLINE ffn__vf ffn__av_mul(struct ffn__av v, ffn__vf m, int flags) {
    ffn__vf y;
    if (flags & FFN_AV_LO) {
        const ffn__vm ok = ffn__m_not(ffn__is_special(m));
        y = ffn__fmadd(v.hi, m, ffn__mask_mul(ffn__negzero(), ok, v.lo, m));
    } else {
        y = ffn__mul(v.hi, m);
    }
    return (flags & FFN_AV_K) ? ffn__scalef(y, v.k) : y;
}

// Limits at ±inf, where the clamped general formulas give a tiny value instead of the limit (so
// that a product with an infinite multiplicand would be ±inf instead of the reference's NaN):
// act(-inf) = act_ninf (-0 for the x·σ kind, +0 for σ), act'(-inf) = 0, act'(+inf) = dact_pinf
// (1, or 0 for σ); act(+inf) comes out of the general formulas exactly (+inf, or 1 for σ).
struct ffn__lim {
    float act_ninf, dact_pinf;
};

// A forward mode from the general form: act (ACT) or act·a (ACT_MUL), with the NaN rule; at
// x = -inf the limit (times a).
FFN_VINLINE ffn__vf ffn__av_fwd(struct ffn__av v, ffn__vf x, ffn__vf a, enum ffn__mode mode, int fl,
                                struct ffn__lim lim) {
    ffn__vf y = mode == FFN_MODE_ACT ? ffn__av_eval(v, fl) : ffn__av_mul(v, a, fl);
    const ffn__vm ninf = ffn__is_ninf(x);
    if (ffn__m_any(ninf)) {
        const ffn__vf l = ffn__c(lim.act_ninf);
        y = ffn__mask_mov(y, ninf, mode == FFN_MODE_ACT ? l : ffn__mul(l, a));
    }
    if (mode == FFN_MODE_ACT) return ffn__nan_fix(y, x, x, x, 1);
    return ffn__nan_fix(y, x, a, a, 2);
}

// The backward modes from the general form: y0 = act'·a (DACT_MUL) or act'·(a·b) (BOTH),
// y1 = act·b, with the NaN rule. At x = ±inf the limits times the multiplicands, as the
// reference computes them: (lim'·b)·a for y0 (a signed zero, or NaN for an infinite multiplicand,
// where the clamped formula would give a zero of the derivative's sign, or ±inf), lim·b for y1.
FFN_VINLINE struct ffn__vo ffn__avd_bwd(struct ffn__avd r, ffn__vf x, ffn__vf a, ffn__vf b,
                                        enum ffn__mode mode, int fl, int dfl, struct ffn__lim lim) {
    struct ffn__vo o;
    const bool both = mode == FFN_MODE_BOTH;
    o.y0 = ffn__av_mul(r.da, both ? ffn__mul(a, b) : a, dfl);
    o.y1 = both ? ffn__av_mul(r.a, b, fl) : o.y0;
    const ffn__vm inf = ffn__is_inf(x);
    if (ffn__m_any(inf)) {
        const ffn__vm pinf = ffn__m_andn(inf, ffn__signmask(x));
        const ffn__vf dl = ffn__maskz_mov(pinf, ffn__c(lim.dact_pinf));
        const ffn__vf z = ffn__mul(dl, both ? b : a);
        o.y0 = ffn__mask_mov(o.y0, inf, both ? ffn__mul(z, a) : z);
        if (both) o.y1 = ffn__mask_mul(o.y1, ffn__m_andn(inf, pinf), ffn__c(lim.act_ninf), b);
    }
    return ffn__nan_fix_mode(o, x, a, b, mode);
}

// --- the σ quotient, general form -------------------------------------------------------------
// For σ-based activations y = x·σ(t) with e = exp(-|t|) = E·2^n (n = the nN above):
//   t ≥ 0:  σ(t) = 1/(1 + e)              t < 0:  σ(t) = e/(1 + e) = 2^n · E/(1 + e)
// so y = 2^k · N/(1 + e) with N = x (k = 0) or x·E (k = n). Neither e nor any intermediate can
// overflow, and the power of two 2^n (possibly tiny) is applied last, so a subnormal never
// decides a normal result. The quotient is compensated: q0 = Nh/D (D = 1 + e rounded), then the
// residual Nh - q0·(1 + e) = (Nh - q0) - q0·e is exact up to one rounding of a tiny value
// (Nh - q0 is exact by Sterbenz: q0 ∈ [Nh/2, Nh]), and q = q0 + (residual + Nl)/D needs only a
// 14-bit reciprocal. Result: within 0.5 ulp + E's error (times 1/(1+e) ≤ 1).
// Returns hi = q0, lo = the correction, k = n on t < 0 lanes (0 elsewhere).
FFN_VINLINE struct ffn__av ffn__xsig(ffn__vf x, ffn__vf E, ffn__vf n, ffn__vm neg) {
    const ffn__vf e = ffn__scalef(E, n);
    const ffn__vf D = ffn__add(ffn__c(1.0f), e);
    const ffn__vf Nh = ffn__mask_mul(x, neg, x, E);
    const ffn__vf Nl = ffn__maskz_fmsub(neg, x, E, Nh);  // x·E - Nh exactly
    const ffn__vf q0 = ffn__div(Nh, D);
    ffn__vf rr = ffn__fnmadd(q0, e, ffn__sub(Nh, q0));
    rr = ffn__add(rr, Nl);
    struct ffn__av v;
    v.hi = q0;
    // On x = ±inf lanes Nh - q0 is inf - inf, on x = ±0 lanes the quotient is exact: there lo is
    // hi itself (±inf, or a zero of hi's sign), so hi + lo and hi·m + lo·m keep hi's value and
    // the sign of a zero product.
    const ffn__vm fin = ffn__m_not(ffn__is_zero_inf(x));
    v.lo = ffn__mask_mul(q0, fin, rr, ffn__rcp14(D));
    v.k = ffn__maskz_mov(neg, n);
    return v;
}

// --- exp(-|t|) for t = slope·x ------------------------------------------------------------------
// z = a·c with a = -|x| (clamped) and c = slope·log2(e) as a float pair (c_hi + c_lo): nN from
// fma(a, c_hi, MAGIC) and r = (a·c_hi - nN) + a·c_lo, both exact up to one rounding of a value
// ≤ 1/(2N), so exp(-|t|) = 2^nN·E keeps full relative accuracy over the whole range of a.
FFN_VINLINE ffn__vf ffn__exp_neg(ffn__vf a, float c_hi, float c_lo, bool precise, ffn__vf *nN) {
    const ffn__vf t = ffn__fmadd(a, ffn__c(c_hi), ffn__c(FFN_V_EXP2_MAGIC));
    const ffn__vf n = ffn__sub(t, ffn__c(FFN_V_EXP2_MAGIC));
    ffn__vf r = ffn__fmsub(a, ffn__c(c_hi), n);
    r = ffn__fmadd(a, ffn__c(c_lo), r);
    *nN = n;
    return ffn__exp2_frac(t, r, precise);
}

// --- the σ family: y = x·σ(slope·x) and σ itself, general form ---------------------------------
// Below x = -300 (|slope| ≥ 1) e^{-|t|} < 2^-432: every σ-family value, even times the largest
// multipliers of a combine or a backward (2^128·2^128), underflows to ±0. The argument and the
// multiplier are clamped there, which changes no result and keeps -inf from meeting a zero.
#define FFN_SIG_CLAMP 300.0f

// --- subnormal inputs of the x·σ activations ---------------------------------------------------
// For |x| < 2^-126, act(x) = x·act'(0) is subnormal and would lose bits before a combine
// multiplies it by up. Such lanes are evaluated at x·2^64 (still so small that act is linear
// there to f32 precision) and get k -= 64: the 2^-64 is then applied after the multiply, with the
// single final rounding. The branch only decides whether to compute; lanes are selected by their
// own class.
#define FFN_TINY_SCALE 0x1p64f
#define FFN_TINY_K -64.0f
FFN_VINLINE ffn__vm ffn__tiny_pre(ffn__vf *x) {
    const ffn__vm tiny = ffn__is_sub(*x);
    if (ffn__m_any(tiny)) *x = ffn__mask_mul(*x, tiny, *x, ffn__c(FFN_TINY_SCALE));
    return tiny;
}
FFN_VINLINE void ffn__tiny_post(struct ffn__av *v, ffn__vm tiny) {
    if (ffn__m_any(tiny)) v->k = ffn__mask_mov(v->k, tiny, ffn__c(FFN_TINY_K));
}

// x·σ(slope·x) (xmul = true) or σ(slope·x) (xmul = false), forward, within ~1 ulp, any x.
FFN_VINLINE struct ffn__av ffn__sigfam(ffn__vf x, float c_hi, float c_lo, bool xmul) {
    const ffn__vm tiny = xmul ? ffn__tiny_pre(&x) : ffn__m_zero();
    const ffn__vf a = ffn__max(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));  // NaN stays
    ffn__vf n;
    const ffn__vf E = ffn__exp_neg(a, c_hi, c_lo, true, &n);
    const ffn__vf xm = xmul ? ffn__max(ffn__c(-FFN_SIG_CLAMP), x) : ffn__c(1.0f);
    struct ffn__av v = ffn__xsig(xm, E, n, ffn__signmask(x));
    ffn__tiny_post(&v, tiny);
    return v;
}

// Pieces of σ for derivatives (8-ulp tier, one division): with e = exp(-|t|) = E·2^n,
// inv = 1/(1+e),  σ(t) = S·2^k,  1-σ(t) = C, where
//   t ≥ 0: S = inv, C = e·inv, k = 0;     t < 0: S = E·inv, C = inv, k = n.
struct ffn__sigd {
    ffn__vf S, C, k, E, inv;
};
FFN_VINLINE struct ffn__sigd ffn__sig_pieces(ffn__vf E, ffn__vf n, ffn__vm neg) {
    struct ffn__sigd s;
    const ffn__vf e = ffn__scalef(E, n);
    s.inv = ffn__div(ffn__c(1.0f), ffn__add(ffn__c(1.0f), e));
    s.S = ffn__mask_mul(s.inv, neg, E, s.inv);
    s.C = ffn__mask_mov(ffn__mul(e, s.inv), neg, s.inv);
    s.k = ffn__maskz_mov(neg, n);
    s.E = E;
    return s;
}

// act = x·σ(slope·x) and act' = σ·(1 + slope·x·(1-σ)) (SiLU, quick-GeLU), general form.
// x is clamped to ±300 inside the derivative's bracket: beyond, 1-σ (x > 0) or σ (x < 0) is 0
// in f32, so the clamp changes nothing and keeps inf·0 out.
FFN_VINLINE struct ffn__avd ffn__sigfam_d(ffn__vf x, float c_hi, float c_lo, float slope) {
    const ffn__vm tiny = ffn__tiny_pre(&x);  // act' is flat there: only act needs the scale
    const ffn__vf a = ffn__max(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));
    ffn__vf n;
    const ffn__vf E = ffn__exp_neg(a, c_hi, c_lo, false, &n);
    const struct ffn__sigd s = ffn__sig_pieces(E, n, ffn__signmask(x));
    const ffn__vf xc = ffn__min(ffn__c(FFN_SIG_CLAMP), ffn__max(ffn__c(-FFN_SIG_CLAMP), x));
    const ffn__vf sx = slope == 1.0f ? xc : ffn__mul(ffn__c(slope), xc);
    struct ffn__avd r;
    r.a.hi = ffn__mul(ffn__max(ffn__c(-FFN_SIG_CLAMP), x), s.S);
    r.a.lo = ffn__zero();
    r.a.k = s.k;
    r.da.hi = ffn__mul(s.S, ffn__fmadd(sx, s.C, ffn__c(1.0f)));
    r.da.lo = ffn__zero();
    r.da.k = s.k;
    ffn__tiny_post(&r.a, tiny);
    return r;
}

// --- the σ family, fast lanes -------------------------------------------------------------------
// e = exp(-c·x·ln 2) = 2^(-x·c) for c = c_hi + c_lo (slope·log2 e as a float pair) and
// |x·c| ≤ 120, so that e is a normal float: nN = roundN(-x·c_hi), r = (-x·c_hi - nN) - x·c_lo,
// both exact up to one rounding of a value ≤ 1/(2N); e = E·2^nN by exp2_scale. (On AVX-512 an
// integer add of t << 19 to E's exponent field is exact too, but three instructions against one
// vscalefps: measured 3-5% slower.)
FFN_VINLINE ffn__vf ffn__exp_lin(ffn__vf x, float c_hi, float c_lo, bool precise) {
    const ffn__vf t = ffn__fnmadd(x, ffn__c(c_hi), ffn__c(FFN_V_EXP2_MAGIC));
    const ffn__vf n = ffn__sub(t, ffn__c(FFN_V_EXP2_MAGIC));
    ffn__vf r = ffn__fnmsub(x, ffn__c(c_hi), n);
    r = ffn__fnmadd(x, ffn__c(c_lo), r);
    return ffn__exp2_scale(ffn__exp2_frac(t, r, precise), t, n);
}

// N/(1 + e), compensated, for e a normal float and N normal or ±0: D = 1 + e = Dh + Dl exactly
// (Fast2Sum of max(1, e) and min(1, e)), r = rcp14(Dh) (relative error < 2^-14), q0 = N·r,
// c = (q0·Dh - N) + q0·Dl (the residual of q0: |c| ≲ 2^-14·|N|, computed to ~2^-38·|N|), and
// N/D = q0 - c/D with c/D ≈ c·r: the quotient's own error 2^-14 is corrected to 2^-28, so no
// division is needed. The value is hi - c·r, hi = q0; at N = ±0, c = +0, so it keeps the zero's
// sign. Within 0.5 ulp (the final rounding) + 2^-28 + e's relative error times e/(1 + e).
struct ffn__quot {
    ffn__vf hi, c, r;  // the value is hi - c·r
};
// lt24: the caller guarantees e < 2^24 (k·x > -16.6). Then 1 - Dh is exact for every float Dh
// in [1, 2^24) (Sterbenz below 2, and a multiple of ulp(Dh) ≤ 1 with fewer than 24 bits above),
// so Dl = (1 - Dh) + e is the exact rounding error of 1 + e without the max/min that order the
// operands of the Fast2Sum.
FFN_VINLINE struct ffn__quot ffn__quot_comp(ffn__vf N, ffn__vf e, bool lt24) {
    const ffn__vf one = ffn__c(1.0f);
    const ffn__vf a = lt24 ? one : ffn__max(one, e), b = lt24 ? e : ffn__min(one, e);
    const ffn__vf Dh = ffn__add(a, b);
    const ffn__vf Dl = ffn__add(ffn__sub(a, Dh), b);
    const ffn__vf r = ffn__rcp14(Dh);
    const ffn__vf q0 = ffn__mul(N, r);
    const ffn__vf c = ffn__fmadd(q0, Dl, ffn__fmsub(q0, Dh, N));
    const struct ffn__quot q = {q0, c, r};
    return q;
}
// hi - c·r with one rounding (ACT), or (hi - c·r)·a with one rounding, hi·a - l, l = c·r·a
// (ACT_MUL). l is made +0 where it is ±0, ±inf or NaN (zero_special): then hi·a is the result as
// it stands, so a zero product keeps its sign, a = ±inf gives ±inf (not inf - inf), an overflowed
// l cannot flip the sign, and a NaN a gives a quieted (hi = 0 is left to the general path: the
// sign of its zero product is not kept here). With x finite, the result follows the NaN rule.
FFN_VINLINE ffn__vf ffn__quot_fin(struct ffn__quot q, ffn__vf a, enum ffn__mode mode) {
    if (mode == FFN_MODE_ACT) return ffn__fnmadd(q.c, q.r, q.hi);
    const ffn__vf l = ffn__mul(ffn__mul(q.c, q.r), a);
    return ffn__fmsub(q.hi, a, ffn__zero_special(l));
}

// Rare lanes of a symmetric fast range: !(|x| < lim) (NaN included), and for the modes that
// multiply act(x) also |x| ≤ ~2^-19 (where act(x) may be subnormal, or ±0 whose product sign the
// fast finish does not keep): | |x| - lim/2 | ≥ lim/2 catches both ends in one compare, since
// |x| - lim/2 rounds to -lim/2 for |x| below half an ulp of lim/2.
FFN_VINLINE ffn__vm ffn__rare_sym(ffn__vf x, float lim, bool small_too) {
    const ffn__vf ax = ffn__abs(x);
    if (!small_too) return ffn__cmp_nlt(ax, ffn__c(lim));
    const ffn__vf d = ffn__abs(ffn__sub(ax, ffn__c(0.5f * lim)));
    return ffn__cmp_nlt(d, ffn__c(0.5f * lim));
}

// --- the left tail of the σ family ------------------------------------------------------------
// Where k·x ≤ -16, e = exp(-kx) ≥ 2^23: 1 + e rounds at the scale of e's own error, and the two
// together with a division's rounding can pass 2 ulp (2.38 at x = -16.68 for SiLU, exhaustive).
// There σ(kx) = e'/(1 + e') with e' = exp(kx) ≤ 2^-23, so σ(kx) = e' - e'^2 to a relative 2^-46:
// x·σ(kx) = x·e' - (x·e')·e' with one rounding (fmsub), and σ itself = e' - e'·e' (fnmadd).
// e' = 2^(x·c) is the fast table exp with the constants negated (a normal float for kx > -83).
#define FFN_SIG_TAIL 16.0f
FFN_VINLINE ffn__vf ffn__sig_tail(ffn__vf x, float c_hi, float c_lo, bool xmul) {
    const ffn__vf e1 = ffn__exp_lin(x, -c_hi, -c_lo, true);
    if (!xmul) return ffn__fnmadd(e1, e1, e1);
    return ffn__fmsub(x, e1, ffn__mul(ffn__mul(x, e1), e1));
}

// --- x·σ(k·x): SiLU (k = 1) and quick-GeLU (k = 1.702) ------------------------------------------
// act(x) = x·σ(kx) = x/(1 + e), e = exp(-kx) = 2^(-x·k·log2 e), with k·log2(e) given as the float
// pair (l2e_hi, l2e_lo). Lanes by k·x (fast_lim = 80/k):
//   act alone, (-16, fast_lim): one division x/(1 + e), e from the table exp with its low part
//     (0.54 ulp): e's error, the rounding of 1 + e and the quotient's, ≤ 2 ulp (1.998 for SiLU
//     over every float, the worst case near x = -0.0005); (-fast_lim, -16]: the left tail
//     above (≤ 1.1 ulp).
//   act·a (a combine), |x| < fast_lim and |x| > ~2^-19 (see ffn__rare_sym): the compensated
//     quotient and one final rounding of hi·a - lo·a, ≤ 1.6 ulp (a division would round once
//     more: 2.4).
//   the rest (|x| ≥ fast_lim, NaN, tiny in a combine): the general form 2^n·x·E/(1 + e') with
//     e' = exp(-|kx|) = E·2^n ≤ 1 (no overflow; the power of two applied last, so subnormal
//     results stay correct).
// act'(x) = σ(kx)·(1 + k·x·(1 - σ(kx))): fast lanes (|x| < fast_lim, and for act·b a normal x)
// inv = 1/(1 + e), σ = inv, 1 - σ = e·inv (8-ulp tier: e without its table low part); the rest
// the general form, with σ and 1-σ from exp(-|kx|) (never cosh). Limits: act(-inf) = -0,
// act'(+inf) = 1.
// pre: e = exp(-kx), with the table low part for the forward modes; for the derivatives from x
// clamped to ±fast_lim (in s.v).
FFN_VINLINE struct ffn__pre ffn__xsig_pre(ffn__vf x, enum ffn__mode mode, float l2e_hi,
                                          float l2e_lo, float fast_lim) {
    struct ffn__pre s = {x, x, x};
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        s.u = ffn__exp_lin(x, l2e_hi, l2e_lo, true);
    } else {
        s.v = ffn__max(ffn__c(-fast_lim), ffn__min(ffn__c(fast_lim), x));
        s.u = ffn__exp_lin(s.v, l2e_hi, l2e_lo, false);
    }
    return s;
}
FFN_VINLINE struct ffn__vo ffn__xsig_fin(ffn__vf x, struct ffn__pre s, ffn__vf a, ffn__vf b,
                                         enum ffn__mode mode, float l2e_hi, float l2e_lo,
                                         float fast_lim, float k) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    const struct ffn__lim lims = {-0.0f, 1.0f};
    const ffn__vf one = ffn__c(1.0f);
    const ffn__vf e = s.u;
    struct ffn__vo o;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        const bool act = mode == FFN_MODE_ACT;
        if (act)
            o.y0 = ffn__div(x, ffn__add(one, e));
        else
            o.y0 = ffn__quot_fin(ffn__quot_comp(x, e, false), a, mode);
        const ffn__vm rare = ffn__rare_sym(x, fast_lim, !act);
        const ffn__vm tail =
            act ? ffn__m_andn(ffn__cmp_le(x, ffn__c(-FFN_SIG_TAIL / k)), rare) : ffn__m_zero();
        if (ffn__m_any(ffn__m_or(rare, tail))) {
            if (ffn__m_any(tail))
                o.y0 = ffn__mask_mov(o.y0, tail, ffn__sig_tail(x, l2e_hi, l2e_lo, true));
            if (ffn__m_any(rare)) {
                const struct ffn__av v = ffn__sigfam(x, l2e_hi, l2e_lo, true);
                o.y0 = ffn__mask_mov(o.y0, rare, ffn__av_fwd(v, x, a, mode, FL, lims));
            }
        }
        o.y1 = o.y0;
        return o;
    }
    const bool both = mode == FFN_MODE_BOTH;
    const ffn__vf xc = s.v;
    const ffn__vf inv = ffn__div(one, ffn__add(one, e));
    const ffn__vf kx = k == 1.0f ? xc : ffn__mul(ffn__c(k), xc);
    const ffn__vf d = ffn__mul(inv, ffn__fmadd(kx, ffn__mul(e, inv), one));
    o.y0 = ffn__mul(d, both ? ffn__mul(a, b) : a);
    o.y1 = both ? ffn__mul(ffn__mul(x, inv), b) : o.y0;
    // Rare lanes; for act·b also subnormal x (x·inv would lose bits). With FFN_V_FEW_TESTS the
    // BOTH lanes are tested by one range compare of |x|'s bits (±0 then takes the general form,
    // which gives it the same value) and one branch for them and the lanes where a·b is NaN: in
    // the others (x normal, |x| < fast_lim: x·inv and the derivative finite and nonzero) neither
    // output can be NaN.
    ffn__vm rare;
#if FFN_V_FEW_TESTS
    if (both) {
        rare = ffn__bits_out(x, 0x00800000u, ffn__f32_bits(fast_lim) - 1u);
        if (__builtin_expect(!ffn__m_any(ffn__m_or(rare, ffn__isnan(ffn__mul(a, b)))), 1)) return o;
    } else
#endif
    {
        rare = ffn__rare_sym(x, fast_lim, false);
        if (both) rare = ffn__m_or(rare, ffn__is_sub(x));
    }
    if (ffn__m_any(rare)) {
        const struct ffn__vo g =
            ffn__avd_bwd(ffn__sigfam_d(x, l2e_hi, l2e_lo, k), x, a, b, mode, DFL, DFL, lims);
        o.y0 = ffn__mask_mov(o.y0, rare, g.y0);
        if (both) o.y1 = ffn__mask_mov(o.y1, rare, g.y1);
    }
    if (!both) o.y1 = o.y0;
    // Fast DACT_MUL lanes have x finite: a NaN result can only come from dy, and is its quieted
    // copy. The BOTH products meet two multiplicands, which may both be NaN.
    return both ? ffn__nan_fix_mode(o, x, a, b, mode) : o;
}

#endif  // FFN_VMATH_H
