// tensor.c — validation of tensor views at the API boundary, and the gate/up split.
#include <inttypes.h>

#include "core_impl.h"

enum ffn_status ffn_tensor_check(ffn_ctx_t ctx, const char *fn, const char *name,
                                 const struct ffn_tensor *t) {
    if (!t) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s is NULL", fn, name);
    const size_t es = ffn_dtype_size(t->dtype);
    if (!es)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s.dtype=%d is not a dtype", fn, name,
                         (int)t->dtype);
    if (t->rows < 0 || t->cols < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s has shape [%" PRId64 ", %" PRId64 "]; sizes must be ≥ 0", fn, name,
                         t->rows, t->cols);
    if (t->rows == 0 || t->cols == 0) return FFN_STATUS_OK;
    if (!t->data)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s.data is NULL for shape [%" PRId64 ", %" PRId64 "]", fn, name,
                         t->rows, t->cols);
    if (t->rows > 1 && t->row_stride < t->cols)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s.row_stride=%" PRId64 " is less than cols=%" PRId64, fn, name,
                         t->row_stride, t->cols);
    // Extent in elements: (rows-1)*row_stride + cols, computed without overflow.
    const uint64_t lim = (uint64_t)PTRDIFF_MAX / es;
    uint64_t span = (uint64_t)t->cols;
    if (t->rows > 1) {
        const uint64_t rs = (uint64_t)t->row_stride, r1 = (uint64_t)t->rows - 1;
        if (rs != 0 && r1 > (lim - span) / rs)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s spans more bytes than memory can hold (rows=%" PRId64
                             ", row_stride=%" PRId64 ")",
                             fn, name, t->rows, t->row_stride);
        span += r1 * rs;
    }
    if (span > lim || (uintptr_t)t->data > UINTPTR_MAX - span * es)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s's byte extent overflows", fn, name);
    return FFN_STATUS_OK;
}

void ffn_tensor_extent(const struct ffn_tensor *t, uintptr_t *lo, uintptr_t *hi) {
    const size_t es = ffn_dtype_size(t->dtype);
    uint64_t span = (uint64_t)t->cols;
    if (t->rows > 1) span += (uint64_t)(t->rows - 1) * (uint64_t)t->row_stride;
    *lo = (uintptr_t)t->data;
    *hi = *lo + span * es;
}

// floor(a / b) for b > 0.
static int64_t ffn__floor_div(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

bool ffn_tensor_overlap(const struct ffn_tensor *a, const struct ffn_tensor *b) {
    uintptr_t alo, ahi, blo, bhi;
    ffn_tensor_extent(a, &alo, &ahi);
    ffn_tensor_extent(b, &blo, &bhi);
    if (alo >= bhi || blo >= ahi) return false;  // byte extents apart
    const int64_t sa = a->row_stride * (int64_t)ffn_dtype_size(a->dtype);
    const int64_t sb = b->row_stride * (int64_t)ffn_dtype_size(b->dtype);
    if (a->rows <= 1 || b->rows <= 1 || sa != sb || sa <= 0) return true;  // conservative
    // Same row stride S: row i of a covers [alo + i·S, +wa), row j of b [blo + j·S, +wb). They
    // meet iff some k = j - i in [-(ra-1), rb-1] puts off = (blo - alo) + k·S inside (-wb, wa).
    // Offsets grow with k: test the first k whose offset exceeds -wb.
    const int64_t S = sa, wa = a->cols * (int64_t)ffn_dtype_size(a->dtype),
                  wb = b->cols * (int64_t)ffn_dtype_size(b->dtype);
    const int64_t delta = (int64_t)(blo - alo);  // |delta| < extent: fits
    const int64_t kmin = -(a->rows - 1), kmax = b->rows - 1;
    int64_t k = ffn__floor_div(-wb - delta, S) + 1;
    if (k < kmin) k = kmin;
    return k <= kmax && delta + k * S < wa;
}

enum ffn_status ffn_gate_up_split(ffn_ctx_t ctx, const struct ffn_tensor *fused,
                                  enum ffn_gate_up_order order, struct ffn_tensor *gate_out,
                                  struct ffn_tensor *up_out) {
    static const char fn[] = "ffn_gate_up_split";
    ffn_error_clear(ctx);
    enum ffn_status st = ffn_tensor_check(ctx, fn, "fused", fused);
    if (st) return st;
    if (!gate_out || !up_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: gate_out/up_out is NULL", fn);
    if (order != FFN_GATE_UP_GATE_FIRST && order != FFN_GATE_UP_UP_FIRST)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: order=%d is not a gate/up order", fn,
                         (int)order);
    if (fused->cols % 2)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: fused has %" PRId64 " columns; a fused gate/up needs an even count",
                         fn, fused->cols);
    const int64_t m = fused->cols / 2;
    const struct ffn_tensor first = ffn_tensor_cols(fused, 0, m);
    const struct ffn_tensor second = ffn_tensor_cols(fused, m, m);
    *gate_out = order == FFN_GATE_UP_GATE_FIRST ? first : second;
    *up_out = order == FFN_GATE_UP_GATE_FIRST ? second : first;
    return FFN_STATUS_OK;
}
