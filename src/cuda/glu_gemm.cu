// glu_gemm.cu — the launchers of the fused gated GEMM (glu_gemm.cuh) for the CUDA block: the
// forward with its combine, the backward's dh with dg and du, and the plain two-product form
// (dx): tensor maps of the operands and outputs, the persistent grid, the kernels' shared memory.
// Built for sm_90a alone (CMakeLists.txt: wgmma exists only there); other devices take the
// cuBLASLt path (ffn_cu_glu_gemm_prepare).
#include <cuda.h>
#include <cuda_runtime.h>

#include "cuda/cuda_block.h"
#include "cuda/glu_gemm.cuh"

namespace {

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                              const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                              const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled through the runtime's driver entry point (libffn links no libcuda);
// looked up once (a function-local static: initialised once, whatever the threads).
encode_fn lookup() {
    void *fp = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fp, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        return NULL;
    return (encode_fn)fp;
}
encode_fn encoder() {
    static const encode_fn fn = lookup();
    return fn;
}

// A 16-bit matrix (bf16, or f16 when f16) of `rows` × `cols` (row stride ld elements) in boxes of
// 64 columns × box_rows, 128-byte swizzle (the kernel's shared-memory layout).
bool tmap(encode_fn enc, bool f16, CUtensorMap *m, const void *base, int64_t rows, int64_t cols,
          int64_t ld, int box_rows) {
    const cuuint64_t dim[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t str[1] = {(cuuint64_t)ld * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)box_rows}, es[2] = {1, 1};
    return enc(m, f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
               (void *)base, dim, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool aligned(const void *p, int64_t ld) { return (uintptr_t)p % 16 == 0 && ld % 8 == 0; }

template <int MODE, int BT, int F16>
cudaError_t raise_smem() {
    return cudaFuncSetAttribute(ffn_gg::k_gemm<MODE, 1, BT, F16>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, ffn_gg::SMEM);
}

template <int MODE, int BT, int F16>
cudaError_t launch(cudaStream_t s, int grid, const CUtensorMap *maps, const ffn_gg::Params &p) {
    ffn_gg::k_gemm<MODE, 1, BT, F16>
        <<<grid, 384, ffn_gg::SMEM, s>>>(maps[0], maps[1], maps[2], maps[3], maps[4], maps[5], p);
    return cudaGetLastError();
}

// Form MODE with B stored [K, N] (kn) or [N, K] and 16-bit dtype (f16) picked at run time.
template <int MODE>
cudaError_t launch_any(cudaStream_t s, bool kn, bool f16, int grid, const CUtensorMap *maps,
                       const ffn_gg::Params &p) {
    if (f16)
        return kn ? launch<MODE, 1, 1>(s, grid, maps, p) : launch<MODE, 0, 1>(s, grid, maps, p);
    return kn ? launch<MODE, 1, 0>(s, grid, maps, p) : launch<MODE, 0, 0>(s, grid, maps, p);
}

// Every form the library launches, for both dtypes (and both weight orientations of the dh GEMM).
template <int F16>
cudaError_t raise_all() {
    cudaError_t e;
    if ((e = raise_smem<ffn_gg::MODE_H, 0, F16>()) != cudaSuccess ||
        (e = raise_smem<ffn_gg::MODE_GUH, 0, F16>()) != cudaSuccess ||
        (e = raise_smem<ffn_gg::MODE_DGLU, 0, F16>()) != cudaSuccess ||
        (e = raise_smem<ffn_gg::MODE_DGLU, 1, F16>()) != cudaSuccess ||
        (e = raise_smem<ffn_gg::MODE_PLAIN, 0, F16>()) != cudaSuccess)
        return e;
    return raise_smem<ffn_gg::MODE_PLAIN, 1, F16>();
}

// The 128 × 256 tiles of an M × N output (the plain and dh forms' units of work).
int64_t tiles(int64_t M, int64_t N) {
    return (M + ffn_gg::BM - 1) / ffn_gg::BM * ((N + ffn_gg::BN - 1) / ffn_gg::BN);
}

// The persistent grid over a launch's units of work: one CTA an SM, fewer for fewer units.
int grid_of(const ffn_gg::Params &p, int sms) {
    const int64_t units = (int64_t)p.tiles_m * p.tiles_n;
    return (int)(units < sms ? units : sms);
}

}  // namespace

extern "C" int ffn_cu_glu_gemm_prepare(void) {
    int dev, major, minor, sms;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        major != 9 || minor != 0 || !encoder())
        return 0;
    // Per device and function, kept for the process: set here rather than at every launch.
    if (raise_all<0>() != cudaSuccess || raise_all<1>() != cudaSuccess) return 0;
    return sms;
}

// The kernel's element math: the 16-bit tier for activations with an exponential or erf (the
// default accuracy without parity; the other tiers read tables the kernel does not hold).
static bool math_ok(int act, int accurate, int parity) {
    return act == FFN_ACT_RELU || act == FFN_ACT_IDENTITY || (!accurate && !parity);
}

extern "C" int ffn_cu_glu_gemm_fits(const struct ffn_cu_glu_gemm *a) {
    const int64_t lim = (int64_t)1 << 31;
    bool ok = math_ok(a->act, a->accurate, a->parity) && a->sms > 0 && a->T > 0 && a->m > 0 &&
              a->K >= 8 && a->T < lim && a->m < lim && a->K < lim &&
              (a->T + 127) / 128 * ((a->m + 127) / 128) < lim && aligned(a->x, a->ldx) &&
              aligned(a->wg, a->ldwg) && aligned(a->wu, a->ldwu) && (uintptr_t)a->h % 2 == 0;
    if (a->g) ok = ok && (uintptr_t)a->g % 2 == 0 && (uintptr_t)a->u % 2 == 0;
    return ok;
}

extern "C" int ffn_cu_glu_gemm_launch(void *stream, const struct ffn_cu_glu_gemm *a) {
    const encode_fn enc = encoder();
    if (!enc || !ffn_cu_glu_gemm_fits(a)) return (int)cudaErrorInvalidValue;
    const bool f16 = a->f16 != 0;
    CUtensorMap maps[6];
    const bool keep = a->g != NULL;
    // Outputs the TMA cannot store (a row stride or pointer off 16 bytes) are stored by the
    // epilogue itself; their maps are then unused (x's stands in).
    const bool direct =
        !aligned(a->h, a->ldh) || (keep && !(aligned(a->g, a->ldg) && aligned(a->u, a->ldu)));
    if (!tmap(enc, f16, &maps[0], a->x, a->T, a->K, a->ldx, ffn_gg::BM) ||
        !tmap(enc, f16, &maps[1], a->wg, a->m, a->K, a->ldwg, 128) ||
        !tmap(enc, f16, &maps[2], a->wu, a->m, a->K, a->ldwu, 128))
        return (int)cudaErrorInvalidValue;
    if (direct) {
        maps[3] = maps[4] = maps[5] = maps[0];
    } else if (!tmap(enc, f16, &maps[3], a->h, a->T, a->m, a->ldh, 64) ||
               !tmap(enc, f16, &maps[4], keep ? a->g : a->h, a->T, a->m, keep ? a->ldg : a->ldh,
                     64) ||
               !tmap(enc, f16, &maps[5], keep ? a->u : a->h, a->T, a->m, keep ? a->ldu : a->ldh,
                     64)) {
        return (int)cudaErrorInvalidValue;
    }
    ffn_gg::Params p = {};
    p.tiles_m = (int)((a->T + ffn_gg::BM - 1) / ffn_gg::BM);
    p.tiles_n = (int)((a->m + ffn_gg::BN / 2 - 1) / (ffn_gg::BN / 2));  // 128 columns of h a tile
    p.group = 16;
    p.nk = (int)((a->K + ffn_gg::BK - 1) / ffn_gg::BK);
    p.b1_off = 0;
    p.act = a->act;
    p.accurate = a->accurate;
    p.parity = a->parity;
    p.direct = direct;
    p.T = (int)a->T;
    p.m = (int)a->m;
    p.h = (uint16_t *)a->h;
    p.g = (uint16_t *)a->g;
    p.u = (uint16_t *)a->u;
    p.ldh = a->ldh;
    p.ldg = a->ldg;
    p.ldu = a->ldu;
    const int grid = grid_of(p, a->sms);
    cudaStream_t s = (cudaStream_t)stream;
    if (f16)
        return (int)(keep ? launch<ffn_gg::MODE_GUH, 0, 1>(s, grid, maps, p)
                          : launch<ffn_gg::MODE_H, 0, 1>(s, grid, maps, p));
    return (int)(keep ? launch<ffn_gg::MODE_GUH, 0, 0>(s, grid, maps, p)
                      : launch<ffn_gg::MODE_H, 0, 0>(s, grid, maps, p));
}

extern "C" int ffn_cu_dglu_gemm_fits(const struct ffn_cu_dglu_gemm *a) {
    const int64_t lim = (int64_t)1 << 31;
    return math_ok(a->act, a->accurate, 0) && a->sms > 0 && a->T > 0 && a->m > 0 && a->K >= 8 &&
           a->T < lim && a->m < lim && a->K < lim && tiles(a->T, a->m) < lim &&
           aligned(a->dy, a->lddy) && aligned(a->w, a->ldw) && (uintptr_t)a->g % 2 == 0 &&
           (uintptr_t)a->u % 2 == 0 && (uintptr_t)a->dg % 2 == 0 && (uintptr_t)a->du % 2 == 0;
}

// The weight maps of a [K, N] operand (kn: four boxes of 64 columns × 64 K rows a stage) or an
// [N, K] one (boxes of 128 rows).
static bool wmap(encode_fn enc, bool f16, bool kn, CUtensorMap *m, const void *w, int64_t N,
                 int64_t K, int64_t ld) {
    return kn ? tmap(enc, f16, m, w, K, N, ld, 64) : tmap(enc, f16, m, w, N, K, ld, 128);
}

extern "C" int ffn_cu_dglu_gemm_launch(void *stream, const struct ffn_cu_dglu_gemm *a) {
    const encode_fn enc = encoder();
    if (!enc || !ffn_cu_dglu_gemm_fits(a)) return (int)cudaErrorInvalidValue;
    const bool f16 = a->f16 != 0, kn = a->w_kn != 0;
    CUtensorMap maps[6];
    if (!tmap(enc, f16, &maps[0], a->dy, a->T, a->K, a->lddy, ffn_gg::BM) ||
        !wmap(enc, f16, kn, &maps[1], a->w, a->m, a->K, a->ldw))
        return (int)cudaErrorInvalidValue;
    maps[2] = maps[1];
    maps[3] = maps[4] = maps[5] = maps[0];  // unused: the epilogue stores dg, du itself
    ffn_gg::Params p = {};
    p.tiles_m = (int)((a->T + ffn_gg::BM - 1) / ffn_gg::BM);
    p.tiles_n = (int)((a->m + ffn_gg::BN - 1) / ffn_gg::BN);
    p.group = 16;
    p.nk = (int)((a->K + ffn_gg::BK - 1) / ffn_gg::BK);
    p.b1_off = ffn_gg::BN / 2;
    p.act = a->act;
    p.accurate = a->accurate;
    p.T = (int)a->T;
    p.m = (int)a->m;
    p.g = (uint16_t *)a->g;
    p.u = (uint16_t *)a->u;
    p.ldg = a->ldg;
    p.ldu = a->ldu;
    p.dg = (uint16_t *)a->dg;
    p.du = (uint16_t *)a->du;
    p.lddg = a->lddg;
    p.lddu = a->lddu;
    return (int)launch_any<ffn_gg::MODE_DGLU>((cudaStream_t)stream, kn, f16, grid_of(p, a->sms),
                                              maps, p);
}

extern "C" int ffn_cu_gemm_pair_fits(const struct ffn_cu_gemm_pair *a) {
    const int64_t lim = (int64_t)1 << 31;
    const bool two = a->a1 != NULL;
    bool ok = a->sms > 0 && a->M > 0 && a->N > 0 && a->K0 >= 8 && a->M < lim && a->N < lim &&
              a->K0 < lim && tiles(a->M, a->N) < lim && aligned(a->a0, a->lda0) &&
              aligned(a->b0, a->ldb0) && aligned(a->c, a->ldc);
    if (two)
        ok = ok && a->K1 >= 8 && a->K1 < lim && aligned(a->a1, a->lda1) && aligned(a->b1, a->ldb1);
    return ok;
}

extern "C" int ffn_cu_gemm_pair_launch(void *stream, const struct ffn_cu_gemm_pair *a) {
    const encode_fn enc = encoder();
    if (!enc || !ffn_cu_gemm_pair_fits(a)) return (int)cudaErrorInvalidValue;
    const bool f16 = a->f16 != 0, kn = a->b_kn != 0, two = a->a1 != NULL;
    // A0, B0 (twice: the [N, K] form's two boxes), C, then A1 and B1 in the slots of g and u.
    CUtensorMap maps[6];
    if (!tmap(enc, f16, &maps[0], a->a0, a->M, a->K0, a->lda0, ffn_gg::BM) ||
        !wmap(enc, f16, kn, &maps[1], a->b0, a->N, a->K0, a->ldb0) ||
        !tmap(enc, f16, &maps[3], a->c, a->M, a->N, a->ldc, 64))
        return (int)cudaErrorInvalidValue;
    maps[2] = maps[1];
    if (two) {
        if (!tmap(enc, f16, &maps[4], a->a1, a->M, a->K1, a->lda1, ffn_gg::BM) ||
            !wmap(enc, f16, kn, &maps[5], a->b1, a->N, a->K1, a->ldb1))
            return (int)cudaErrorInvalidValue;
    } else {
        maps[4] = maps[0], maps[5] = maps[1];
    }
    ffn_gg::Params p = {};
    p.tiles_m = (int)((a->M + ffn_gg::BM - 1) / ffn_gg::BM);
    p.tiles_n = (int)((a->N + ffn_gg::BN - 1) / ffn_gg::BN);
    p.group = 16;
    p.nk0 = (int)((a->K0 + ffn_gg::BK - 1) / ffn_gg::BK);
    p.nk = p.nk0 + (two ? (int)((a->K1 + ffn_gg::BK - 1) / ffn_gg::BK) : 0);
    p.b1_off = ffn_gg::BN / 2;
    return (int)launch_any<ffn_gg::MODE_PLAIN>((cudaStream_t)stream, kn, f16, grid_of(p, a->sms),
                                               maps, p);
}
