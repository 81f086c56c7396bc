// tp_dev.c — the few operations a tensor-parallel block does on its activations besides the
// local block and the all-reduce (pack a strided y for the reduce, add b_down after it, sum dy
// over the tokens for b_down's gradient, zero a gradient), on the context's backend: host loops
// on the CPU; on CUDA, runtime calls and the kernels of src/cuda/tp_kernels.cu queued on the
// context's stream, with the calling thread's device restored and nothing waited for. The
// pointers the GPU path touches are checked first: a bad pointer is an error, not a fault.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tp/tp_impl.h"

#ifdef FFN_HAVE_CUDA
#    include <cuda.h>  // driver-API types only
#    include <cuda_runtime_api.h>

#    include "cuda/cuda_device.h"
#    include "cuda/tp_cuda.h"
#endif

struct ffn_tp_mem ffn_tp_mem_of(ffn_ctx_t ctx) {
    const struct ffn_tp_mem m = {ctx->backend, ctx->device};
    return m;
}

enum ffn_status ffn_tp_mem_alloc(ffn_ctx_t ctx, const char *fn, size_t bytes, void **out) {
    *out = NULL;
    if (!bytes) return FFN_STATUS_OK;
#ifdef FFN_HAVE_CUDA
    if (ctx->backend == FFN_BACKEND_CUDA) {
        int prev;
        cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
        if (e == cudaSuccess) {
            e = cudaMalloc(out, bytes);
            ffn_cuda_leave(ctx->device, prev);
        }
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            *out = NULL;
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                             "%s: out of device memory for %zu bytes on CUDA device %d", fn, bytes,
                             ctx->device);
        }
        if (e != cudaSuccess) {
            *out = NULL;
            return ffn_cuda_error(ctx, fn, "cudaMalloc", e);
        }
        return FFN_STATUS_OK;
    }
#endif
    *out = malloc(bytes);
    if (!*out) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    return FFN_STATUS_OK;
}

void ffn_tp_mem_free(struct ffn_tp_mem where, void *p) {
    if (!p) return;
#ifdef FFN_HAVE_CUDA
    if (where.backend == FFN_BACKEND_CUDA) {
        int prev;
        if (ffn_cuda_enter(where.device, &prev) == cudaSuccess) {
            (void)cudaFree(p);  // waits for the work that may still use it
            ffn_cuda_leave(where.device, prev);
        }
        (void)cudaGetLastError();
        return;
    }
#endif
    free(p);
}

bool ffn_tp_mem_is_device(ffn_ctx_t ctx, const void *p) {
#ifdef FFN_HAVE_CUDA
    struct cudaPointerAttributes at;
    if (!p || ctx->backend != FFN_BACKEND_CUDA) return false;  // a CPU context never starts CUDA
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();  // plain host memory on drivers that say so by an error
        return false;
    }
    return at.type == cudaMemoryTypeDevice;
#else
    (void)ctx, (void)p;
    return false;
#endif
}

enum ffn_status ffn_tp_mem_check(ffn_ctx_t ctx, const char *fn, const char *name, const void *p,
                                 size_t bytes) {
#ifdef FFN_HAVE_CUDA
    if (ctx->backend != FFN_BACKEND_CUDA) return FFN_STATUS_OK;
    if (!p) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s is NULL", fn, name);
    struct cudaPointerAttributes at;
    const cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess && e != cudaErrorInvalidValue)  // a sticky error of earlier work
        return ffn_cuda_error(ctx, fn, "cudaPointerGetAttributes", e);
    if (e != cudaSuccess) (void)cudaGetLastError();
    if (e != cudaSuccess || at.type == cudaMemoryTypeUnregistered || at.type == cudaMemoryTypeHost)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s=%p is host memory, not device memory: a CUDA context takes device "
                         "pointers",
                         fn, name, p);
    if (at.type == cudaMemoryTypeDevice && at.device != ctx->device)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s=%p is memory of CUDA device %d; this context runs on device %d",
                         fn, name, p, at.device, ctx->device);
    // The allocation's extent (cuMemGetAddressRange, through the runtime: no link against
    // libcuda), where the driver can tell.
    typedef CUresult (*range_fn)(CUdeviceptr * base, size_t * size, CUdeviceptr ptr);
    void *fp = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fp, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess ||
        ((range_fn)fp)(&base, &size, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) {
        (void)cudaGetLastError();
        return FFN_STATUS_OK;
    }
    const uintptr_t end = (uintptr_t)base + size;
    if ((uintptr_t)p + bytes > end)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s needs %zu bytes from %p; its allocation ends %zu bytes after it",
                         fn, name, bytes, p, (size_t)(end - (uintptr_t)p));
    return FFN_STATUS_OK;
#else
    (void)ctx, (void)fn, (void)name, (void)p, (void)bytes;
    return FFN_STATUS_OK;
#endif
}

enum ffn_status ffn_tp_mem_zero(ffn_ctx_t ctx, const char *fn, void *p, size_t bytes) {
    if (!bytes) return FFN_STATUS_OK;
#ifdef FFN_HAVE_CUDA
    if (ctx->backend == FFN_BACKEND_CUDA) {
        int prev;
        cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
        if (e == cudaSuccess) {
            e = cudaMemsetAsync(p, 0, bytes, (cudaStream_t)ctx->stream);
            ffn_cuda_leave(ctx->device, prev);
        }
        return e == cudaSuccess ? FFN_STATUS_OK : ffn_cuda_error(ctx, fn, "cudaMemsetAsync", e);
    }
#endif
    (void)fn;
    memset(p, 0, bytes);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_mem_copy_rows(ffn_ctx_t ctx, const char *fn, void *dst, size_t dst_stride,
                                     const void *src, size_t src_stride, int64_t rows,
                                     size_t row_bytes) {
    if (rows <= 0 || !row_bytes) return FFN_STATUS_OK;
#ifdef FFN_HAVE_CUDA
    if (ctx->backend == FFN_BACKEND_CUDA) {
        int prev;
        cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
        if (e == cudaSuccess) {
            e = cudaMemcpy2DAsync(dst, dst_stride, src, src_stride, row_bytes, (size_t)rows,
                                  cudaMemcpyDeviceToDevice, (cudaStream_t)ctx->stream);
            ffn_cuda_leave(ctx->device, prev);
        }
        return e == cudaSuccess ? FFN_STATUS_OK : ffn_cuda_error(ctx, fn, "cudaMemcpy2DAsync", e);
    }
#endif
    (void)fn;
    for (int64_t r = 0; r < rows; r++)
        memcpy((char *)dst + (size_t)r * dst_stride, (const char *)src + (size_t)r * src_stride,
               row_bytes);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_bias_add(ffn_ctx_t ctx, const char *fn, const struct ffn_tensor *y,
                                const float *b) {
    if (y->rows <= 0 || y->cols <= 0) return FFN_STATUS_OK;
    const int64_t stride = y->rows > 1 ? y->row_stride : y->cols;
#ifdef FFN_HAVE_CUDA
    if (ctx->backend == FFN_BACKEND_CUDA) {
        int prev;
        cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
        if (e == cudaSuccess) {
            e = (cudaError_t)ffn_cuda_tp_bias_add(y->data, (int)y->dtype, y->rows, y->cols, stride,
                                                  b, ctx->stream);
            ffn_cuda_leave(ctx->device, prev);
        }
        return e == cudaSuccess ? FFN_STATUS_OK : ffn_cuda_error(ctx, fn, "the bias kernel", e);
    }
#endif
    if (y->dtype != FFN_DTYPE_F32)  // the CPU's communicator reduces f32 only
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: y is %s on the CPU", fn,
                         ffn_dtype_name(y->dtype));
    float *p = y->data;
    for (int64_t r = 0; r < y->rows; r++)
        for (int64_t j = 0; j < y->cols; j++) p[r * stride + j] += b[j];
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_colsum(ffn_ctx_t ctx, const char *fn, void *g, enum ffn_dtype g_dtype,
                              bool accumulate, const struct ffn_tensor *dy, void **scratch,
                              size_t *scratch_cap) {
    const int64_t rows = dy->rows, d = dy->cols;
    const int64_t stride = rows > 1 ? dy->row_stride : d;
#ifdef FFN_HAVE_CUDA
    if (ctx->backend == FFN_BACKEND_CUDA) {
        // Partial sums of row chunks in double, then their sum in a fixed order: the same bits
        // on every rank (no atomics), whatever the timing.
        const int64_t chunks = ffn_cuda_tp_colsum_chunks(rows, d);
        const size_t need = (size_t)chunks * (size_t)d * sizeof(double);
        if (need > *scratch_cap) {
            ffn_tp_mem_free(ffn_tp_mem_of(ctx), *scratch);
            *scratch = NULL, *scratch_cap = 0;
            const enum ffn_status st = ffn_tp_mem_alloc(ctx, fn, need, scratch);
            if (st) return st;
            *scratch_cap = need;
        }
        int prev;
        cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
        if (e == cudaSuccess) {
            e = (cudaError_t)ffn_cuda_tp_colsum(g, (int)g_dtype, accumulate, dy->data,
                                                (int)dy->dtype, rows, d, stride, *scratch, chunks,
                                                ctx->stream);
            ffn_cuda_leave(ctx->device, prev);
        }
        return e == cudaSuccess ? FFN_STATUS_OK
                                : ffn_cuda_error(ctx, fn, "the column-sum kernel", e);
    }
#endif
    (void)scratch, (void)scratch_cap;
    if (dy->dtype != FFN_DTYPE_F32)
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: dy is %s on the CPU", fn,
                         ffn_dtype_name(dy->dtype));
    const float *q = dy->data;
    if (g_dtype == FFN_DTYPE_F32) {
        float *gb = g;
        for (int64_t j = 0; j < d; j++) {
            double s = 0.0;
            for (int64_t r = 0; r < rows; r++) s += q[r * stride + j];
            gb[j] = accumulate ? gb[j] + (float)s : (float)s;
        }
        return FFN_STATUS_OK;
    }
    // A 16-bit gradient: the f32 value as above, rounded once by the library's conversion.
    float *t = malloc((size_t)d * sizeof *t);
    if (!t) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    const struct ffn_tensor tg = ffn_tensor_vec(g, g_dtype, d),
                            tf = ffn_tensor_vec(t, FFN_DTYPE_F32, d);
    enum ffn_status st = accumulate ? ffn_tensor_convert(ctx, &tf, &tg) : FFN_STATUS_OK;
    for (int64_t j = 0; j < d && !st; j++) {
        double s = 0.0;
        for (int64_t r = 0; r < rows; r++) s += q[r * stride + j];
        t[j] = accumulate ? t[j] + (float)s : (float)s;
    }
    if (!st) st = ffn_tensor_convert(ctx, &tg, &tf);
    free(t);
    return st;
}
