// cuda_device.h — the calling thread's current CUDA device, switched for the length of a call and
// restored after it (host code of the CUDA backend: cuda_backend.c, cuda_block.c, tp/tp_dev.c).
// The library never leaves the caller's current device changed.
#ifndef FFN_CUDA_DEVICE_H
#define FFN_CUDA_DEVICE_H

#include <cuda_runtime_api.h>

// Makes `device` current for the calling thread; *prev receives the device to restore.
static inline cudaError_t ffn_cuda_enter(int device, int *prev) {
    const cudaError_t e = cudaGetDevice(prev);
    if (e != cudaSuccess) return e;
    return *prev == device ? cudaSuccess : cudaSetDevice(device);
}

static inline void ffn_cuda_leave(int device, int prev) {
    if (prev != device) (void)cudaSetDevice(prev);
}

#endif
