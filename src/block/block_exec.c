// block_exec.c — FFN block forward and backward on the CPU: CBLAS GEMMs (orientation and layout
// as transpose flags and leading dimensions, never copies) and the activation kernels of the
// context's table, applied row by row right after the GEMM that produced the rows.
//
// Forward, per row tile of R rows (R = all tokens in the SEPARATE schedule):
//   P_t = x_t · W_first (+ b)        one GEMM per stored tensor of the first projection
//   h_t = act(P_t) | act(gate_t) ⊙ up_t   (bias add and activation in one pass over each row)
//   y_t = h_t · W_down (+ b_down)
// Backward (SAVE keeps P; RECOMPUTE recomputes it from x first):
//   h = act(P); dW_down = hᵀ·dy; db_down = Σ_rows dy
//   per tile: dh_t = dy_t · W_downᵀ; dP_t = act'(…) written over P_t (ffn_glu_backward in place)
//   db = Σ_rows dP; dW_first = dPᵀ·x (one GEMM when fused); dx = dP · W_firstᵀ (idem)
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#  include <omp.h>
#endif
#ifdef FFN_HAVE_OPENBLAS
#  include <cblas.h>
#endif

#include "block/block_impl.h"

// Below this many elements an OpenMP region costs more than it saves (as in src/cpu/dispatch.c).
#define FFN_BLOCK_PAR_MIN ((int64_t)1 << 16)

#ifdef FFN_HAVE_OPENBLAS

// --- threads ------------------------------------------------------------------------------------
// OpenBLAS's OpenMP build follows the calling thread's omp_get_max_threads(): set it to the
// context's count for the call and restore it after, so the caller's OpenMP setting is untouched.
// The pthread build has one process-wide count (openblas_set_num_threads), set when it differs.
struct ffn__threads {
    int saved;
};

static void ffn__threads_enter(ffn_ctx_t ctx, struct ffn__threads *t) {
#ifdef _OPENMP
    t->saved = omp_get_max_threads();
    omp_set_num_threads(ctx->n_threads);
#else
    t->saved = 1;
#endif
    if (openblas_get_parallel() == 1 && openblas_get_num_threads() != ctx->n_threads)
        openblas_set_num_threads(ctx->n_threads);
}

static void ffn__threads_leave(const struct ffn__threads *t) {
#ifdef _OPENMP
    omp_set_num_threads(t->saved);
#else
    (void)t;
#endif
}

// --- GEMMs ----------------------------------------------------------------------------------
// W is the logical [K, N] matrix of "x·W" (struct ffn_blk_mat). Sizes were checked to fit int.

// C[M, N] = A[M, K] · W + beta·C
static void ffn__gemm_aw(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const struct ffn_blk_mat *W, float beta, float *C, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, W->trans ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                (int)K, 1.0f, A, (int)lda, W->p, (int)W->ld, beta, C, (int)ldc);
}

// C[M, K] = A[M, N] · Wᵀ + beta·C   (stored [out, in] is already Wᵀ: no transpose)
static void ffn__gemm_awt(int64_t M, int64_t K, int64_t N, const float *A, int64_t lda,
                          const struct ffn_blk_mat *W, float beta, float *C, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, W->trans ? CblasNoTrans : CblasTrans, (int)M, (int)K,
                (int)N, 1.0f, A, (int)lda, W->p, (int)W->ld, beta, C, (int)ldc);
}

// Weight gradient of a logical [K, N] weight: dW = Xᵀ[K, T] · D[T, N], written in the stored
// orientation: [out, in] (trans) holds dWᵀ = Dᵀ · X.
static void ffn__gemm_dw(int64_t T, int64_t K, int64_t N, const float *X, int64_t ldx,
                         const float *D, int64_t ldd, bool trans, float beta, float *G, int64_t ldg) {
    if (trans)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)N, (int)K, (int)T, 1.0f, D,
                    (int)ldd, X, (int)ldx, beta, G, (int)ldg);
    else
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)N, (int)T, 1.0f, X,
                    (int)ldx, D, (int)ldd, beta, G, (int)ldg);
}

// --- row passes (bias, activation) ----------------------------------------------------------

static struct ffn_kcfg ffn__kcfg(ffn_ctx_t ctx) {
    const struct ffn_kcfg c = {.in = FFN_DTYPE_F32,
                               .out = FFN_DTYPE_F32,
                               .accurate = ctx->accuracy == FFN_ACCURACY_HIGH,
                               .bf16_cvt = ctx->avx512_bf16};
    return c;
}

// P[r, col0 + j] += b[j·stride] for every bias piece of the first projection.
static void ffn__bias_row(const struct ffn_block *b, float *pr) {
    for (int k = 0; k < b->n_bias; k++) {
        const struct ffn_blk_bias *bp = &b->bias[k];
        float *o = pr + bp->col0;
        if (bp->stride == 1)
            for (int64_t j = 0; j < bp->n; j++) o[j] += bp->b[j];
        else
            for (int64_t j = 0; j < bp->n; j++) o[j] += bp->b[j * bp->stride];
    }
}

// Rows [0, rows) of P (row stride pc): optional bias add, then h = act(P) / act(gate) ⊙ up into
// H (row stride d_ff). One pass per row, so the bias-added row is read by the kernel while hot.
static void ffn__act_rows(ffn_ctx_t ctx, const struct ffn_block *b, int64_t rows, float *P,
                          float *H, bool add_bias) {
    const struct ffn_kcfg cfg = ffn__kcfg(ctx);
    const int64_t m = b->spec.d_ff, pc = b->pc;
    const ffn_act_fwd_fn act = ctx->kernels.act_fwd[b->spec.act];
    const ffn_glu_fwd_fn glu = ctx->kernels.glu_fwd[b->spec.act];
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * m >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        float *pr = P + r * pc, *hr = H + r * m;
        if (add_bias) ffn__bias_row(b, pr);
        if (H == NULL) continue;
        if (!b->spec.gated) {
            act(&cfg, m, hr, pr);
            continue;
        }
        for (int64_t g = 0; g < b->n_groups; g++)
            glu(&cfg, b->gw, hr + g * b->gw, pr + b->g0 + g * b->gs, pr + b->u0 + g * b->gs);
    }
}

// Rows [0, rows): dP = dh ⊙ act'(a) (plain) or dgate, dup (gated), written over P in place.
static void ffn__act_bwd_rows(ffn_ctx_t ctx, const struct ffn_block *b, int64_t rows, float *P,
                              const float *dH) {
    const struct ffn_kcfg cfg = ffn__kcfg(ctx);
    const int64_t m = b->spec.d_ff, pc = b->pc;
    const ffn_act_bwd_fn act = ctx->kernels.act_bwd[b->spec.act];
    const ffn_glu_bwd_fn glu = ctx->kernels.glu_bwd[b->spec.act];
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * m >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        float *pr = P + r * pc;
        const float *dh = dH + r * m;
        if (!b->spec.gated) {
            act(&cfg, m, pr, pr, dh);
            continue;
        }
        for (int64_t g = 0; g < b->n_groups; g++) {
            float *pg = pr + b->g0 + g * b->gs, *pu = pr + b->u0 + g * b->gs;
            glu(&cfg, b->gw, pg, pu, pg, pu, dh + g * b->gw);
        }
    }
}

// y[r, :] += b_down for rows [0, rows).
static void ffn__bias_down(ffn_ctx_t ctx, const struct ffn_block *b, int64_t rows, float *y,
                           int64_t ldy) {
    const int64_t d = b->spec.d_model;
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && rows > 1 && rows * d >= FFN_BLOCK_PAR_MIN;
#pragma omp parallel for num_threads(nt) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < d; j++) y[r * ldy + j] += b->b_down[j];
}

// s[j] = Σ_r A[r·lda + j] for j < n, in double; threads split the columns, so every sum is
// accumulated in the same order whatever the thread count.
static void ffn__colsum(ffn_ctx_t ctx, int64_t rows, int64_t n, const float *A, int64_t lda,
                        double *s) {
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
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = j0; j < j1; j++) s[j] += A[r * lda + j];
    }
}

// Writes (or adds) n column sums to g[j·stride].
static void ffn__put_sums(float *g, int64_t stride, const double *s, int64_t n, bool acc) {
    for (int64_t j = 0; j < n; j++) g[j * stride] = acc ? g[j * stride] + (float)s[j] : (float)s[j];
}

#endif  // FFN_HAVE_OPENBLAS

// --- workspace --------------------------------------------------------------------------------

static enum ffn_status ffn__reserve(ffn_ctx_t ctx, const char *fn, float **p, size_t *cap,
                                    size_t elems) {
    if (elems <= *cap) return FFN_STATUS_OK;
    if (elems > SIZE_MAX / sizeof(float))
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: workspace of %zu floats is too large",
                         fn, elems);
    float *q = malloc(elems * sizeof(float));
    if (!q)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte workspace",
                         fn, elems * sizeof(float));
    free(*p);
    *p = q;
    *cap = elems;
    return FFN_STATUS_OK;
}

// Checks an activation view: f32, [rows, d_model] (rows < 0: any), fits CBLAS's int.
static enum ffn_status ffn__check_act(ffn_ctx_t ctx, const char *fn, const char *name,
                                      const struct ffn_tensor *t, int64_t d, int64_t rows) {
    enum ffn_status st = ffn_tensor_check(ctx, fn, name, t);
    if (st) return st;
    if (t->dtype != FFN_DTYPE_F32)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s is %s; blocks take f32 activations",
                         fn, name, ffn_dtype_name(t->dtype));
    if (t->cols != d)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s.cols=%" PRId64 ", the block has "
                         "d_model=%" PRId64, fn, name, t->cols, d);
    if (rows >= 0 && t->rows != rows)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s has %" PRId64 " rows, expected %"
                         PRId64 " (the tokens of the forward)", fn, name, t->rows, rows);
    if (t->rows > (int64_t)(INT32_MAX / 2) || t->row_stride > (int64_t)(INT32_MAX / 2))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s has %" PRId64 " rows (row_stride %"
                         PRId64 "); at most 2^30 fit a BLAS call", fn, name, t->rows, t->row_stride);
    return FFN_STATUS_OK;
}

static bool ffn__overlap(const struct ffn_tensor *a, const struct ffn_tensor *b) {
    if (a->rows == 0 || a->cols == 0 || b->rows == 0 || b->cols == 0) return false;
    uintptr_t alo, ahi, blo, bhi;
    ffn_tensor_extent(a, &alo, &ahi);
    ffn_tensor_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

static bool ffn__same_view(const struct ffn_tensor *a, const struct ffn_tensor *b) {
    return a->data == b->data && a->dtype == b->dtype && a->rows == b->rows &&
           a->cols == b->cols && (a->rows <= 1 || a->row_stride == b->row_stride);
}

// --- forward ----------------------------------------------------------------------------------

enum ffn_status ffn_block_forward(ffn_ctx_t ctx, ffn_block_t b, const struct ffn_tensor *y,
                                  const struct ffn_tensor *x, enum ffn_block_policy policy) {
    static const char fn[] = "ffn_block_forward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    if ((unsigned)policy >= FFN_BLOCK_POLICY_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: policy=%d is not a policy", fn, (int)policy);
    enum ffn_status st;
    const int64_t d = b->spec.d_model, m = b->spec.d_ff, pc = b->pc;
    if ((st = ffn__check_act(ctx, fn, "x", x, d, -1))) return st;
    if ((st = ffn__check_act(ctx, fn, "y", y, d, x->rows))) return st;
    if (ffn__overlap(x, y))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: y overlaps x; the block needs x intact "
                         "until the end (and for the backward)", fn);
    b->pending = FFN_BLOCK_POLICY_NONE;  // a new forward replaces (or, failing, drops) the tape
    const int64_t T = x->rows;
#ifndef FFN_HAVE_OPENBLAS
    (void)m; (void)pc; (void)T;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: this build has no BLAS", fn);
#else
    const int64_t R = ffn_block_tile_rows(b, T);
    const bool keep = policy == FFN_BLOCK_POLICY_SAVE;
    const int64_t p_rows = keep ? T : R;
    if ((st = ffn__reserve(ctx, fn, &b->P, &b->P_cap, (size_t)p_rows * (size_t)pc))) return st;
    if ((st = ffn__reserve(ctx, fn, &b->H, &b->H_cap, (size_t)R * (size_t)m))) return st;

    struct ffn__threads thr;
    ffn__threads_enter(ctx, &thr);
    const float *xp = x->data;
    float *yp = y->data;
    for (int64_t r0 = 0; r0 < T; r0 += R) {
        const int64_t rows = T - r0 < R ? T - r0 : R;
        float *Pt = keep ? b->P + r0 * pc : b->P;
        for (int k = 0; k < b->n_seg; k++) {
            const struct ffn_blk_seg *s = &b->seg[k];
            ffn__gemm_aw(rows, s->n, d, xp + r0 * x->row_stride, x->row_stride, &s->w, 0.0f,
                         Pt + s->col0, pc);
        }
        ffn__act_rows(ctx, b, rows, Pt, b->H, true);
        ffn__gemm_aw(rows, d, m, b->H, m, &b->down, 0.0f, yp + r0 * y->row_stride, y->row_stride);
        if (b->b_down) ffn__bias_down(ctx, b, rows, yp + r0 * y->row_stride, y->row_stride);
    }
    ffn__threads_leave(&thr);
    if (policy != FFN_BLOCK_POLICY_NONE) {
        b->pending = policy;
        b->px = *x;
        b->p_tokens = T;
    }
    return FFN_STATUS_OK;
#endif
}

// --- backward ---------------------------------------------------------------------------------

static float *ffn__grad_member(const struct ffn_block_grads *g, enum ffn_blk_which w, bool bias) {
    switch (w) {
    case FFN_BLK_GATE: return bias ? g->b_gate : g->gate;
    case FFN_BLK_UP: return bias ? g->b_up : g->up;
    case FFN_BLK_GATE_UP: return bias ? g->b_gate_up : g->gate_up;
    default: return bias ? g->b_down : g->down;
    }
}

// Rejects gradients asked for tensors the block does not have.
static enum ffn_status ffn__check_grads(ffn_ctx_t ctx, const char *fn, const struct ffn_block *b,
                                        const struct ffn_block_grads *g) {
    if (g->size < sizeof *g)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: grads.size=%zu, expected %zu (start "
                         "from FFN_BLOCK_GRADS_INIT)", fn, g->size, sizeof *g);
    bool has[4] = {false, false, false, true}, has_b[4] = {false, false, false, b->b_down != NULL};
    for (int k = 0; k < b->n_seg; k++) has[b->seg[k].which] = true;
    for (int k = 0; k < b->n_bias; k++) has_b[b->bias[k].which] = true;
    static const char *const names[] = {"gate", "up", "gate_up", "down"};
    for (int k = 0; k < 4; k++) {
        if (!has[k] && ffn__grad_member(g, (enum ffn_blk_which)k, false))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: grads.%s is set but the block has "
                             "no %s weight", fn, names[k], names[k]);
        if (!has_b[k] && ffn__grad_member(g, (enum ffn_blk_which)k, true))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: grads.b_%s is set but the block has "
                             "no %s bias", fn, names[k], names[k]);
    }
    return FFN_STATUS_OK;
}

// n_tokens = 0: gradients are zero (or unchanged when accumulating).
static void ffn__zero_grads(const struct ffn_block *b, const struct ffn_block_grads *g) {
    if (g->accumulate) return;
    const int64_t d = b->spec.d_model, m = b->spec.d_ff;
    const size_t wsz = (size_t)d * (size_t)m * sizeof(float);
    if (g->gate) memset(g->gate, 0, wsz);
    if (g->up) memset(g->up, 0, wsz);
    if (g->gate_up) memset(g->gate_up, 0, 2 * wsz);
    if (g->down) memset(g->down, 0, wsz);
    if (g->b_gate) memset(g->b_gate, 0, (size_t)m * sizeof(float));
    if (g->b_up) memset(g->b_up, 0, (size_t)m * sizeof(float));
    if (g->b_gate_up) memset(g->b_gate_up, 0, 2 * (size_t)m * sizeof(float));
    if (g->b_down) memset(g->b_down, 0, (size_t)d * sizeof(float));
}

enum ffn_status ffn_block_backward(ffn_ctx_t ctx, ffn_block_t b, const struct ffn_block_grads *grads,
                                   const struct ffn_tensor *dx, const struct ffn_tensor *dy) {
    static const char fn[] = "ffn_block_backward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    struct ffn_block_grads none = FFN_BLOCK_GRADS_INIT;
    const struct ffn_block_grads *g = grads ? grads : &none;
    enum ffn_status st;
    if ((st = ffn__check_grads(ctx, fn, b, g))) return st;
    if (b->pending == FFN_BLOCK_POLICY_NONE)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: no pending training forward (call "
                         "ffn_block_forward with FFN_BLOCK_POLICY_SAVE or _RECOMPUTE first; a "
                         "backward consumes it)", fn);
    const int64_t d = b->spec.d_model, m = b->spec.d_ff, pc = b->pc, T = b->p_tokens;
    const struct ffn_tensor *x = &b->px;
    if ((st = ffn__check_act(ctx, fn, "dy", dy, d, T))) return st;
    if (dx) {
        if ((st = ffn__check_act(ctx, fn, "dx", dx, d, T))) return st;
        if ((ffn__overlap(dx, dy) && !ffn__same_view(dx, dy)) ||
            (ffn__overlap(dx, x) && !ffn__same_view(dx, x)))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: dx overlaps dy or the forward's x "
                             "without being the same view", fn);
    }
    const bool recompute = b->pending == FFN_BLOCK_POLICY_RECOMPUTE;
    b->pending = FFN_BLOCK_POLICY_NONE;  // the saved buffers are about to be overwritten
    if (T == 0) {
        ffn__zero_grads(b, g);
        return FFN_STATUS_OK;
    }
#ifndef FFN_HAVE_OPENBLAS
    (void)m; (void)pc;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: this build has no BLAS", fn);
#else
    bool need_dp = dx != NULL;
    for (int k = 0; k < b->n_seg; k++) need_dp |= ffn__grad_member(g, b->seg[k].which, false) != NULL;
    for (int k = 0; k < b->n_bias; k++) need_dp |= ffn__grad_member(g, b->bias[k].which, true) != NULL;
    const size_t cs = (size_t)(pc > d ? pc : d);
    if ((st = ffn__reserve(ctx, fn, &b->P, &b->P_cap, (size_t)T * (size_t)pc))) return st;
    if ((st = ffn__reserve(ctx, fn, &b->H, &b->H_cap, (size_t)T * (size_t)m))) return st;
    if (b->colsum_cap < cs) {
        double *c = malloc(cs * sizeof(double));
        if (!c) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        free(b->colsum);
        b->colsum = c;
        b->colsum_cap = cs;
    }
    const float beta = g->accumulate ? 1.0f : 0.0f;
    const float *xp = x->data, *dyp = dy->data;
    const int64_t ldx = x->row_stride, ldy = dy->row_stride;
    struct ffn__threads thr;
    ffn__threads_enter(ctx, &thr);

    // RECOMPUTE: P = x · W_first + b, as the forward computed it (same GEMMs, same order).
    if (recompute) {
        for (int k = 0; k < b->n_seg; k++)
            ffn__gemm_aw(T, b->seg[k].n, d, xp, ldx, &b->seg[k].w, 0.0f, b->P + b->seg[k].col0, pc);
        if (b->n_bias) ffn__act_rows(ctx, b, T, b->P, NULL, true);
    }

    // Down projection: h = act(P) again (cheap, elementwise), dW_down = hᵀ·dy, db_down = Σ dy.
    if (g->down) {
        ffn__act_rows(ctx, b, T, b->P, b->H, false);
        ffn__gemm_dw(T, m, d, b->H, m, dyp, ldy, b->down.trans, beta, g->down, b->down_grad_ld);
    }
    if (g->b_down) {
        ffn__colsum(ctx, T, d, dyp, ldy, b->colsum);
        ffn__put_sums(g->b_down, 1, b->colsum, d, g->accumulate);
    }

    if (need_dp) {
        // dh = dy · W_downᵀ per row tile, turned into dP over P while the tile is hot.
        const int64_t R = ffn_block_tile_rows(b, T);
        for (int64_t r0 = 0; r0 < T; r0 += R) {
            const int64_t rows = T - r0 < R ? T - r0 : R;
            ffn__gemm_awt(rows, m, d, dyp + r0 * ldy, ldy, &b->down, 0.0f, b->H, m);
            ffn__act_bwd_rows(ctx, b, rows, b->P + r0 * pc, b->H);
        }
        // Bias gradients of the first projection: column sums of dP, scattered to the layout.
        bool any_bias = false;
        for (int k = 0; k < b->n_bias; k++) any_bias |= ffn__grad_member(g, b->bias[k].which, true) != NULL;
        if (any_bias) {
            ffn__colsum(ctx, T, pc, b->P, pc, b->colsum);
            for (int k = 0; k < b->n_bias; k++) {
                const struct ffn_blk_bias *bp = &b->bias[k];
                float *gb = ffn__grad_member(g, bp->which, true);
                if (gb)
                    ffn__put_sums(gb + bp->grad_off, bp->stride, b->colsum + bp->col0, bp->n,
                                  g->accumulate);
            }
        }
        // dW_first = dPᵀ · x, one GEMM per stored tensor (one when fused), in its orientation.
        for (int k = 0; k < b->n_seg; k++) {
            const struct ffn_blk_seg *s = &b->seg[k];
            float *gw = ffn__grad_member(g, s->which, false);
            if (gw)
                ffn__gemm_dw(T, d, s->n, xp, ldx, b->P + s->col0, pc, s->w.trans, beta,
                             gw + s->grad_off, s->grad_ld);
        }
        // dx = dP · W_firstᵀ (the second stored tensor accumulates onto the first).
        if (dx)
            for (int k = 0; k < b->n_seg; k++)
                ffn__gemm_awt(T, d, b->seg[k].n, b->P + b->seg[k].col0, pc, &b->seg[k].w,
                              k ? 1.0f : 0.0f, dx->data, dx->row_stride);
    }
    ffn__threads_leave(&thr);
    return FFN_STATUS_OK;
#endif
}
