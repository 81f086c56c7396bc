// block.c — the CPU FFN block object: options, the plan (block_plan.c), the compute operand of
// each stored tensor (the caller's memory wherever oneDNN has a kernel for its dtype, else a
// converted copy the block owns), the oneDNN primitive cache, and the memory report.
// Forward and backward live in block_exec.c, the GEMMs in block_dnnl.c, sizing in block_size.c;
// the public entry points (block_api.c) reach these through ffn_block_cpu, the CPU backend's
// block table.
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_impl.h"

// The compute dtype of a stored matrix: its own where oneDNN multiplies it (f32, bf16), f32 for
// f16 (oneDNN 2.6 has no f16 matmul on CPUs: measured, docs/blocks.md; f16 → f32 is exact), and
// bf16 for every dtype when opts.math is FFN_BLOCK_MATH_BF16.
static enum ffn_dtype ffn__compute_dtype(struct ffn_mm_cache *mm, enum ffn_dtype stored,
                                         enum ffn_block_math math) {
    enum ffn_dtype want = math == FFN_BLOCK_MATH_BF16 ? FFN_DTYPE_BF16 : stored;
    if (want != FFN_DTYPE_F32 && !ffn_mm_has_dtype(mm, want)) want = FFN_DTYPE_F32;
    return want;
}

// Bytes of the block's copies for compute dtypes cd: each piece 64-byte aligned.
static size_t ffn__cache_size(const struct ffn_block_plan *p, const enum ffn_dtype cd[]) {
    size_t bytes = 0;
    for (int k = 0; k < FFN_BLK_COUNT; k++) {
        if (p->mat[k].p && cd[k] != p->mat[k].dtype)
            bytes +=
                ((size_t)(p->mat[k].R * p->mat[k].C) * ffn_dtype_size(cd[k]) + 63) & ~(size_t)63;
        if (p->vec[k].p && p->vec[k].dtype != FFN_DTYPE_F32)
            bytes += ((size_t)p->vec[k].C * 4 + 63) & ~(size_t)63;
    }
    return bytes;
}

static enum ffn_status ffn__check_opts(ffn_ctx_t ctx, const char *fn,
                                       const struct ffn_block_opts *opts,
                                       struct ffn_block_opts *o) {
    enum ffn_status st = ffn_block_opts_read(ctx, fn, opts, o);
    if (st) return st;
    if (o->math == FFN_BLOCK_MATH_TF32)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: opts.math=FFN_BLOCK_MATH_TF32: the CPU "
                         "has no tf32 arithmetic (oneDNN 2.6 accepts the mode and runs f32); use "
                         "FFN_BLOCK_MATH_STRICT or FFN_BLOCK_MATH_BF16",
                         fn);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_cpu_block_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                     const struct ffn_block_weights *weights,
                                     const struct ffn_block_opts *opts, ffn_block_t *block_out) {
    static const char fn[] = "ffn_block_create";
    struct ffn_block_opts o;
    enum ffn_status st;
    if ((st = ffn__check_opts(ctx, fn, opts, &o))) return st;
    struct ffn_block *b = calloc(1, sizeof *b);
    if (!b) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    b->opts = o;
    b->hdr =
        (struct ffn_block_hdr){.impl = &ffn_block_cpu, .backend = FFN_BACKEND_CPU, .device = -1};
    if ((st = ffn_block_plan_make(ctx, fn, spec, weights, &b->plan)) ||
        (st = ffn_mm_cache_create(ctx, fn, &b->mm))) {
        free(b);
        return st;
    }
    const struct ffn_block_plan *p = &b->plan;

    // Compute operands: matrices in their compute dtype (a dense copy where it differs from the
    // stored one), biases in f32. The first projection's GEMMs share their inputs (x, dP): gate
    // and up of different compute dtypes (a mixed checkpoint) both run in f32.
    enum ffn_dtype cd[FFN_BLK_COUNT] = {0};
    for (int k = 0; k < FFN_BLK_COUNT; k++) {
        b->op[k] = p->mat[k];
        if (p->mat[k].p) cd[k] = ffn__compute_dtype(b->mm, p->mat[k].dtype, o.math);
    }
    if (p->mat[FFN_BLK_GATE].p && cd[FFN_BLK_GATE] != cd[FFN_BLK_UP])
        cd[FFN_BLK_GATE] = cd[FFN_BLK_UP] = FFN_DTYPE_F32;
    const size_t cache = ffn__cache_size(p, cd);
    if (cache) {
        b->cache = malloc(cache);
        if (!b->cache) {
            ffn_cpu_block_destroy(b);
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                             "%s: out of memory for the %zu-byte "
                             "weight copy",
                             fn, cache);
        }
        b->cache_bytes = cache;
    }
    // Conversions by the library's own kernel (the identity, another dtype out): f16 → f32 is
    // exact, → bf16 rounds to nearest even. Views were checked by the plan: cannot fail.
    char *cur = b->cache;
    for (int k = 0; k < FFN_BLK_COUNT; k++) {
        const struct ffn_blk_stored *s = &p->mat[k];
        if (s->p && cd[k] != s->dtype) {
            const struct ffn_tensor src = ffn_tensor_2d((void *)s->p, s->dtype, s->R, s->C, s->ld);
            const struct ffn_tensor dst = ffn_tensor_2d(cur, cd[k], s->R, s->C, s->C);
            ffn_tensor_convert(ctx, &dst, &src);
            b->op[k].p = cur, b->op[k].dtype = cd[k], b->op[k].ld = s->C;
            cur += ((size_t)(s->R * s->C) * ffn_dtype_size(cd[k]) + 63) & ~(size_t)63;
        }
        const struct ffn_blk_stored *v = &p->vec[k];
        if (v->p && v->dtype != FFN_DTYPE_F32) {
            const struct ffn_tensor src = ffn_tensor_vec((void *)v->p, v->dtype, v->C);
            const struct ffn_tensor dst = ffn_tensor_vec(cur, FFN_DTYPE_F32, v->C);
            ffn_tensor_convert(ctx, &dst, &src);
            b->bias[k] = (const float *)cur;
            cur += ((size_t)v->C * 4 + 63) & ~(size_t)63;
        } else {
            b->bias[k] = v->p;
        }
    }
    if (o.pack_weights) ffn_block_pack_weights(b);
    *block_out = b;
    return FFN_STATUS_OK;
}

static void ffn__buf_free(struct ffn_blk_buf *b) {
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

void ffn_cpu_block_destroy(ffn_block_t block) {
    if (!block) return;
    ffn_mm_cache_destroy(block->mm);
    free(block->cache);
    struct ffn_blk_buf *bufs[] = {&block->P,    &block->S, &block->H, &block->D, &block->X[0],
                                  &block->X[1], &block->W, &block->Y, &block->Z};
    for (size_t i = 0; i < FFN_ARRAY_LEN(bufs); i++) ffn__buf_free(bufs[i]);
    free(block->colsum);
    free(block);
}

// --- schedule and memory report -------------------------------------------------------------

int64_t ffn_block_tile_rows(const struct ffn_block *b, int64_t n_tokens) {
    enum ffn_block_schedule s = b->opts.schedule;
    // AUTO: one GEMM over all tokens then one activation pass measured faster than row tiles at
    // every shape and token count measured (docs/blocks.md, "Tiled or separate"): the matrix
    // engines lose more on short GEMMs than the activation pass gains from a hot tile.
    if (s == FFN_BLOCK_SCHEDULE_AUTO) s = FFN_BLOCK_SCHEDULE_SEPARATE;
    if (s == FFN_BLOCK_SCHEDULE_SEPARATE || n_tokens <= 0) return n_tokens > 0 ? n_tokens : 1;
    int64_t rows = b->opts.tile_rows;
    if (rows == 0) {
        const size_t row_bytes = (size_t)(b->plan.pc + b->plan.spec.d_ff) * sizeof(float);
        rows = (int64_t)(FFN_BLOCK_TILE_BYTES / row_bytes);
        if (rows < FFN_BLOCK_TILE_MIN_ROWS) rows = FFN_BLOCK_TILE_MIN_ROWS;
    }
    return rows < n_tokens ? rows : n_tokens;
}

enum ffn_status ffn_cpu_block_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                                   struct ffn_block_info *info) {
    const struct ffn_block_plan *p = &block->plan;
    const size_t T = (size_t)n_tokens, m = (size_t)p->spec.d_ff, pc = (size_t)p->pc;
    const size_t colsum = (pc > (size_t)p->spec.d_model ? pc : (size_t)p->spec.d_model);
    info->n_params = p->n_params;
    info->weight_bytes = p->weight_bytes;
    info->cache_bytes = block->cache_bytes + ffn_mm_packed_bytes(block->mm);
    // SAVE keeps P (in save_dtype) and h (in W_down's compute dtype).
    info->saved_bytes_save = T * pc * ffn_dtype_size(block->opts.save_dtype) +
                             T * m * ffn_dtype_size(block->op[FFN_BLK_DOWN].dtype);
    info->saved_bytes_recompute = 0;
    info->workspace_bytes = T * m * sizeof(float) + colsum * sizeof(double);
    const int64_t rows = ffn_block_tile_rows(block, n_tokens);
    info->schedule = rows < n_tokens ? FFN_BLOCK_SCHEDULE_TILED : FFN_BLOCK_SCHEDULE_SEPARATE;
    info->tile_rows = rows;
    info->compute_dtype = block->op[p->seg[0].w.which].dtype;
    snprintf(info->gemm_impl, sizeof info->gemm_impl, "%s", block->gemm_impl);
    return FFN_STATUS_OK;
}

const struct ffn_block_i ffn_block_cpu = {
    .create = ffn_cpu_block_create,
    .destroy = ffn_cpu_block_destroy,
    .forward = ffn_cpu_block_forward,
    .backward = ffn_cpu_block_backward,
    .info = ffn_cpu_block_info,
};
