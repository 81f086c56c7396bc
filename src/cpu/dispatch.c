// dispatch.c — the public activation entry points: validate the views (for every backend), then
// hand the checked call to the context's backend. The CPU backend (ffn_backend_cpu, defined here)
// keeps the context's kernel table in its own state, picks the kernel from it and runs it over
// rows and fixed-size chunks, in parallel above a size threshold. Chunk boundaries depend only on
// the shape, never on the thread count, and kernels compute each element independently: results
// are bitwise identical for any thread count.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "cpu/cpu_impl.h"

// Elements per work item: 64 KiB of f32, a few L1-sized passes, large enough to amortise the
// call, small enough to balance two threads on short rows.
#define FFN_CHUNK ((int64_t)16384)
// Below this many elements a parallel region costs more than it saves.
#define FFN_PAR_MIN ((int64_t)1 << 16)
// Above this many bytes touched the outputs will not be re-read from cache: stream them.
#define FFN_STREAM_MIN_BYTES ((uint64_t)48 << 20)

// One call: up to 2 outputs and 3 inputs, all of the same shape.
struct ffn__job {
    struct ffn_cpu_kernel k;
    int n_out, n_in;
    char *out[2];
    const char *in[3];
    int64_t out_rs[2], in_rs[3];  // row strides in bytes
    size_t out_es, in_es;         // element sizes
    int64_t rows, cols;
};

static void ffn__run_item(const struct ffn__job *j, int64_t r, int64_t c0, int64_t n) {
    char *o[2] = {0};
    const char *i[3] = {0};
    for (int k = 0; k < j->n_out; k++)
        o[k] = j->out[k] + r * j->out_rs[k] + c0 * (int64_t)j->out_es;
    for (int k = 0; k < j->n_in; k++) i[k] = j->in[k] + r * j->in_rs[k] + c0 * (int64_t)j->in_es;
    switch (j->k.op) {
    case FFN_KOP_ACT_FWD: ffn_cpu_act_fwd(&j->k, n, o[0], i[0]); break;
    case FFN_KOP_ACT_BWD: ffn_cpu_act_bwd(&j->k, n, o[0], i[0], i[1]); break;
    case FFN_KOP_GLU_FWD: ffn_cpu_glu_fwd(&j->k, n, o[0], i[0], i[1]); break;
    case FFN_KOP_GLU_BWD: ffn_cpu_glu_bwd(&j->k, n, o[0], o[1], i[0], i[1], i[2]); break;
    default: break;
    }
}

static void ffn__run(ffn_ctx_t ctx, const struct ffn__job *j) {
    const int64_t per_row = (j->cols + FFN_CHUNK - 1) / FFN_CHUNK;
    const int64_t items = j->rows * per_row;
#ifdef _OPENMP
    const int nt = ctx->n_threads;
    const bool par = nt > 1 && items > 1 && j->rows * j->cols >= FFN_PAR_MIN;
#else
    (void)ctx;
    const bool par = false;
#endif
    if (!par) {
        // Not `omp parallel if (0)`: libgomp still builds a team of one for that, which costs
        // more than a 16K-element kernel (~1.3 us a call measured here).
        for (int64_t r = 0; r < j->rows; r++) ffn__run_item(j, r, 0, j->cols);
        return;
    }
#ifdef _OPENMP
#    pragma omp parallel num_threads(nt)
    {
        // Each thread takes one contiguous block of items (what schedule(static) would give) and
        // runs it as one kernel call per row it touches, so a streaming kernel keeps its
        // sub-ranges long (ffn_stream_ways).
        const int64_t t = omp_get_thread_num(), tn = omp_get_num_threads();
        const int64_t it1 = items * (t + 1) / tn;
        for (int64_t it = items * t / tn; it < it1;) {
            const int64_t r = it / per_row, row_end = (r + 1) * per_row;
            const int64_t end = it1 < row_end ? it1 : row_end;  // this row's items in the block
            const int64_t c0 = (it - r * per_row) * FFN_CHUNK,
                          c1 = end == row_end ? j->cols : (end - r * per_row) * FFN_CHUNK;
            ffn__run_item(j, r, c0, c1 - c0);
            it = end;
        }
    }
#endif
}

static bool ffn__contiguous(const struct ffn_tensor *t) {
    return t->rows <= 1 || t->row_stride == t->cols;
}

// --- the CPU backend's state and kernels ---------------------------------------------------------

struct ffn_cpu_state *ffn_cpu_state(ffn_ctx_t ctx) {
    return ctx && ctx->backend == FFN_BACKEND_CPU ? (struct ffn_cpu_state *)ctx->be_state : NULL;
}

const struct ffn_cpu_kernels *ffn_cpu_kernel_table(ffn_ctx_t ctx) {
    const struct ffn_cpu_state *s = ffn_cpu_state(ctx);
    return s ? &s->kernels : NULL;
}

// The one place a kernel's configuration is built: for the element-wise calls (accurate and
// parity from the checked call) and for the block (from the context, as ffn__launch sets them).
static struct ffn_cpu_kernel ffn__kernel(const struct ffn_cpu_state *s, enum ffn_kop op,
                                         enum ffn_act act, enum ffn_dtype in, enum ffn_dtype out,
                                         bool accurate, bool parity, bool stream) {
    struct ffn_cpu_kernel k = {.op = op,
                               .cfg = {.in = in,
                                       .out = out,
                                       .accurate = accurate,
                                       .parity = parity,
                                       .stream = stream,
                                       .bf16_cvt = s->avx512_bf16}};
    switch (op) {
    case FFN_KOP_ACT_FWD: k.fn = (void (*)(void))s->kernels.act_fwd[act]; break;
    case FFN_KOP_ACT_BWD: k.fn = (void (*)(void))s->kernels.act_bwd[act]; break;
    case FFN_KOP_GLU_FWD: k.fn = (void (*)(void))s->kernels.glu_fwd[act]; break;
    case FFN_KOP_GLU_BWD: k.fn = (void (*)(void))s->kernels.glu_bwd[act]; break;
    default: break;
    }
    return k;
}

struct ffn_cpu_kernel ffn_cpu_kernel_get(ffn_ctx_t ctx, enum ffn_kop op, enum ffn_act act,
                                         enum ffn_dtype in, enum ffn_dtype out, bool stream) {
    return ffn__kernel(ffn_cpu_state(ctx), op, act, in, out, ctx->accuracy == FFN_ACCURACY_HIGH,
                       ctx->bf16_parity && op == FFN_KOP_GLU_FWD, stream);
}

// The CPU backend's element-wise call: the kernel from the context's table, run as a job.
static enum ffn_status ffn__cpu_elementwise(ffn_ctx_t ctx, const struct ffn_ew_call *c) {
    const int n_out = c->n_out, n_in = c->n_in;
    const struct ffn_tensor *const *outs = c->outs, *const *ins = c->ins;
    const struct ffn_tensor *ref = ins[0];
    struct ffn__job j = {.n_out = n_out, .n_in = n_in};
    j.in_es = ffn_dtype_size(c->in);
    j.out_es = ffn_dtype_size(c->out);
    const uint64_t bytes = (uint64_t)(ref->rows * ref->cols) * (n_out * j.out_es + n_in * j.in_es);
    j.k = ffn__kernel(ffn_cpu_state(ctx), c->op, c->act, c->in, c->out, c->accurate, c->parity,
                      bytes >= FFN_STREAM_MIN_BYTES);
    if (!j.k.fn)
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: no kernel for %s", c->fn,
                         ffn_act_name(c->act));
    j.rows = ref->rows;
    j.cols = ref->cols;

    // All views contiguous: one long row, so chunks (and SIMD vectors) run across row ends.
    bool contiguous = true;
    for (int k = 0; k < n_out; k++) contiguous = contiguous && ffn__contiguous(outs[k]);
    for (int k = 0; k < n_in; k++) contiguous = contiguous && ffn__contiguous(ins[k]);
    if (contiguous) {
        j.cols = j.rows * j.cols;
        j.rows = 1;
    }
    for (int k = 0; k < n_out; k++) {
        j.out[k] = outs[k]->data;
        j.out_rs[k] = outs[k]->row_stride * (int64_t)j.out_es;
    }
    for (int k = 0; k < n_in; k++) {
        j.in[k] = ins[k]->data;
        j.in_rs[k] = ins[k]->row_stride * (int64_t)j.in_es;
    }
    ffn__run(ctx, &j);
    return FFN_STATUS_OK;
}

static bool ffn__cpu_available(char *why, size_t why_size) {
    (void)why, (void)why_size;
    return true;
}

// A skinny GEMM row limit: 0 when off, else $env (1..max) or the default.
static int ffn__rows_limit(bool on, const char *env, int def, int max) {
    const long rows = env && *env ? strtol(env, NULL, 10) : def;
    return !on || rows < 1 ? 0 : rows > max ? max : (int)rows;
}

// The state: the kernel table for the context's ISA, whether the AVX-512 kernels store bf16
// by AVX512_BF16's conversion (same bits; $FFN_AVX512_BF16=0 turns it off, so that tests reach
// the integer rounding on such a CPU too), and the skinny GEMM's row limits.
static enum ffn_status ffn__cpu_init(ffn_ctx_t ctx, const struct ffn_ctx_opts *opts) {
    (void)opts;
    struct ffn_cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "ffn_ctx_create: out of memory for the CPU kernel table");
    ffn_cpu_kernels_init(&s->kernels, ctx->isa);
    struct ffn_cpu_features feat;
    ffn_cpu_features_detect(&feat);
    const char *bf = getenv("FFN_AVX512_BF16");
    s->avx512_bf16 = ctx->isa == FFN_ISA_AVX512 && feat.avx512_bf16 && !(bf && bf[0] == '0');
    // The skinny GEMM: $FFN_BLOCK_SKINNY=0 turns it off; $FFN_BLOCK_SKINNY_ROWS=1..8 and
    // $FFN_BLOCK_SKINNY_AB_ROWS=1..32 set its row limits (for measurements; defaults
    // FFN_SKINNY_DEFAULT_M, FFN_SKINNY_AB_DEFAULT_M[_BF16], _BF16_AMX on a CPU with AMX-BF16).
    const char *sk = getenv("FFN_BLOCK_SKINNY"), *skr = getenv("FFN_BLOCK_SKINNY_ROWS");
    const char *ska = getenv("FFN_BLOCK_SKINNY_AB_ROWS");
    const bool on = ctx->isa == FFN_ISA_AVX512 && !(sk && sk[0] == '0');
    s->skinny_max = ffn__rows_limit(on, skr, FFN_SKINNY_DEFAULT_M, FFN_SKINNY_MAX_M);
    s->skinny_ab_max[0] = ffn__rows_limit(on, ska, FFN_SKINNY_AB_DEFAULT_M, FFN_SKINNY_AB_MAX_M);
    s->skinny_ab_max[1] = ffn__rows_limit(
        on, ska, feat.amx_bf16 ? FFN_SKINNY_AB_DEFAULT_M_BF16_AMX : FFN_SKINNY_AB_DEFAULT_M_BF16,
        FFN_SKINNY_AB_MAX_M);
    const char *pf = getenv("FFN_BLOCK_SKINNY_PF");
    s->skinny_pf_l2 = pf && (!strcmp(pf, "l1") || !strcmp(pf, "l2"))
                          ? !strcmp(pf, "l2")
                          : ffn_skinny_pf_l2_default(&feat);
    ctx->be_state = s;
    return FFN_STATUS_OK;
}

static void ffn__cpu_free(ffn_ctx_t ctx) {
    struct ffn_cpu_state *s = ctx->be_state;
    if (s) free(s->skinny_a);
    free(s);
    ctx->be_state = NULL;
}

static enum ffn_isa ffn__cpu_kernel_isa(ffn_ctx_t ctx, enum ffn_kop op, enum ffn_act act) {
    return ffn_cpu_state(ctx)->kernels.isa[op][act];
}

const struct ffn_backend_i ffn_backend_cpu = {
    .name = "cpu",
    .available = ffn__cpu_available,
    .init = ffn__cpu_init,
    .free = ffn__cpu_free,
    .elementwise = ffn__cpu_elementwise,
    .block = &ffn_block_cpu,
    .kernel_isa = ffn__cpu_kernel_isa,
};

// Checks every view, their shapes and dtypes and aliasing, then hands the call to the backend.
// outs/ins: the views in kernel order; names for messages.
static enum ffn_status ffn__launch(ffn_ctx_t ctx, const char *fn, enum ffn_kop op, enum ffn_act act,
                                   int n_out, const struct ffn_tensor *const *outs,
                                   const char *const *out_names, int n_in,
                                   const struct ffn_tensor *const *ins,
                                   const char *const *in_names) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if ((unsigned)act >= FFN_ACT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: act=%d is not an activation", fn,
                         (int)act);
    enum ffn_status st;
    for (int k = 0; k < n_out; k++)
        if ((st = ffn_tensor_check(ctx, fn, out_names[k], outs[k]))) return st;
    for (int k = 0; k < n_in; k++)
        if ((st = ffn_tensor_check(ctx, fn, in_names[k], ins[k]))) return st;

    const struct ffn_tensor *ref = ins[0];
    const char *ref_name = in_names[0];
    for (int k = 0; k < n_out + n_in; k++) {
        const struct ffn_tensor *t = k < n_out ? outs[k] : ins[k - n_out];
        const char *name = k < n_out ? out_names[k] : in_names[k - n_out];
        if (t->rows != ref->rows || t->cols != ref->cols)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s has shape [%" PRId64 ", %" PRId64 "], %s has [%" PRId64
                             ", %" PRId64 "]; they must agree",
                             fn, name, t->rows, t->cols, ref_name, ref->rows, ref->cols);
    }
    for (int k = 1; k < n_in; k++)
        if (ins[k]->dtype != ref->dtype)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s is %s but %s is %s; inputs must share one dtype", fn,
                             in_names[k], ffn_dtype_name(ins[k]->dtype), ref_name,
                             ffn_dtype_name(ref->dtype));
    if (n_out == 2 && outs[1]->dtype != outs[0]->dtype)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s is %s but %s is %s; outputs must share one dtype", fn,
                         out_names[1], ffn_dtype_name(outs[1]->dtype), out_names[0],
                         ffn_dtype_name(outs[0]->dtype));
    if (ref->rows == 0 || ref->cols == 0) return FFN_STATUS_OK;

    // Aliasing: an output may be exactly an input (in place); any other overlap would let one
    // element's write corrupt another element's read, and two outputs must not overlap.
    for (int k = 0; k < n_out; k++) {
        for (int m = 0; m < n_out + n_in; m++) {
            if (m == k) continue;
            const struct ffn_tensor *t = m < n_out ? outs[m] : ins[m - n_out];
            if (!ffn_tensor_overlap(outs[k], t)) continue;
            const bool exact = m >= n_out && t->data == outs[k]->data &&
                               t->dtype == outs[k]->dtype &&
                               (t->rows <= 1 || t->row_stride == outs[k]->row_stride);
            if (!exact)
                return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                                 "%s: %s overlaps %s without being the same view; in-place use "
                                 "needs the same pointer, dtype and row_stride",
                                 fn, out_names[k], m < n_out ? out_names[m] : in_names[m - n_out]);
        }
    }

    struct ffn_ew_call c = {
        .fn = fn,
        .op = op,
        .act = act,
        .in = ref->dtype,
        .out = outs[0]->dtype,
        .accurate = ctx->accuracy == FFN_ACCURACY_HIGH,
        .parity = ctx->bf16_parity && op == FFN_KOP_GLU_FWD,
        .n_out = n_out,
        .n_in = n_in,
    };
    for (int k = 0; k < n_out; k++) c.outs[k] = outs[k], c.out_names[k] = out_names[k];
    for (int k = 0; k < n_in; k++) c.ins[k] = ins[k], c.in_names[k] = in_names[k];
    return ctx->be->elementwise(ctx, &c);
}

enum ffn_status ffn_act_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *y,
                                const struct ffn_tensor *x) {
    const struct ffn_tensor *outs[] = {y}, *ins[] = {x};
    static const char *const on[] = {"y"}, *const in[] = {"x"};
    return ffn__launch(ctx, "ffn_act_forward", FFN_KOP_ACT_FWD, act, 1, outs, on, 1, ins, in);
}

enum ffn_status ffn_act_backward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *dx,
                                 const struct ffn_tensor *x, const struct ffn_tensor *dy) {
    const struct ffn_tensor *outs[] = {dx}, *ins[] = {x, dy};
    static const char *const on[] = {"dx"}, *const in[] = {"x", "dy"};
    return ffn__launch(ctx, "ffn_act_backward", FFN_KOP_ACT_BWD, act, 1, outs, on, 2, ins, in);
}

enum ffn_status ffn_glu_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *h,
                                const struct ffn_tensor *gate, const struct ffn_tensor *up) {
    const struct ffn_tensor *outs[] = {h}, *ins[] = {gate, up};
    static const char *const on[] = {"h"}, *const in[] = {"gate", "up"};
    return ffn__launch(ctx, "ffn_glu_forward", FFN_KOP_GLU_FWD, act, 1, outs, on, 2, ins, in);
}

enum ffn_status ffn_glu_backward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *dgate,
                                 const struct ffn_tensor *dup, const struct ffn_tensor *gate,
                                 const struct ffn_tensor *up, const struct ffn_tensor *dh) {
    const struct ffn_tensor *outs[] = {dgate, dup}, *ins[] = {gate, up, dh};
    static const char *const on[] = {"dgate", "dup"}, *const in[] = {"gate", "up", "dh"};
    return ffn__launch(ctx, "ffn_glu_backward", FFN_KOP_GLU_BWD, act, 2, outs, on, 3, ins, in);
}

// Conversion is the identity activation with different input and output dtypes.
enum ffn_status ffn_tensor_convert(ffn_ctx_t ctx, const struct ffn_tensor *dst,
                                   const struct ffn_tensor *src) {
    const struct ffn_tensor *outs[] = {dst}, *ins[] = {src};
    static const char *const on[] = {"dst"}, *const in[] = {"src"};
    return ffn__launch(ctx, "ffn_tensor_convert", FFN_KOP_ACT_FWD, FFN_ACT_IDENTITY, 1, outs, on, 1,
                       ins, in);
}
