// kernels.h — the CPU kernel ABI: the configuration every activation kernel takes (struct
// ffn_kcfg), the four kernel shapes and their prototypes (generated from kernels.inc), the kernel
// table a CPU context runs from, and the helpers the SIMD kernels share. Internal to the CPU layer
// (its kernels, src/cpu/*.c, and the tests and benchmarks that call kernels directly); core and
// the block know kernels only through the CPU backend (cpu_impl.h). Never installed.
#ifndef FFN_CPU_KERNELS_H
#define FFN_CPU_KERNELS_H

#include "core/core_impl.h"

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

// The four kernel shapes.
typedef void (*ffn_act_fwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x);
typedef void (*ffn_act_bwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x,
                               const void *dy);
typedef void (*ffn_glu_fwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate,
                               const void *up);
typedef void (*ffn_glu_bwd_fn)(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup,
                               const void *gate, const void *up, const void *dh);

// Prototypes of every kernel of kernels.inc.
#define FFN_KPROTO_ACT_FWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x)
#define FFN_KPROTO_ACT_BWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x, const void *dy)
#define FFN_KPROTO_GLU_FWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate, const void *up)
#define FFN_KPROTO_GLU_BWD(fn)                                                               \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup, const void *gate, \
            const void *up, const void *dh)

#define FFN_KERNEL(isa, op, act, fn) FFN_KPROTO_##op(fn);
#include "cpu/kernels.inc"
#undef FFN_KERNEL

// --- the kernel table ---------------------------------------------------------------------------
// A CPU context's kernels, one entry per (op, activation).
struct ffn_cpu_kernels {
    ffn_act_fwd_fn act_fwd[FFN_ACT_COUNT];
    ffn_act_bwd_fn act_bwd[FFN_ACT_COUNT];
    ffn_glu_fwd_fn glu_fwd[FFN_ACT_COUNT];
    ffn_glu_bwd_fn glu_bwd[FFN_ACT_COUNT];
    enum ffn_isa isa[FFN_KOP_COUNT][FFN_ACT_COUNT];  // which ISA each entry came from
};

// Fills `k` for `isa` (scalar entries first, then the ISA's overrides): kernels.c.
void ffn_cpu_kernels_init(struct ffn_cpu_kernels *k, enum ffn_isa isa);

// --- skinny GEMM kernels (driven by gemm_skinny.c) ----------------------------------------------
// C[m, n] = Σ_k A[m, k]·B[k, n] (+ bias[n]) (+ C[m, n]) for the M ≤ FFN_SKINNY_MAX_M rows of A
// and the columns n in [n0, n1) a thread owns, B bf16 or f32 (a decode GEMV: reading B is the
// cost). Each bf16 weight is widened exactly (except through A2, below) (its 16 bits become the top half of an f32); products and
// sums are f32 FMAs, each sum accumulated over k in one fixed order (lane by lane, then a fixed
// reduction tree), whatever [n0, n1) is: results do not depend on the thread split. The bias and
// the old C are added after the sum, in that order; a bf16 C is rounded once (RNE).
// (M ≤ FFN_SKINNY_AB_MAX_M for ffn_gemv_ab__avx512.)
#define FFN_SKINNY_MAX_M 8
#define FFN_SKINNY_AB_MAX_M 32

struct ffn_skinny {
    int64_t M, N, K;
    // A as packed f32 (gemm_skinny.c), row m at A + m·lda (a multiple of 32), zero padded past
    // K: "ba" (weights contiguous in k) with bf16 weights in 32-element chunks, each its even-k
    // elements then its odd-k ones; otherwise (f32 weights, or "ab") in k order.
    const float *A;
    int64_t lda;
    // "ab" with bf16 weights and bf16 A beyond FFN_SKINNY_MAX_M rows on an AVX512_BF16 CPU: A also
    // as bf16 pairs for vdpbf16ps, row m at A2 + m·lda / 2, pair p = k 2p + 1 (low half) and 2p
    // (high half: vdpbf16ps adds the high product first, so each sum still runs in k order), zero
    // past K; NULL otherwise. The full 32-column blocks then go through vdpbf16ps (input and
    // output subnormals flushed, as in oneDNN's bf16 kernels), the rest by widening and FMAs.
    const uint32_t *A2;
    // bf16 or f32 (bdt), in elements: "ba": weight column n (all k) at B + n·ldb; "ab": weight
    // row k (all n) at B + k·ldb.
    const void *B;
    enum ffn_dtype bdt;
    int64_t ldb;
    void *C;  // f32 or bf16 (cdt), row m at C + m·ldc elements
    enum ffn_dtype cdt;
    int64_t ldc;
    const float *bias;  // [N] or NULL
    bool acc;           // add the old C
    bool cvt;           // the CPU has AVX512_BF16 (bf16 stores by vcvtneps2bf16, same bits)
};

void ffn_gemv_ba__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1);
void ffn_gemv_ab__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1);
// The same kernels with the next weight rows prefetched into L2 only (gemv_avx512_l2.c).
void ffn_gemv_ba_l2__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1);
void ffn_gemv_ab_l2__avx512(const struct ffn_skinny *g, int64_t n0, int64_t n1);

// d[j·ldd + i] = s[i·lds + j] for the source rows i in [r0, r1) and the columns j in [0, C): an
// f32 transpose (bit copies, NaN payloads kept), source and destination not overlapping.
void ffn_f32_transpose__avx2(float *d, int64_t ldd, const float *s, int64_t lds, int64_t C,
                             int64_t r0, int64_t r1);
// The same for 16-bit elements (bf16, f16: bit copies).
void ffn_u16_transpose__avx2(uint16_t *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t C,
                             int64_t r0, int64_t r1);
// The same two with AVX-512 F/BW (transpose_avx512.c).
// Whether a transpose of source rows from r0 into d (leading dimension ldd, esz-byte elements)
// writes only whole 64-byte destination lines, whose stores may then be non-temporal: the
// destination lines of 64 bytes' worth of rows all start on a 64-byte boundary.
static inline bool ffn_tr_lines_whole(const void *d, int64_t ldd, int64_t r0, size_t esz) {
    const int64_t es = (int64_t)esz;
    return (uintptr_t)d % 64 == 0 && ldd * es % 64 == 0 && r0 * es % 64 == 0;
}
void ffn_f32_transpose__avx512(float *d, int64_t ldd, const float *s, int64_t lds, int64_t C,
                               int64_t r0, int64_t r1);
void ffn_u16_transpose__avx512(uint16_t *d, int64_t ldd, const uint16_t *s, int64_t lds, int64_t C,
                               int64_t r0, int64_t r1);

#endif  // FFN_CPU_KERNELS_H
