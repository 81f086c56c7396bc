// test_cuda_fault.cu — a sticky CUDA error (an illegal address in a kernel that is not ffn's) must
// come back from ffn as FFN_STATUS_BACKEND with CUDA's words, from the next call and from
// ffn_ctx_synchronize, and never abort. The error ruins the process's CUDA context, so this runs
// alone, as its own ctest entry. Skipped (exit 77) without a CUDA device.
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "ffn.h"

__global__ void ffn_test_fault(int *p) { *p = 1; }  // p is an address nothing maps

int main() {
    ffn_check_begin("test_cuda_fault");
    char why[256];
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why))
        return ffn_check_skip("no CUDA device (%s)", why);
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA;
    ffn_ctx_t ctx = NULL;
    if (!CHECK_STATUS(ffn_ctx_create(&o, &ctx), FFN_STATUS_OK)) return ffn_check_summary();
    float *d = NULL;
    if (!CHECK(cudaMalloc((void **)&d, 2048 * sizeof(float)) == cudaSuccess))
        return ffn_check_summary();
    struct ffn_tensor x = ffn_tensor_vec(d, FFN_DTYPE_F32, 1024);
    struct ffn_tensor y = ffn_tensor_vec(d + 1024, FFN_DTYPE_F32, 1024);
    CHECK(ffn_act_forward(ctx, FFN_ACT_SILU, &y, &x) == FFN_STATUS_OK &&
              ffn_ctx_synchronize(ctx) == FFN_STATUS_OK,
          "a call before the fault: %s", ffn_ctx_last_error(ctx));
    ffn_test_fault<<<1, 1>>>((int *)0x10);
    cudaDeviceSynchronize();  // the fault happens; the error is sticky from here on
    enum ffn_status st = ffn_ctx_synchronize(ctx);
    printf("synchronize after the fault: %s: %s\n", ffn_status_string(st), ffn_ctx_last_error(ctx));
    CHECK_STATUS(st, FFN_STATUS_BACKEND, "synchronize after the fault");
    CHECK_STR_HAS(ffn_ctx_last_error(ctx), "illegal", "CUDA's words");
    st = ffn_act_forward(ctx, FFN_ACT_SILU, &y, &x);
    printf("forward after the fault: %s: %s\n", ffn_status_string(st), ffn_ctx_last_error(ctx));
    // The pointer checks or the launch meet the error: not OK, CUDA's words, never a crash
    // (BACKEND is expected; whichever runtime call meets the error first names it).
    CHECK(st != FFN_STATUS_OK &&
              (st == FFN_STATUS_BACKEND || strstr(ffn_ctx_last_error(ctx), "illegal")),
          "forward after the fault: %s", ffn_status_string(st));
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
