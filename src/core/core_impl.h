// core_impl.h — internals of the core layer: the context, error reporting, CPU features and
// the kernel table type. Never installed; included by every layer below core.
#ifndef FFN_CORE_IMPL_H
#define FFN_CORE_IMPL_H

#include <stdarg.h>

#include "ffn.h"

#define FFN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

// --- kernel table -------------------------------------------------------------------------------
// A kernel processes n contiguous elements. Inputs share the dtype cfg->in, outputs cfg->out.
// Contract for every kernel (scalar and SIMD):
//   - any n ≥ 0, any pointer alignment (only the dtype's natural alignment is assumed: none
//     for the SIMD kernels, which use unaligned loads), any tail;
//   - each output element depends only on the input elements of the same index, computed the
//     same way wherever it lies (body, tail, first or last chunk): this is what makes results
//     bitwise identical for any thread count and any chunking;
//   - an output may alias an input exactly (same pointer, same dtype): read before write.

struct ffn_kcfg {
    enum ffn_dtype in;   // dtype of every input
    enum ffn_dtype out;  // dtype of every output
    bool accurate;       // FFN_ACCURACY_HIGH tier
    bool parity;         // gated forward: round act(gate) to `out` before the multiply
    bool stream;         // outputs are not re-read soon: non-temporal stores welcome
    bool bf16_cvt;       // the CPU has AVX512_BF16: f32 -> bf16 by vcvtneps2bf16 where exact RNE
};

// A streaming (non-temporal) body of a SIMD kernel walks this many interleaved sub-ranges of its
// elements at once, `arrays` being the inputs plus outputs it touches: vector k of every
// sub-range, then vector k + 1, so about 8–10 memory streams are in flight. On one AMD EPYC Zen 4
// core a kernel with ~10 cycles of arithmetic per 64-byte line otherwise leaves the
// hardware prefetchers too little to work with, at every 4 KiB page boundary above all: SiLU
// forward on 4 KiB pages went from 0.82 to 1.06 of a triad with 4 sub-ranges, GeLU-tanh from 0.76
// to 0.92 (docs/performance.md, "Pages"). More than ~10 streams in all was slower. Each element is
// still computed alone by the same vector code, so results do not change.
static inline int ffn_stream_ways(int arrays) { return arrays <= 2 ? 4 : 2; }

// The nine (in, out) dtype pairs of a SIMD kernel: FFN_DTYPE_PAIR_SWITCH(in, out, RUN); runs
// RUN(I, O) for the pair given at run time, I and O being compile-time constants there, so that
// each pair gets a loop of its own with every conversion resolved (f32 = 0, bf16 = 1, f16 = 2).
#define FFN_DTYPE_PAIR_SWITCH(in, out, RUN)                 \
    do {                                                    \
        switch ((int)(in)*3 + (int)(out)) {                 \
        case 0: RUN(FFN_DTYPE_F32, FFN_DTYPE_F32); break;   \
        case 1: RUN(FFN_DTYPE_F32, FFN_DTYPE_BF16); break;  \
        case 2: RUN(FFN_DTYPE_F32, FFN_DTYPE_F16); break;   \
        case 3: RUN(FFN_DTYPE_BF16, FFN_DTYPE_F32); break;  \
        case 4: RUN(FFN_DTYPE_BF16, FFN_DTYPE_BF16); break; \
        case 5: RUN(FFN_DTYPE_BF16, FFN_DTYPE_F16); break;  \
        case 6: RUN(FFN_DTYPE_F16, FFN_DTYPE_F32); break;   \
        case 7: RUN(FFN_DTYPE_F16, FFN_DTYPE_BF16); break;  \
        case 8: RUN(FFN_DTYPE_F16, FFN_DTYPE_F16); break;   \
        default: break;                                     \
        }                                                   \
    } while (0)

// The kernel table's rows are the public operations (enum ffn_op of ffn.h); the kernels, the
// backends and the tests spell them with these internal names, one enum either way.
#define ffn_kop ffn_op
#define FFN_KOP_ACT_FWD FFN_OP_ACT_FWD  // y = act(x)
#define FFN_KOP_ACT_BWD FFN_OP_ACT_BWD  // dx = dy * act'(x)
#define FFN_KOP_GLU_FWD FFN_OP_GLU_FWD  // h = act(gate) * up
#define FFN_KOP_GLU_BWD FFN_OP_GLU_BWD  // dgate = dh * up * act'(gate), dup = dh * act(gate)
#define FFN_KOP_COUNT FFN_OP_COUNT

typedef void (*ffn_act_fwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x);
typedef void (*ffn_act_bwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x,
                               const void *dy);
typedef void (*ffn_glu_fwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate,
                               const void *up);
typedef void (*ffn_glu_bwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup,
                               const void *gate, const void *up, const void *dh);

struct ffn_cpu_kernels {
    ffn_act_fwd_fn act_fwd[FFN_ACT_COUNT];
    ffn_act_bwd_fn act_bwd[FFN_ACT_COUNT];
    ffn_glu_fwd_fn glu_fwd[FFN_ACT_COUNT];
    ffn_glu_bwd_fn glu_bwd[FFN_ACT_COUNT];
    enum ffn_isa isa[FFN_KOP_COUNT][FFN_ACT_COUNT];  // which ISA each entry came from
};

// --- backends ------------------------------------------------------------------------------------
// Core knows a backend only through this table, as it knows a CPU ISA only through the kernel
// table (ggml's ggml_backend_i). The public entry points validate their arguments once, for every
// backend (views, shapes, dtypes, aliasing), and hand the backend a checked call.

// One element-wise call (an activation or gated combine, forward or backward, or a conversion):
// up to 2 outputs and 3 inputs of one non-empty shape, checked by ffn_tensor_check, agreeing in
// shape, inputs of one dtype, outputs of one dtype, no overlap but exact in-place aliases.
struct ffn_ew_call {
    const char *fn;  // the public entry point, for messages
    enum ffn_kop op;
    enum ffn_act act;
    enum ffn_dtype in, out;  // dtype of every input, of every output
    bool accurate;           // FFN_ACCURACY_HIGH
    bool parity;             // gated forward: round act(gate) to `out` before the multiply
    int n_out, n_in;
    const struct ffn_tensor *outs[2], *ins[3];  // in kernel order (FFN_KOP_* comments)
    const char *out_names[2], *in_names[3];
    bool trusted;  // the views are a block's own buffers or views it has checked already: the
                   // backend may skip its per-view pointer checks
};

// --- FFN blocks on a backend ---------------------------------------------------------------------
// A backend that runs FFN blocks has a `block` table. The public entry points (src/block/
// block_api.c) check the context, the block's backend and device and the policy, then call it.
struct ffn_block_i {
    enum ffn_status (*create)(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                              const struct ffn_block_weights *weights,
                              const struct ffn_block_opts *opts, ffn_block_t *block_out);
    void (*destroy)(ffn_block_t block);
    enum ffn_status (*forward)(ffn_ctx_t ctx, ffn_block_t block, const struct ffn_tensor *y,
                               const struct ffn_tensor *x, enum ffn_block_policy policy);
    enum ffn_status (*backward)(ffn_ctx_t ctx, ffn_block_t block,
                                const struct ffn_block_grads *grads, const struct ffn_tensor *dx,
                                const struct ffn_tensor *dy);
    enum ffn_status (*info)(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                            struct ffn_block_info *info);
};

// The first member of every backend's block object: ffn_block_destroy, which has no context,
// finds the backend's destroy through it, and the other entry points check it against the
// context they are given (a CPU block on a CUDA context, a block of another device).
struct ffn_block_hdr {
    const struct ffn_block_i *impl;
    enum ffn_backend backend;
    int device;  // CUDA: the device the block's memory is on; -1 on the CPU
    // Host memory the block owns besides the backend's own (ffn_block_create_from_layer: f32
    // copies of weights the block cannot read in place), freed by ffn_block_destroy. Both
    // backends calloc their block, so a block made by ffn_block_create has none.
    void *owned[8];
    int n_owned;
};

extern const struct ffn_block_i ffn_block_cpu;  // src/block/block.c
#ifdef FFN_HAVE_CUDA
extern const struct ffn_block_i ffn_block_cuda;  // src/cuda/cuda_block.c
#endif

struct ffn_backend_i {
    const char *name;  // "cpu", "cuda"
    // Required. True when the backend can run here; else, with why non-NULL, the reason.
    bool (*available)(char *why, size_t why_size);
    // Optional (NULL: nothing to set up). Makes ctx->be_state from opts (device, stream); on
    // failure leaves a message in ctx and ctx->be_state NULL.
    enum ffn_status (*init)(ffn_ctx_t ctx, const struct ffn_ctx_opts *opts);
    // Optional. Frees ctx->be_state.
    void (*free)(ffn_ctx_t ctx);
    // Required. Runs (or queues, on an asynchronous backend) a checked element-wise call.
    enum ffn_status (*elementwise)(ffn_ctx_t ctx, const struct ffn_ew_call *call);
    // Optional (NULL: the backend has no streams). Later calls queue on `stream`.
    enum ffn_status (*set_stream)(ffn_ctx_t ctx, void *stream);
    // Optional (NULL: calls are synchronous). Waits for the queued work.
    enum ffn_status (*synchronize)(ffn_ctx_t ctx);
    // Optional (NULL: FFN blocks do not run on this backend). Its FFN blocks.
    const struct ffn_block_i *block;
};

extern const struct ffn_backend_i ffn_backend_cpu;  // src/cpu/dispatch.c
#ifdef FFN_HAVE_CUDA
extern const struct ffn_backend_i ffn_backend_cuda;  // src/cuda/cuda_backend.c
#endif

// FFN_STATUS_UNSUPPORTED with a message naming `fn` when ctx is not a CPU context, else OK: for
// the entry points that only the CPU backend serves (the tensor-parallel blocks, whose
// collectives take host memory).
enum ffn_status ffn_ctx_require_cpu(ffn_ctx_t ctx, const char *fn);

// --- context ------------------------------------------------------------------------------------
struct ffn_ctx {
    enum ffn_backend backend;
    const struct ffn_backend_i *be;  // the backend's table
    void *be_state;                  // the backend's own state (CUDA: device properties)
    int device;                      // CUDA: the device ordinal; -1 on the CPU
    void *stream;                    // CUDA: the stream calls queue on (NULL: default stream)
    enum ffn_isa isa;                // the ISA the kernel table was filled for
    int n_threads;                   // ≥ 1
    int default_threads;
    enum ffn_accuracy accuracy;
    bool bf16_parity;
    bool avx512_bf16;  // AVX512_BF16 usable by the AVX-512 kernels ($FFN_AVX512_BF16=0: not)
    ffn_log_fn log;
    void *log_user;
    struct ffn_cpu_kernels kernels;
    char err[1024];
};

// Records a formatted message as the context's last error and returns `status` (so that
// `return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: ...", __func__, ...)` reads naturally).
// ctx may be NULL (the message is then dropped).
enum ffn_status ffn_error(ffn_ctx_t ctx, enum ffn_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Clears the last error (called on entry by every public function that can fail).
void ffn_error_clear(ffn_ctx_t ctx);
// Sends a message to the context's log callback, if any.
void ffn_log(ffn_ctx_t ctx, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// --- CPU features ------------------------------------------------------------------------------
struct ffn_cpu_features {
    bool avx2;         // AVX + AVX2 + FMA + F16C, and the OS saves YMM state
    bool avx512;       // AVX-512 F + BW + DQ + VL, and the OS saves ZMM + opmask state
    bool avx512_bf16;  // AVX512_BF16 on top of avx512
};
void ffn_cpu_features_detect(struct ffn_cpu_features *f);

// --- views --------------------------------------------------------------------------------------
// Checks one view: dtype known, sizes ≥ 0, row_stride ≥ cols when rows > 1, data non-NULL when
// non-empty, byte extent representable. `name` and `fn` appear in the message.
enum ffn_status ffn_tensor_check(ffn_ctx_t ctx, const char *fn, const char *name,
                                 const struct ffn_tensor *t);
// Byte extent [lo, hi) covered by a (checked, non-empty) view.
void ffn_tensor_extent(const struct ffn_tensor *t, uintptr_t *lo, uintptr_t *hi);

// True when two (checked, non-empty) views share a byte. Exact for views with the same row
// stride (the two halves of a fused gate_up buffer do not overlap); conservative otherwise.
bool ffn_tensor_overlap(const struct ffn_tensor *a, const struct ffn_tensor *b);

// Fills `k` for `isa` (scalar entries first, then the ISA's overrides). Defined in src/cpu.
void ffn_cpu_kernels_init(struct ffn_cpu_kernels *k, enum ffn_isa isa);

#endif  // FFN_CORE_IMPL_H
