// peak.c — the arithmetic peak of this CPU for a GEMM's dtype: the rate at which its cores issue
// the multiply-add instruction oneDNN's kernels for that dtype are made of, measured on `threads`
// threads at once (so at the clock those threads get under that load). No GEMM can run faster,
// so a block's GFLOP/s over it says how much of the machine the block uses, and PyTorch's time
// against the FLOPs at this rate says what speedup any implementation could reach.
//
//   f32:  vfmadd231ps on zmm (AVX-512) or ymm (AVX2): 2 FLOPs per lane
//   bf16: tdpbf16ps (AMX-BF16: a 16 × 16 f32 tile += 16 × 32 by 32 × 16 bf16, 16,384 FLOPs),
//         else vdpbf16ps on zmm (AVX512-BF16: 16 lanes × 2 products, 64 FLOPs), else the f32 FMA
//         (bf16 widened to f32 first: the f32 peak bounds it)
//
// Each thread runs independent chains (12 accumulator registers; for AMX 4 accumulator tiles, the
// products of two pairs of operand tiles) long enough to hide the instruction's latency.
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "core/core_impl.h"
#include "tools.h"

#if defined(__x86_64__) && defined(__GNUC__)
#    include <immintrin.h>
#    include <sys/syscall.h>
#    include <unistd.h>
#    define FFN_PEAK_X86 1
#endif

#define FFN_CHAINS 12

#ifdef FFN_PEAK_X86

// n rounds of 12 independent FMAs on 512- or 256-bit vectors; the sums are returned so that no
// round can be dropped.
__attribute__((target("avx512f"))) static float ffn__fma_zmm(int64_t n) {
    __m512 a[FFN_CHAINS];
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm512_set1_ps((float)k);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm512_fmadd_ps(a[k], x, y);
    __m512 s = a[0];
    for (int k = 1; k < FFN_CHAINS; k++) s = _mm512_add_ps(s, a[k]);
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float ffn__fma_ymm(int64_t n) {
    __m256 a[FFN_CHAINS];
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm256_set1_ps((float)k);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm256_fmadd_ps(a[k], x, y);
    __m256 s = a[0];
    for (int k = 1; k < FFN_CHAINS; k++) s = _mm256_add_ps(s, a[k]);
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

__attribute__((target("avx512f,avx512bf16"))) static float ffn__dpbf16(int64_t n) {
    __m512 a[FFN_CHAINS];
    // bf16 pairs of 1/128 and 1/256: small products, no overflow over any n used here.
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3c00), y = (__m512bh)_mm512_set1_epi16(0x3b80);
    for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm512_set1_ps((float)k);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < FFN_CHAINS; k++) a[k] = _mm512_dpbf16_ps(a[k], x, y);
    __m512 s = a[0];
    for (int k = 1; k < FFN_CHAINS; k++) s = _mm512_add_ps(s, a[k]);
    return _mm512_reduce_add_ps(s);
}

// Linux hands a process the AMX tile state only when asked (arch_prctl ARCH_REQ_XCOMP_PERM for
// XTILEDATA, as oneDNN asks); false when it refuses.
static bool ffn__amx_permit(void) {
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
}

__attribute__((target("amx-tile,amx-bf16"))) static float ffn__amx(int64_t n) {
    // Palette 1: tiles 0-3 accumulators (16 rows × 64 bytes of f32), 4-7 operands (16 rows × 64
    // bytes of bf16 pairs).
    struct __attribute__((packed)) {
        uint8_t palette, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
    uint16_t src[16 * 32];  // each thread its own (the threads run this at once)
    for (int i = 0; i < 16 * 32; i++) src[i] = 0x3c00;
    float dst[4][16 * 16];
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, src, 64);
    _tile_loadd(5, src, 64);
    _tile_loadd(6, src, 64);
    _tile_loadd(7, src, 64);
    for (int64_t i = 0; i < n; i++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, dst[0], 64);
    _tile_stored(1, dst[1], 64);
    _tile_stored(2, dst[2], 64);
    _tile_stored(3, dst[3], 64);
    _tile_release();
    return dst[0][0] + dst[1][1] + dst[2][2] + dst[3][3];
}
#endif

enum ffn__peak_kind {
    FFN_PEAK_NONE,
    FFN_PEAK_FMA_YMM,
    FFN_PEAK_FMA_ZMM,
    FFN_PEAK_DPBF16,
    FFN_PEAK_AMX
};

static const struct {
    const char *name;
    double flops_per_round;  // FLOPs of one round of the kernel's loop
} ffn__peak_kinds[] = {
    [FFN_PEAK_NONE] = {"none", 0},
    [FFN_PEAK_FMA_YMM] = {"vfmadd231ps ymm", FFN_CHAINS * 8 * 2},
    [FFN_PEAK_FMA_ZMM] = {"vfmadd231ps zmm", FFN_CHAINS * 16 * 2},
    [FFN_PEAK_DPBF16] = {"vdpbf16ps zmm", FFN_CHAINS * 16 * 2 * 2},
    [FFN_PEAK_AMX] = {"tdpbf16ps", 4 * 16.0 * 16 * 32 * 2},
};

static float ffn__peak_run(enum ffn__peak_kind k, int64_t n) {
#ifdef FFN_PEAK_X86
    switch (k) {
    case FFN_PEAK_FMA_YMM: return ffn__fma_ymm(n);
    case FFN_PEAK_FMA_ZMM: return ffn__fma_zmm(n);
    case FFN_PEAK_DPBF16: return ffn__dpbf16(n);
    case FFN_PEAK_AMX: return ffn__amx(n);
    default: break;
    }
#endif
    (void)k, (void)n;
    return 0.0f;
}

static enum ffn__peak_kind ffn__peak_kind_for(enum ffn_dtype dt) {
    struct ffn_cpu_features f;
    ffn_cpu_features_detect(&f);
    enum ffn__peak_kind fma = f.avx512 ? FFN_PEAK_FMA_ZMM
                              : f.avx2 ? FFN_PEAK_FMA_YMM
                                       : FFN_PEAK_NONE;
#ifdef FFN_PEAK_X86
    if (dt == FFN_DTYPE_BF16 && f.amx_bf16 && ffn__amx_permit()) return FFN_PEAK_AMX;
#endif
    if (dt == FFN_DTYPE_BF16 && f.avx512_bf16) return FFN_PEAK_DPBF16;
    return fma;
}

double ffn_tool_peak_gflops(enum ffn_dtype dt, int threads, const char **instr) {
    const enum ffn__peak_kind k = ffn__peak_kind_for(dt);
    if (instr) *instr = ffn__peak_kinds[k].name;
    if (k == FFN_PEAK_NONE || threads < 1) return 0.0;
    // Rounds per thread: about 20 ms at the rate of a 3 GHz core (AMX: a round is 4 × 16 cycles).
    const int64_t n = k == FFN_PEAK_AMX ? 1000000 : 5000000;
    double best = 0.0;
    float sink = 0.0f;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = 0.0, t1 = 0.0;
        int ran = 1;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
#pragma omp barrier
#pragma omp single
            t0 = ffn_tool_now();
            sink += ffn__peak_run(k, n);
#pragma omp barrier
#pragma omp single
            {
                t1 = ffn_tool_now();
#ifdef _OPENMP
                ran = omp_get_num_threads();
#endif
            }
        }
        const double g = ffn__peak_kinds[k].flops_per_round * (double)n * ran / (t1 - t0) * 1e-9;
        if (g > best) best = g;
    }
    // The sums depend on every round (never 0 here): the loops cannot be elided.
    return sink != 0.0f ? best : 0.0;
}
