// ffn.h — the one public header of libffn: the feed-forward stage of transformers.
//
// Overview
// --------
// ffn computes the activations of a transformer FFN (GeLU, SiLU, ReLU, sigmoid, identity,
// quick-GeLU), the gated combines of the GLU family (SwiGLU, GeGLU, ReGLU, GLU, Bilinear:
// h = act(gate) * up), and their backward passes, on f32 / bf16 / f16 data, with SIMD kernels
// chosen at run time (scalar reference, AVX2+FMA, AVX-512) and OpenMP threads, or with CUDA
// kernels on an NVIDIA GPU (a context for FFN_BACKEND_CUDA: device pointers, a stream).
//
// Every entry point returns an `enum ffn_status`; on failure `ffn_ctx_last_error(ctx)` says what
// was wrong. The library never aborts, exits or prints on the caller's behalf.
//
// Data is passed as `struct ffn_tensor` views: a pointer, a dtype and a 2-D shape with a row
// stride, so a fused [tokens, 2m] gate_up buffer is consumed in place (see ffn_tensor_cols()).
//
// Example (the classic `gelu_inplace` and `swiglu_combine`):
//
//     #include <ffn.h>
//     ffn_ctx_t ctx;
//     struct ffn_ctx_opts opts = FFN_CTX_OPTS_INIT;
//     if (ffn_ctx_create(&opts, &ctx) != FFN_STATUS_OK) return 1;
//
//     float x[1024] = {0};                                      // pre-activations
//     struct ffn_tensor tx = ffn_tensor_vec(x, FFN_DTYPE_F32, 1024);
//     ffn_act_forward(ctx, FFN_ACT_GELU_TANH, &tx, &tx);       // in place: y == x
//
//     float gu[8][2 * 64], h[8][64];                            // fused [tokens, 2m], gate first
//     struct ffn_tensor fused = ffn_tensor_2d(gu, FFN_DTYPE_F32, 8, 128, 128);
//     struct ffn_tensor gate = ffn_tensor_cols(&fused, 0, 64);
//     struct ffn_tensor up   = ffn_tensor_cols(&fused, 64, 64);
//     struct ffn_tensor th   = ffn_tensor_2d(h, FFN_DTYPE_F32, 8, 64, 64);
//     if (ffn_glu_forward(ctx, FFN_ACT_SILU, &th, &gate, &up) != FFN_STATUS_OK)
//         fprintf(stderr, "%s\n", ffn_ctx_last_error(ctx));
//     ffn_ctx_destroy(ctx);
//
// Numerical contract (docs/numerics.md has the measured tables): arithmetic in f32 at least,
// bf16/f16 results rounded to nearest-even from the f32 result (CUDA's default tier: computed for
// the 16-bit output, within 0.52 ulp, at most one ulp from that rounding); f32 forward within 2 ulp
// (SiLU, ReLU, SwiGLU, ReGLU) or 4 ulp (GeLUs, GeGLU; 2 ulp with FFN_ACCURACY_HIGH) of the
// correctly rounded value; backward within 8 ulp away from the zeros of the derivative;
// NaN in -> NaN out; act(+inf) = +inf, act(-inf) = -0 for GeLU/SiLU; no input clamping.
#ifndef FFN_H
#define FFN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(FFN_SHARED)
#    ifdef FFN_BUILD
#        define FFN_API __declspec(dllexport)
#    else
#        define FFN_API __declspec(dllimport)
#    endif
#elif defined(__GNUC__)
#    define FFN_API __attribute__((visibility("default")))
#else
#    define FFN_API
#endif

#define FFN_VERSION_MAJOR 0
#define FFN_VERSION_MINOR 1
#define FFN_VERSION_PATCH 0

// -------------------------------------------------------------------------------------------
// Status codes
// -------------------------------------------------------------------------------------------

enum ffn_status {
    FFN_STATUS_OK = 0,
    FFN_STATUS_INVALID_ARG,    // NULL pointer, bad shape, bad stride, unknown enum value
    FFN_STATUS_UNSUPPORTED,    // valid request this build or CPU cannot serve (e.g. ISA)
    FFN_STATUS_OUT_OF_MEMORY,  // an allocation failed
    FFN_STATUS_BAD_FORMAT,     // a file or header is malformed or hostile
    FFN_STATUS_IO,             // open/read/write/mmap failed
    FFN_STATUS_NOT_FOUND,      // a named tensor, key or file is missing
    FFN_STATUS_NON_FINITE,     // a result that must be finite is not (reported, never hidden)
    FFN_STATUS_BACKEND,        // a backend (BLAS, CUDA, MPI) reported an error
    FFN_STATUS_INTERNAL,       // a bug in ffn: please report it
    FFN_STATUS_COUNT
};

/// Short static text for a status ("invalid argument"); never NULL, also for unknown values.
FFN_API const char *ffn_status_string(enum ffn_status status);

// -------------------------------------------------------------------------------------------
// Data types, activations, instruction sets
// -------------------------------------------------------------------------------------------

enum ffn_dtype { FFN_DTYPE_F32 = 0, FFN_DTYPE_BF16, FFN_DTYPE_F16, FFN_DTYPE_COUNT };

/// Bytes per element (4, 2, 2); 0 for an unknown dtype.
FFN_API size_t ffn_dtype_size(enum ffn_dtype dtype);
/// "f32", "bf16", "f16"; "?" for an unknown dtype.
FFN_API const char *ffn_dtype_name(enum ffn_dtype dtype);
/// Parses "f32" | "bf16" | "f16" (also "float32", "bfloat16", "float16").
FFN_API enum ffn_status ffn_dtype_from_name(const char *name, enum ffn_dtype *dtype_out);

enum ffn_act {
    FFN_ACT_GELU_TANH = 0,  // x·σ(2u), u = √(2/π)(x + 0.044715x³)  (= 0.5x(1+tanh u))
    FFN_ACT_GELU_ERF,       // 0.5·x·erfc(-x/√2)                     (= x·Φ(x))
    FFN_ACT_SILU,           // x·σ(x)                                 (Swish-1)
    FFN_ACT_RELU,           // x > 0 ? x : +0; relu'(x) = x > 0 ? 1 : 0 (as PyTorch)
    FFN_ACT_SIGMOID,        // σ(x) = 1/(1+e^-x)                      (gate of the original GLU)
    FFN_ACT_IDENTITY,       // x                                      (Bilinear GLU)
    FFN_ACT_QUICK_GELU,     // x·σ(1.702x)                            (CLIP's GeLU approximation)
    FFN_ACT_COUNT
};

/// Canonical name: "gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu".
FFN_API const char *ffn_act_name(enum ffn_act act);
/// Parses a canonical name (not the Hugging Face aliases: the io layer maps those).
FFN_API enum ffn_status ffn_act_from_name(const char *name, enum ffn_act *act_out);
/// Name of the gated combine built on `act`: "geglu_tanh", "geglu_erf", "swiglu", "reglu",
/// "glu", "bilinear", "quick_geglu".
FFN_API const char *ffn_glu_name(enum ffn_act act);

enum ffn_isa {
    FFN_ISA_AUTO = 0,  // best the CPU and OS support (or $FFN_ISA when set)
    FFN_ISA_SCALAR,    // portable C reference: the oracle for every other kernel
    FFN_ISA_AVX2,      // x86-64 AVX2 + FMA + F16C
    FFN_ISA_AVX512,    // x86-64 AVX-512 F/BW/DQ/VL
    FFN_ISA_COUNT
};

/// "auto", "scalar", "avx2", "avx512".
FFN_API const char *ffn_isa_name(enum ffn_isa isa);
FFN_API enum ffn_status ffn_isa_from_name(const char *name, enum ffn_isa *isa_out);
/// True when this build has kernels for `isa` and this CPU + OS can run them
/// (CPUID feature bits and the XSAVE-enabled register state in XCR0).
FFN_API bool ffn_isa_supported(enum ffn_isa isa);

enum ffn_accuracy {
    FFN_ACCURACY_DEFAULT = 0,  // the fast tier: bounds as in the overview
    FFN_ACCURACY_HIGH,         // GeLU/GeGLU forward ≤ 2 ulp, at a documented speed cost
};

// -------------------------------------------------------------------------------------------
// Context: backend, chosen kernels, thread count, last error. No global mutable state: two
// contexts are independent; one context must not be used by two threads at once. ffn changes
// no process-wide setting: the activations pass ffn_ctx_threads() to their parallel region; a
// block call sets the calling thread's OpenMP count (omp_set_num_threads, a per-thread value
// that oneDNN follows) and restores it before returning. The libraries keep their own
// process-wide state (libgomp's thread pool, oneDNN's primitive cache) with their defaults.
//
// Backends. A context runs on one backend, chosen at create (opts.backend):
//   FFN_BACKEND_CPU   host memory, SIMD kernels and OpenMP threads (the default).
//   FFN_BACKEND_CUDA  an NVIDIA GPU (opts.device, sm_90 and newer): every view's data is device
//                     memory (cudaMalloc, cudaMallocManaged, or mapped pinned host memory), and
//                     the activation entry points queue their kernel on the context's stream
//                     (opts.stream, a cudaStream_t; NULL: the default stream) and return without
//                     waiting: nothing is copied, nothing synchronized. ffn_ctx_synchronize()
//                     waits for the stream; or order later work on the same stream.
// Same entry points, views, dtypes, strides, in-place rules and numerical contract on both. A
// build without CUDA, or a machine without a usable GPU, refuses a CUDA context with
// FFN_STATUS_UNSUPPORTED and a message; CUDA errors (a failed launch, a sticky error from earlier
// work, out of memory) come back as FFN_STATUS_BACKEND with CUDA's words in ffn_ctx_last_error.
// FFN blocks (ffn_block_*) run on both: oneDNN's matmul on the CPU, cuBLASLt on CUDA.
// -------------------------------------------------------------------------------------------

typedef struct ffn_ctx *ffn_ctx_t;

enum ffn_backend { FFN_BACKEND_CPU = 0, FFN_BACKEND_CUDA, FFN_BACKEND_COUNT };

/// "cpu", "cuda"; "?" for an unknown value.
FFN_API const char *ffn_backend_name(enum ffn_backend backend);
/// Parses "cpu" | "cuda". @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_backend_from_name(const char *name, enum ffn_backend *backend_out);
/// True when this build has the backend and it can run here: always for the CPU; for CUDA, the
/// build has the CUDA backend and the driver reports at least one device of compute capability
/// 9.0 or newer. Otherwise, when `why` is non-NULL, writes the reason there (NUL-terminated,
/// truncated to why_size): "this build of ffn has no CUDA backend (configure with nvcc ...)",
/// "no CUDA device: cudaGetDeviceCount: no CUDA-capable device is detected", ...
FFN_API bool ffn_backend_available(enum ffn_backend backend, char *why, size_t why_size);

/// Optional log sink (level 0 = error, 1 = warning, 2 = info, 3 = debug).
typedef void (*ffn_log_fn)(int level, const char *message, void *user);

struct ffn_ctx_opts {
    size_t size;                 // sizeof(struct ffn_ctx_opts): lets the ABI grow
    enum ffn_isa force_isa;      // FFN_ISA_AUTO: best supported, or $FFN_ISA when set
    int n_threads;               // 0: OpenMP's default (omp_get_max_threads())
    enum ffn_accuracy accuracy;  // kernel accuracy tier
    bool bf16_parity;            // gated forward: round act(gate) to the output's storage type
                                 // before the multiply, as PyTorch eager code does (bf16/f16)
    ffn_log_fn log;              // may be NULL
    void *log_user;
    enum ffn_backend backend;  // FFN_BACKEND_CPU (0) or FFN_BACKEND_CUDA
    int device;                // CUDA: device ordinal (0: the first GPU)
    void *stream;              // CUDA: a cudaStream_t of that device (NULL: default stream);
                               // the caller keeps it alive while the context uses it
};

// The _INIT macros are laid out by hand (clang-format would put each brace on its own line).
// clang-format off
#define FFN_CTX_OPTS_INIT                                                                    \
    { sizeof(struct ffn_ctx_opts), FFN_ISA_AUTO, 0, FFN_ACCURACY_DEFAULT, false, NULL, NULL, \
      FFN_BACKEND_CPU, 0, NULL }
// clang-format on

/// Creates a context. `opts` may be NULL (defaults). A forced ISA that the CPU cannot run
/// gives FFN_STATUS_UNSUPPORTED; so does an unknown $FFN_ISA value (named in the message,
/// which is written to *ctx_out's error buffer when a context could be made, else logged).
/// A CUDA context checks the device (present, compute capability ≥ 9.0) and leaves the calling
/// thread's current CUDA device as it was. When no context is made, the reason goes to the log
/// callback (opts.log); ffn_backend_available() gives it too.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (unknown backend, negative device),
///         FFN_STATUS_UNSUPPORTED (ISA; a backend this build lacks; no such device; a device too
///         old), FFN_STATUS_BACKEND (the CUDA runtime failed), FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_ctx_create(const struct ffn_ctx_opts *opts, ffn_ctx_t *ctx_out);
/// Frees the context; NULL is a no-op.
FFN_API void ffn_ctx_destroy(ffn_ctx_t ctx);
/// The message of the last failed call on this context ("" if none). Valid until the next call.
FFN_API const char *ffn_ctx_last_error(ffn_ctx_t ctx);
/// The ISA whose kernels this context runs.
FFN_API enum ffn_isa ffn_ctx_isa(ffn_ctx_t ctx);
/// Thread count for the kernels (≥ 1; 0 restores the default). Results are bitwise identical
/// for every thread count.
FFN_API enum ffn_status ffn_ctx_set_threads(ffn_ctx_t ctx, int n_threads);
FFN_API int ffn_ctx_threads(ffn_ctx_t ctx);
FFN_API enum ffn_status ffn_ctx_set_accuracy(ffn_ctx_t ctx, enum ffn_accuracy accuracy);
FFN_API enum ffn_accuracy ffn_ctx_accuracy(ffn_ctx_t ctx);
/// The backend this context runs on (FFN_BACKEND_CPU for NULL).
FFN_API enum ffn_backend ffn_ctx_backend(ffn_ctx_t ctx);
/// CUDA: the device ordinal (-1 for a CPU context or NULL).
FFN_API int ffn_ctx_device(ffn_ctx_t ctx);
/// CUDA: the stream later calls queue their work on (a cudaStream_t of the context's device;
/// NULL: the default stream). Work already queued stays where it is. The caller keeps the stream
/// alive while the context uses it.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL ctx), FFN_STATUS_UNSUPPORTED (a non-NULL
///         stream for a CPU context, which has none)
FFN_API enum ffn_status ffn_ctx_set_stream(ffn_ctx_t ctx, void *stream);
/// The context's stream (NULL: the default stream, and always for a CPU context).
FFN_API void *ffn_ctx_stream(ffn_ctx_t ctx);
/// Waits until the work queued by this context has finished (CUDA: cudaStreamSynchronize of its
/// stream; CPU: returns at once, every call is synchronous). An error of earlier asynchronous work
/// (an illegal address, a failed kernel) surfaces here, as FFN_STATUS_BACKEND.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_ctx_synchronize(ffn_ctx_t ctx);

// -------------------------------------------------------------------------------------------
// Tensor views
// -------------------------------------------------------------------------------------------

/// A 2-D row-major view: element (r, c) lies at data + (r*row_stride + c)*dtype_size.
/// A vector of n elements is rows = 1, cols = n. Pointers need no alignment beyond the
/// dtype's natural one (and not even that for the CPU kernels).
struct ffn_tensor {
    void *data;
    enum ffn_dtype dtype;
    int64_t rows;
    int64_t cols;
    int64_t row_stride;  // in elements, ≥ cols (or any value when rows == 1)
};

static inline struct ffn_tensor ffn_tensor_vec(void *data, enum ffn_dtype dtype, int64_t n) {
    struct ffn_tensor t = {data, dtype, 1, n, n};
    return t;
}

static inline struct ffn_tensor ffn_tensor_2d(void *data, enum ffn_dtype dtype, int64_t rows,
                                              int64_t cols, int64_t row_stride) {
    struct ffn_tensor t = {data, dtype, rows, cols, row_stride};
    return t;
}

/// Columns [col0, col0 + ncols) of `t`, without a copy: the gate or up half of a fused
/// gate_up buffer. The caller keeps the range inside t->cols (the entry points check views).
static inline struct ffn_tensor ffn_tensor_cols(const struct ffn_tensor *t, int64_t col0,
                                                int64_t ncols) {
    size_t esize = t->dtype == FFN_DTYPE_F32 ? 4 : 2;
    struct ffn_tensor v = {(char *)t->data + (size_t)col0 * esize, t->dtype, t->rows, ncols,
                           t->row_stride};
    return v;
}

/// Layout of a fused [rows, 2m] gate/up activation buffer.
enum ffn_gate_up_order {
    FFN_GATE_UP_GATE_FIRST = 0,  // [gate | up]: Phi-3 gate_up_proj, vLLM MergedColumnParallel
    FFN_GATE_UP_UP_FIRST,        // [up | gate]
};

/// Splits a fused [rows, 2m] view into its gate and up halves (views, no copy).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL, odd column count: "fused has 343 columns;
///         a fused gate/up needs an even count")
FFN_API enum ffn_status ffn_gate_up_split(ffn_ctx_t ctx, const struct ffn_tensor *fused,
                                          enum ffn_gate_up_order order, struct ffn_tensor *gate_out,
                                          struct ffn_tensor *up_out);

// -------------------------------------------------------------------------------------------
// Activations: forward and backward
//
// All entry points take any shape (64-bit counts), any alignment, any tail. Inputs share one
// dtype, outputs share one dtype; input and output dtypes may differ (bf16 in, f32 out).
// Every view is checked: NULL data with a non-empty shape, negative sizes, row_stride < cols,
// byte-size overflow, shapes that disagree, unknown dtype or act -> FFN_STATUS_INVALID_ARG.
// An empty shape (rows or cols 0) is a valid no-op.
// In place: an output may be the same view as an input of the same dtype (exact alias); a
// partial overlap is undefined.
// On a CUDA context the views hold device memory and each call queues one kernel on the
// context's stream (asynchronous: see ffn_ctx_synchronize). Found before the launch and refused
// with FFN_STATUS_INVALID_ARG: a pointer the device cannot access (plain host memory, memory of
// another device), a view that runs past the end of its allocation. A failed launch, or an
// error left by earlier work on the device, is FFN_STATUS_BACKEND.
// -------------------------------------------------------------------------------------------

/// y = act(x), elementwise. y == x is the classic `gelu_inplace`.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND (CUDA)
FFN_API enum ffn_status ffn_act_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *y,
                                        const struct ffn_tensor *x);

/// dx = dy * act'(x), elementwise. dx may alias x or dy.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND (CUDA)
FFN_API enum ffn_status ffn_act_backward(ffn_ctx_t ctx, enum ffn_act act,
                                         const struct ffn_tensor *dx, const struct ffn_tensor *x,
                                         const struct ffn_tensor *dy);

/// Gated combine h = act(gate) * up, elementwise (the classic `swiglu_combine`; SwiGLU with
/// FFN_ACT_SILU, GeGLU with a GeLU, ReGLU with FFN_ACT_RELU, GLU with FFN_ACT_SIGMOID, Bilinear
/// with FFN_ACT_IDENTITY). gate and up are not interchangeable. h may alias gate or up.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND (CUDA)
FFN_API enum ffn_status ffn_glu_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *h,
                                        const struct ffn_tensor *gate, const struct ffn_tensor *up);

/// Gated backward: dgate = dh * up * act'(gate), dup = dh * act(gate). dgate may alias gate
/// and dup may alias up (in-place gradients over the saved pre-activations); either output may
/// also alias dh.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND (CUDA)
FFN_API enum ffn_status ffn_glu_backward(ffn_ctx_t ctx, enum ffn_act act,
                                         const struct ffn_tensor *dgate,
                                         const struct ffn_tensor *dup,
                                         const struct ffn_tensor *gate, const struct ffn_tensor *up,
                                         const struct ffn_tensor *dh);

/// The four elementwise operations above, as a context's kernel table holds them: one kernel
/// per operation and activation.
enum ffn_op {
    FFN_OP_ACT_FWD = 0,  // ffn_act_forward
    FFN_OP_ACT_BWD,      // ffn_act_backward
    FFN_OP_GLU_FWD,      // ffn_glu_forward
    FFN_OP_GLU_BWD,      // ffn_glu_backward
    FFN_OP_COUNT
};

/// "act_fwd", "act_bwd", "glu_fwd", "glu_bwd"; "?" for a value out of range.
FFN_API const char *ffn_op_name(enum ffn_op op);

/// The ISA of the kernel that runs `op` for `act` on a CPU context: ffn_ctx_isa() where that
/// ISA has the kernel, else the lower ISA it comes from (the scalar reference at worst). A tool
/// that labels measurements by kernel reads it here.
/// @retval the ISA; FFN_ISA_AUTO for a NULL or non-CPU context, or `op` / `act` out of range
FFN_API enum ffn_isa ffn_ctx_kernel_isa(ffn_ctx_t ctx, enum ffn_op op, enum ffn_act act);

/// The reference definitions (docs/design.md) of act(x) and act'(x), evaluated in double by
/// their stable forms: relative error ~1e-15 wherever the result is a normal float, so rounding
/// to f32 gives the correctly rounded value except within ~1e-7 ulp of a rounding boundary.
/// The scalar kernels (FFN_ISA_SCALAR) round these; the accuracy tools measure against them
/// and MPFR. Special values as the kernels: NaN in, NaN out; the limits at ±inf.
/// @retval the value; NaN for `act` out of range
FFN_API double ffn_ref_act(enum ffn_act act, double x);
/// act'(x) in double (see ffn_ref_act).
FFN_API double ffn_ref_dact(enum ffn_act act, double x);

// -------------------------------------------------------------------------------------------
// FFN blocks on the CPU (src/block/)
//
// A block computes, for x [n_tokens, d_model], y [n_tokens, d_model] (each f32 or bf16):
//   plain:  h = act(x·W_up + b_up),                        y = h·W_down + b_down
//   gated:  h = act(x·W_gate + b_gate) ⊙ (x·W_up + b_up),   y = h·W_down + b_down
// with h [n_tokens, d_ff]. GEMMs run through oneDNN's matmul (AMX, AVX512-BF16 or AVX-512
// kernels, chosen by oneDNN from the CPU's feature bits), accumulating in f32, except GEMMs of
// few rows on an AVX-512 CPU: at most 6 rows (decoding a few tokens) with bf16 or f32 weights, or
// up to 32 rows (f32 weights; 16 bf16, 10 on a CPU with AMX-BF16) with weights read along the
// output dimension (the backward's dh and dx of [out, in] weights, the forward of [in, out] ones),
// run ffn's own skinny GEMM (f32 FMAs on exactly widened weights, IEEE subnormals kept; beyond 8
// rows bf16 weights go through vdpbf16ps, which flushes subnormals as oneDNN's bf16 kernels do;
// FFN_BLOCK_SKINNY=0 in the environment turns it off). The bias add and the activation are ffn's
// own kernels (its accuracy contract), run right after the GEMM that produced their rows.
//
// Dtypes: the GEMMs run in the weights' dtype. bf16 weights are used as they lie (AMX /
// AVX512-BF16). f32 weights are computed in true f32 (FFN_BLOCK_MATH_STRICT, the default);
// FFN_BLOCK_MATH_BF16 opts into bf16 products (f32 accumulation) through a bf16 copy made at
// create. f16 weights: oneDNN has no f16 matmul on CPUs, so they are converted once into an
// exact f32 copy (bf16 with FFN_BLOCK_MATH_BF16). A GEMM's inputs are converted to its weights'
// dtype where they differ (an f32 x for bf16 weights: x is rounded to bf16, as PyTorch's
// autocast does). ffn_block_info reports the compute dtype and the bytes of any copy.
//
// Weights are described, never assumed: each tensor is a `struct ffn_weight` view (pointer,
// dtype, orientation, row stride) and a gate/up pair has a layout (two tensors, fused
// [gate | up] or [up | gate], row-interleaved, or blocked in tensor-parallel groups). f32 weights
// and bf16 weights are used where they lie (a memory-mapped checkpoint is not copied: keep it
// mapped while the block lives, and updates made to it in place, e.g. by an optimizer, are seen
// by the next call); copies (f16 weights, FFN_BLOCK_MATH_BF16) are made once, at create, and do
// not see later updates. opts.pack_weights (inference) adds a copy of each weight in the layout
// the GEMM library's kernels read fastest, made at the first forward of more than a few rows.
//
// Training: ffn_block_forward with FFN_BLOCK_POLICY_SAVE (keeps the pre-activations) or
// FFN_BLOCK_POLICY_RECOMPUTE (keeps nothing but a reference to x), then ffn_block_backward.
// Weight gradients are f32 (or bf16: grads.dtype) and written in the SAME layout and orientation
// as the weights (grad of a fused [2m, d] gate_up_proj is a fused [2m, d] array).
//
// Example (a LLaMA MLP from memory-mapped safetensors views gate, up, down, all [out, in]):
//
//     struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;   // gated SiLU (SwiGLU), no biases
//     spec.d_model = 4096; spec.d_ff = 11008;
//     struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
//     w.gate = ffn_weight_dense(gate_ptr, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
//     w.up   = ffn_weight_dense(up_ptr,   FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
//     w.down = ffn_weight_dense(down_ptr, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
//     ffn_block_t blk;
//     if (ffn_block_create(ctx, &spec, &w, NULL, &blk)) puts(ffn_ctx_last_error(ctx));
//     struct ffn_tensor tx = ffn_tensor_2d(x, FFN_DTYPE_F32, 7, 4096, 4096);
//     struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, 7, 4096, 4096);
//     ffn_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_NONE);
//     ffn_block_destroy(blk);
// -------------------------------------------------------------------------------------------

/// How a weight matrix is stored.
enum ffn_weight_orient {
    FFN_WEIGHT_OUT_IN = 0,  // [out, in], y = x·Wᵀ: torch nn.Linear, Hugging Face *_proj, GGUF
    FFN_WEIGHT_IN_OUT,      // [in, out], y = x·W: GPT-2 Conv1D (c_fc, c_proj), Megatron/JAX
    FFN_WEIGHT_ORIENT_COUNT
};

/// How the gate and up projections of a gated block are stored. The order always refers to the
/// projection's OUTPUT axis (the 2·d_ff axis): rows of an [out, in] weight, columns of an
/// [in, out] one. A fused bias follows the same order.
enum ffn_gate_up_layout {
    FFN_GATE_UP_SEPARATE = 0,    // two tensors: weights.gate and weights.up (LLaMA, Gemma, T5)
    FFN_GATE_UP_FUSED,           // one tensor [gate | up]: Phi-3 gate_up_proj, vLLM
    FFN_GATE_UP_FUSED_UP_FIRST,  // one tensor [up | gate]
    FFN_GATE_UP_INTERLEAVED,     // one tensor, outputs alternate g_0 u_0 g_1 u_1 ... ([out, in]
                                 // only: an [in, out] one would need stride-2 columns)
    FFN_GATE_UP_BLOCKED,         // one tensor in spec.tp_groups groups [g_0 u_0 | g_1 u_1 | ...],
                                 // each g_i / u_i d_ff/tp_groups outputs (Megatron linear_fc1)
    FFN_GATE_UP_LAYOUT_COUNT
};

/// What a block is. Shapes and activation come from the checkpoint's config, never guessed.
struct ffn_block_spec {
    size_t size;                             // sizeof(struct ffn_block_spec)
    int64_t d_model;                         // d: width of x and y (≥ 1)
    int64_t d_ff;                            // m: width of h (≥ 1)
    enum ffn_act act;                        // the activation (applied to the gate when gated)
    bool gated;                              // false: plain FFN (act on up); true: GLU family
    enum ffn_gate_up_layout gate_up_layout;  // gated only
    int64_t tp_groups;                       // FFN_GATE_UP_BLOCKED: k ≥ 1, dividing d_ff
    bool bias_gate;                          // gated only; with a fused layout bias_gate == bias_up
    bool bias_up;                            // b_up [d_ff] (plain: c_fc / fc1 bias)
    bool bias_down;                          // b_down [d_model]
};

// clang-format off
#define FFN_BLOCK_SPEC_INIT \
    { sizeof(struct ffn_block_spec), 0, 0, FFN_ACT_SILU, true, FFN_GATE_UP_SEPARATE, 1, \
      false, false, false }
// clang-format on

/// One stored tensor. For a matrix, element (r, c) of the stored [R, C] array lies at
/// data + (r*row_stride + c)*dtype_size, where R and C follow from the spec and `orient`
/// (ffn_block_weights lists them); row_stride 0 means dense (= C). rows/cols, when non-zero,
/// are the shape the file declares and are checked against the spec, so a wrong tensor is
/// reported in its own terms ("gate_up has 343 rows; a fused gate/up needs an even count").
/// A bias is a vector: orient and row_stride are ignored, its length is rows·cols when given
/// (1-D [n]: rows 0 or 1, cols n). data == NULL means absent.
struct ffn_weight {
    const void *data;
    enum ffn_dtype dtype;
    enum ffn_weight_orient orient;
    int64_t rows, cols;  // declared shape; 0, 0: not declared (not checked)
    int64_t row_stride;  // elements; 0: dense
};

/// A dense weight without a declared shape.
static inline struct ffn_weight ffn_weight_dense(const void *data, enum ffn_dtype dtype,
                                                 enum ffn_weight_orient orient) {
    struct ffn_weight w = {data, dtype, orient, 0, 0, 0};
    return w;
}

/// The weights of one block. Shapes by orientation ([out, in] / [in, out]):
///   up       plain: [m, d] / [d, m];  gated, SEPARATE layout: [m, d] / [d, m]
///   gate     gated, SEPARATE layout:  [m, d] / [d, m]
///   gate_up  gated, any fused layout: [2m, d] / [d, 2m]
///   down     [d, m] / [m, d]
///   b_up, b_gate [m] (SEPARATE or plain); b_gate_up [2m] in the fused layout; b_down [d].
struct ffn_block_weights {
    size_t size;  // sizeof(struct ffn_block_weights)
    struct ffn_weight gate, up, gate_up, down;
    struct ffn_weight b_gate, b_up, b_gate_up, b_down;
};

// clang-format off
#define FFN_BLOCK_WEIGHTS_INIT { sizeof(struct ffn_block_weights), {0}, {0}, {0}, {0}, \
                                 {0}, {0}, {0}, {0} }
// clang-format on

/// Weight gradients, dense, each in the layout and orientation of its weight (same shape as the
/// matching `ffn_block_weights` member), every member of one dtype: f32 (default) or bf16. A
/// NULL member is not computed (a frozen or absent tensor). Which members apply follows the
/// spec as for the weights. The GEMMs accumulate in f32 and round once to `dtype`.
struct ffn_block_grads {
    size_t size;  // sizeof(struct ffn_block_grads)
    void *gate, *up, *gate_up, *down;
    void *b_gate, *b_up, *b_gate_up, *b_down;
    bool accumulate;       // false: overwrite; true: add to the values there (accumulation)
    enum ffn_dtype dtype;  // of every member: FFN_DTYPE_F32 or FFN_DTYPE_BF16
};

// clang-format off
#define FFN_BLOCK_GRADS_INIT \
    { sizeof(struct ffn_block_grads), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, \
      FFN_DTYPE_F32 }
// clang-format on

/// How the activation meets the GEMM that feeds it.
enum ffn_block_schedule {
    FFN_BLOCK_SCHEDULE_AUTO = 0,  // SEPARATE (the measured-faster choice at every shape and token
                                  // count measured: docs/blocks.md, "Tiled or separate")
    FFN_BLOCK_SCHEDULE_TILED,     // GEMM a row tile, activate it while hot, next tile
    FFN_BLOCK_SCHEDULE_SEPARATE,  // one GEMM over all tokens, then one activation pass
    FFN_BLOCK_SCHEDULE_COUNT
};

/// The arithmetic of the GEMMs for f32 (and f16) weights. bf16 weights are always multiplied in
/// bf16 with f32 accumulation.
enum ffn_block_math {
    FFN_BLOCK_MATH_STRICT = 0,  // f32 weights computed in true f32 (no silent down-conversion)
    FFN_BLOCK_MATH_BF16,        // f32 / f16 weights may be multiplied in bf16 (f32 accumulation)
                                // on the matrix engines; the CPU block copies them to bf16 once,
                                // at create (later in-place updates are not seen)
    FFN_BLOCK_MATH_TF32,        // for GPUs; the CPU block returns FFN_STATUS_UNSUPPORTED
    FFN_BLOCK_MATH_COUNT
};

struct ffn_block_opts {
    size_t size;  // sizeof(struct ffn_block_opts)
    enum ffn_block_schedule schedule;
    int64_t tile_rows;          // TILED: rows per tile; 0: sized to the L2 cache
    int64_t max_tokens;         // reserve workspace for this many tokens now (0: grow on
                                // demand at the first call that needs it)
    enum ffn_block_math math;   // STRICT (0) by default
    enum ffn_dtype save_dtype;  // of the pre-activations FFN_BLOCK_POLICY_SAVE keeps:
                                // FFN_DTYPE_F32 (default) or FFN_DTYPE_BF16 (half the bytes)
    bool pack_weights;          // CPU: the forward's GEMMs from 7 rows on read a copy of each
                                // weight in the GEMM library's blocked layout, made at the first
                                // forward that needs it (+ the weights' bytes in cache_bytes;
                                // 1.2-1.5x faster GEMMs at 16 tokens, 1.01-1.06x from 256 on
                                // AMD EPYC Zen 4). A snapshot: for weights that do not change
                                // while the block lives. Other backends read weights as they lie.
};

// clang-format off
#define FFN_BLOCK_OPTS_INIT \
    { sizeof(struct ffn_block_opts), FFN_BLOCK_SCHEDULE_AUTO, 0, 0, FFN_BLOCK_MATH_STRICT, \
      FFN_DTYPE_F32, false }
// clang-format on

/// What a forward keeps for the backward.
enum ffn_block_policy {
    FFN_BLOCK_POLICY_NONE = 0,   // inference: keep nothing (a later backward is refused)
    FFN_BLOCK_POLICY_SAVE,       // keep the pre-activations (gate and up, or the plain `a`)
                                 // and h
    FFN_BLOCK_POLICY_RECOMPUTE,  // keep only a reference to x; backward recomputes x·W_gate/up
    FFN_BLOCK_POLICY_COUNT
};

typedef struct ffn_block *ffn_block_t;

/// Validates spec and weights and makes a block. f32 and bf16 weights are referenced (they must
/// stay valid and mapped while the block lives); f16 weights, and f32 ones under
/// FFN_BLOCK_MATH_BF16, are converted once into a copy the block owns (ffn_block_info reports
/// its bytes). opts may be NULL. NaN or inf weights are accepted (they propagate to the outputs
/// as IEEE arithmetic says; nothing crashes).
/// @retval FFN_STATUS_OK
/// @retval FFN_STATUS_INVALID_ARG  a shape, layout, dtype or pointer that does not fit, with a
///         message naming it ("gate_up has 343 rows; a fused gate/up needs an even count",
///         "d_ff=343 is not a multiple of tp_groups=2", "spec.bias_up is set but b_up.data is
///         NULL")
/// @retval FFN_STATUS_UNSUPPORTED  this build has no oneDNN, an interleaved [in, out] pair, or
///         FFN_BLOCK_MATH_TF32
/// @retval FFN_STATUS_BACKEND  oneDNN failed (its status in the message)
/// @retval FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_block_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                         const struct ffn_block_weights *weights,
                                         const struct ffn_block_opts *opts, ffn_block_t *block_out);

/// Frees the block, its cache and its workspace; NULL is a no-op.
FFN_API void ffn_block_destroy(ffn_block_t block);

/// y = block(x). x and y: [n_tokens, d_model] views, each f32 or bf16 (any row_stride ≥
/// d_model; dense rows let oneDNN use its fastest kernels); y must not overlap x. n_tokens 0 is
/// a valid no-op. Threads: ffn_ctx_threads(ctx) for the GEMMs and the activations: the call sets
/// the calling thread's OpenMP count (which oneDNN follows) and restores it before returning.
/// With a training policy the block keeps what the backward needs (one pending forward per
/// block; a new training forward replaces it) and x must stay unchanged until
/// ffn_block_backward. Any split over tokens gives the same result (per-token locality).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_block_forward(ffn_ctx_t ctx, ffn_block_t block,
                                          const struct ffn_tensor *y, const struct ffn_tensor *x,
                                          enum ffn_block_policy policy);

/// Backward of the last training forward: from dy [n_tokens, d_model] computes dx (may be NULL;
/// may be exactly the dy or x view, being written last; dx and dy each f32 or bf16) and the
/// weight/bias gradients named in `grads` (f32 or bf16). Formulas: dW_down = hᵀ·dy, dh = dy·W_downᵀ, dgate = dh ⊙ up ⊙ act'(gate),
/// dup = dh ⊙ act(gate) (plain: da = dh ⊙ act'(a)), dW_gate = dgateᵀ·x, dW_up = dupᵀ·x (one GEMM
/// when fused), dx = dgate·W_gate + dup·W_up (one GEMM when fused), db = column sums. The saved
/// buffers are overwritten by the gradients, so a second backward needs a new forward.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (no pending forward, n_tokens differs from the
///         forward's, a gradient named for a tensor the block has not, grads.dtype not f32 or
///         bf16), FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_block_backward(ffn_ctx_t ctx, ffn_block_t block,
                                           const struct ffn_block_grads *grads,
                                           const struct ffn_tensor *dx,
                                           const struct ffn_tensor *dy);

/// What a block holds and costs.
struct ffn_block_info {
    size_t size;                   // sizeof(struct ffn_block_info)
    int64_t n_params;              // weights + biases
    size_t weight_bytes;           // the weights as given (referenced or converted)
    size_t cache_bytes;            // copies the block owns: f16 weights (f32), FFN_BLOCK_MATH_BF16
                                   // (bf16), f32 copies of bf16/f16 biases, the packed weights of
                                   // opts.pack_weights once made; 0 for f32 or bf16 weights and
                                   // f32 biases
    size_t saved_bytes_save;       // bytes held from forward to backward for n_tokens, SAVE policy
    size_t saved_bytes_recompute;  // same, RECOMPUTE policy (0: x is the caller's)
    size_t workspace_bytes;        // transient bytes a training forward + backward needs beyond
                                   // the saved ones, for n_tokens
    enum ffn_block_schedule schedule;  // the schedule AUTO resolves to at n_tokens
    int64_t tile_rows;                 // rows per tile of that schedule
    enum ffn_dtype compute_dtype;      // dtype the first projection's GEMM multiplies in
    char gemm_impl[64];                // the matrix-multiply implementation of the last forward's
                                       // first GEMM (oneDNN's impl_info, e.g.
                                       // "brg:avx512_core_amx_bf16", or "ffn:skinny_avx512");
                                       // "" before the first call
};

// clang-format off
#define FFN_BLOCK_INFO_INIT \
    { sizeof(struct ffn_block_info), 0, 0, 0, 0, 0, 0, 0, 0, FFN_DTYPE_F32, "" }
// clang-format on

/// Fills `info` for a batch of n_tokens (≥ 0). `info->size` must be set (FFN_BLOCK_INFO_INIT).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_block_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                                       struct ffn_block_info *info);

// --- sizing helpers -------------------------------------------------------------------------

/// The LLaMA sizing rule for the gated width:
///   m = multiple_of · ceil(int(multiplier · int(2/3 · 4d)) / multiple_of)
/// (2/3 · 4d in integers: floor(8d/3)). multiplier 1.0 when the config has none. Gives 11008 for
/// LLaMA-7B (d 4096, 256), 28672 for LLaMA-2-70B (d 8192, ×1.3, 4096), 14336 for LLaMA-3-8B
/// (d 4096, ×1.3, 1024). A helper for new designs: a checkpoint's own d_ff always wins.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (d_model, multiple_of < 1, multiplier ≤ 0 or
///         not finite, overflow)
FFN_API enum ffn_status ffn_block_size_rule(ffn_ctx_t ctx, int64_t d_model, double multiplier,
                                            int64_t multiple_of, int64_t *d_ff_out);

/// Cost model of one block call on n_tokens. FLOPs count the GEMMs (2 per multiply-add) plus
/// the bias adds; the activation's elementwise work is listed apart. Bytes are the minimum
/// traffic: every weight read once in `weight_dtype`, activations (x, y, dy, dx) once in
/// `act_dtype`, intermediates kept in cache; backward also writes the weight gradients (in
/// `weight_dtype`) and, SAVE policy, writes and reads the saved pre-activations once.
struct ffn_block_cost {
    size_t size;  // sizeof(struct ffn_block_cost)
    int64_t n_params;
    double flops_fwd;            // 2·T·d·m·(2 plain | 3 gated) + biases
    double flops_bwd;            // dW + dx GEMMs: 2× the forward (SAVE policy)
    double flops_bwd_recompute;  // flops_bwd + the gate/up GEMMs again
    double act_elems;            // elements the activation touches per forward: T·m
    double bytes_fwd, bytes_bwd;
    double intensity_fwd, intensity_bwd;  // FLOP per byte
};

// clang-format off
#define FFN_BLOCK_COST_INIT { sizeof(struct ffn_block_cost), 0, 0, 0, 0, 0, 0, 0, 0, 0 }
// clang-format on

/// Fills `cost` for `spec` (d_model, d_ff, gated and the bias flags are read) at n_tokens.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_block_cost(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                       int64_t n_tokens, enum ffn_dtype weight_dtype,
                                       enum ffn_dtype act_dtype, struct ffn_block_cost *cost);

// -------------------------------------------------------------------------------------------
// Checkpoint files (src/io/): safetensors
//
// A safetensors file is memory-mapped, its header validated as hostile input (every rule of the
// reference implementation), and its tensors handed out as zero-copy views into the mapping.
// -------------------------------------------------------------------------------------------

/// Element types a safetensors (or GGUF) tensor may carry. Only F32, BF16 and F16 map to
/// `enum ffn_dtype`; the others are listed so files holding them load and can be described.
enum ffn_file_dtype {
    FFN_FILE_DTYPE_F32 = 0,
    FFN_FILE_DTYPE_BF16,
    FFN_FILE_DTYPE_F16,
    FFN_FILE_DTYPE_F64,
    FFN_FILE_DTYPE_I64,
    FFN_FILE_DTYPE_I32,
    FFN_FILE_DTYPE_I16,
    FFN_FILE_DTYPE_I8,
    FFN_FILE_DTYPE_U8,
    FFN_FILE_DTYPE_BOOL,
    FFN_FILE_DTYPE_F8_E4M3,
    FFN_FILE_DTYPE_F8_E5M2,
    FFN_FILE_DTYPE_Q8_0,  // GGUF only (blocks of 32: f16 scale + 32 int8)
    FFN_FILE_DTYPE_Q4_0,  // GGUF only (blocks of 32: f16 scale + 16 bytes of nibbles)
    FFN_FILE_DTYPE_U16,
    FFN_FILE_DTYPE_U32,
    FFN_FILE_DTYPE_U64,
    FFN_FILE_DTYPE_F8_E8M0,
    FFN_FILE_DTYPE_COUNT
};

#define FFN_MAX_DIMS 8

/// One tensor of a file: a view into the mapping (valid until the file is closed).
struct ffn_file_tensor {
    const char *name;
    enum ffn_file_dtype dtype;
    int n_dims;
    int64_t shape[FFN_MAX_DIMS];  // safetensors order (slowest first, as PyTorch's .shape)
    const void *data;
    size_t nbytes;
};

typedef struct ffn_safetensors *ffn_safetensors_t;

/// Opens and validates `path` (or, for a directory or a `*.index.json`, a sharded checkpoint).
/// @retval FFN_STATUS_OK, FFN_STATUS_IO, FFN_STATUS_BAD_FORMAT ("<path>: tensor 'w' ends at
///         byte 4096 but the data section holds 4000"), FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_safetensors_open(ffn_ctx_t ctx, const char *path,
                                             ffn_safetensors_t *st_out);
FFN_API void ffn_safetensors_close(ffn_safetensors_t st);
/// Number of tensors; tensors are indexed 0..count-1 in file order.
FFN_API int64_t ffn_safetensors_count(ffn_safetensors_t st);
FFN_API enum ffn_status ffn_safetensors_get(ffn_ctx_t ctx, ffn_safetensors_t st, int64_t index,
                                            struct ffn_file_tensor *out);
/// Looks a tensor up by name. @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND
FFN_API enum ffn_status ffn_safetensors_find(ffn_ctx_t ctx, ffn_safetensors_t st, const char *name,
                                             struct ffn_file_tensor *out);
/// A `__metadata__` string value, or NULL when absent.
FFN_API const char *ffn_safetensors_metadata(ffn_safetensors_t st, const char *key);

/// Opens a safetensors image held in memory, with the same checks as ffn_safetensors_open; the
/// caller keeps `data` alive and unchanged until close. `name` (may be NULL) labels messages.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BAD_FORMAT, FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_safetensors_open_memory(ffn_ctx_t ctx, const void *data, size_t size,
                                                    const char *name, ffn_safetensors_t *st_out);
/// Number of `__metadata__` entries, and the key of entry i (NULL when out of range).
FFN_API int64_t ffn_safetensors_metadata_count(ffn_safetensors_t st);
FFN_API const char *ffn_safetensors_metadata_key(ffn_safetensors_t st, int64_t i);
/// The path of the (first) file, and the number of shards (1 for a single file).
FFN_API const char *ffn_safetensors_path(ffn_safetensors_t st);
FFN_API int ffn_safetensors_shard_count(ffn_safetensors_t st);

/// One `__metadata__` entry for the writer.
struct ffn_safetensors_kv {
    const char *key, *value;
};

/// Writes `tensors` (name, dtype, shape, data, nbytes; in this order in the data section) and
/// the metadata to `path` as safetensors, the header padded with spaces to a multiple of 8
/// bytes (as the reference writer does). The file appears under `path` only when complete.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (a duplicate or empty name, nbytes that do not
///         match shape × dtype, a dtype safetensors cannot hold), FFN_STATUS_IO,
///         FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_safetensors_write(ffn_ctx_t ctx, const char *path,
                                              const struct ffn_file_tensor *tensors,
                                              int64_t n_tensors,
                                              const struct ffn_safetensors_kv *metadata,
                                              int64_t n_metadata);

/// Whether `path` may be written as an output, by the rules every ffn writer follows (checked
/// again when the file is written): a regular file is replaced (keeping its permission bits),
/// a new name in an existing directory is created; a directory, FIFO, device or socket is
/// refused, so nothing but a regular file is ever replaced. A symbolic link is followed, as cp
/// does: the regular file it points to is replaced and the link kept; a dangling link, or one
/// that points to anything but a regular file, is refused. Writes go to a new temporary file
/// beside the target (created exclusively, never through a link) and are renamed into place.
/// Nothing is created by this check. @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG,
/// FFN_STATUS_NOT_FOUND (the directory does not exist), FFN_STATUS_IO (what the path is)
FFN_API enum ffn_status ffn_file_check_output(ffn_ctx_t ctx, const char *path);

/// Copies `src` into `dst` (at most cap - 1 bytes and a NUL) in a form that is safe to print:
/// text read from a file (a tensor name, model_type, a metadata string) is untrusted, and a raw
/// newline, an ESC sequence or a bidirectional override would reach the user's terminal. Printable
/// ASCII and printable UTF-8 are kept; C0 controls become \n, \r, \t, \e or \xNN, DEL and bytes
/// that are not UTF-8 \xNN, C1 controls and bidi/line-separator characters \u{NNNN}. Never cuts an
/// escape or a character in two. Every library error message is escaped this way.
/// Returns the length written.
FFN_API size_t ffn_text_escape(char *dst, size_t cap, const char *src);

/// "F32", "BF16", ..., "Q8_0", "Q4_0" (safetensors spelling); "?" for an unknown value.
FFN_API const char *ffn_file_dtype_name(enum ffn_file_dtype dtype);
/// Parses a name as ffn_file_dtype_name spells it. @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND
FFN_API enum ffn_status ffn_file_dtype_from_name(const char *name, enum ffn_file_dtype *dtype_out);
/// The compute dtype of a file dtype (F32, BF16, F16 only). @retval FFN_STATUS_OK,
/// FFN_STATUS_UNSUPPORTED (the others: convert with ffn_file_tensor_to_f32)
FFN_API enum ffn_status ffn_file_dtype_to_dtype(enum ffn_file_dtype fdtype,
                                                enum ffn_dtype *dtype_out);
/// Π shape, or -1 for an invalid shape.
FFN_API int64_t ffn_file_tensor_numel(const struct ffn_file_tensor *t);
/// Converts a file tensor of any dtype to `n` (= numel) f32 values: Q8_0 and Q4_0 are
/// dequantised (x = d·q, d the block's f16 scale; Q4_0: q = nibble - 8).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_file_tensor_to_f32(ffn_ctx_t ctx, float *dst, int64_t n,
                                               const struct ffn_file_tensor *t);

// -------------------------------------------------------------------------------------------
// Checkpoint files (src/io/): GGUF (versions 2 and 3)
//
// Memory-mapped; magic, version, every count, string length, dimension and offset checked
// against the bytes that remain. Tensors of types F32, F16, BF16, Q8_0, Q4_0 (and the integer
// types) load; other ggml types are refused by name. Tensor shapes are reported slowest-first
// (the reverse of GGUF's ne[]): an HF [out, in] weight, stored {in, out} in GGUF, reads [out, in].
// -------------------------------------------------------------------------------------------

/// Metadata value types (the GGUF numbering).
enum ffn_gguf_type {
    FFN_GGUF_TYPE_UINT8 = 0,
    FFN_GGUF_TYPE_INT8 = 1,
    FFN_GGUF_TYPE_UINT16 = 2,
    FFN_GGUF_TYPE_INT16 = 3,
    FFN_GGUF_TYPE_UINT32 = 4,
    FFN_GGUF_TYPE_INT32 = 5,
    FFN_GGUF_TYPE_FLOAT32 = 6,
    FFN_GGUF_TYPE_BOOL = 7,
    FFN_GGUF_TYPE_STRING = 8,
    FFN_GGUF_TYPE_ARRAY = 9,
    FFN_GGUF_TYPE_UINT64 = 10,
    FFN_GGUF_TYPE_INT64 = 11,
    FFN_GGUF_TYPE_FLOAT64 = 12,
    FFN_GGUF_TYPE_COUNT
};

/// A metadata value: a view of its encoding in the file (validated at open).
struct ffn_gguf_value {
    enum ffn_gguf_type type;
    enum ffn_gguf_type elem_type;  // ARRAY: the elements' type
    int64_t n;                     // ARRAY: element count
    const void *raw;               // the encoded value (ARRAY: its first element), little-endian
    size_t raw_len;                // bytes of the encoding from raw
};

typedef struct ffn_gguf *ffn_gguf_t;

/// Opens and validates a GGUF file, or an image in memory (kept alive by the caller).
/// @retval FFN_STATUS_OK, FFN_STATUS_IO, FFN_STATUS_NOT_FOUND, FFN_STATUS_BAD_FORMAT ("<path>:
///         18446744073709551615 tensors cannot fit in the 120 bytes that remain"),
///         FFN_STATUS_UNSUPPORTED (version 1, big-endian, a ggml type ffn does not read),
///         FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_gguf_open(ffn_ctx_t ctx, const char *path, ffn_gguf_t *g_out);
FFN_API enum ffn_status ffn_gguf_open_memory(ffn_ctx_t ctx, const void *data, size_t size,
                                             const char *name, ffn_gguf_t *g_out);
FFN_API void ffn_gguf_close(ffn_gguf_t g);
FFN_API uint32_t ffn_gguf_version(ffn_gguf_t g);
FFN_API const char *ffn_gguf_path(ffn_gguf_t g);
/// general.alignment (32 when absent), and the file offset where tensor data begins.
FFN_API uint64_t ffn_gguf_alignment(ffn_gguf_t g);
FFN_API size_t ffn_gguf_data_offset(ffn_gguf_t g);
/// "uint8", ..., "float64"; "?" for an unknown value.
FFN_API const char *ffn_gguf_type_name(enum ffn_gguf_type type);

/// Metadata entries, in file order. Keys are unique (a duplicate is refused at open).
FFN_API int64_t ffn_gguf_kv_count(ffn_gguf_t g);
FFN_API enum ffn_status ffn_gguf_kv_get(ffn_ctx_t ctx, ffn_gguf_t g, int64_t i,
                                        const char **key_out, struct ffn_gguf_value *v_out);
/// @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND
FFN_API enum ffn_status ffn_gguf_kv_find(ffn_ctx_t ctx, ffn_gguf_t g, const char *key,
                                         struct ffn_gguf_value *v_out);
/// An integer or bool value as int64 (uint64 above INT64_MAX is refused).
FFN_API enum ffn_status ffn_gguf_value_int(ffn_ctx_t ctx, const struct ffn_gguf_value *v,
                                           int64_t *out);
/// A float, or an integer converted.
FFN_API enum ffn_status ffn_gguf_value_float(ffn_ctx_t ctx, const struct ffn_gguf_value *v,
                                             double *out);
/// A string value: pointer into the file and length (NOT NUL-terminated).
FFN_API enum ffn_status ffn_gguf_value_string(ffn_ctx_t ctx, const struct ffn_gguf_value *v,
                                              const char **s_out, size_t *len_out);
/// Element j of an array (O(1) for fixed-size elements, O(j) for strings and nested arrays).
FFN_API enum ffn_status ffn_gguf_value_element(ffn_ctx_t ctx, const struct ffn_gguf_value *array,
                                               int64_t j, struct ffn_gguf_value *out);

/// Tensors, in file order; lookup by name. @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND
FFN_API int64_t ffn_gguf_count(ffn_gguf_t g);
FFN_API enum ffn_status ffn_gguf_get(ffn_ctx_t ctx, ffn_gguf_t g, int64_t i,
                                     struct ffn_file_tensor *out);
FFN_API enum ffn_status ffn_gguf_find(ffn_ctx_t ctx, ffn_gguf_t g, const char *name,
                                      struct ffn_file_tensor *out);

// -------------------------------------------------------------------------------------------
// Hugging Face config.json and architecture maps (src/io/)
//
// config.json -> the FFN of each layer (d, m, activation, gated), by architecture: llama,
// mistral, mixtral, qwen2, qwen3, gemma, gemma2, gemma3 (text), phi3, gpt2, gptj, gpt_neox,
// falcon, starcoder2, olmo, olmo2, stablelm, granite, t5 / mt5. Activation names as transformers
// maps them: gelu = erf; gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_accurate = tanh forms;
// silu / swish; relu; quick_gelu = x·σ(1.702x). The architecture wins where its code overrides
// the config (Gemma 1 runs the tanh GeLU even when the config says "gelu"; T5's "gated-gelu"
// is gelu_new); `note` says so.
// -------------------------------------------------------------------------------------------

struct ffn_hf_config {
    char model_type[32];
    int64_t n_layers;          // layers with an FFN (T5: the encoder's)
    int64_t n_decoder_layers;  // encoder-decoder models: the decoder's (0 otherwise)
    int64_t d_model;           // d
    int64_t d_ff;              // m (per expert for a mixture of experts)
    int64_t n_experts;         // 0: dense
    enum ffn_act act;          // applied to the gate (gated) or to up (plain)
    bool gated;
    bool fused_gate_up;    // gate and up stored as one [gate | up] tensor (Phi-3)
    bool in_out;           // weights stored [in, out] (GPT-2 Conv1D)
    char act_source[96];   // where the activation came from: "hidden_act = silu"
    char d_ff_source[96];  // where m came from: "intermediate_size", "n_inner absent ..."
    char note[256];        // "" or a remark a user should read
};

/// Parses config.json text (hostile-JSON checks as for safetensors headers).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BAD_FORMAT (no intermediate size,
///         a size that is not a positive integer, bad JSON), FFN_STATUS_UNSUPPORTED (an unknown
///         model_type or activation, listing the known ones), FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_hf_config_parse(ffn_ctx_t ctx, const char *json, size_t len,
                                            struct ffn_hf_config *out);

// -------------------------------------------------------------------------------------------
// Models: a checkpoint's FFN layers, whatever the file format (src/io/)
//
// ffn_model_open takes a directory (config.json + model.safetensors or a sharded index) or a
// .gguf file, maps the architecture's tensor names, and checks every FFN tensor of every layer
// (present, shape agreeing with d and m in the architecture's orientation). A layer is handed
// out as file tensors plus the orientation and gate/up layout to read them with (the enums of
// the FFN block section), so a caller can build a block from them without a copy.
// -------------------------------------------------------------------------------------------

typedef struct ffn_model *ffn_model_t;

struct ffn_model_desc {
    char arch[32];     // model_type (safetensors) or general.architecture (GGUF)
    char format[16];   // "safetensors" or "gguf"
    int64_t n_layers;  // FFN layers (T5: encoder then decoder)
    int64_t d_model;
    int64_t d_ff;       // layer 0's m (layers may differ: see ffn_model_layer)
    int64_t n_experts;  // 0: dense; else FFNs per layer
    enum ffn_act act;
    bool gated;
    bool hf_in_out;  // the architecture's Hugging Face weights are [in, out] (Conv1D)
    char act_source[96];
    char note[512];        // "" or remarks (Gemma's GeLU, a fused or transposed tensor, ...)
    int64_t n_params;      // elements of every tensor in the checkpoint
    int64_t n_params_ffn;  // elements of the FFN tensors (all layers and experts)
};

/// One FFN (a layer, or one expert of a layer). Absent tensors have name == NULL. Shapes as
/// stored: gate/up [m, d] (OUT_IN) or [d, m] (IN_OUT); gate_up [2m, d] / [d, 2m]; down [d, m] /
/// [m, d]; biases 1-D. `prefix` is the module's name prefix ("model.layers.1.mlp."), so
/// name + strlen(prefix) is the parameter's name inside the module ("gate_proj.weight").
struct ffn_model_layer {
    int64_t layer, expert;  // expert -1 for a dense layer
    int64_t d_model, d_ff;
    enum ffn_act act;
    bool gated;
    enum ffn_weight_orient orient;   // of every weight of this layer
    enum ffn_gate_up_layout layout;  // FFN_GATE_UP_SEPARATE, _FUSED or _FUSED_UP_FIRST
    char prefix[128];
    struct ffn_file_tensor gate, up, gate_up, down;
    struct ffn_file_tensor b_gate, b_up, b_gate_up, b_down;
};

/// @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND (no config.json, a missing FFN tensor),
///         FFN_STATUS_BAD_FORMAT, FFN_STATUS_UNSUPPORTED (an unknown architecture: the message
///         lists the FFN-looking tensors found), FFN_STATUS_IO, FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_model_open(ffn_ctx_t ctx, const char *path, ffn_model_t *model_out);
FFN_API void ffn_model_close(ffn_model_t model);
FFN_API const struct ffn_model_desc *ffn_model_desc(ffn_model_t model);
/// Layer `layer` (0..n_layers-1), expert `expert` (0..n_experts-1; -1 or 0 for dense layers).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (out of range)
FFN_API enum ffn_status ffn_model_layer(ffn_ctx_t ctx, ffn_model_t model, int64_t layer,
                                        int64_t expert, struct ffn_model_layer *out);
/// The underlying files (NULL for the other format): to read non-FFN tensors or metadata.
FFN_API ffn_safetensors_t ffn_model_safetensors(ffn_model_t model);
FFN_API ffn_gguf_t ffn_model_gguf(ffn_model_t model);
/// The config.json text the model was opened with (NULL for GGUF).
FFN_API const char *ffn_model_config_json(ffn_model_t model);
/// A block for one FFN of a model (ffn_model_layer): spec from the layer (d_model, d_ff,
/// activation, gated, gate/up layout, biases present), weights from its file tensors. Zero
/// copy where the block can read a tensor in place (F32, BF16 or F16 data aligned to its
/// element size): the block then reads the model's mapped memory, so the model must stay open
/// while the block lives. Other tensors (Q8_0, Q4_0, F64, misaligned data) are converted once
/// to f32 copies that the block owns and ffn_block_destroy frees. opts as ffn_block_create.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL arguments, a tensor that does not fit
///         the layer, as ffn_block_create reports it), FFN_STATUS_UNSUPPORTED (as
///         ffn_block_create), FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_block_create_from_layer(ffn_ctx_t ctx,
                                                    const struct ffn_model_layer *layer,
                                                    const struct ffn_block_opts *opts,
                                                    ffn_block_t *block_out);

// -------------------------------------------------------------------------------------------
// Scalar conversions (round to nearest even; NaN stays NaN, quiet)
// -------------------------------------------------------------------------------------------

FFN_API uint16_t ffn_f32_to_bf16(float x);
FFN_API float ffn_bf16_to_f32(uint16_t h);
FFN_API uint16_t ffn_f32_to_f16(float x);
FFN_API float ffn_f16_to_f32(uint16_t h);

/// Converts a view to another dtype (same shape), e.g. to build an f32 copy of bf16 data.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_tensor_convert(ffn_ctx_t ctx, const struct ffn_tensor *dst,
                                           const struct ffn_tensor *src);

// -------------------------------------------------------------------------------------------
// Tensor parallelism (src/tp/): sharding plans, communicators, tensor-parallel blocks
//
// A block too large for one device is split over P ranks (Megatron's MLP split):
//   gate, up  column-parallel: rank r holds the outputs [c_r, c_r + m_r) of the d_ff axis, the
//             SAME columns for gate and up (act(gate_j)·up_j pairs column j with column j);
//   down      row-parallel: rank r holds the inputs [c_r, c_r + m_r);
//   y         = Σ_r y_r, one all-reduce (sum) of [n_tokens, d_model] after the local block;
//   dx        = Σ_r dx_r, one all-reduce in the backward; weight gradients stay on their rank.
// A fused gate_up tensor is re-blocked per rank ([g_r | u_r] from [g | u]); cutting it
// contiguously would hand rank 0 every gate column and rank 1 every up column, a different
// function with no error anywhere. The plan is data (printable, parseable, comparable), the
// same on every rank; ffn_tp_shard_create copies one rank's weights out of the whole block's.
//
// Communication goes through a communicator the library wraps but never owns: Open MPI between
// CPU processes (ffn_comm_create_mpi; MPI must be initialised by the caller, any thread level:
// ffn calls MPI only from the calling thread, never from its OpenMP workers), NCCL between GPUs
// (ffn_comm_create_nccl, the caller's ncclComm_t, with a CUDA context: activations are device
// memory and the all-reduces are queued on the context's stream). A build without MPI (NCCL)
// returns FFN_STATUS_UNSUPPORTED from that communicator's entry point.
//
// Collective calls (marked "collective") must be made by every rank of the communicator in the
// same order. They never leave a rank waiting when another fails: each one ends with an
// agreement step, so every rank returns an error when any rank's part failed (the failing rank
// says why; the others name the status and the rank count).
//
// Example (each rank of `mpirun -np 2`, whole-block weights w as in the block section):
//
//     MPI_Comm world = MPI_COMM_WORLD;                 // after MPI_Init_thread
//     ffn_comm_t comm;
//     ffn_comm_create_mpi(ctx, &world, &comm);        // collective
//     struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
//     ffn_tp_plan_make(ctx, &spec, &w, 2, NULL, &plan);
//     ffn_tp_shard_t shard;                          // this rank's columns, re-blocked
//     ffn_tp_shard_create(ctx, &plan, ffn_comm_rank(comm), &w, &shard);
//     ffn_tp_block_t blk;
//     ffn_tp_block_create(ctx, comm, &plan, ffn_tp_shard_weights(shard), NULL, &blk);
//     ffn_tp_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_NONE);  // y on every rank
// -------------------------------------------------------------------------------------------

/// Largest world size a plan accepts.
#define FFN_TP_MAX_WORLD 65536
/// Bytes that always hold a plan's text (ffn_tp_plan_to_string), NUL included.
#define FFN_TP_PLAN_TEXT_MAX 512

/// Where the down projection's bias is added: once, never once per rank.
enum ffn_tp_down_bias {
    FFN_TP_DOWN_BIAS_RANK0 = 0,     // rank 0's shard alone holds b_down and adds it to its partial
                                    // y before the all-reduce (vLLM RowParallelLinear)
    FFN_TP_DOWN_BIAS_AFTER_REDUCE,  // every shard holds b_down; added after the all-reduce
                                    // (Megatron); its gradient is the same on every rank
    FFN_TP_DOWN_BIAS_COUNT
};

/// Choices for a plan. The partition of d_ff: `align` columns make a unit, the first
/// (units mod P) ranks get one unit more than the others, and the last unit is short when d_ff
/// is not a multiple of align (d_ff = 172, P = 3, align 1: 58, 57, 57; d_ff = 11008, P = 4,
/// align 128: 2816, 2816, 2688, 2688).
struct ffn_tp_plan_opts {
    size_t size;                     // sizeof(struct ffn_tp_plan_opts)
    int64_t align;                   // ≥ 1; 128 keeps every rank's width a tensor-core multiple
    enum ffn_gate_up_layout layout;  // every rank's gate/up layout; FFN_GATE_UP_LAYOUT_COUNT: as
                                     // stored (a BLOCKED source gives FUSED); never BLOCKED
    enum ffn_weight_orient orient;   // every rank's weight orientation; FFN_WEIGHT_ORIENT_COUNT:
                                     // each tensor as stored
    enum ffn_tp_down_bias down_bias;
};

// clang-format off
#define FFN_TP_PLAN_OPTS_INIT \
    { sizeof(struct ffn_tp_plan_opts), 1, FFN_GATE_UP_LAYOUT_COUNT, FFN_WEIGHT_ORIENT_COUNT, \
      FFN_TP_DOWN_BIAS_RANK0 }
// clang-format on

/// A sharding plan: the whole block as stored, the world size and every rank's layout. The
/// same on every rank (the rank is an argument of the functions that need it).
struct ffn_tp_plan {
    size_t size;                  // sizeof(struct ffn_tp_plan)
    int64_t world;                // P ≥ 1 ranks
    int64_t align;                // the partition unit (ffn_tp_plan_opts)
    struct ffn_block_spec block;  // the whole block: widths, act, stored gate/up layout, biases
    enum ffn_weight_orient orient_gate, orient_up, orient_down;  // as stored (fused: gate_up's
                                                                 // in both; plain: gate unused)
    enum ffn_gate_up_layout shard_layout;  // every rank's (SEPARATE for a plain block)
    enum ffn_weight_orient shard_orient_gate, shard_orient_up, shard_orient_down;
    enum ffn_tp_down_bias down_bias;
};

// clang-format off
#define FFN_TP_PLAN_INIT                                                                     \
    { sizeof(struct ffn_tp_plan), 0, 1, FFN_BLOCK_SPEC_INIT, FFN_WEIGHT_OUT_IN,               \
      FFN_WEIGHT_OUT_IN, FFN_WEIGHT_OUT_IN, FFN_GATE_UP_SEPARATE, FFN_WEIGHT_OUT_IN,          \
      FFN_WEIGHT_OUT_IN, FFN_WEIGHT_OUT_IN, FFN_TP_DOWN_BIAS_RANK0 }
// clang-format on

/// Makes the plan that splits the block (spec, weights) over `world` ranks. Only the weights'
/// orientations are read (weights may be NULL: every tensor [out, in]); opts may be NULL.
/// @retval FFN_STATUS_OK
/// @retval FFN_STATUS_INVALID_ARG  a spec the block API refuses, world outside [1,
///         FFN_TP_MAX_WORLD], fewer units than ranks ("d_ff=100 makes 1 unit of align=128;
///         2 ranks need at least one each"), a BLOCKED or [in, out] INTERLEAVED shard layout
FFN_API enum ffn_status ffn_tp_plan_make(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                         const struct ffn_block_weights *weights, int64_t world,
                                         const struct ffn_tp_plan_opts *opts,
                                         struct ffn_tp_plan *plan);

/// Rank `rank`'s columns of d_ff: [*col0_out, *col0_out + *cols_out).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (rank outside [0, world), a plan that fails
///         the checks of ffn_tp_plan_parse)
FFN_API enum ffn_status ffn_tp_plan_range(ffn_ctx_t ctx, const struct ffn_tp_plan *plan,
                                          int64_t rank, int64_t *col0_out, int64_t *cols_out);

/// The block rank `rank` runs: d_ff = its width, its gate/up layout, tp_groups 1, the gate and
/// up biases as the whole block's, bias_down as the down-bias rule gives it (RANK0: rank 0
/// only; AFTER_REDUCE: none, the tensor-parallel block adds it after the all-reduce).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_tp_plan_shard_spec(ffn_ctx_t ctx, const struct ffn_tp_plan *plan,
                                               int64_t rank, struct ffn_block_spec *spec_out);

/// The plan as one line of text (also its serialised form, e.g. in a shard file's metadata):
///   ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1
///   orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=fused
///   shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86,86
/// (one line; `cols` lists every rank's width, for the reader: the parser checks it).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (cap < FFN_TP_PLAN_TEXT_MAX and the text
///         does not fit, or an invalid plan)
FFN_API enum ffn_status ffn_tp_plan_to_string(ffn_ctx_t ctx, const struct ffn_tp_plan *plan,
                                              char *buf, size_t cap);

/// Parses the text of ffn_tp_plan_to_string (untrusted input: every key required once, every
/// value checked, the plan re-validated and `cols` compared with the partition it implies).
/// `plan->size` must be set (FFN_TP_PLAN_INIT).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BAD_FORMAT ("plan text: align=0;
///         expected an integer ≥ 1")
FFN_API enum ffn_status ffn_tp_plan_parse(ffn_ctx_t ctx, const char *text,
                                          struct ffn_tp_plan *plan);

/// True when the plans are the same. Otherwise, when why != NULL, writes the first difference
/// ("world: 2 vs 4", "shard_layout: fused vs separate") into why[why_cap].
FFN_API bool ffn_tp_plan_equal(const struct ffn_tp_plan *a, const struct ffn_tp_plan *b, char *why,
                               size_t why_cap);

/// What rank `rank` holds and sends under a plan, for n_tokens tokens.
struct ffn_tp_cost {
    size_t size;                 // sizeof(struct ffn_tp_cost)
    int64_t d_ff;                // the rank's width m_r
    int64_t n_params;            // the rank's weights and biases
    double allreduce_bytes_fwd;  // payload of the forward's all-reduce: n_tokens·d_model·esize
    double allreduce_bytes_bwd;  // payload of the backward's (dx)
    double sent_bytes_fwd;       // bytes the rank sends in a ring all-reduce of that payload:
    double sent_bytes_bwd;       //   2·(P-1)/P · payload (reduce-scatter, then all-gather)
};

// clang-format off
#define FFN_TP_COST_INIT { sizeof(struct ffn_tp_cost), 0, 0, 0, 0, 0, 0 }
// clang-format on

/// Fills `cost` (size set: FFN_TP_COST_INIT). act_dtype: the dtype of y and dx on the wire.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_tp_plan_cost(ffn_ctx_t ctx, const struct ffn_tp_plan *plan,
                                         int64_t rank, int64_t n_tokens, enum ffn_dtype act_dtype,
                                         struct ffn_tp_cost *cost);

// --- shards: one rank's weights ----------------------------------------------------------------

typedef struct ffn_tp_shard *ffn_tp_shard_t;

/// Copies rank `rank`'s part of the whole block's weights (views as for ffn_block_create, of
/// the spec and orientations the plan was made from) into memory the shard owns, in the
/// plan's shard layout and orientations, each tensor in its source dtype (a fused shard tensor
/// made from a gate and an up of different dtypes takes the gate's). Fused tensors are
/// re-blocked: rank r's [g_r | u_r] gathers gate columns c_r.. and up columns c_r.., wherever
/// the source layout keeps them (two tensors, [g | u], [u | g], interleaved, blocked for any
/// group count).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (a weight the block API would refuse for
///         the plan's spec, orientations that differ from the plan's), FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_tp_shard_create(ffn_ctx_t ctx, const struct ffn_tp_plan *plan,
                                            int64_t rank, const struct ffn_block_weights *weights,
                                            ffn_tp_shard_t *shard_out);
/// The rank's weights (dense, shapes declared), for ffn_tp_block_create: under
/// FFN_TP_DOWN_BIAS_AFTER_REDUCE every rank's b_down is set, though its block spec has none.
FFN_API const struct ffn_block_weights *ffn_tp_shard_weights(ffn_tp_shard_t shard);
FFN_API void ffn_tp_shard_destroy(ffn_tp_shard_t shard);

// --- communicators ------------------------------------------------------------------------------

typedef struct ffn_comm *ffn_comm_t;

/// Wraps the caller's MPI communicator: `mpi_comm` points to an MPI_Comm (e.g. &world with
/// MPI_Comm world = MPI_COMM_WORLD). ffn duplicates it (MPI_Comm_dup, so its messages never meet
/// the caller's) with errors returned rather than fatal. MPI must be initialised (any thread
/// level) and stay so until ffn_comm_destroy. Collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL), FFN_STATUS_UNSUPPORTED (a build
///         without MPI; MPI not initialised or already finalised), FFN_STATUS_BACKEND (MPI's
///         error text), FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_comm_create_mpi(ffn_ctx_t ctx, const void *mpi_comm,
                                            ffn_comm_t *comm_out);

/// Options of ffn_comm_create_nccl.
struct ffn_comm_nccl_opts {
    size_t size;         // sizeof(struct ffn_comm_nccl_opts)
    ffn_comm_t control;  // optional: a host communicator over the same ranks, rank for rank
                         // (ffn_comm_create_mpi), for the small host-memory calls of collective
                         // entry points (agreements, plan texts): they then never wait for the
                         // GPU. NULL: those go through NCCL, staged through device memory, and
                         // wait for the context's stream (the work queued before them included).
                         // Kept by reference: destroy it after this communicator.
    double timeout_s;    // a wait for NCCL on the host (control calls without `control`,
                         // ffn_comm_synchronize) gives up after this many seconds with
                         // FFN_STATUS_BACKEND, and the communicator refuses later calls (the
                         // owner must then ncclCommAbort its ncclComm_t); 0: no limit
};

// clang-format off
#define FFN_COMM_NCCL_OPTS_INIT { sizeof(struct ffn_comm_nccl_opts), NULL, 0.0 }
// clang-format on

/// Wraps the caller's NCCL communicator: `nccl_comm` points to an ncclComm_t (made by the caller,
/// e.g. ncclCommInitRank; ffn never creates, finalises, aborts or destroys it). `ctx` must be a
/// CUDA context on the communicator's device (ncclCommCuDevice). Every later call on this
/// communicator takes a CUDA context of that device; its all-reduces and broadcasts of device
/// memory are queued on that context's stream (ffn_ctx_stream) and return without waiting, as
/// NCCL's own calls do. ffn calls the NCCL that made the communicator: libnccl.so.2 already
/// loaded in the process (or its symbols exported by the program); the library itself never
/// links NCCL. Not collective (it reads the communicator's rank, size and device); opts may be
/// NULL.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL, a NULL ncclComm_t, a context that is not
///         CUDA or not on the communicator's device, a control communicator of another size or
///         rank), FFN_STATUS_UNSUPPORTED (a build without NCCL or the CUDA backend; no NCCL in
///         the process; NCCL older than 2.10), FFN_STATUS_BACKEND (NCCL's or CUDA's error text),
///         FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_comm_create_nccl(ffn_ctx_t ctx, const void *nccl_comm,
                                             const struct ffn_comm_nccl_opts *opts,
                                             ffn_comm_t *comm_out);

/// Frees the communicator (MPI: its duplicate; call before MPI_Finalize; NCCL: ffn's state only,
/// the ncclComm_t stays the caller's). NULL is a no-op.
FFN_API void ffn_comm_destroy(ffn_comm_t comm);
/// This process's rank and the world size (-1 for NULL).
FFN_API int64_t ffn_comm_rank(ffn_comm_t comm);
FFN_API int64_t ffn_comm_size(ffn_comm_t comm);
/// "mpi" or "nccl".
FFN_API const char *ffn_comm_backend(ffn_comm_t comm);

/// In-place sum over the ranks of buf[0..n) (f32), buf in the communicator's memory (MPI: host
/// memory; NCCL: device memory, queued on ctx's stream). Collective; n must agree across ranks.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_comm_allreduce_f32(ffn_ctx_t ctx, ffn_comm_t comm, float *buf,
                                               int64_t n);
/// In-place sum over the ranks of buf[0..n) of `dtype`, buf in the communicator's memory as for
/// ffn_comm_allreduce_f32. MPI sums f32; NCCL f32, bf16 and f16 (16-bit sums round at each step
/// of NCCL's reduction). Collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (NULL, n < 0, an unknown dtype; NCCL: buf not
///         device memory of the communicator's device, or shorter than n elements),
///         FFN_STATUS_UNSUPPORTED (a dtype the communicator does not sum), FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_comm_allreduce_sum(ffn_ctx_t ctx, ffn_comm_t comm, void *buf,
                                               enum ffn_dtype dtype, int64_t n);
/// Copies rank `root`'s buf[0..bytes) into every rank's buf, in the communicator's memory (as
/// above). Collective; bytes and root must agree across ranks.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_comm_broadcast(ffn_ctx_t ctx, ffn_comm_t comm, void *buf, size_t bytes,
                                           int64_t root);
/// Waits until the communicator's work queued on ctx's stream is done (with everything queued
/// before it there) and reports NCCL's asynchronous errors (ncclCommGetAsyncError); returns at
/// once for MPI, whose calls are synchronous. Not collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND (an asynchronous error, a
///         CUDA error, the timeout of ffn_comm_nccl_opts)
FFN_API enum ffn_status ffn_comm_synchronize(ffn_ctx_t ctx, ffn_comm_t comm);

/// Agreement: every rank passes its own status; returns FFN_STATUS_OK on every rank when all
/// passed OK, else an error on every rank: a rank that failed returns its own status and keeps
/// its message, the others return the largest status passed, with "another rank failed
/// (<status>); its message says why". Collective. Use it after local work that may fail on some
/// ranks only (opening a file), before the next collective call.
/// @retval FFN_STATUS_OK, the failed status, FFN_STATUS_BACKEND (the communication failed)
FFN_API enum ffn_status ffn_comm_agree(ffn_ctx_t ctx, ffn_comm_t comm, enum ffn_status local);

/// Traffic through a communicator since creation (or the last reset). `data` counts the
/// all-reduces of activations (f32 / bf16); `control` the small agreement and broadcast calls
/// of collective entry points.
struct ffn_comm_stats {
    size_t size;  // sizeof(struct ffn_comm_stats)
    int64_t data_calls;
    double data_bytes;       // payload bytes (each all-reduce's buffer size)
    double data_sent_bytes;  // bytes this rank sends, ring model: 2·(P-1)/P · payload
    double data_seconds;     // wall time inside those calls (MPI: synchronous, so it
                             // includes waiting for the slowest rank; NCCL: the time to
                             // queue them, the transfer runs later on the stream)
    int64_t control_calls;
    double control_bytes;
    double control_seconds;
};

// clang-format off
#define FFN_COMM_STATS_INIT { sizeof(struct ffn_comm_stats), 0, 0, 0, 0, 0, 0, 0 }
// clang-format on

/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_comm_stats(ffn_ctx_t ctx, ffn_comm_t comm,
                                       struct ffn_comm_stats *stats);
FFN_API void ffn_comm_stats_reset(ffn_comm_t comm);

// --- tensor-parallel blocks ---------------------------------------------------------------------

typedef struct ffn_tp_block *ffn_tp_block_t;

/// Makes this rank's part of a tensor-parallel block: `weights` are this rank's shard
/// (ffn_tp_shard_weights, or views of a shard file; on a CUDA context, views of device memory),
/// `opts` as for ffn_block_create. The local block is what ffn_block_create makes for ctx; the
/// communicator's memory must be the context's (MPI with a CPU context, NCCL with a CUDA context
/// of its device). Checks that the communicator's size is plan->world and that every rank holds
/// the same plan (rank 0's is broadcast and compared: "rank 1's plan differs from rank 0's:
/// align: 1 vs 128"). Collective. Later calls take a context of the same backend and device.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (as ffn_block_create for the rank's spec; a
///         plan that differs across ranks or from the communicator's size),
///         FFN_STATUS_UNSUPPORTED, FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_tp_block_create(ffn_ctx_t ctx, ffn_comm_t comm,
                                            const struct ffn_tp_plan *plan,
                                            const struct ffn_block_weights *weights,
                                            const struct ffn_block_opts *opts,
                                            ffn_tp_block_t *block_out);
FFN_API void ffn_tp_block_destroy(ffn_tp_block_t block);

/// y = block(x) on every rank: the rank's local block writes its partial y, one all-reduce
/// (sum) completes it (AFTER_REDUCE: then b_down). x, y: [n_tokens, d_model] in a dtype the
/// communicator sums (MPI: f32; NCCL: f32, bf16, f16), the same x and the same n_tokens on every
/// rank. Policies as for ffn_block_forward. Collective. On CUDA, everything is queued on ctx's
/// stream: y is complete in stream order (the agreement step alone may wait: see
/// ffn_comm_nccl_opts.control).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (as ffn_block_forward; n_tokens differing
///         across ranks), FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_tp_block_forward(ffn_ctx_t ctx, ffn_tp_block_t block,
                                             const struct ffn_tensor *y, const struct ffn_tensor *x,
                                             enum ffn_block_policy policy);

/// Backward of the last training forward, from the same dy on every rank: dx (on every rank,
/// after one all-reduce; NULL on every rank or on none) and this rank's weight gradients in
/// its shard's layout (as ffn_block_backward for the rank's block; dy and dx in the dtypes and
/// memory of the forward's y). grads->b_down: AFTER_REDUCE:
/// Σ dy on every rank; RANK0: Σ dy on rank 0 and zero elsewhere (the sum over ranks of every
/// gradient is the whole block's). Collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_tp_block_backward(ffn_ctx_t ctx, ffn_tp_block_t block,
                                              const struct ffn_block_grads *grads,
                                              const struct ffn_tensor *dx,
                                              const struct ffn_tensor *dy);

/// Gathers every rank's weight gradients (`local`, in the rank's shard layout) into the whole
/// block's layout and orientation (`full`: f32, dense, as ffn_block_backward writes them for
/// the unsharded block; both in host memory: copy a GPU's gradients to the host first), on
/// every rank: each rank places its columns, one all-reduce per
/// tensor sums them (b_down is taken from rank 0). The members set must agree across ranks.
/// Collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_tp_grads_gather(ffn_ctx_t ctx, ffn_comm_t comm,
                                            const struct ffn_tp_plan *plan,
                                            const struct ffn_block_grads *local,
                                            const struct ffn_block_grads *full);

// --- shard files ------------------------------------------------------------------------------
//
// `ffn_tp_model_shard` writes DIR/rank-<r>-of-<P>.safetensors for r < P: every FFN of a
// checkpoint (ffn_model_open), rank r's part by the plan, tensors named
// layers.<L>[.experts.<E>].{gate_proj,up_proj,gate_up_proj,down_proj}.{weight,bias}, and
// __metadata__: ffn.tp.format, ffn.tp.world, ffn.tp.rank, ffn.tp.source (the source files'
// names, sizes and SHA-256), ffn.tp.plan.layers.<L>[.experts.<E>] (each FFN's plan text) and
// ffn.tp.set (SHA-256 of the source and of every plan: the same in every file of one set).

/// Shards the checkpoint at model_path over `world` ranks into out_dir, which must not exist or
/// be empty: the files are written into a temporary folder beside it, renamed into place when
/// all are complete. Quantised weights are stored as f32, others in their dtype.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (a non-empty out_dir, opts or world the plan
///         refuses), the statuses of ffn_model_open, FFN_STATUS_IO, FFN_STATUS_OUT_OF_MEMORY
FFN_API enum ffn_status ffn_tp_model_shard(ffn_ctx_t ctx, const char *model_path, int64_t world,
                                           const struct ffn_tp_plan_opts *opts,
                                           const char *out_dir);

typedef struct ffn_tp_shards *ffn_tp_shards_t;

/// Opens this rank's file of the shard set in `dir` and checks that it belongs here: its rank
/// and world are the communicator's, its set id matches its own content, every rank holds the
/// same set (rank 0's source and plans are broadcast and compared: "rank 1's
/// rank-1-of-2.safetensors comes from another checkpoint: model.safetensors sha256 4f2a.. vs
/// 9c01.."), and, when model_path is not NULL, that the source files are the checkpoint's
/// (hashed again) and every plan is the one that checkpoint's FFN makes. Collective.
/// @retval FFN_STATUS_OK, FFN_STATUS_NOT_FOUND, FFN_STATUS_BAD_FORMAT, FFN_STATUS_INVALID_ARG
///         (a mismatch, named), FFN_STATUS_IO, FFN_STATUS_OUT_OF_MEMORY, FFN_STATUS_BACKEND
FFN_API enum ffn_status ffn_tp_shards_open(ffn_ctx_t ctx, ffn_comm_t comm, const char *dir,
                                           const char *model_path, ffn_tp_shards_t *shards_out);
FFN_API void ffn_tp_shards_close(ffn_tp_shards_t shards);
/// Layer `layer` (expert `expert`, -1 or 0 for a dense layer): its plan and this rank's weights
/// (views into the mapped file, valid until close).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG (out of range), FFN_STATUS_BAD_FORMAT
FFN_API enum ffn_status ffn_tp_shards_layer(ffn_ctx_t ctx, ffn_tp_shards_t shards, int64_t layer,
                                            int64_t expert, struct ffn_tp_plan *plan_out,
                                            struct ffn_block_weights *weights_out);

// -------------------------------------------------------------------------------------------
// WebGPU (WGSL) kernels (webgpu/)
//
// The WGSL files of webgpu/ are embedded in the library at build time, so a native WebGPU host
// (Dawn, wgpu-native) can create its shader modules without shipping the files. Kernels, bind
// group ABI and accuracy: webgpu/README.md and docs/numerics.md. "activation.wgsl" is a complete
// module; "activation_f16.wgsl" holds the array<f16> variants and is compiled as
// "enable f16;\n" + activation.wgsl + activation_f16.wgsl on devices with shader-f16.
// -------------------------------------------------------------------------------------------

/// The text of the embedded file `file_name` (a base name such as "activation.wgsl"), NUL
/// terminated, byte for byte the file's content; NULL for an unknown name or NULL.
FFN_API const char *ffn_wgsl_source(const char *file_name);
/// The base name of the index-th embedded file (0, 1, ...), NULL past the last one.
FFN_API const char *ffn_wgsl_file_name(int index);

#ifdef __cplusplus
}
#endif

#endif  // FFN_H
