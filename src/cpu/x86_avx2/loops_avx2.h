// loops_avx2.h — the loop drivers of the AVX2 kernels: one per op kind (act fwd/bwd, glu
// fwd/bwd), each instantiated per (in, out) dtype pair with constant dtypes and an always-inline
// per-vector function, so every hot loop is straight vector code. Tails (and the head peeled to
// align non-temporal stores) go through zero-padded 8-element buffers and the SAME vector code:
// an element's result never depends on where it lies. Inputs are loaded before outputs are
// stored, so an output may alias an input exactly.
#ifndef FFN_LOOPS_AVX2_H
#define FFN_LOOPS_AVX2_H

#include <string.h>

#include "cpu/x86_avx2/vmath_avx2.h"

// Per-vector functions of the four op kinds (f32 lanes in, f32 lanes out).
typedef __m256 (*ffn__avx2_fwd_vfn)(__m256 x);                 // y = act(x)
typedef __m256 (*ffn__avx2_bwd_vfn)(__m256 x, __m256 dy);      // dx = dy·act'(x)
typedef __m256 (*ffn__avx2_glu_vfn)(__m256 g, __m256 u);       // h = act(g)·u
typedef void (*ffn__avx2_glub_vfn)(__m256 g, __m256 u, __m256 dh, __m256 *dg,
                                   __m256 *du);                // dg = dh·u·act'(g), du = dh·act(g)

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
    int64_t head;  // elements done through the buffer before the body
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

// --- act forward: y = f(x) ------------------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__avx2_vec_fwd(__m256 x, ffn__avx2_fwd_vfn f) {
    return ffn__avx2_nan_fix(f(x), x, x, x, 1);
}

FFN_AVX2_INLINE void ffn__avx2_part_fwd(int64_t i, int64_t k, void *y, const void *x,
                                        enum ffn_dtype in, enum ffn_dtype out,
                                        ffn__avx2_fwd_vfn f) {
    _Alignas(32) unsigned char bx[32] = {0}, by[32];
    memcpy(bx, (const char *)x + i * ffn__avx2_esize(in), (size_t)k * ffn__avx2_esize(in));
    ffn__avx2_store(by, 0, out, ffn__avx2_vec_fwd(ffn__avx2_load(bx, 0, in), f), false);
    memcpy((char *)y + i * ffn__avx2_esize(out), by, (size_t)k * ffn__avx2_esize(out));
}

FFN_AVX2_INLINE void ffn__avx2_run_fwd(bool stream, int64_t n, void *y, const void *x,
                                       enum ffn_dtype in, enum ffn_dtype out,
                                       ffn__avx2_fwd_vfn f) {
    const struct ffn__avx2_span s = ffn__avx2_span(stream, n, y, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_fwd(0, i, y, x, in, out, f);
    if (s.nt) {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(y, i, out, ffn__avx2_vec_fwd(ffn__avx2_load(x, i, in), f), true);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_store(y, i, out, ffn__avx2_vec_fwd(ffn__avx2_load(x, i, in), f), false);
    }
    if (i < n) ffn__avx2_part_fwd(i, n - i, y, x, in, out, f);
}

// One instance per (in, out) pair.
FFN_AVX2_INLINE void ffn__avx2_act_fwd(const struct ffn_kcfg *cfg, int64_t n, void *y,
                                       const void *x, ffn__avx2_fwd_vfn f) {
    const enum ffn_dtype F32 = FFN_DTYPE_F32, BF16 = FFN_DTYPE_BF16, F16 = FFN_DTYPE_F16;
    const bool st = cfg->stream;
    switch (cfg->in) {
    case FFN_DTYPE_BF16:
        if (cfg->out == BF16) ffn__avx2_run_fwd(st, n, y, x, BF16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_fwd(st, n, y, x, BF16, F16, f);
        else ffn__avx2_run_fwd(st, n, y, x, BF16, F32, f);
        break;
    case FFN_DTYPE_F16:
        if (cfg->out == BF16) ffn__avx2_run_fwd(st, n, y, x, F16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_fwd(st, n, y, x, F16, F16, f);
        else ffn__avx2_run_fwd(st, n, y, x, F16, F32, f);
        break;
    default:
        if (cfg->out == BF16) ffn__avx2_run_fwd(st, n, y, x, F32, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_fwd(st, n, y, x, F32, F16, f);
        else ffn__avx2_run_fwd(st, n, y, x, F32, F32, f);
        break;
    }
}

// --- act backward: dx = f(x, dy) -----------------------------------------------------------------
FFN_AVX2_INLINE __m256 ffn__avx2_vec_bwd(__m256 x, __m256 dy, ffn__avx2_bwd_vfn f) {
    return ffn__avx2_nan_fix(f(x, dy), x, dy, dy, 2);
}

FFN_AVX2_INLINE void ffn__avx2_part_bwd(int64_t i, int64_t k, void *dx, const void *x,
                                        const void *dy, enum ffn_dtype in, enum ffn_dtype out,
                                        ffn__avx2_bwd_vfn f) {
    _Alignas(32) unsigned char bx[32] = {0}, bdy[32] = {0}, bo[32];
    const size_t ies = ffn__avx2_esize(in), oes = ffn__avx2_esize(out);
    memcpy(bx, (const char *)x + i * ies, (size_t)k * ies);
    memcpy(bdy, (const char *)dy + i * ies, (size_t)k * ies);
    ffn__avx2_store(bo, 0, out,
                    ffn__avx2_vec_bwd(ffn__avx2_load(bx, 0, in), ffn__avx2_load(bdy, 0, in), f),
                    false);
    memcpy((char *)dx + i * oes, bo, (size_t)k * oes);
}

FFN_AVX2_INLINE void ffn__avx2_body_bwd(int64_t i, void *dx, const void *x, const void *dy,
                                        enum ffn_dtype in, enum ffn_dtype out, bool nt,
                                        ffn__avx2_bwd_vfn f) {
    const __m256 vx = ffn__avx2_load(x, i, in), vdy = ffn__avx2_load(dy, i, in);
    ffn__avx2_store(dx, i, out, ffn__avx2_vec_bwd(vx, vdy, f), nt);
}

FFN_AVX2_INLINE void ffn__avx2_run_bwd(bool stream, int64_t n, void *dx, const void *x,
                                       const void *dy, enum ffn_dtype in, enum ffn_dtype out,
                                       ffn__avx2_bwd_vfn f) {
    const struct ffn__avx2_span s = ffn__avx2_span(stream, n, dx, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_bwd(0, i, dx, x, dy, in, out, f);
    if (s.nt) {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_bwd(i, dx, x, dy, in, out, true, f);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_bwd(i, dx, x, dy, in, out, false, f);
    }
    if (i < n) ffn__avx2_part_bwd(i, n - i, dx, x, dy, in, out, f);
}

FFN_AVX2_INLINE void ffn__avx2_act_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dx,
                                       const void *x, const void *dy, ffn__avx2_bwd_vfn f) {
    const enum ffn_dtype F32 = FFN_DTYPE_F32, BF16 = FFN_DTYPE_BF16, F16 = FFN_DTYPE_F16;
    const bool st = cfg->stream;
    switch (cfg->in) {
    case FFN_DTYPE_BF16:
        if (cfg->out == BF16) ffn__avx2_run_bwd(st, n, dx, x, dy, BF16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_bwd(st, n, dx, x, dy, BF16, F16, f);
        else ffn__avx2_run_bwd(st, n, dx, x, dy, BF16, F32, f);
        break;
    case FFN_DTYPE_F16:
        if (cfg->out == BF16) ffn__avx2_run_bwd(st, n, dx, x, dy, F16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_bwd(st, n, dx, x, dy, F16, F16, f);
        else ffn__avx2_run_bwd(st, n, dx, x, dy, F16, F32, f);
        break;
    default:
        if (cfg->out == BF16) ffn__avx2_run_bwd(st, n, dx, x, dy, F32, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_bwd(st, n, dx, x, dy, F32, F16, f);
        else ffn__avx2_run_bwd(st, n, dx, x, dy, F32, F32, f);
        break;
    }
}

// --- gated forward: h = act(g)·u -----------------------------------------------------------------
// Parity mode (out bf16/f16): h = round(round(act(g))·round(u)), the two roundings to `out` that a
// framework's separate eager ops make; the f32 product of two 16-bit values is the exact product
// rounded once, as in the reference.
FFN_AVX2_INLINE __m256 ffn__avx2_glu_vec(__m256 g, __m256 u, enum ffn_dtype out, bool parity,
                                         ffn__avx2_fwd_vfn f, ffn__avx2_glu_vfn gf) {
    const __m256 h = parity
        ? _mm256_mul_ps(ffn__avx2_round_to(out, f(g)), ffn__avx2_round_to(out, u))
        : gf(g, u);
    return ffn__avx2_nan_fix(h, g, u, u, 2);
}

FFN_AVX2_INLINE void ffn__avx2_part_glu(int64_t i, int64_t k, void *h, const void *g,
                                        const void *u, enum ffn_dtype in, enum ffn_dtype out,
                                        bool parity, ffn__avx2_fwd_vfn f, ffn__avx2_glu_vfn gf) {
    _Alignas(32) unsigned char bg[32] = {0}, bu[32] = {0}, bo[32];
    const size_t ies = ffn__avx2_esize(in), oes = ffn__avx2_esize(out);
    memcpy(bg, (const char *)g + i * ies, (size_t)k * ies);
    memcpy(bu, (const char *)u + i * ies, (size_t)k * ies);
    const __m256 v = ffn__avx2_glu_vec(ffn__avx2_load(bg, 0, in), ffn__avx2_load(bu, 0, in), out,
                                       parity, f, gf);
    ffn__avx2_store(bo, 0, out, v, false);
    memcpy((char *)h + i * oes, bo, (size_t)k * oes);
}

FFN_AVX2_INLINE void ffn__avx2_body_glu(int64_t i, void *h, const void *g, const void *u,
                                        enum ffn_dtype in, enum ffn_dtype out, bool parity,
                                        bool nt, ffn__avx2_fwd_vfn f, ffn__avx2_glu_vfn gf) {
    const __m256 vg = ffn__avx2_load(g, i, in), vu = ffn__avx2_load(u, i, in);
    ffn__avx2_store(h, i, out, ffn__avx2_glu_vec(vg, vu, out, parity, f, gf), nt);
}

FFN_AVX2_INLINE void ffn__avx2_run_glu(bool stream, int64_t n, void *h, const void *g,
                                       const void *u, enum ffn_dtype in, enum ffn_dtype out,
                                       bool parity, ffn__avx2_fwd_vfn f, ffn__avx2_glu_vfn gf) {
    const struct ffn__avx2_span s = ffn__avx2_span(stream, n, h, NULL, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_glu(0, i, h, g, u, in, out, parity, f, gf);
    if (s.nt) {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glu(i, h, g, u, in, out, parity, true, f, gf);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glu(i, h, g, u, in, out, parity, false, f, gf);
    }
    if (i < n) ffn__avx2_part_glu(i, n - i, h, g, u, in, out, parity, f, gf);
}

FFN_AVX2_INLINE void ffn__avx2_glu_fwd(const struct ffn_kcfg *cfg, int64_t n, void *h,
                                       const void *g, const void *u, ffn__avx2_fwd_vfn f,
                                       ffn__avx2_glu_vfn gf) {
    const enum ffn_dtype F32 = FFN_DTYPE_F32, BF16 = FFN_DTYPE_BF16, F16 = FFN_DTYPE_F16;
    const bool st = cfg->stream, par = cfg->parity;
    switch (cfg->in) {
    case FFN_DTYPE_BF16:
        if (cfg->out == BF16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, BF16, BF16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, BF16, BF16, false, f, gf);
        } else if (cfg->out == F16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, BF16, F16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, BF16, F16, false, f, gf);
        } else {
            ffn__avx2_run_glu(st, n, h, g, u, BF16, F32, false, f, gf);
        }
        break;
    case FFN_DTYPE_F16:
        if (cfg->out == BF16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, F16, BF16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, F16, BF16, false, f, gf);
        } else if (cfg->out == F16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, F16, F16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, F16, F16, false, f, gf);
        } else {
            ffn__avx2_run_glu(st, n, h, g, u, F16, F32, false, f, gf);
        }
        break;
    default:
        if (cfg->out == BF16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, F32, BF16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, F32, BF16, false, f, gf);
        } else if (cfg->out == F16) {
            if (par) ffn__avx2_run_glu(st, n, h, g, u, F32, F16, true, f, gf);
            else ffn__avx2_run_glu(st, n, h, g, u, F32, F16, false, f, gf);
        } else {
            ffn__avx2_run_glu(st, n, h, g, u, F32, F32, false, f, gf);
        }
        break;
    }
}

// --- gated backward: (dg, du) = f(g, u, dh) --------------------------------------------------------
FFN_AVX2_INLINE void ffn__avx2_vec_glub(__m256 g, __m256 u, __m256 dh, __m256 *dg, __m256 *du,
                                        ffn__avx2_glub_vfn f) {
    f(g, u, dh, dg, du);
    *dg = ffn__avx2_nan_fix(*dg, g, u, dh, 3);
    *du = ffn__avx2_nan_fix(*du, g, u, dh, 3);
}

FFN_AVX2_INLINE void ffn__avx2_part_glub(int64_t i, int64_t k, void *dg, void *du, const void *g,
                                         const void *u, const void *dh, enum ffn_dtype in,
                                         enum ffn_dtype out, ffn__avx2_glub_vfn f) {
    _Alignas(32) unsigned char bg[32] = {0}, bu[32] = {0}, bd[32] = {0}, o0[32], o1[32];
    const size_t ies = ffn__avx2_esize(in), oes = ffn__avx2_esize(out);
    memcpy(bg, (const char *)g + i * ies, (size_t)k * ies);
    memcpy(bu, (const char *)u + i * ies, (size_t)k * ies);
    memcpy(bd, (const char *)dh + i * ies, (size_t)k * ies);
    __m256 vdg, vdu;
    ffn__avx2_vec_glub(ffn__avx2_load(bg, 0, in), ffn__avx2_load(bu, 0, in),
                       ffn__avx2_load(bd, 0, in), &vdg, &vdu, f);
    ffn__avx2_store(o0, 0, out, vdg, false);
    ffn__avx2_store(o1, 0, out, vdu, false);
    memcpy((char *)dg + i * oes, o0, (size_t)k * oes);
    memcpy((char *)du + i * oes, o1, (size_t)k * oes);
}

FFN_AVX2_INLINE void ffn__avx2_body_glub(int64_t i, void *dg, void *du, const void *g,
                                         const void *u, const void *dh, enum ffn_dtype in,
                                         enum ffn_dtype out, bool nt, ffn__avx2_glub_vfn f) {
    __m256 vdg, vdu;
    ffn__avx2_vec_glub(ffn__avx2_load(g, i, in), ffn__avx2_load(u, i, in),
                       ffn__avx2_load(dh, i, in), &vdg, &vdu, f);
    ffn__avx2_store(dg, i, out, vdg, nt);
    ffn__avx2_store(du, i, out, vdu, nt);
}

FFN_AVX2_INLINE void ffn__avx2_run_glub(bool stream, int64_t n, void *dg, void *du, const void *g,
                                        const void *u, const void *dh, enum ffn_dtype in,
                                        enum ffn_dtype out, ffn__avx2_glub_vfn f) {
    const struct ffn__avx2_span s = ffn__avx2_span(stream, n, dg, du, out);
    int64_t i = s.head;
    if (i) ffn__avx2_part_glub(0, i, dg, du, g, u, dh, in, out, f);
    if (s.nt) {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glub(i, dg, du, g, u, dh, in, out, true, f);
        _mm_sfence();
    } else {
        for (; i + FFN_AVX2_LANES <= n; i += FFN_AVX2_LANES)
            ffn__avx2_body_glub(i, dg, du, g, u, dh, in, out, false, f);
    }
    if (i < n) ffn__avx2_part_glub(i, n - i, dg, du, g, u, dh, in, out, f);
}

FFN_AVX2_INLINE void ffn__avx2_glu_bwd(const struct ffn_kcfg *cfg, int64_t n, void *dg, void *du,
                                       const void *g, const void *u, const void *dh,
                                       ffn__avx2_glub_vfn f) {
    const enum ffn_dtype F32 = FFN_DTYPE_F32, BF16 = FFN_DTYPE_BF16, F16 = FFN_DTYPE_F16;
    const bool st = cfg->stream;
    switch (cfg->in) {
    case FFN_DTYPE_BF16:
        if (cfg->out == BF16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, BF16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, BF16, F16, f);
        else ffn__avx2_run_glub(st, n, dg, du, g, u, dh, BF16, F32, f);
        break;
    case FFN_DTYPE_F16:
        if (cfg->out == BF16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F16, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F16, F16, f);
        else ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F16, F32, f);
        break;
    default:
        if (cfg->out == BF16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F32, BF16, f);
        else if (cfg->out == F16) ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F32, F16, f);
        else ffn__avx2_run_glub(st, n, dg, du, g, u, dh, F32, F32, f);
        break;
    }
}

#endif  // FFN_LOOPS_AVX2_H
