// shard.c — one rank's weights out of the whole block's, and the way back for gradients.
// Every copy goes through logical positions: output j of the gate (or of up) lies at
// ffn_tp_first_pos(source layout, j) in the source and at ffn_tp_first_pos(shard layout,
// j - c_r) in rank r's shard, so a fused tensor is re-blocked column by column and never cut
// at a byte offset. Orientation and dtype may change on the way (element by element, with a
// memcpy fast path for rows that stay rows).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tp/tp_impl.h"

static const char *const ffn__member_names[] = {"gate", "up", "gate_up", "down"};

// --- stored matrices ------------------------------------------------------------------------

// A stored matrix with a logical [n_out, n_in] map: element (o, i) at o·ld + i ([out, in]) or
// i·ld + o ([in, out]).
struct ffn__mat {
    char *p;
    enum ffn_dtype dt;
    size_t es;
    enum ffn_weight_orient o;
    int64_t ld;
};

static inline int64_t ffn__at(const struct ffn__mat *a, int64_t o, int64_t i) {
    return a->o == FFN_WEIGHT_OUT_IN ? o * a->ld + i : i * a->ld + o;
}

static float ffn__load(const struct ffn__mat *a, int64_t k) {
    const char *q = a->p + (size_t)k * a->es;
    uint16_t h;
    float f;
    switch (a->dt) {
    case FFN_DTYPE_BF16: memcpy(&h, q, 2); return ffn_bf16_to_f32(h);
    case FFN_DTYPE_F16: memcpy(&h, q, 2); return ffn_f16_to_f32(h);
    default: memcpy(&f, q, 4); return f;
    }
}

static void ffn__store(const struct ffn__mat *a, int64_t k, float v) {
    char *q = a->p + (size_t)k * a->es;
    uint16_t h;
    switch (a->dt) {
    case FFN_DTYPE_BF16:
        h = ffn_f32_to_bf16(v);
        memcpy(q, &h, 2);
        return;
    case FFN_DTYPE_F16:
        h = ffn_f32_to_f16(v);
        memcpy(q, &h, 2);
        return;
    default: memcpy(q, &v, 4); return;
    }
}

static inline void ffn__elem(const struct ffn__mat *dst, int64_t kd, const struct ffn__mat *src,
                             int64_t ks) {
    if (dst->dt == src->dt)
        memcpy(dst->p + (size_t)kd * dst->es, src->p + (size_t)ks * src->es, dst->es);
    else
        ffn__store(dst, kd, ffn__load(src, ks));
}

// Output vector `os` of src (n_in elements) into output vector `od` of dst.
static void ffn__copy_out(const struct ffn__mat *dst, int64_t od, const struct ffn__mat *src,
                          int64_t os, int64_t n_in) {
    if (dst->o == FFN_WEIGHT_OUT_IN && src->o == FFN_WEIGHT_OUT_IN && dst->dt == src->dt) {
        memcpy(dst->p + (size_t)(od * dst->ld) * dst->es, src->p + (size_t)(os * src->ld) * src->es,
               (size_t)n_in * dst->es);
        return;
    }
    for (int64_t i = 0; i < n_in; i++)
        ffn__elem(dst, ffn__at(dst, od, i), src, ffn__at(src, os, i));
}

// Input vector `is` of src (n_out elements) into input vector `id` of dst (the down projection).
static void ffn__copy_in(const struct ffn__mat *dst, int64_t id, const struct ffn__mat *src,
                         int64_t is, int64_t n_out) {
    if (dst->o == FFN_WEIGHT_IN_OUT && src->o == FFN_WEIGHT_IN_OUT && dst->dt == src->dt) {
        memcpy(dst->p + (size_t)(id * dst->ld) * dst->es, src->p + (size_t)(is * src->ld) * src->es,
               (size_t)n_out * dst->es);
        return;
    }
    for (int64_t o = 0; o < n_out; o++)
        ffn__elem(dst, ffn__at(dst, o, id), src, ffn__at(src, o, is));
}

// --- the members a layout uses ---------------------------------------------------------------

static const struct ffn_weight *ffn__w(const struct ffn_block_weights *w, int k) {
    const struct ffn_weight *t[] = {&w->gate, &w->up, &w->gate_up, &w->down};
    return t[k];
}
static const struct ffn_weight *ffn__b(const struct ffn_block_weights *w, int k) {
    const struct ffn_weight *t[] = {&w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    return t[k];
}
static struct ffn_weight *ffn__wm(struct ffn_block_weights *w, int k) {
    struct ffn_weight *t[] = {&w->gate, &w->up, &w->gate_up, &w->down};
    return t[k];
}
static struct ffn_weight *ffn__bm(struct ffn_block_weights *w, int k) {
    struct ffn_weight *t[] = {&w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    return t[k];
}

// Which matrices (mat[k]) and biases (vec[k]) a block with this gate/up layout has.
static void ffn__uses(bool gated, enum ffn_gate_up_layout layout, bool bg, bool bu, bool bd,
                      bool mat[4], bool vec[4]) {
    const bool fused = gated && layout != FFN_GATE_UP_SEPARATE;
    mat[FFN_TP_GATE] = gated && !fused;
    mat[FFN_TP_UP] = !fused;
    mat[FFN_TP_GATE_UP] = fused;
    mat[FFN_TP_DOWN] = true;
    vec[FFN_TP_GATE] = gated && !fused && bg;
    vec[FFN_TP_UP] = !fused && bu;
    vec[FFN_TP_GATE_UP] = fused && bu;
    vec[FFN_TP_DOWN] = bd;
}

// Logical [n_out, n_in] of member k for widths (d, m).
static void ffn__logical(int k, int64_t d, int64_t m, int64_t *n_out, int64_t *n_in) {
    *n_out = k == FFN_TP_DOWN ? d : k == FFN_TP_GATE_UP ? 2 * m : m;
    *n_in = k == FFN_TP_DOWN ? m : d;
}

static enum ffn_weight_orient ffn__plan_orient(const struct ffn_tp_plan *p, int k, bool shard) {
    if (k == FFN_TP_DOWN) return shard ? p->shard_orient_down : p->orient_down;
    if (k == FFN_TP_UP) return shard ? p->shard_orient_up : p->orient_up;
    return shard ? p->shard_orient_gate : p->orient_gate;
}

// A checked view of a source weight as a matrix.
static enum ffn_status ffn__src_mat(ffn_ctx_t ctx, const char *fn, const struct ffn_tp_plan *p,
                                    const struct ffn_weight *w, int k, struct ffn__mat *out) {
    int64_t n_out, n_in;
    ffn__logical(k, p->block.d_model, p->block.d_ff, &n_out, &n_in);
    const enum ffn_weight_orient o = ffn__plan_orient(p, k, false);
    if (!w->data)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is missing", fn,
                         ffn__member_names[k]);
    if (ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has dtype %d", fn,
                         ffn__member_names[k], (int)w->dtype);
    if (w->orient != o)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.%s is stored %s but the plan "
                         "was made for %s",
                         fn, ffn__member_names[k],
                         w->orient == FFN_WEIGHT_OUT_IN ? "[out, in]" : "[in, out]",
                         o == FFN_WEIGHT_OUT_IN ? "[out, in]" : "[in, out]");
    const int64_t R = o == FFN_WEIGHT_OUT_IN ? n_out : n_in,
                  C = o == FFN_WEIGHT_OUT_IN ? n_in : n_out;
    if ((w->rows || w->cols) && (w->rows != R || w->cols != C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has shape [%" PRId64 ", %" PRId64 "]; the plan needs [%" PRId64
                         ", %" PRId64 "]",
                         fn, ffn__member_names[k], w->rows, w->cols, R, C);
    if (w->row_stride < 0 || (w->row_stride && w->row_stride < C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.%s.row_stride=%" PRId64 " is less than its %" PRId64
                         " columns",
                         fn, ffn__member_names[k], w->row_stride, C);
    *out = (struct ffn__mat){(char *)w->data, w->dtype, ffn_dtype_size(w->dtype), o,
                             w->row_stride ? w->row_stride : C};
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__src_vec(ffn_ctx_t ctx, const char *fn, const struct ffn_weight *w,
                                    const char *name, int64_t n, struct ffn__mat *out) {
    if (!w->data || ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.b_%s is missing or has no "
                         "dtype",
                         fn, name);
    if ((w->rows || w->cols) && (w->rows > 1 ? w->rows : 1) * (w->cols ? w->cols : 1) != n)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: b_%s has shape [%" PRId64 ", %" PRId64
                         "]; the plan needs a vector of %" PRId64,
                         fn, name, w->rows, w->cols, n);
    // A vector as a [n, 1] matrix stored [out, in]: element j at j.
    *out = (struct ffn__mat){(char *)w->data, w->dtype, ffn_dtype_size(w->dtype), FFN_WEIGHT_OUT_IN,
                             1};
    return FFN_STATUS_OK;
}

// --- shard creation ---------------------------------------------------------------------------

struct ffn_tp_shard {
    struct ffn_block_weights w;
    void *mem;
};

#define FFN_TP_ALIGN 64  // every shard tensor starts on a cache line

enum ffn_status ffn_tp_shard_create(ffn_ctx_t ctx, const struct ffn_tp_plan *plan, int64_t rank,
                                    const struct ffn_block_weights *weights,
                                    ffn_tp_shard_t *shard_out) {
    static const char fn[] = "ffn_tp_shard_create";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!plan || !weights || !shard_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    *shard_out = NULL;
    int64_t c0, n;
    enum ffn_status st = ffn_tp_plan_range(ctx, plan, rank, &c0, &n);
    if (st) return st;
    ffn_error_clear(ctx);
    if (weights->size < sizeof *weights)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.size=%zu, expected %zu", fn,
                         weights->size, sizeof *weights);
    const struct ffn_block_spec *s = &plan->block;
    const int64_t d = s->d_model, m = s->d_ff;
    const bool rank_bd =
        s->bias_down && (plan->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE || rank == 0);
    bool smat[4], svec[4], dmat[4], dvec[4];
    ffn__uses(s->gated, s->gate_up_layout, s->bias_gate, s->bias_up, s->bias_down, smat, svec);
    ffn__uses(s->gated, plan->shard_layout, s->bias_gate, s->bias_up, rank_bd, dmat, dvec);

    // The source, checked.
    struct ffn__mat sm[4] = {0}, sv[4] = {0};
    for (int k = 0; k < 4; k++) {
        const struct ffn_weight *w = ffn__w(weights, k), *b = ffn__b(weights, k);
        if (!smat[k] && w->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: weights.%s is given but the plan's "
                             "block does not use it",
                             fn, ffn__member_names[k]);
        if (!svec[k] && b->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: weights.b_%s is given but the plan's "
                             "block has no such bias",
                             fn, ffn__member_names[k]);
        if (smat[k] && (st = ffn__src_mat(ctx, fn, plan, w, k, &sm[k]))) return st;
        if (svec[k]) {
            int64_t no, ni;
            ffn__logical(k, d, m, &no, &ni);
            if ((st = ffn__src_vec(ctx, fn, b, ffn__member_names[k], no, &sv[k]))) return st;
        }
    }
    // The shard's tensors: dtypes from their first source, one allocation.
    const int first_src = smat[FFN_TP_GATE_UP] ? FFN_TP_GATE_UP
                          : s->gated           ? FFN_TP_GATE
                                               : FFN_TP_UP;
    struct ffn__mat dm[4] = {0}, dv[4] = {0};
    int64_t R[4] = {0}, C[4] = {0}, L[4] = {0};
    size_t off[8] = {0}, total = 0;
    for (int k = 0; k < 4; k++) {
        if (dmat[k]) {
            const int src = k == FFN_TP_DOWN ? FFN_TP_DOWN : smat[k] ? k : first_src;
            int64_t no, ni;
            ffn__logical(k, d, n, &no, &ni);
            const enum ffn_weight_orient o = ffn__plan_orient(plan, k, true);
            R[k] = o == FFN_WEIGHT_OUT_IN ? no : ni;
            C[k] = o == FFN_WEIGHT_OUT_IN ? ni : no;
            dm[k] = (struct ffn__mat){NULL, sm[src].dt, sm[src].es, o, C[k]};
            off[k] = total;
            total +=
                ((size_t)(R[k] * C[k]) * dm[k].es + FFN_TP_ALIGN - 1) / FFN_TP_ALIGN * FFN_TP_ALIGN;
        }
        if (dvec[k]) {
            int64_t no, ni;
            ffn__logical(k, d, n, &no, &ni);
            const int src = svec[k] ? k : smat[FFN_TP_GATE_UP] ? FFN_TP_GATE_UP : FFN_TP_GATE;
            L[k] = no;
            dv[k] = (struct ffn__mat){NULL, sv[src].dt, sv[src].es, FFN_WEIGHT_OUT_IN, 1};
            off[4 + k] = total;
            total += ((size_t)no * dv[k].es + FFN_TP_ALIGN - 1) / FFN_TP_ALIGN * FFN_TP_ALIGN;
        }
    }
    struct ffn_tp_shard *sh = calloc(1, sizeof *sh);
    char *mem = total ? aligned_alloc(FFN_TP_ALIGN, total) : NULL;
    if (!sh || (total && !mem)) {
        free(sh), free(mem);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte shard",
                         fn, total);
    }
    sh->mem = mem;
    for (int k = 0; k < 4; k++) {
        if (dmat[k]) dm[k].p = mem + off[k];
        if (dvec[k]) dv[k].p = mem + off[4 + k];
    }

    // First projection: output j of the gate / up, for j in the rank's columns.
    for (int up = s->gated ? 0 : 1; up < 2; up++)
        for (int64_t jj = 0; jj < n; jj++) {
            enum ffn_tp_member ks, kd;
            int64_t ps, pd;
            ffn_tp_first_pos(s->gated, s->gate_up_layout, s->tp_groups, m, up, c0 + jj, &ks, &ps);
            ffn_tp_first_pos(s->gated, plan->shard_layout, 1, n, up, jj, &kd, &pd);
            ffn__copy_out(&dm[kd], pd, &sm[ks], ps, d);
            if (dvec[kd]) {
                const int kb = svec[ks] ? (int)ks : FFN_TP_GATE_UP;
                ffn__elem(&dv[kd], pd, &sv[kb], ps);
            }
        }
    // Down projection: input j (row-parallel).
    for (int64_t jj = 0; jj < n; jj++)
        ffn__copy_in(&dm[FFN_TP_DOWN], jj, &sm[FFN_TP_DOWN], c0 + jj, d);
    if (dvec[FFN_TP_DOWN])
        for (int64_t o = 0; o < d; o++) ffn__elem(&dv[FFN_TP_DOWN], o, &sv[FFN_TP_DOWN], o);

    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    for (int k = 0; k < 4; k++) {
        if (dmat[k]) {
            struct ffn_weight *t = ffn__wm(&w, k);
            *t = ffn_weight_dense(dm[k].p, dm[k].dt, dm[k].o);
            t->rows = R[k], t->cols = C[k];
        }
        if (dvec[k]) {
            struct ffn_weight *t = ffn__bm(&w, k);
            *t = ffn_weight_dense(dv[k].p, dv[k].dt, FFN_WEIGHT_OUT_IN);
            t->rows = 1, t->cols = L[k];
        }
    }
    sh->w = w;
    *shard_out = sh;
    return FFN_STATUS_OK;
}

const struct ffn_block_weights *ffn_tp_shard_weights(ffn_tp_shard_t sh) {
    return sh ? &sh->w : NULL;
}

void ffn_tp_shard_destroy(ffn_tp_shard_t sh) {
    if (!sh) return;
    free(sh->mem);
    free(sh);
}

// --- gradients back to the whole block's layout ---------------------------------------------

static float *ffn__g(const struct ffn_block_grads *g, int k, bool bias) {
    switch (k) {
    case FFN_TP_GATE: return (float *)(bias ? g->b_gate : g->gate);
    case FFN_TP_UP: return (float *)(bias ? g->b_up : g->up);
    case FFN_TP_GATE_UP: return (float *)(bias ? g->b_gate_up : g->gate_up);
    default: return (float *)(bias ? g->b_down : g->down);
    }
}

enum ffn_status ffn_tp_grads_gather(ffn_ctx_t ctx, ffn_comm_t comm, const struct ffn_tp_plan *plan,
                                    const struct ffn_block_grads *local,
                                    const struct ffn_block_grads *full) {
    static const char fn[] = "ffn_tp_grads_gather";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!comm) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm is NULL", fn);
    // Local checks; every rank then reaches the agreement, whatever it found.
    enum ffn_status st = FFN_STATUS_OK;
    int64_t c0 = 0, n = 0, mask = 0;
    bool smat[4] = {0}, svec[4] = {0}, dmat[4] = {0}, dvec[4] = {0};
    if (!plan || !local || !full)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    else if (local->size < sizeof *local || full->size < sizeof *full)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: grads.size too small (start from "
                       "FFN_BLOCK_GRADS_INIT)",
                       fn);
    else if (local->dtype != FFN_DTYPE_F32 || full->dtype != FFN_DTYPE_F32)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: gradients are gathered in f32 (local.dtype %s, full.dtype %s)", fn,
                       ffn_dtype_name(local->dtype), ffn_dtype_name(full->dtype));
    for (int k = 0; k < 8 && !st; k++)  // host code reads and writes them
        for (int side = 0; side < 2 && !st; side++) {
            const void *p = ffn__g(side ? full : local, k % 4, k >= 4);
            if (p && ffn_tp_mem_is_device(ctx, p))
                st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                               "%s: %s.%s%s is device memory; the gather works on host memory "
                               "(copy the GPU's gradients to the host first)",
                               fn, side ? "full" : "local", k >= 4 ? "b_" : "",
                               ffn__member_names[k % 4]);
        }
    if (!st && !(st = ffn_tp_plan_range(ctx, plan, comm->rank, &c0, &n)) &&
        plan->world != comm->size)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: the plan is for %" PRId64
                       " ranks, the "
                       "communicator has %" PRId64,
                       fn, plan->world, comm->size);
    if (!st) {
        const struct ffn_block_spec *s = &plan->block;
        ffn__uses(s->gated, s->gate_up_layout, s->bias_gate, s->bias_up, s->bias_down, smat, svec);
        ffn__uses(s->gated, plan->shard_layout, s->bias_gate, s->bias_up, s->bias_down, dmat, dvec);
        for (int k = 0; k < 4 && !st; k++)
            for (int b = 0; b < 2 && !st; b++) {
                const bool want = ffn__g(full, k, b) != NULL;
                if (want && !(b ? svec[k] : smat[k]))
                    st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                                   "%s: full.%s%s is set but the "
                                   "block has no such tensor",
                                   fn, b ? "b_" : "", ffn__member_names[k]);
                if (want) mask |= (int64_t)1 << (2 * k + b);
            }
        // The shard members each requested full member needs.
        for (int k = 0; k < 4 && !st; k++)
            for (int b = 0; b < 2 && !st; b++) {
                if (!(mask >> (2 * k + b) & 1)) continue;
                const bool first = k != FFN_TP_DOWN;
                for (int kd = 0; kd < 4 && !st; kd++) {
                    const bool need =
                        first ? kd != FFN_TP_DOWN && (b ? dvec[kd] : dmat[kd]) : kd == FFN_TP_DOWN;
                    if (!need) continue;
                    if (b && kd == FFN_TP_DOWN && comm->rank != 0) continue;  // rank 0's only
                    if (!ffn__g(local, kd, b))
                        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                                       "%s: full.%s%s needs the "
                                       "shard's local.%s%s",
                                       fn, b ? "b_" : "", ffn__member_names[k], b ? "b_" : "",
                                       ffn__member_names[kd]);
                }
            }
    }
    static const char *const what[] = {"the set of gradients"};
    st = ffn_comm_agree_vals(ctx, comm, fn, st, &mask, what, 1);
    if (st) return st;

    const struct ffn_block_spec *s = &plan->block;
    const int64_t d = s->d_model, m = s->d_ff;
    // Zero every requested whole tensor, place this rank's columns, then sum over the ranks.
    struct ffn__mat fm[4], fv[4], lm[4], lv[4];
    int64_t fsize[8] = {0};
    for (int k = 0; k < 4; k++) {
        int64_t no, ni;
        ffn__logical(k, d, m, &no, &ni);
        const enum ffn_weight_orient o = ffn__plan_orient(plan, k, false);
        fm[k] = (struct ffn__mat){(char *)ffn__g(full, k, false), FFN_DTYPE_F32, 4, o,
                                  o == FFN_WEIGHT_OUT_IN ? ni : no};
        fv[k] = (struct ffn__mat){(char *)ffn__g(full, k, true), FFN_DTYPE_F32, 4,
                                  FFN_WEIGHT_OUT_IN, 1};
        fsize[k] = no * ni, fsize[4 + k] = no;
        int64_t lo, li;
        ffn__logical(k, d, n, &lo, &li);
        const enum ffn_weight_orient ol = ffn__plan_orient(plan, k, true);
        lm[k] = (struct ffn__mat){(char *)ffn__g(local, k, false), FFN_DTYPE_F32, 4, ol,
                                  ol == FFN_WEIGHT_OUT_IN ? li : lo};
        lv[k] = (struct ffn__mat){(char *)ffn__g(local, k, true), FFN_DTYPE_F32, 4,
                                  FFN_WEIGHT_OUT_IN, 1};
        if (fm[k].p) memset(fm[k].p, 0, (size_t)fsize[k] * 4);
        if (fv[k].p) memset(fv[k].p, 0, (size_t)fsize[4 + k] * 4);
    }
    for (int up = s->gated ? 0 : 1; up < 2; up++)
        for (int64_t jj = 0; jj < n; jj++) {
            enum ffn_tp_member kf, kl;
            int64_t pf, pl;
            ffn_tp_first_pos(s->gated, s->gate_up_layout, s->tp_groups, m, up, c0 + jj, &kf, &pf);
            ffn_tp_first_pos(s->gated, plan->shard_layout, 1, n, up, jj, &kl, &pl);
            if (fm[kf].p) ffn__copy_out(&fm[kf], pf, &lm[kl], pl, d);
            if (fv[kf].p) ffn__elem(&fv[kf], pf, &lv[kl], pl);
        }
    if (fm[FFN_TP_DOWN].p)
        for (int64_t jj = 0; jj < n; jj++)
            ffn__copy_in(&fm[FFN_TP_DOWN], c0 + jj, &lm[FFN_TP_DOWN], jj, d);
    if (fv[FFN_TP_DOWN].p && comm->rank == 0)
        memcpy(fv[FFN_TP_DOWN].p, lv[FFN_TP_DOWN].p, (size_t)d * 4);
    for (int k = 0; k < 8 && !st; k++) {
        float *p = ffn__g(full, k % 4, k >= 4);
        if (p) st = ffn_comm_allreduce(ctx, comm, p, fsize[k], FFN_COMM_F32, FFN_COMM_SUM, false);
    }
    return st;
}
