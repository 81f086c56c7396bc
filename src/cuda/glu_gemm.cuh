// glu_gemm.cuh — a Hopper GEMM (sm_90a) whose epilogue computes the gated combine:
// h = act(x·W_gateᵀ) ⊙ (x·W_upᵀ) in one pass over x and the weights, g and u never read back from
// device memory; its backward form, dh = dy·W_down with dg = act'(g)·u·dh and du = act(g)·dh in
// the epilogue, dh never leaving the chip; and a plain form C = A0·B0 (+ A1·B1) rounded once (the
// backward's dx of separate gate and up weights). bf16 (or f16) operands, f32 accumulation,
// outputs in the operands' dtype. Used by the CUDA block (glu_gemm.cu) and measured beside
// cuBLASLt by bench/cuda_fused_gemm.cu, which also builds its measurement forms (MODE_HMUL,
// clusters of two).
//
// The kernel: a persistent grid (one CTA an SM) walks 128-row tiles in groups of `group` tile rows
// for L2 reuse. Warp 0 of the first warpgroup loads A (128 × 64) and B (256 × 64: two boxes of
// 128 rows, gate rows then up rows for the gated forms; four boxes of 64 columns when B is stored
// [K, N]) by TMA with the 128-byte swizzle into a ring of STAGES shared-memory stages (mbarriers
// full / empty); the two consumer warpgroups each issue wgmma m64n256k16 over their 64 rows (128
// f32 accumulators a thread), one group of four in flight. A finished tile goes to shared memory
// rounded to 16 bits (the staging: the GEMM output ffn's unfused path would write), and warps 1-3
// of the first warpgroup take it from there while the consumers run the next tile: they store g
// and u by TMA (MODE_GUH), compute h over the g boxes with ffn's element math
// (src/cuda/act_math.h) and store it; or (MODE_DGLU) load g and u from device memory, compute dg
// and du and store them over g and u. So h (dg, du) equals, bit for bit, the unfused combine of
// the same 16-bit g and u (and dh), and the combine's math and memory traffic overlap the next
// tile's matrix work. Rows past T, columns past m and K past the operands are the TMA's: loads
// zero-filled, stores clipped; outputs whose row stride or pointer the TMA cannot take (Params::
// direct) are stored by those warps themselves, within the bounds.
#ifndef FFN_CUDA_GLU_GEMM_CUH
#define FFN_CUDA_GLU_GEMM_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda/act_math.h"

namespace ffn_gg {

enum { BM = 128, BN = 256, BK = 64 };
enum { A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES };
// MODE_HMUL: h = g·u, the epilogue without the activation's math (a measurement of its cost).
// MODE_DGLU: the backward's dh = dy·W_down (256 columns of dh a tile), then dg = act'(g)·u·dh and
// du = act(g)·dh from g, u in device memory (dg, du may be g, u: in place).
enum { MODE_PLAIN = 0, MODE_H = 1, MODE_GUH = 2, MODE_HMUL = 3, MODE_DGLU = 4 };
// The consumers stage their 128 × 256 tile in shared memory, rounded to 16 bits, as boxes of 64 rows
// × 64 columns (8 KB, 128-byte swizzle): consumer c's 64 rows at c · 32 KB, boxes 0-1 the first
// 128 columns (SwiGLU: g), 2-3 the last (u). Three warps of the producer's warpgroup then store
// them by TMA, or compute h over the g boxes and store it, while the consumers run the next tile.
// The ring of operand stages takes what is left of the 227 KB.
enum { STG_BYTES = 2 * 32768 };
enum { STAGES = (227 * 1024 - 1024 - STG_BYTES) / STAGE_BYTES };
enum { SMEM = STAGES * STAGE_BYTES + STG_BYTES + 1024 };

// --- PTX helpers ---------------------------------------------------------------------------------
static __device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void mbar_init(uint64_t *b, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count));
}

static __device__ __forceinline__ void mbar_expect_tx(uint64_t *b, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)),
                 "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void mbar_wait(uint64_t *b, int parity) {
    const uint32_t a = smem_u32(b);
    asm volatile(
        "{\n.reg .pred p;\nWAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra WAIT_%=;\n}\n" ::"r"(a),
        "r"(parity)
        : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint64_t *b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(b)) : "memory");
}

// Arrive on the barrier at the same offset in CTA `rank` of the cluster.
static __device__ __forceinline__ void mbar_arrive_cluster(uint64_t *b, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(smem_u32(b)),
        "r"(rank)
        : "memory");
}

static __device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

static __device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
            : "memory");
}

// A 2-D tile (c0 along the contiguous dimension, c1 along rows) into shared memory, completing on
// the barrier's transaction count.
static __device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, uint64_t *bar,
                                                int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_u32(dst)),
        "l"((uint64_t)map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
}

// The same tile into every CTA of `mask` in the cluster (same offsets, each CTA's own barrier).
static __device__ __forceinline__ void tma_load_mc(void *dst, const CUtensorMap *map, uint64_t *bar,
                                                   int c0, int c1, uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_u32(dst)),
        "l"((uint64_t)map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}

// A 2-D box from shared memory to global memory (bulk async group of this thread).
static __device__ __forceinline__ void tma_store(const CUtensorMap *map, const void *src, int c0,
                                                 int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
            (uint64_t)map),
        "r"(smem_u32(src)), "r"(c0), "r"(c1)
        : "memory");
}
static __device__ __forceinline__ void bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Until at most N of this thread's bulk groups still read their shared memory.
template <int N>
static __device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
static __device__ __forceinline__ void named_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
static __device__ __forceinline__ void fence_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// A shared-memory matrix descriptor for wgmma: K-major rows of 128 bytes, 128-byte swizzle,
// 8-row groups 1024 bytes apart.
static __device__ __forceinline__ uint64_t sdesc(const void *p) {
    const uint64_t a = smem_u32(p);
    return ((a & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

// The same for an MN-major operand (B stored [K, N], N contiguous: the transposed wgmma): boxes of
// 64 N × 64 K rows of 128 bytes, 128-byte swizzle; the leading field carries the 8 KB between
// 64-wide N blocks, the stride field the 1 KB between 8-row K groups (the other assignment gives
// wrong products: 117 M of 117 M outputs differ from cuBLASLt's in bench/cuda_fused_gemm.cu).
static __device__ __forceinline__ uint64_t sdesc_mn(const void *p) {
    const uint64_t a = smem_u32(p);
    return ((a & 0x3FFFF) >> 4) | ((uint64_t)(8192 >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

static __device__ __forceinline__ void wg_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
static __device__ __forceinline__ void wg_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// d += A·B (or d = A·B when scale_d is 0): one wgmma m64n256k16, 16-bit operands (bf16, or f16
// when F16) from shared memory through their descriptors (TB: B N-major), f32 accumulators (128
// a thread) in registers.
#define FFN_GG_WGMMA(TY)                                                                          \
    asm volatile(                                                                                 \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                             \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY                                         \
        " {"                                                                                      \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "        \
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "        \
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "        \
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "        \
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "  \
        "%111, "                                                                                  \
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "    \
        "%126, "                                                                                  \
        "%127"                                                                                    \
        "}, %128, %129, p, 1, 1, 0, %131;\n}\n"                                                   \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),           \
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),           \
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),           \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),           \
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),           \
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),           \
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),           \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),           \
          "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),           \
          "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]),           \
          "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),           \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),           \
          "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),           \
          "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),           \
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),       \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),     \
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),     \
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),     \
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])      \
        : "l"(da), "l"(db), "r"(scale_d), "n"(TB));

template <int TB, int F16>
static __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db,
                                                        int scale_d) {
    if (F16)
        FFN_GG_WGMMA("f16.f16")
    else
        FFN_GG_WGMMA("bf16.bf16")
}
#undef FFN_GG_WGMMA

// --- the kernel ----------------------------------------------------------------------------------
struct Params {
    int tiles_m, tiles_n;  // BM rows × (plain, dglu: 256 columns of C; gated: 128 columns of h)
    int group;             // tile rows per group of the walk (a multiple of the cluster size)
    int nk;                // K blocks of BK (the last one zero-filled past K by the TMA)
    int nk0;     // MODE_PLAIN: K blocks of the first pair A0·B0 (the rest: A1·B1; nk: one pair)
    int b1_off;  // rows of B1's box over B0's in a tile (plain 128: one weight; gated 0: gate, up)
    int act, accurate, parity;  // the combine (enum ffn_act; the context's accuracy and parity)
    // Gated forms whose outputs the TMA cannot store (a row stride or pointer off 16 bytes:
    // d_ff = 172, say): `direct`, and the epilogue stores h (g, u) from registers itself, bounded
    // by T rows and m columns.
    int direct, T, m;
    uint16_t *h, *g, *u;  // bf16 or f16 elements (MODE_DGLU: g, u its inputs)
    long long ldh, ldg, ldu;
    uint16_t *dg, *du;  // MODE_DGLU's outputs: [T, m] (m the columns of dh)
    long long lddg, lddu;
};

// 8 16-bit elements of row `row`, columns col.. of a [T, m] output: one 16-byte store where the 8
// lie inside and aligned, else element by element within the bounds.
static __device__ __forceinline__ void st_out8(uint16_t *base, long long ld, int row, int col,
                                               const Params &p, uint4 v) {
    if (row >= p.T || col >= p.m) return;
    uint16_t *q = base + row * ld + col;
    if (col + 8 <= p.m && (uintptr_t)q % 16 == 0) {
        *(uint4 *)q = v;
        return;
    }
    const uint16_t *e = (const uint16_t *)&v;
    for (int k = 0; k < 8 && col + k < p.m; k++) q[k] = e[k];
}

// The same 8 elements loaded (zeros outside the bounds).
static __device__ __forceinline__ uint4 ld_in8(const uint16_t *base, long long ld, int row, int col,
                                               const Params &p) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row >= p.T || col >= p.m) return v;
    const uint16_t *q = base + row * ld + col;
    if (col + 8 <= p.m && (uintptr_t)q % 16 == 0) return *(const uint4 *)q;
    uint16_t *e = (uint16_t *)&v;
    for (int k = 0; k < 8 && col + k < p.m; k++) e[k] = q[k];
    return v;
}

// Two floats rounded to the 16-bit dtype (bf16, or f16 when F16), packed as the staging holds
// them; and back.
template <int F16>
static __device__ __forceinline__ uint32_t pack2(float a, float b) {
    uint32_t r;
    if (F16) {
        const __half2 h = __floats2half2_rn(a, b);
        memcpy(&r, &h, 4);
    } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        memcpy(&r, &h, 4);
    }
    return r;
}
template <int F16>
static __device__ __forceinline__ float2 unpack2(uint32_t v) {
    if (F16) {
        __half2 h;
        memcpy(&h, &v, 4);
        return __half22float2(h);
    }
    __nv_bfloat162 h;
    memcpy(&h, &v, 4);
    return __bfloat1622float2(h);
}

// Unit u of the walk (units = tile_rows × tile_cols, `group` rows at a time, row fastest) as a
// (row, column) of units.
static __device__ __forceinline__ void unit_rc(int u, int rows, int cols, int group, int &r,
                                               int &c) {
    const int gs = group * cols, gi = u / gs, first = gi * group;
    const int n = min(rows - first, group), w = u - gi * gs;
    r = first + w % n;
    c = w / n;
}

// Whether act's math in the kernel is the 16-bit tier (every activation with an exponential or
// erf): the launchers take those only with the default accuracy and without parity (the other
// tiers read tables the kernel does not hold), so their accurate and parity paths are not
// compiled. ReLU and identity keep both flags.
static __device__ __forceinline__ constexpr bool tier16_act(int act) {
    return act != FFN_ACT_RELU && act != FFN_ACT_IDENTITY;
}

// The activation as a compile-time constant: f(act_c<A>()) for the runtime act, so that each loop
// over a tile holds one activation's math (all seven inlined in one loop are too much code for the
// instruction cache beside the consumers' loop: the backward pass ran at half its speed).
template <int A>
struct act_c {
    static constexpr int value = A;
};
template <class F>
static __device__ __forceinline__ void with_act(int act, F &&f) {
    switch (act) {
    case FFN_ACT_GELU_TANH: f(act_c<FFN_ACT_GELU_TANH>()); break;
    case FFN_ACT_GELU_ERF: f(act_c<FFN_ACT_GELU_ERF>()); break;
    case FFN_ACT_SILU: f(act_c<FFN_ACT_SILU>()); break;
    case FFN_ACT_QUICK_GELU: f(act_c<FFN_ACT_QUICK_GELU>()); break;
    case FFN_ACT_SIGMOID: f(act_c<FFN_ACT_SIGMOID>()); break;
    case FFN_ACT_RELU: f(act_c<FFN_ACT_RELU>()); break;
    default: f(act_c<FFN_ACT_IDENTITY>()); break;
    }
}

// 8 elements of op family OP (2: the gated forward, x = g, a = u: y0 = h; 3: the gated backward,
// b = dh: y0 = dg, y1 = du) from 16-bit words, the outputs rounded to the dtype. FAST: the fast
// lanes alone (inline), returning whether one of them is rare; else each element as ffn_cm_elem
// does it (the reference in a rare lane).
template <int OP, int F16, int ACT, bool FAST>
static __device__ __forceinline__ bool elem8(uint4 xv, uint4 av, uint4 bv, bool acc, bool par,
                                             uint4 &y0, uint4 &y1) {
    const uint32_t *x2 = (const uint32_t *)&xv, *a2 = (const uint32_t *)&av;
    const uint32_t *b2 = (const uint32_t *)&bv;
    const enum ffn_dtype out = F16 ? FFN_DTYPE_F16 : FFN_DTYPE_BF16;
    const enum ffn_act act = (enum ffn_act)ACT;
    uint32_t *o0 = (uint32_t *)&y0, *o1 = (uint32_t *)&y1;
    bool rare = false;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 xf = unpack2<F16>(x2[k]), af = unpack2<F16>(a2[k]);
        const float2 bf = OP == 3 ? unpack2<F16>(b2[k]) : make_float2(0.0f, 0.0f);
        float r0[2], r1[2];
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const float x = e ? xf.y : xf.x, a = e ? af.y : af.x, b = e ? bf.y : bf.x;
            if (FAST) {
                const ffn_cm_res r = ffn_cm_elem_fast(nullptr, OP, act, acc, par, out, x, a, b);
                rare |= r.rare, r0[e] = r.y0, r1[e] = r.y1;
            } else {
                const ffn_cm_out r = ffn_cm_elem(nullptr, OP, act, acc, par, out, x, a, b);
                r0[e] = r.y0, r1[e] = r.y1;
            }
        }
        o0[k] = pack2<F16>(r0[0], r0[1]);
        if (OP == 3) o1[k] = pack2<F16>(r1[0], r1[1]);
    }
    return rare;
}

// A chunk with a rare lane, out of line (one copy per form: the loops carry no reference code).
template <int OP, int F16, int ACT>
static __device__ __noinline__ void elem8_fix(uint4 xv, uint4 av, uint4 bv, bool acc, bool par,
                                              uint4 &y0, uint4 &y1) {
    elem8<OP, F16, ACT, false>(xv, av, bv, acc, par, y0, y1);
}

template <int OP, int F16, int ACT>
static __device__ __forceinline__ void elem8_all(uint4 xv, uint4 av, uint4 bv, const Params &p,
                                                 uint4 &y0, uint4 &y1) {
    const bool acc = !tier16_act(ACT) && p.accurate, par = OP == 2 && !tier16_act(ACT) && p.parity;
    if (elem8<OP, F16, ACT, true>(xv, av, bv, acc, par, y0, y1))
        elem8_fix<OP, F16, ACT>(xv, av, bv, acc, par, y0, y1);
}

// h of 8 16-bit pairs (g, u): ffn's combine element by element (act(g)·u rounded to the dtype, the
// 16-bit tier of act_math.h), or g·u (MODE_HMUL).
template <int MODE, int F16, int ACT>
static __device__ __forceinline__ uint4 h8(uint4 gv, uint4 uv, const Params &p) {
    uint4 o, unused;
    if (MODE == MODE_HMUL) {
        const uint32_t *g2 = (const uint32_t *)&gv, *u2 = (const uint32_t *)&uv;
        uint32_t *o2 = (uint32_t *)&o;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const float2 gf = unpack2<F16>(g2[k]), uf = unpack2<F16>(u2[k]);
            o2[k] = pack2<F16>(gf.x * uf.x, gf.y * uf.y);
        }
        return o;
    }
    elem8_all<2, F16, ACT>(gv, uv, gv, p, o, unused);
    return o;
}

// dg, du of 8 16-bit triples (g, u, dh): ffn's gated backward element by element (act'(g)·u·dh
// and act(g)·dh rounded to the dtype: the 16-bit tier of act_math.h, as ffn_glu_backward).
template <int F16, int ACT>
static __device__ __forceinline__ void dglu8(uint4 gv, uint4 uv, uint4 hv, const Params &p,
                                             uint4 &dg, uint4 &du) {
    elem8_all<3, F16, ACT>(gv, uv, hv, p, dg, du);
}

// The staging address of (row rr of the consumer's 64, column cc of its tile) in boxes of 64 × 64
// with the 128-byte swizzle (16-byte chunk index XOR row mod 8; boxes 1024-byte aligned).
static __device__ __forceinline__ uint32_t stg_at(uint32_t stg, int rr, int cc) {
    return stg + (cc >> 6) * 8192 + rr * 128 + ((((cc & 63) >> 3) ^ (rr & 7)) << 4) + (cc & 7) * 2;
}

// The other way round: chunk q (16 bytes, 8 columns of a row) of a staged tile read PER chunks a
// consumer half (1024: its g boxes; 2048: all four) from the start: its staging address, and its
// row and column within the tile.
template <int PER>
static __device__ __forceinline__ uint32_t stg_chunk(uint32_t stg, int q, int &row, int &col) {
    const int half = q / PER, o = (q % PER) * 16, rr = (o & 8191) >> 7;
    row = half * 64 + rr;
    col = (o >> 13) * 64 + ((((o & 127) >> 4) ^ (rr & 7)) << 3);
    return stg + half * 32768 + o;
}
static __device__ __forceinline__ void st_shared(uint32_t a, uint32_t v) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}
static __device__ __forceinline__ uint4 ld_shared4(uint32_t a) {
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(a)
                 : "memory");
    return v;
}
static __device__ __forceinline__ void st_shared4(uint32_t a, uint4 v) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

// The epilogue's backward pass over a staged dh tile (tile column tn, first row m0; thread et of
// 96), chunk by chunk (stg_chunk): g and u are loaded DB chunks at a time (their loads in flight
// together), then dg and du stored over them.
template <int F16, int ACT>
static __device__ __forceinline__ void dglu_tile(uint32_t stg, int tn, int m0, int et,
                                                 const Params &p) {
    constexpr int DB = 4, N = 4096;
    for (int q0 = et; q0 < N; q0 += 96 * DB) {
        uint4 gv[DB], uv[DB], hv[DB];
        int row[DB], col[DB];
#pragma unroll
        for (int j = 0; j < DB; j++) {
            const int q = q0 + 96 * j < N ? q0 + 96 * j : q0;  // past the end: a repeat, not stored
            hv[j] = ld_shared4(stg_chunk<2048>(stg, q, row[j], col[j]));
            row[j] += m0, col[j] += tn * BN;
            gv[j] = ld_in8(p.g, p.ldg, row[j], col[j], p);
            uv[j] = ld_in8(p.u, p.ldu, row[j], col[j], p);
        }
#pragma unroll
        for (int j = 0; j < DB; j++) {
            uint4 dg, du;
            dglu8<F16, ACT>(gv[j], uv[j], hv[j], p, dg, du);
            if (q0 + 96 * j >= N) continue;
            st_out8(p.dg, p.lddg, row[j], col[j], p, dg);
            st_out8(p.du, p.lddu, row[j], col[j], p, du);
        }
    }
}

// BT: B stored [K, N] (the plain and dglu forms: the backward's dh = dy·W_down with W_down stored
// [out, in]). F16: f16 operands and outputs instead of bf16.
template <int MODE, int CL, int BT = 0, int F16 = 0>
__global__ void __launch_bounds__(384, 1)
    k_gemm(const __grid_constant__ CUtensorMap mA, const __grid_constant__ CUtensorMap mB0,
           const __grid_constant__ CUtensorMap mB1, const __grid_constant__ CUtensorMap mC,
           const __grid_constant__ CUtensorMap mG, const __grid_constant__ CUtensorMap mU,
           const Params p) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    unsigned char *stgp = smem + STAGES * STAGE_BYTES;
    const uint32_t stg = smem_u32(stgp);
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES], stg_full, stg_free;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, w = tid / 32, lane = tid % 32;
    const uint32_t rank = CL == 2 ? cluster_rank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], CL * 8);
        }
        mbar_init(&stg_full, 256);
        mbar_init(&stg_free, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (CL == 2)
        cluster_sync();
    else
        __syncthreads();

    const int urows = p.tiles_m / CL, units = urows * p.tiles_n;
    const int first = blockIdx.x / CL, stride = gridDim.x / CL, nk = p.nk;
    if (wg == 0 && w == 0) {  // the producer
        if (lane == 0) {
            int s = 0, ph = 0;
            for (int un = first; un < units; un += stride) {
                int ur, tn;
                unit_rc(un, urows, p.tiles_n, p.group / CL, ur, tn);
                const int m0 = (ur * CL + (int)rank) * BM;
                const int nb0 = MODE == MODE_PLAIN || MODE == MODE_DGLU ? tn * BN : tn * (BN / 2);
                for (int kb = 0; kb < nk; kb++) {
                    mbar_wait(&empty[s], ph ^ 1);
                    unsigned char *st = smem + s * STAGE_BYTES;
                    mbar_expect_tx(&full[s], STAGE_BYTES);
                    // The plain form's second pair (A1·B1, from K block nk0 on): A1 in mG, B1 in
                    // mU (both boxes of a tile).
                    const bool two = MODE == MODE_PLAIN && kb >= p.nk0;
                    const int kc = (two ? kb - p.nk0 : kb) * BK;
                    const CUtensorMap *b0 = two ? &mU : &mB0, *b1 = two ? &mU : &mB1;
                    tma_load(st, two ? &mG : &mA, &full[s], kc, m0);
                    if (BT) {  // B [K, N]: four boxes of 64 N × 64 K
                        for (int j = 0; j < 4; j++)
                            tma_load(st + A_BYTES + j * 8192, b0, &full[s], nb0 + j * 64, kc);
                    } else if (CL == 1) {
                        tma_load(st + A_BYTES, b0, &full[s], kc, nb0);
                        tma_load(st + A_BYTES + B_BYTES / 2, b1, &full[s], kc, nb0 + p.b1_off);
                    } else if (rank == 0) {
                        tma_load_mc(st + A_BYTES, &mB0, &full[s], kb * BK, nb0, 3);
                    } else {
                        tma_load_mc(st + A_BYTES + B_BYTES / 2, &mB1, &full[s], kb * BK,
                                    nb0 + p.b1_off, 3);
                    }
                    if (++s == STAGES) s = 0, ph ^= 1;
                }
            }
        }
    } else if (wg == 0) {  // the epilogue: warps 1-3, 96 threads
        const int et = tid - 32;
        int ph = 0;
        for (int un = first; un < units; un += stride) {
            int ur, tn;
            unit_rc(un, urows, p.tiles_n, p.group / CL, ur, tn);
            const int m0 = (ur * CL + (int)rank) * BM;
            mbar_wait(&stg_full, ph);
            ph ^= 1;
            if (MODE == MODE_PLAIN) {
                if (et == 0) {
                    for (int c = 0; c < 2; c++)
                        for (int b = 0; b < 4; b++)
                            tma_store(&mC, stgp + c * 32768 + b * 8192, tn * BN + b * 64,
                                      m0 + c * 64);
                    bulk_commit();
                }
            } else if (MODE == MODE_DGLU) {
                with_act(p.act,
                         [&](auto A) { dglu_tile<F16, decltype(A)::value>(stg, tn, m0, et, p); });
                named_sync(1, 96);  // every thread has read the staging before it is freed
            } else if (p.direct) {
                // Chunk q of the g boxes; u's lies two boxes on, at the same position.
                with_act(p.act, [&](auto A) {
                    for (int q = et; q < 2048; q += 96) {
                        int row, col;
                        const uint32_t a = stg_chunk<1024>(stg, q, row, col);
                        row += m0, col += tn * (BN / 2);
                        const uint4 gv = ld_shared4(a), uv = ld_shared4(a + 16384);
                        if (MODE == MODE_GUH) {
                            st_out8(p.g, p.ldg, row, col, p, gv);
                            st_out8(p.u, p.ldu, row, col, p, uv);
                        }
                        st_out8(p.h, p.ldh, row, col, p,
                                h8<MODE, F16, decltype(A)::value>(gv, uv, p));
                    }
                });
                named_sync(1, 96);  // every thread has read the staging before it is freed
            } else {
                if (MODE == MODE_GUH) {  // g and u as they are, read out before h overwrites g
                    if (et == 0) {
                        for (int c = 0; c < 2; c++)
                            for (int b = 0; b < 4; b++)
                                tma_store(b < 2 ? &mG : &mU, stgp + c * 32768 + b * 8192,
                                          tn * 128 + (b & 1) * 64, m0 + c * 64);
                        bulk_commit();
                        bulk_wait_read<0>();
                    }
                    named_sync(1, 96);
                }
                // h over the g boxes, 16 bytes at a time: g's chunk and u's (two boxes on) hold
                // the same rows and columns under the same swizzle.
                with_act(p.act, [&](auto A) {
                    for (int q = et; q < 2048; q += 96) {
                        int row, col;
                        const uint32_t a = stg_chunk<1024>(stg, q, row, col);
                        st_shared4(a, h8<MODE, F16, decltype(A)::value>(ld_shared4(a),
                                                                        ld_shared4(a + 16384), p));
                    }
                });
                fence_async_smem();
                named_sync(1, 96);
                if (et == 0) {
                    for (int c = 0; c < 2; c++)
                        for (int b = 0; b < 2; b++)
                            tma_store(&mC, stgp + c * 32768 + b * 8192, tn * 128 + b * 64,
                                      m0 + c * 64);
                    bulk_commit();
                }
            }
            if (et == 0) {
                bulk_wait_read<0>();
                mbar_arrive(&stg_free);
            }
        }
        if (et == 0) bulk_wait_read<0>();
    } else {  // the consumers
        const int c = wg - 1;
        const uint32_t cstg = stg + c * 32768;
        float d[128];
        int s = 0, ph = 0, eph = 0;
        for (int un = first; un < units; un += stride) {  // the producer's tiles, in its order
            int prev = -1;
            for (int kb = 0; kb < nk; kb++) {
                mbar_wait(&full[s], ph);
                const unsigned char *st = smem + s * STAGE_BYTES;
                const unsigned char *sa = st + c * (64 * BK * 2), *sb = st + A_BYTES;
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; kk++)
                    if (BT)
                        wgmma_m64n256k16<1, F16>(d, sdesc(sa + kk * 32), sdesc_mn(sb + kk * 2048),
                                                 (kb | kk) != 0);
                    else
                        wgmma_m64n256k16<0, F16>(d, sdesc(sa + kk * 32), sdesc(sb + kk * 32),
                                                 (kb | kk) != 0);
                wg_commit();
                wg_wait<1>();
                if (prev >= 0 && lane == 0) {
                    mbar_arrive(&empty[prev]);
                    if (CL == 2) mbar_arrive_cluster(&empty[prev], rank ^ 1);
                }
                prev = s;
                if (++s == STAGES) s = 0, ph ^= 1;
            }
            wg_wait<0>();
            if (lane == 0) {
                mbar_arrive(&empty[prev]);
                if (CL == 2) mbar_arrive_cluster(&empty[prev], rank ^ 1);
            }
            // This thread holds rows rr and rr + 8 of the consumer's 64, two adjacent columns of
            // each 8-column group: into the staging once the last tile's has been read out.
            const int rr = w * 16 + (lane >> 2), cb = 2 * (lane & 3);
            mbar_wait(&stg_free, eph ^ 1);
            eph ^= 1;
#pragma unroll
            for (int i = 0; i < 32; i++)
#pragma unroll
                for (int j = 0; j < 2; j++)
                    st_shared(stg_at(cstg, rr + 8 * j, 8 * i + cb),
                              pack2<F16>(d[4 * i + 2 * j], d[4 * i + 2 * j + 1]));
            fence_async_smem();
            mbar_arrive(&stg_full);
        }
    }
    if (CL == 2) cluster_sync();
}

}  // namespace ffn_gg

#endif  // FFN_CUDA_GLU_GEMM_CUH
