// block_impl.h — internals of the FFN block layer (src/block/): the block object, the GEMM
// operands that express each stored weight (orientation and layout as transpose flags, pointers
// and leading dimensions, never as copies) and the helpers shared by create and execute.
// Never installed.
#ifndef FFN_BLOCK_IMPL_H
#define FFN_BLOCK_IMPL_H

#include "core/core_impl.h"

// Row tiles of the TILED schedule are sized so that one tile of the pre-activations P and of h
// stays in cache between the GEMM that writes it and the activation that reads it.
#define FFN_BLOCK_TILE_BYTES ((size_t)4 << 20)
// Fewer rows than this per GEMM call make OpenBLAS repack the weights too often to pay off.
#define FFN_BLOCK_TILE_MIN_ROWS ((int64_t)64)

// A weight as a GEMM operand in the "x·W" sense: the logical matrix W is [in, out] (K × N).
// Stored [out, in] (nn.Linear) it is used transposed (trans = true); stored [in, out] (Conv1D)
// as is. `ld` is the leading dimension of the stored array, which encodes interleaving (2·ld).
struct ffn_blk_mat {
    const float *p;
    int64_t ld;
    bool trans;
};

// Which member of ffn_block_weights / ffn_block_grads a piece belongs to.
enum ffn_blk_which { FFN_BLK_GATE = 0, FFN_BLK_UP, FFN_BLK_GATE_UP, FFN_BLK_DOWN };

// One GEMM of the first projection: P[:, col0 : col0+n] = x · W (+ bias). Its weight gradient
// goes to the grads member `which`, at element offset grad_off with leading dimension grad_ld
// (the dense stored shape, transposed like the weight).
struct ffn_blk_seg {
    struct ffn_blk_mat w;
    int64_t col0, n;
    enum ffn_blk_which which;
    int64_t grad_off, grad_ld;
};

// One bias piece of the first projection: P[:, col0 + j] += b[j * stride], j < n. Its gradient
// (a column sum of dP) goes to member `which` at grad_off + j * stride.
struct ffn_blk_bias {
    const float *b;
    int64_t stride;
    int64_t col0, n;
    enum ffn_blk_which which;
    int64_t grad_off;
};

struct ffn_block {
    struct ffn_block_spec spec;
    struct ffn_block_opts opts;
    int64_t pc;  // columns of the pre-activation buffer P: d_ff (plain) or 2·d_ff (gated)

    int n_seg;  // GEMMs of the first projection (1 or 2)
    struct ffn_blk_seg seg[2];
    int n_bias;  // bias pieces of the first projection (0..2)
    struct ffn_blk_bias bias[2];

    // Gated combine groups: group i reads gate columns g0 + i·gs and up columns u0 + i·gs of P
    // (gw each) and writes h columns i·gw. One group unless the layout is BLOCKED.
    int64_t n_groups, gw, g0, u0, gs;

    struct ffn_blk_mat down;  // logical [d_ff, d_model]
    int64_t down_grad_ld;
    const float *b_down;      // NULL: no bias

    // Owned memory: f32 copies of bf16/f16 weights (one allocation), and the workspace.
    float *cache;
    size_t cache_bytes;
    size_t weight_bytes;
    int64_t n_params;
    float *P;  // pre-activations / their gradients, [rows, pc]
    size_t P_cap;  // elements
    float *H;  // h / dh, [rows, d_ff]
    size_t H_cap;
    double *colsum;  // bias gradient accumulators, [max(pc, d_model)]
    size_t colsum_cap;

    // The pending training forward (policy NONE: none).
    enum ffn_block_policy pending;
    struct ffn_tensor px;  // its x (the caller's view)
    int64_t p_tokens;
};

// Rows per tile for n_tokens under the block's schedule (n_tokens when SEPARATE).
int64_t ffn_block_tile_rows(const struct ffn_block *b, int64_t n_tokens);

#endif  // FFN_BLOCK_IMPL_H
