// vmath_avx512.h — shared inline vector math of the AVX-512 activation kernels: loads and stores
// per dtype (bf16 rounded with integer ops, f16 by vcvtps2ph), the loop drivers that run a
// per-vector activation over n elements (masked streaming head, masked tail), the NaN rule, 2^z
// by a 16-entry table, and the σ machinery: a fast compensated quotient for the common lanes and
// the general scaled form for the rare ones. Header-only, for the files of this folder (built
// with -mavx512f/bw/dq/vl); no state, no allocation.
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
    const __m256i h =
        full ? _mm256_loadu_si256((const __m256i *)q) : _mm256_maskz_loadu_epi16(m, q);
    if (dt == FFN_DTYPE_BF16)  // bf16 is the top half of an f32
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

// f32 -> bf16 by integer ops: round to nearest even, NaN kept quiet, subnormals kept (as
// ffn_f32_to_bf16): bits + 0x7fff + lsb, the result in the high half of each lane (the low half
// is not cleared).
FFN_VINLINE __m512i ffn__bf16_round_hi(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));  // quiet, no rounding
}

// f32 -> bf16. With cvt (the CPU has AVX512_BF16) a vector without subnormal lanes takes one
// vcvtneps2bf16 (vcvtne2ps2bf16 for a pair, below): the same RNE and quiet NaN as the integer
// rounding, but subnormal inputs flushed to zero, so a vector with a subnormal lane keeps the
// integer rounding. Either way every lane's bits depend on its own value only.
FFN_VINLINE __m256i ffn__bf16_from_f32(__m512 v, bool cvt) {
    if (cvt && !_mm512_fpclass_ps_mask(v, 0x20)) return (__m256i)_mm512_cvtneps_pbh(v);
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(ffn__bf16_round_hi(v), 16));
}

// f32 -> f16: vcvtps2ph with round-to-nearest-even is exact RNE (subnormals, NaN quieted).
FFN_VINLINE __m256i ffn__f16_from_f32(__m512 v) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Rounds v to the storage type dt and back (parity mode); identity for f32.
FFN_VINLINE __m512 ffn__vround_to(__m512 v, enum ffn_dtype dt) {
    if (dt == FFN_DTYPE_BF16)
        return _mm512_castsi512_ps(
            _mm512_and_si512(ffn__bf16_round_hi(v), _mm512_set1_epi32((int)0xffff0000u)));
    if (dt == FFN_DTYPE_F16) return _mm512_cvtph_ps(ffn__f16_from_f32(v));
    return v;
}

enum ffn__st { FFN_ST_FULL, FFN_ST_MASK, FFN_ST_STREAM };

// Stores v to p[i..]: all 16 lanes, the lanes of m, or all 16 non-temporally (p + i aligned to
// the 64 (f32) or 32 (16-bit) bytes of one vector).
FFN_VINLINE void ffn__vstore(void *p, int64_t i, enum ffn_dtype dt, __m512 v, enum ffn__st st,
                             __mmask16 m, bool cvt) {
    if (dt == FFN_DTYPE_F32) {
        float *q = (float *)p + i;
        if (st == FFN_ST_STREAM)
            _mm512_stream_ps(q, v);
        else if (st == FFN_ST_MASK)
            _mm512_mask_storeu_ps(q, m, v);
        else
            _mm512_storeu_ps(q, v);
        return;
    }
    uint16_t *q = (uint16_t *)p + i;
    const __m256i h = dt == FFN_DTYPE_BF16 ? ffn__bf16_from_f32(v, cvt) : ffn__f16_from_f32(v);
    if (st == FFN_ST_STREAM)
        _mm256_stream_si256((__m256i *)q, h);
    else if (st == FFN_ST_MASK)
        _mm256_mask_storeu_epi16(q, m, h);
    else
        _mm256_storeu_si256((__m256i *)q, h);
}

// --- bf16 pairs: 32 elements to a 512-bit load ----------------------------------------------
// Where every input and output is bf16 the loops take 32 elements at once (a "pair"): one 512-bit
// load gives the odd elements (the high halves of its 32-bit lanes, the low halves cleared) and
// the even ones (shifted up) as two f32 vectors, each computed as any vector is, every lane
// alone; one vcvtne2ps2bf16 and one vpermw put both back in order. Against 16 elements at a time
// (vpmovzxwd + vpslld in, vcvtneps2bf16 out) the conversions take fewer and shorter operations:
// SiLU forward bf16 in cache 9.5 -> 7.3 cycles per 16 elements (docs/performance.md, "bf16").
struct ffn__eo {
    __m512 o, e;  // elements 2k+1 and 2k of the 32, k = lane
};
FFN_VINLINE struct ffn__eo ffn__eo_load(const void *p, int64_t i) {
    const __m512i v = _mm512_loadu_si512((const uint16_t *)p + i);
    const struct ffn__eo r = {
        _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u))),
        _mm512_castsi512_ps(_mm512_slli_epi32(v, 16))};
    return r;
}
// Stores the pair (o, e) to p[i..i+31] as bf16, all 32 (FFN_ST_FULL) or non-temporally
// (FFN_ST_STREAM: p + i 64-byte aligned); the same bits as two ffn__vstore.
FFN_VINLINE void ffn__eo_store(void *p, int64_t i, struct ffn__eo y, enum ffn__st st, bool cvt) {
    __m512i r;
    if (cvt && !(_mm512_fpclass_ps_mask(y.o, 0x20) | _mm512_fpclass_ps_mask(y.e, 0x20))) {
        // words 0..15 of the conversion are the even elements, 16..31 the odd ones
        const __m512i idx =
            _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                             22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        r = _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(y.o, y.e));
    } else {
        r = _mm512_ternarylogic_epi32(ffn__bf16_round_hi(y.o),
                                      _mm512_srli_epi32(ffn__bf16_round_hi(y.e), 16),
                                      _mm512_set1_epi32((int)0xffff0000u), 0xe4);  // c ? a : b
    }
    uint16_t *q = (uint16_t *)p + i;
    if (st == FFN_ST_STREAM)
        _mm512_stream_si512((void *)q, r);
    else
        _mm512_storeu_si512(q, r);
}

FFN_VINLINE __mmask16 ffn__tailmask(int64_t k) { return (__mmask16)((1u << k) - 1u); }

// --- streaming: a masked head up to the output's vector alignment
// ---------------------------------

// Bytes one vector of `dt` outputs occupies: the alignment a non-temporal store needs.
FFN_VINLINE uintptr_t ffn__vbytes(enum ffn_dtype dt) { return dt == FFN_DTYPE_F32 ? 64 : 32; }

// Elements before p reaches vector alignment, or -1 when it never does (p not even aligned to the
// element size). Streaming is only used when this is ≥ 0.
FFN_VINLINE int64_t ffn__head(const void *p, enum ffn_dtype dt) {
    const uintptr_t a = (uintptr_t)p, es = dt == FFN_DTYPE_F32 ? 4 : 2, vb = ffn__vbytes(dt);
    if (a % es) return -1;
    return (int64_t)(((vb - a % vb) % vb) / es);
}

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
// ffn__pipe): the result is fin(x, pre(x)) either way, bit for bit.
enum ffn__mode { FFN_MODE_ACT, FFN_MODE_ACT_MUL, FFN_MODE_DACT_MUL, FFN_MODE_BOTH };

struct ffn__vo {
    __m512 y0, y1;
};
struct ffn__pre {  // what a pre stage hands its fin stage (members it does not use: x)
    __m512 u, v, w;
};
typedef struct ffn__pre (*ffn__vpre)(__m512 x, enum ffn__mode mode, bool accurate);
typedef struct ffn__vo (*ffn__vfin)(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                    enum ffn__mode mode, bool accurate);

// The pre stage of an activation whose work is all in fin (ReLU, identity).
FFN_VINLINE struct ffn__pre ffn__pre_none(__m512 x, enum ffn__mode mode, bool accurate) {
    (void)mode, (void)accurate;
    const struct ffn__pre s = {x, x, x};
    return s;
}

// An activation `name` defined as name##_pre and name##_fin, with name##_tiers saying whether it
// has an accurate tier (the GeLUs; the others get no loops for one): FFN_WHOLE(name) defines
// name##_whole, both stages in one, and a kernel runs it pipelined (FFN_PIPED) or a vector at a
// time (FFN_PLAIN), whichever is faster for it.
#define FFN_WHOLE(name)                                                                      \
    FFN_VINLINE struct ffn__vo name##_whole(__m512 x, struct ffn__pre s, __m512 a, __m512 b, \
                                            enum ffn__mode mode, bool acc) {                 \
        (void)s;                                                                             \
        return name##_fin(x, name##_pre(x, mode, acc), a, b, mode, acc);                     \
    }
#define FFN_PIPED(name) name##_pre, name##_fin, name##_tiers
#define FFN_PLAIN(name) ffn__pre_none, name##_whole, name##_tiers

// --- NaN results
// ---------------------------------------------------------------------------------- A NaN result
// is the first NaN input (x, then a, then b), made quiet, else the default NaN 0xffc00000 (an
// invalid operation such as 0·inf): the same bits wherever the element lies (the compiler may order
// a commutative operation's operands differently in the body and the tail, and x86 keeps the first
// operand's NaN), and the same rule as the AVX2 kernels. vfixupimmps with this table replaces the
// destination by QNaN(src) where src is a NaN.
#define FFN_FIXUP_QNAN_SRC 0x22
FFN_VINLINE __m512 ffn__nan_take(__m512 r, __m512 src) {
    return _mm512_fixupimm_ps(r, src, _mm512_set1_epi32(FFN_FIXUP_QNAN_SRC), 0);
}
FFN_VINLINE __m512 ffn__nan_default(void) {
    return _mm512_castsi512_ps(_mm512_set1_epi32((int)0xffc00000u));
}
// The NaN rule for the result r of an op with n_in inputs (x, a, b). With one input a result is
// NaN exactly where x is (every activation is defined on ±inf): one vfixupimmps. Otherwise the
// rare NaN lanes are fixed after one compare.
FFN_VINLINE __m512 ffn__nan_fix(__m512 r, __m512 x, __m512 a, __m512 b, int n_in) {
    if (n_in == 1) return ffn__nan_take(r, x);
    const __mmask16 rn = _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q);
    if (__builtin_expect(rn == 0, 1)) return r;
    __m512 c = ffn__nan_default();
    if (n_in > 2) c = ffn__nan_take(c, b);
    c = ffn__nan_take(ffn__nan_take(c, a), x);
    return _mm512_mask_mov_ps(r, rn, c);
}
// The NaN rule applied to a function's outputs in a mode (x and the multiplicands a, b).
FFN_VINLINE struct ffn__vo ffn__nan_fix_mode(struct ffn__vo o, __m512 x, __m512 a, __m512 b,
                                             enum ffn__mode mode) {
    switch (mode) {
    case FFN_MODE_ACT: o.y0 = ffn__nan_fix(o.y0, x, x, x, 1); break;
    case FFN_MODE_ACT_MUL:
    case FFN_MODE_DACT_MUL: o.y0 = ffn__nan_fix(o.y0, x, a, a, 2); break;
    default:
        o.y0 = ffn__nan_fix(o.y0, x, a, b, 3);
        o.y1 = ffn__nan_fix(o.y1, x, a, b, 3);
        break;
    }
    return o;
}

// --- loop drivers -------------------------------------------------------------------------------
// One vector step per op kind; the drivers below run it over body, head and tail alike, so each
// element is computed the same way wherever it lies.

enum ffn__kind { FFN_K_ACT_FWD, FFN_K_ACT_BWD, FFN_K_GLU_FWD, FFN_K_GLU_BWD };

struct ffn__ptrs {
    void *o0, *o1;
    const void *i0, *i1, *i2;
};

// The mode an op kind evaluates its activation in; par_act: a gated forward in parity mode, which
// rounds act(gate) to the output type before the product (act alone).
FFN_VINLINE enum ffn__mode ffn__kind_mode(enum ffn__kind kind, bool par_act) {
    switch (kind) {
    case FFN_K_ACT_FWD: return FFN_MODE_ACT;
    case FFN_K_ACT_BWD: return FFN_MODE_DACT_MUL;
    case FFN_K_GLU_FWD: return par_act ? FFN_MODE_ACT : FFN_MODE_ACT_MUL;
    default: return FFN_MODE_BOTH;
    }
}

// The outputs of an op kind for one vector (x loaded, s = pre(x), a and b its other inputs).
FFN_VINLINE struct ffn__vo ffn__outs(enum ffn__kind kind, enum ffn_dtype out, ffn__vfin fin,
                                     bool par_act, bool acc, __m512 x, struct ffn__pre s, __m512 a,
                                     __m512 b) {
    const enum ffn__mode mode = ffn__kind_mode(kind, par_act);
    switch (kind) {
    case FFN_K_ACT_FWD: return fin(x, s, x, x, mode, acc);
    case FFN_K_ACT_BWD: return fin(x, s, a, a, mode, acc);  // dx = dy·act'(x), a = dy
    case FFN_K_GLU_FWD: {                                   // h = act(gate)·up, a = up
        struct ffn__vo r = fin(x, s, a, a, mode, acc);
        if (par_act)  // act(gate) alone, rounded as two eager framework ops would
            r.y0 = ffn__nan_fix(_mm512_mul_ps(ffn__vround_to(r.y0, out), ffn__vround_to(a, out)), x,
                                a, a, 2);
        return r;
    }
    default: return fin(x, s, a, b, mode, acc);  // dgate = dh·up·act'(gate), dup = dh·act(gate)
    }
}

// The fin stage of the vector at i (x loaded, s = pre(x)): the other inputs, the activation's
// fin, the stores.
FFN_VINLINE void ffn__step_fin(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                               enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out,
                               ffn__vfin fin, bool par_act, bool acc, __m512 x, struct ffn__pre s,
                               bool full, __mmask16 m, enum ffn__st st0, enum ffn__st st1) {
    const __m512 a = kind == FFN_K_ACT_FWD ? x : ffn__vload(p->i1, i, in, full, m);
    const __m512 b = kind == FFN_K_GLU_BWD ? ffn__vload(p->i2, i, in, full, m) : a;
    const struct ffn__vo r = ffn__outs(kind, out, fin, par_act, acc, x, s, a, b);
    ffn__vstore(p->o0, i, out, r.y0, st0, m, cfg->bf16_cvt);
    if (kind == FFN_K_GLU_BWD) ffn__vstore(p->o1, i, out, r.y1, st1, m, cfg->bf16_cvt);
}

// The whole step of the vector at i: all 16 lanes (full) or the lanes of m.
FFN_VINLINE void ffn__step(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                           enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out,
                           ffn__vpre pre, ffn__vfin fin, bool par_act, bool acc, bool full,
                           __mmask16 m, enum ffn__st st0, enum ffn__st st1) {
    const __m512 x = ffn__vload(p->i0, i, in, full, m);
    const struct ffn__pre s = pre(x, ffn__kind_mode(kind, par_act), acc);
    ffn__step_fin(cfg, p, i, kind, in, out, fin, par_act, acc, x, s, full, m, st0, st1);
}

// The unit of the loops below: a vector of 16 elements, or with `eo` a bf16 pair of 32 (two
// vectors, odd and even elements: see ffn__eo_load), loaded and through its pre stage.
struct ffn__unit {
    __m512 x[2];
    struct ffn__pre s[2];
};
FFN_VINLINE int64_t ffn__unit_len(bool eo) { return eo ? 2 * FFN_VL : FFN_VL; }
FFN_VINLINE struct ffn__unit ffn__unit_pre(const struct ffn__ptrs *p, int64_t i, enum ffn_dtype in,
                                           bool eo, ffn__vpre pre, enum ffn__mode mode, bool acc) {
    struct ffn__unit u;
    if (eo) {
        const struct ffn__eo x = ffn__eo_load(p->i0, i);
        u.x[0] = x.o, u.x[1] = x.e;
        u.s[1] = pre(u.x[1], mode, acc);
    } else {
        u.x[0] = u.x[1] = ffn__vload(p->i0, i, in, true, 0);
    }
    u.s[0] = pre(u.x[0], mode, acc);
    if (!eo) u.s[1] = u.s[0];
    return u;
}
// The fin stage of the unit at i, stored as st0/st1 (with eo, FFN_ST_STREAM needs 64-byte
// alignment).
FFN_VINLINE void ffn__unit_fin(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                               enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out, bool eo,
                               ffn__vfin fin, bool par_act, bool acc, struct ffn__unit u,
                               enum ffn__st st0, enum ffn__st st1) {
    if (!eo) {
        ffn__step_fin(cfg, p, i, kind, in, out, fin, par_act, acc, u.x[0], u.s[0], true, 0, st0,
                      st1);
        return;
    }
    const struct ffn__eo a =
        kind == FFN_K_ACT_FWD ? (struct ffn__eo){u.x[0], u.x[1]} : ffn__eo_load(p->i1, i);
    const struct ffn__eo b = kind == FFN_K_GLU_BWD ? ffn__eo_load(p->i2, i) : a;
    const struct ffn__vo ro = ffn__outs(kind, out, fin, par_act, acc, u.x[0], u.s[0], a.o, b.o);
    const struct ffn__vo re = ffn__outs(kind, out, fin, par_act, acc, u.x[1], u.s[1], a.e, b.e);
    ffn__eo_store(p->o0, i, (struct ffn__eo){ro.y0, re.y0}, st0, cfg->bf16_cvt);
    if (kind == FFN_K_GLU_BWD)
        ffn__eo_store(p->o1, i, (struct ffn__eo){ro.y1, re.y1}, st1, cfg->bf16_cvt);
}

// Whole units base + (w·per + k)·len for k < per, w < ways (≤ FFN_PIPE_WAYS): `ways` interleaved
// sub-ranges of `per` units, walked k-major. With a pre stage the loop is software-pipelined:
// the load and pre stage of unit k + 1 of a sub-range come before the fin stage of unit k. A
// fast path is one long dependency chain per vector (~25 operations, ~60 cycles); in plain order
// the out-of-order core holds too few vectors' chains at once to keep its FP pipes busy, and a
// step ahead the fin stage's operations find their inputs ready. Same-process A/B, AMD Zen 4,
// one thread, 32M f32 (bench/ab.sh): σ forward +15%, SwiGLU and quick-GeGLU forward +18%, GLU
// forward +13%, σ backward +7%, most others +2-5%; in cache SwiGLU forward 14.6 -> 13.2 cycles
// per vector. The w loops are unrolled so that the units stay in registers (rolled, they went
// through the stack and lost the gain).
#define FFN_PIPE_WAYS 4
FFN_VINLINE void ffn__pipe(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t base,
                           int64_t per, int ways, enum ffn__kind kind, enum ffn_dtype in,
                           enum ffn_dtype out, bool eo, ffn__vpre pre, ffn__vfin fin, bool par_act,
                           bool acc, enum ffn__st st0, enum ffn__st st1) {
    if (per <= 0) return;
    const enum ffn__mode mode = ffn__kind_mode(kind, par_act);
    const int64_t len = ffn__unit_len(eo);
    if (pre == ffn__pre_none || acc) {  // each unit in one piece (the accurate tier: rare)
        for (int64_t k = 0; k < per; k++)
            for (int w = 0; w < ways; w++) {
                const int64_t i = base + ((int64_t)w * per + k) * len;
                ffn__unit_fin(cfg, p, i, kind, in, out, eo, fin, par_act, acc,
                              ffn__unit_pre(p, i, in, eo, pre, mode, acc), st0, st1);
            }
        return;
    }
    struct ffn__unit u[FFN_PIPE_WAYS];
    // Unrolled, so that u[] lives in registers.
#pragma GCC unroll 4
    for (int w = 0; w < ways; w++)
        u[w] = ffn__unit_pre(p, base + (int64_t)w * per * len, in, eo, pre, mode, acc);
    for (int64_t k = 0; k < per; k++) {
        const bool more = k + 1 < per;
#pragma GCC unroll 4
        for (int w = 0; w < ways; w++) {
            const int64_t i = base + ((int64_t)w * per + k) * len;
            const struct ffn__unit un =
                more ? ffn__unit_pre(p, i + len, in, eo, pre, mode, acc) : u[w];
            ffn__unit_fin(cfg, p, i, kind, in, out, eo, fin, par_act, acc, u[w], st0, st1);
            u[w] = un;
        }
    }
}

// The whole vectors from i on, stored as st0/st1: ffn_stream_ways() interleaved sub-ranges of
// units, then the vectors left. Returns where the whole vectors end. bf16 to bf16 walks pairs;
// streamed, a vector first brings the output to the 64 bytes of a pair's non-temporal store, and
// a second output not aligned alike is stored plainly.
FFN_VINLINE int64_t ffn__body(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                              int64_t i, enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out,
                              ffn__vpre pre, ffn__vfin fin, bool par_act, bool acc,
                              enum ffn__st st0, enum ffn__st st1) {
    const bool eo = in == FFN_DTYPE_BF16 && out == FFN_DTYPE_BF16;
    if (eo && st0 == FFN_ST_STREAM && ((uintptr_t)p->o0 + 2 * (uintptr_t)i) % 64 &&
        i + FFN_VL <= n) {
        ffn__step(cfg, p, i, kind, in, out, pre, fin, par_act, acc, true, 0, st0, st1);
        i += FFN_VL;
    }
    const int ways = ffn_stream_ways(kind == FFN_K_ACT_FWD ? 2 : kind == FFN_K_GLU_BWD ? 5 : 3);
    const int64_t len = ffn__unit_len(eo);
    const int64_t per = (n - i) / len / ways;  // units per sub-range
    if (eo && kind == FFN_K_GLU_BWD && st1 == FFN_ST_STREAM &&
        ((uintptr_t)p->o1 + 2 * (uintptr_t)i) % 64)
        ffn__pipe(cfg, p, i, per, ways, kind, in, out, eo, pre, fin, par_act, acc, st0,
                  FFN_ST_FULL);
    else
        ffn__pipe(cfg, p, i, per, ways, kind, in, out, eo, pre, fin, par_act, acc, st0, st1);
    i += (int64_t)ways * per * len;
    for (; i + FFN_VL <= n; i += FFN_VL)
        ffn__step(cfg, p, i, kind, in, out, pre, fin, par_act, acc, true, 0, st0, st1);
    return i;
}

// Runs the activation over n elements for one (kind, in, out) combination. The body walks
// ffn_stream_ways() interleaved sub-ranges (memory streams for the prefetchers; in cache, a
// pipeline several vectors deep: σ forward 9.2 -> 7.8 cycles per vector against one sub-range).
// With cfg->stream (a call too big for the caches) the outputs are written non-temporally once the
// first is vector-aligned (a masked head gets it there; a second output not aligned alike is
// stored normally), then fenced -- except where ordinary stores are faster (ffn__nt_pays).
//
// Non-temporal stores save the read of each output line before it is written, but a loop that
// stores faster than memory takes them waits on the write-combining buffers. They pay where memory
// is the limit: f32 outputs, the cheap activations (no pre stage: ReLU and identity; the one
// activation run without its pre stage, GeGLU-erf's backward, is a gated backward anyway), the
// unary forward (where that read would add half the traffic of a 16-bit op) and the gated backward
// (two outputs). A 16-bit output of a transcendental backward or gated forward is compute-bound
// (docs/performance.md, "bf16"); there ordinary stores add a third to its traffic and let the
// arithmetic run on. Same-process A/B, 32M, N(0,1), one thread, against non-temporal stores:
// bf16 backward 1.12-1.17x, gated forward 1.11-1.15x, f16 1.03-1.15x; two processes at once
// 0.99-1.02x; with ordinary stores the unary forward went 0.92-0.97x at two, the gated backward
// 1.00x at one, f32 outputs 0.88-1.12x over two runs (docs/performance.md, "Stores").
FFN_VINLINE bool ffn__nt_pays(enum ffn__kind kind, enum ffn_dtype out, ffn__vpre pre) {
    return out == FFN_DTYPE_F32 || pre == ffn__pre_none ||
           !(kind == FFN_K_ACT_BWD || kind == FFN_K_GLU_FWD);
}
FFN_VINLINE void ffn__drive_par(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                                enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out,
                                ffn__vpre pre, ffn__vfin fin, bool par_act, bool acc) {
    int64_t i = 0;
    const bool nt = cfg->stream && ffn__nt_pays(kind, out, pre);
    int64_t head = nt ? ffn__head(p->o0, out) : -1;
    const bool two = kind == FFN_K_GLU_BWD;
    bool nt1 = false;
    if (head >= 0 && two) nt1 = ((uintptr_t)p->o1 - (uintptr_t)p->o0) % ffn__vbytes(out) == 0;
    if (head > 0) {
        if (head > n) head = n;
        ffn__step(cfg, p, 0, kind, in, out, pre, fin, par_act, acc, false, ffn__tailmask(head),
                  FFN_ST_MASK, FFN_ST_MASK);
        i = head;
    }
    if (head >= 0)
        i = ffn__body(cfg, n, p, i, kind, in, out, pre, fin, par_act, acc, FFN_ST_STREAM,
                      nt1 ? FFN_ST_STREAM : FFN_ST_FULL);
    else
        i = ffn__body(cfg, n, p, i, kind, in, out, pre, fin, par_act, acc, FFN_ST_FULL,
                      FFN_ST_FULL);
    if (i < n)
        ffn__step(cfg, p, i, kind, in, out, pre, fin, par_act, acc, false, ffn__tailmask(n - i),
                  FFN_ST_MASK, FFN_ST_MASK);
    if (head >= 0) _mm_sfence();
}

// The accurate tier of a forward and the gated forward in parity mode (bf16 or f16 out) are
// loops of their own: every flag of the vector code is a compile-time constant. (cfg->accurate
// read inside the loop, as before, cost GeLU-erf forward 8-10%: GCC cannot hoist it past the
// stores, which may alias it.)
FFN_VINLINE void ffn__drive(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                            enum ffn__kind kind, enum ffn_dtype in, enum ffn_dtype out,
                            ffn__vpre pre, ffn__vfin fin, bool tiers) {
    const bool fwd = tiers && (kind == FFN_K_ACT_FWD || kind == FFN_K_GLU_FWD);
    const bool par = kind == FFN_K_GLU_FWD && out != FFN_DTYPE_F32 && cfg->parity;
    if (fwd && cfg->accurate) {
        if (par)
            ffn__drive_par(cfg, n, p, kind, in, out, pre, fin, true, true);
        else
            ffn__drive_par(cfg, n, p, kind, in, out, pre, fin, false, true);
    } else if (par) {
        ffn__drive_par(cfg, n, p, kind, in, out, pre, fin, true, false);
    } else {
        ffn__drive_par(cfg, n, p, kind, in, out, pre, fin, false, false);
    }
}

// Picks the specialised loop for the (in, out) dtype pair.
FFN_VINLINE void ffn__dispatch(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                               enum ffn__kind kind, ffn__vpre pre, ffn__vfin fin, bool tiers) {
#define FFN__RUN(in, out) ffn__drive(cfg, n, p, kind, in, out, pre, fin, tiers)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

// The four kernel shapes of kernels.inc.
FFN_VINLINE void ffn__act_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x,
                              ffn__vpre pre, ffn__vfin fin, bool tiers) {
    const struct ffn__ptrs p = {.o0 = y, .i0 = x};
    ffn__dispatch(cfg, n, &p, FFN_K_ACT_FWD, pre, fin, tiers);
}
FFN_VINLINE void ffn__act_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x,
                              const void *dy, ffn__vpre pre, ffn__vfin fin, bool tiers) {
    const struct ffn__ptrs p = {.o0 = dx, .i0 = x, .i1 = dy};
    ffn__dispatch(cfg, n, &p, FFN_K_ACT_BWD, pre, fin, tiers);
}
FFN_VINLINE void ffn__glu_fwd(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate,
                              const void *up, ffn__vpre pre, ffn__vfin fin, bool tiers) {
    const struct ffn__ptrs p = {.o0 = h, .i0 = gate, .i1 = up};
    ffn__dispatch(cfg, n, &p, FFN_K_GLU_FWD, pre, fin, tiers);
}
FFN_VINLINE void ffn__glu_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup,
                              const void *gate, const void *up, const void *dh, ffn__vpre pre,
                              ffn__vfin fin, bool tiers) {
    const struct ffn__ptrs p = {.o0 = dgate, .o1 = dup, .i0 = gate, .i1 = up, .i2 = dh};
    ffn__dispatch(cfg, n, &p, FFN_K_GLU_BWD, pre, fin, tiers);
}

// --- 2^z by table: z = n16 + r, n16 a multiple of 1/16, |r| ≤ 1/32 ------------------------------
// Adding FFN_EXP2_MAGIC = 1.5·2^19 (ulp 1/16) rounds z to n16 and leaves 16·n16 mod 16 in the low
// mantissa bits: vpermps reads exactly those 4 bits as the table index j, and vscalefps(·, n16)
// scales by 2^floor(n16). So 2^z = scalef(T_j·2^r, n16), T_j = 2^(j/16) (a hi + lo pair). The
// constants and the table are in cpu/exp2_tab.h (the CUDA kernels use them too).
#include "cpu/exp2_tab.h"

// _mm512_setr_ps may be a macro: an extra level expands the table's list into 16 arguments.
#define FFN__SETR16(...) _mm512_setr_ps(__VA_ARGS__)
FFN_VINLINE __m512 ffn__exp2_thi(void) {  // 2^(j/16) rounded to f32
    return FFN__SETR16(FFN_EXP2_TAB_HI);
}
FFN_VINLINE __m512 ffn__exp2_tlo(void) {  // 2^(j/16) - thi_j
    return FFN__SETR16(FFN_EXP2_TAB_LO);
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

// Lanes whose sign bit is set (x < 0, -0, negative NaN).
FFN_VINLINE __mmask16 ffn__signmask(__m512 x) {
    return _mm512_movepi32_mask(_mm512_castps_si512(x));
}

FFN_VINLINE __m512 ffn__neg_abs(__m512 x) {  // -|x| (NaN stays NaN)
    return _mm512_or_ps(x, ffn__negzero());
}

// --- the value of an activation, general form -------------------------------------------------
// act(x) = (hi + lo)·2^floor(k). The split lets a σ-based activation leave its power of two (and
// a small correction term) for the very end, so that a combine multiplies before the single
// rounding into a subnormal result, and a dtype conversion sees one value. The general paths
// (rare lanes, accurate tier, derivatives) compute these; the fast paths finish directly.
struct ffn__av {
    __m512 hi, lo, k;
};
struct ffn__avd {
    struct ffn__av a;   // act(x)
    struct ffn__av da;  // act'(x)
};

// Flags of what the value carries (compile-time constants at each call).
enum { FFN_AV_LO = 1, FFN_AV_K = 2 };

FFN_VINLINE __m512 ffn__av_eval(struct ffn__av v, int flags) {
    __m512 y = (flags & FFN_AV_LO) ? _mm512_add_ps(v.hi, v.lo) : v.hi;
    return (flags & FFN_AV_K) ? _mm512_scalef_ps(y, v.k) : y;
}

// (hi + lo)·2^k · m with one final rounding of hi·m + lo·m (fma) before the scaling (an exact
// tiny sum keeps its sign when it underflows). lo·m is taken as -0 where m is ±0, ±inf or NaN:
// hi·m is the answer there (lo·m could be 0·inf, or a zero of the other sign).
FFN_VINLINE __m512 ffn__av_mul(struct ffn__av v, __m512 m, int flags) {
    __m512 y;
    if (flags & FFN_AV_LO) {
        const __mmask16 ok = (__mmask16)~_mm512_fpclass_ps_mask(m, 0x9f);  // not NaN/±0/±inf
        y = _mm512_fmadd_ps(v.hi, m, _mm512_mask_mul_ps(ffn__negzero(), ok, v.lo, m));
    } else {
        y = _mm512_mul_ps(v.hi, m);
    }
    return (flags & FFN_AV_K) ? _mm512_scalef_ps(y, v.k) : y;
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
FFN_VINLINE __m512 ffn__av_fwd(struct ffn__av v, __m512 x, __m512 a, enum ffn__mode mode, int fl,
                               struct ffn__lim lim) {
    __m512 y = mode == FFN_MODE_ACT ? ffn__av_eval(v, fl) : ffn__av_mul(v, a, fl);
    const __mmask16 ninf = _mm512_fpclass_ps_mask(x, 0x10);
    if (ninf) {
        const __m512 l = ffn__c(lim.act_ninf);
        y = _mm512_mask_mov_ps(y, ninf, mode == FFN_MODE_ACT ? l : _mm512_mul_ps(l, a));
    }
    if (mode == FFN_MODE_ACT) return ffn__nan_fix(y, x, x, x, 1);
    return ffn__nan_fix(y, x, a, a, 2);
}

// The backward modes from the general form: y0 = act'·a (DACT_MUL) or act'·(a·b) (BOTH),
// y1 = act·b, with the NaN rule. At x = ±inf the limits times the multiplicands, as the
// reference computes them: (lim'·b)·a for y0 (a signed zero, or NaN for an infinite multiplicand,
// where the clamped formula would give a zero of the derivative's sign, or ±inf), lim·b for y1.
FFN_VINLINE struct ffn__vo ffn__avd_bwd(struct ffn__avd r, __m512 x, __m512 a, __m512 b,
                                        enum ffn__mode mode, int fl, int dfl, struct ffn__lim lim) {
    struct ffn__vo o;
    const bool both = mode == FFN_MODE_BOTH;
    o.y0 = ffn__av_mul(r.da, both ? _mm512_mul_ps(a, b) : a, dfl);
    o.y1 = both ? ffn__av_mul(r.a, b, fl) : o.y0;
    const __mmask16 inf = _mm512_fpclass_ps_mask(x, 0x18);
    if (inf) {
        const __mmask16 pinf = inf & (__mmask16)~ffn__signmask(x);
        const __m512 dl = _mm512_maskz_mov_ps(pinf, ffn__c(lim.dact_pinf));
        const __m512 z = _mm512_mul_ps(dl, both ? b : a);
        o.y0 = _mm512_mask_mov_ps(o.y0, inf, both ? _mm512_mul_ps(z, a) : z);
        if (both) o.y1 = _mm512_mask_mul_ps(o.y1, inf & ~pinf, ffn__c(lim.act_ninf), b);
    }
    return ffn__nan_fix_mode(o, x, a, b, mode);
}

// --- the σ quotient, general form
// ----------------------------------------------------------------- For σ-based activations y =
// x·σ(t) with e = exp(-|t|) = E·2^n (n = the n16 above):
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

// --- the σ family: y = x·σ(slope·x) and σ itself, general form ---------------------------------
// Below x = -300 (|slope| ≥ 1) e^{-|t|} < 2^-432: every σ-family value, even times the largest
// multipliers of a combine or a backward (2^128·2^128), underflows to ±0. The argument and the
// multiplier are clamped there, which changes no result and keeps -inf from meeting a zero.
#define FFN_SIG_CLAMP 300.0f

// --- subnormal inputs of the x·σ activations
// ------------------------------------------------------ For |x| < 2^-126, act(x) = x·act'(0) is
// subnormal and would lose bits before a combine multiplies it by up. Such lanes are evaluated at
// x·2^64 (still so small that act is linear there to f32 precision) and get k -= 64: the 2^-64 is
// then applied after the multiply, with the single final rounding. The branch only decides whether
// to compute; lanes are selected by their own class.
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

// x·σ(slope·x) (xmul = true) or σ(slope·x) (xmul = false), forward, within ~1 ulp, any x.
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

// act = x·σ(slope·x) and act' = σ·(1 + slope·x·(1-σ)) (SiLU, quick-GeLU), general form.
// x is clamped to ±300 inside the derivative's bracket: beyond, 1-σ (x > 0) or σ (x < 0) is 0
// in f32, so the clamp changes nothing and keeps inf·0 out.
FFN_VINLINE struct ffn__avd ffn__sigfam_d(__m512 x, float c_hi, float c_lo, float slope) {
    const __mmask16 tiny = ffn__tiny_pre(&x);  // act' is flat there: only act needs the scale
    const __m512 a = _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), ffn__neg_abs(x));
    __m512 n;
    const __m512 E = ffn__exp_neg(a, c_hi, c_lo, false, &n);
    const struct ffn__sigd s = ffn__sig_pieces(E, n, ffn__signmask(x));
    const __m512 xc =
        _mm512_min_ps(ffn__c(FFN_SIG_CLAMP), _mm512_max_ps(ffn__c(-FFN_SIG_CLAMP), x));
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

// --- the σ family, fast lanes
// --------------------------------------------------------------------- e = exp(-c·x·ln 2) =
// 2^(-x·c) for c = c_hi + c_lo (slope·log2 e as a float pair) and |x·c| ≤ 120, so that e is a
// normal float: n16 = round16(-x·c_hi), r = (-x·c_hi - n16) - x·c_lo, both exact up to one
// rounding of a value ≤ 1/32; e = E·2^n16 by vscalefps. (An integer add of t << 19 to E's
// exponent field is exact too, but three instructions against one: measured 3-5% slower.)
FFN_VINLINE __m512 ffn__exp_lin(__m512 x, float c_hi, float c_lo, bool precise) {
    const __m512 t = _mm512_fnmadd_ps(x, ffn__c(c_hi), ffn__c(FFN_EXP2_MAGIC));
    const __m512 n = _mm512_sub_ps(t, ffn__c(FFN_EXP2_MAGIC));
    __m512 r = _mm512_fnmsub_ps(x, ffn__c(c_hi), n);
    r = _mm512_fnmadd_ps(x, ffn__c(c_lo), r);
    return _mm512_scalef_ps(ffn__exp2_frac(t, r, precise), n);
}

// N/(1 + e), compensated, for e a normal float and N normal or ±0: D = 1 + e = Dh + Dl exactly
// (Fast2Sum of max(1, e) and min(1, e)), r = rcp14(Dh) (relative error < 2^-14), q0 = N·r,
// c = (q0·Dh - N) + q0·Dl (the residual of q0: |c| ≲ 2^-14·|N|, computed to ~2^-38·|N|), and
// N/D = q0 - c/D with c/D ≈ c·r: the quotient's own error 2^-14 is corrected to 2^-28, so no
// division is needed. The value is hi - c·r, hi = q0; at N = ±0, c = +0, so it keeps the zero's
// sign. Within 0.5 ulp (the final rounding) + 2^-28 + e's relative error
// times e/(1 + e).
struct ffn__quot {
    __m512 hi, c, r;  // the value is hi - c·r
};
// lt24: the caller guarantees e < 2^24 (k·x > -16.6). Then 1 - Dh is exact for every float Dh
// in [1, 2^24) (Sterbenz below 2, and a multiple of ulp(Dh) ≤ 1 with fewer than 24 bits above),
// so Dl = (1 - Dh) + e is the exact rounding error of 1 + e without the max/min that order the
// operands of the Fast2Sum.
FFN_VINLINE struct ffn__quot ffn__quot_comp(__m512 N, __m512 e, bool lt24) {
    const __m512 one = ffn__c(1.0f);
    const __m512 a = lt24 ? one : _mm512_max_ps(one, e), b = lt24 ? e : _mm512_min_ps(one, e);
    const __m512 Dh = _mm512_add_ps(a, b);
    const __m512 Dl = _mm512_add_ps(_mm512_sub_ps(a, Dh), b);
    const __m512 r = _mm512_rcp14_ps(Dh);
    const __m512 q0 = _mm512_mul_ps(N, r);
    const __m512 c = _mm512_fmadd_ps(q0, Dl, _mm512_fmsub_ps(q0, Dh, N));
    const struct ffn__quot q = {q0, c, r};
    return q;
}
// hi - c·r with one rounding (ACT), or (hi - c·r)·a with one rounding, hi·a - l, l = c·r·a
// (ACT_MUL). l is made +0 where it is ±0, ±inf or NaN (vfixupimmps on its own class): then hi·a
// is the result as it stands, so a zero product keeps its sign, a = ±inf gives ±inf (not
// inf - inf), an overflowed l cannot flip the sign, and a NaN a gives a quieted (hi = 0 is left
// to the general path: the sign of its zero product is not kept here). With x finite, the result
// follows the NaN rule.
#define FFN_FIXUP_SPECIAL_POSZERO 0x00880888  // QNaN, SNaN, ±0, ±inf -> +0
FFN_VINLINE __m512 ffn__quot_fin(struct ffn__quot q, __m512 a, enum ffn__mode mode) {
    if (mode == FFN_MODE_ACT) return _mm512_fnmadd_ps(q.c, q.r, q.hi);
    const __m512 l = _mm512_mul_ps(_mm512_mul_ps(q.c, q.r), a);
    const __m512 lf = _mm512_fixupimm_ps(l, l, _mm512_set1_epi32(FFN_FIXUP_SPECIAL_POSZERO), 0);
    return _mm512_fmsub_ps(q.hi, a, lf);
}

// Rare lanes of a symmetric fast range: !(|x| < lim) (NaN included), and for the modes that
// multiply act(x) also |x| ≤ ~2^-19 (where act(x) may be subnormal, or ±0 whose product sign the
// fast finish does not keep): | |x| - lim/2 | ≥ lim/2 catches both ends in one compare, since
// |x| - lim/2 rounds to -lim/2 for |x| below half an ulp of lim/2.
FFN_VINLINE __mmask16 ffn__rare_sym(__m512 x, float lim, bool small_too) {
    const __m512 ax = _mm512_abs_ps(x);
    if (!small_too) return _mm512_cmp_ps_mask(ax, ffn__c(lim), _CMP_NLT_UQ);
    const __m512 d = _mm512_abs_ps(_mm512_sub_ps(ax, ffn__c(0.5f * lim)));
    return _mm512_cmp_ps_mask(d, ffn__c(0.5f * lim), _CMP_NLT_UQ);
}

// --- the left tail of the σ family ------------------------------------------------------------
// Where k·x ≤ -16, e = exp(-kx) ≥ 2^23: 1 + e rounds at the scale of e's own error, and the two
// together with a division's rounding can pass 2 ulp (2.38 at x = -16.68 for SiLU, exhaustive).
// There σ(kx) = e'/(1 + e') with e' = exp(kx) ≤ 2^-23, so σ(kx) = e' - e'^2 to a relative 2^-46:
// x·σ(kx) = x·e' - (x·e')·e' with one rounding (fmsub), and σ itself = e' - e'·e' (fnmadd).
// e' = 2^(x·c) is the fast table exp with the constants negated (a normal float for kx > -83).
#define FFN_SIG_TAIL 16.0f
FFN_VINLINE __m512 ffn__sig_tail(__m512 x, float c_hi, float c_lo, bool xmul) {
    const __m512 e1 = ffn__exp_lin(x, -c_hi, -c_lo, true);
    if (!xmul) return _mm512_fnmadd_ps(e1, e1, e1);
    return _mm512_fmsub_ps(x, e1, _mm512_mul_ps(_mm512_mul_ps(x, e1), e1));
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
FFN_VINLINE struct ffn__pre ffn__xsig_pre(__m512 x, enum ffn__mode mode, float l2e_hi, float l2e_lo,
                                          float fast_lim) {
    struct ffn__pre s = {x, x, x};
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        s.u = ffn__exp_lin(x, l2e_hi, l2e_lo, true);
    } else {
        s.v = _mm512_max_ps(ffn__c(-fast_lim), _mm512_min_ps(ffn__c(fast_lim), x));
        s.u = ffn__exp_lin(s.v, l2e_hi, l2e_lo, false);
    }
    return s;
}
FFN_VINLINE struct ffn__vo ffn__xsig_fin(__m512 x, struct ffn__pre s, __m512 a, __m512 b,
                                         enum ffn__mode mode, float l2e_hi, float l2e_lo,
                                         float fast_lim, float k) {
    enum { FL = FFN_AV_LO | FFN_AV_K, DFL = FFN_AV_K };
    const struct ffn__lim lims = {-0.0f, 1.0f};
    const __m512 one = ffn__c(1.0f);
    const __m512 e = s.u;
    struct ffn__vo o;
    if (mode == FFN_MODE_ACT || mode == FFN_MODE_ACT_MUL) {
        const bool act = mode == FFN_MODE_ACT;
        if (act)
            o.y0 = _mm512_div_ps(x, _mm512_add_ps(one, e));
        else
            o.y0 = ffn__quot_fin(ffn__quot_comp(x, e, false), a, mode);
        const __mmask16 rare = ffn__rare_sym(x, fast_lim, !act);
        const __mmask16 tail =
            act ? _mm512_cmp_ps_mask(x, ffn__c(-FFN_SIG_TAIL / k), _CMP_LE_OQ) & (__mmask16)~rare
                : 0;
        if (rare | tail) {
            if (tail) o.y0 = _mm512_mask_mov_ps(o.y0, tail, ffn__sig_tail(x, l2e_hi, l2e_lo, true));
            if (rare) {
                const struct ffn__av v = ffn__sigfam(x, l2e_hi, l2e_lo, true);
                o.y0 = _mm512_mask_mov_ps(o.y0, rare, ffn__av_fwd(v, x, a, mode, FL, lims));
            }
        }
        o.y1 = o.y0;
        return o;
    }
    const bool both = mode == FFN_MODE_BOTH;
    const __m512 xc = s.v;
    const __m512 inv = _mm512_div_ps(one, _mm512_add_ps(one, e));
    const __m512 kx = k == 1.0f ? xc : _mm512_mul_ps(ffn__c(k), xc);
    const __m512 d = _mm512_mul_ps(inv, _mm512_fmadd_ps(kx, _mm512_mul_ps(e, inv), one));
    o.y0 = _mm512_mul_ps(d, both ? _mm512_mul_ps(a, b) : a);
    o.y1 = both ? _mm512_mul_ps(_mm512_mul_ps(x, inv), b) : o.y0;
    __mmask16 rare = ffn__rare_sym(x, fast_lim, false);
    if (both) rare |= _mm512_fpclass_ps_mask(x, 0x20);  // subnormal: x·inv would lose bits
    if (rare) {
        const struct ffn__vo g =
            ffn__avd_bwd(ffn__sigfam_d(x, l2e_hi, l2e_lo, k), x, a, b, mode, DFL, DFL, lims);
        o.y0 = _mm512_mask_mov_ps(o.y0, rare, g.y0);
        if (both) o.y1 = _mm512_mask_mov_ps(o.y1, rare, g.y1);
    }
    if (!both) o.y1 = o.y0;
    // Fast DACT_MUL lanes have x finite: a NaN result can only come from dy, and is its quieted
    // copy. The BOTH products meet two multiplicands, which may both be NaN.
    return both ? ffn__nan_fix_mode(o, x, a, b, mode) : o;
}

#endif  // FFN_VMATH_AVX512_H
