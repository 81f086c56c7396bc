// activation.wgsl — libffn's WGSL activation kernels: GeLU (tanh and erf), SiLU, ReLU, the gated
// combines SwiGLU / GeGLU / ReGLU and all their backward passes, for f32 storage, vec4<f32> storage
// and packed f16 storage (two f16 per u32 word, RNE, no shader-f16 feature needed).
// activation_f16.wgsl adds array<f16> variants on top of this file. Numerical contract:
// docs/design.md and docs/numerics.md ("WebGPU (WGSL)"); they hold whether or not the GPU
// compiler contracts a * b + c into an fma and whether or not fma() is fused. Not here: the host
// code (ffn-webgpu.js) and any matrix multiply. Every kernel: @workgroup_size(256), a
// grid-stride loop over a 1-D or 2-D grid (at most 65535 workgroups per dimension), several
// elements per thread.

// =================================================================================================
// Bind group ABI (group 0). n = number of ELEMENTS in every variant; n < 2^31.
//   unary in place   (gelu_inplace ...):   0 x (read_write)             1 params
//   unary backward   (gelu_backward ...):  0 x  1 dy  (read)  2 dx (read_write)           3 params
//   gated forward    (swiglu_combine ...): 0 gate  1 up (read)  2 hidden (read_write)     3 params
//   gated backward   (swiglu_backward ...):0 gate  1 up  2 dh (read)  3 dgate  4 dup (rw) 5 params
// Variants: name (array<f32>), name_vec4 (array<vec4<f32>>: buffers padded to 16 bytes),
// name_f16pk (array<u32> of f16 pairs, element 2k in the low half: buffers padded to 4 bytes),
// name_f16 (array<f16>, activation_f16.wgsl). Outputs never alias inputs (WebGPU forbids it).
// Any grid of at most 2^32 - 1 threads covers all n elements: thread t handles the units
// t, t + T, t + 2T, ... (T = threads in the grid; a unit is an element, a vec4 or an f16 pair), so
// the classic one-thread-per-element grid works too; the host's grid gives each thread 4 units
// (2 for vec4), whose loads are then all in flight together.
// =================================================================================================

struct Params { n: u32 }

const WG: u32 = 256u;  // workgroup size of every kernel

// Pipeline-overridable constants, set by the host (ffn-webgpu.js) from a probe dispatch:
// FFN_FMA_EXACT: fma(a, b, c) is one rounding of a * b + c on this device. Error-free products then
//   take 2 operations instead of 16; when false (the default, always safe) they use the split form.
// FFN_F16_CVT: unpack2x16float and pack2x16float are exact and round to nearest even (checked on
//   every f16 value and on the rounding boundaries around each); when false the conversions work
//   on the bits.
override FFN_FMA_EXACT: bool = false;
override FFN_F16_CVT: bool = false;

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

// The probe's counters (entry point ffn_probe only): fma, unpack2x16float, pack2x16float
// mismatches; [3] is 0 (a value the compiler cannot see).
@group(0) @binding(0) var<storage, read_write> probe_out: array<atomic<u32>, 4>;

// A zero that the shader compiler cannot prove to be zero: every kernel sets it to n & 2^31 (n <
// 2^31). opaque(v) = v | ffn_zero keeps a rounded product from being fused into a later
// addition (contraction would use the exact product there and break error-free transformations).
var<private> ffn_zero: u32;

// Thread index over a grid of (nwg.x, nwg.y) workgroups: the host splits more than 65535
// workgroups into rows of nwg.x, so i = gid.x + gid.y * (nwg.x * 256).
fn flat_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * (nwg.x * WG);
}

// Threads in the grid (the stride of the grid-stride loop).
fn grid_threads(nwg: vec3<u32>) -> u32 {
    return nwg.x * WG * nwg.y;
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
// Exact products and sums in f32 arithmetic (double-f32), correct under any compiler. Vulkan lets a
// driver apply the identities of real arithmetic to every float operation without a NoContraction
// decoration, and Tint emits none: contraction of a * b + c into an fma, reassociation, and
// cancellation such as (a + b) - a -> b, which NVIDIA's compiler does (it zeroed every two-sum's
// error term: the GeLU family's 60-225 ulp on an H200, reproduced exactly on SwiftShader by
// substituting error terms of 0). Hence:
// - every intermediate of an error-free transformation (sums, differences, rounded products,
//   constants) passes through opaque(): the compiler sees an integer OR with an unknown value, so no
//   identity spans two steps and every step is computed as written;
// - the split of a factor works on its bits (hi12; the Veltkamp split c = 4097 a, h = c - (c - a)
//   collapses to h = a under contraction): the products of 12-bit halves are exact, so a fused one
//   rounds as an unfused one;
// - FFN_FMA_EXACT (probed by the host) selects e = fma(a, b, -p) when fma is fused;
// - GPUs flush subnormals: the split products need every half normal, so the fast paths take only
//   operands of at least 2^-100 there (FAST_MIN, SILU_FAST), where even a low half is normal.
// =================================================================================================

fn opaque(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) | ffn_zero); }

// fma where its exactness matters (two_prod, the division refinements). One function, so that a
// test build can substitute an exact software fma on devices whose fma is unfused.
fn fmx(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }

// The top 12 of the 24 significant bits of a (normal a).
fn hi12(a: f32) -> f32 { return bitcast<f32>(bitcast<u32>(a) & 0xfffff000u); }

// a * b = p + e exactly (Dekker; 2^-100 < |a|, |b| < 2^100, a * b normal): no fma needed. Each
// partial sum is exact and laundered, so that no factorisation (ah bh + ah bl -> ah b) or
// reordering can join two of them.
fn two_prod_split(a: f32, b: f32) -> vec2<f32> {
    let p = opaque(a * b);
    let ah = hi12(a);
    let al = opaque(a - ah);
    let bh = hi12(b);
    let bl = opaque(b - bh);
    let e1 = opaque(ah * bh - p);
    let e2 = opaque(e1 + ah * bl);
    let e3 = opaque(e2 + al * bh);
    return vec2<f32>(p, e3 + al * bl);
}

fn two_prod(a: f32, b: f32) -> vec2<f32> {
    if (FFN_FMA_EXACT) {
        let p = opaque(a * b);
        return vec2<f32>(p, fmx(a, b, -p));
    }
    return two_prod_split(a, b);
}

// a + b = s + e exactly (Knuth). Unlaundered, (a + b) - a -> b and then s - b -> a give e = 0.
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = opaque(a + b);
    let bb = opaque(s - a);
    let ea = opaque(a - opaque(s - bb));
    let eb = opaque(b - bb);
    return vec2<f32>(s, ea + eb);
}
// a + b = s + e exactly when |a| >= |b| or a = 0 (Dekker).
fn fast_two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = opaque(a + b);
    return vec2<f32>(s, b - opaque(s - a));
}

// a / b to within 0.5 ulp + 2^-40 relative (b normal, result normal): WGSL's division may err by
// 2.5 ulp, so one correction step, q + (a - q b) / b, with the remainder a - q b exact (fma, or
// a - p - e from two_prod; a - p is exact since p is within a few ulps of a).
fn div_rn(a: f32, b: f32) -> f32 {
    let r = opaque(1.0 / b);  // (1 / b) b must not fold to 1
    let q = opaque(a * r);
    if (FFN_FMA_EXACT) { return fma(fmx(-q, b, a), r, q); }
    let p = two_prod_split(q, b);
    return fma(opaque(a - p.x) - p.y, r, q);
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
    let r = (opaque(th - n * LN2_HI) - n * LN2_LO) + tl;  // no n (LN2_HI + LN2_LO)
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
        return sc_norm(div_rn(v.m, den), v.e);
    }
    return sc_norm(div_rn(v.m, en.m), v.e - en.e);
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
        let sc = div_rn(ef, den);
        return sc_from(div_rn(1.0 + (x * w) * sc, den));
    }
    // s~ = 1 - 2^-62 relative: act'(x) = (1 + x w) e^t
    return sc_norm(div_rn(1.0 + x * w, en.m), -en.e);
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
    let a = two_prod(opaque(K_HI), x);
    let al = K_LO * x + a.y;
    let b = two_prod(opaque(M_HI), x3.x);
    let bl = M_HI * x3l + (M_LO * x3.x + b.y);
    let s = two_sum(a.x, b.x);
    return fast_two_sum(s.x, s.y + (al + bl));
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
        let y = div_rn(p, q);  // erf(a) = a + a y
        if (ah < 0.25) {
            r = 1.0 - (ah + ah * y);
        } else {
            r = 0.5 - opaque(ah * y + opaque(ah - 0.5));  // ah - 0.5 is exact
        }
    } else {
        let s = opaque(ah - 1.0) + al;  // ah - 1 is exact
        let p = -0.0023621185682713985 + s * (0.41485610604286194 + s * (-0.37220788002014160
                + s * (0.31834661960601807 + s * (-0.11089469492435455 + s * (0.035478305071592331
                + s * (-0.0021663755178451538))))));
        let q = 1.0 + s * (0.10642088204622269 + s * (0.54039794206619263 + s * (0.071828655898571014
                + s * (0.12617121636867523 + s * (0.013637083582580090 + s * 0.011984500102698803)))));
        return (1.0 - ERX) - div_rn(p, q);
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
        return div_rn(r, q);
    }
    let r = -0.0098649431020021439 + s * (-0.79928326606750488 + s * (-17.757955551147461
            + s * (-160.63638305664062 + s * (-637.56646728515625 + s * (-1025.0950927734375
            + s * (-483.51919555664062))))));
    let q = 1.0 + s * (30.338060379028320 + s * (325.79251098632812 + s * (1536.7296142578125
            + s * (3199.8581542968750 + s * (2553.0502929687500 + s * (474.52853393554688
            + s * (-22.440952301025391)))))));
    return div_rn(r, q);
}

// a = |x| / sqrt2 as (ah, al).
fn erf_arg(x: f32) -> vec2<f32> {
    let ax = abs(x);
    let p = two_prod(ax, opaque(INV_SQRT2_HI));
    return fast_two_sum(p.x, p.y + ax * INV_SQRT2_LO);
}

// -x^2/2 as (hi, lo), exact (|x| < 2^60).
fn neg_half_sq(x: f32) -> vec2<f32> {
    let x2 = two_prod(x, x);
    return vec2<f32>(-0.5 * x2.x, -0.5 * x2.y);
}

// T = e^(-x^2/2 - 0.5625 - ln2/2 + R/S(1/a^2)) for a = |x|/sqrt2 >= 1.25.
fn erf_tail_sc(x: f32, ah: f32) -> Sc {
    let h = neg_half_sq(x);
    let c = two_sum(opaque(ERFC_C_HI), erfc_rs(ah));
    let s = two_sum(h.x, c.x);
    return exp_sc(s.x, s.y + (c.y + (ERFC_C_LO + h.y)));
}

// Phi(x) for x in [-1.7678, 10] or any x > 0 up to 10 (a < 1.25 or x > 0): a normal float.
fn erf_phi(x: f32, a: vec2<f32>) -> f32 {
    if (a.x < 1.25) {
        let e = erfc_small(a.x, a.y);
        return select(1.0 - 0.5 * e, 0.5 * e, x < 0.0);
    }
    return 1.0 - div_rn(sc_to_f32(erf_tail_sc(x, a.x)), x);  // T / x = erfc(a) / 2
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
    let b = div_rn(0.5 * e1, a.x) + x * INV_SQRT_2PI;
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

// f16 pairs <-> f32: the builtins where the probe found them exact (FFN_F16_CVT), else the bits.
fn unpack_h2(w: u32) -> vec2<f32> {
    if (FFN_F16_CVT) { return unpack2x16float(w); }
    return vec2<f32>(lo16(w), hi16(w));
}
fn pack_h2(lo: f32, hi: f32) -> u32 {
    if (FFN_F16_CVT) { return pack2x16float(vec2<f32>(lo, hi)); }
    return pack16(lo, hi);
}

// =================================================================================================
// Fast paths, four lanes at a time, for the common inputs: x in a range where every intermediate
// is a normal float, and products that are normal floats. They flag each lane they cannot do
// (special values, tails, huge or tiny multipliers, results that under- or overflow); the kernels
// recompute those lanes with the general functions above, one at a time. Two accuracy levels:
// - f32 storage ("_f4", "_d4", "_g4"): own exp, double-f32 arguments, refined divisions; within the
//   f32 bounds of docs/numerics.md;
// - f16 storage ("_lp"): relative error below 2^-14 before the result is rounded to f16, so the f16
//   result stays within 1 ulp of the reference; builtin exp2 (3 + 2|x| ulp at |x| <= 116:
//   < 2^-15) and division (2.5 ulp, for divisors below 2^126). Inputs are f16 values, so no input
//   is tiny and no product of two underflows: a lane is right when |y| < 65500 (false for NaN and
//   inf, which every special input or overflow yields; larger results take the general path, where
//   the rounding to f16 may overflow), and only the divisions' domain limits x (SiLU, GeLU-tanh).
//   Where the formula underflows (x far below 0), y is a zero or a tiny float of the right sign,
//   which the rounding to f16 turns into the right zero.
// =================================================================================================

alias V4 = vec4<f32>;
alias U4 = vec4<u32>;
alias B4 = vec4<bool>;
struct R4 { y: V4, ok: B4 }            // y = act(x) * v or act'(x) * a * b; ok: y is right
struct R42 { y: V4, z: V4, ok: B4 }    // gated backward: y = dgate, z = dup
struct DF4 { hi: V4, lo: V4 }          // double-f32, hi + lo

const ONE4: V4 = V4(1.0);
const ZERO4: V4 = V4(0.0);

// 2^-64 <= |x| < lim (false for 0, tiny values, inf and NaN), on the bits. The lower bound keeps
// every operand of the split products and every correction term of the divisions normal (a GPU
// flushes subnormals); the rare tiny inputs take the general path.
const FAST_MIN_BITS: u32 = 0x1f800000u;  // 2^-64
fn in_range4(x: V4, lim: f32) -> B4 {
    return ((bitcast<U4>(x) & U4(ABS_MASK)) - U4(FAST_MIN_BITS)) < U4(bitcast<u32>(lim) - FAST_MIN_BITS);
}
// x is a normal float (not 0, subnormal, inf or NaN).
fn normal4(x: V4) -> B4 {
    return ((bitcast<U4>(x) & U4(ABS_MASK)) - U4(0x00800000u)) < U4(0x7f000000u);
}
// y is finite and below 65500 in magnitude (its rounding to f16 cannot overflow); for f16 storage.
fn f16ok4(y: V4) -> B4 { return abs(y) < V4(65500.0); }
// +0 or -0 with the signs of v.
fn sign0_4(v: V4) -> V4 { return bitcast<V4>(bitcast<U4>(v) & U4(SIGN_MASK)); }

fn opaque4(v: V4) -> V4 { return bitcast<V4>(bitcast<U4>(v) | U4(ffn_zero)); }
fn c4(v: f32) -> V4 { return opaque4(V4(v)); }  // a constant the compiler cannot fold
fn fmx4(a: V4, b: V4, c: V4) -> V4 { return fma(a, b, c); }
fn hi12_4(a: V4) -> V4 { return bitcast<V4>(bitcast<U4>(a) & U4(0xfffff000u)); }

// The error-free transformations of two_prod_split and fast_two_sum, four lanes at a time
// (every intermediate laundered, operands of the split at least 2^-100).
fn two_prod4(a: V4, b: V4) -> DF4 {
    let p = opaque4(a * b);
    if (FFN_FMA_EXACT) { return DF4(p, fmx4(a, b, -p)); }
    let ah = hi12_4(a);
    let al = opaque4(a - ah);
    let bh = hi12_4(b);
    let bl = opaque4(b - bh);
    let e1 = opaque4(ah * bh - p);
    let e2 = opaque4(e1 + ah * bl);
    let e3 = opaque4(e2 + al * bh);
    return DF4(p, e3 + al * bl);
}
// a + b = s + e exactly for a, b >= 0: Dekker's fast two-sum with the larger first (7 operations
// instead of two_sum's 11).
fn two_sum_pos4(a: V4, b: V4) -> DF4 {
    let big = max(a, b);
    let small = min(a, b);
    let s = opaque4(big + small);
    return DF4(s, small - opaque4(s - big));
}
// 1 / d and a / d to within 0.5 ulp + 2^-40 (see div_rn), 1 <= |d| < 2^100 and |a / d| > 2^-100.
fn rcp_acc4(d: V4) -> V4 {
    let r = opaque4(1.0 / d);
    if (FFN_FMA_EXACT) { return fma(fmx4(-r, d, ONE4), r, r); }
    let p = two_prod4(r, d);
    return fma(opaque4(1.0 - p.hi) - p.lo, r, r);
}
fn div_acc4(a: V4, d: V4) -> V4 {
    let r = opaque4(1.0 / d);
    let q = opaque4(a * r);
    if (FFN_FMA_EXACT) { return fma(fmx4(-q, d, a), r, q); }
    let p = two_prod4(q, d);
    return fma(opaque4(a - p.hi) - p.lo, r, q);
}

// e^(th + tl) for -87 <= th <= 87 (a normal result), |tl| <= 2^-20 |th|: n = round(th / ln 2) by
// the 1.5 * 2^23 shifter (its low bits hold n, so 2^n comes from integer arithmetic), r = th - n
// ln 2 (n LN2_HI exact, th - n LN2_HI exact by Sterbenz), e^r by its Taylor polynomial to degree 7
// (|r| <= 0.347: truncation 2^-27). Max error 1.0 ulp (C model of this code over [-87, 87]).
const EXP_SHIFTER: f32 = 12582912.0;
fn exp_acc4(th: V4, tl: V4) -> V4 {
    let shifter = c4(EXP_SHIFTER);
    let k = opaque4(fma(th, V4(LOG2E), shifter));  // (th L + S) - S must not fold to th L
    let n = k - shifter;
    let r = fma(-n, V4(LN2_LO), opaque4(fma(-n, V4(LN2_HI), th))) + tl;  // no n (LN2_HI + LN2_LO)
    var p = V4(1.9841270113829523e-04);
    p = fma(p, r, V4(1.3888889225199819e-03));
    p = fma(p, r, V4(8.333333767950535e-03));
    p = fma(p, r, V4(4.16666679084301e-02));
    p = fma(p, r, V4(1.666666716337204e-01));
    p = fma(p, r, V4(0.5));
    let q = fma(p, r * r, r) + 1.0;
    return q * bitcast<V4>((bitcast<U4>(k) + 127u) << U4(23u));  // q * 2^n
}

// v with lane j replaced (j >= 4: v unchanged).
fn with_lane4(v: V4, j: u32, r: f32) -> V4 { return select(v, V4(r), U4(j) == U4(0u, 1u, 2u, 3u)); }
// Bit l set for every lane l where b is true.
fn bits4(b: B4) -> u32 { return select(0u, 1u, b.x) | select(0u, 2u, b.y) | select(0u, 4u, b.z) | select(0u, 8u, b.w); }

// Units of a thread: u0 and u0 + k T (T the grid's threads, at most nu), k < 4 (or 2); ok: below nu.
// No overflow: u0 < nu < 2^31 and T <= nu.
struct Units4 { i: U4, ok: B4, next: u32 }
fn units4(u0: u32, st: u32, nu: u32) -> Units4 {
    let i1 = u0 + st;
    let i2 = min(i1, nu) + st;
    let i3 = min(i2, nu) + st;
    return Units4(U4(u0, i1, i2, i3), U4(u0, i1, i2, i3) < U4(nu), min(i3, nu) + st);
}
struct Units2 { i: vec2<u32>, ok: vec2<bool>, next: u32 }
fn units2(u0: u32, st: u32, nu: u32) -> Units2 {
    let i1 = u0 + st;
    return Units2(vec2<u32>(u0, i1), vec2<u32>(u0, i1) < vec2<u32>(nu), min(i1, nu) + st);
}

// --- SiLU ------------------------------------------------------------------------------------------
// silu(x) = x / (1 + e^-x); silu'(x) = s (1 + x e^-x s), s = 1 / (1 + e^-x). |x| < 64: e^-x, s
// >= 2^-92 and the low halves of s and x s in the split products all normal (up to |x| = 80 every
// result is normal, but from |x| = 71 on a flushed low half of s cost an NVIDIA GPU 1e4 ulp when
// the division's correction was fused). Max error (C model): 2.24 ulp forward (so at most 2 ulp
// from the correctly rounded value), 3.65 backward.
const SILU_FAST: f32 = 64.0;

fn silu_f4(x: V4, v: V4) -> R4 {
    let ok = in_range4(x, SILU_FAST);
    let xs = select(ONE4, x, ok);
    let e = exp_acc4(-xs, ZERO4);
    let y = div_acc4(xs, 1.0 + e) * v;
    return R4(y, ok & normal4(y));
}
fn silu_d4(x: V4, a: V4, b: V4) -> R4 {
    let ok = in_range4(x, SILU_FAST);
    let xs = select(ONE4, x, ok);
    let e = exp_acc4(-xs, ZERO4);
    let s = rcp_acc4(1.0 + e);
    let m = a * b;
    let y = (fma(xs, e * s, ONE4) * s) * m;
    return R4(y, ok & normal4(m) & normal4(y));
}
fn silu_g4(g: V4, u: V4, dh: V4) -> R42 {
    let ok = in_range4(g, SILU_FAST);
    let xs = select(ONE4, g, ok);
    let e = exp_acc4(-xs, ZERO4);
    let s = rcp_acc4(1.0 + e);
    let m = dh * u;
    let dg = (fma(xs, e * s, ONE4) * s) * m;
    let du = (xs * s) * dh;
    return R42(dg, du, ok & normal4(m) & normal4(dg) & normal4(du));
}
// f16 storage: x > -64 keeps 1 + e^-x below 2^93 (the division's domain).
fn silu_f4_lp(x: V4, v: V4) -> R4 {
    let e = exp2(x * -LOG2E);
    let y = x / (1.0 + e) * v;
    return R4(y, (x > V4(-SILU_FAST)) & f16ok4(y));
}
fn silu_d4_lp(x: V4, a: V4, b: V4) -> R4 {
    let e = exp2(x * -LOG2E);
    let s = 1.0 / (1.0 + e);
    let y = (fma(x, e * s, ONE4) * s) * (a * b);
    return R4(y, (x > V4(-SILU_FAST)) & f16ok4(y));
}
fn silu_g4_lp(g: V4, u: V4, dh: V4) -> R42 {
    let e = exp2(g * -LOG2E);
    let s = 1.0 / (1.0 + e);
    let dg = (fma(g, e * s, ONE4) * s) * (dh * u);
    let du = (g * s) * dh;
    return R42(dg, du, (g > V4(-SILU_FAST)) & f16ok4(dg) & f16ok4(du));
}

// --- GeLU, tanh form ---------------------------------------------------------------------------------
// gelu(x) = x / (1 + e^-t), t = x (K + M x^2) in double-f32; gelu'(x) = s (1 + x t' e^-t s),
// t' = K (1 + 3 * 0.044715 x^2). |x| < 9: |t| < 67. Max error (C model): 2.35 ulp forward, 5.8
// backward.
const GELU_FAST: f32 = 9.0;

// t = K x + M x^3 = x (K + M x^2) as hi + lo: g = K + M x^2 in double-f32 (error below 2^-44
// relative), then x g.
fn gelu_t4(x: V4) -> DF4 {
    let x2 = two_prod4(x, x);
    let m = two_prod4(c4(M_HI), x2.hi);
    let g = two_sum_pos4(c4(K_HI), m.hi);
    let gl = g.lo + (m.lo + fma(V4(M_HI), x2.lo, fma(V4(M_LO), x2.hi, V4(K_LO))));
    let t = two_prod4(x, g.hi);
    return DF4(t.hi, fma(x, gl, t.lo));
}
fn gelu_tanh_f4(x: V4, v: V4) -> R4 {
    let ok = in_range4(x, GELU_FAST);
    let xs = select(ONE4, x, ok);
    let t = gelu_t4(xs);
    let e = exp_acc4(-t.hi, -t.lo);
    let y = div_acc4(xs, 1.0 + e) * v;
    return R4(y, ok & normal4(y));
}
fn gelu_tanh_dsig4(xs: V4, e: V4, s: V4) -> V4 {
    let w = K_HI * fma(V4(GELU_C3), xs * xs, ONE4);
    return fma(xs * w, e * s, ONE4) * s;
}
fn gelu_tanh_d4(x: V4, a: V4, b: V4) -> R4 {
    let ok = in_range4(x, GELU_FAST);
    let xs = select(ONE4, x, ok);
    let t = gelu_t4(xs);
    let e = exp_acc4(-t.hi, -t.lo);
    let s = rcp_acc4(1.0 + e);
    let m = a * b;
    let y = gelu_tanh_dsig4(xs, e, s) * m;
    return R4(y, ok & normal4(m) & normal4(y));
}
fn gelu_tanh_g4(g: V4, u: V4, dh: V4) -> R42 {
    let ok = in_range4(g, GELU_FAST);
    let xs = select(ONE4, g, ok);
    let t = gelu_t4(xs);
    let e = exp_acc4(-t.hi, -t.lo);
    let s = rcp_acc4(1.0 + e);
    let m = dh * u;
    let dg = gelu_tanh_dsig4(xs, e, s) * m;
    let du = (xs * s) * dh;
    return R42(dg, du, ok & normal4(m) & normal4(dg) & normal4(du));
}
// f16 storage. t in plain f32: relative error 3 2^-24, so below 2^-16 absolute for |x| < 9; x > -9
// keeps 1 + e^-t below 2^96 (the division's domain); for x >= 9, e^-t < 2^-95.
fn gelu_tanh_e4_lp(x: V4) -> V4 {
    let t = x * fma(V4(M_HI), x * x, V4(K_HI));
    return exp2(t * -LOG2E);
}
fn gelu_tanh_f4_lp(x: V4, v: V4) -> R4 {
    let y = x / (1.0 + gelu_tanh_e4_lp(x)) * v;
    return R4(y, (x > V4(-GELU_FAST)) & f16ok4(y));
}
fn gelu_tanh_d4_lp(x: V4, a: V4, b: V4) -> R4 {
    let e = gelu_tanh_e4_lp(x);
    let s = 1.0 / (1.0 + e);
    let y = gelu_tanh_dsig4(x, e, s) * (a * b);
    return R4(y, (x > V4(-GELU_FAST)) & f16ok4(y));
}
fn gelu_tanh_g4_lp(g: V4, u: V4, dh: V4) -> R42 {
    let e = gelu_tanh_e4_lp(g);
    let s = 1.0 / (1.0 + e);
    let dg = gelu_tanh_dsig4(g, e, s) * (dh * u);
    let du = (g * s) * dh;
    return R42(dg, du, (g > V4(-GELU_FAST)) & f16ok4(dg) & f16ok4(du));
}

// --- GeLU, erf form ----------------------------------------------------------------------------------
// gelu(x) = x Phi(x), gelu'(x) = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi); |x| < 9,
// a = |x| / sqrt 2, branch-free (both forms computed, one selected per lane):
// - |x| < 1/sqrt2 (a < 1/2): Phi(x) = 1/2 + x P(x^2), gelu'(x) = 1/2 + x D(x^2), P and D
//   polynomials of degree 5 (relative error 2^-25; 1/2 + x P never cancels by more than 2x);
// - otherwise T = x erfc(a) / 2 (x > 0) = E H(a), E = e^(-x^2/2) (the exp of the exact double-f32
//   -x^2/2), H = a erfcx(a) / sqrt2 (relative error 2^-24.7); gelu = -T (x < 0), x - T (x > 0).
//   Backward: gelu' = [x > 0] + E (x / sqrt(2 pi) - H(a) / x).
// H is a polynomial in y = (a - 1.5) / (a + 1.5), fitted here (weighted least squares on Chebyshev
// nodes, coefficients rounded to f32 one at a time and the rest refitted). Max error (C model):
// 2.83 ulp forward (at x = -1.83; the form T = e^(-x^2/2 + g(a) - ln2/2), g = ln(a erfcx(a)), one
// exp of a double-f32 sum, gave 1.97 ulp for ~20 more operations per element), 4.06 backward
// (absolute near gelu's zero at x = -0.752).
const ERF_FAST: f32 = 9.0;
const ERF_SMALL: f32 = 0.70710678118654752;
const LN2H_HI: f32 = -0.3465735912322998;        // -ln2/2

fn erf_p4(u: V4) -> V4 {  // (Phi(x) - 1/2) / x, u = x^2 in [0, 1/2]
    var p = V4(-4.132294998271391e-05);
    p = fma(p, u, V4(1.6019826580304652e-04));
    p = fma(p, u, V4(-1.2099326122552156e-03));
    p = fma(p, u, V4(9.978542104363441e-03));
    p = fma(p, u, V4(-6.649082899093628e-02));
    return fma(p, u, V4(0.3989422917366028));
}
fn erf_d4(u: V4) -> V4 {  // (gelu'(x) - 1/2) / x
    var p = V4(-1.6248328029178083e-04);
    p = fma(p, u, V4(1.2334393104538321e-03));
    p = fma(p, u, V4(-9.540385566651821e-03));
    p = fma(p, u, V4(5.985080078244209e-02));
    p = fma(p, u, V4(-0.2659623920917511));
    return fma(p, u, V4(0.7978845834732056));
}
fn erf_h4(y: V4) -> V4 {  // a erfcx(a) / sqrt2, y = (a - 1.5) / (a + 1.5), a in [1/2, 6.37]
    var p = V4(9.287858265452087e-04);
    p = fma(p, y, V4(4.8103020526468754e-04));
    p = fma(p, y, V4(-3.6526883486658335e-03));
    p = fma(p, y, V4(-6.241109222173691e-03));
    p = fma(p, y, V4(1.4023891650140285e-02));
    p = fma(p, y, V4(4.362674802541733e-02));
    p = fma(p, y, V4(-0.1528162658214569));
    p = fma(p, y, V4(0.16154071688652039));
    return fma(p, y, V4(0.3410928547382355));
}
// Lower-degree fits for f16 storage (relative 2^-22.8, 2^-20.4; absolute 2^-17.6; relative 2^-16.8).
fn erf_p4_lp(u: V4) -> V4 {
    return fma(fma(fma(V4(-1.0780850425362587e-03), u, V4(9.940038435161114e-03)), u,
               V4(-6.648707389831543e-02)), u, V4(0.398942232131958));
}
fn erf_d4_lp(u: V4) -> V4 {
    return fma(fma(fma(V4(-8.40796995908022e-03), u, V4(5.950259789824486e-02)), u,
               V4(-0.2659270763397217)), u, V4(0.7978839874267578));
}
fn erf_g4_lp(y: V4) -> V4 {
    var p = V4(0.11907080560922623);
    p = fma(p, y, V4(-0.2528630495071411));
    p = fma(p, y, V4(0.25656628608703613));
    p = fma(p, y, V4(-0.6518852710723877));
    p = fma(p, y, V4(0.9563370943069458));
    return fma(p, y, V4(-0.9992576837539673));
}
fn erf_w4_lp(y: V4) -> V4 {
    var p = V4(-9.565964341163635e-03);
    p = fma(p, y, V4(1.7764432355761528e-02));
    p = fma(p, y, V4(6.195629388093948e-02));
    p = fma(p, y, V4(-0.21588517725467682));
    p = fma(p, y, V4(0.22843904793262482));
    return fma(p, y, V4(0.48237407207489014));
}

fn gelu_erf_f4(x: V4, v: V4) -> R4 {
    let ok = in_range4(x, ERF_FAST);
    let xs = select(ONE4, x, ok);
    let z = abs(xs);
    let gs = xs * fma(xs, erf_p4(xs * xs), V4(0.5));
    let t = gelu_erf_e4(xs) * gelu_erf_h4(z);
    let gt = select(xs - t, -t, xs < ZERO4);
    let y = select(gt, gs, z < V4(ERF_SMALL)) * v;
    return R4(y, ok & normal4(y));
}
// E = e^(-x^2/2), H(|x| / sqrt2) and gelu' on the tail: [x > 0] + E (x / sqrt(2 pi) - H / x).
fn gelu_erf_e4(xs: V4) -> V4 {
    let x2 = two_prod4(xs, xs);
    return exp_acc4(-0.5 * x2.hi, -0.5 * x2.lo);
}
fn gelu_erf_h4(z: V4) -> V4 {
    let a = z * INV_SQRT2_HI;
    return erf_h4(div_acc4(a - 1.5, a + 1.5));
}
fn gelu_erf_dtail4(xs: V4, e: V4, h: V4) -> V4 {
    return fma(e, fma(xs, V4(INV_SQRT_2PI), -div_acc4(h, xs)), select(ZERO4, ONE4, xs > ZERO4));
}
fn gelu_erf_d4(x: V4, a: V4, b: V4) -> R4 {
    let ok = in_range4(x, ERF_FAST);
    let xs = select(ONE4, x, ok);
    let z = abs(xs);
    let ds = fma(xs, erf_d4(xs * xs), V4(0.5));
    let m = a * b;
    let y = select(gelu_erf_dtail4(xs, gelu_erf_e4(xs), gelu_erf_h4(z)), ds, z < V4(ERF_SMALL)) * m;
    return R4(y, ok & normal4(m) & normal4(y));
}
fn gelu_erf_g4(g: V4, u: V4, dh: V4) -> R42 {
    let ok = in_range4(g, ERF_FAST);
    let xs = select(ONE4, g, ok);
    let z = abs(xs);
    let u2 = xs * xs;
    let ds = fma(xs, erf_d4(u2), V4(0.5));
    let gs = xs * fma(xs, erf_p4(u2), V4(0.5));
    let e = gelu_erf_e4(xs);
    let h = gelu_erf_h4(z);
    let t = e * h;  // x erfc(a) / 2 for x > 0
    let small = z < V4(ERF_SMALL);
    let m = dh * u;
    let dg = select(gelu_erf_dtail4(xs, e, h), ds, small) * m;
    let du = select(select(xs - t, -t, xs < ZERO4), gs, small) * dh;
    return R42(dg, du, ok & normal4(m) & normal4(dg) & normal4(du));
}
// f16 storage, any x: beyond |x| = 9 the polynomials leave their range, but there T < e^-39, so
// y = x - T or -T is x or a tiny float of the right sign (zero in f16); inf gives NaN (a/a).
fn gelu_erf_f4_lp(x: V4, v: V4) -> R4 {
    let xs = x;
    let z = abs(xs);
    let gs = xs * fma(xs, erf_p4_lp(xs * xs), V4(0.5));
    let a = z * INV_SQRT2_HI;
    let gp = erf_g4_lp((a - 0.7) / (a + 0.7));
    let t = exp2((fma(-0.5 * xs, xs, gp) + LN2H_HI) * LOG2E);
    let y = select(select(xs - t, -t, xs < ZERO4), gs, z < V4(ERF_SMALL)) * v;
    return R4(y, f16ok4(y));
}
fn gelu_erf_e4_lp(xs: V4) -> V4 { return exp2((-0.5 * xs) * xs * LOG2E); }
fn gelu_erf_w4_lp(z: V4) -> V4 {
    let a = z * INV_SQRT2_HI;
    return erf_w4_lp((a - 1.5) / (a + 1.5));
}
// e q + [x > 0], written so that an underflowed e (x < -13) keeps the sign of gelu'(x) < 0.
fn gelu_erf_dtail4_lp(xs: V4, e: V4, w: V4) -> V4 {
    let q = fma(xs, V4(INV_SQRT_2PI), -(w * INV_SQRT2_HI) / xs);
    return select(e * q, fma(e, q, ONE4), xs > ZERO4);
}
fn gelu_erf_d4_lp(x: V4, a: V4, b: V4) -> R4 {
    let xs = x;
    let z = abs(xs);
    let ds = fma(xs, erf_d4_lp(xs * xs), V4(0.5));
    let dt = gelu_erf_dtail4_lp(xs, gelu_erf_e4_lp(xs), gelu_erf_w4_lp(z));
    let y = select(dt, ds, z < V4(ERF_SMALL)) * (a * b);
    return R4(y, f16ok4(y));
}
fn gelu_erf_g4_lp(g: V4, u: V4, dh: V4) -> R42 {
    let xs = g;
    let z = abs(xs);
    let u2 = xs * xs;
    let e = gelu_erf_e4_lp(xs);
    let w = gelu_erf_w4_lp(z);
    let t = (e * w) * INV_SQRT2_HI;
    let small = z < V4(ERF_SMALL);
    let dg = select(gelu_erf_dtail4_lp(xs, e, w), fma(xs, erf_d4_lp(u2), V4(0.5)), small) * (dh * u);
    let du = select(select(xs - t, -t, xs < ZERO4), xs * fma(xs, erf_p4_lp(u2), V4(0.5)), small) * dh;
    return R42(dg, du, f16ok4(dg) & f16ok4(du));
}

// --- ReLU --------------------------------------------------------------------------------------------
// relu(x) v = x v (x > 0), +0 * v (x <= 0): a zero with v's sign; relu'(x) a b = a b or +0 a b.
// Exact (one rounding), so one set serves both accuracy levels. x = ±0 is a fast lane (ReLU's
// outputs are half zeros); a subnormal x is not (a GPU may compare a flushed x > 0 as false), nor
// NaN.
fn relu_x_ok4(x: V4) -> B4 {
    let ax = bitcast<U4>(x) & U4(ABS_MASK);
    return ((ax - U4(1u)) >= U4(0x007fffffu)) & (ax <= U4(EXP_INF));  // 0, normal or inf
}
fn finite4(v: V4) -> B4 { return (bitcast<U4>(v) & U4(ABS_MASK)) < U4(EXP_INF); }
fn relu_f4(x: V4, v: V4) -> R4 {
    let pos = x > ZERO4;
    let y = select(sign0_4(v), x * v, pos);
    return R4(y, relu_x_ok4(x) & select(finite4(v), normal4(y), pos));
}
fn relu_d4(x: V4, a: V4, b: V4) -> R4 {
    let pos = x > ZERO4;
    let m = a * b;
    let y = select(bitcast<V4>((bitcast<U4>(a) ^ bitcast<U4>(b)) & U4(SIGN_MASK)), m, pos);
    return R4(y, relu_x_ok4(x) & select(finite4(a) & finite4(b), normal4(m), pos));
}
fn relu_g4(g: V4, u: V4, dh: V4) -> R42 {
    let d = relu_d4(g, dh, u);
    let f = relu_f4(g, dh);
    return R42(d.y, f.y, d.ok & f.ok);
}
// f16 storage: products of f16 values are exact f32 normals (or ±0, inf, NaN): only NaN x and
// results beyond 65500 (f16ok4 is false for NaN and inf) leave the fast path.
fn relu_f4_lp(x: V4, v: V4) -> R4 {
    let pos = x > ZERO4;
    let y = select(sign0_4(v), x * v, pos);
    let xok = (bitcast<U4>(x) & U4(ABS_MASK)) <= U4(EXP_INF);
    return R4(y, xok & select(finite4(v), f16ok4(y), pos));
}
fn relu_d4_lp(x: V4, a: V4, b: V4) -> R4 {
    let pos = x > ZERO4;
    let m = a * b;
    let y = select(bitcast<V4>((bitcast<U4>(a) ^ bitcast<U4>(b)) & U4(SIGN_MASK)), m, pos);
    let xok = (bitcast<U4>(x) & U4(ABS_MASK)) <= U4(EXP_INF);
    return R4(y, xok & select(finite4(a) & finite4(b), f16ok4(m), pos));
}
fn relu_g4_lp(g: V4, u: V4, dh: V4) -> R42 {
    let d = relu_d4_lp(g, dh, u);
    let f = relu_f4_lp(g, dh);
    return R42(d.y, f.y, d.ok & f.ok);
}

// =================================================================================================
// Probe, dispatched once by the host (256 workgroups = 65536 threads, probe_out zeroed): counts in
// probe_out[0] the products whose fma(a, b, -p) differs from the exact error (the split form's),
// in [1] the f16 values that unpack2x16float widens wrongly, in [2] the f32 values that
// pack2x16float rounds otherwise than to nearest even (each f16 value, the midpoint to the next
// one, one f32 ulp either side, both signs; plus f32 subnormals and huge values).
// =================================================================================================

fn same_f32(a: f32, b: f32) -> bool { return bitcast<u32>(a) == bitcast<u32>(b) || (is_nan(a) && is_nan(b)); }
fn same_h(a: u32, b: u32) -> bool { return a == b || ((a & 0x7fffu) > 0x7c00u && (b & 0x7fffu) > 0x7c00u); }
fn pack_ok(v: f32) -> bool {
    let w = pack2x16float(vec2<f32>(v, -v));
    return same_h(w & 0xffffu, f32_to_f16(v)) && same_h(w >> 16u, f32_to_f16(-v));
}

@compute @workgroup_size(256)
fn ffn_probe(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    ffn_zero = atomicLoad(&probe_out[3]);
    if (i >= 65536u) { return; }
    // fma, on a, b in [1, 2) from a hash of i
    let h1 = (i + 1u) * 0x9e3779b9u;
    let h2 = (h1 ^ (h1 >> 15u)) * 0x85ebca6bu;
    let a = bitcast<f32>(0x3f800000u | (h1 >> 9u));
    let b = bitcast<f32>(0x3f800000u | (h2 >> 9u));
    let p = opaque(a * b);
    if (!same_f32(fmx(a, b, -p), two_prod_split(a, b).y)) { atomicAdd(&probe_out[0], 1u); }
    // unpack2x16float, every f16 value in both halves
    let want = f16_to_f32(i);
    let un = unpack2x16float(i | (i << 16u));
    if (!same_f32(un.x, want) || !same_f32(un.y, want)) { atomicAdd(&probe_out[1], 1u); }
    // pack2x16float (i < 32768: the negative values are checked with -v)
    if (i >= 32768u) { return; }
    var mid = want;
    if (i < 0x7c00u) {
        let next = select(f16_to_f32(i + 1u), 65536.0, i == 0x7bffu);  // 65536: one past 65504
        mid = 0.5 * (want + next);  // exact: 12 significant bits
    }
    let mb = bitcast<u32>(mid);
    var bad = !pack_ok(want) || !pack_ok(mid) || !pack_ok(bitcast<f32>(mb - 1u)) || !pack_ok(bitcast<f32>(mb + 1u));
    if (i == 0u) {
        bad = bad || !pack_ok(bitcast<f32>(1u)) || !pack_ok(bitcast<f32>(0x007fffffu)) || !pack_ok(1e-30)
                  || !pack_ok(1e30) || !pack_ok(3.0e38);
    }
    if (bad) { atomicAdd(&probe_out[2], 1u); }
}

// =================================================================================================
// Kernels. Each thread: load its units (all loads in flight together), the fast path on 4 lanes at
// a time, the general path for the lanes the fast path flags, store. f32: 4 elements per thread;
// vec4: 2 vec4; packed f16: 4 words (8 elements). A partial last vec4 or word writes only its lanes
// below n, so the padding of a buffer is never touched.
// =================================================================================================

// BEGIN GENERATED KERNELS (node webgpu/gen-kernels.mjs; edit the generator, not this part)

// --- f32 -------------------------------------------------------------------------------------------

@compute @workgroup_size(256)
fn gelu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        x_0.x = x_io[u.i.x];
        if (u.ok.y) { x_0.y = x_io[u.i.y]; }
        if (u.ok.z) { x_0.z = x_io[u.i.z]; }
        if (u.ok.w) { x_0.w = x_io[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_tanh_f4(x_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(x_io[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        x_io[u.i.x] = y_0.x;
        if (u.ok.y) { x_io[u.i.y] = y_0.y; }
        if (u.ok.z) { x_io[u.i.z] = y_0.z; }
        if (u.ok.w) { x_io[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        x_0.x = x_io[u.i.x];
        if (u.ok.y) { x_0.y = x_io[u.i.y]; }
        if (u.ok.z) { x_0.z = x_io[u.i.z]; }
        if (u.ok.w) { x_0.w = x_io[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_erf_f4(x_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(x_io[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        x_io[u.i.x] = y_0.x;
        if (u.ok.y) { x_io[u.i.y] = y_0.y; }
        if (u.ok.z) { x_io[u.i.z] = y_0.z; }
        if (u.ok.w) { x_io[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        x_0.x = x_io[u.i.x];
        if (u.ok.y) { x_0.y = x_io[u.i.y]; }
        if (u.ok.z) { x_0.z = x_io[u.i.z]; }
        if (u.ok.w) { x_0.w = x_io[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = silu_f4(x_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(x_io[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        x_io[u.i.x] = y_0.x;
        if (u.ok.y) { x_io[u.i.y] = y_0.y; }
        if (u.ok.z) { x_io[u.i.z] = y_0.z; }
        if (u.ok.w) { x_io[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        x_0.x = x_io[u.i.x];
        if (u.ok.y) { x_0.y = x_io[u.i.y]; }
        if (u.ok.z) { x_0.z = x_io[u.i.z]; }
        if (u.ok.w) { x_0.w = x_io[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = relu_f4(x_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(x_io[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        x_io[u.i.x] = y_0.x;
        if (u.ok.y) { x_io[u.i.y] = y_0.y; }
        if (u.ok.z) { x_io[u.i.z] = y_0.z; }
        if (u.ok.w) { x_io[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = silu_f4(gate_0, up_0);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(in0[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_tanh_f4(gate_0, up_0);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(in0[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_erf_f4(gate_0, up_0);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(in0[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = relu_f4(gate_0, up_0);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(in0[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        var dy_0 = ZERO4;
        x_0.x = in0[u.i.x]; dy_0.x = in1[u.i.x];
        if (u.ok.y) { x_0.y = in0[u.i.y]; dy_0.y = in1[u.i.y]; }
        if (u.ok.z) { x_0.z = in0[u.i.z]; dy_0.z = in1[u.i.z]; }
        if (u.ok.w) { x_0.w = in0[u.i.w]; dy_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_tanh_d4(x_0, dy_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(in0[u.i[j]], in1[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        var dy_0 = ZERO4;
        x_0.x = in0[u.i.x]; dy_0.x = in1[u.i.x];
        if (u.ok.y) { x_0.y = in0[u.i.y]; dy_0.y = in1[u.i.y]; }
        if (u.ok.z) { x_0.z = in0[u.i.z]; dy_0.z = in1[u.i.z]; }
        if (u.ok.w) { x_0.w = in0[u.i.w]; dy_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_erf_d4(x_0, dy_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(in0[u.i[j]], in1[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        var dy_0 = ZERO4;
        x_0.x = in0[u.i.x]; dy_0.x = in1[u.i.x];
        if (u.ok.y) { x_0.y = in0[u.i.y]; dy_0.y = in1[u.i.y]; }
        if (u.ok.z) { x_0.z = in0[u.i.z]; dy_0.z = in1[u.i.z]; }
        if (u.ok.w) { x_0.w = in0[u.i.w]; dy_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = silu_d4(x_0, dy_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(in0[u.i[j]], in1[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_0 = ZERO4;
        var dy_0 = ZERO4;
        x_0.x = in0[u.i.x]; dy_0.x = in1[u.i.x];
        if (u.ok.y) { x_0.y = in0[u.i.y]; dy_0.y = in1[u.i.y]; }
        if (u.ok.z) { x_0.z = in0[u.i.z]; dy_0.z = in1[u.i.z]; }
        if (u.ok.w) { x_0.w = in0[u.i.w]; dy_0.w = in1[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = relu_d4(x_0, dy_0, ONE4);
        var y_0 = r_0.y;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(in0[u.i[j]], in1[u.i[j]], 1.0);
            y_0 = with_lane4(y_0, j, yj);
        }
        out2[u.i.x] = y_0.x;
        if (u.ok.y) { out2[u.i.y] = y_0.y; }
        if (u.ok.z) { out2[u.i.z] = y_0.z; }
        if (u.ok.w) { out2[u.i.w] = y_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        var dh_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x]; dh_0.x = in2[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; dh_0.y = in2[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; dh_0.z = in2[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; dh_0.w = in2[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = silu_g4(gate_0, up_0, dh_0);
        var y_0 = r_0.y;
        var z_0 = r_0.z;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(in0[u.i[j]], in2[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
            let zj = silu_mul(in0[u.i[j]], in2[u.i[j]]);
            z_0 = with_lane4(z_0, j, zj);
        }
        out3[u.i.x] = y_0.x;
        if (u.ok.y) { out3[u.i.y] = y_0.y; }
        if (u.ok.z) { out3[u.i.z] = y_0.z; }
        if (u.ok.w) { out3[u.i.w] = y_0.w; }
        out4[u.i.x] = z_0.x;
        if (u.ok.y) { out4[u.i.y] = z_0.y; }
        if (u.ok.z) { out4[u.i.z] = z_0.z; }
        if (u.ok.w) { out4[u.i.w] = z_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        var dh_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x]; dh_0.x = in2[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; dh_0.y = in2[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; dh_0.z = in2[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; dh_0.w = in2[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_tanh_g4(gate_0, up_0, dh_0);
        var y_0 = r_0.y;
        var z_0 = r_0.z;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(in0[u.i[j]], in2[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
            let zj = gelu_tanh_mul(in0[u.i[j]], in2[u.i[j]]);
            z_0 = with_lane4(z_0, j, zj);
        }
        out3[u.i.x] = y_0.x;
        if (u.ok.y) { out3[u.i.y] = y_0.y; }
        if (u.ok.z) { out3[u.i.z] = y_0.z; }
        if (u.ok.w) { out3[u.i.w] = y_0.w; }
        out4[u.i.x] = z_0.x;
        if (u.ok.y) { out4[u.i.y] = z_0.y; }
        if (u.ok.z) { out4[u.i.z] = z_0.z; }
        if (u.ok.w) { out4[u.i.w] = z_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        var dh_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x]; dh_0.x = in2[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; dh_0.y = in2[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; dh_0.z = in2[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; dh_0.w = in2[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = gelu_erf_g4(gate_0, up_0, dh_0);
        var y_0 = r_0.y;
        var z_0 = r_0.z;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(in0[u.i[j]], in2[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
            let zj = gelu_erf_mul(in0[u.i[j]], in2[u.i[j]]);
            z_0 = with_lane4(z_0, j, zj);
        }
        out3[u.i.x] = y_0.x;
        if (u.ok.y) { out3[u.i.y] = y_0.y; }
        if (u.ok.z) { out3[u.i.z] = y_0.z; }
        if (u.ok.w) { out3[u.i.w] = y_0.w; }
        out4[u.i.x] = z_0.x;
        if (u.ok.y) { out4[u.i.y] = z_0.y; }
        if (u.ok.z) { out4[u.i.z] = z_0.z; }
        if (u.ok.w) { out4[u.i.w] = z_0.w; }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = n;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_0 = ZERO4;
        var up_0 = ZERO4;
        var dh_0 = ZERO4;
        gate_0.x = in0[u.i.x]; up_0.x = in1[u.i.x]; dh_0.x = in2[u.i.x];
        if (u.ok.y) { gate_0.y = in0[u.i.y]; up_0.y = in1[u.i.y]; dh_0.y = in2[u.i.y]; }
        if (u.ok.z) { gate_0.z = in0[u.i.z]; up_0.z = in1[u.i.z]; dh_0.z = in2[u.i.z]; }
        if (u.ok.w) { gate_0.w = in0[u.i.w]; up_0.w = in1[u.i.w]; dh_0.w = in2[u.i.w]; }
        let ok_0 = u.ok;
        let r_0 = relu_g4(gate_0, up_0, dh_0);
        var y_0 = r_0.y;
        var z_0 = r_0.z;
        let bad = ok_0 & !r_0.ok;
        var m = 0u;
        if (any(bad)) { m = bits4(bad); }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(in0[u.i[j]], in2[u.i[j]], in1[u.i[j]]);
            y_0 = with_lane4(y_0, j, yj);
            let zj = relu_mul(in0[u.i[j]], in2[u.i[j]]);
            z_0 = with_lane4(z_0, j, zj);
        }
        out3[u.i.x] = y_0.x;
        if (u.ok.y) { out3[u.i.y] = y_0.y; }
        if (u.ok.z) { out3[u.i.z] = y_0.z; }
        if (u.ok.w) { out3[u.i.w] = y_0.w; }
        out4[u.i.x] = z_0.x;
        if (u.ok.y) { out4[u.i.y] = z_0.y; }
        if (u.ok.z) { out4[u.i.z] = z_0.z; }
        if (u.ok.w) { out4[u.i.w] = z_0.w; }
        u0 = u.next;
    }
}

// --- vec4 ------------------------------------------------------------------------------------------

fn store_x4_io(i: u32, y: V4, n: u32) {
    if (4u * i + 3u < n) { x4_io[i] = y; return; }
    for (var l = 0u; 4u * i + l < n; l++) { x4_io[i][l] = y[l]; }
}
fn store_out2_4(i: u32, y: V4, n: u32) {
    if (4u * i + 3u < n) { out2_4[i] = y; return; }
    for (var l = 0u; 4u * i + l < n; l++) { out2_4[i][l] = y[l]; }
}
fn store_out3_4(i: u32, y: V4, n: u32) {
    if (4u * i + 3u < n) { out3_4[i] = y; return; }
    for (var l = 0u; 4u * i + l < n; l++) { out3_4[i][l] = y[l]; }
}
fn store_out4_4(i: u32, y: V4, n: u32) {
    if (4u * i + 3u < n) { out4_4[i] = y; return; }
    for (var l = 0u; 4u * i + l < n; l++) { out4_4[i][l] = y[l]; }
}

@compute @workgroup_size(256)
fn gelu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = x4_io[u.i.x];
        var x_1 = ZERO4;
        if (u.ok.y) { x_1 = x4_io[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(x4_io[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_x4_io(u.i.x, y_0, n);
        if (u.ok.y) { store_x4_io(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = x4_io[u.i.x];
        var x_1 = ZERO4;
        if (u.ok.y) { x_1 = x4_io[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(x4_io[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_x4_io(u.i.x, y_0, n);
        if (u.ok.y) { store_x4_io(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = x4_io[u.i.x];
        var x_1 = ZERO4;
        if (u.ok.y) { x_1 = x4_io[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(x4_io[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_x4_io(u.i.x, y_0, n);
        if (u.ok.y) { store_x4_io(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_inplace_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = x4_io[u.i.x];
        var x_1 = ZERO4;
        if (u.ok.y) { x_1 = x4_io[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(x4_io[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_x4_io(u.i.x, y_0, n);
        if (u.ok.y) { store_x4_io(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_combine_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = in0_4[u.i.x];
        var x_1 = ZERO4;
        let dy_0 = in1_4[u.i.x];
        var dy_1 = ZERO4;
        if (u.ok.y) { x_1 = in0_4[u.i.y]; dy_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_d4(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = in0_4[u.i.x];
        var x_1 = ZERO4;
        let dy_0 = in1_4[u.i.x];
        var dy_1 = ZERO4;
        if (u.ok.y) { x_1 = in0_4[u.i.y]; dy_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_d4(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = in0_4[u.i.x];
        var x_1 = ZERO4;
        let dy_0 = in1_4[u.i.x];
        var dy_1 = ZERO4;
        if (u.ok.y) { x_1 = in0_4[u.i.y]; dy_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_d4(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let x_0 = in0_4[u.i.x];
        var x_1 = ZERO4;
        let dy_0 = in1_4[u.i.x];
        var dy_1 = ZERO4;
        if (u.ok.y) { x_1 = in0_4[u.i.y]; dy_1 = in1_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_d4(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(in0_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out2_4(u.i.y, y_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        let dh_0 = in2_4[u.i.x];
        var dh_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; dh_1 = in2_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_g4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = silu_mul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out3_4(u.i.y, y_1, n); }
        store_out4_4(u.i.x, z_0, n);
        if (u.ok.y) { store_out4_4(u.i.y, z_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        let dh_0 = in2_4[u.i.x];
        var dh_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; dh_1 = in2_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_g4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_tanh_mul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out3_4(u.i.y, y_1, n); }
        store_out4_4(u.i.x, z_0, n);
        if (u.ok.y) { store_out4_4(u.i.y, z_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        let dh_0 = in2_4[u.i.x];
        var dh_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; dh_1 = in2_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_g4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_erf_mul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out3_4(u.i.y, y_1, n); }
        store_out4_4(u.i.x, z_0, n);
        if (u.ok.y) { store_out4_4(u.i.y, z_1, n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_backward_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 3u) / 4u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units2(u0, st, nu);
        let gate_0 = in0_4[u.i.x];
        var gate_1 = ZERO4;
        let up_0 = in1_4[u.i.x];
        var up_1 = ZERO4;
        let dh_0 = in2_4[u.i.x];
        var dh_1 = ZERO4;
        if (u.ok.y) { gate_1 = in0_4[u.i.y]; up_1 = in1_4[u.i.y]; dh_1 = in2_4[u.i.y]; }
        let ok_0 = B4(u.ok.x);
        let ok_1 = B4(u.ok.y);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_g4(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u], in1_4[u.i[j >> 2u]][j & 3u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = relu_mul(in0_4[u.i[j >> 2u]][j & 3u], in2_4[u.i[j >> 2u]][j & 3u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_4(u.i.x, y_0, n);
        if (u.ok.y) { store_out3_4(u.i.y, y_1, n); }
        store_out4_4(u.i.x, z_0, n);
        if (u.ok.y) { store_out4_4(u.i.y, z_1, n); }
        u0 = u.next;
    }
}

// --- f16pk -----------------------------------------------------------------------------------------

fn store_xp_io(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { xp_io[i] = w; return; }
    xp_io[i] = (xp_io[i] & 0xffff0000u) | (w & 0xffffu);
}
fn store_out2_p(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out2_p[i] = w; return; }
    out2_p[i] = (out2_p[i] & 0xffff0000u) | (w & 0xffffu);
}
fn store_out3_p(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out3_p[i] = w; return; }
    out3_p[i] = (out3_p[i] & 0xffff0000u) | (w & 0xffffu);
}
fn store_out4_p(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out4_p[i] = w; return; }
    out4_p[i] = (out4_p[i] & 0xffff0000u) | (w & 0xffffu);
}

@compute @workgroup_size(256)
fn gelu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = xp_io[u.i.x];
        if (u.ok.y) { x_w.y = xp_io[u.i.y]; }
        if (u.ok.z) { x_w.z = xp_io[u.i.z]; }
        if (u.ok.w) { x_w.w = xp_io[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(unpack_h2(xp_io[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xp_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xp_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xp_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xp_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = xp_io[u.i.x];
        if (u.ok.y) { x_w.y = xp_io[u.i.y]; }
        if (u.ok.z) { x_w.z = xp_io[u.i.z]; }
        if (u.ok.w) { x_w.w = xp_io[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(unpack_h2(xp_io[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xp_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xp_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xp_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xp_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = xp_io[u.i.x];
        if (u.ok.y) { x_w.y = xp_io[u.i.y]; }
        if (u.ok.z) { x_w.z = xp_io[u.i.z]; }
        if (u.ok.w) { x_w.w = xp_io[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(unpack_h2(xp_io[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xp_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xp_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xp_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xp_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_inplace_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = xp_io[u.i.x];
        if (u.ok.y) { x_w.y = xp_io[u.i.y]; }
        if (u.ok.z) { x_w.z = xp_io[u.i.z]; }
        if (u.ok.w) { x_w.w = xp_io[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(unpack_h2(xp_io[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xp_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xp_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xp_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xp_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_combine_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = in0_p[u.i.x]; dy_w.x = in1_p[u.i.x];
        if (u.ok.y) { x_w.y = in0_p[u.i.y]; dy_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { x_w.z = in0_p[u.i.z]; dy_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { x_w.w = in0_p[u.i.w]; dy_w.w = in1_p[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = in0_p[u.i.x]; dy_w.x = in1_p[u.i.x];
        if (u.ok.y) { x_w.y = in0_p[u.i.y]; dy_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { x_w.z = in0_p[u.i.z]; dy_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { x_w.w = in0_p[u.i.w]; dy_w.w = in1_p[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = in0_p[u.i.x]; dy_w.x = in1_p[u.i.x];
        if (u.ok.y) { x_w.y = in0_p[u.i.y]; dy_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { x_w.z = in0_p[u.i.z]; dy_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { x_w.w = in0_p[u.i.w]; dy_w.w = in1_p[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = in0_p[u.i.x]; dy_w.x = in1_p[u.i.x];
        if (u.ok.y) { x_w.y = in0_p[u.i.y]; dy_w.y = in1_p[u.i.y]; }
        if (u.ok.z) { x_w.z = in0_p[u.i.z]; dy_w.z = in1_p[u.i.z]; }
        if (u.ok.w) { x_w.w = in0_p[u.i.w]; dy_w.w = in1_p[u.i.w]; }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u], 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x]; dh_w.x = in2_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; dh_w.y = in2_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; dh_w.z = in2_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; dh_w.w = in2_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = silu_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_p(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_p(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_p(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_p(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x]; dh_w.x = in2_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; dh_w.y = in2_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; dh_w.z = in2_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; dh_w.w = in2_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_tanh_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_p(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_p(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_p(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_p(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x]; dh_w.x = in2_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; dh_w.y = in2_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; dh_w.z = in2_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; dh_w.w = in2_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_erf_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_p(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_p(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_p(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_p(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_backward_f16pk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = in0_p[u.i.x]; up_w.x = in1_p[u.i.x]; dh_w.x = in2_p[u.i.x];
        if (u.ok.y) { gate_w.y = in0_p[u.i.y]; up_w.y = in1_p[u.i.y]; dh_w.y = in2_p[u.i.y]; }
        if (u.ok.z) { gate_w.z = in0_p[u.i.z]; up_w.z = in1_p[u.i.z]; dh_w.z = in2_p[u.i.z]; }
        if (u.ok.w) { gate_w.w = in0_p[u.i.w]; up_w.w = in1_p[u.i.w]; dh_w.w = in2_p[u.i.w]; }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in1_p[u.i[j >> 1u]])[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = relu_mul(unpack_h2(in0_p[u.i[j >> 1u]])[j & 1u], unpack_h2(in2_p[u.i[j >> 1u]])[j & 1u]);
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_p(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_p(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_p(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_p(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_p(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_p(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_p(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_p(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

// END GENERATED KERNELS
