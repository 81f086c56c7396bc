// loops.h — the loop drivers of the activation kernels, written once over the SIMD vocabulary:
// they run an activation's per-vector functions (vmath.h) over n elements for one op kind of
// kernels.inc, with a masked streaming head, interleaved sub-ranges, the pre stage one vector
// ahead, bf16 pairs, the store kind that pays, and a masked tail, so each element is computed
// the same way wherever it lies. Inputs are loaded before outputs are stored: an output may alias
// an input exactly.
#ifndef FFN_LOOPS_H
#define FFN_LOOPS_H

#include "cpu/simd/vmath.h"

struct ffn__ptrs {
    void *o0, *o1;
    const void *i0, *i1, *i2;
};

// --- streaming: a masked head up to the output's vector alignment -------------------------------

// Bytes one vector of `dt` outputs occupies: the alignment a non-temporal store needs.
FFN_VINLINE uintptr_t ffn__vbytes(enum ffn_dtype dt) {
    return (uintptr_t)FFN_VL * (dt == FFN_DTYPE_F32 ? 4 : 2);
}

// Elements before p reaches vector alignment, or -1 when it never does (p not even aligned to the
// element size). Streaming is only used when this is ≥ 0.
FFN_VINLINE int64_t ffn__head(const void *p, enum ffn_dtype dt) {
    const uintptr_t a = (uintptr_t)p, es = dt == FFN_DTYPE_F32 ? 4 : 2, vb = ffn__vbytes(dt);
    if (a % es) return -1;
    return (int64_t)(((vb - a % vb) % vb) / es);
}

// --- one vector -----------------------------------------------------------------------------

// The mode an op kind evaluates its activation in; par_act: a gated forward in parity mode, which
// rounds act(gate) to the output type before the product (act alone).
FFN_VINLINE enum ffn__mode ffn__kop_mode(enum ffn_kop kop, bool par_act) {
    switch (kop) {
    case FFN_KOP_ACT_FWD: return FFN_MODE_ACT;
    case FFN_KOP_ACT_BWD: return FFN_MODE_DACT_MUL;
    case FFN_KOP_GLU_FWD: return par_act ? FFN_MODE_ACT : FFN_MODE_ACT_MUL;
    default: return FFN_MODE_BOTH;
    }
}

// The outputs of an op kind for one vector (x loaded, s = pre(x), a and b its other inputs).
FFN_VINLINE struct ffn__vo ffn__outs(enum ffn_kop kop, enum ffn_dtype out, ffn__vfin fin,
                                     bool par_act, bool acc, ffn__vf x, struct ffn__pre s,
                                     ffn__vf a, ffn__vf b) {
    const enum ffn__mode mode = ffn__kop_mode(kop, par_act);
    switch (kop) {
    case FFN_KOP_ACT_FWD: return fin(x, s, x, x, mode, acc);
    case FFN_KOP_ACT_BWD: return fin(x, s, a, a, mode, acc);  // dx = dy·act'(x), a = dy
    case FFN_KOP_GLU_FWD: {                                   // h = act(gate)·up, a = up
        struct ffn__vo r = fin(x, s, a, a, mode, acc);
        if (par_act)  // act(gate) alone, rounded as two eager framework ops would
            r.y0 = ffn__nan_fix(ffn__mul(ffn__vround_to(r.y0, out), ffn__vround_to(a, out)), x, a,
                                a, 2);
        return r;
    }
    default: return fin(x, s, a, b, mode, acc);  // dgate = dh·up·act'(gate), dup = dh·act(gate)
    }
}

// The fin stage of the vector at i (x loaded, s = pre(x)): the other inputs, the activation's
// fin, the stores.
FFN_VINLINE void ffn__step_fin(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                               enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out,
                               ffn__vfin fin, bool par_act, bool acc, ffn__vf x, struct ffn__pre s,
                               bool full, ffn__vm m, enum ffn__st st0, enum ffn__st st1) {
    const ffn__vf a = kop == FFN_KOP_ACT_FWD ? x : ffn__vload(p->i1, i, in, full, m);
    const ffn__vf b = kop == FFN_KOP_GLU_BWD ? ffn__vload(p->i2, i, in, full, m) : a;
    const struct ffn__vo r = ffn__outs(kop, out, fin, par_act, acc, x, s, a, b);
    ffn__vstore(p->o0, i, out, r.y0, st0, m, cfg->bf16_cvt);
    if (kop == FFN_KOP_GLU_BWD) ffn__vstore(p->o1, i, out, r.y1, st1, m, cfg->bf16_cvt);
}

// The whole step of the vector at i: all FFN_VL lanes (full) or the lanes of m.
FFN_VINLINE void ffn__step(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                           enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out, ffn__vpre pre,
                           ffn__vfin fin, bool par_act, bool acc, bool full, ffn__vm m,
                           enum ffn__st st0, enum ffn__st st1) {
    const ffn__vf x = ffn__vload(p->i0, i, in, full, m);
    const struct ffn__pre s = pre(x, ffn__kop_mode(kop, par_act), acc);
    ffn__step_fin(cfg, p, i, kop, in, out, fin, par_act, acc, x, s, full, m, st0, st1);
}

// --- units: a vector, or a bf16 pair of two -------------------------------------------------
// Where every input and output is bf16 the loops take 2·FFN_VL elements at once (a "pair"): one
// load gives the odd and the even elements as two f32 vectors (ffn__eo_load), each computed as
// any vector is, every lane alone, and one store puts both back in order. Against FFN_VL
// elements at a time (vpmovzxwd + vpslld in, vcvtneps2bf16 out) the conversions take fewer and
// shorter operations: on AVX-512, SiLU forward bf16 in cache 9.5 -> 7.3 cycles per 16 elements
// (docs/performance.md, "bf16").
struct ffn__unit {
    ffn__vf x[2];
    struct ffn__pre s[2];
};
FFN_VINLINE int64_t ffn__unit_len(bool eo) { return eo ? 2 * FFN_VL : FFN_VL; }
FFN_VINLINE struct ffn__unit ffn__unit_pre(const struct ffn__ptrs *p, int64_t i, enum ffn_dtype in,
                                           bool eo, ffn__vpre pre, enum ffn__mode mode, bool acc) {
    struct ffn__unit u;
    if (eo) {
        ffn__eo_load(p->i0, i, &u.x[0], &u.x[1]);
        u.s[1] = pre(u.x[1], mode, acc);
    } else {
        u.x[0] = u.x[1] = ffn__vload(p->i0, i, in, true, ffn__m_zero());
    }
    u.s[0] = pre(u.x[0], mode, acc);
    if (!eo) u.s[1] = u.s[0];
    return u;
}
// The fin stage of the unit at i, stored as st0/st1 (with eo, FFN_ST_STREAM needs the alignment
// of a pair).
FFN_VINLINE void ffn__unit_fin(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t i,
                               enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out, bool eo,
                               ffn__vfin fin, bool par_act, bool acc, struct ffn__unit u,
                               enum ffn__st st0, enum ffn__st st1) {
    if (!eo) {
        ffn__step_fin(cfg, p, i, kop, in, out, fin, par_act, acc, u.x[0], u.s[0], true,
                      ffn__m_zero(), st0, st1);
        return;
    }
    ffn__vf ao = u.x[0], ae = u.x[1], bo, be;
    if (kop != FFN_KOP_ACT_FWD) ffn__eo_load(p->i1, i, &ao, &ae);
    if (kop == FFN_KOP_GLU_BWD)
        ffn__eo_load(p->i2, i, &bo, &be);
    else
        bo = ao, be = ae;
    const struct ffn__vo ro = ffn__outs(kop, out, fin, par_act, acc, u.x[0], u.s[0], ao, bo);
    const struct ffn__vo re = ffn__outs(kop, out, fin, par_act, acc, u.x[1], u.s[1], ae, be);
    ffn__eo_store(p->o0, i, ro.y0, re.y0, st0, cfg->bf16_cvt);
    if (kop == FFN_KOP_GLU_BWD) ffn__eo_store(p->o1, i, ro.y1, re.y1, st1, cfg->bf16_cvt);
}

// Whole units base + (w·per + k)·len for k < per, w < ways (≤ 4): `ways` interleaved
// sub-ranges of `per` units, walked k-major. With `ahead` (a pre stage, run ahead) the loop is
// software-pipelined: the load and pre stage of unit k + 1 of a sub-range come before the fin
// stage of unit k. A fast path is one long dependency chain per vector (~25 operations, ~60
// cycles); in plain order the out-of-order core holds too few vectors' chains at once to keep
// its FP pipes busy, and a step ahead the fin stage's operations find their inputs ready.
// Same-process A/B on AVX-512 (Zen 4), one thread, 32M f32 (bench/ab.sh): σ forward +15%,
// SwiGLU and quick-GeGLU forward +18%, GLU forward +13%, σ backward +7%, most others +2-5%; in
// cache SwiGLU forward 14.6 -> 13.2 cycles per vector. The w loops are unrolled so that the
// units stay in registers (rolled, they went through the stack and lost the gain).
#define FFN_PIPE_WAYS 4
FFN_VINLINE void ffn__pipe(const struct ffn_kcfg *cfg, const struct ffn__ptrs *p, int64_t base,
                           int64_t per, int ways, enum ffn_kop kop, enum ffn_dtype in,
                           enum ffn_dtype out, bool eo, ffn__vpre pre, ffn__vfin fin, bool ahead,
                           bool par_act, bool acc, enum ffn__st st0, enum ffn__st st1) {
    if (per <= 0) return;
    const enum ffn__mode mode = ffn__kop_mode(kop, par_act);
    const int64_t len = ffn__unit_len(eo);
    if (!ahead || acc) {  // each unit in one piece (the accurate tier: rare)
        for (int64_t k = 0; k < per; k++)
            for (int w = 0; w < ways; w++) {
                const int64_t i = base + ((int64_t)w * per + k) * len;
                ffn__unit_fin(cfg, p, i, kop, in, out, eo, fin, par_act, acc,
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
            ffn__unit_fin(cfg, p, i, kop, in, out, eo, fin, par_act, acc, u[w], st0, st1);
            u[w] = un;
        }
    }
}

// The whole vectors from i on, stored as st0/st1: ffn_stream_ways() interleaved sub-ranges of
// units, then the vectors left. Returns where the whole vectors end. `big`: a call too big for
// the caches (cfg->stream, as a compile-time constant); in a smaller one a vocabulary may walk
// fewer sub-ranges (FFN_V_CACHE_WAYS per op kind; FFN_V_CACHE_WAYS_PLAIN for the activations
// without a pre stage, ReLU and identity) or run the pre stage ahead for some op kinds
// only (FFN_V_CACHE_AHEAD); in a big one, where a file of an activation sets them, other
// sub-ranges per op kind (FFN_V_STREAM_WAYS) or the pre stage in place for some op kinds
// (FFN_V_STREAM_AHEAD; bf16 pairs keep it ahead). `big` is also set in the loops of the accurate
// tier and of parity mode. bf16 to bf16 walks pairs; streamed, a vector first brings the output
// to the alignment of a pair's non-temporal store, and a second output not aligned alike is
// stored plainly.
FFN_VINLINE int64_t ffn__body(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                              int64_t i, enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out,
                              ffn__vpre pre, ffn__vfin fin, bool ahead, bool big, bool par_act,
                              bool acc, enum ffn__st st0, enum ffn__st st1) {
    const bool eo = in == FFN_DTYPE_BF16 && out == FFN_DTYPE_BF16;
    const uintptr_t pair_bytes = 4 * FFN_VL;
    if (eo && st0 == FFN_ST_STREAM && ((uintptr_t)p->o0 + 2 * (uintptr_t)i) % pair_bytes &&
        i + FFN_VL <= n) {
        ffn__step(cfg, p, i, kop, in, out, pre, fin, par_act, acc, true, ffn__m_zero(), st0, st1);
        i += FFN_VL;
    }
    int ways = ffn_stream_ways(kop == FFN_KOP_ACT_FWD ? 2 : kop == FFN_KOP_GLU_BWD ? 5 : 3);
    const int cache_ways =
        (pre == ffn__pre_none ? FFN_V_CACHE_WAYS_PLAIN : FFN_V_CACHE_WAYS) >> 4 * kop & 0xf;
    if (!big && cache_ways && ways > cache_ways) ways = cache_ways;
    ahead = ahead && (big || (FFN_V_CACHE_AHEAD >> kop & 1));
// (Preprocessor tests: where a file leaves the two alone it compiles as if they were not here.)
#if FFN_V_STREAM_WAYS
    if (big && (FFN_V_STREAM_WAYS >> 4 * kop & 0xf)) ways = FFN_V_STREAM_WAYS >> 4 * kop & 0xf;
#endif
#if FFN_V_STREAM_AHEAD != 0xf
    ahead = ahead && (!big || eo || (FFN_V_STREAM_AHEAD >> kop & 1));
#endif
    const int64_t len = ffn__unit_len(eo);
    const int64_t per = (n - i) / len / ways;  // units per sub-range
    if (eo && kop == FFN_KOP_GLU_BWD && st1 == FFN_ST_STREAM &&
        ((uintptr_t)p->o1 + 2 * (uintptr_t)i) % pair_bytes)
        ffn__pipe(cfg, p, i, per, ways, kop, in, out, eo, pre, fin, ahead, par_act, acc, st0,
                  FFN_ST_FULL);
    else
        ffn__pipe(cfg, p, i, per, ways, kop, in, out, eo, pre, fin, ahead, par_act, acc, st0, st1);
    i += (int64_t)ways * per * len;
    for (; i + FFN_VL <= n; i += FFN_VL)
        ffn__step(cfg, p, i, kop, in, out, pre, fin, par_act, acc, true, ffn__m_zero(), st0, st1);
    return i;
}

// --- a whole call ---------------------------------------------------------------------------
// Runs the activation over n elements for one (kop, in, out) combination. The body walks
// ffn_stream_ways() interleaved sub-ranges (memory streams for the prefetchers; in cache, a
// pipeline several vectors deep: AVX-512 σ forward 9.2 -> 7.8 cycles per vector against one
// sub-range). With cfg->stream (a call too big for the caches) the outputs are written
// non-temporally once the first is vector-aligned (a masked head gets it there; a second output
// not aligned alike is stored normally), then fenced -- except where ordinary stores are faster
// (ffn__nt_pays).
//
// Non-temporal stores save the read of each output line before it is written, but a loop that
// stores faster than memory takes them waits on the write-combining buffers. They pay where memory
// is the limit: f32 outputs, the cheap activations (no pre stage run ahead: ReLU and identity;
// the one activation run without it, GeGLU-erf's backward, is a gated backward anyway), the unary
// forward (where that read would add half the traffic of a 16-bit op) and the gated backward
// (two outputs). A 16-bit output of a transcendental backward or gated forward is compute-bound
// (docs/performance.md, "bf16"); there ordinary stores add a third to its traffic and let the
// arithmetic run on. Same-process A/B on AVX-512, 32M, N(0,1), one thread, against non-temporal
// stores: bf16 backward 1.12-1.17x, gated forward 1.11-1.15x, f16 1.03-1.15x; two processes at
// once 0.99-1.02x; with ordinary stores the unary forward went 0.92-0.97x at two, the gated
// backward 1.00x at one, f32 outputs 0.88-1.12x over two runs (docs/performance.md, "Stores").
FFN_VINLINE bool ffn__nt_pays(enum ffn_kop kop, enum ffn_dtype out, bool ahead) {
    return out == FFN_DTYPE_F32 || !ahead || !(kop == FFN_KOP_ACT_BWD || kop == FFN_KOP_GLU_FWD);
}
FFN_VINLINE void ffn__drive_par(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                                enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out,
                                ffn__vpre pre, ffn__vfin fin, bool ahead, bool big, bool par_act,
                                bool acc) {
    int64_t i = 0;
    const bool nt = cfg->stream && ((FFN_V_STREAM_NT >> kop & 1) || ffn__nt_pays(kop, out, ahead));
    int64_t head = nt ? ffn__head(p->o0, out) : -1;
    const bool two = kop == FFN_KOP_GLU_BWD;
    bool nt1 = false;
    if (head >= 0 && two) nt1 = ((uintptr_t)p->o1 - (uintptr_t)p->o0) % ffn__vbytes(out) == 0;
    if (head > 0) {
        if (head > n) head = n;
        ffn__step(cfg, p, 0, kop, in, out, pre, fin, par_act, acc, false, ffn__m_tail(head),
                  FFN_ST_MASK, FFN_ST_MASK);
        i = head;
    }
    if (head >= 0)
        i = ffn__body(cfg, n, p, i, kop, in, out, pre, fin, ahead, big, par_act, acc, FFN_ST_STREAM,
                      nt1 ? FFN_ST_STREAM : FFN_ST_FULL);
    else
        i = ffn__body(cfg, n, p, i, kop, in, out, pre, fin, ahead, big, par_act, acc, FFN_ST_FULL,
                      FFN_ST_FULL);
    if (i < n)
        ffn__step(cfg, p, i, kop, in, out, pre, fin, par_act, acc, false, ffn__m_tail(n - i),
                  FFN_ST_MASK, FFN_ST_MASK);
    if (head >= 0) ffn__sfence();
}

// Whether a vocabulary walks calls in cache differently (fewer sub-ranges, no pre stage ahead).
#define FFN_V_CACHE_DIFFERS \
    (FFN_V_CACHE_WAYS != 0 || FFN_V_CACHE_WAYS_PLAIN != 0 || FFN_V_CACHE_AHEAD != 0xf)

// A kernel's loops: all in one function (FFN_PART_ALL), or split in two where the file of an
// activation asks for it (FFN_V_APART: op kinds, bits 1 << enum ffn_kop; only a vocabulary that
// walks calls in cache otherwise has two kinds of loop to split): the loop of the calls in cache
// in the kernel (FFN_PART_CACHE), the big loops -- streaming, accurate tier, parity mode, those
// the FFN_V_STREAM_ knobs change -- in a function of their own (FFN_PART_BIG, a function of
// FFN_BIG_PROTO calling ffn__big). GCC allocates the registers of a whole function at once: with
// the big loops in the kernel, a streaming knob changes how the loop in cache compiles too (the
// same operations, other registers, spill slots and order: AVX2 GeGLU-tanh forward f32 in cache
// 0.88-0.95 of the separate AVX2 kernels instead of 1.00; apart, 1.03; docs/performance.md).
enum ffn__part { FFN_PART_ALL, FFN_PART_CACHE, FFN_PART_BIG };
typedef void (*ffn__vbig)(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p);

// The accurate tier of a forward and the gated forward in parity mode (bf16 or f16 out) are
// loops of their own: every flag of the vector code is a compile-time constant. (cfg->accurate
// read inside the loop cost GeLU-erf forward 8-10% on AVX-512: GCC cannot hoist it past the
// stores, which may alias it.)
FFN_VINLINE void ffn__drive(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                            enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out, ffn__vpre pre,
                            ffn__vfin fin, bool tiers, bool ahead) {
    const bool fwd = tiers && (kop == FFN_KOP_ACT_FWD || kop == FFN_KOP_GLU_FWD);
    const bool par = kop == FFN_KOP_GLU_FWD && out != FFN_DTYPE_F32 && cfg->parity;
    if (fwd && cfg->accurate) {
        if (par)
            ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, true, true);
        else
            ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, false, true);
    } else if (par) {
        ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, true, false);
    } else if (cfg->stream || !FFN_V_CACHE_DIFFERS) {
        ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, false, false);
    } else {  // a loop of its own for calls in cache, where the vocabulary walks them otherwise
        ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, false, false, false);
    }
}

// The loops of one part of a split kernel (FFN_V_APART): FFN_PART_CACHE, the loop in cache or a
// call of `big`; FFN_PART_BIG, the big loops of ffn__drive.
FFN_VINLINE void ffn__drive_part(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                                 enum ffn_kop kop, enum ffn_dtype in, enum ffn_dtype out,
                                 ffn__vpre pre, ffn__vfin fin, bool tiers, bool ahead,
                                 enum ffn__part part, ffn__vbig big) {
    const bool acc = tiers && (kop == FFN_KOP_ACT_FWD || kop == FFN_KOP_GLU_FWD) && cfg->accurate;
    const bool par = kop == FFN_KOP_GLU_FWD && out != FFN_DTYPE_F32 && cfg->parity;
    if (part == FFN_PART_CACHE) {
        if (acc || par || cfg->stream)
            big(cfg, n, p);
        else
            ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, false, false, false);
    } else if (acc) {
        if (par)
            ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, true, true);
        else
            ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, false, true);
    } else if (par) {
        ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, true, false);
    } else {
        ffn__drive_par(cfg, n, p, kop, in, out, pre, fin, ahead, true, false, false);
    }
}

// Picks the specialised loop for the (in, out) dtype pair. `piped`: whether the activation runs
// its pre stage a vector ahead (FFN_PIPED or FFN_PLAIN; an activation without a pre stage has
// nothing to run ahead); `part`, `big`: enum ffn__part.
FFN_VINLINE void ffn__dispatch(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                               enum ffn_kop kop, ffn__vpre pre, ffn__vfin fin, bool tiers,
                               bool piped, enum ffn__part part, ffn__vbig big) {
    const bool ahead = piped && pre != ffn__pre_none;
// (Preprocessor test: where no file sets FFN_V_APART it compiles as if `part` were not here.)
#if FFN_V_APART
    if (part != FFN_PART_ALL) {
#    define FFN__RUN(in, out) \
        ffn__drive_part(cfg, n, p, kop, in, out, pre, fin, tiers, ahead, part, big)
        FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#    undef FFN__RUN
        return;
    }
#else
    (void)part, (void)big;
#endif
#define FFN__RUN(in, out) ffn__drive(cfg, n, p, kop, in, out, pre, fin, tiers, ahead)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

// --- the four kernel shapes of kernels.inc ------------------------------------------------------
// `big`: the kernel's big loops apart (a function of FFN_BIG_PROTO whose body is ffn__big), used
// where the file of an ISA sets the op kind's bit of FFN_V_APART (a kernel whose bit is set must
// pass one); NULL: none.
#define FFN_PART(kop) \
    ((FFN_V_APART >> (kop)&1) && FFN_V_CACHE_DIFFERS ? FFN_PART_CACHE : FFN_PART_ALL)
FFN_VINLINE void ffn__act_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x,
                              ffn__vpre pre, ffn__vfin fin, bool tiers, bool piped, ffn__vbig big) {
    const struct ffn__ptrs p = {.o0 = y, .i0 = x};
    ffn__dispatch(cfg, n, &p, FFN_KOP_ACT_FWD, pre, fin, tiers, piped, FFN_PART(FFN_KOP_ACT_FWD),
                  big);
}
FFN_VINLINE void ffn__act_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x,
                              const void *dy, ffn__vpre pre, ffn__vfin fin, bool tiers, bool piped,
                              ffn__vbig big) {
    const struct ffn__ptrs p = {.o0 = dx, .i0 = x, .i1 = dy};
    ffn__dispatch(cfg, n, &p, FFN_KOP_ACT_BWD, pre, fin, tiers, piped, FFN_PART(FFN_KOP_ACT_BWD),
                  big);
}
FFN_VINLINE void ffn__glu_fwd(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate,
                              const void *up, ffn__vpre pre, ffn__vfin fin, bool tiers, bool piped,
                              ffn__vbig big) {
    const struct ffn__ptrs p = {.o0 = h, .i0 = gate, .i1 = up};
    ffn__dispatch(cfg, n, &p, FFN_KOP_GLU_FWD, pre, fin, tiers, piped, FFN_PART(FFN_KOP_GLU_FWD),
                  big);
}
FFN_VINLINE void ffn__glu_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup,
                              const void *gate, const void *up, const void *dh, ffn__vpre pre,
                              ffn__vfin fin, bool tiers, bool piped, ffn__vbig big) {
    const struct ffn__ptrs p = {.o0 = dgate, .o1 = dup, .i0 = gate, .i1 = up, .i2 = dh};
    ffn__dispatch(cfg, n, &p, FFN_KOP_GLU_BWD, pre, fin, tiers, piped, FFN_PART(FFN_KOP_GLU_BWD),
                  big);
}

// The body of a `big` function: the big loops of the kernel of op kind kop (p: its pointers, as
// its shape above sets them).
FFN_VINLINE void ffn__big(const struct ffn_kcfg *cfg, int64_t n, const struct ffn__ptrs *p,
                          enum ffn_kop kop, ffn__vpre pre, ffn__vfin fin, bool tiers, bool piped) {
    ffn__dispatch(cfg, n, p, kop, pre, fin, tiers, piped, FFN_PART_BIG, NULL);
}
// The prototype of a `big` function: out of line, so that its registers are allocated apart
// from the kernel's; where no vocabulary file sets the kernel's bit, unused and left out.
#define FFN_BIG_PROTO(fn)                                                           \
    static __attribute__((noinline)) void fn(const struct ffn_kcfg *cfg, int64_t n, \
                                             const struct ffn__ptrs *p)

#endif  // FFN_LOOPS_H
