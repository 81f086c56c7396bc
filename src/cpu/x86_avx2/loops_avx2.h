// loops_avx2.h — the loop drivers of the AVX2 kernels: one per op kind (act fwd/bwd, glu
// fwd/bwd), instantiated per (in, out) dtype pair with constant dtypes and an always-inline
// per-vector function, so every hot loop is straight vector code. A head (peeled to align
// non-temporal stores) and a tail of fewer than 8 elements go out of line: one small noinline
// helper per op kind copies them into zero-padded 8-element buffers and calls the kernel itself
// on those (n = 8, no streaming), so they run the very same vector code as the body — an
// element's result never depends on where it lies — without a third copy of it per dtype pair.
// Inputs are loaded before outputs are stored, so an output may alias an input exactly. A
// streaming body walks ffn_stream_ways() interleaved sub-ranges (core_impl.h).
#ifndef FFN_LOOPS_AVX2_H
#define FFN_LOOPS_AVX2_H

#include <string.h>

#include "cpu/x86_avx2/vmath_avx2.h"

// Per-vector functions of the four op kinds (f32 lanes in, f32 lanes out). Each handles every
// lane itself: NaN, infinities and the other rare lanes included.
typedef __m256 (*ffn__avx2_fwd_vfn)(__m256 x);             // y = act(x)
typedef __m256 (*ffn__avx2_bwd_vfn)(__m256 x, __m256 dy);  // dx = dy·act'(x)
typedef __m256 (*ffn__avx2_glu_vfn)(__m256 g, __m256 u);   // h = act(g)·u
typedef void (*ffn__avx2_glub_vfn)(__m256 g, __m256 u, __m256 dh, __m256 *dg,
                                   __m256 *du);  // dg = dh·u·act'(g), du = dh·act(g)

FFN_AVX2_INLINE size_t ffn__avx2_esize(enum ffn_dtype dt) { return dt == FFN_DTYPE_F32 ? 4 : 2; }

// Elements to skip before p is aligned for a non-temporal store of 8 elements of dt (32 bytes
// for f32, 16 for bf16/f16), or -1 when it cannot be (p not even element-aligned).
FFN_AVX2_INLINE int64_t ffn__avx2_nt_head(const void *p, enum ffn_dtype dt) {
    const uintptr_t es = ffn__avx2_esize(dt), al = FFN_AVX2_LANES * es, a = (uintptr_t)p;
    if (a % es) return -1;
    return (int64_t)(((al - a % al) % al) / es);
}

// The [head, body, tail] split of n elements: streaming only when asked, possible, and worth it.
struct ffn__avx2_span {
    int64_t head;  // elements done through the buffers before the body
    bool nt;       // body uses non-temporal stores
};

FFN_AVX2_INLINE struct ffn__avx2_span ffn__avx2_span(bool stream, int64_t n, const void *o0,
                                                     const void *o1, enum ffn_dtype out) {
    struct ffn__avx2_span s = {0, false};
    if (!stream) return s;
    const int64_t h0 = ffn__avx2_nt_head(o0, out), h1 = o1 ? ffn__avx2_nt_head(o1, out) : h0;
    if (h0 < 0 || h0 != h1 || n - h0 < 4 * FFN_AVX2_LANES) return s;
    s.head = h0;
    s.nt = true;
    return s;
}

// --- head and tail: k < 8 elements at i through padded buffers ---------------------------------
// `self` is the kernel being run; it is called with n = 8 on the buffers and stream off, so it
// takes its body loop once and comes back here no more.
#define FFN_AVX2_PART __attribute__((noinline, unused)) static void

FFN_AVX2_PART ffn__avx2_part_fwd(ffn_act_fwd_fn self, const struct ffn_kcfg *cfg, int64_t i,
                                 int64_t k, void *y, const void *x) {
    _Alignas(32) unsigned char bx[32] = {0}, by[32];
    const size_t ies = ffn__avx2_esize(cfg->in), oes = ffn__avx2_esize(cfg->out);
    struct ffn_kcfg c = *cfg;
    c.stream = false;
    memcpy(bx, (const char *)x + i * (int64_t)ies, (size_t)k * ies);
    self(&c, FFN_AVX2_LANES, by, bx);
    memcpy((char *)y + i * (int64_t)oes, by, (size_t)k * oes);
}

FFN_AVX2_PART ffn__avx2_part_2in(ffn_act_bwd_fn self, const struct ffn_kcfg *cfg, int64_t i,
                                 int64_t k, void *o, const void *a, const void *b) {
    _Alignas(32) unsigned char ba[32] = {0}, bb[32] = {0}, bo[32];
    const size_t ies = ffn__avx2_esize(cfg->in), oes = ffn__avx2_esize(cfg->out);
    struct ffn_kcfg c = *cfg;
    c.stream = false;
    memcpy(ba, (const char *)a + i * (int64_t)ies, (size_t)k * ies);
    memcpy(bb, (const char *)b + i * (int64_t)ies, (size_t)k * ies);
    self(&c, FFN_AVX2_LANES, bo, ba, bb);
    memcpy((char *)o + i * (int64_t)oes, bo, (size_t)k * oes);
}

FFN_AVX2_PART ffn__avx2_part_glub(ffn_glu_bwd_fn self, const struct ffn_kcfg *cfg, int64_t i,
                                  int64_t k, void *dg, void *du, const void *g, const void *u,
                                  const void *dh) {
    _Alignas(32) unsigned char bg[32] = {0}, bu[32] = {0}, bd[32] = {0}, o0[32], o1[32];
    const size_t ies = ffn__avx2_esize(cfg->in), oes = ffn__avx2_esize(cfg->out);
    struct ffn_kcfg c = *cfg;
    c.stream = false;
    memcpy(bg, (const char *)g + i * (int64_t)ies, (size_t)k * ies);
    memcpy(bu, (const char *)u + i * (int64_t)ies, (size_t)k * ies);
    memcpy(bd, (const char *)dh + i * (int64_t)ies, (size_t)k * ies);
    self(&c, FFN_AVX2_LANES, o0, o1, bg, bu, bd);
    memcpy((char *)dg + i * (int64_t)oes, o0, (size_t)k * oes);
    memcpy((char *)du + i * (int64_t)oes, o1, (size_t)k * oes);
}

// The streaming body of a two-input kernel o = f(a, b) (act backward, glu forward) from element
// i: ffn_stream_ways(3) interleaved sub-ranges, then the whole vectors left. Returns where it
// stopped.
FFN_AVX2_INLINE int64_t ffn__avx2_stream_2in(int64_t i, int64_t n, void *o, const void *a,
                                             const void *b, enum ffn_dtype in, enum ffn_dtype out,
                                             __m256 (*f)(__m256, __m256)) {
    const int ways = ffn_stream_ways(3);
    const int64_t per = (n - i) / FFN_AVX2_LANES / ways;
    for (int64_t k = 0; k < per; k++)
        for (int w = 0; w < ways; w++) {
            const int64_t at = i + ((int64_t)w * per + k) * FFN_AVX2_LANES;
            ffn__avx2_store(o, at, out, f(ffn__avx2_load(a, at, in), ffn__avx2_load(b, at, in)),
                            true);
        }
    i += (int64_t)ways * per * FFN_AVX2_LANES;
    for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
        ffn__avx2_store(o, i, out, f(ffn__avx2_load(a, i, in), ffn__avx2_load(b, i, in)), true);
    return i;
}

// --- act forward: y = f(x)
// ------------------------------------------------------------------------
FFN_AVX2_INLINE void ffn__avx2_run_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y,
                                       const void *x, enum ffn_dtype in, enum ffn_dtype out,
                                       ffn__avx2_fwd_vfn f, ffn_act_fwd_fn self) {
    const struct ffn__avx2_span s = ffn__avx2_span(cfg->stream, n, y, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_fwd(self, cfg, 0, i, y, x);
    if (s.nt) {
        const int ways = ffn_stream_ways(2);
        const int64_t per = (n - i) / FFN_AVX2_LANES / ways;
        for (int64_t k = 0; k < per; k++)
            for (int w = 0; w < ways; w++) {
                const int64_t at = i + ((int64_t)w * per + k) * FFN_AVX2_LANES;
                ffn__avx2_store(y, at, out, f(ffn__avx2_load(x, at, in)), true);
            }
        i += (int64_t)ways * per * FFN_AVX2_LANES;
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(y, i, out, f(ffn__avx2_load(x, i, in)), true);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(y, i, out, f(ffn__avx2_load(x, i, in)), false);
    }
    if (i < n) ffn__avx2_part_fwd(self, cfg, i, n - i, y, x);
}

// Each op kind picks the loop of the (in, out) pair by FFN_DTYPE_PAIR_SWITCH (core_impl.h).

FFN_AVX2_INLINE void ffn__avx2_act_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y,
                                       const void *x, ffn__avx2_fwd_vfn f, ffn_act_fwd_fn self) {
#define FFN__RUN(in, out) ffn__avx2_run_fwd(cfg, n, y, x, in, out, f, self)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

// --- act backward: dx = f(x, dy) -----------------------------------------------------------------
FFN_AVX2_INLINE void ffn__avx2_run_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx,
                                       const void *x, const void *dy, enum ffn_dtype in,
                                       enum ffn_dtype out, ffn__avx2_bwd_vfn f,
                                       ffn_act_bwd_fn self) {
    const struct ffn__avx2_span s = ffn__avx2_span(cfg->stream, n, dx, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_2in(self, cfg, 0, i, dx, x, dy);
    if (s.nt) {
        i = ffn__avx2_stream_2in(i, n, dx, x, dy, in, out, f);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(dx, i, out, f(ffn__avx2_load(x, i, in), ffn__avx2_load(dy, i, in)),
                            false);
    }
    if (i < n) ffn__avx2_part_2in(self, cfg, i, n - i, dx, x, dy);
}

FFN_AVX2_INLINE void ffn__avx2_act_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx,
                                       const void *x, const void *dy, ffn__avx2_bwd_vfn f,
                                       ffn_act_bwd_fn self) {
#define FFN__RUN(in, out) ffn__avx2_run_bwd(cfg, n, dx, x, dy, in, out, f, self)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

// --- gated forward: h = act(g)·u -----------------------------------------------------------------
// Parity mode (out bf16/f16): h = round(round(act(g))·round(u)), the two roundings to `out` that a
// framework's separate eager ops make; the f32 product of two 16-bit values is the exact product
// rounded once, as in the reference. It reuses the forward vector function f and plain stores.
FFN_AVX2_INLINE __m256 ffn__avx2_parity(__m256 g, __m256 u, enum ffn_dtype out,
                                        ffn__avx2_fwd_vfn f) {
    return _mm256_mul_ps(ffn__avx2_round_to(out, f(g)), ffn__avx2_round_to(out, u));
}

FFN_AVX2_INLINE void ffn__avx2_run_glu(const struct ffn_kcfg *cfg, int64_t n, void *h,
                                       const void *g, const void *u, enum ffn_dtype in,
                                       enum ffn_dtype out, ffn__avx2_fwd_vfn f,
                                       ffn__avx2_glu_vfn gf, ffn_glu_fwd_fn self) {
    const struct ffn__avx2_span s = ffn__avx2_span(cfg->stream, n, h, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_2in(self, cfg, 0, i, h, g, u);
    if (out != FFN_DTYPE_F32 && cfg->parity) {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES) {
            const __m256 vg = ffn__avx2_load(g, i, in), vu = ffn__avx2_load(u, i, in);
            ffn__avx2_store(h, i, out, ffn__avx2_parity(vg, vu, out, f), false);
        }
    } else if (s.nt) {
        i = ffn__avx2_stream_2in(i, n, h, g, u, in, out, gf);
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(h, i, out, gf(ffn__avx2_load(g, i, in), ffn__avx2_load(u, i, in)),
                            false);
    }
    if (s.nt) _mm_sfence();
    if (i < n) ffn__avx2_part_2in(self, cfg, i, n - i, h, g, u);
}

FFN_AVX2_INLINE void ffn__avx2_glu_fwd(const struct ffn_kcfg *cfg, int64_t n, void *h,
                                       const void *g, const void *u, ffn__avx2_fwd_vfn f,
                                       ffn__avx2_glu_vfn gf, ffn_glu_fwd_fn self) {
#define FFN__RUN(in, out) ffn__avx2_run_glu(cfg, n, h, g, u, in, out, f, gf, self)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

// --- gated backward: (dg, du) = f(g, u, dh)
// --------------------------------------------------------
FFN_AVX2_INLINE void ffn__avx2_body_glub(int64_t i, void *dg, void *du, const void *g,
                                         const void *u, const void *dh, enum ffn_dtype in,
                                         enum ffn_dtype out, bool nt, ffn__avx2_glub_vfn f) {
    __m256 vdg, vdu;
    f(ffn__avx2_load(g, i, in), ffn__avx2_load(u, i, in), ffn__avx2_load(dh, i, in), &vdg, &vdu);
    ffn__avx2_store(dg, i, out, vdg, nt);
    ffn__avx2_store(du, i, out, vdu, nt);
}

FFN_AVX2_INLINE void ffn__avx2_run_glub(const struct ffn_kcfg *cfg, int64_t n, void *dg, void *du,
                                        const void *g, const void *u, const void *dh,
                                        enum ffn_dtype in, enum ffn_dtype out, ffn__avx2_glub_vfn f,
                                        ffn_glu_bwd_fn self) {
    const struct ffn__avx2_span s = ffn__avx2_span(cfg->stream, n, dg, du, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_glub(self, cfg, 0, i, dg, du, g, u, dh);
    if (s.nt) {
        const int ways = ffn_stream_ways(5);
        const int64_t per = (n - i) / FFN_AVX2_LANES / ways;
        for (int64_t k = 0; k < per; k++)
            for (int w = 0; w < ways; w++)
                ffn__avx2_body_glub(i + ((int64_t)w * per + k) * FFN_AVX2_LANES, dg, du, g, u, dh,
                                    in, out, true, f);
        i += (int64_t)ways * per * FFN_AVX2_LANES;
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glub(i, dg, du, g, u, dh, in, out, true, f);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glub(i, dg, du, g, u, dh, in, out, false, f);
    }
    if (i < n) ffn__avx2_part_glub(self, cfg, i, n - i, dg, du, g, u, dh);
}

FFN_AVX2_INLINE void ffn__avx2_glu_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dg, void *du,
                                       const void *g, const void *u, const void *dh,
                                       ffn__avx2_glub_vfn f, ffn_glu_bwd_fn self) {
#define FFN__RUN(in, out) ffn__avx2_run_glub(cfg, n, dg, du, g, u, dh, in, out, f, self)
    FFN_DTYPE_PAIR_SWITCH(cfg->in, cfg->out, FFN__RUN);
#undef FFN__RUN
}

#endif  // FFN_LOOPS_AVX2_H
