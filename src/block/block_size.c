// block_size.c — sizing helpers for FFN blocks: the LLaMA width rule and a cost model (parameters,
// FLOPs, minimum bytes moved, arithmetic intensity) for plain and gated blocks. Pure arithmetic:
// no BLAS, no allocation.
#include <inttypes.h>
#include <math.h>

#include "block/block_impl.h"

// Largest d_model the rule accepts: 8·d must not overflow, and results stay exact in double.
#define FFN_SIZE_D_MAX ((int64_t)1 << 40)

enum ffn_status ffn_block_size_rule(ffn_ctx_t ctx, int64_t d_model, double multiplier,
                                    int64_t multiple_of, int64_t *d_ff_out) {
    static const char fn[] = "ffn_block_size_rule";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!d_ff_out) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: d_ff_out is NULL", fn);
    if (d_model < 1 || d_model > FFN_SIZE_D_MAX || multiple_of < 1 ||
        multiple_of > FFN_SIZE_D_MAX || !(multiplier > 0) || !isfinite(multiplier) ||
        multiplier > 1e6)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_model=%" PRId64
                         ", multiplier=%g, "
                         "multiple_of=%" PRId64
                         "; expected d_model and multiple_of in [1, 2^40] "
                         "and a multiplier in (0, 1e6]",
                         fn, d_model, multiplier, multiple_of);
    // hidden = int(2 · 4d / 3); hidden = int(multiplier · hidden) (LLaMA's model.py, in integers
    // where Python's floats are exact: 8d < 2^53).
    int64_t hidden = 8 * d_model / 3;
    if (multiplier != 1.0) hidden = (int64_t)floor(multiplier * (double)hidden);
    if (hidden < 1) hidden = 1;
    // m = multiple_of · ceil(hidden / multiple_of)
    const int64_t m = multiple_of * ((hidden + multiple_of - 1) / multiple_of);
    if (m < hidden || m / multiple_of != (hidden + multiple_of - 1) / multiple_of)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: the width overflows", fn);
    *d_ff_out = m;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_cost(ffn_ctx_t ctx, const struct ffn_block_spec *spec, int64_t n_tokens,
                               enum ffn_dtype weight_dtype, enum ffn_dtype act_dtype,
                               struct ffn_block_cost *cost) {
    static const char fn[] = "ffn_block_cost";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!spec || !cost)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec and cost must not be NULL", fn);
    if (spec->size < sizeof *spec || cost->size < sizeof *cost)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: spec.size or cost.size is too small "
                         "(start from FFN_BLOCK_SPEC_INIT / FFN_BLOCK_COST_INIT)",
                         fn);
    const size_t ws = ffn_dtype_size(weight_dtype), as = ffn_dtype_size(act_dtype);
    if (spec->d_model < 1 || spec->d_ff < 1 || n_tokens < 0 || ws == 0 || as == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_model=%" PRId64 ", d_ff=%" PRId64 ", n_tokens=%" PRId64
                         ", dtypes %d/%d; expected positive widths, "
                         "n_tokens ≥ 0 and known dtypes",
                         fn, spec->d_model, spec->d_ff, n_tokens, (int)weight_dtype,
                         (int)act_dtype);
    const double d = (double)spec->d_model, m = (double)spec->d_ff, T = (double)n_tokens;
    const double k = spec->gated ? 3.0 : 2.0;     // weight matrices: gate, up, down | up, down
    const double pc = spec->gated ? 2.0 * m : m;  // first-projection outputs
    const double nb = (spec->bias_up ? m : 0.0) + (spec->gated && spec->bias_gate ? m : 0.0) +
                      (spec->bias_down ? d : 0.0);
    const double params = k * d * m + nb;
    // n_params is an int64: a product of widths beyond 2^62 is refused, not wrapped.
    if (!(params <= 0x1p62))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_model=%" PRId64 ", d_ff=%" PRId64
                         ": %.3g parameters overflow "
                         "the int64 count",
                         fn, spec->d_model, spec->d_ff, params);
    const double bias_adds = T * nb;
    const double gemm_fwd = 2.0 * T * d * m * k;

    cost->n_params = (int64_t)params;
    cost->flops_fwd = gemm_fwd + bias_adds;
    // Backward: every weight gives a dW GEMM and a dx (or dh) GEMM, each as large as its
    // forward GEMM; bias gradients are column sums.
    cost->flops_bwd = 2.0 * gemm_fwd + bias_adds;
    cost->flops_bwd_recompute = cost->flops_bwd + 2.0 * T * d * pc;
    cost->act_elems = T * m;
    // Minimum traffic: weights once, activations once; the backward also writes the weight
    // gradients, and (SAVE) the saved pre-activations are written once and read once.
    const double wbytes = params * (double)ws;
    cost->bytes_fwd = wbytes + 2.0 * T * d * (double)as;
    cost->bytes_bwd = 2.0 * wbytes + 3.0 * T * d * (double)as + 2.0 * T * pc * (double)as;
    cost->intensity_fwd = cost->bytes_fwd > 0 ? cost->flops_fwd / cost->bytes_fwd : 0.0;
    cost->intensity_bwd = cost->bytes_bwd > 0 ? cost->flops_bwd / cost->bytes_bwd : 0.0;
    return FFN_STATUS_OK;
}
