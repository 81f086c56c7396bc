// block_exec.c — FFN block forward and backward on the CPU: the GEMMs of the plan through
// oneDNN (block_dnnl.c; orientation and layout as strides, never copies), and the library's
// activation kernels (through the CPU layer: cpu/cpu_impl.h), run row by row right after the
// GEMM that produced the rows.
//
// Forward, per row tile of R rows (R = all tokens in the SEPARATE schedule):
//   P_t = x_t · W_first              one GEMM per plane (stored tensor) of the first projection
//   h_t = act(P_t + b) | act(gate_t + b_g) ⊙ (up_t + b_u)   (bias add and activation in one pass)
//   y_t = h_t · W_down + b_down      (bias inside the GEMM)
// Backward (SAVE keeps P, in f32 or bf16; RECOMPUTE recomputes it from x first):
//   h = act(P); dW_down = hᵀ·dy; db_down = Σ_rows dy
//   per tile: dh_t = dy_t · W_downᵀ; dP_t = act'(…), over P_t (ffn_glu_backward's kernel)
//   db = Σ_rows dP; dW_first = dPᵀ·x (one GEMM when fused); dx = dP · W_firstᵀ (idem)
//
// Dtypes: a GEMM multiplies in its weights' compute dtype (block.c): its other input is
// converted to that dtype when it differs (an f32 x for bf16 weights), P and the accumulation
// are f32, h is written by the activation kernel directly in W_down's compute dtype, and an
// output of another dtype than oneDNN writes from those inputs (bf16 from f32 products) is
// staged in f32 and rounded once.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "block/block_impl.h"
#include "cpu/cpu_impl.h"

// Below this many elements an OpenMP region costs more than it saves (as in src/cpu/dispatch.c).
#define FFN_BLOCK_PAR_MIN ((int64_t)1 << 16)

static size_t ffn__esz(enum ffn_dtype dt) { return ffn_dtype_size(dt); }

// --- workspace --------------------------------------------------------------------------------

static enum ffn_status ffn__reserve(ffn_ctx_t ctx, const char *fn, struct ffn_blk_buf *b,
                                    size_t bytes) {
    if (bytes <= b->cap) return FFN_STATUS_OK;
    void *q = malloc(bytes);
    if (!q)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "%s: out of memory for a %zu-byte workspace", fn, bytes);
    free(b->p);
    b->p = q;
    b->cap = bytes;
    return FFN_STATUS_OK;
}

// --- conversions --------------------------------------------------------------------------------

// dst[r, :] = src[r, :] for rows × cols, each with its own dtype and row stride (elements), by
// the identity kernel (exact to f32; rounding to nearest even to bf16).
static void ffn__convert(ffn_ctx_t ctx, int64_t rows, int64_t cols, void *dst, enum ffn_dtype ddt,
                         int64_t ldd, const void *src, enum ffn_dtype sdt, int64_t lds) {
    const struct ffn_cpu_kernel id =
        ffn_cpu_kernel_get(ctx, FFN_KOP_ACT_FWD, FFN_ACT_IDENTITY, sdt, ddt, false);
    const size_t ds = ffn__esz(ddt), ss = ffn__esz(sdt);
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * cols >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        char *d = (char *)dst + (size_t)(r * ldd) * ds;
        const char *s = (const char *)src + (size_t)(r * lds) * ss;
        if (ddt == sdt)
            memcpy(d, s, (size_t)cols * ds);
        else
            ffn_cpu_act_fwd(&id, cols, d, s);
    }
}

// A [rows, cols] activation view as a GEMM operand of dtype `want`: the view itself when it has
// that dtype, else a dense converted copy in buf.
static enum ffn_status ffn__as(ffn_ctx_t ctx, const char *fn, const struct ffn_tensor *t,
                               enum ffn_dtype want, struct ffn_blk_buf *buf,
                               struct ffn_cpu_mat *out) {
    if (t->dtype == want) {
        *out = (struct ffn_cpu_mat){t->data, want, t->rows > 1 ? t->row_stride : t->cols, 1};
        return FFN_STATUS_OK;
    }
    enum ffn_status st = ffn__reserve(ctx, fn, buf, (size_t)(t->rows * t->cols) * ffn__esz(want));
    if (st) return st;
    ffn__convert(ctx, t->rows, t->cols, buf->p, want, t->cols, t->data, t->dtype, t->row_stride);
    *out = (struct ffn_cpu_mat){buf->p, want, t->cols, 1};
    return FFN_STATUS_OK;
}

// Rows [r0, r0 + rows) of a row-major operand.
static struct ffn_cpu_mat ffn__rows(const struct ffn_cpu_mat *a, int64_t r0) {
    struct ffn_cpu_mat o = *a;
    o.p = (const char *)a->p + (size_t)(r0 * a->s0) * ffn__esz(a->dt);
    return o;
}

static struct ffn_cpu_mat ffn__transpose(struct ffn_cpu_mat a) {
    const int64_t t = a.s0;
    a.s0 = a.s1, a.s1 = t;
    return a;
}

// The weight w as the GEMM operand of "x·W" (logical [K, N]), or transposed ([N, K]).
static struct ffn_cpu_mat ffn__wop(const struct ffn_block *b, const struct ffn_blk_mat *w,
                                   bool transpose) {
    const struct ffn_blk_stored *s = &b->op[w->which];
    int64_t st[2];
    ffn_blk_mat_strides(w, s->ld, st);
    const void *p = (const char *)s->p + (size_t)(w->row0 * s->ld) * ffn__esz(s->dtype);
    const struct ffn_cpu_mat o = {p, s->dtype, st[0], st[1]};
    return transpose ? ffn__transpose(o) : o;
}

// C (f32 or bf16, row-major: s1 = 1) = A·B (+ bias) (+ C): directly when oneDNN writes C's
// dtype from these inputs, else through the f32 staging buffer W (rounded once to C's dtype).
static enum ffn_status ffn__mm(ffn_ctx_t ctx, const char *fn, struct ffn_block *b, int64_t M,
                               int64_t N, int64_t K, const struct ffn_cpu_mat *A,
                               const struct ffn_cpu_mat *B, const struct ffn_cpu_mat *C,
                               const float *bias, bool acc, const char **impl) {
    if (C->dt == FFN_DTYPE_F32 || A->dt == C->dt)
        return ffn_mm_run(ctx, fn, b->mm, M, N, K, A, B, C, bias, acc, impl);
    enum ffn_status st = ffn__reserve(ctx, fn, &b->W, (size_t)(M * N) * sizeof(float));
    if (st) return st;
    if (acc) ffn__convert(ctx, M, N, b->W.p, FFN_DTYPE_F32, N, C->p, C->dt, C->s0);
    const struct ffn_cpu_mat w = {b->W.p, FFN_DTYPE_F32, N, 1};
    if ((st = ffn_mm_run(ctx, fn, b->mm, M, N, K, A, B, &w, bias, acc, impl))) return st;
    ffn__convert(ctx, M, N, (void *)C->p, C->dt, C->s0, b->W.p, FFN_DTYPE_F32, N);
    return FFN_STATUS_OK;
}

// --- row passes (bias, activation) ----------------------------------------------------------
// P-like buffers hold one plane per first-projection GEMM: plane k, row r at
// base + (k·ps + r·p_ld)·dtype_size.

struct ffn__pbuf {
    void *p;
    enum ffn_dtype dt;
    int64_t ps;  // plane stride, elements
};

static void *ffn__at(const struct ffn__pbuf *q, int plane, int64_t row, int64_t ld, int64_t col) {
    return (char *)q->p + (size_t)(plane * q->ps + row * ld + col) * ffn__esz(q->dt);
}

// Rows [0, rows) of P (f32): optional bias add; optional rounding of the row into the save
// buffer S (bf16: h is then computed from the rounded values the backward will see); then
// h = act(P) / act(gate) ⊙ up into H (dtype hdt, row stride d_ff) when H is not NULL.
static void ffn__act_rows(ffn_ctx_t ctx, const struct ffn_block *b, int64_t rows,
                          const struct ffn__pbuf *P, bool add_bias, const struct ffn__pbuf *S,
                          void *H, enum ffn_dtype hdt) {
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t m = pl->spec.d_ff, ld = pl->p_ld;
    const struct ffn__pbuf *in = S ? S : P;
    const enum ffn_act ac = pl->spec.act;
    const enum ffn_dtype sdt = S ? S->dt : FFN_DTYPE_F32;
    const struct ffn_cpu_kernel act =
        ffn_cpu_kernel_get(ctx, FFN_KOP_ACT_FWD, ac, in->dt, hdt, false);
    const struct ffn_cpu_kernel glu =
        ffn_cpu_kernel_get(ctx, FFN_KOP_GLU_FWD, ac, in->dt, hdt, false);
    const struct ffn_cpu_kernel cvt =
        ffn_cpu_kernel_get(ctx, FFN_KOP_ACT_FWD, FFN_ACT_IDENTITY, FFN_DTYPE_F32, sdt, false);
    const size_t hs = ffn__esz(hdt);
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * m >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        if (add_bias)
            for (int k = 0; k < pl->n_bias; k++) {
                const struct ffn_blk_bias *bp = &pl->bias[k];
                float *o = ffn__at(P, bp->seg, r, ld, bp->col0);
                const float *bv = b->bias[bp->which] + bp->off;
                for (int64_t j = 0; j < bp->n; j++) o[j] += bv[j * bp->stride];
            }
        if (S)
            for (int k = 0; k < pl->n_seg; k++)
                ffn_cpu_act_fwd(&cvt, ld, ffn__at(S, k, r, ld, 0), ffn__at(P, k, r, ld, 0));
        if (H == NULL) continue;
        char *hr = (char *)H + (size_t)(r * m) * hs;
        if (!pl->spec.gated) {
            ffn_cpu_act_fwd(&act, m, hr, ffn__at(in, 0, r, ld, 0));
            continue;
        }
        for (int64_t g = 0; g < pl->n_groups; g++)
            ffn_cpu_glu_fwd(&glu, pl->gw, hr + (size_t)(g * pl->gw) * hs,
                            ffn__at(in, pl->g_plane, r, ld, pl->g0 + g * pl->gs),
                            ffn__at(in, pl->u_plane, r, ld, pl->u0 + g * pl->gs));
    }
}

// Rows [0, rows): dP = dh ⊙ act'(a) (plain) or dgate, dup (gated), from the saved P (dtype of
// P, which dh shares) into D (in place when D is P).
static void ffn__act_bwd_rows(ffn_ctx_t ctx, const struct ffn_block *b, int64_t rows,
                              const struct ffn__pbuf *P, const void *dH,
                              const struct ffn__pbuf *D) {
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t m = pl->spec.d_ff, ld = pl->p_ld;
    const enum ffn_act ac = pl->spec.act;
    const struct ffn_cpu_kernel act =
        ffn_cpu_kernel_get(ctx, FFN_KOP_ACT_BWD, ac, P->dt, D->dt, false);
    const struct ffn_cpu_kernel glu =
        ffn_cpu_kernel_get(ctx, FFN_KOP_GLU_BWD, ac, P->dt, D->dt, false);
    const size_t hs = ffn__esz(P->dt);
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * m >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        const char *dh = (const char *)dH + (size_t)(r * m) * hs;
        if (!pl->spec.gated) {
            ffn_cpu_act_bwd(&act, m, ffn__at(D, 0, r, ld, 0), ffn__at(P, 0, r, ld, 0), dh);
            continue;
        }
        for (int64_t g = 0; g < pl->n_groups; g++) {
            const int64_t gc = pl->g0 + g * pl->gs, uc = pl->u0 + g * pl->gs;
            ffn_cpu_glu_bwd(&glu, pl->gw, ffn__at(D, pl->g_plane, r, ld, gc),
                            ffn__at(D, pl->u_plane, r, ld, uc), ffn__at(P, pl->g_plane, r, ld, gc),
                            ffn__at(P, pl->u_plane, r, ld, uc), dh + (size_t)(g * pl->gw) * hs);
        }
    }
}

static float ffn__ld(const void *p, enum ffn_dtype dt, int64_t i) {
    if (dt == FFN_DTYPE_F32) return ((const float *)p)[i];
    return ffn_bf16_to_f32(((const uint16_t *)p)[i]);
}

// s[j] = Σ_r A[r·lda + j] for j < n (A f32 or bf16), in double; threads split the columns, so
// every sum is accumulated in the same order whatever the thread count.
static void ffn__colsum(ffn_ctx_t ctx, int64_t rows, int64_t n, const void *A, enum ffn_dtype dt,
                        int64_t lda, double *s) {
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows * n >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel num_threads(nt) if (par)
    {
#ifdef _OPENMP
        const int64_t ti = omp_get_thread_num(), tn = omp_get_num_threads();
#else
        const int64_t ti = 0, tn = 1;
#endif
        const int64_t j0 = n * ti / tn, j1 = n * (ti + 1) / tn;
        for (int64_t j = j0; j < j1; j++) s[j] = 0.0;
        // One loop per dtype, the bf16 widening inline: the compiler vectorizes both (gpt2-small,
        // 4096 tokens, bf16: the bias gradients' sums 15 -> 2 ms a backward).
        if (dt == FFN_DTYPE_F32) {
            for (int64_t r = 0; r < rows; r++) {
                const float *a = (const float *)A + r * lda;
                for (int64_t j = j0; j < j1; j++) s[j] += (double)a[j];
            }
        } else {
            for (int64_t r = 0; r < rows; r++) {
                const uint16_t *a = (const uint16_t *)A + r * lda;
                for (int64_t j = j0; j < j1; j++) {
                    const uint32_t u = (uint32_t)a[j] << 16;
                    float f;
                    memcpy(&f, &u, sizeof f);
                    s[j] += (double)f;
                }
            }
        }
    }
}

// Writes (or adds) n column sums to g[j·stride] (f32 or bf16), rounding once.
static void ffn__put_sums(void *g, enum ffn_dtype dt, int64_t stride, const double *s, int64_t n,
                          bool acc) {
    for (int64_t j = 0; j < n; j++) {
        const double v = s[j] + (acc ? ffn__ld(g, dt, j * stride) : 0.0);
        if (dt == FFN_DTYPE_F32)
            ((float *)g)[j * stride] = (float)v;
        else
            ((uint16_t *)g)[j * stride] = ffn_f32_to_bf16((float)v);
    }
}

// --- argument checks ----------------------------------------------------------------------------

void ffn_block_pack_weights(struct ffn_block *b) {
    const struct ffn_block_plan *pl = &b->plan;
    for (int k = 0; k < pl->n_seg; k++) {
        const struct ffn_cpu_mat w = ffn__wop(b, &pl->seg[k].w, false);
        ffn_mm_pack_add(b->mm, &w);
    }
    const struct ffn_cpu_mat wd = ffn__wop(b, &pl->down, false);
    ffn_mm_pack_add(b->mm, &wd);
}

// Buffer X[slot] for x converted to dtype dt.
static struct ffn_blk_buf *ffn__xbuf(struct ffn_block *b, enum ffn_dtype dt) {
    return &b->X[dt == FFN_DTYPE_F32 ? 0 : 1];
}

// P = x · W_first for rows [r0, r0 + rows) of x into rows [pr0, pr0 + rows) of P (f32, plane
// stride ps): one GEMM per plane.
static enum ffn_status ffn__first(ffn_ctx_t ctx, const char *fn, struct ffn_block *b,
                                  const struct ffn_cpu_mat *xop, int64_t r0, int64_t rows, float *P,
                                  int64_t ps, int64_t pr0, const char **impl) {
    const struct ffn_block_plan *pl = &b->plan;
    const struct ffn_cpu_mat a = ffn__rows(xop, r0);
    for (int k = 0; k < pl->n_seg; k++) {
        const struct ffn_cpu_mat w = ffn__wop(b, &pl->seg[k].w, false);
        const struct ffn_cpu_mat c = {P + k * ps + pr0 * pl->p_ld, FFN_DTYPE_F32, pl->p_ld, 1};
        enum ffn_status st = ffn_mm_run(ctx, fn, b->mm, rows, pl->seg[k].n, pl->spec.d_model, &a,
                                        &w, &c, NULL, false, k == 0 ? impl : NULL);
        if (st) return st;
    }
    return FFN_STATUS_OK;
}

// --- forward ----------------------------------------------------------------------------------

enum ffn_status ffn_cpu_block_forward(ffn_ctx_t ctx, ffn_block_t b, const struct ffn_tensor *y,
                                      const struct ffn_tensor *x, enum ffn_block_policy policy) {
    static const char fn[] = "ffn_block_forward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    if ((unsigned)policy >= FFN_BLOCK_POLICY_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: policy=%d is not a policy", fn,
                         (int)policy);
    const struct ffn_block_plan *pl = &b->plan;
    enum ffn_status st;
    const int64_t d = pl->spec.d_model, m = pl->spec.d_ff, ld = pl->p_ld, np = pl->n_seg;
    if ((st = ffn_block_check_forward(ctx, fn, pl, y, x))) return st;
    b->pending = FFN_BLOCK_POLICY_NONE;  // a new forward replaces (or, failing, drops) the tape
    const int64_t T = x->rows;
    const int64_t R = ffn_block_tile_rows(b, T);
    const bool keep = policy == FFN_BLOCK_POLICY_SAVE;
    const enum ffn_dtype sd = keep ? b->opts.save_dtype : FFN_DTYPE_F32;
    const bool keep_p = keep && sd == FFN_DTYPE_F32;  // P itself is what the backward reads
    const int64_t p_rows = keep_p ? T : R;
    const enum ffn_dtype hdt = b->op[FFN_BLK_DOWN].dtype, xdt = b->op[pl->seg[0].w.which].dtype;
    struct ffn_blk_threads thr;
    ffn_blk_threads_enter(ctx, &thr);
    struct ffn_cpu_mat xop;
    if ((st = ffn__reserve(ctx, fn, &b->P, (size_t)(np * p_rows * ld) * sizeof(float))) ||
        (st = ffn__reserve(
             ctx, fn, &b->H,
             (size_t)((keep ? T : R) * m) *
                 (keep && ffn__esz(sd) > ffn__esz(hdt) ? ffn__esz(sd) : ffn__esz(hdt)))) ||
        (keep && !keep_p && (st = ffn__reserve(ctx, fn, &b->S, (size_t)(np * T * ld) * 2))) ||
        (st = ffn__as(ctx, fn, x, xdt, ffn__xbuf(b, xdt), &xop)))
        goto out;
    const struct ffn_cpu_mat yop = {y->data, y->dtype, y->rows > 1 ? y->row_stride : d, 1};
    const struct ffn_cpu_mat wd = ffn__wop(b, &pl->down, false);
    for (int64_t r0 = 0; r0 < T; r0 += R) {
        const int64_t rows = T - r0 < R ? T - r0 : R;
        const int64_t pr0 = keep_p ? r0 : 0;
        const char *impl = NULL;
        if ((st = ffn__first(ctx, fn, b, &xop, r0, rows, b->P.p, p_rows * ld, pr0, &impl)))
            goto out;
        if (impl) snprintf(b->gemm_impl, sizeof b->gemm_impl, "%s", impl);
        const struct ffn__pbuf P = {(float *)b->P.p + pr0 * ld, FFN_DTYPE_F32, p_rows * ld};
        const struct ffn__pbuf S = {(uint16_t *)b->S.p + r0 * ld, sd, T * ld};
        // SAVE keeps h as well (the input of W_down's gradient), as autograd does: the backward
        // then skips one elementwise pass over [T, d_ff].
        char *Ht = (char *)b->H.p + (size_t)((keep ? r0 : 0) * m) * ffn__esz(hdt);
        ffn__act_rows(ctx, b, rows, &P, true, keep && !keep_p ? &S : NULL, Ht, hdt);
        const struct ffn_cpu_mat hop = {Ht, hdt, m, 1};
        const struct ffn_cpu_mat yt = ffn__rows(&yop, r0);
        if ((st = ffn__mm(ctx, fn, b, rows, d, m, &hop, &wd, &yt, b->bias[FFN_BLK_DOWN], false,
                          NULL)))
            goto out;
    }
    if (policy != FFN_BLOCK_POLICY_NONE) {
        b->pending = policy;
        b->saved_dtype = sd;
        b->saved_h = keep;
        b->px = *x;
        b->p_tokens = T;
    }
out:
    ffn_blk_threads_leave(&thr);
    return st;
}

// --- backward ---------------------------------------------------------------------------------

// n_tokens = 0: gradients are zero (or unchanged when accumulating).
static void ffn__zero_grads(const struct ffn_block *b, const struct ffn_block_grads *g,
                            enum ffn_dtype gdt) {
    if (g->accumulate) return;
    const size_t es = ffn__esz(gdt);
    const int64_t d = b->plan.spec.d_model, m = b->plan.spec.d_ff;
    const size_t wsz = (size_t)d * (size_t)m * es;
    if (g->gate) memset(g->gate, 0, wsz);
    if (g->up) memset(g->up, 0, wsz);
    if (g->gate_up) memset(g->gate_up, 0, 2 * wsz);
    if (g->down) memset(g->down, 0, wsz);
    if (g->b_gate) memset(g->b_gate, 0, (size_t)m * es);
    if (g->b_up) memset(g->b_up, 0, (size_t)m * es);
    if (g->b_gate_up) memset(g->b_gate_up, 0, 2 * (size_t)m * es);
    if (g->b_down) memset(g->b_down, 0, (size_t)d * es);
}

// Weight gradient of a logical [K, N] weight, dW = Xᵀ[K, T] · D[T, N], written in the stored
// orientation at G (dtype gdt, leading dimension ldg): [out, in] (trans) holds dWᵀ = Dᵀ · X, so
// each orientation is one GEMM with a row-major output.
static enum ffn_status ffn__dw(ffn_ctx_t ctx, const char *fn, struct ffn_block *b, int64_t T,
                               int64_t K, int64_t N, const struct ffn_cpu_mat *X,
                               const struct ffn_cpu_mat *D, bool trans, void *G, enum ffn_dtype gdt,
                               int64_t ldg, bool acc) {
    const struct ffn_cpu_mat c = {G, gdt, ldg, 1};
    const struct ffn_cpu_mat xt = ffn__transpose(*X), dt = ffn__transpose(*D);
    if (trans) return ffn__mm(ctx, fn, b, N, K, T, &dt, X, &c, NULL, acc, NULL);
    return ffn__mm(ctx, fn, b, K, N, T, &xt, D, &c, NULL, acc, NULL);
}

enum ffn_status ffn_cpu_block_backward(ffn_ctx_t ctx, ffn_block_t b,
                                       const struct ffn_block_grads *grads,
                                       const struct ffn_tensor *dx, const struct ffn_tensor *dy) {
    static const char fn[] = "ffn_block_backward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    struct ffn_block_grads none = FFN_BLOCK_GRADS_INIT;
    const struct ffn_block_grads *g = grads ? grads : &none;
    enum ffn_status st;
    enum ffn_dtype gdt;
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t d = pl->spec.d_model, m = pl->spec.d_ff, ld = pl->p_ld, np = pl->n_seg;
    const int64_t T = b->p_tokens;
    const struct ffn_tensor *x = &b->px;
    if ((st = ffn_block_check_backward(ctx, fn, pl, b->pending, x, T, g, dx, dy, &gdt))) return st;
    const bool recompute = b->pending == FFN_BLOCK_POLICY_RECOMPUTE;
    b->pending = FFN_BLOCK_POLICY_NONE;  // the saved buffers are about to be overwritten
    if (T == 0) {
        ffn__zero_grads(b, g, gdt);
        return FFN_STATUS_OK;
    }
    const bool need_dp = ffn_block_need_dp(pl, g, dx != NULL);
    const enum ffn_dtype hdt = b->op[FFN_BLK_DOWN].dtype;        // W_down's compute dtype
    const enum ffn_dtype fdt = b->op[pl->seg[0].w.which].dtype;  // W_first's
    const enum ffn_dtype sd = recompute ? FFN_DTYPE_F32 : b->saved_dtype;
    const bool in_place = fdt == sd;  // dP written over the saved P
    const size_t cs = (size_t)(pl->pc > d ? pl->pc : d);
    if (b->colsum_cap < cs) {
        double *c = malloc(cs * sizeof(double));
        if (!c) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        free(b->colsum);
        b->colsum = c;
        b->colsum_cap = cs;
    }
    const size_t hbytes =
        (size_t)(T * m) * (ffn__esz(hdt) > ffn__esz(sd) ? ffn__esz(hdt) : ffn__esz(sd));
    struct ffn_blk_threads thr;
    ffn_blk_threads_enter(ctx, &thr);
    struct ffn_cpu_mat xop, dyop;
    // (A SAVE forward reserved H for this already: h kept there is not lost.)
    if ((st = ffn__reserve(ctx, fn, &b->H, hbytes)) ||
        (recompute && (st = ffn__reserve(ctx, fn, &b->P, (size_t)(np * T * ld) * sizeof(float)))) ||
        (need_dp && !in_place &&
         (st = ffn__reserve(ctx, fn, &b->D, (size_t)(np * T * ld) * ffn__esz(fdt)))) ||
        (st = ffn__as(ctx, fn, dy, hdt, &b->Y, &dyop)))
        goto out;
    // RECOMPUTE: P = x · W_first + b, as the forward computed it (same GEMMs).
    if (recompute) {
        if ((st = ffn__as(ctx, fn, x, fdt, ffn__xbuf(b, fdt), &xop)) ||
            (st = ffn__first(ctx, fn, b, &xop, 0, T, b->P.p, T * ld, 0, NULL)))
            goto out;
        const struct ffn__pbuf P = {b->P.p, FFN_DTYPE_F32, T * ld};
        if (pl->n_bias) ffn__act_rows(ctx, b, T, &P, true, NULL, NULL, hdt);
    }
    const struct ffn__pbuf Ps = {sd == FFN_DTYPE_F32 ? b->P.p : b->S.p, sd, T * ld};

    // Down projection: h = act(P) again (cheap, elementwise), dW_down = hᵀ·dy, db_down = Σ dy.
    if (g->down) {
        if (!b->saved_h) ffn__act_rows(ctx, b, T, &Ps, false, NULL, b->H.p, hdt);
        const struct ffn_cpu_mat hop = {b->H.p, hdt, m, 1};
        if ((st = ffn__dw(ctx, fn, b, T, m, d, &hop, &dyop, pl->down.trans, g->down, gdt,
                          pl->down_grad_ld, g->accumulate)))
            goto out;
    }
    if (g->b_down) {
        ffn__colsum(ctx, T, d, dy->data, dy->dtype, dy->rows > 1 ? dy->row_stride : d, b->colsum);
        ffn__put_sums(g->b_down, gdt, 1, b->colsum, d, g->accumulate);
    }
    if (!need_dp) goto out;

    // dh = dy · W_downᵀ per row tile (in the saved P's dtype), turned into dP while it is hot.
    const struct ffn__pbuf D = {in_place ? Ps.p : b->D.p, fdt, T * ld};
    const struct ffn_cpu_mat wdt = ffn__wop(b, &pl->down, true);
    const int64_t R = ffn_block_tile_rows(b, T);
    for (int64_t r0 = 0; r0 < T; r0 += R) {
        const int64_t rows = T - r0 < R ? T - r0 : R;
        const struct ffn_cpu_mat a = ffn__rows(&dyop, r0), c = {b->H.p, sd, m, 1};
        if ((st = ffn__mm(ctx, fn, b, rows, m, d, &a, &wdt, &c, NULL, false, NULL))) goto out;
        const struct ffn__pbuf Pt = {ffn__at(&Ps, 0, r0, ld, 0), sd, Ps.ps};
        const struct ffn__pbuf Dt = {ffn__at(&D, 0, r0, ld, 0), fdt, D.ps};
        ffn__act_bwd_rows(ctx, b, rows, &Pt, b->H.p, &Dt);
    }
    // Bias gradients of the first projection: column sums of dP, scattered to the layout.
    for (int k = 0; k < pl->n_bias; k++) {
        const struct ffn_blk_bias *bp = &pl->bias[k];
        void *gb = ffn_block_grad_member(g, bp->which, true);
        if (!gb) continue;
        ffn__colsum(ctx, T, bp->n, ffn__at(&D, bp->seg, 0, ld, bp->col0), fdt, ld, b->colsum);
        ffn__put_sums((char *)gb + (size_t)bp->off * ffn__esz(gdt), gdt, bp->stride, b->colsum,
                      bp->n, g->accumulate);
    }
    // dW_first = dPᵀ · x, one GEMM per stored tensor (one when fused), in its orientation.
    bool any_dw = false;
    for (int k = 0; k < np; k++)
        any_dw |= ffn_block_grad_member(g, pl->seg[k].w.which, false) != NULL;
    if (any_dw && (st = ffn__as(ctx, fn, x, fdt, ffn__xbuf(b, fdt), &xop))) goto out;
    for (int k = 0; k < np && any_dw; k++) {
        const struct ffn_blk_seg *s = &pl->seg[k];
        char *gw = ffn_block_grad_member(g, s->w.which, false);
        if (!gw) continue;
        const struct ffn_cpu_mat dp = {ffn__at(&D, k, 0, ld, 0), fdt, ld, 1};
        if ((st =
                 ffn__dw(ctx, fn, b, T, d, s->n, &xop, &dp, s->w.trans,
                         gw + (size_t)s->grad_off * ffn__esz(gdt), gdt, s->grad_ld, g->accumulate)))
            goto out;
    }
    // dx = dP · W_firstᵀ (the second stored tensor accumulates onto the first; through an f32
    // sum when dx is not f32, so that it is rounded once).
    if (dx) {
        const bool stage = np > 1 && dx->dtype != FFN_DTYPE_F32;
        if (stage && (st = ffn__reserve(ctx, fn, &b->Z, (size_t)(T * d) * sizeof(float)))) goto out;
        const struct ffn_cpu_mat c =
            stage ? (struct ffn_cpu_mat){b->Z.p, FFN_DTYPE_F32, d, 1}
                  : (struct ffn_cpu_mat){dx->data, dx->dtype, dx->rows > 1 ? dx->row_stride : d, 1};
        for (int k = 0; k < np; k++) {
            const struct ffn_cpu_mat dp = {ffn__at(&D, k, 0, ld, 0), fdt, ld, 1};
            const struct ffn_cpu_mat wt = ffn__wop(b, &pl->seg[k].w, true);
            if ((st = ffn__mm(ctx, fn, b, T, d, pl->seg[k].n, &dp, &wt, &c, NULL, k > 0, NULL)))
                goto out;
        }
        if (stage)
            ffn__convert(ctx, T, d, dx->data, dx->dtype, dx->row_stride, b->Z.p, FFN_DTYPE_F32, d);
    }
out:
    ffn_blk_threads_leave(&thr);
    return st;
}
