// block_plan.c — the backend-neutral plan of an FFN block: validation of the spec and the weight
// views at the API boundary, and the translation of every stored layout and orientation into
// GEMM operands (stored member, first row, leading-dimension multiple, transpose flag), bias
// pieces and gated-combine groups; and the checks of the other arguments (options, activation
// views, gradients) that every backend's block makes the same way. Names no GEMM library: the CPU
// block (block.c) and the CUDA block (src/cuda/cuda_block.c) build their GEMMs from the same plan.
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "block/block_impl.h"

// Sizes a GEMM library with `int` dimensions (cuBLAS, and oneDNN's own int-sized JIT paths)
// takes: every dimension and leading dimension must stay below 2^31.
#define FFN_BLK_DIM_MAX ((int64_t)INT_MAX)

static const char *const ffn__names[] = {"gate", "up", "gate_up", "down"};
static const char *const ffn__bias_names[] = {"b_gate", "b_up", "b_gate_up", "b_down"};

static const struct ffn_weight *ffn__weight(const struct ffn_block_weights *w, int which) {
    const struct ffn_weight *t[] = {&w->gate, &w->up, &w->gate_up, &w->down};
    return t[which];
}

static const struct ffn_weight *ffn__bias(const struct ffn_block_weights *w, int which) {
    const struct ffn_weight *t[] = {&w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    return t[which];
}

// Stored shape [R, C] of a matrix whose logical map is in → out, by orientation.
static void ffn__stored_shape(enum ffn_weight_orient o, int64_t in, int64_t out, int64_t *R,
                              int64_t *C) {
    *R = o == FFN_WEIGHT_OUT_IN ? out : in;
    *C = o == FFN_WEIGHT_OUT_IN ? in : out;
}

// Checks one weight matrix: present, dtype and orientation known, the declared shape (if any)
// equal to the spec's, row_stride ≥ C, byte extent representable. `fused` names the stored axis
// that holds 2·d_ff outputs so an odd count gets its own message.
static enum ffn_status ffn__check_matrix(ffn_ctx_t ctx, const char *fn, const char *name,
                                         const struct ffn_weight *w, int64_t in, int64_t out,
                                         bool fused) {
    if (!w->data)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is missing", fn, name);
    if (ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.%s has dtype %d; expected f32, "
                         "bf16 or f16",
                         fn, name, (int)w->dtype);
    if ((unsigned)w->orient >= FFN_WEIGHT_ORIENT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has orientation %d", fn, name,
                         (int)w->orient);
    int64_t R, C;
    ffn__stored_shape(w->orient, in, out, &R, &C);
    const char *ax = w->orient == FFN_WEIGHT_OUT_IN ? "rows" : "columns";
    const int64_t fused_n = w->orient == FFN_WEIGHT_OUT_IN ? w->rows : w->cols;
    if (fused && (w->rows || w->cols) && fused_n % 2 != 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has %" PRId64
                         " %s; a fused gate/up "
                         "needs an even count",
                         fn, name, fused_n, ax);
    if ((w->rows || w->cols) && (w->rows != R || w->cols != C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has shape [%" PRId64 ", %" PRId64 "]; the spec needs [%" PRId64
                         ", %" PRId64 "] (%" PRId64 " inputs, %" PRId64 " outputs, stored %s)",
                         fn, name, w->rows, w->cols, R, C, in, out,
                         w->orient == FFN_WEIGHT_OUT_IN ? "[out, in]" : "[in, out]");
    if (w->row_stride < 0 || (w->row_stride != 0 && w->row_stride < C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.%s.row_stride=%" PRId64 " is less than its %" PRId64
                         " columns",
                         fn, name, w->row_stride, C);
    const int64_t ld = w->row_stride ? w->row_stride : C;
    if (ld > FFN_BLK_DIM_MAX / 2 || R > FFN_BLK_DIM_MAX ||
        (uint64_t)ld > (uint64_t)SIZE_MAX / ffn_dtype_size(w->dtype) / (uint64_t)R)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.%s is too large (%" PRId64 " x %" PRId64 " elements)", fn,
                         name, R, ld);
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__check_vector(ffn_ctx_t ctx, const char *fn, const char *name,
                                         const struct ffn_weight *w, int64_t n) {
    if (!w->data)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: the spec has a bias %s but "
                         "weights.%s.data is NULL",
                         fn, name, name);
    if (ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has dtype %d", fn, name,
                         (int)w->dtype);
    if (w->rows < 0 || w->cols < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has a negative shape", fn,
                         name);
    if (w->rows || w->cols) {
        const int64_t len = (w->rows ? w->rows : 1) * (w->cols ? w->cols : 1);
        if ((w->rows > 1 && w->cols > 1) || len != n)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s has shape [%" PRId64 ", %" PRId64
                             "]; the spec needs a vector of %" PRId64,
                             fn, name, w->rows, w->cols, n);
    }
    return FFN_STATUS_OK;
}

// --- create / destroy -------------------------------------------------------------------------

static enum ffn_status ffn__check_spec(ffn_ctx_t ctx, const char *fn,
                                       const struct ffn_block_spec *s) {
    if (s->size < sizeof(struct ffn_block_spec))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: spec.size=%zu, expected %zu (start from "
                         "FFN_BLOCK_SPEC_INIT)",
                         fn, s->size, sizeof(struct ffn_block_spec));
    if (s->d_model < 1 || s->d_ff < 1 || s->d_model > FFN_BLK_DIM_MAX / 2 ||
        s->d_ff > FFN_BLK_DIM_MAX / 2)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_model=%" PRId64 ", d_ff=%" PRId64 "; both must be in [1, 2^30)", fn,
                         s->d_model, s->d_ff);
    if ((unsigned)s->act >= FFN_ACT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: act=%d is not an activation", fn,
                         (int)s->act);
    if (!s->gated) {
        if (s->bias_gate)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: spec.bias_gate is set but the block "
                             "is plain (no gate)",
                             fn);
        return FFN_STATUS_OK;
    }
    if ((unsigned)s->gate_up_layout >= FFN_GATE_UP_LAYOUT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: gate_up_layout=%d is not a layout", fn,
                         (int)s->gate_up_layout);
    if (s->gate_up_layout == FFN_GATE_UP_BLOCKED &&
        (s->tp_groups < 1 || s->d_ff % s->tp_groups != 0))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_ff=%" PRId64
                         " is not a multiple of "
                         "tp_groups=%" PRId64,
                         fn, s->d_ff, s->tp_groups);
    if (s->gate_up_layout != FFN_GATE_UP_SEPARATE && s->bias_gate != s->bias_up)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: a fused gate/up has one bias for both "
                         "halves; spec.bias_gate (%d) and spec.bias_up (%d) must agree",
                         fn, (int)s->bias_gate, (int)s->bias_up);
    return FFN_STATUS_OK;
}

// Which weight members and biases this spec uses (true) — everything else must be absent.
static void ffn__uses(const struct ffn_block_spec *s, bool mat[4], bool vec[4]) {
    const bool fused = s->gated && s->gate_up_layout != FFN_GATE_UP_SEPARATE;
    mat[FFN_BLK_GATE] = s->gated && !fused;
    mat[FFN_BLK_UP] = !fused;
    mat[FFN_BLK_GATE_UP] = fused;
    mat[FFN_BLK_DOWN] = true;
    vec[FFN_BLK_GATE] = s->gated && !fused && s->bias_gate;
    vec[FFN_BLK_UP] = !fused && s->bias_up;
    vec[FFN_BLK_GATE_UP] = fused && s->bias_up;
    vec[FFN_BLK_DOWN] = s->bias_down;
}

static enum ffn_status ffn__check_weights(ffn_ctx_t ctx, const char *fn,
                                          const struct ffn_block_spec *s,
                                          const struct ffn_block_weights *w) {
    if (w->size < sizeof(struct ffn_block_weights))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: weights.size=%zu, expected %zu (start "
                         "from FFN_BLOCK_WEIGHTS_INIT)",
                         fn, w->size, sizeof(struct ffn_block_weights));
    bool mat[4], vec[4];
    ffn__uses(s, mat, vec);
    const int64_t d = s->d_model, m = s->d_ff;
    enum ffn_status st;
    for (int k = 0; k < 4; k++) {
        const struct ffn_weight *t = ffn__weight(w, k);
        if (!mat[k] && t->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: weights.%s is given but a %s block "
                             "does not use it",
                             fn, ffn__names[k],
                             !s->gated                                   ? "plain"
                             : s->gate_up_layout == FFN_GATE_UP_SEPARATE ? "separate gate/up"
                                                                         : "fused gate/up");
        if (mat[k]) {
            const int64_t in = k == FFN_BLK_DOWN ? m : d;
            const int64_t out = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            if ((st = ffn__check_matrix(ctx, fn, ffn__names[k], t, in, out, k == FFN_BLK_GATE_UP)))
                return st;
        }
        const struct ffn_weight *b = ffn__bias(w, k);
        if (!vec[k] && b->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: weights.%s is given but the spec "
                             "has no such bias",
                             fn, ffn__bias_names[k]);
        if (vec[k]) {
            const int64_t n = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            if ((st = ffn__check_vector(ctx, fn, ffn__bias_names[k], b, n))) return st;
        }
    }
    if (mat[FFN_BLK_GATE_UP] && s->gate_up_layout == FFN_GATE_UP_INTERLEAVED &&
        w->gate_up.orient != FFN_WEIGHT_OUT_IN)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: a row-interleaved gate_up must be stored "
                         "[out, in] (an [in, out] one would need stride-2 columns, which no GEMM "
                         "library takes); transpose it once with `ffn convert`",
                         fn);
    return FFN_STATUS_OK;
}

// Fills the first-projection GEMMs, bias pieces and combine groups for the spec's layout.
static void ffn__plan_first(struct ffn_block_plan *p) {
    const struct ffn_block_spec *s = &p->spec;
    const int64_t d = s->d_model, m = s->d_ff;
    p->n_groups = 1;
    p->gw = m;
    p->gs = 0;
    p->n_bias = 0;
    p->g_plane = p->u_plane = 0;
    p->g0 = p->u0 = 0;
    const bool fused = s->gated && s->gate_up_layout != FFN_GATE_UP_SEPARATE;
    if (!fused) {
        // up (and gate): one GEMM each into its own plane of P (plain: P = a).
        int k = 0;
        if (s->gated) {
            const bool t = p->mat[FFN_BLK_GATE].orient == FFN_WEIGHT_OUT_IN;
            p->seg[k] = (struct ffn_blk_seg){{FFN_BLK_GATE, 0, 1, t}, m, 0, t ? d : m};
            if (p->vec[FFN_BLK_GATE].p)
                p->bias[p->n_bias++] = (struct ffn_blk_bias){FFN_BLK_GATE, 0, 1, k, 0, m};
            k++;
        }
        const bool t = p->mat[FFN_BLK_UP].orient == FFN_WEIGHT_OUT_IN;
        p->seg[k] = (struct ffn_blk_seg){{FFN_BLK_UP, 0, 1, t}, m, 0, t ? d : m};
        if (p->vec[FFN_BLK_UP].p)
            p->bias[p->n_bias++] = (struct ffn_blk_bias){FFN_BLK_UP, 0, 1, k, 0, m};
        p->n_seg = k + 1;
        p->p_ld = m;
        p->u_plane = k;  // gate (when gated) in plane 0, up in the last
        return;
    }
    const bool t = p->mat[FFN_BLK_GATE_UP].orient == FFN_WEIGHT_OUT_IN;
    const bool has_b = p->vec[FFN_BLK_GATE_UP].p != NULL;
    if (s->gate_up_layout == FFN_GATE_UP_INTERLEAVED) {
        // [out, in] rows alternate gate, up: gate = rows 0, 2, 4, … (first row 0, ld·2), up =
        // (first row 1, ld·2); one plane each, so the combine reads dense rows. The gradient
        // of gate row j is dense row 2j: offset 0 / d, leading dimension 2d.
        p->n_seg = 2;
        p->seg[0] = (struct ffn_blk_seg){{FFN_BLK_GATE_UP, 0, 2, true}, m, 0, 2 * d};
        p->seg[1] = (struct ffn_blk_seg){{FFN_BLK_GATE_UP, 1, 2, true}, m, d, 2 * d};
        if (has_b) {
            p->bias[p->n_bias++] = (struct ffn_blk_bias){FFN_BLK_GATE_UP, 0, 2, 0, 0, m};
            p->bias[p->n_bias++] = (struct ffn_blk_bias){FFN_BLK_GATE_UP, 1, 2, 1, 0, m};
        }
        p->p_ld = m;
        p->u_plane = 1;
        return;
    }
    // FUSED, FUSED_UP_FIRST, BLOCKED: one GEMM over all 2m outputs; P has the weight's order.
    p->n_seg = 1;
    p->seg[0] = (struct ffn_blk_seg){{FFN_BLK_GATE_UP, 0, 1, t}, 2 * m, 0, t ? d : 2 * m};
    if (has_b) p->bias[p->n_bias++] = (struct ffn_blk_bias){FFN_BLK_GATE_UP, 0, 1, 0, 0, 2 * m};
    p->p_ld = 2 * m;
    if (s->gate_up_layout == FFN_GATE_UP_BLOCKED) {
        p->n_groups = s->tp_groups;
        p->gw = m / s->tp_groups;
        p->gs = 2 * p->gw;
        p->u0 = p->gw;
    } else {
        const bool gate_first = s->gate_up_layout == FFN_GATE_UP_FUSED;
        p->g0 = gate_first ? 0 : m;
        p->u0 = gate_first ? m : 0;
    }
}

enum ffn_status ffn_block_plan_make(ffn_ctx_t ctx, const char *fn,
                                    const struct ffn_block_spec *spec,
                                    const struct ffn_block_weights *weights,
                                    struct ffn_block_plan *p) {
    enum ffn_status st;
    if ((st = ffn__check_spec(ctx, fn, spec))) return st;
    if ((st = ffn__check_weights(ctx, fn, spec, weights))) return st;
    memset(p, 0, sizeof *p);
    p->spec = *spec;
    p->spec.size = sizeof p->spec;
    const int64_t d = spec->d_model, m = spec->d_ff;
    p->pc = spec->gated ? 2 * m : m;
    bool mat[4], vec[4];
    ffn__uses(spec, mat, vec);
    const int64_t n_vec[4] = {m, m, 2 * m, d};
    for (int k = 0; k < FFN_BLK_COUNT; k++) {
        const struct ffn_weight *t = ffn__weight(weights, k), *bv = ffn__bias(weights, k);
        if (mat[k]) {
            const int64_t in = k == FFN_BLK_DOWN ? m : d;
            const int64_t out = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            struct ffn_blk_stored *s = &p->mat[k];
            s->p = t->data;
            s->dtype = t->dtype;
            s->orient = t->orient;
            ffn__stored_shape(t->orient, in, out, &s->R, &s->C);
            s->ld = t->row_stride ? t->row_stride : s->C;
            p->n_params += s->R * s->C;
            p->weight_bytes += (size_t)(s->R * s->C) * ffn_dtype_size(t->dtype);
        }
        if (vec[k]) {
            p->vec[k] = (struct ffn_blk_stored){bv->data, bv->dtype, FFN_WEIGHT_OUT_IN,
                                                1,        n_vec[k],  n_vec[k]};
            p->n_params += n_vec[k];
            p->weight_bytes += (size_t)n_vec[k] * ffn_dtype_size(bv->dtype);
        }
    }
    ffn__plan_first(p);
    const bool dt = p->mat[FFN_BLK_DOWN].orient == FFN_WEIGHT_OUT_IN;
    p->down = (struct ffn_blk_mat){FFN_BLK_DOWN, 0, 1, dt};
    p->down_grad_ld = dt ? m : d;
    p->has_b_down = vec[FFN_BLK_DOWN];
    return FFN_STATUS_OK;
}

// --- argument checks every backend's block shares ---------------------------------------------

enum ffn_status ffn_block_opts_read(ffn_ctx_t ctx, const char *fn,
                                    const struct ffn_block_opts *opts, struct ffn_block_opts *o) {
    *o = (struct ffn_block_opts)FFN_BLOCK_OPTS_INIT;
    if (!opts) return FFN_STATUS_OK;
    // Callers built against an older header pass a shorter struct: take the prefix they know.
    const size_t min = offsetof(struct ffn_block_opts, max_tokens) + sizeof o->max_tokens;
    if (opts->size < min || opts->size > sizeof *o)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: opts.size=%zu, expected %zu (start "
                         "from FFN_BLOCK_OPTS_INIT)",
                         fn, opts->size, sizeof *o);
    memcpy(o, opts, opts->size);
    o->size = sizeof *o;
    if ((unsigned)o->schedule >= FFN_BLOCK_SCHEDULE_COUNT || o->tile_rows < 0 || o->max_tokens < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: opts has schedule=%d, tile_rows=%" PRId64 ", max_tokens=%" PRId64
                         "; expected a schedule and counts ≥ 0",
                         fn, (int)o->schedule, o->tile_rows, o->max_tokens);
    if ((unsigned)o->math >= FFN_BLOCK_MATH_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: opts.math=%d is not an ffn_block_math",
                         fn, (int)o->math);
    if (o->save_dtype != FFN_DTYPE_F32 && o->save_dtype != FFN_DTYPE_BF16)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: opts.save_dtype=%s; the saved "
                         "pre-activations are f32 or bf16",
                         fn, ffn_dtype_name(o->save_dtype));
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_check_act(ffn_ctx_t ctx, const char *fn, const char *name,
                                    const struct ffn_tensor *t, int64_t d, int64_t rows) {
    if (!t) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s is NULL", fn, name);
    enum ffn_status st = ffn_tensor_check(ctx, fn, name, t);
    if (st) return st;
    if (t->dtype != FFN_DTYPE_F32 && t->dtype != FFN_DTYPE_BF16)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s is %s; blocks take f32 or bf16 "
                         "activations",
                         fn, name, ffn_dtype_name(t->dtype));
    if (t->cols != d)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s.cols=%" PRId64
                         ", the block has "
                         "d_model=%" PRId64,
                         fn, name, t->cols, d);
    if (rows >= 0 && t->rows != rows)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has %" PRId64 " rows, expected %" PRId64
                         " (the tokens of the forward)",
                         fn, name, t->rows, rows);
    if (t->rows > (int64_t)(INT32_MAX / 2) || t->row_stride > (int64_t)(INT32_MAX / 2))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has %" PRId64 " rows (row_stride %" PRId64
                         "); at most 2^30 fit a GEMM call",
                         fn, name, t->rows, t->row_stride);
    return FFN_STATUS_OK;
}

bool ffn_block_views_overlap(const struct ffn_tensor *a, const struct ffn_tensor *b) {
    if (a->rows == 0 || a->cols == 0 || b->rows == 0 || b->cols == 0) return false;
    uintptr_t alo, ahi, blo, bhi;
    ffn_tensor_extent(a, &alo, &ahi);
    ffn_tensor_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

bool ffn_block_same_view(const struct ffn_tensor *a, const struct ffn_tensor *b) {
    return a->data == b->data && a->dtype == b->dtype && a->rows == b->rows && a->cols == b->cols &&
           (a->rows <= 1 || a->row_stride == b->row_stride);
}

void *ffn_block_grad_member(const struct ffn_block_grads *g, enum ffn_blk_which w, bool bias) {
    switch (w) {
    case FFN_BLK_GATE: return bias ? g->b_gate : g->gate;
    case FFN_BLK_UP: return bias ? g->b_up : g->up;
    case FFN_BLK_GATE_UP: return bias ? g->b_gate_up : g->gate_up;
    default: return bias ? g->b_down : g->down;
    }
}

enum ffn_status ffn_block_check_grads(ffn_ctx_t ctx, const char *fn,
                                      const struct ffn_block_plan *pl,
                                      const struct ffn_block_grads *g, enum ffn_dtype *gdt) {
    const size_t min = offsetof(struct ffn_block_grads, accumulate) + sizeof g->accumulate;
    if (g->size < min)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: grads.size=%zu, expected %zu (start "
                         "from FFN_BLOCK_GRADS_INIT)",
                         fn, g->size, sizeof *g);
    // An older caller's struct ends before `dtype`: its gradients are f32.
    *gdt = g->size >= sizeof *g ? g->dtype : FFN_DTYPE_F32;
    if (*gdt != FFN_DTYPE_F32 && *gdt != FFN_DTYPE_BF16)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: grads.dtype=%s; weight gradients are "
                         "f32 or bf16",
                         fn, ffn_dtype_name(*gdt));
    bool has[4] = {false, false, false, true}, has_b[4] = {false, false, false, pl->has_b_down};
    for (int k = 0; k < pl->n_seg; k++) has[pl->seg[k].w.which] = true;
    for (int k = 0; k < pl->n_bias; k++) has_b[pl->bias[k].which] = true;
    for (int k = 0; k < 4; k++) {
        if (!has[k] && ffn_block_grad_member(g, (enum ffn_blk_which)k, false))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: grads.%s is set but the block has "
                             "no %s weight",
                             fn, ffn__names[k], ffn__names[k]);
        if (!has_b[k] && ffn_block_grad_member(g, (enum ffn_blk_which)k, true))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: grads.b_%s is set but the block has "
                             "no %s bias",
                             fn, ffn__names[k], ffn__names[k]);
    }
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_check_forward(ffn_ctx_t ctx, const char *fn,
                                        const struct ffn_block_plan *pl, const struct ffn_tensor *y,
                                        const struct ffn_tensor *x) {
    const int64_t d = pl->spec.d_model;
    enum ffn_status st;
    if ((st = ffn_block_check_act(ctx, fn, "x", x, d, -1)) ||
        (st = ffn_block_check_act(ctx, fn, "y", y, d, x->rows)))
        return st;
    if (ffn_block_views_overlap(x, y))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: y overlaps x; the block needs x intact "
                         "until the end (and for the backward)",
                         fn);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_check_backward(ffn_ctx_t ctx, const char *fn,
                                         const struct ffn_block_plan *pl,
                                         enum ffn_block_policy pending, const struct ffn_tensor *x,
                                         int64_t T, const struct ffn_block_grads *g,
                                         const struct ffn_tensor *dx, const struct ffn_tensor *dy,
                                         enum ffn_dtype *gdt) {
    const int64_t d = pl->spec.d_model;
    enum ffn_status st;
    if ((st = ffn_block_check_grads(ctx, fn, pl, g, gdt))) return st;
    if (pending == FFN_BLOCK_POLICY_NONE)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: no pending training forward (call "
                         "ffn_block_forward with FFN_BLOCK_POLICY_SAVE or _RECOMPUTE first; a "
                         "backward consumes it)",
                         fn);
    if ((st = ffn_block_check_act(ctx, fn, "dy", dy, d, T))) return st;
    if (dx) {
        if ((st = ffn_block_check_act(ctx, fn, "dx", dx, d, T))) return st;
        if ((ffn_block_views_overlap(dx, dy) && !ffn_block_same_view(dx, dy)) ||
            (ffn_block_views_overlap(dx, x) && !ffn_block_same_view(dx, x)))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: dx overlaps dy or the forward's x "
                             "without being the same view",
                             fn);
    }
    return FFN_STATUS_OK;
}

bool ffn_block_need_dp(const struct ffn_block_plan *pl, const struct ffn_block_grads *g,
                       bool want_dx) {
    bool need = want_dx;
    for (int k = 0; k < pl->n_seg; k++)
        need |= ffn_block_grad_member(g, pl->seg[k].w.which, false) != NULL;
    for (int k = 0; k < pl->n_bias; k++)
        need |= ffn_block_grad_member(g, pl->bias[k].which, true) != NULL;
    return need;
}
