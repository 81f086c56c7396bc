// core_impl.h — internals of the core layer: the context, error reporting, CPU features, views,
// and the tables through which core reaches the backends (CPU, CUDA) and their FFN blocks. Core
// knows no kernel: the CPU kernel ABI and table are the CPU layer's (src/cpu/kernels.h). Never
// installed; included by every layer above core.
#ifndef FFN_CORE_IMPL_H
#define FFN_CORE_IMPL_H

#include <stdarg.h>

#include "ffn.h"

#define FFN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

// The operations (enum ffn_op of ffn.h) as the backends, their kernels and the tests spell them:
// internal names, one enum either way.
#define ffn_kop ffn_op
#define FFN_KOP_ACT_FWD FFN_OP_ACT_FWD  // y = act(x)
#define FFN_KOP_ACT_BWD FFN_OP_ACT_BWD  // dx = dy * act'(x)
#define FFN_KOP_GLU_FWD FFN_OP_GLU_FWD  // h = act(gate) * up
#define FFN_KOP_GLU_BWD FFN_OP_GLU_BWD  // dgate = dh * up * act'(gate), dup = dh * act(gate)
#define FFN_KOP_COUNT FFN_OP_COUNT

// --- backends ------------------------------------------------------------------------------------
// Core knows a backend only through this table (ggml's ggml_backend_i); the CPU backend keeps its
// kernel table in its own state, as CUDA keeps its device properties. The public entry points validate their arguments once, for every
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
// block_api.c) check the context, the block's backend and device, the policy and the NULL
// pointers (spec, weights, block_out; x, y; dy; info, its size and n_tokens ≥ 0), then call it.
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
    // Optional (NULL: FFN_ISA_AUTO for every entry). The CPU ISA whose kernel runs (op, act)
    // (ffn_ctx_kernel_isa; op and act are checked).
    enum ffn_isa (*kernel_isa)(ffn_ctx_t ctx, enum ffn_kop op, enum ffn_act act);
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
    void *be_state;    // the backend's own state (CPU: kernel table; CUDA: device properties)
    int device;        // CUDA: the device ordinal; -1 on the CPU
    void *stream;      // CUDA: the stream calls queue on (NULL: default stream)
    enum ffn_isa isa;  // the CPU ISA chosen (the CPU backend's kernels are its)
    int n_threads;     // ≥ 1
    int default_threads;
    enum ffn_accuracy accuracy;
    bool bf16_parity;
    ffn_log_fn log;
    void *log_user;
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
    bool amx_bf16;     // AMX-BF16 + AMX-TILE on top of avx512, and the OS saves the tile state
    bool amd;          // vendor "AuthenticAMD"
    int family;        // CPUID family, extended family added (AMD Zen 4: 25, Zen 5: 26; Intel: 6)
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

#endif  // FFN_CORE_IMPL_H
