// block.c — FFN block objects: validation of the spec and the weight views at the API boundary,
// translation of every stored layout and orientation into GEMM operands (pointer, transpose
// flag, leading dimension), the f32 cache for bf16/f16 weights, and the memory report.
// Forward and backward live in block_exec.c; sizing helpers in block_size.c.
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_impl.h"

// CBLAS takes `int` sizes: every dimension and leading dimension must fit.
#define FFN_BLAS_INT_MAX ((int64_t)INT_MAX)

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
    if (!w->data) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is missing", fn, name);
    if (ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has dtype %d; expected f32, "
                         "bf16 or f16", fn, name, (int)w->dtype);
    if ((unsigned)w->orient >= FFN_WEIGHT_ORIENT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has orientation %d", fn,
                         name, (int)w->orient);
    int64_t R, C;
    ffn__stored_shape(w->orient, in, out, &R, &C);
    const char *ax = w->orient == FFN_WEIGHT_OUT_IN ? "rows" : "columns";
    const int64_t fused_n = w->orient == FFN_WEIGHT_OUT_IN ? w->rows : w->cols;
    if (fused && (w->rows || w->cols) && fused_n % 2 != 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s has %" PRId64 " %s; a fused gate/up "
                         "needs an even count", fn, name, fused_n, ax);
    if ((w->rows || w->cols) && (w->rows != R || w->cols != C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has shape [%" PRId64 ", %" PRId64 "]; the spec needs [%" PRId64
                         ", %" PRId64 "] (%" PRId64 " inputs, %" PRId64 " outputs, stored %s)",
                         fn, name, w->rows, w->cols, R, C, in, out,
                         w->orient == FFN_WEIGHT_OUT_IN ? "[out, in]" : "[in, out]");
    if (w->row_stride < 0 || (w->row_stride != 0 && w->row_stride < C))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s.row_stride=%" PRId64
                         " is less than its %" PRId64 " columns", fn, name, w->row_stride, C);
    const int64_t ld = w->row_stride ? w->row_stride : C;
    if (ld > FFN_BLAS_INT_MAX / 2 || R > FFN_BLAS_INT_MAX ||
        (uint64_t)ld > (uint64_t)SIZE_MAX / ffn_dtype_size(w->dtype) / (uint64_t)R)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is too large (%" PRId64
                         " x %" PRId64 " elements)", fn, name, R, ld);
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__check_vector(ffn_ctx_t ctx, const char *fn, const char *name,
                                         const struct ffn_weight *w, int64_t n) {
    if (!w->data) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: the spec has a bias %s but "
                                   "weights.%s.data is NULL", fn, name, name);
    if (ffn_dtype_size(w->dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has dtype %d", fn, name,
                         (int)w->dtype);
    if (w->rows < 0 || w->cols < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s has a negative shape", fn, name);
    if (w->rows || w->cols) {
        const int64_t len = (w->rows ? w->rows : 1) * (w->cols ? w->cols : 1);
        if ((w->rows > 1 && w->cols > 1) || len != n)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s has shape [%" PRId64 ", %" PRId64
                             "]; the spec needs a vector of %" PRId64, fn, name, w->rows, w->cols, n);
    }
    return FFN_STATUS_OK;
}

// --- f32 cache for bf16 / f16 weights -------------------------------------------------------

// Elements of the dense f32 copy of a stored [R, C] matrix.
static size_t ffn__cache_elems(const struct ffn_weight *w, int64_t R, int64_t C) {
    return w->data && w->dtype != FFN_DTYPE_F32 ? (size_t)R * (size_t)C : 0;
}

// The f32 view of a checked matrix: the caller's memory when f32, else a converted copy taken
// from *cursor. Returns the pointer and its leading dimension.
static const float *ffn__f32_matrix(ffn_ctx_t ctx, const struct ffn_weight *w, int64_t R,
                                    int64_t C, float **cursor, int64_t *ld_out) {
    const int64_t ld = w->row_stride ? w->row_stride : C;
    if (w->dtype == FFN_DTYPE_F32) {
        *ld_out = ld;
        return w->data;
    }
    // The library's own conversion (the identity kernel with bf16/f16 in, f32 out): exact.
    float *p = *cursor;
    const struct ffn_tensor src = ffn_tensor_2d((void *)w->data, w->dtype, R, C, ld);
    const struct ffn_tensor dst = ffn_tensor_2d(p, FFN_DTYPE_F32, R, C, C);
    ffn_tensor_convert(ctx, &dst, &src);  // views checked at create: cannot fail
    *cursor += (size_t)R * (size_t)C;
    *ld_out = C;
    return p;
}

// --- create / destroy -------------------------------------------------------------------------

static enum ffn_status ffn__check_spec(ffn_ctx_t ctx, const char *fn, const struct ffn_block_spec *s) {
    if (s->size < sizeof(struct ffn_block_spec))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec.size=%zu, expected %zu (start from "
                         "FFN_BLOCK_SPEC_INIT)", fn, s->size, sizeof(struct ffn_block_spec));
    if (s->d_model < 1 || s->d_ff < 1 || s->d_model > FFN_BLAS_INT_MAX / 2 ||
        s->d_ff > FFN_BLAS_INT_MAX / 2)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: d_model=%" PRId64 ", d_ff=%" PRId64
                         "; both must be in [1, 2^30)", fn, s->d_model, s->d_ff);
    if ((unsigned)s->act >= FFN_ACT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: act=%d is not an activation", fn, (int)s->act);
    if (!s->gated) {
        if (s->bias_gate)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec.bias_gate is set but the block "
                             "is plain (no gate)", fn);
        return FFN_STATUS_OK;
    }
    if ((unsigned)s->gate_up_layout >= FFN_GATE_UP_LAYOUT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: gate_up_layout=%d is not a layout", fn,
                         (int)s->gate_up_layout);
    if (s->gate_up_layout == FFN_GATE_UP_BLOCKED &&
        (s->tp_groups < 1 || s->d_ff % s->tp_groups != 0))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: d_ff=%" PRId64 " is not a multiple of "
                         "tp_groups=%" PRId64, fn, s->d_ff, s->tp_groups);
    if (s->gate_up_layout != FFN_GATE_UP_SEPARATE && s->bias_gate != s->bias_up)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: a fused gate/up has one bias for both "
                         "halves; spec.bias_gate (%d) and spec.bias_up (%d) must agree", fn,
                         (int)s->bias_gate, (int)s->bias_up);
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
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.size=%zu, expected %zu (start "
                         "from FFN_BLOCK_WEIGHTS_INIT)", fn, w->size, sizeof(struct ffn_block_weights));
    bool mat[4], vec[4];
    ffn__uses(s, mat, vec);
    const int64_t d = s->d_model, m = s->d_ff;
    enum ffn_status st;
    for (int k = 0; k < 4; k++) {
        const struct ffn_weight *t = ffn__weight(w, k);
        if (!mat[k] && t->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is given but a %s block "
                             "does not use it", fn, ffn__names[k],
                             !s->gated ? "plain" : s->gate_up_layout == FFN_GATE_UP_SEPARATE
                                                       ? "separate gate/up" : "fused gate/up");
        if (mat[k]) {
            const int64_t in = k == FFN_BLK_DOWN ? m : d;
            const int64_t out = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            if ((st = ffn__check_matrix(ctx, fn, ffn__names[k], t, in, out, k == FFN_BLK_GATE_UP)))
                return st;
        }
        const struct ffn_weight *b = ffn__bias(w, k);
        if (!vec[k] && b->data)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.%s is given but the spec "
                             "has no such bias", fn, ffn__bias_names[k]);
        if (vec[k]) {
            const int64_t n = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            if ((st = ffn__check_vector(ctx, fn, ffn__bias_names[k], b, n))) return st;
        }
    }
    if (mat[FFN_BLK_GATE_UP] && s->gate_up_layout == FFN_GATE_UP_INTERLEAVED &&
        w->gate_up.orient != FFN_WEIGHT_OUT_IN)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: a row-interleaved gate_up must be stored "
                         "[out, in] (an [in, out] one would need stride-2 columns, which BLAS "
                         "cannot express); transpose it once with `ffn convert`", fn);
    return FFN_STATUS_OK;
}

// Fills the first-projection GEMMs, bias pieces and combine groups for the spec's layout.
// gu: f32 operand of gate_up (fused layouts) or of gate (SEPARATE); up: of up; orient of each.
static void ffn__plan(struct ffn_block *b, const struct ffn_weight *wg, const float *pg, int64_t ldg,
                      const struct ffn_weight *wu, const float *pu, int64_t ldu,
                      const float *bg, const float *bu) {
    const struct ffn_block_spec *s = &b->spec;
    const int64_t d = s->d_model, m = s->d_ff;
    b->n_groups = 1;
    b->gw = m;
    b->gs = 0;
    b->n_bias = 0;
    if (!s->gated || s->gate_up_layout == FFN_GATE_UP_SEPARATE) {
        // up (and gate): one GEMM each, P = [gate | up] (plain: P = a).
        const int64_t up_col = s->gated ? m : 0;
        int k = 0;
        if (s->gated) {
            b->seg[k++] = (struct ffn_blk_seg){{pg, ldg, wg->orient == FFN_WEIGHT_OUT_IN}, 0, m,
                                               FFN_BLK_GATE, 0, wg->orient == FFN_WEIGHT_OUT_IN ? d : m};
            if (bg) b->bias[b->n_bias++] = (struct ffn_blk_bias){bg, 1, 0, m, FFN_BLK_GATE, 0};
        }
        b->seg[k++] = (struct ffn_blk_seg){{pu, ldu, wu->orient == FFN_WEIGHT_OUT_IN}, up_col, m,
                                           FFN_BLK_UP, 0, wu->orient == FFN_WEIGHT_OUT_IN ? d : m};
        if (bu) b->bias[b->n_bias++] = (struct ffn_blk_bias){bu, 1, up_col, m, FFN_BLK_UP, 0};
        b->n_seg = k;
        b->g0 = 0;
        b->u0 = m;
        return;
    }
    const bool t = wg->orient == FFN_WEIGHT_OUT_IN;
    const int64_t gld = t ? d : 2 * m;  // dense leading dimension of the gradient
    switch (s->gate_up_layout) {
    case FFN_GATE_UP_INTERLEAVED:
        // [out, in] rows alternate gate, up: gate = rows 0, 2, 4, … = (p, ld·2), up = (p + ld, ld·2).
        // P keeps [gate | up] so the combine reads contiguous halves.
        b->n_seg = 2;
        b->seg[0] = (struct ffn_blk_seg){{pg, 2 * ldg, true}, 0, m, FFN_BLK_GATE_UP, 0, 2 * d};
        b->seg[1] = (struct ffn_blk_seg){{pg + ldg, 2 * ldg, true}, m, m, FFN_BLK_GATE_UP, d, 2 * d};
        if (bg) {
            b->bias[b->n_bias++] = (struct ffn_blk_bias){bg, 2, 0, m, FFN_BLK_GATE_UP, 0};
            b->bias[b->n_bias++] = (struct ffn_blk_bias){bg + 1, 2, m, m, FFN_BLK_GATE_UP, 1};
        }
        b->g0 = 0;
        b->u0 = m;
        return;
    case FFN_GATE_UP_FUSED:
    case FFN_GATE_UP_FUSED_UP_FIRST:
    case FFN_GATE_UP_BLOCKED:
    default:
        // One GEMM over all 2m outputs; P has the weight's output order.
        b->n_seg = 1;
        b->seg[0] = (struct ffn_blk_seg){{pg, ldg, t}, 0, 2 * m, FFN_BLK_GATE_UP, 0, gld};
        if (bg) b->bias[b->n_bias++] = (struct ffn_blk_bias){bg, 1, 0, 2 * m, FFN_BLK_GATE_UP, 0};
        if (s->gate_up_layout == FFN_GATE_UP_BLOCKED) {
            b->n_groups = s->tp_groups;
            b->gw = m / s->tp_groups;
            b->gs = 2 * b->gw;
            b->g0 = 0;
            b->u0 = b->gw;
        } else {
            const bool gate_first = s->gate_up_layout == FFN_GATE_UP_FUSED;
            b->g0 = gate_first ? 0 : m;
            b->u0 = gate_first ? m : 0;
        }
        return;
    }
}

enum ffn_status ffn_block_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                 const struct ffn_block_weights *weights,
                                 const struct ffn_block_opts *opts, ffn_block_t *block_out) {
    static const char fn[] = "ffn_block_create";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!spec || !weights || !block_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec, weights and block_out must not "
                         "be NULL", fn);
    *block_out = NULL;
#ifndef FFN_HAVE_OPENBLAS
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: this build has no BLAS (install "
                     "libopenblas-dev and reconfigure)", fn);
#endif
    enum ffn_status st;
    if ((st = ffn__check_spec(ctx, fn, spec))) return st;
    if ((st = ffn__check_weights(ctx, fn, spec, weights))) return st;
    struct ffn_block_opts o = FFN_BLOCK_OPTS_INIT;
    if (opts) {
        if (opts->size < sizeof o)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: opts.size=%zu, expected %zu (start "
                             "from FFN_BLOCK_OPTS_INIT)", fn, opts->size, sizeof o);
        o = *opts;
        if ((unsigned)o.schedule >= FFN_BLOCK_SCHEDULE_COUNT || o.tile_rows < 0 || o.max_tokens < 0)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: opts has schedule=%d, tile_rows=%"
                             PRId64 ", max_tokens=%" PRId64 "; expected a schedule and counts ≥ 0",
                             fn, (int)o.schedule, o.tile_rows, o.max_tokens);
    }

    struct ffn_block *b = calloc(1, sizeof *b);
    if (!b) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    b->spec = *spec;
    b->spec.size = sizeof b->spec;
    b->opts = o;
    const int64_t d = spec->d_model, m = spec->d_ff;
    b->pc = spec->gated ? 2 * m : m;

    // Stored shapes, the cache size and the parameter count.
    bool mat[4], vec[4];
    ffn__uses(spec, mat, vec);
    int64_t R[4] = {0}, C[4] = {0}, n_vec[4] = {m, m, 2 * m, d};
    size_t cache = 0;
    for (int k = 0; k < 4; k++) {
        const struct ffn_weight *t = ffn__weight(weights, k), *bv = ffn__bias(weights, k);
        if (mat[k]) {
            const int64_t in = k == FFN_BLK_DOWN ? m : d;
            const int64_t out = k == FFN_BLK_DOWN ? d : k == FFN_BLK_GATE_UP ? 2 * m : m;
            ffn__stored_shape(t->orient, in, out, &R[k], &C[k]);
            cache += ffn__cache_elems(t, R[k], C[k]);
            b->n_params += R[k] * C[k];
            b->weight_bytes += (size_t)(R[k] * C[k]) * ffn_dtype_size(t->dtype);
        }
        if (vec[k]) {
            cache += ffn__cache_elems(bv, 1, n_vec[k]);
            b->n_params += n_vec[k];
            b->weight_bytes += (size_t)n_vec[k] * ffn_dtype_size(bv->dtype);
        }
    }
    if (cache) {
        b->cache = malloc(cache * sizeof(float));
        if (!b->cache) {
            free(b);
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory for the %zu-byte f32 "
                             "cache of the bf16/f16 weights", fn, cache * sizeof(float));
        }
        b->cache_bytes = cache * sizeof(float);
    }
    float *cur = b->cache;
    const float *p[4] = {0}, *bias[4] = {0};
    int64_t ld[4] = {0}, unused;
    for (int k = 0; k < 4; k++) {
        if (mat[k]) p[k] = ffn__f32_matrix(ctx, ffn__weight(weights, k), R[k], C[k], &cur, &ld[k]);
        if (vec[k]) bias[k] = ffn__f32_matrix(ctx, ffn__bias(weights, k), 1, n_vec[k], &cur, &unused);
    }
    const bool fused = mat[FFN_BLK_GATE_UP];
    if (fused)
        ffn__plan(b, &weights->gate_up, p[FFN_BLK_GATE_UP], ld[FFN_BLK_GATE_UP], NULL, NULL, 0,
                  bias[FFN_BLK_GATE_UP], NULL);
    else
        ffn__plan(b, &weights->gate, p[FFN_BLK_GATE], ld[FFN_BLK_GATE], &weights->up, p[FFN_BLK_UP],
                  ld[FFN_BLK_UP], bias[FFN_BLK_GATE], bias[FFN_BLK_UP]);
    const bool dt = weights->down.orient == FFN_WEIGHT_OUT_IN;
    b->down = (struct ffn_blk_mat){p[FFN_BLK_DOWN], ld[FFN_BLK_DOWN], dt};
    b->down_grad_ld = dt ? m : d;
    b->b_down = bias[FFN_BLK_DOWN];
    *block_out = b;
    return FFN_STATUS_OK;
}

void ffn_block_destroy(ffn_block_t block) {
    if (!block) return;
    free(block->cache);
    free(block->P);
    free(block->H);
    free(block->colsum);
    free(block);
}

// --- schedule and memory report -------------------------------------------------------------

int64_t ffn_block_tile_rows(const struct ffn_block *b, int64_t n_tokens) {
    enum ffn_block_schedule s = b->opts.schedule;
    // AUTO: one GEMM then one activation pass measured faster than row tiles at every shape
    // tried on an AMD EPYC Zen 4 (docs/blocks.md: P fits the 32 MiB L3, smaller GEMMs lose).
    if (s == FFN_BLOCK_SCHEDULE_AUTO) s = FFN_BLOCK_SCHEDULE_SEPARATE;
    if (s == FFN_BLOCK_SCHEDULE_SEPARATE || n_tokens <= 0) return n_tokens > 0 ? n_tokens : 1;
    int64_t rows = b->opts.tile_rows;
    if (rows == 0) {
        rows = (int64_t)(FFN_BLOCK_TILE_BYTES / ((size_t)(b->pc + b->spec.d_ff) * sizeof(float)));
        if (rows < FFN_BLOCK_TILE_MIN_ROWS) rows = FFN_BLOCK_TILE_MIN_ROWS;
    }
    return rows < n_tokens ? rows : n_tokens;
}

enum ffn_status ffn_block_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                               struct ffn_block_info *info) {
    static const char fn[] = "ffn_block_info";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!block || !info || n_tokens < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block and info must not be NULL and "
                         "n_tokens (%" PRId64 ") must be ≥ 0", fn, n_tokens);
    if (info->size < sizeof *info)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: info.size=%zu, expected %zu (start from "
                         "FFN_BLOCK_INFO_INIT)", fn, info->size, sizeof *info);
    const size_t T = (size_t)n_tokens, m = (size_t)block->spec.d_ff, pc = (size_t)block->pc;
    const size_t colsum = (pc > (size_t)block->spec.d_model ? pc : (size_t)block->spec.d_model);
    info->n_params = block->n_params;
    info->weight_bytes = block->weight_bytes;
    info->cache_bytes = block->cache_bytes;
    info->saved_bytes_save = T * pc * sizeof(float);
    info->saved_bytes_recompute = 0;
    info->workspace_bytes = T * m * sizeof(float) + colsum * sizeof(double);
    const int64_t rows = ffn_block_tile_rows(block, n_tokens);
    info->schedule = rows < n_tokens ? FFN_BLOCK_SCHEDULE_TILED : FFN_BLOCK_SCHEDULE_SEPARATE;
    info->tile_rows = rows;
    return FFN_STATUS_OK;
}
