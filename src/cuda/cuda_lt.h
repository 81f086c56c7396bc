// cuda_lt.h — cuBLASLt, loaded at run time. libffn links only the CUDA runtime (statically) and
// needs nothing but the driver for its element-wise kernels; the FFN blocks' GEMMs need cuBLASLt,
// which is opened with dlopen at the first CUDA block (libcublasLt.so.<major of the headers ffn
// was built with>; $FFN_CUBLASLT names another file). Without it a CUDA block is refused with
// FFN_STATUS_UNSUPPORTED and the loader's words. Shared by the library (cuda_block.c) and the
// tool's GPU block benchmark (tools/cuda/), which times the same GEMMs alone. Never installed.
#ifndef FFN_CUDA_LT_H
#define FFN_CUDA_LT_H

#include <stdbool.h>
#include <stddef.h>

#include <cublasLt.h>

#ifdef __cplusplus
extern "C" {
#endif

// The entry points ffn uses, as pointers into the loaded library.
struct ffn_lt {
    __typeof__(&cublasLtCreate) create;
    __typeof__(&cublasLtDestroy) destroy;
    __typeof__(&cublasLtGetVersion) version;
    __typeof__(&cublasLtGetStatusString) status_string;
    __typeof__(&cublasLtMatmulDescCreate) desc_create;
    __typeof__(&cublasLtMatmulDescDestroy) desc_destroy;
    __typeof__(&cublasLtMatmulDescSetAttribute) desc_set;
    __typeof__(&cublasLtMatrixLayoutCreate) layout_create;
    __typeof__(&cublasLtMatrixLayoutDestroy) layout_destroy;
    __typeof__(&cublasLtMatrixLayoutSetAttribute) layout_set;
    __typeof__(&cublasLtMatmulPreferenceCreate) pref_create;
    __typeof__(&cublasLtMatmulPreferenceDestroy) pref_destroy;
    __typeof__(&cublasLtMatmulPreferenceSetAttribute) pref_set;
    __typeof__(&cublasLtMatmulAlgoGetHeuristic) heuristic;
    __typeof__(&cublasLtMatmulAlgoConfigGetAttribute) algo_get;
    __typeof__(&cublasLtMatmul) matmul;
    char path[256];  // the file that was opened
};

// The loaded library (once per process; thread-safe), or NULL with the reason in why.
const struct ffn_lt *ffn_lt_get(char *why, size_t why_size);

// "CUBLAS_STATUS_NOT_SUPPORTED" and the like (the library's own words when it is loaded).
const char *ffn_lt_status(const struct ffn_lt *lt, cublasStatus_t s);

// "256x128" for a CUBLASLT_MATMUL_TILE_* value, "tile 47" for one this table lacks.
const char *ffn_lt_tile_name(int tile, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif  // FFN_CUDA_LT_H
