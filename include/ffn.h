// ffn.h — the one public header of libffn: the feed-forward stage of transformers.
//
// Overview
// --------
// ffn computes the activations of a transformer FFN (GeLU, SiLU, ReLU, sigmoid, identity,
// quick-GeLU), the gated combines of the GLU family (SwiGLU, GeGLU, ReGLU, GLU, Bilinear:
// h = act(gate) * up), and their backward passes, on f32 / bf16 / f16 data, with SIMD kernels
// chosen at run time (scalar reference, AVX2+FMA, AVX-512) and OpenMP threads.
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
// bf16/f16 results rounded to nearest-even from the f32 result; f32 forward within 2 ulp
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
#  ifdef FFN_BUILD
#    define FFN_API __declspec(dllexport)
#  else
#    define FFN_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define FFN_API __attribute__((visibility("default")))
#else
#  define FFN_API
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

enum ffn_dtype {
    FFN_DTYPE_F32 = 0,
    FFN_DTYPE_BF16,
    FFN_DTYPE_F16,
    FFN_DTYPE_COUNT
};

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
// Context: chosen kernels, thread count, last error. No global mutable state: two contexts
// are independent; one context must not be used by two threads at once.
// -------------------------------------------------------------------------------------------

typedef struct ffn_ctx *ffn_ctx_t;

/// Optional log sink (level 0 = error, 1 = warning, 2 = info, 3 = debug).
typedef void (*ffn_log_fn)(int level, const char *message, void *user);

struct ffn_ctx_opts {
    size_t size;                  // sizeof(struct ffn_ctx_opts): lets the ABI grow
    enum ffn_isa force_isa;       // FFN_ISA_AUTO: best supported, or $FFN_ISA when set
    int n_threads;                // 0: OpenMP's default (omp_get_max_threads())
    enum ffn_accuracy accuracy;   // kernel accuracy tier
    bool bf16_parity;             // gated forward: round act(gate) to the output's storage type
                                  // before the multiply, as PyTorch eager code does (bf16/f16)
    ffn_log_fn log;               // may be NULL
    void *log_user;
};

#define FFN_CTX_OPTS_INIT \
    { sizeof(struct ffn_ctx_opts), FFN_ISA_AUTO, 0, FFN_ACCURACY_DEFAULT, false, NULL, NULL }

/// Creates a context. `opts` may be NULL (defaults). A forced ISA that the CPU cannot run
/// gives FFN_STATUS_UNSUPPORTED; so does an unknown $FFN_ISA value (named in the message,
/// which is written to *ctx_out's error buffer when a context could be made, else logged).
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG, FFN_STATUS_UNSUPPORTED, FFN_STATUS_OUT_OF_MEMORY
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
// -------------------------------------------------------------------------------------------

/// y = act(x), elementwise. y == x is the classic `gelu_inplace`.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_act_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *y,
                                        const struct ffn_tensor *x);

/// dx = dy * act'(x), elementwise. dx may alias x or dy.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_act_backward(ffn_ctx_t ctx, enum ffn_act act,
                                         const struct ffn_tensor *dx, const struct ffn_tensor *x,
                                         const struct ffn_tensor *dy);

/// Gated combine h = act(gate) * up, elementwise (the classic `swiglu_combine`; SwiGLU with
/// FFN_ACT_SILU, GeGLU with a GeLU, ReGLU with FFN_ACT_RELU, GLU with FFN_ACT_SIGMOID, Bilinear
/// with FFN_ACT_IDENTITY). gate and up are not interchangeable. h may alias gate or up.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_glu_forward(ffn_ctx_t ctx, enum ffn_act act, const struct ffn_tensor *h,
                                        const struct ffn_tensor *gate, const struct ffn_tensor *up);

/// Gated backward: dgate = dh * up * act'(gate), dup = dh * act(gate). dgate may alias gate
/// and dup may alias up (in-place gradients over the saved pre-activations); either output may
/// also alias dh.
/// @retval FFN_STATUS_OK, FFN_STATUS_INVALID_ARG
FFN_API enum ffn_status ffn_glu_backward(ffn_ctx_t ctx, enum ffn_act act,
                                         const struct ffn_tensor *dgate,
                                         const struct ffn_tensor *dup,
                                         const struct ffn_tensor *gate,
                                         const struct ffn_tensor *up,
                                         const struct ffn_tensor *dh);

// -------------------------------------------------------------------------------------------
// FFN blocks on the CPU (src/block/) — declared in this section.
// -------------------------------------------------------------------------------------------

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
    FFN_FILE_DTYPE_Q8_0,   // GGUF only (blocks of 32: f16 scale + 32 int8)
    FFN_FILE_DTYPE_Q4_0,   // GGUF only (blocks of 32: f16 scale + 16 bytes of nibbles)
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

#ifdef __cplusplus
}
#endif

#endif  // FFN_H
