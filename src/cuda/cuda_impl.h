// cuda_impl.h — internals of the CUDA backend shared by its host code (cuda_backend.c, C) and its
// kernels (ew_*.cu, CUDA C): the argument block of the element-wise kernel and the table of
// kernels. Never installed; nothing here names a CUDA type, so plain C includes it.
#ifndef FFN_CUDA_IMPL_H
#define FFN_CUDA_IMPL_H

#include <stdint.h>

#include "ffn.h"

#ifdef __cplusplus
extern "C" {
#endif

// The calling thread's stream-capture mode relaxed for the length of a call (cuda_backend.c):
// returns the previous mode for ffn_cuda_capture_restore (-1: unchanged).
int ffn_cuda_capture_relax(void);
void ffn_cuda_capture_restore(int mode);

// Threads per block of the element-wise kernel; each thread takes 8 consecutive elements of a row
// at a time (one 16-byte access per 16-bit input, two per f32 input).
#define FFN_CUDA_THREADS 256
#define FFN_CUDA_UNIT 8
// Threads per block of the flat kernel: 256 by default ($FFN_CUDA_BLOCK: 64..512, a multiple of
// 32, for measurements); each takes U 16-byte chunks of every view a step (U = 1, 2 or 4), over
// one pass or a loop (cuda_backend.c, ffn__flat_form).
#define FFN_CUDA_FLAT_THREADS 256
#define FFN_CUDA_FLAT_MAX_THREADS 512

// Kernel kinds of an activation's getter: the generic kernel (ffn_cu_ew: any layout, any dtype
// pair), or the flat one (ffn_cu_flat: contiguous views, all 16-byte aligned, one dtype in and
// out) for dtype dt, FFN_CUDA_K_FLAT + dt, plus FFN_CUDA_K_PAR for a 16-bit gated forward in
// parity mode.
enum {
    FFN_CUDA_K_GENERIC = 0,
    FFN_CUDA_K_FLAT = 1,
    FFN_CUDA_K_PAR = 1 + FFN_DTYPE_COUNT,
    FFN_CUDA_K_COUNT = 2 * (1 + FFN_DTYPE_COUNT),
};

// flags of struct ffn_cuda_ew_args
enum {
    FFN_CUDA_ACC = 1,    // FFN_ACCURACY_HIGH
    FFN_CUDA_PAR = 2,    // parity: gated forward with a 16-bit output
    FFN_CUDA_VEC = 4,    // every row of every view starts 16-byte aligned: vector accesses
    FFN_CUDA_BYTES = 8,  // some view is not aligned to its element size: byte accesses
};

// Modes of the flat kernel (flags): its grid, one pass (a step a thread) or resident blocks
// looping (the next step's loads before the current one's math); and its views, contiguous or
// views of rows (row strides; the chunks of a row contiguous).
enum { FFN_CUDA_FLAT_PASS = 0, FFN_CUDA_FLAT_LOOP = 1, FFN_CUDA_FLAT_ROWS = 2 };

// One launch: up to 2 outputs and 3 inputs of one shape [rows, cols], row strides in elements.
// Thread (tr, tu) of a block, tu < 2^lpr_log2 (lanes per row), takes unit u of row r for
// r = blockIdx.y·rows_per_block + tr + k·gridDim.y·rows_per_block, u = blockIdx.x·lanes + tu +
// m·gridDim.x·lanes (grid-stride in both directions), rows_per_block = FFN_CUDA_THREADS / lanes.
// The flat kernel over views of rows numbers their 16-byte chunks row by row and finds a chunk's
// row by ffn_cuda_div with div_mul, div_shift = ffn_cuda_div_magic(chunks per row).
struct ffn_cuda_ew_args {
    void *out[2];
    const void *in[3];
    int64_t out_rs[2], in_rs[3];
    int64_t rows, cols;
    int32_t in_dt, out_dt;  // enum ffn_dtype
    int32_t flags;
    int32_t lpr_log2;  // log2 of the lanes per row (≤ log2 FFN_CUDA_THREADS)
    uint32_t div_mul, div_shift;
};

// n / d for n, d < 2^31 by a multiply and a shift: q = (hi32(n · mul) + n) >> shift with
// shift = ceil(log2 d) and mul = floor(2^32 (2^shift − d) / d) + 1 (Granlund and Montgomery's
// division by invariant integers; the sum fits in 32 bits because hi32(n · mul) < n < 2^31). The
// same function on the host (tests) and in the kernels, where the product's high half is one
// mul.hi.
#ifdef __CUDACC__
#    define FFN_CUDA_HD __host__ __device__
#else
#    define FFN_CUDA_HD
#endif
static inline FFN_CUDA_HD uint32_t ffn_cuda_div(uint32_t n, uint32_t mul, uint32_t shift) {
    return (uint32_t)((((uint64_t)n * mul) >> 32) + n) >> shift;
}

static inline void ffn_cuda_div_magic(uint32_t d, uint32_t *mul, uint32_t *shift) {
    uint32_t s = 0;
    while (((uint64_t)1 << s) < d) s++;
    *shift = s;
    *mul = (uint32_t)(((((uint64_t)1 << s) - d) << 32) / d + 1);
}

// The kernel of op family `op` (enum ffn_kop) and kind (FFN_CUDA_K_*) for each activation, for
// the flat kinds with u (1, 2 or 4) chunks a thread and step in form `mode` (FFN_CUDA_FLAT_*): a
// host stub for cudaLaunchKernel, taking one struct ffn_cuda_ew_args (the flat kinds: rows = 1,
// cols = the elements; FFN_CUDA_FLAT_ROWS: rows, cols a multiple of the chunk, row strides);
// op = -1: the builder of an accurate-tier 16-bit forward's lookup table, taking
// (uint16_t *tab, int in_dt, int out_dt). Defined in ew_<act>.cu.
const void *ffn_cuda_ew_gelu_tanh(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_gelu_erf(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_silu(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_relu(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_sigmoid(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_identity(int op, int kind, int u, int mode);
const void *ffn_cuda_ew_quick_gelu(int op, int kind, int u, int mode);

// An accurate-tier 16-bit forward through its lookup table (lut.cu): every block copies the 128 KiB table into
// shared memory, then maps 8 elements per 16-byte access, 4 accesses in flight per thread.
// Contiguous views, 16-byte aligned; y may be x.
#define FFN_CUDA_LUT_THREADS 1024
#define FFN_CUDA_LUT_SMEM (65536 * 2)
const void *ffn_cuda_lut_apply(void);  // (const uint16_t *tab, const uint16_t *x, uint16_t *y,
                                       //  int64_t n, int mode)

#ifdef __cplusplus
}
#endif

#endif  // FFN_CUDA_IMPL_H
