// cpu_impl.h — the CPU layer as the layers above it see it: the CPU backend's state (its kernel
// table), one kernel of that table bound to its configuration and the calls that run it (what
// the public entry points of dispatch.c and the FFN block of src/block run), and the element
// load/store helpers shared by the scalar reference. Never installed.
#ifndef FFN_CPU_IMPL_H
#define FFN_CPU_IMPL_H

#include "cpu/kernels.h"
#ifdef _OPENMP
#    include <omp.h>
#endif

// --- the CPU backend -----------------------------------------------------------------------------
// ctx->be_state of a CPU context, made by the backend's init (dispatch.c) when the context is
// created.
struct ffn_cpu_state {
    struct ffn_cpu_kernels kernels;  // filled for ctx->isa
    bool avx512_bf16;      // AVX512_BF16 usable by the AVX-512 kernels ($FFN_AVX512_BF16=0: not)
    int skinny_max;        // most rows of A the skinny GEMM takes, weights contiguous in k ("ba";
                           // 0: off; $FFN_BLOCK_SKINNY[_ROWS])
    int skinny_ab_max[2];  // the same for weights contiguous in n ("ab"), [0] f32, [1] bf16
                           // weights ($FFN_BLOCK_SKINNY_AB_ROWS)
    bool skinny_pf_l2;     // its kernels prefetch the next weight rows into L2 only (T1), not
                           // into L1 (T0) ($FFN_BLOCK_SKINNY_PF=l1|l2; ffn_skinny_pf_l2_default)
    float *skinny_a;       // the skinny GEMM's packed A, grown on demand (one call at a time: a
    size_t skinny_cap;     // context is not used by two threads at once), floats
};

// The state of a CPU context; NULL for a context of another backend.
struct ffn_cpu_state *ffn_cpu_state(ffn_ctx_t ctx);
// The kernel table of a CPU context; NULL for a context of another backend.
const struct ffn_cpu_kernels *ffn_cpu_kernel_table(ffn_ctx_t ctx);

// One kernel of a CPU context's table with the configuration it runs with: built once per call
// (dispatch.c) or per block pass (src/block), then run on any number of contiguous ranges.
struct ffn_cpu_kernel {
    enum ffn_kop op;
    void (*fn)(void);  // of op's shape (ffn_act_fwd_fn, ffn_act_bwd_fn, ...)
    struct ffn_kcfg cfg;
};

// The kernel of a CPU context for (op, act), inputs of dtype `in`, outputs of dtype `out`, as the
// public entry points run it: the context's accuracy tier, its bf16 parity for a gated forward,
// its AVX512_BF16 stores; non-temporal stores when `stream`. fn is NULL only if the table lacks
// the entry (never, for a table of ffn_cpu_kernels_init).
struct ffn_cpu_kernel ffn_cpu_kernel_get(ffn_ctx_t ctx, enum ffn_kop op, enum ffn_act act,
                                         enum ffn_dtype in, enum ffn_dtype out, bool stream);

// Runs k (of the op in the name) on n contiguous elements; pointers as for the op's kernel shape.
static inline void ffn_cpu_act_fwd(const struct ffn_cpu_kernel *k, int64_t n, void *y,
                                   const void *x) {
    ((ffn_act_fwd_fn)k->fn)(&k->cfg, n, y, x);
}
static inline void ffn_cpu_act_bwd(const struct ffn_cpu_kernel *k, int64_t n, void *dx,
                                   const void *x, const void *dy) {
    ((ffn_act_bwd_fn)k->fn)(&k->cfg, n, dx, x, dy);
}
static inline void ffn_cpu_glu_fwd(const struct ffn_cpu_kernel *k, int64_t n, void *h,
                                   const void *gate, const void *up) {
    ((ffn_glu_fwd_fn)k->fn)(&k->cfg, n, h, gate, up);
}
static inline void ffn_cpu_glu_bwd(const struct ffn_cpu_kernel *k, int64_t n, void *dgate,
                                   void *dup, const void *gate, const void *up, const void *dh) {
    ((ffn_glu_bwd_fn)k->fn)(&k->cfg, n, dgate, dup, gate, up, dh);
}

// --- skinny GEMM: few rows, bf16 or f32 weights (gemm_skinny.c) --------------------------------
// A matrix operand: element (i, j) at p + (i·s0 + j·s1)·dtype_size.
struct ffn_cpu_mat {
    const void *p;
    enum ffn_dtype dt;
    int64_t s0, s1;
};

// Rows of A up to which the skinny GEMM runs by default: where it beat oneDNN 2.6's brgemm in
// bf16 (docs/blocks.md, "One token: the skinny GEMM"). $FFN_BLOCK_SKINNY=0 turns the path off,
// $FFN_BLOCK_SKINNY_ROWS=1..8 sets the limit (both read when a context is created).
#define FFN_SKINNY_DEFAULT_M 6
// The same for weights contiguous in n ("ab": the backward's dh = dy·W_down and dx = dP·W of
// nn.Linear weights, the forward of Conv1D ones), f32 and bf16 weights: oneDNN 2.6 runs that
// layout 1.2-2x slower than its fast one, and the axpy kernel, compute-bound from about 8 rows,
// beats it there up to these rows (docs/blocks.md, "A few tokens: row-major weights"); bf16
// weights beyond FFN_SKINNY_MAX_M rows only with bf16 A on an AVX512_BF16 CPU, by vdpbf16ps
// (kernels.h). $FFN_BLOCK_SKINNY_AB_ROWS=1..32 sets both.
#define FFN_SKINNY_AB_DEFAULT_M 32
#define FFN_SKINNY_AB_DEFAULT_M_BF16 16
// On a CPU with AMX-BF16, oneDNN runs that layout on the tile unit, and vdpbf16ps loses to it
// from about 12 rows (Intel Xeon family 6 model 207, one thread, bf16 `bench_skinny_gemm` on four
// FFN shapes, two runs: over oneDNN on the same operands 1.15-2.80x at 2-8 rows, 1.01-1.51x at 9,
// 0.90-1.39x at 10 (geometric mean 1.15), 0.75-1.12x at 12 (0.97), 0.61-0.98x at 16).
#define FFN_SKINNY_AB_DEFAULT_M_BF16_AMX 10
// Where its kernels prefetch the next weight rows by default, per CPU: into L1 (T0) on AMD from
// family 26 (Zen 5: bf16 weights streamed 15-30% faster than with T1), into L2 only (T1)
// elsewhere (AMD Zen 4, family 25: the one-token blocks 1.1-1.6x faster than with T0; Intel Xeon
// family 6 model 207: f32 1.1-1.4x, bf16 alike) (docs/blocks.md, "One token: the skinny GEMM").
// $FFN_BLOCK_SKINNY_PF=l1|l2 sets it.
bool ffn_skinny_pf_l2_default(const struct ffn_cpu_features *f);
// What it reports as its implementation (ffn_block_info's gemm_impl, `ffn bench block`).
#define FFN_SKINNY_IMPL "ffn:skinny_avx512"

// C[M, N] = A[M, K]·B[K, N] (+ bias[N], f32) (+ C when acc) by the CPU layer's skinny GEMM when it
// applies, on ffn_ctx_threads(ctx) threads: a CPU context whose ISA is AVX-512, 1 ≤ M ≤ the
// context's limit for B's orientation and dtype (above), B bf16 or f32 contiguous along K (s0 = 1,
// nn.Linear's [out, in]) or along N (s1 = 1), A f32 or bf16 with any strides, C f32 or bf16 with
// s1 = 1. Then *done is true; otherwise *done is false and nothing is touched (the caller runs
// its general GEMM). Products and sums in f32 by FMA from exactly widened inputs (IEEE:
// subnormals, infinities and NaNs kept), except bf16 B contiguous along N with bf16 A beyond
// FFN_SKINNY_MAX_M rows: vdpbf16ps, subnormals flushed (kernels.h). Each output is summed in an
// order fixed by K alone: the same bits for any thread count.
// @retval FFN_STATUS_OK, FFN_STATUS_OUT_OF_MEMORY (the packed copy of A)
enum ffn_status ffn_cpu_gemm_skinny(ffn_ctx_t ctx, const char *fn, int64_t M, int64_t N, int64_t K,
                                    const struct ffn_cpu_mat *A, const struct ffn_cpu_mat *B,
                                    const struct ffn_cpu_mat *C, const float *bias, bool acc,
                                    bool *done);

// The share of the calling thread of an OpenMP team in [0, n) split in whole blocks of blk:
// [*lo, *hi), empty when *lo >= *hi (outside a parallel region: all of it).
static inline void ffn_cpu_share(int64_t n, int64_t blk, int64_t *lo, int64_t *hi) {
#ifdef _OPENMP
    const int64_t t = omp_get_thread_num(), tn = omp_get_num_threads();
#else
    const int64_t t = 0, tn = 1;
#endif
    const int64_t nb = (n + blk - 1) / blk, b0 = nb * t / tn, b1 = nb * (t + 1) / tn;
    *lo = b0 * blk, *hi = b1 * blk < n ? b1 * blk : n;
}

// d[j·ldd + i] = s[i·lds + j] for i < R, j < C, elements of esz bytes (4 or 2): a transpose
// (bit copies), the layout change of a GEMM operand (block_dnnl.c). In register blocks walked in
// 64 x 64 tiles on an AVX2 or AVX-512 context (AVX-512: whole 64-byte destination lines, stored
// non-temporally into a 64-byte aligned destination; AVX2: f32 lines as two halves back to back,
// non-temporally into a 64-byte aligned one), else element by element; on ffn_ctx_threads(ctx) threads from 2^16
// elements on, each taking whole 32-row strips of the source. Source and destination must not
// overlap.
void ffn_cpu_transpose(ffn_ctx_t ctx, void *d, int64_t ldd, const void *s, int64_t lds, int64_t R,
                       int64_t C, size_t esz);

// The reference definitions in double, ffn_ref_act / ffn_ref_dact, are public (ffn.h).

// --- element access by dtype (scalar paths) -----------------------------------------------------
static inline float ffn_load_f32(const void *p, enum ffn_dtype dt, int64_t i) {
    switch (dt) {
    case FFN_DTYPE_BF16: return ffn_bf16_to_f32(((const uint16_t *)p)[i]);
    case FFN_DTYPE_F16: return ffn_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline void ffn_store_f32(void *p, enum ffn_dtype dt, int64_t i, float v) {
    switch (dt) {
    case FFN_DTYPE_BF16: ((uint16_t *)p)[i] = ffn_f32_to_bf16(v); break;
    case FFN_DTYPE_F16: ((uint16_t *)p)[i] = ffn_f32_to_f16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

// Rounds an f32 value to the storage type `dt` and back (identity for f32).
static inline float ffn_round_to(enum ffn_dtype dt, float v) {
    switch (dt) {
    case FFN_DTYPE_BF16: return ffn_bf16_to_f32(ffn_f32_to_bf16(v));
    case FFN_DTYPE_F16: return ffn_f16_to_f32(ffn_f32_to_f16(v));
    default: return v;
    }
}

#endif  // FFN_CPU_IMPL_H
