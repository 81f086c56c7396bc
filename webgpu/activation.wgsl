// activation.wgsl — libffn's WGSL activation kernels: GeLU (tanh and erf), SiLU, ReLU, the gated
// combines SwiGLU / GeGLU / ReGLU and all their backward passes, for f32 storage (one element per
// thread), vec4<f32> storage (four per thread) and packed f16 storage (two f16 per u32 word, RNE,
// no shader-f16 feature needed). activation_f16.wgsl adds array<f16> variants on top of this file.
// Numerical contract: docs/design.md, docs/numerics.md ("WebGPU (WGSL)"). Not here: the host code
// (ffn-webgpu.js) and any matrix multiply. Every kernel: @workgroup_size(256), bounds-checked flat
// index over a 1-D or 2-D grid (at most 65535 workgroups per dimension).

// =================================================================================================
// Bind group ABI (group 0). n = number of ELEMENTS in every variant.
//   unary in place   (gelu_inplace ...):   0 x (read_write)             1 params
//   unary backward   (gelu_backward ...):  0 x  1 dy  (read)  2 dx (read_write)           3 params
//   gated forward    (swiglu_combine ...): 0 gate  1 up (read)  2 hidden (read_write)     3 params
//   gated backward   (swiglu_backward ...):0 gate  1 up  2 dh (read)  3 dgate  4 dup (rw) 5 params
// Variants: name (array<f32>), name_vec4 (array<vec4<f32>>: buffers padded to 16 bytes),
// name_f16pk (array<u32> of f16 pairs, element 2k in the low half: buffers padded to 4 bytes),
// name_f16 (array<f16>, activation_f16.wgsl). Outputs never alias inputs (WebGPU forbids it).
// =================================================================================================

struct Params { n: u32 }

const WG: u32 = 256u;  // workgroup size of every kernel

@group(0) @binding(0) var<storage, read_write> x_io: array<f32>;
@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(2) var<storage, read_write> out2: array<f32>;
@group(0) @binding(2) var<storage, read> in2: array<f32>;
@group(0) @binding(3) var<storage, read_write> out3: array<f32>;
@group(0) @binding(4) var<storage, read_write> out4: array<f32>;

@group(0) @binding(0) var<storage, read_write> x4_io: array<vec4<f32>>;
@group(0) @binding(0) var<storage, read> in0_4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> in1_4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out2_4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> in2_4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out3_4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out4_4: array<vec4<f32>>;

@group(0) @binding(0) var<storage, read_write> xp_io: array<u32>;
@group(0) @binding(0) var<storage, read> in0_p: array<u32>;
@group(0) @binding(1) var<storage, read> in1_p: array<u32>;
@group(0) @binding(2) var<storage, read_write> out2_p: array<u32>;
@group(0) @binding(2) var<storage, read> in2_p: array<u32>;
@group(0) @binding(3) var<storage, read_write> out3_p: array<u32>;
@group(0) @binding(4) var<storage, read_write> out4_p: array<u32>;

@group(0) @binding(1) var<uniform> params1: Params;
@group(0) @binding(3) var<uniform> params3: Params;
@group(0) @binding(5) var<uniform> params5: Params;

// Thread index over a grid of (nwg.x, nwg.y) workgroups: the host splits more than 65535
// workgroups into rows of nwg.x, so i = gid.x + gid.y * (nwg.x * 256).
fn flat_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * (nwg.x * WG);
}

// =================================================================================================
// Float bits. Classification works on the bits, never on comparisons, so that a GPU that flushes
// subnormals to zero in arithmetic still sees a subnormal input as non-zero.
// =================================================================================================

const SIGN_MASK: u32 = 0x80000000u;
const ABS_MASK: u32 = 0x7fffffffu;
const EXP_INF: u32 = 0x7f800000u;

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & ABS_MASK) > EXP_INF; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & ABS_MASK) == EXP_INF; }
fn is_zero(x: f32) -> bool { return (bitcast<u32>(x) & ABS_MASK) == 0u; }
fn is_neg(x: f32) -> bool { return (bitcast<u32>(x) & SIGN_MASK) != 0u; }
// x > 0 for any non-NaN x, subnormals included.
fn is_pos(x: f32) -> bool { return !is_neg(x) && !is_zero(x); }
// +0 or -0 with the sign of s (built from bits: a WGSL constant cannot be -0 reliably).
fn zero_like(s: f32) -> f32 { return bitcast<f32>(bitcast<u32>(s) & SIGN_MASK); }
// +inf or -inf with the sign of s.
fn inf_like(s: f32) -> f32 { return bitcast<f32>((bitcast<u32>(s) & SIGN_MASK) | EXP_INF); }
// 2^k as a float, for -126 <= k <= 127 (exact: built from the exponent field).
fn pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }

// =================================================================================================
// Scaled floats: a value m * 2^e with |m| in [0.5, 1) (or m = ±0) and e an i32. Products and
// quotients of activation factors are formed in this representation and rounded to f32 once at
// the end, so no intermediate overflows or becomes subnormal (and is flushed) when the result is
// a normal float: silu(-88) * up, gelu(-14) * up, sigma(-100) * dh * up all stay exact.
// =================================================================================================

struct Sc { m: f32, e: i32 }

// Normalises m * 2^e, m a normal float or ±0.
fn sc_norm(m: f32, e: i32) -> Sc {
    let b = bitcast<u32>(m);
    if ((b & ABS_MASK) == 0u) { return Sc(m, 0); }
    let ex = i32((b >> 23u) & 0xffu);
    return Sc(bitcast<f32>((b & 0x807fffffu) | 0x3f000000u), e + ex - 126);
}

// Any finite f32, subnormals included (decoded from the bits: m = mantissa * 2^-149).
fn sc_from(a: f32) -> Sc {
    let b = bitcast<u32>(a);
    if ((b & EXP_INF) == 0u) {
        let mag = f32(b & 0x007fffffu);  // exact: < 2^23, a normal float (or 0)
        return sc_norm(select(mag, -mag, (b & SIGN_MASK) != 0u), -149);
    }
    return sc_norm(a, 0);
}

fn sc_mul(a: Sc, b: Sc) -> Sc { return sc_norm(a.m * b.m, a.e + b.e); }

// Rounds m * 2^e to f32. Each power of two applied is a normal float, so the only rounding is
// the final one (and only results below 2^-126 may be flushed by the GPU).
fn sc_to_f32(a: Sc) -> f32 {
    if (is_zero(a.m)) { return a.m; }
    if (a.e > 128) { return inf_like(a.m); }        // |m| * 2^e >= 2^128
    if (a.e < -160) { return zero_like(a.m); }      // below half the smallest subnormal
    if (a.e > 64) { return (a.m * pow2(64)) * pow2(a.e - 64); }
    if (a.e < -64) { return (a.m * pow2(-64)) * pow2(a.e + 64); }
    return a.m * pow2(a.e);
}

// The IEEE product a * b where a or b is zero or infinite, built from the bits: GPU compilers may
// fold 0 * v to +0 (no signed zeros), which would lose the sign the contract keeps.
fn mul_special(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) { return a + b; }
    let s = (bitcast<u32>(a) ^ bitcast<u32>(b)) & SIGN_MASK;
    if ((is_zero(a) && is_inf(b)) || (is_inf(a) && is_zero(b))) { return bitcast<f32>(s | 0x7fc00000u); }
    if (is_inf(a) || is_inf(b)) { return bitcast<f32>(s | EXP_INF); }
    return bitcast<f32>(s);
}

// A value far below every float but not zero, with the sign of s: what an activation or
// derivative is where it underflows for every finite multiplier. Unlike 0 it keeps the sign for
// a zero multiplier and gives the right infinity, not NaN, for an infinite one.
fn sc_tiny(s: f32) -> Sc { return Sc(select(0.5, -0.5, is_neg(s)), -1000); }

// a * b for finite or infinite a, b (not NaN), without a subnormal or overflowing intermediate.
fn mul_nf(a: f32, b: f32) -> f32 {
    if (is_zero(a) || is_zero(b) || is_inf(a) || is_inf(b)) { return mul_special(a, b); }
    return sc_to_f32(sc_mul(sc_from(a), sc_from(b)));
}

// s * v rounded to f32, where s = act(x) as a scaled float and v is not NaN. A zero or infinite v
// gives the IEEE product with s (0 * inf = NaN only when s is a true zero).
fn sc_times(s: Sc, v: f32) -> f32 {
    if (is_zero(v) || is_inf(v)) { return mul_special(s.m, v); }
    return sc_to_f32(sc_mul(s, sc_from(v)));
}

// s * a * b, a and b not NaN.
fn sc_times2(s: Sc, a: f32, b: f32) -> f32 {
    if (is_zero(a) || is_zero(b) || is_inf(a) || is_inf(b)) { return mul_special(s.m, mul_special(a, b)); }
    return sc_to_f32(sc_mul(sc_mul(s, sc_from(a)), sc_from(b)));
}

// =================================================================================================
// Exact products and sums in f32 arithmetic (double-f32). WGSL's fma may be computed unfused, so
// two_prod splits both factors (Veltkamp, 2^12 + 1) instead of relying on fma.
// =================================================================================================

fn split(a: f32) -> vec2<f32> {
    let c = 4097.0 * a;
    let h = c - (c - a);
    return vec2<f32>(h, a - h);
}

// a * b = p + e exactly (|a|, |b| < 2^100).
fn two_prod(a: f32, b: f32) -> vec2<f32> {
    let p = a * b;
    let sa = split(a);
    let sb = split(b);
    let e = ((sa.x * sb.x - p) + sa.x * sb.y + sa.y * sb.x) + sa.y * sb.y;
    return vec2<f32>(p, e);
}

// a + b = s + e exactly (Knuth).
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s - a;
    return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}

// =================================================================================================
// exp(th + tl) as a scaled float, for |th| <= 430 and |tl| small. WGSL's builtin exp may err by
// 3 + 2|x| ulp, so: n = round(t / ln 2), r = t - n ln2 with ln2 split in two (Cody-Waite; n*LN2_HI
// is exact for |n| < 2^15), e^r by its Taylor polynomial to degree 8 (|r| <= 0.45: truncation
// below 0.04 ulp), and the result q * 2^n kept scaled.
// =================================================================================================

const LOG2E: f32 = 1.4426950216293335;
const LN2_HI: f32 = 0.693359375;                 // 9 significant bits
const LN2_LO: f32 = -0.00021219444170128554;     // ln 2 - LN2_HI

fn exp_sc(th: f32, tl: f32) -> Sc {
    let n = round(th * LOG2E);
    let r = ((th - n * LN2_HI) - n * LN2_LO) + tl;
    // e^r = 1 + r + r^2 (1/2 + r/6 + r^2/24 + ... + r^6/8!)
    var p = 2.4801587642286904e-05;
    p = p * r + 0.00019841270113829523;
    p = p * r + 0.0013888889225199819;
    p = p * r + 0.008333333767950535;
    p = p * r + 0.0416666679084301;
    p = p * r + 0.1666666716337204;
    p = p * r + 0.5;
    return sc_norm(1.0 + (r + (r * r) * p), i32(n));
}

// Arguments beyond which sigma(t) is 1 to far below an ulp (t > SIG_ONE: e^-t < 2^-173), or
// small enough that v * sigma(t) underflows for every pair of finite factors |v| < 2^256
// (t < SIG_ZERO: e^t < 2^-620).
const SIG_ONE: f32 = 120.0;
const SIG_ZERO: f32 = -430.0;
// Beyond 2^62 the 1 in 1 + e^-t is below 2^-62 relative: dropped, and e^-t stays scaled.
const SIG_SCALED_K: i32 = 62;

// v * sigma(th + tl) = v / (1 + e^-t), v a scaled float: never inf/inf, never a subnormal e^t.
fn sig_scale(v: Sc, th: f32, tl: f32) -> Sc {
    if (th > SIG_ONE) { return v; }
    if (th < SIG_ZERO) { return sc_tiny(v.m); }
    let en = exp_sc(-th, -tl);  // e^-t = en.m * 2^en.e
    if (en.e <= SIG_SCALED_K) {
        let den = 1.0 + sc_to_f32(en);  // in [1, 2^63]; a flushed tiny e^-t only drops < 2^-126
        return sc_norm(v.m / den, v.e);
    }
    return sc_norm(v.m / en.m, v.e - en.e);
}

// act'(x) = s (1 + x w s~) for act(x) = x sigma(t(x)), s = sigma(t), s~ = sigma(-t) = 1 - s,
// w = t'(x): d/dx [x s] = s + x s s~ t'. Written as (1 + x w s~) / (1 + e^-t): no 1 - s.
fn dsig_scale(x: f32, w: f32, th: f32, tl: f32) -> Sc {
    if (th > SIG_ONE) { return Sc(0.5, 1); }  // 1
    if (th < SIG_ZERO) { return sc_tiny(-1.0); }  // (1 + x w) e^t < 0: x w < -1 there
    let en = exp_sc(-th, -tl);
    if (en.e <= SIG_SCALED_K) {
        let ef = sc_to_f32(en);
        let den = 1.0 + ef;
        let sc = ef / den;
        return sc_from((1.0 + (x * w) * sc) / den);
    }
    // s~ = 1 - 2^-62 relative: act'(x) = (1 + x w) e^t
    return sc_norm((1.0 + x * w) / en.m, -en.e);
}

// =================================================================================================
// SiLU: silu(x) = x sigma(x);  silu'(x) = sigma(x) (1 + x sigma(-x)).
// =================================================================================================

fn silu_sc(x: f32) -> Sc { return sig_scale(sc_from(x), x, 0.0); }
fn silu_dsc(x: f32) -> Sc { return dsig_scale(x, 1.0, x, 0.0); }

// =================================================================================================
// GeLU, tanh form: gelu(x) = 0.5 x (1 + tanh u) = x sigma(2u), u = sqrt(2/pi) (x + 0.044715 x^3):
// no 1 + tanh cancellation, no WGSL tanh. t = 2u = K x + M x^3 is formed in double-f32, because
// e^-t amplifies its rounding error by |t| (up to 600).
//   gelu'(x) = s + x s s~ t',  t' = K (1 + 3 * 0.044715 x^2).
// =================================================================================================

const K_HI: f32 = 1.5957691669464111;            // sqrt(8/pi), split
const K_LO: f32 = -4.534068054340423e-08;
const M_HI: f32 = 0.07135481387376785;           // sqrt(8/pi) * 0.044715, split
const M_LO: f32 = 2.3988324659995897e-09;
const GELU_C3: f32 = 0.13414500653743744;        // 3 * 0.044715
// gelu(x) = x for x > 10 (e^-t < e^-87) and |gelu(x) v| underflows for x < -20 (t < -600).
const GELU_X_ONE: f32 = 10.0;
const GELU_X_ZERO: f32 = -20.0;

// t = K x + M x^3 as th + tl, for |x| <= 20.
fn gelu_t(x: f32) -> vec2<f32> {
    let x2 = two_prod(x, x);
    let x3 = two_prod(x2.x, x);
    let x3l = x2.y * x + x3.y;
    let a = two_prod(K_HI, x);
    let al = K_LO * x + a.y;
    let b = two_prod(M_HI, x3.x);
    let bl = M_HI * x3l + (M_LO * x3.x + b.y);
    let s = two_sum(a.x, b.x);
    let lo = s.y + (al + bl);
    let t = s.x + lo;
    return vec2<f32>(t, lo - (t - s.x));
}

fn gelu_tanh_sc(x: f32) -> Sc {
    if (x > GELU_X_ONE) { return sc_from(x); }
    if (x < GELU_X_ZERO) { return sc_tiny(x); }
    let t = gelu_t(x);
    return sig_scale(sc_from(x), t.x, t.y);
}

fn gelu_tanh_dsc(x: f32) -> Sc {
    if (x > GELU_X_ONE) { return Sc(0.5, 1); }
    if (x < GELU_X_ZERO) { return sc_tiny(-1.0); }
    let t = gelu_t(x);
    let w = K_HI * (1.0 + GELU_C3 * (x * x));
    return dsig_scale(x, w, t.x, t.y);
}

// =================================================================================================
// GeLU, erf form: gelu(x) = x Phi(x) = 0.5 x erfc(-x/sqrt2);  gelu'(x) = Phi(x) + x phi(x),
// phi(x) = e^(-x^2/2) / sqrt(2 pi). With a = |x|/sqrt2 (double-f32):
//   a < 1.25:  erfc(a) by rational approximations, Phi = x < 0 ? erfc(a)/2 : 1 - erfc(a)/2;
//   a >= 1.25: erfc(a) = e^(-a^2 - 0.5625 + R/S(1/a^2)) / a, hence with
//              T = e^(-x^2/2 - 0.5625 - ln2/2 + R/S) = x erfc(a)/2 (x > 0):
//              gelu(x) = -T (x < 0), x - T (x > 0); -x^2/2 is exact in double-f32.
// The rational approximations' coefficients are those of Sun's fdlibm s_erf.c (Copyright (C) 1993
// by Sun Microsystems, Inc. All rights reserved. Developed at SunPro, a Sun Microsystems, Inc.
// business. Permission to use, copy, modify, and distribute this software is freely granted,
// provided that this notice is preserved), rounded to f32.
// =================================================================================================

const INV_SQRT2_HI: f32 = 0.7071067690849304;
const INV_SQRT2_LO: f32 = 1.2101617485882343e-08;
const TWO_OVER_SQRTPI: f32 = 1.128379225730896;
const INV_SQRT_2PI: f32 = 0.3989422917366028;
const ERX: f32 = 0.8450629115104675;             // erf(1) rounded to 24 bits
const ERFC_C_HI: f32 = -0.9090735912322998;      // -0.5625 - ln2/2, split
const ERFC_C_LO: f32 = 9.523271060629668e-10;
const ERF_X_ONE: f32 = 10.0;   // gelu_erf(x) = x beyond (erfc(7.07) < 1e-23)
const ERF_X_ZERO: f32 = -40.0; // |gelu_erf(x) v| underflows below (x^2/2 > 800)
const ERF_DX_ZERO: f32 = -28.0; // |gelu_erf'(x) v| underflows below (x^2/2 > 392, so e^-x^2/2 in range)

// erfc(a) for 0 <= a < 1.25, a = ah + al, relative error of a few 2^-24.
fn erfc_small(ah: f32, al: f32) -> f32 {
    var r: f32;
    if (ah < 0.84375) {
        let z = ah * ah;
        let p = 0.12837916612625122 + z * (-0.3250420987606049 + z * (-0.028481749817728996
                + z * (-0.005770270247012377 + z * (-2.3763017452438362e-05))));
        let q = 1.0 + z * (0.39791721105575562 + z * (0.065022252500057220 + z * (0.0050813062116503716
                + z * (0.00013249473704490811 + z * (-3.9602282413397916e-06)))));
        let y = p / q;  // erf(a) = a + a y
        if (ah < 0.25) {
            r = 1.0 - (ah + ah * y);
        } else {
            r = 0.5 - (ah * y + (ah - 0.5));  // ah - 0.5 is exact
        }
    } else {
        let s = (ah - 1.0) + al;  // ah - 1 is exact
        let p = -0.0023621185682713985 + s * (0.41485610604286194 + s * (-0.37220788002014160
                + s * (0.31834661960601807 + s * (-0.11089469492435455 + s * (0.035478305071592331
                + s * (-0.0021663755178451538))))));
        let q = 1.0 + s * (0.10642088204622269 + s * (0.54039794206619263 + s * (0.071828655898571014
                + s * (0.12617121636867523 + s * (0.013637083582580090 + s * 0.011984500102698803)))));
        return (1.0 - ERX) - p / q;
    }
    // first-order correction for the low part of a: erfc'(a) = -2/sqrt(pi) e^-a^2
    return r - al * (TWO_OVER_SQRTPI * exp(-(ah * ah)));
}

// R/S(1/a^2) of erfc(a) = e^(-a^2 - 0.5625 + R/S) / a, for 1.25 <= a < 28.
fn erfc_rs(a: f32) -> f32 {
    let s = 1.0 / (a * a);
    if (a < 2.857142857142857) {
        let r = -0.0098649441450834274 + s * (-0.69385856389999390 + s * (-10.558626174926758
                + s * (-62.375331878662109 + s * (-162.39666748046875 + s * (-184.60508728027344
                + s * (-81.287437438964844 + s * (-9.8143291473388672)))))));
        let q = 1.0 + s * (19.651271820068359 + s * (137.65776062011719 + s * (434.56588745117188
                + s * (645.38726806640625 + s * (429.00814819335938 + s * (108.63500213623047
                + s * (6.5702495574951172 + s * (-0.060424413532018661))))))));
        return r / q;
    }
    let r = -0.0098649431020021439 + s * (-0.79928326606750488 + s * (-17.757955551147461
            + s * (-160.63638305664062 + s * (-637.56646728515625 + s * (-1025.0950927734375
            + s * (-483.51919555664062))))));
    let q = 1.0 + s * (30.338060379028320 + s * (325.79251098632812 + s * (1536.7296142578125
            + s * (3199.8581542968750 + s * (2553.0502929687500 + s * (474.52853393554688
            + s * (-22.440952301025391)))))));
    return r / q;
}

// a = |x| / sqrt2 as (ah, al).
fn erf_arg(x: f32) -> vec2<f32> {
    let ax = abs(x);
    let p = two_prod(ax, INV_SQRT2_HI);
    let lo = p.y + ax * INV_SQRT2_LO;
    let h = p.x + lo;
    return vec2<f32>(h, lo - (h - p.x));
}

// -x^2/2 as (hi, lo), exact (|x| < 2^60).
fn neg_half_sq(x: f32) -> vec2<f32> {
    let x2 = two_prod(x, x);
    return vec2<f32>(-0.5 * x2.x, -0.5 * x2.y);
}

// T = e^(-x^2/2 - 0.5625 - ln2/2 + R/S(1/a^2)) for a = |x|/sqrt2 >= 1.25.
fn erf_tail_sc(x: f32, ah: f32) -> Sc {
    let h = neg_half_sq(x);
    let c = two_sum(ERFC_C_HI, erfc_rs(ah));
    let s = two_sum(h.x, c.x);
    return exp_sc(s.x, s.y + (c.y + (ERFC_C_LO + h.y)));
}

// Phi(x) for x in [-1.7678, 10] or any x > 0 up to 10 (a < 1.25 or x > 0): a normal float.
fn erf_phi(x: f32, a: vec2<f32>) -> f32 {
    if (a.x < 1.25) {
        let e = erfc_small(a.x, a.y);
        return select(1.0 - 0.5 * e, 0.5 * e, x < 0.0);
    }
    return 1.0 - sc_to_f32(erf_tail_sc(x, a.x)) / x;  // T / x = erfc(a) / 2
}

fn gelu_erf_sc(x: f32) -> Sc {
    if (x > ERF_X_ONE) { return sc_from(x); }
    if (x < ERF_X_ZERO) { return sc_tiny(x); }
    let a = erf_arg(x);
    if (a.x < 1.25) { return sc_mul(sc_from(x), sc_from(erf_phi(x, a))); }
    let t = erf_tail_sc(x, a.x);
    if (x < 0.0) { return Sc(-t.m, t.e); }
    return sc_from(x - sc_to_f32(t));
}

fn gelu_erf_dsc(x: f32) -> Sc {
    if (x > ERF_X_ONE) { return Sc(0.5, 1); }
    if (x < ERF_DX_ZERO) { return sc_tiny(-1.0); }
    let h = neg_half_sq(x);
    let g = exp_sc(h.x, h.y);  // e^(-x^2/2)
    let a = erf_arg(x);
    if (a.x < 1.25 || x > 0.0) {
        let phi = sc_to_f32(g) * INV_SQRT_2PI;  // >= e^-50 / sqrt(2pi): normal
        return sc_from(erf_phi(x, a) + x * phi);
    }
    // x <= -1.7678: Phi(x) + x phi(x) = e^(-x^2/2) (e^(R/S - 0.5625) / (2a) + x / sqrt(2pi))
    let e1 = sc_to_f32(exp_sc(erfc_rs(a.x) - 0.5625, 0.0));
    let b = (0.5 * e1) / a.x + x * INV_SQRT_2PI;
    return sc_mul(g, sc_from(b));
}

// =================================================================================================
// act(x) * v and act'(x) * a * b with the special values of the contract: NaN in -> NaN out;
// act(+inf) = +inf, act(-inf) = -0 (never -inf * 0); act'(+inf) = 1, act'(-inf) = 0; IEEE products
// with zero or infinite multipliers, as the C reference computes them.
// =================================================================================================

fn silu_mul(x: f32, v: f32) -> f32 {
    if (is_nan(x) || is_nan(v)) { return x + v; }
    if (is_inf(x)) { return mul_special(select(zero_like(x), x, x > 0.0), v); }
    if (is_zero(x)) { return mul_special(x, v); }
    return sc_times(silu_sc(x), v);
}

fn gelu_tanh_mul(x: f32, v: f32) -> f32 {
    if (is_nan(x) || is_nan(v)) { return x + v; }
    if (is_inf(x)) { return mul_special(select(zero_like(x), x, x > 0.0), v); }
    if (is_zero(x)) { return mul_special(x, v); }
    return sc_times(gelu_tanh_sc(x), v);
}

fn gelu_erf_mul(x: f32, v: f32) -> f32 {
    if (is_nan(x) || is_nan(v)) { return x + v; }
    if (is_inf(x)) { return mul_special(select(zero_like(x), x, x > 0.0), v); }
    if (is_zero(x)) { return mul_special(x, v); }
    return sc_times(gelu_erf_sc(x), v);
}

// relu(x) = x > 0 ? x : +0 (as PyTorch); relu'(x) = x > 0 ? 1 : 0.
fn relu_mul(x: f32, v: f32) -> f32 {
    if (is_nan(x) || is_nan(v)) { return x + v; }
    if (is_pos(x)) { return mul_nf(x, v); }
    return mul_special(0.0, v);
}

fn silu_dmul(x: f32, a: f32, b: f32) -> f32 {
    if (is_nan(x) || is_nan(a) || is_nan(b)) { return x + a + b; }
    if (is_inf(x)) { return select(mul_special(mul_special(0.0, a), b), mul_nf(a, b), x > 0.0); }
    return sc_times2(silu_dsc(x), a, b);
}

fn gelu_tanh_dmul(x: f32, a: f32, b: f32) -> f32 {
    if (is_nan(x) || is_nan(a) || is_nan(b)) { return x + a + b; }
    if (is_inf(x)) { return select(mul_special(mul_special(0.0, a), b), mul_nf(a, b), x > 0.0); }
    return sc_times2(gelu_tanh_dsc(x), a, b);
}

fn gelu_erf_dmul(x: f32, a: f32, b: f32) -> f32 {
    if (is_nan(x) || is_nan(a) || is_nan(b)) { return x + a + b; }
    if (is_inf(x)) { return select(mul_special(mul_special(0.0, a), b), mul_nf(a, b), x > 0.0); }
    return sc_times2(gelu_erf_dsc(x), a, b);
}

fn relu_dmul(x: f32, a: f32, b: f32) -> f32 {
    if (is_nan(x) || is_nan(a) || is_nan(b)) { return x + a + b; }
    if (is_pos(x)) { return mul_nf(a, b); }
    return mul_special(mul_special(0.0, a), b);
}

// =================================================================================================
// f16 <-> f32 on the bits (exact, round to nearest even, independent of any GPU flushing).
// =================================================================================================

fn f16_to_f32(h: u32) -> f32 {
    let s = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0u) {  // zero or subnormal: m * 2^-24, a normal f32 (exact)
        let v = f32(m) * pow2(-24);
        return bitcast<f32>(bitcast<u32>(v) | s);
    }
    if (e == 31u) { return bitcast<f32>(s | EXP_INF | (m << 13u)); }
    return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}

fn f32_to_f16(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let s = (b >> 16u) & 0x8000u;
    let e = i32((b >> 23u) & 0xffu);
    let m = b & 0x7fffffu;
    if (e == 255) { return s | 0x7c00u | select(0u, 0x200u, m != 0u); }
    let he = e - 112;  // f16 biased exponent
    if (he >= 31) { return s | 0x7c00u; }
    if (he <= 0) {
        if (he < -10) { return s; }  // below 2^-25: rounds to zero
        let mm = m | 0x800000u;
        let sh = u32(14 - he);  // 14..24 bits dropped
        var q = mm >> sh;
        let rem = mm & ((1u << sh) - 1u);
        let half = 1u << (sh - 1u);
        if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
        return s | q;  // a carry into 0x400 is the smallest normal, as it should be
    }
    var q = (u32(he) << 10u) | (m >> 13u);
    let rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) == 1u)) { q = q + 1u; }  // carry may give inf
    return s | q;
}

fn lo16(w: u32) -> f32 { return f16_to_f32(w & 0xffffu); }
fn hi16(w: u32) -> f32 { return f16_to_f32(w >> 16u); }
fn pack16(lo: f32, hi: f32) -> u32 { return f32_to_f16(lo) | (f32_to_f16(hi) << 16u); }
// The packed word for elements (2k, 2k+1): the high half is written only when 2k+1 < n,
// otherwise `old`'s high half is kept.
fn pack_tail(lo: f32, hi: f32, old: u32, full: bool) -> u32 {
    return select((old & 0xffff0000u) | f32_to_f16(lo), pack16(lo, hi), full);
}

// =================================================================================================
// Kernels, f32: one element per thread.
// =================================================================================================

@compute @workgroup_size(256)
fn gelu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    x_io[i] = gelu_tanh_mul(x_io[i], 1.0);
}

@compute @workgroup_size(256)
fn gelu_erf_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    x_io[i] = gelu_erf_mul(x_io[i], 1.0);
}

@compute @workgroup_size(256)
fn silu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    x_io[i] = silu_mul(x_io[i], 1.0);
}

@compute @workgroup_size(256)
fn relu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    x_io[i] = relu_mul(x_io[i], 1.0);
}

@compute @workgroup_size(256)
fn swiglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = silu_mul(in0[i], in1[i]);
}

@compute @workgroup_size(256)
fn geglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = gelu_tanh_mul(in0[i], in1[i]);
}

@compute @workgroup_size(256)
fn geglu_erf_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = gelu_erf_mul(in0[i], in1[i]);
}

@compute @workgroup_size(256)
fn reglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = relu_mul(in0[i], in1[i]);
}

@compute @workgroup_size(256)
fn gelu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = gelu_tanh_dmul(in0[i], in1[i], 1.0);
}

@compute @workgroup_size(256)
fn gelu_erf_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = gelu_erf_dmul(in0[i], in1[i], 1.0);
}

@compute @workgroup_size(256)
fn silu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = silu_dmul(in0[i], in1[i], 1.0);
}

@compute @workgroup_size(256)
fn relu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2[i] = relu_dmul(in0[i], in1[i], 1.0);
}

// Gated backward: dgate = dh * up * act'(gate), dup = dh * act(gate).
@compute @workgroup_size(256)
fn swiglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = in0[i];
    let u = in1[i];
    let d = in2[i];
    out3[i] = silu_dmul(g, d, u);
    out4[i] = silu_mul(g, d);
}

@compute @workgroup_size(256)
fn geglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = in0[i];
    let u = in1[i];
    let d = in2[i];
    out3[i] = gelu_tanh_dmul(g, d, u);
    out4[i] = gelu_tanh_mul(g, d);
}

@compute @workgroup_size(256)
fn geglu_erf_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = in0[i];
    let u = in1[i];
    let d = in2[i];
    out3[i] = gelu_erf_dmul(g, d, u);
    out4[i] = gelu_erf_mul(g, d);
}

@compute @workgroup_size(256)
fn reglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = in0[i];
    let u = in1[i];
    let d = in2[i];
    out3[i] = relu_dmul(g, d, u);
    out4[i] = relu_mul(g, d);
}

// =================================================================================================
// Kernels, vec4<f32>: four elements per thread (thread k: elements 4k..4k+3). A partial last
// vector writes only its lanes below n, so the padding of a buffer is never touched.
// =================================================================================================

fn gelu4(v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_tanh_mul(v.x, 1.0), gelu_tanh_mul(v.y, 1.0), gelu_tanh_mul(v.z, 1.0), gelu_tanh_mul(v.w, 1.0));
}
fn gelu_erf4(v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_erf_mul(v.x, 1.0), gelu_erf_mul(v.y, 1.0), gelu_erf_mul(v.z, 1.0), gelu_erf_mul(v.w, 1.0));
}
fn silu4(v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(silu_mul(v.x, 1.0), silu_mul(v.y, 1.0), silu_mul(v.z, 1.0), silu_mul(v.w, 1.0));
}
fn relu4(v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(relu_mul(v.x, 1.0), relu_mul(v.y, 1.0), relu_mul(v.z, 1.0), relu_mul(v.w, 1.0));
}
fn swiglu4(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(silu_mul(g.x, u.x), silu_mul(g.y, u.y), silu_mul(g.z, u.z), silu_mul(g.w, u.w));
}
fn geglu4(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_tanh_mul(g.x, u.x), gelu_tanh_mul(g.y, u.y), gelu_tanh_mul(g.z, u.z), gelu_tanh_mul(g.w, u.w));
}
fn geglu_erf4(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_erf_mul(g.x, u.x), gelu_erf_mul(g.y, u.y), gelu_erf_mul(g.z, u.z), gelu_erf_mul(g.w, u.w));
}
fn reglu4(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(relu_mul(g.x, u.x), relu_mul(g.y, u.y), relu_mul(g.z, u.z), relu_mul(g.w, u.w));
}
fn dgelu4(x: vec4<f32>, a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_tanh_dmul(x.x, a.x, b.x), gelu_tanh_dmul(x.y, a.y, b.y), gelu_tanh_dmul(x.z, a.z, b.z), gelu_tanh_dmul(x.w, a.w, b.w));
}
fn dgelu_erf4(x: vec4<f32>, a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(gelu_erf_dmul(x.x, a.x, b.x), gelu_erf_dmul(x.y, a.y, b.y), gelu_erf_dmul(x.z, a.z, b.z), gelu_erf_dmul(x.w, a.w, b.w));
}
fn dsilu4(x: vec4<f32>, a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(silu_dmul(x.x, a.x, b.x), silu_dmul(x.y, a.y, b.y), silu_dmul(x.z, a.z, b.z), silu_dmul(x.w, a.w, b.w));
}
fn drelu4(x: vec4<f32>, a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(relu_dmul(x.x, a.x, b.x), relu_dmul(x.y, a.y, b.y), relu_dmul(x.z, a.z, b.z), relu_dmul(x.w, a.w, b.w));
}

const ONES4: vec4<f32> = vec4<f32>(1.0, 1.0, 1.0, 1.0);

@compute @workgroup_size(256)
fn gelu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (4u * i >= n) { return; }
    let r = gelu4(x4_io[i]);
    if (4u * i + 3u < n) { x4_io[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { x4_io[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (4u * i >= n) { return; }
    let r = gelu_erf4(x4_io[i]);
    if (4u * i + 3u < n) { x4_io[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { x4_io[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn silu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (4u * i >= n) { return; }
    let r = silu4(x4_io[i]);
    if (4u * i + 3u < n) { x4_io[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { x4_io[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn relu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (4u * i >= n) { return; }
    let r = relu4(x4_io[i]);
    if (4u * i + 3u < n) { x4_io[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { x4_io[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn swiglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = swiglu4(in0_4[i], in1_4[i]);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn geglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = geglu4(in0_4[i], in1_4[i]);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn geglu_erf_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = geglu_erf4(in0_4[i], in1_4[i]);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn reglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = reglu4(in0_4[i], in1_4[i]);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn gelu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = dgelu4(in0_4[i], in1_4[i], ONES4);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn gelu_erf_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = dgelu_erf4(in0_4[i], in1_4[i], ONES4);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn silu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = dsilu4(in0_4[i], in1_4[i], ONES4);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn relu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (4u * i >= n) { return; }
    let r = drelu4(in0_4[i], in1_4[i], ONES4);
    if (4u * i + 3u < n) { out2_4[i] = r; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out2_4[i][k] = r[k]; }
}

@compute @workgroup_size(256)
fn swiglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (4u * i >= n) { return; }
    let g = in0_4[i];
    let d = in2_4[i];
    let dg = dsilu4(g, d, in1_4[i]);
    let du = swiglu4(g, d);
    if (4u * i + 3u < n) { out3_4[i] = dg; out4_4[i] = du; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out3_4[i][k] = dg[k]; out4_4[i][k] = du[k]; }
}

@compute @workgroup_size(256)
fn geglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (4u * i >= n) { return; }
    let g = in0_4[i];
    let d = in2_4[i];
    let dg = dgelu4(g, d, in1_4[i]);
    let du = geglu4(g, d);
    if (4u * i + 3u < n) { out3_4[i] = dg; out4_4[i] = du; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out3_4[i][k] = dg[k]; out4_4[i][k] = du[k]; }
}

@compute @workgroup_size(256)
fn geglu_erf_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (4u * i >= n) { return; }
    let g = in0_4[i];
    let d = in2_4[i];
    let dg = dgelu_erf4(g, d, in1_4[i]);
    let du = geglu_erf4(g, d);
    if (4u * i + 3u < n) { out3_4[i] = dg; out4_4[i] = du; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out3_4[i][k] = dg[k]; out4_4[i][k] = du[k]; }
}

@compute @workgroup_size(256)
fn reglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (4u * i >= n) { return; }
    let g = in0_4[i];
    let d = in2_4[i];
    let dg = drelu4(g, d, in1_4[i]);
    let du = reglu4(g, d);
    if (4u * i + 3u < n) { out3_4[i] = dg; out4_4[i] = du; return; }
    for (var k = 0u; 4u * i + k < n; k++) { out3_4[i][k] = dg[k]; out4_4[i][k] = du[k]; }
}

// =================================================================================================
// Kernels, packed f16 (array<u32>, two elements per word, thread k: elements 2k and 2k+1). Inputs
// are widened exactly, arithmetic is f32, results are rounded to nearest even. Runs on any
// adapter: no shader-f16 feature needed.
// =================================================================================================

@compute @workgroup_size(256)
fn gelu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (2u * i >= n) { return; }
    let w = xp_io[i];
    xp_io[i] = pack_tail(gelu_tanh_mul(lo16(w), 1.0), gelu_tanh_mul(hi16(w), 1.0), w, 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (2u * i >= n) { return; }
    let w = xp_io[i];
    xp_io[i] = pack_tail(gelu_erf_mul(lo16(w), 1.0), gelu_erf_mul(hi16(w), 1.0), w, 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn silu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (2u * i >= n) { return; }
    let w = xp_io[i];
    xp_io[i] = pack_tail(silu_mul(lo16(w), 1.0), silu_mul(hi16(w), 1.0), w, 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn relu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params1.n;
    if (2u * i >= n) { return; }
    let w = xp_io[i];
    xp_io[i] = pack_tail(relu_mul(lo16(w), 1.0), relu_mul(hi16(w), 1.0), w, 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn swiglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    out2_p[i] = pack_tail(silu_mul(lo16(g), lo16(u)), silu_mul(hi16(g), hi16(u)), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn geglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    out2_p[i] = pack_tail(gelu_tanh_mul(lo16(g), lo16(u)), gelu_tanh_mul(hi16(g), hi16(u)), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn geglu_erf_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    out2_p[i] = pack_tail(gelu_erf_mul(lo16(g), lo16(u)), gelu_erf_mul(hi16(g), hi16(u)), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn reglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    out2_p[i] = pack_tail(relu_mul(lo16(g), lo16(u)), relu_mul(hi16(g), hi16(u)), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn gelu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let x = in0_p[i];
    let d = in1_p[i];
    out2_p[i] = pack_tail(gelu_tanh_dmul(lo16(x), lo16(d), 1.0), gelu_tanh_dmul(hi16(x), hi16(d), 1.0), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn gelu_erf_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let x = in0_p[i];
    let d = in1_p[i];
    out2_p[i] = pack_tail(gelu_erf_dmul(lo16(x), lo16(d), 1.0), gelu_erf_dmul(hi16(x), hi16(d), 1.0), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn silu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let x = in0_p[i];
    let d = in1_p[i];
    out2_p[i] = pack_tail(silu_dmul(lo16(x), lo16(d), 1.0), silu_dmul(hi16(x), hi16(d), 1.0), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn relu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params3.n;
    if (2u * i >= n) { return; }
    let x = in0_p[i];
    let d = in1_p[i];
    out2_p[i] = pack_tail(relu_dmul(lo16(x), lo16(d), 1.0), relu_dmul(hi16(x), hi16(d), 1.0), out2_p[i], 2u * i + 1u < n);
}

@compute @workgroup_size(256)
fn swiglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    let d = in2_p[i];
    let full = 2u * i + 1u < n;
    out3_p[i] = pack_tail(silu_dmul(lo16(g), lo16(d), lo16(u)), silu_dmul(hi16(g), hi16(d), hi16(u)), out3_p[i], full);
    out4_p[i] = pack_tail(silu_mul(lo16(g), lo16(d)), silu_mul(hi16(g), hi16(d)), out4_p[i], full);
}

@compute @workgroup_size(256)
fn geglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    let d = in2_p[i];
    let full = 2u * i + 1u < n;
    out3_p[i] = pack_tail(gelu_tanh_dmul(lo16(g), lo16(d), lo16(u)), gelu_tanh_dmul(hi16(g), hi16(d), hi16(u)), out3_p[i], full);
    out4_p[i] = pack_tail(gelu_tanh_mul(lo16(g), lo16(d)), gelu_tanh_mul(hi16(g), hi16(d)), out4_p[i], full);
}

@compute @workgroup_size(256)
fn geglu_erf_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    let d = in2_p[i];
    let full = 2u * i + 1u < n;
    out3_p[i] = pack_tail(gelu_erf_dmul(lo16(g), lo16(d), lo16(u)), gelu_erf_dmul(hi16(g), hi16(d), hi16(u)), out3_p[i], full);
    out4_p[i] = pack_tail(gelu_erf_mul(lo16(g), lo16(d)), gelu_erf_mul(hi16(g), hi16(d)), out4_p[i], full);
}

@compute @workgroup_size(256)
fn reglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let n = params5.n;
    if (2u * i >= n) { return; }
    let g = in0_p[i];
    let u = in1_p[i];
    let d = in2_p[i];
    let full = 2u * i + 1u < n;
    out3_p[i] = pack_tail(relu_dmul(lo16(g), lo16(d), lo16(u)), relu_dmul(hi16(g), hi16(d), hi16(u)), out3_p[i], full);
    out4_p[i] = pack_tail(relu_mul(lo16(g), lo16(d)), relu_mul(hi16(g), hi16(d)), out4_p[i], full);
}
