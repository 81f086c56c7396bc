// cuda_lt.c — cuBLASLt opened at run time (see cuda_lt.h): dlopen of libcublasLt.so.<major>, the
// CUDA toolkit's usual folders when the loader's path lacks it, one pthread_once per process.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_lt.h"

#define FFN__STR2(x) #x
#define FFN__STR(x) FFN__STR2(x)

static pthread_once_t ffn__once = PTHREAD_ONCE_INIT;
static struct ffn_lt ffn__lt;
static bool ffn__ok;
static char ffn__why[512];

static void *ffn__sym(void *h, const char *name, bool *bad) {
    void *p = dlsym(h, name);
    if (!p && !*bad) {
        *bad = true;
        snprintf(ffn__why, sizeof ffn__why, "%s has no symbol %s", ffn__lt.path, name);
    }
    return p;
}

static void ffn__load(void) {
    // The major version of the headers ffn was built with: the ABI the pointers below assume.
    static const char soname[] = "libcublasLt.so." FFN__STR(CUBLAS_VER_MAJOR);
    const char *env = getenv("FFN_CUBLASLT");
    const char *dirs[] = {"", "/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                          "/usr/lib/x86_64-linux-gnu/"};
    void *h = NULL;
    char first_err[256] = "";
    if (env && env[0]) {
        snprintf(ffn__lt.path, sizeof ffn__lt.path, "%s", env);
        h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!h) snprintf(first_err, sizeof first_err, "%s", dlerror());
    } else {
        for (size_t k = 0; k < sizeof dirs / sizeof dirs[0] && !h; k++) {
            snprintf(ffn__lt.path, sizeof ffn__lt.path, "%s%s", dirs[k], soname);
            h = dlopen(ffn__lt.path, RTLD_NOW | RTLD_LOCAL);
            if (!h && !first_err[0]) snprintf(first_err, sizeof first_err, "%s", dlerror());
        }
    }
    if (!h) {
        snprintf(ffn__why, sizeof ffn__why,
                 "cuBLASLt could not be loaded (%s%s): the FFN blocks' "
                 "GEMMs need it",
                 first_err,
                 env && env[0]
                     ? ", from $FFN_CUBLASLT"
                     : "; also tried the CUDA toolkit's lib64; $FFN_CUBLASLT names the file");
        return;
    }
    bool bad = false;
    struct ffn_lt *t = &ffn__lt;
    *(void **)&t->create = ffn__sym(h, "cublasLtCreate", &bad);
    *(void **)&t->destroy = ffn__sym(h, "cublasLtDestroy", &bad);
    *(void **)&t->version = ffn__sym(h, "cublasLtGetVersion", &bad);
    *(void **)&t->status_string = ffn__sym(h, "cublasLtGetStatusString", &bad);
    *(void **)&t->desc_create = ffn__sym(h, "cublasLtMatmulDescCreate", &bad);
    *(void **)&t->desc_destroy = ffn__sym(h, "cublasLtMatmulDescDestroy", &bad);
    *(void **)&t->desc_set = ffn__sym(h, "cublasLtMatmulDescSetAttribute", &bad);
    *(void **)&t->layout_create = ffn__sym(h, "cublasLtMatrixLayoutCreate", &bad);
    *(void **)&t->layout_destroy = ffn__sym(h, "cublasLtMatrixLayoutDestroy", &bad);
    *(void **)&t->layout_set = ffn__sym(h, "cublasLtMatrixLayoutSetAttribute", &bad);
    *(void **)&t->pref_create = ffn__sym(h, "cublasLtMatmulPreferenceCreate", &bad);
    *(void **)&t->pref_destroy = ffn__sym(h, "cublasLtMatmulPreferenceDestroy", &bad);
    *(void **)&t->pref_set = ffn__sym(h, "cublasLtMatmulPreferenceSetAttribute", &bad);
    *(void **)&t->heuristic = ffn__sym(h, "cublasLtMatmulAlgoGetHeuristic", &bad);
    *(void **)&t->algo_get = ffn__sym(h, "cublasLtMatmulAlgoConfigGetAttribute", &bad);
    *(void **)&t->matmul = ffn__sym(h, "cublasLtMatmul", &bad);
    if (bad) return;  // the handle stays open: a process loads a library once anyway
    const size_t v = t->version();
    if (v / 10000 != CUBLAS_VER_MAJOR) {
        snprintf(ffn__why, sizeof ffn__why,
                 "%s is cuBLASLt %zu.%zu; ffn was built with the "
                 "headers of cuBLASLt %d.x",
                 t->path, v / 10000, v / 100 % 100, CUBLAS_VER_MAJOR);
        return;
    }
    ffn__ok = true;
}

const struct ffn_lt *ffn_lt_get(char *why, size_t why_size) {
    pthread_once(&ffn__once, ffn__load);
    if (ffn__ok) return &ffn__lt;
    if (why && why_size) snprintf(why, why_size, "%s", ffn__why);
    return NULL;
}

const char *ffn_lt_status(const struct ffn_lt *lt, cublasStatus_t s) {
    const char *m = lt && lt->status_string ? lt->status_string(s) : NULL;
    return m ? m : "unknown cuBLAS status";
}

const char *ffn_lt_tile_name(int tile, char *buf, size_t size) {
    // CUBLASLT_MATMUL_TILE_* in the order of cublasLt.h (1 .. 35; later ones by number).
    static const char *const names[] = {
        "undefined", "8x8",    "8x16",   "16x8",   "8x32",    "16x16",   "32x8",    "8x64",
        "16x32",     "32x16",  "64x8",   "32x32",  "32x64",   "64x32",   "32x128",  "64x64",
        "128x32",    "64x128", "128x64", "64x256", "128x128", "256x64",  "64x512",  "128x256",
        "256x128",   "512x64", "64x96",  "96x64",  "96x128",  "128x160", "160x128", "192x128",
        "128x192",   "128x96", "32x256", "256x32"};
    if (tile >= 0 && tile < (int)(sizeof names / sizeof names[0]))
        snprintf(buf, size, "%s", names[tile]);
    else
        snprintf(buf, size, "tile %d", tile);
    return buf;
}

int ffn_lt_algos(double flops) {
    if (flops < FFN_LT_TUNE_FLOPS) return 1;
    const char *e = getenv("FFN_CUDA_GEMM_ALGOS");
    if (!e || !e[0]) return FFN_LT_ALGOS;
    const long v = strtol(e, NULL, 10);
    return v < 1 ? 1 : v > FFN_LT_ALGOS_MAX ? FFN_LT_ALGOS_MAX : (int)v;
}

int ffn_lt_pick(const struct ffn_lt *lt, cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                const cublasLtMatmulHeuristicResult_t *res, int n, const void *A, const void *B,
                const void *C, void *D, float beta, void *ws, size_t ws_bytes, void *stream,
                int reps, float *ms) {
    for (int k = 0; ms && k < n; k++) ms[k] = -1.0f;
    cudaStream_t s = (cudaStream_t)stream;
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    if (n < 2 || cudaStreamIsCapturing(s, &cap) != cudaSuccess ||
        cap != cudaStreamCaptureStatusNone) {
        (void)cudaGetLastError();
        return 0;
    }
    if (reps < 1) reps = 1;
    cudaEvent_t ev[2 * FFN_LT_ALGOS_MAX];
    int n_ev = 0;
    bool ran[FFN_LT_ALGOS_MAX];
    if (n > FFN_LT_ALGOS_MAX) n = FFN_LT_ALGOS_MAX;
    for (; n_ev < 2 * n; n_ev++)
        if (cudaEventCreate(&ev[n_ev]) != cudaSuccess) break;
    int best = 0;
    if (n_ev < 2 * n) goto out;
    const float alpha = 1.0f;
    // Candidates one after another: a warm-up call (first-use costs), then reps timed calls.
    for (int k = 0; k < n; k++) {
        ran[k] = res[k].state == CUBLAS_STATUS_SUCCESS && res[k].workspaceSize <= ws_bytes;
        if (ran[k])
            ran[k] = lt->matmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, D, lc, &res[k].algo,
                                ws, ws_bytes, s) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(ev[2 * k], s);
        for (int r = 0; r < reps && ran[k]; r++)
            ran[k] = lt->matmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, D, lc, &res[k].algo,
                                ws, ws_bytes, s) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(ev[2 * k + 1], s);
    }
    if (cudaEventSynchronize(ev[2 * n - 1]) != cudaSuccess) goto out;
    float bt = -1.0f;
    for (int k = 0; k < n; k++) {
        float t = 0.0f;
        if (!ran[k] || cudaEventElapsedTime(&t, ev[2 * k], ev[2 * k + 1]) != cudaSuccess) continue;
        t /= (float)reps;
        if (ms) ms[k] = t;
        if (bt < 0.0f || t < bt) bt = t, best = k;
    }
out:
    for (int k = 0; k < n_ev; k++) (void)cudaEventDestroy(ev[k]);
    (void)cudaGetLastError();
    return best;
}
