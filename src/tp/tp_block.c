// tp_block.c — a tensor-parallel FFN block: this rank's block (its columns of gate / up, its
// rows of down, made by the block layer as any other block, on the context's backend) plus one
// all-reduce of y in the forward and one of dx in the backward. Weight gradients stay on their
// rank. Every entry point is collective and ends in an agreement step, so a failure on one rank
// (a bad view, no memory) is an error on every rank, never a rank left waiting in an all-reduce.
// Nothing here depends on where the activations lie: a CPU context with an MPI communicator, or
// a CUDA context with an NCCL communicator (device pointers, everything queued on the context's
// stream); the operations on activations go through tp_dev.c.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tp/tp_impl.h"

struct ffn_tp_block {
    struct ffn_comm *comm;
    struct ffn_tp_plan plan;
    ffn_block_t local;
    int64_t d_model;
    struct ffn_tp_mem mem;  // the context's backend and device at create: every buffer's home
    bool bias_after;        // FFN_TP_DOWN_BIAS_AFTER_REDUCE with a b_down: added after the reduce
    bool bias_here;         // this rank's local block adds b_down itself (RANK0, rank 0)
    float *b_down;          // [d_model] f32 copy (bias_after), in the context's memory
    void *pack;             // a strided y / dx packed for the all-reduce
    size_t pack_cap;        // bytes
    void *scratch;          // the GPU's partial column sums (db_down)
    size_t scratch_cap;     // bytes
};

// INVALID_ARG unless ctx computes where the block's buffers lie (the backend and device of the
// context it was made with).
static enum ffn_status ffn__check_ctx(ffn_ctx_t ctx, const char *fn, const struct ffn_tp_block *b) {
    if (ctx->backend == b->mem.backend &&
        (ctx->backend != FFN_BACKEND_CUDA || ctx->device == b->mem.device))
        return FFN_STATUS_OK;
    return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                     "%s: the block was made on a %s context (device %d); this context is %s "
                     "(device %d)",
                     fn, ffn_backend_name(b->mem.backend), b->mem.device,
                     ffn_backend_name(ctx->backend), ctx->device);
}

enum ffn_status ffn_tp_block_create(ffn_ctx_t ctx, ffn_comm_t comm, const struct ffn_tp_plan *plan,
                                    const struct ffn_block_weights *weights,
                                    const struct ffn_block_opts *opts, ffn_tp_block_t *block_out) {
    static const char fn[] = "ffn_tp_block_create";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!comm || !block_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm and block_out must not be NULL",
                         fn);
    *block_out = NULL;
    // Local part: everything that may fail on one rank only.
    enum ffn_status st = FFN_STATUS_OK;
    struct ffn_tp_block *b = calloc(1, sizeof *b);
    if (!b)
        st = ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    else if (!plan || !weights)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: plan and weights must not be NULL", fn);
    else if (!(st = ffn_tp_plan_check(ctx, fn, plan)) && plan->world != comm->size)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: the plan is for %" PRId64
                       " ranks; the "
                       "communicator has %" PRId64,
                       fn, plan->world, comm->size);
    else if (!st && weights->size < sizeof *weights)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.size=%zu, expected %zu", fn,
                       weights->size, sizeof *weights);
    else if (!st && comm->be->memory != ctx->backend)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: the %s communicator works on %s memory; this context runs on the %s "
                       "backend (MPI goes with a CPU context, NCCL with a CUDA context)",
                       fn, comm->be->name, comm->be->memory == FFN_BACKEND_CPU ? "host" : "device",
                       ffn_backend_name(ctx->backend));
    struct ffn_block_spec rs;
    if (!st) st = ffn_tp_plan_shard_spec(ctx, plan, comm->rank, &rs);
    if (!st) {
        b->comm = comm;
        b->plan = *plan;
        b->d_model = plan->block.d_model;
        b->mem = ffn_tp_mem_of(ctx);
        b->bias_after = plan->block.bias_down && plan->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE;
        b->bias_here = rs.bias_down;
        struct ffn_block_weights w = *weights;
        if (b->bias_after) {
            // The bias is the tensor-parallel block's, not the local block's.
            const struct ffn_weight *bd = &weights->b_down;
            const enum ffn_status ms =
                ffn_tp_mem_alloc(ctx, fn, (size_t)b->d_model * sizeof(float), (void **)&b->b_down);
            if (ms)
                st = ms;
            else if (!bd->data || ffn_dtype_size(bd->dtype) == 0)
                st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                               "%s: the plan adds b_down after the "
                               "all-reduce; every rank's weights.b_down must be set",
                               fn);
            else if ((bd->rows || bd->cols) &&
                     (bd->rows > 1 ? bd->rows : 1) * (bd->cols ? bd->cols : 1) != b->d_model)
                st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                               "%s: b_down has shape [%" PRId64 ", %" PRId64 "]; expected %" PRId64
                               " values",
                               fn, bd->rows, bd->cols, b->d_model);
            else {
                const struct ffn_tensor src =
                    ffn_tensor_vec((void *)bd->data, bd->dtype, b->d_model);
                const struct ffn_tensor dst = ffn_tensor_vec(b->b_down, FFN_DTYPE_F32, b->d_model);
                st = ffn_tensor_convert(ctx, &dst, &src);
            }
            memset(&w.b_down, 0, sizeof w.b_down);
        }
        if (!st) st = ffn_block_create(ctx, &rs, &w, opts, &b->local);
    }
    st = ffn_comm_agree_vals(ctx, comm, fn, st, NULL, NULL, 0);
    if (!st) {
        // Every rank must hold the same plan: rank 0's text, compared.
        char mine[FFN_TP_PLAN_TEXT_MAX], *theirs = NULL;
        st = ffn_tp_plan_to_string(ctx, plan, mine, sizeof mine);
        const enum ffn_status bs = ffn_comm_bcast_text(ctx, comm, st ? NULL : mine, &theirs);
        if (!st) st = bs;
        if (!st && strcmp(mine, theirs)) {
            struct ffn_tp_plan p0 = FFN_TP_PLAN_INIT;
            char why[160] = "the texts differ";
            if (!ffn_tp_plan_parse(ctx, theirs, &p0)) ffn_tp_plan_equal(plan, &p0, why, sizeof why);
            st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                           "%s: rank %" PRId64
                           "'s plan differs from "
                           "rank 0's: %s (this rank vs rank 0)",
                           fn, comm->rank, why);
        }
        free(theirs);
        st = ffn_comm_agree_vals(ctx, comm, fn, st, NULL, NULL, 0);
    }
    if (st) {
        ffn_tp_block_destroy(b);
        return st;
    }
    *block_out = b;
    return FFN_STATUS_OK;
}

void ffn_tp_block_destroy(ffn_tp_block_t b) {
    if (!b) return;
    ffn_block_destroy(b->local);
    ffn_tp_mem_free(b->mem, b->b_down);
    ffn_tp_mem_free(b->mem, b->pack);
    ffn_tp_mem_free(b->mem, b->scratch);
    free(b);
}

// In-place sum over the ranks of a [rows, d_model] view (packed first when strided).
static enum ffn_status ffn__reduce(ffn_ctx_t ctx, struct ffn_tp_block *b,
                                   const struct ffn_tensor *t) {
    static const char fn[] = "ffn_tp_block";
    static const enum ffn_comm_dtype cdt[FFN_DTYPE_COUNT] = {[FFN_DTYPE_F32] = FFN_COMM_F32,
                                                             [FFN_DTYPE_BF16] = FFN_COMM_BF16,
                                                             [FFN_DTYPE_F16] = FFN_COMM_F16};
    const int64_t rows = t->rows, d = b->d_model;
    if (rows == 0) return FFN_STATUS_OK;
    const size_t es = ffn_dtype_size(t->dtype), row = (size_t)d * es;
    if (rows == 1 || t->row_stride == d)
        return ffn_comm_allreduce(ctx, b->comm, t->data, rows * d, cdt[t->dtype], FFN_COMM_SUM,
                                  true);
    const size_t n = (size_t)rows * row;
    if (n > b->pack_cap) {
        ffn_tp_mem_free(b->mem, b->pack);
        b->pack = NULL, b->pack_cap = 0;
        const enum ffn_status st = ffn_tp_mem_alloc(ctx, fn, n, &b->pack);
        if (st) return st;
        b->pack_cap = n;
    }
    const size_t stride = (size_t)t->row_stride * es;
    enum ffn_status st = ffn_tp_mem_copy_rows(ctx, fn, b->pack, row, t->data, stride, rows, row);
    if (!st)
        st = ffn_comm_allreduce(ctx, b->comm, b->pack, rows * d, cdt[t->dtype], FFN_COMM_SUM, true);
    if (!st) st = ffn_tp_mem_copy_rows(ctx, fn, t->data, stride, b->pack, row, rows, row);
    return st;
}

// An activation the all-reduce sums: a dtype the communicator takes (MPI: f32).
static enum ffn_status ffn__check_act(ffn_ctx_t ctx, const char *fn, const char *name,
                                      const struct ffn_tp_block *b, const struct ffn_tensor *t) {
    if (!t) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s is NULL", fn, name);
    if ((unsigned)t->dtype >= FFN_DTYPE_COUNT || !(b->comm->be->act_dtypes >> t->dtype & 1u))
        return ffn_error(
            ctx, FFN_STATUS_INVALID_ARG,
            "%s: %s is %s; tensor-parallel blocks on the %s communicator "
            "reduce %s activations",
            fn, name, ffn_dtype_name(t->dtype), b->comm->be->name,
            b->comm->be->act_dtypes == 1u << FFN_DTYPE_F32 ? "f32" : "f32, bf16 or f16");
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_block_forward(ffn_ctx_t ctx, ffn_tp_block_t b, const struct ffn_tensor *y,
                                     const struct ffn_tensor *x, enum ffn_block_policy policy) {
    static const char fn[] = "ffn_tp_block_forward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    enum ffn_status st = ffn__check_ctx(ctx, fn, b);
    if (!st) st = ffn__check_act(ctx, fn, "x", b, x);
    if (!st) st = ffn__check_act(ctx, fn, "y", b, y);
    if (!st) st = ffn_block_forward(ctx, b->local, y, x, policy);  // y = this rank's partial sum
    const int64_t tokens = x ? x->rows : -1;
    static const char *const what[] = {"n_tokens"};
    st = ffn_comm_agree_vals(ctx, b->comm, fn, st, &tokens, what, 1);
    if (!st) st = ffn__reduce(ctx, b, y);  // y = Σ_r y_r
    if (!st && b->bias_after) st = ffn_tp_bias_add(ctx, fn, y, b->b_down);
    return st;
}

enum ffn_status ffn_tp_block_backward(ffn_ctx_t ctx, ffn_tp_block_t b,
                                      const struct ffn_block_grads *grads,
                                      const struct ffn_tensor *dx, const struct ffn_tensor *dy) {
    static const char fn[] = "ffn_tp_block_backward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!b) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    enum ffn_status st = ffn__check_ctx(ctx, fn, b);
    if (!st) st = ffn__check_act(ctx, fn, "dy", b, dy);
    if (!st && dx) st = ffn__check_act(ctx, fn, "dx", b, dx);
    if (!st && grads) {
        if (grads->size < sizeof *grads)
            st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: grads.size=%zu, expected %zu", fn,
                           grads->size, sizeof *grads);
        else if (grads->dtype != FFN_DTYPE_F32 && grads->dtype != FFN_DTYPE_BF16)
            st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: grads.dtype is %s; f32 or bf16", fn,
                           ffn_dtype_name(grads->dtype));
        else
            g = *grads;
    }
    if (!st && g.b_down && !b->bias_here) {
        // The local block has no b_down: the rank's share of its gradient is written here,
        // before the local backward (dx may be the dy view and is written last; on a GPU, in
        // stream order).
        g.b_down = NULL;
        const int64_t d = b->d_model;
        const size_t bytes = (size_t)d * ffn_dtype_size(grads->dtype);
        st = ffn_tp_mem_check(ctx, fn, "grads.b_down", grads->b_down, bytes);
        if (!st && b->bias_after && !ffn_tensor_check(ctx, fn, "dy", dy) && dy->cols == d) {
            // db_down = Σ_rows dy, the same on every rank
            uintptr_t lo = 0, hi = 0;
            if (dy->rows > 0 && d > 0) ffn_tensor_extent(dy, &lo, &hi);
            if (lo != hi) st = ffn_tp_mem_check(ctx, fn, "dy.data", dy->data, hi - lo);
            if (!st)
                st = ffn_tp_colsum(ctx, fn, grads->b_down, grads->dtype, grads->accumulate, dy,
                                   &b->scratch, &b->scratch_cap);
        } else if (!st && !b->bias_after && !grads->accumulate) {
            st = ffn_tp_mem_zero(ctx, fn, grads->b_down, bytes);  // RANK0: rank 0 holds all of it
        }
    }
    if (!st) st = ffn_block_backward(ctx, b->local, &g, dx, dy);
    const int64_t vals[2] = {dx != NULL, dy ? dy->rows : -1};
    static const char *const what[] = {"whether dx is asked for", "n_tokens of dy"};
    st = ffn_comm_agree_vals(ctx, b->comm, fn, st, vals, what, 2);
    if (!st && dx) st = ffn__reduce(ctx, b, dx);  // dx = Σ_r dx_r
    return st;
}
