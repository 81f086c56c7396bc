// cuda_device.h — the calling thread's current CUDA device, switched for the length of a call and
// restored after it, and the message of a failed runtime call (host code of the CUDA backend:
// cuda_backend.c, cuda_block.c, tp/tp_dev.c). The library never leaves the caller's current device
// changed.
#ifndef FFN_CUDA_DEVICE_H
#define FFN_CUDA_DEVICE_H

#include <cuda_runtime_api.h>

#include "ffn.h"

// Makes `device` current for the calling thread; *prev receives the device to restore.
static inline cudaError_t ffn_cuda_enter(int device, int *prev) {
    const cudaError_t e = cudaGetDevice(prev);
    if (e != cudaSuccess) return e;
    return *prev == device ? cudaSuccess : cudaSetDevice(device);
}

static inline void ffn_cuda_leave(int device, int prev) {
    if (prev != device) (void)cudaSetDevice(prev);
}

// The status of runtime call `what` of public function `fn` failing with e on ctx's device, with
// the context's message set: FFN_STATUS_OUT_OF_MEMORY for cudaErrorMemoryAllocation, else
// FFN_STATUS_BACKEND with CUDA's string and name. Clears the thread's last (non-sticky) CUDA error
// so that it does not surface in a later, unrelated check. Defined in cuda_backend.c.
enum ffn_status ffn_cuda_error(ffn_ctx_t ctx, const char *fn, const char *what, cudaError_t e);

#endif
