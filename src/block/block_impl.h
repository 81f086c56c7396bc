// block_impl.h — internals of the FFN block layer (src/block/). Two parts:
//   - the plan (block_plan.c): spec and weight validation and the translation of every stored
//     layout and orientation into GEMM operands (member, element offset, leading dimension,
//     transpose flag), bias pieces and gated-combine groups. Backend-neutral: it names stored
//     tensors and offsets, never a library, so a GPU block can build on the same plan;
//   - the argument checks every backend's block shares (block_plan.c): options, activation
//     views, gradients;
//   - the CPU block (block.c, block_dnnl.c, block_exec.c): oneDNN matmul primitives cached per
//     shape, the library's activation kernels, workspaces. The CUDA block is src/cuda/
//     cuda_block.c, on the same plan; block_api.c dispatches the public entry points.
// Never installed.
#ifndef FFN_BLOCK_IMPL_H
#define FFN_BLOCK_IMPL_H

#include "core/core_impl.h"
#include "cpu/cpu_impl.h"

// -------------------------------------------------------------------------------------------
// The plan (backend-neutral)
// -------------------------------------------------------------------------------------------

// Members of ffn_block_weights / ffn_block_grads, in their order there.
enum ffn_blk_which { FFN_BLK_GATE = 0, FFN_BLK_UP, FFN_BLK_GATE_UP, FFN_BLK_DOWN, FFN_BLK_COUNT };

// One stored matrix as the caller gave it: element (r, c) at p + (r·ld + c)·dtype_size; R × C
// follows from the spec and the orientation.
struct ffn_blk_stored {
    const void *p;  // NULL: the spec does not use this member
    enum ffn_dtype dtype;
    enum ffn_weight_orient orient;
    int64_t R, C, ld;
};

// A weight as a GEMM operand in the "x·W" sense: the logical matrix W is [K = in, N = out] and
// lies in stored member `which` from stored row `row0` (element row0·ld), with row stride
// ld' = ld_mult·ld. Stored [out, in] (nn.Linear) it is used transposed (trans = true): W(k, n)
// at n·ld' + k; stored [in, out] (Conv1D) as is: W(k, n) at k·ld' + n. A row-interleaved
// gate/up is ld_mult = 2 (gate from row 0, up from row 1), so no layout needs a copy.
struct ffn_blk_mat {
    enum ffn_blk_which which;
    int64_t row0;
    int64_t ld_mult;
    bool trans;
};

// One GEMM of the first projection: plane `seg index` of P, columns [0, n), gets x · W (+ bias).
// Its weight gradient goes to grads member `which` at element offset grad_off, leading
// dimension grad_ld (the dense stored shape, transposed like the weight).
struct ffn_blk_seg {
    struct ffn_blk_mat w;
    int64_t n;
    int64_t grad_off, grad_ld;
};

// One bias piece of the first projection: P[seg][:, col0 + j] += b[off + j·stride], j < n, b
// being the bias member `which` (FFN_BLK_GATE → b_gate, ...). Its gradient (a column sum of dP)
// goes to the same member of the gradients at off + j·stride.
struct ffn_blk_bias {
    enum ffn_blk_which which;
    int64_t off, stride;
    int seg;
    int64_t col0, n;
};

// Where the pre-activations lie. P has one plane per segment, each [rows, p_ld] row-major
// (p_ld = seg[k].n for every k), planes one after the other. Group g of the gated combine reads
// gate columns g0 + g·gs of plane g_plane and up columns u0 + g·gs of plane u_plane (gw each)
// and writes h columns g·gw. One group unless the layout is BLOCKED.
struct ffn_block_plan {
    struct ffn_block_spec spec;
    int64_t pc;    // pre-activation columns in all: d_ff (plain) or 2·d_ff (gated)
    int64_t p_ld;  // columns of one plane
    int n_seg;     // GEMMs of the first projection (1 or 2): the planes
    struct ffn_blk_seg seg[2];
    int n_bias;  // bias pieces of the first projection (0..2)
    struct ffn_blk_bias bias[2];
    int64_t n_groups, gw, gs;
    int g_plane, u_plane;
    int64_t g0, u0;
    struct ffn_blk_mat down;  // logical [d_ff, d_model]
    int64_t down_grad_ld;
    bool has_b_down;
    struct ffn_blk_stored mat[FFN_BLK_COUNT];  // the stored matrices
    struct ffn_blk_stored vec[FFN_BLK_COUNT];  // the stored biases (R = 1, C = length)
    int64_t n_params;
    size_t weight_bytes;
};

// Validates spec and weights (messages name the function `fn`) and fills the plan.
// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_UNSUPPORTED (a row-interleaved
//         [in, out] gate/up: its gate and up are stride-2 columns)
enum ffn_status ffn_block_plan_make(ffn_ctx_t ctx, const char *fn,
                                    const struct ffn_block_spec *spec,
                                    const struct ffn_block_weights *weights,
                                    struct ffn_block_plan *plan);

// The options with defaults filled in (opts NULL: all defaults; a shorter struct of an older
// caller: the prefix it knows). Checks what every backend needs; a backend refuses what it
// cannot do itself (the CPU: FFN_BLOCK_MATH_TF32).
// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
enum ffn_status ffn_block_opts_read(ffn_ctx_t ctx, const char *fn,
                                    const struct ffn_block_opts *opts, struct ffn_block_opts *o);

// Checks an activation view: f32 or bf16, [rows, d_model] (rows < 0: any), sizes a GEMM call
// takes. @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
enum ffn_status ffn_block_check_act(ffn_ctx_t ctx, const char *fn, const char *name,
                                    const struct ffn_tensor *t, int64_t d, int64_t rows);
// True when two views share a byte (empty views share none).
bool ffn_block_views_overlap(const struct ffn_tensor *a, const struct ffn_tensor *b);
// True when two views are the same view (pointer, dtype, shape, row stride).
bool ffn_block_same_view(const struct ffn_tensor *a, const struct ffn_tensor *b);

// The gradient member of `g` for stored member w (bias: its bias).
void *ffn_block_grad_member(const struct ffn_block_grads *g, enum ffn_blk_which w, bool bias);
// Rejects a gradient asked for a tensor the block does not have, a short struct, a dtype other
// than f32/bf16; *gdt receives the gradients' dtype (f32 for an older caller's struct).
enum ffn_status ffn_block_check_grads(ffn_ctx_t ctx, const char *fn,
                                      const struct ffn_block_plan *pl,
                                      const struct ffn_block_grads *g, enum ffn_dtype *gdt);

// --- a block from a model's layer (block_layer.c) ---------------------------------------------
// Host copies a block made from a layer may own: one per weight and bias.
#define FFN_BLOCK_LAYER_OWNED 8

// The spec and weights of a block for layer l: every weight and bias a view of its file tensor
// where the block reads the dtype in place (F32, BF16, F16, aligned), else an f32 copy put in
// owned[*n_owned] (malloc'ed; the caller frees them, on failure too). Weights whose bit
// 1u << FFN_BLK_* is set in `flip` are read in the other orientation than the layer's, their
// shapes left undeclared (what `ffn verify` tries against converter mistakes); flip 0 is the
// layer as stored. @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_OUT_OF_MEMORY, and
// the reader's statuses
enum ffn_status ffn_block_layer_read(ffn_ctx_t ctx, const char *fn, const struct ffn_model_layer *l,
                                     unsigned flip, struct ffn_block_spec *spec,
                                     struct ffn_block_weights *w,
                                     void *owned[FFN_BLOCK_LAYER_OWNED], int *n_owned);
// The spec's bias flags from the biases present in w (a fused gate_up's bias counts for both).
void ffn_block_spec_biases(struct ffn_block_spec *spec, const struct ffn_block_weights *w);

// The checks every backend's ffn_block_forward makes on its views: x [T, d_model], y [T, d_model],
// y not overlapping x (the block needs x intact until the end, and for the backward).
// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
enum ffn_status ffn_block_check_forward(ffn_ctx_t ctx, const char *fn,
                                        const struct ffn_block_plan *pl, const struct ffn_tensor *y,
                                        const struct ffn_tensor *x);
// The checks every backend's ffn_block_backward makes before it changes anything: the gradient
// set g (ffn_block_check_grads; *gdt its dtype), a pending training forward (`pending`, of T
// tokens from x), dy and dx (NULL: not asked) of [T, d_model], dx overlapping neither dy nor x
// unless it is the same view. @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
enum ffn_status ffn_block_check_backward(ffn_ctx_t ctx, const char *fn,
                                         const struct ffn_block_plan *pl,
                                         enum ffn_block_policy pending, const struct ffn_tensor *x,
                                         int64_t T, const struct ffn_block_grads *g,
                                         const struct ffn_tensor *dx, const struct ffn_tensor *dy,
                                         enum ffn_dtype *gdt);
// Whether a backward needs dP, the gradient of the first projection's output: dx is asked
// (want_dx) or a gradient of a first-projection weight or bias is.
bool ffn_block_need_dp(const struct ffn_block_plan *pl, const struct ffn_block_grads *g,
                       bool want_dx);

// Strides (elements) of the logical [K, N] matrix of `w` whose member has leading dimension ld:
// s[0] along K, s[1] along N. Its transpose [N, K] has them swapped.
static inline void ffn_blk_mat_strides(const struct ffn_blk_mat *w, int64_t ld, int64_t s[2]) {
    const int64_t l = ld * w->ld_mult;
    s[0] = w->trans ? 1 : l;
    s[1] = w->trans ? l : 1;
}

// -------------------------------------------------------------------------------------------
// The CPU block
// -------------------------------------------------------------------------------------------

// Row tiles of the TILED schedule are sized so that one tile of P and of h stays in cache
// between the GEMM that writes it and the activation that reads it.
#define FFN_BLOCK_TILE_BYTES ((size_t)2 << 20)
// Fewer rows than this per GEMM call cost the matrix engines more than the cache saves.
#define FFN_BLOCK_TILE_MIN_ROWS ((int64_t)64)

// A matrix operand of one GEMM is the cpu layer's struct ffn_cpu_mat (cpu/cpu_impl.h): element
// (i, j) at p + (i·s0 + j·s1)·dtype_size.

struct ffn_mm_cache;  // oneDNN primitives of one block, by shape (block_dnnl.c)

// A workspace buffer that grows on demand.
struct ffn_blk_buf {
    void *p;
    size_t cap;  // bytes
};

struct ffn_block {
    struct ffn_block_hdr hdr;  // first: the backend's table (core_impl.h)
    struct ffn_block_plan plan;
    struct ffn_block_opts opts;

    // Compute operands: per stored member, the pointer, dtype and ld the GEMMs read (the
    // caller's memory, or this block's cache when oneDNN has no kernel for the stored dtype or
    // opts.math asks for bf16), and f32 biases.
    struct ffn_blk_stored op[FFN_BLK_COUNT];
    const float *bias[FFN_BLK_COUNT];

    // Owned memory: the cache (converted weights and biases, one allocation) and workspaces.
    void *cache;
    size_t cache_bytes;
    struct ffn_blk_buf P;     // f32 pre-activations, [planes][rows][p_ld]
    struct ffn_blk_buf S;     // saved pre-activations / their gradients in save dtype (bf16)
    struct ffn_blk_buf H;     // h / dh
    struct ffn_blk_buf D;     // dP in the first projection's compute dtype, when it differs
    struct ffn_blk_buf X[2];  // x (or dy) converted for a GEMM: by compute dtype
    struct ffn_blk_buf W;     // f32 staging of a GEMM's output of another dtype
    struct ffn_blk_buf Y;     // dy converted
    struct ffn_blk_buf Z;     // f32 sum of the two dx products when dx is not f32
    double *colsum;
    size_t colsum_cap;

    struct ffn_mm_cache *mm;
    char gemm_impl[64];

    // The pending training forward (policy NONE: none).
    enum ffn_block_policy pending;
    enum ffn_dtype saved_dtype;  // of the kept pre-activations (P f32 or S bf16)
    bool saved_h;                // SAVE also kept h (in H), so the backward need not recompute it
    struct ffn_tensor px;        // its x (the caller's view)
    int64_t p_tokens;
};

// The CPU block's entry points (ffn_block_cpu, block.c; the public ones are in block_api.c).
enum ffn_status ffn_cpu_block_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                     const struct ffn_block_weights *weights,
                                     const struct ffn_block_opts *opts, ffn_block_t *block_out);
void ffn_cpu_block_destroy(ffn_block_t block);
enum ffn_status ffn_cpu_block_forward(ffn_ctx_t ctx, ffn_block_t block, const struct ffn_tensor *y,
                                      const struct ffn_tensor *x, enum ffn_block_policy policy);
enum ffn_status ffn_cpu_block_backward(ffn_ctx_t ctx, ffn_block_t block,
                                       const struct ffn_block_grads *grads,
                                       const struct ffn_tensor *dx, const struct ffn_tensor *dy);
enum ffn_status ffn_cpu_block_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                                   struct ffn_block_info *info);

// Registers the forward's weight operands with the block's GEMM cache (opts.pack_weights).
void ffn_block_pack_weights(struct ffn_block *b);

// Rows per tile for n_tokens under the block's schedule (n_tokens when SEPARATE).
int64_t ffn_block_tile_rows(const struct ffn_block *b, int64_t n_tokens);

// --- oneDNN (block_dnnl.c) ------------------------------------------------------------------
enum ffn_status ffn_mm_cache_create(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache **out);
void ffn_mm_cache_destroy(struct ffn_mm_cache *c);
// C[M, N] = A[M, K] · B[K, N] (+ bias[N], f32) (+ C when accumulate), accumulating in f32.
// A and B share a dtype (f32 or bf16). C may be f32 or bf16 (bf16 only with bf16 A and B;
// otherwise the caller stages through f32). Runs on ffn_ctx_threads(ctx) threads. impl_out,
// when not NULL, receives oneDNN's implementation name (static storage).
enum ffn_status ffn_mm_run(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache *c, int64_t M,
                           int64_t N, int64_t K, const struct ffn_cpu_mat *A,
                           const struct ffn_cpu_mat *B, const struct ffn_cpu_mat *C,
                           const float *bias, bool accumulate, const char **impl_out);
// Registers B, a weight as a forward GEMM reads it, to be read from a copy in the layout oneDNN's
// kernel prefers (opts.pack_weights), made at the first oneDNN GEMM on it (the skinny GEMM of a
// few rows reads B as it lies); GEMMs reading B otherwise (transposed) are not affected.
void ffn_mm_pack_add(struct ffn_mm_cache *c, const struct ffn_cpu_mat *B);
// Bytes of the packed weights the cache holds (made at first use).
size_t ffn_mm_packed_bytes(const struct ffn_mm_cache *c);
// True when oneDNN has a matmul for operands of this dtype on this CPU (asked, not assumed:
// oneDNN 2.6 has none for f16, and none for bf16 on a CPU without AVX-512).
bool ffn_mm_has_dtype(struct ffn_mm_cache *c, enum ffn_dtype dt);

// OpenMP thread count of the calling thread, set to the context's for the duration of a call.
struct ffn_blk_threads {
    int saved;
};
void ffn_blk_threads_enter(ffn_ctx_t ctx, struct ffn_blk_threads *t);
void ffn_blk_threads_leave(const struct ffn_blk_threads *t);

#endif  // FFN_BLOCK_IMPL_H
