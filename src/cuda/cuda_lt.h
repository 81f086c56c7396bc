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

// How many of cuBLASLt's heuristic candidates a GEMM of 2·m·n·k flops is timed over (ffn_lt_pick)
// $FFN_CUDA_GEMM_ALGOS (1 = the heuristic's first, no timing), default FFN_LT_ALGOS, and 1 for a
// GEMM below FFN_LT_TUNE_FLOPS (host-bound there: the choice does not show). The default is the
// heuristic's first: on an H200 the timed choice among 8 moved the LLaMA-3-8B block's GEMMs by
// -1.3 % (sum of the nine, same run) while whole-block rows moved by more than that from run to
// run, and a timed choice can differ between processes (so can the rounding of split-K kernels).
#define FFN_LT_ALGOS 1
#define FFN_LT_ALGOS_MAX 32
#define FFN_LT_TUNE_FLOPS 1e9
int ffn_lt_algos(double flops);

// Times the n candidates res[0..n-1] of one GEMM (the heuristic's order) on the given operands:
// D = alpha·op(A)·op(B) + beta·C with the descriptors' epilogue (D may be written n·(reps + 1)
// times: pass scratch for D and C when beta ≠ 0), each once to warm up and then `reps` times, on
// `stream`, and waits for the device. Returns the index of the fastest candidate (a candidate that
// fails counts as infinitely slow), 0 when nothing could be timed (a stream under capture: no
// wait is allowed there, or n < 2). ms (n entries, may be NULL) receives each candidate's mean
// milliseconds (-1 for one that failed or was not timed).
int ffn_lt_pick(const struct ffn_lt *lt, cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                const cublasLtMatmulHeuristicResult_t *res, int n, const void *A, const void *B,
                const void *C, void *D, float beta, void *ws, size_t ws_bytes, void *stream,
                int reps, float *ms);

// "256x128" for a CUBLASLT_MATMUL_TILE_* value, "tile 47" for one this table lacks.
const char *ffn_lt_tile_name(int tile, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif  // FFN_CUDA_LT_H
