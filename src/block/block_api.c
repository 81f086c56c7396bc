// block_api.c — the public FFN block entry points: they check the context, the block's backend
// and device, the policy and the arguments no backend can do without, then hand the call to the backend's block table (struct ffn_block_i
// in core_impl.h): the CPU's (block.c: oneDNN) or the CUDA one (src/cuda/cuda_block.c:
// cuBLASLt). Everything else a block checks is backend-neutral too and lives in block_plan.c.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_impl.h"

static const struct ffn_block_hdr *ffn__hdr(ffn_block_t block) {
    return (const struct ffn_block_hdr *)(const void *)block;  // the first member of every block
}

// The block exists and was made on this context's backend and device.
static enum ffn_status ffn__check_block(ffn_ctx_t ctx, const char *fn, ffn_block_t block) {
    if (!block) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: block is NULL", fn);
    const struct ffn_block_hdr *h = ffn__hdr(block);
    if (h->backend != ctx->backend)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: the block was made on a %s context; "
                         "this context is %s",
                         fn, ffn_backend_name(h->backend), ffn_backend_name(ctx->backend));
    if (h->device != ctx->device)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: the block lives on CUDA device %d; this "
                         "context runs on device %d",
                         fn, h->device, ctx->device);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                 const struct ffn_block_weights *weights,
                                 const struct ffn_block_opts *opts, ffn_block_t *block_out) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (block_out) *block_out = NULL;
    if (!ctx->be->block)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "ffn_block_create: FFN blocks do not run on "
                         "the %s backend",
                         ffn_backend_name(ctx->backend));
    if (!spec || !weights || !block_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_block_create: spec, weights and block_out must not be NULL");
    return ctx->be->block->create(ctx, spec, weights, opts, block_out);
}

void ffn_block_destroy(ffn_block_t block) {
    if (!block) return;
    const struct ffn_block_hdr *h = ffn__hdr(block);
    void *owned[sizeof h->owned / sizeof h->owned[0]];
    const int n_owned = h->n_owned;
    memcpy(owned, h->owned, sizeof owned);
    h->impl->destroy(block);  // frees the header too
    for (int i = 0; i < n_owned; i++) free(owned[i]);
}

enum ffn_status ffn_block_forward(ffn_ctx_t ctx, ffn_block_t block, const struct ffn_tensor *y,
                                  const struct ffn_tensor *x, enum ffn_block_policy policy) {
    static const char fn[] = "ffn_block_forward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    enum ffn_status st;
    if ((st = ffn__check_block(ctx, fn, block))) return st;
    if ((unsigned)policy >= FFN_BLOCK_POLICY_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: policy=%d is not a policy", fn,
                         (int)policy);
    if (!x || !y) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: x and y must not be NULL", fn);
    return ffn__hdr(block)->impl->forward(ctx, block, y, x, policy);
}

enum ffn_status ffn_block_backward(ffn_ctx_t ctx, ffn_block_t block,
                                   const struct ffn_block_grads *grads, const struct ffn_tensor *dx,
                                   const struct ffn_tensor *dy) {
    static const char fn[] = "ffn_block_backward";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    enum ffn_status st;
    if ((st = ffn__check_block(ctx, fn, block))) return st;
    if (!dy) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: dy must not be NULL", fn);
    return ffn__hdr(block)->impl->backward(ctx, block, grads, dx, dy);
}

enum ffn_status ffn_block_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                               struct ffn_block_info *info) {
    static const char fn[] = "ffn_block_info";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    enum ffn_status st;
    if ((st = ffn__check_block(ctx, fn, block))) return st;
    if (!info || n_tokens < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: info must not be NULL and n_tokens (%" PRId64 ") must be ≥ 0", fn,
                         n_tokens);
    if (info->size < sizeof *info)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: info.size=%zu, expected %zu (start from FFN_BLOCK_INFO_INIT)", fn,
                         info->size, sizeof *info);
    return ffn__hdr(block)->impl->info(ctx, block, n_tokens, info);
}
