// glu_gemm.cu — the launcher of the fused gated GEMM (glu_gemm.cuh) for the CUDA block: tensor
// maps of the operands and outputs, the persistent grid, the kernel's shared memory. Built for
// sm_90a alone (CMakeLists.txt: wgmma exists only there); other devices take the cuBLASLt path
// (ffn_cu_glu_gemm_prepare).
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

template <int MODE, int F16>
cudaError_t raise_smem() {
    return cudaFuncSetAttribute(ffn_gg::k_gemm<MODE, 1, 0, F16>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, ffn_gg::SMEM);
}

template <int MODE, int F16>
cudaError_t launch(cudaStream_t s, int grid, const CUtensorMap *maps, const ffn_gg::Params &p) {
    ffn_gg::k_gemm<MODE, 1, 0, F16>
        <<<grid, 384, ffn_gg::SMEM, s>>>(maps[0], maps[1], maps[2], maps[3], maps[4], maps[5], p);
    return cudaGetLastError();
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
    if (raise_smem<ffn_gg::MODE_H, 0>() != cudaSuccess ||
        raise_smem<ffn_gg::MODE_GUH, 0>() != cudaSuccess ||
        raise_smem<ffn_gg::MODE_H, 1>() != cudaSuccess ||
        raise_smem<ffn_gg::MODE_GUH, 1>() != cudaSuccess)
        return 0;
    return sms;
}

extern "C" int ffn_cu_glu_gemm_fits(const struct ffn_cu_glu_gemm *a) {
    const int64_t lim = (int64_t)1 << 31;
    bool ok = a->sms > 0 && a->T > 0 && a->m > 0 && a->K >= 8 && a->T < lim && a->m < lim &&
              a->K < lim && (a->T + 127) / 128 * ((a->m + 127) / 128) < lim &&
              aligned(a->x, a->ldx) && aligned(a->wg, a->ldwg) && aligned(a->wu, a->ldwu) &&
              (uintptr_t)a->h % 2 == 0;
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
    ffn_gg::Params p;
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
    const int64_t units = (int64_t)p.tiles_m * p.tiles_n;
    const int grid = (int)(units < a->sms ? units : a->sms);
    cudaStream_t s = (cudaStream_t)stream;
    if (f16)
        return (int)(keep ? launch<ffn_gg::MODE_GUH, 1>(s, grid, maps, p)
                          : launch<ffn_gg::MODE_H, 1>(s, grid, maps, p));
    return (int)(keep ? launch<ffn_gg::MODE_GUH, 0>(s, grid, maps, p)
                      : launch<ffn_gg::MODE_H, 0>(s, grid, maps, p));
}
