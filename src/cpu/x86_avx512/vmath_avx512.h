// vmath_avx512.h — shared inline vector math of the AVX-512 activation kernels: loads and stores
// per dtype (bf16 rounded with integer ops, f16 by vcvtps2ph), the loop drivers that run a
// per-vector activation over n elements (masked streaming head, masked tail), 2^z by a 16-entry
// table, and the compensated sigmoid quotient the σ-based activations share. Header-only, for
// the files of this folder (built with -mavx512f/bw/dq/vl); no state, no allocation.
#ifndef FFN_VMATH_AVX512_H
#define FFN_VMATH_AVX512_H

#include <immintrin.h>
#include <stdint.h>

#include "cpu/cpu_impl.h"

// Every helper is force-inlined so that each (in, out) dtype pair gets its own loop with the
// conversions resolved at compile time, and the per-vector function (passed as a constant
// function pointer) is inlined into it.
#define FFN_VINLINE static inline __attribute__((always_inline))

#define FFN_VL 16  // f32 lanes per vector

FFN_VINLINE __m512 ffn__c(float v) { return _mm512_set1_ps(v); }

// -0: the neutral element of addition for every x (+0 would turn -0 + 0 into +0).
FFN_VINLINE __m512 ffn__negzero(void) {
    return _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000u));
}

// --- per-dtype loads and stores ------------------------------------------------------------------

// 16 elements from p[i..i+15] as f32; `full` = all 16 lanes, else only the lanes of m (others 0).
FFN_VINLINE __m512 ffn__vload(const void *p, int64_t i, enum ffn_dtype dt, bool full, __mmask16 m) {
    if (dt == FFN_DTYPE_F32) {
        const float *q = (const float *)p + i;
        return full ? _mm512_loadu_ps(q) : _mm512_maskz_loadu_ps(m, q);
    }
    const uint16_t *q = (const uint16_t *)p + i;
    const __m256i h = full ? _mm256_loadu_si256((const __m256i *)q) : _mm256_maskz_loadu_epi16(m, q);
    if (dt == FFN_DTYPE_BF16)  // bf16 is the top half of an f32
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

// f32 -> bf16, round to nearest even, NaN kept quiet, subnormals kept (as ffn_f32_to_bf16):
// bits + 0x7fff + lsb, then the top half. vcvtneps2bf16 is not used: it flushes subnormals.
FFN_VINLINE __m256i ffn__bf16_from_f32(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));  // quiet bit, no rounding
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

// f32 -> f16: vcvtps2ph with round-to-nearest-even is exact RNE (subnormals, NaN quieted).
FFN_VINLINE __m256i ffn__f16_from_f32(__m512 v) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Rounds v to the storage type dt and back (parity mode); identity for f32.
FFN_VINLINE __m512 ffn__vround_to(__m512 v, enum ffn_dtype dt) {
    if (dt == FFN_DTYPE_BF16)
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(ffn__bf16_from_f32(v)), 16));
    if (dt == FFN_DTYPE_F16) return _mm512_cvtph_ps(ffn__f16_from_f32(v));
    return v;
}

enum ffn__st { FFN_ST_FULL, FFN_ST_MASK, FFN_ST_STREAM };

// Stores v to p[i..]: all 16 lanes, the lanes of m, or all 16 non-temporally (p + i aligned to
// the 64 (f32) or 32 (16-bit) bytes of one vector).
FFN_VINLINE void ffn__vstore(void *p, int64_t i, enum ffn_dtype dt, __m512 v, enum ffn__st st,
                             __mmask16 m) {
    if (dt == FFN_DTYPE_F32) {
        float *q = (float *)p + i;
        if (st == FFN_ST_STREAM) _mm512_stream_ps(q, v);
        else if (st == FFN_ST_MASK) _mm512_mask_storeu_ps(q, m, v);
        else _mm512_storeu_ps(q, v);
        return;
    }
    uint16_t *q = (uint16_t *)p + i;
    const __m256i h = dt == FFN_DTYPE_BF16 ? ffn__bf16_from_f32(v) : ffn__f16_from_f32(v);
    if (st == FFN_ST_STREAM) _mm256_stream_si256((__m256i *)q, h);
    else if (st == FFN_ST_MASK) _mm256_mask_storeu_epi16(q, m, h);
    else _mm256_storeu_si256((__m256i *)q, h);
}

FFN_VINLINE __mmask16 ffn__tailmask(int64_t k) { return (__mmask16)((1u << k) - 1u); }

// --- streaming: a masked head up to the output's vector alignment ---------------------------------

// Bytes one vector of `dt` outputs occupies: the alignment a non-temporal store needs.
FFN_VINLINE uintptr_t ffn__vbytes(enum ffn_dtype dt) { return dt == FFN_DTYPE_F32 ? 64 : 32; }

// Elements before p reaches vector alignment, or -1 when it never does (p not even aligned to the
// element size). Streaming is only used when this is ≥ 0.
FFN_VINLINE int64_t ffn__head(const void *p, enum ffn_dtype dt) {
    const uintptr_t a = (uintptr_t)p, es = dt == FFN_DTYPE_F32 ? 4 : 2, vb = ffn__vbytes(dt);
    if (a % es) return -1;
    return (int64_t)(((vb - a % vb) % vb) / es);
}

// --- the value of an activation ----------------------------------------------------------------
// act(x) = (hi + lo)·2^floor(k). The split lets a σ-based activation leave its power of two (and
// a small correction term) for the very end, so that a combine multiplies before the single
// rounding into a subnormal result, and a dtype conversion sees one value.
struct ffn__av {
    __m512 hi, lo, k;
};

// Activations and derivatives are evaluated by functions of this shape (each returns the pair it
// computes; the unused half is dead code after inlining).
struct ffn__avd {
    struct ffn__av a;   // act(x)
    struct ffn__av da;  // act'(x)
};
typedef struct ffn__avd (*ffn__vfn)(__m512 x, bool accurate);

// Flags of what the value carries (compile-time constants at each call).
enum { FFN_AV_LO = 1, FFN_AV_K = 2 };

FFN_VINLINE __m512 ffn__av_eval(struct ffn__av v, int flags) {
    __m512 y = (flags & FFN_AV_LO) ? _mm512_add_ps(v.hi, v.lo) : v.hi;
    return (flags & FFN_AV_K) ? _mm512_scalef_ps(y, v.k) : y;
}

// (hi + lo)·2^k · m with one final rounding of hi·m + lo·m (fma) before the scaling (an exact
// tiny sum keeps its sign when it underflows). lo·m is taken as 0 where m is ±inf or NaN (it
// could be 0·inf there; hi·m is the answer).
FFN_VINLINE __m512 ffn__av_mul(struct ffn__av v, __m512 m, int flags) {
    __m512 y;
    if (flags & FFN_AV_LO) {
        const __mmask16 fin = (__mmask16)~_mm512_fpclass_ps_mask(m, 0x99);  // not NaN / ±inf
        y = _mm512_fmadd_ps(v.hi, m, _mm512_maskz_mul_ps(fin, v.lo, m));
    } else {
        y = _mm512_mul_ps(v.hi, m);
    }
    return (flags & FFN_AV_K) ? _mm512_scalef_ps(y, v.k) : y;
}

// --- loop drivers -------------------------------------------------------------------------------
// One vector step per op kind; the drivers below run it over body, head and tail alike, so each
// element is computed the same way wherever it lies.

enum ffn__kind { FFN_K_ACT_FWD, FFN_K_ACT_BWD, FFN_K_GLU_FWD, FFN_K_GLU_BWD };

struct ffn__ptrs {
    void *o0, *o1;
    const void *i0, *i1, *i2;
};

FFN_VINLINE void ffn__step(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                           enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out, ffn__vfn f,
                           int fl, int dfl, bool full, __mmask16 m, enum ffn__st st0,
                           enum ffn__st st1) {
    const __m512 x = ffn__vload(p->i0, i, in, full, m);
    switch (kind) {
    case FFN_K_ACT_FWD: {
        const struct ffn__avd r = f(x, cfg->accurate);
        ffn__vstore(p->o0, i, out, ffn__av_eval(r.a, fl), st0, m);
        break;
    }
    case FFN_K_ACT_BWD: {  // dx = dy·act'(x)
        const __m512 dy = ffn__vload(p->i1, i, in, full, m);
        const struct ffn__avd r = f(x, false);
        ffn__vstore(p->o0, i, out, ffn__av_mul(r.da, dy, dfl), st0, m);
        break;
    }
    case FFN_K_GLU_FWD: {  // h = act(gate)·up
        const __m512 u = ffn__vload(p->i1, i, in, full, m);
        const struct ffn__avd r = f(x, cfg->accurate);
        __m512 h;
        if (cfg->parity && out != FFN_DTYPE_F32)  // as two eager framework ops would round
            h = _mm512_mul_ps(ffn__vround_to(ffn__av_eval(r.a, fl), out), ffn__vround_to(u, out));
        else
            h = ffn__av_mul(r.a, u, fl);
        ffn__vstore(p->o0, i, out, h, st0, m);
        break;
    }
    case FFN_K_GLU_BWD: {  // dgate = dh·up·act'(gate), dup = dh·act(gate)
        const __m512 u = ffn__vload(p->i1, i, in, full, m);
        const __m512 dh = ffn__vload(p->i2, i, in, full, m);
        const struct ffn__avd r = f(x, false);
        const __m512 dg = ffn__av_mul(r.da, _mm512_mul_ps(dh, u), dfl);
        const __m512 du = ffn__av_mul(r.a, dh, fl);
        ffn__vstore(p->o0, i, out, dg, st0, m);
        ffn__vstore(p->o1, i, out, du, st1, m);
        break;
    }
    }
}

// Runs `f` over n elements for one (kind, in, out) combination. With cfg->stream the outputs are
// written non-temporally once the first is vector-aligned (a masked head gets it there; a second
// output not aligned alike is stored normally), then fenced.
FFN_VINLINE void ffn__drive(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                            enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out, ffn__vfn f,
                            int fl, int dfl) {
    int64_t i = 0;
    int64_t head = cfg->stream ? ffn__head(p->o0, out) : -1;
    const bool two = kind == FFN_K_GLU_BWD;
    bool nt1 = false;
    if (head >= 0 && two)
        nt1 = ((uintptr_t)p->o1 - (uintptr_t)p->o0) % ffn__vbytes(out) == 0;
    if (head > 0) {
        if (head > n) head = n;
        ffn__step(cfg, p, 0, kind, in, out, f, fl, dfl, false, ffn__tailmask(head), FFN_ST_MASK,
                  FFN_ST_MASK);
        i = head;
    }
    if (head >= 0) {
        const enum ffn__st s1 = nt1 ? FFN_ST_STREAM : FFN_ST_FULL;
        for (; i + FFN_VL <= n; i += FFN_VL)
            ffn__step(cfg, p, i, kind, in, out, f, fl, dfl, true, 0, FFN_ST_STREAM, s1);
    } else {
        for (; i + FFN_VL <= n; i += FFN_VL)
            ffn__step(cfg, p, i, kind, in, out, f, fl, dfl, true, 0, FFN_ST_FULL, FFN_ST_FULL);
    }
    if (i < n)
        ffn__step(cfg, p, i, kind, in, out, f, fl, dfl, false, ffn__tailmask(n - i), FFN_ST_MASK,
                  FFN_ST_MASK);
    if (head >= 0) _mm_sfence();
}

// Picks the specialised loop for the (in, out) dtype pair.
FFN_VINLINE void ffn__dispatch(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                               enum ffn__kind kind, ffn__vfn f, int fl, int dfl) {
    const enum ffn_dtype F = FFN_DTYPE_F32, B = FFN_DTYPE_BF16, H = FFN_DTYPE_F16;
    switch ((int)cfg->in * 3 + (int)cfg->out) {
    case 0: ffn__drive(cfg, n, p, kind, F, F, f, fl, dfl); break;
    case 1: ffn__drive(cfg, n, p, kind, F, B, f, fl, dfl); break;
    case 2: ffn__drive(cfg, n, p, kind, F, H, f, fl, dfl); break;
    case 3: ffn__drive(cfg, n, p, kind, B, F, f, fl, dfl); break;
    case 4: ffn__drive(cfg, n, p, kind, B, B, f, fl, dfl); break;
    case 5: ffn__drive(cfg, n, p, kind, B, H, f, fl, dfl); break;
    case 6: ffn__drive(cfg, n, p, kind, H, F, f, fl, dfl); break;
    case 7: ffn__drive(cfg, n, p, kind, H, B, f, fl, dfl); break;
    case 8: ffn__drive(cfg, n, p, kind, H, H, f, fl, dfl); break;
    default: break;
    }
}

// The four kernel shapes of kernels.inc. fl / dfl: FFN_AV_* flags of act and act'.
FFN_VINLINE void ffn__act_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x,
                              ffn__vfn f, int fl) {
    const struct ffn__ptrs p = {.o0 = y, .i0 = x};
    ffn__dispatch(cfg, n, &p, FFN_K_ACT_FWD, f, fl, 0);
}
FFN_VINLINE void ffn__act_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x,
                              const void *dy, ffn__vfn f, int dfl) {
    const struct ffn__ptrs p = {.o0 = dx, .i0 = x, .i1 = dy};
    ffn__dispatch(cfg, n, &p, FFN_K_ACT_BWD, f, 0, dfl);
}
FFN_VINLINE void ffn__glu_fwd(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate,
                              const void *up, ffn__vfn f, int fl) {
    const struct ffn__ptrs p = {.o0 = h, .i0 = gate, .i1 = up};
    ffn__dispatch(cfg, n, &p, FFN_K_GLU_FWD, f, fl, 0);
}
FFN_VINLINE void ffn__glu_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup,
                              const void *gate, const void *up, const void *dh, ffn__vfn f,
                              int fl, int dfl) {
    const struct ffn__ptrs p = {.o0 = dgate, .o1 = dup, .i0 = gate, .i1 = up, .i2 = dh};
    ffn__dispatch(cfg, n, &p, FFN_K_GLU_BWD, f, fl, dfl);
}

// --- 2^z by table: z = n16 + r, n16 a multiple of 1/16, |r| ≤ 1/32 ------------------------------
// Adding FFN_EXP2_MAGIC = 1.5·2^19 (ulp 1/16) rounds z to n16 and leaves 16·n16 mod 16 in the low
// mantissa bits: vpermps reads exactly those 4 bits as the table index j, and vscalefps(·, n16)
// scales by 2^floor(n16). So 2^z = scalef(T_j·2^r, n16), T_j = 2^(j/16) (a hi + lo pair).
#define FFN_EXP2_MAGIC 0x1.8p19f
// 2^r - 1 ≈ r·(C1 + C2·r + C3·r²) on |r| ≤ 1/32 + 1e-4: relative error 2.4e-9 (0.04 ulp).
#define FFN_EXP2_C1 0x1.62e43p-1f
#define FFN_EXP2_C2 0x1.ebff98p-3f
#define FFN_EXP2_C3 0x1.c6b29ep-5f

FFN_VINLINE __m512 ffn__exp2_thi(void) {  // 2^(j/16) rounded to f32
    return _mm512_setr_ps(0x1p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fep+0f,
                          0x1.3dea64p+0f, 0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f,
                          0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f, 0x1.ae89fap+0f,
                          0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f);
}
FFN_VINLINE __m512 ffn__exp2_tlo(void) {  // 2^(j/16) - thi_j
    return _mm512_setr_ps(0x0p+0f, 0x1.9f3122p-25f, -0x1.c15742p-27f, 0x1.ceac48p-25f,
                          0x1.4636e2p-25f, 0x1.824684p-25f, -0x1.593abcp-25f, -0x1.5bd5ecp-27f,
                          0x1.9fcef4p-26f, -0x1.829fdp-25f, 0x1.15506ep-27f, 0x1.51f848p-27f,
                          -0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f, 0x1.52486cp-27f);
}

// E = 2^(j/16 + r) ∈ [0.97, 1.03·1.96) for t = z + MAGIC (rounded) and r = z - n16.
// precise: the table's low part too (E within 0.5 ulp + 0.04); else within ~1 ulp.
FFN_VINLINE __m512 ffn__exp2_frac(__m512 t, __m512 r, bool precise) {
    const __m512i j = _mm512_castps_si512(t);
    const __m512 th = _mm512_permutexvar_ps(j, ffn__exp2_thi());
    __m512 p = _mm512_fmadd_ps(ffn__c(FFN_EXP2_C3), r, ffn__c(FFN_EXP2_C2));
    p = _mm512_fmadd_ps(p, r, ffn__c(FFN_EXP2_C1));
    p = _mm512_mul_ps(p, r);  // 2^r - 1
    if (!precise) return _mm512_fmadd_ps(th, p, th);
    const __m512 tl = _mm512_permutexvar_ps(j, ffn__exp2_tlo());
    return _mm512_add_ps(th, _mm512_fmadd_ps(th, p, tl));
}

// --- the σ quotient --------------------------------------------------------------------------------
// For σ-based activations y = x·σ(t) with e = exp(-|t|) = E·2^n (n = the n16 above):
//   t ≥ 0:  σ(t) = 1/(1 + e)              t < 0:  σ(t) = e/(1 + e) = 2^n · E/(1 + e)
// so y = 2^k · N/(1 + e) with N = x (k = 0) or x·E (k = n). Neither e nor any intermediate can
// overflow, and the power of two 2^n (possibly tiny) is applied last, so a subnormal never
// decides a normal result. The quotient is compensated: q0 = Nh/D (D = 1 + e rounded), then the
// residual Nh - q0·(1 + e) = (Nh - q0) - q0·e is exact up to one rounding of a tiny value
// (Nh - q0 is exact by Sterbenz: q0 ∈ [Nh/2, Nh]), and q = q0 + (residual + Nl)/D needs only a
// 14-bit reciprocal. Result: within 0.5 ulp + E's error (times 1/(1+e) ≤ 1).
// Returns hi = q0, lo = the correction, k = n on t < 0 lanes (0 elsewhere).
FFN_VINLINE struct ffn__av ffn__xsig(__m512 x, __m512 E, __m512 n, __mmask16 neg) {
    const __m512 e = _mm512_scalef_ps(E, n);
    const __m512 D = _mm512_add_ps(ffn__c(1.0f), e);
    const __m512 Nh = _mm512_mask_mul_ps(x, neg, x, E);
    const __m512 Nl = _mm512_maskz_fmsub_ps(neg, x, E, Nh);  // x·E - Nh exactly
    const __m512 q0 = _mm512_div_ps(Nh, D);
    __m512 rr = _mm512_fnmadd_ps(q0, e, _mm512_sub_ps(Nh, q0));
    rr = _mm512_add_ps(rr, Nl);
    struct ffn__av v;
    v.hi = q0;
    // On x = ±inf lanes Nh - q0 is inf - inf, on x = ±0 lanes the quotient is exact: there lo is
    // hi itself (±inf, or a zero of hi's sign), so hi + lo and hi·m + lo·m keep hi's value and
    // the sign of a zero product.
    const __mmask16 fin = (__mmask16)~_mm512_fpclass_ps_mask(x, 0x1e);
    v.lo = _mm512_mask_mul_ps(q0, fin, rr, _mm512_rcp14_ps(D));
    v.k = _mm512_maskz_mov_ps(neg, n);
    return v;
}

// Lanes whose sign bit is set (x < 0, -0, negative NaN).
FFN_VINLINE __mmask16 ffn__signmask(__m512 x) {
    return _mm512_movepi32_mask(_mm512_castps_si512(x));
}

FFN_VINLINE __m512 ffn__neg_abs(__m512 x) {  // -|x| (NaN stays NaN)
    return _mm512_or_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000u)));
}

// --- exp(-|t|) for t = slope·x ------------------------------------------------------------------
// z = a·c with a = -|x| (clamped) and c = slope·log2(e) as a float pair (c_hi + c_lo): n16 from
// fma(a, c_hi, MAGIC) and r = (a·c_hi - n16) + a·c_lo, both exact up to one rounding of a value
// ≤ 1/32, so exp(-|t|) = 2^n16·E keeps full relative accuracy over the whole range of a.
FFN_VINLINE __m512 ffn__exp_neg(__m512 a, float c_hi, float c_lo, bool precise, __m512 *n16) {
    const __m512 t = _mm512_fmadd_ps(a, ffn__c(c_hi), ffn__c(FFN_EXP2_MAGIC));
    const __m512 n = _mm512_sub_ps(t, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fmsub_ps(a, ffn__c(c_hi), n);
    r = _mm512_fmadd_ps(a, ffn__c(c_lo), r);
    *n16 = n;
    return ffn__exp2_frac(t, r, precise);
}

// --- the σ family: y = x·σ(slope·x) and σ itself ----------------------------------------------
// Below x = -300 (|slope| ≥ 1) e^{-|t|} < 2^-432: every σ-family value, even times the largest
// multipliers of a combine or a backward (2^128·2^128), underflows to ±0. The argument and the
// multiplier are clamped there, which changes no result and keeps -inf from meeting a zero.
#define FFN_SIG_CLAMP 300.0f

// --- subnormal inputs of the x·σ activations ------------------------------------------------------
// For |x| < 2^-126, act(x) = x·act'(0) is subnormal and would lose bits before a combine
// multiplies it by up. Such lanes are evaluated at x·2^64 (still so small that act is linear
// there to f32 precision) and get k -= 64: the 2^-64 is then applied after the multiply, with
// the single final rounding. The branch only decides whether to compute; lanes are selected by
// their own class.
#define FFN_TINY_SCALE 0x1p64f
#define FFN_TINY_K -64.0f
FFN_VINLINE __mmask16 ffn__tiny_pre(__m512 *x) {
    const __mmask16 tiny = _mm512_fpclass_ps_mask(*x, 0x20);  // subnormal
    if (tiny) *x = _mm512_mask_mul_ps(*x, tiny, *x, ffn__c(FFN_TINY_SCALE));
    return tiny;
}
FFN_VINLINE void ffn__tiny_post(struct ffn__av *v, __mmask16 tiny) {
    if (tiny) v->k = _mm512_mask_mov_ps(v->k, tiny, ffn__c(FFN_TINY_K));
}

// x·σ(slope·x) (xmul = true) or σ(slope·x) (xmul = false), forward, within ~1 ulp.
FFN_VINLINE struct ffn__av ffn__sigfam(__m512 x, float c_hi, float c_lo, bool xmul) {
    const __mmask16 tiny = xmul ? ffn__tiny_pre(&x) : 0;
    const __m512 a = _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));  // NaN stays
    __m512 n;
    const __m512 E = ffn__exp_neg(a, c_hi, c_lo, true, &n);
    const __m512 xm = xmul ? _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), x) : ffn__c(1.0f);
    struct ffn__av v = ffn__xsig(xm, E, n, ffn__signmask(x));
    ffn__tiny_post(&v, tiny);
    return v;
}

// Pieces of σ for derivatives (8-ulp tier, one division): with e = exp(-|t|) = E·2^n,
// inv = 1/(1+e),  σ(t) = S·2^k,  1-σ(t) = C, where
//   t ≥ 0: S = inv, C = e·inv, k = 0;     t < 0: S = E·inv, C = inv, k = n.
struct ffn__sigd {
    __m512 S, C, k, E, inv;
};
FFN_VINLINE struct ffn__sigd ffn__sig_pieces(__m512 E, __m512 n, __mmask16 neg) {
    struct ffn__sigd s;
    const __m512 e = _mm512_scalef_ps(E, n);
    s.inv = _mm512_div_ps(ffn__c(1.0f), _mm512_add_ps(ffn__c(1.0f), e));
    s.S = _mm512_mask_mul_ps(s.inv, neg, E, s.inv);
    s.C = _mm512_mask_mov_ps(_mm512_mul_ps(e, s.inv), neg, s.inv);
    s.k = _mm512_maskz_mov_ps(neg, n);
    s.E = E;
    return s;
}

// act = x·σ(slope·x) and act' = σ·(1 + slope·x·(1-σ)) (SiLU, quick-GeLU), for backward.
// x is clamped to ±300 inside the derivative's bracket: beyond, 1-σ (x > 0) or σ (x < 0) is 0
// in f32, so the clamp changes nothing and keeps inf·0 out.
FFN_VINLINE struct ffn__avd ffn__sigfam_d(__m512 x, float c_hi, float c_lo, float slope) {
    const __mmask16 tiny = ffn__tiny_pre(&x);  // act' is flat there: only act needs the scale
    const __m512 a = _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));
    __m512 n;
    const __m512 E = ffn__exp_neg(a, c_hi, c_lo, false, &n);
    const struct ffn__sigd s = ffn__sig_pieces(E, n, ffn__signmask(x));
    const __m512 xc = _mm512_min_ps(ffn__c(FFN_SIG_CLAMP), _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), x));
    const __m512 sx = slope == 1.0f ? xc : _mm512_mul_ps(ffn__c(slope), xc);
    struct ffn__avd r;
    r.a.hi = _mm512_mul_ps(_mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), x), s.S);
    r.a.lo = _mm512_setzero_ps();
    r.a.k = s.k;
    r.da.hi = _mm512_mul_ps(s.S, _mm512_fmadd_ps(sx, s.C, ffn__c(1.0f)));
    r.da.lo = _mm512_setzero_ps();
    r.da.k = s.k;
    ffn__tiny_post(&r.a, tiny);
    return r;
}

#endif  // FFN_VMATH_AVX512_H
