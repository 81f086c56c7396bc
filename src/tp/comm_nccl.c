// comm_nccl.c — the NCCL backend of the communication seam, behind the CUDA backend: the caller's
// ncclComm_t (ffn never creates, finalises, aborts or destroys it) and a CUDA context of its
// device. Device-memory all-reduces and broadcasts are queued on the calling context's stream
// and return, as NCCL's own calls do. Host-memory calls (the agreement of collective entry
// points, plan texts) go through the optional control communicator (MPI: no wait for the GPU) or
// are staged through a small device buffer on the same stream and waited for. The library does
// not link NCCL: it calls the NCCL that made the communicator, found in the process at creation
// (nccl.h is needed at build time only). NCCL's errors, returned or asynchronous, become
// FFN_STATUS_BACKEND with NCCL's text; nothing here aborts. A build without NCCL keeps
// ffn_comm_create_nccl, which then says so (FFN_STATUS_UNSUPPORTED).
#define _GNU_SOURCE  // RTLD_DEFAULT, RTLD_NOLOAD
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/tp_impl.h"

#if defined(FFN_HAVE_NCCL) && defined(FFN_HAVE_CUDA)
#    include <dlfcn.h>
#    include <sched.h>
#    include <time.h>

#    include <cuda.h>  // driver-API types only
#    include <cuda_runtime_api.h>
#    include <nccl.h>

// The host staging buffer of control calls without a control communicator: calls larger than
// this go in pieces.
#    define FFN_NCCL_STAGE ((size_t)1 << 20)
// bf16 all-reduces need NCCL 2.10.
#    define FFN_NCCL_MIN_VERSION 21000

// The NCCL functions ffn calls, resolved in the process at creation (typed from nccl.h).
struct ffn__nccl_fns {
    __typeof__(ncclGetVersion) *get_version;
    __typeof__(ncclGetErrorString) *error_string;
    __typeof__(ncclGetLastError) *last_error;  // optional: NCCL 2.13 and later
    __typeof__(ncclCommGetAsyncError) *async_error;
    __typeof__(ncclCommCount) *count;
    __typeof__(ncclCommCuDevice) *cu_device;
    __typeof__(ncclCommUserRank) *user_rank;
    __typeof__(ncclAllReduce) *all_reduce;
    __typeof__(ncclBroadcast) *broadcast;
};

typedef CUresult (*ffn__range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);

struct ffn__nccl {
    ncclComm_t comm;  // the caller's
    struct ffn__nccl_fns f;
    void *lib;  // dlopen handle (NCCL found as libnccl.so.2), or NULL (found in the program)
    int version, device, rank;
    struct ffn_comm *control;  // the caller's host communicator, or NULL
    double timeout_s;
    // Without a control communicator: FFN_NCCL_STAGE bytes of device memory and of pinned host
    // memory (pinned: the copies stay asynchronous, so a wait can watch errors and the timeout).
    void *stage, *hstage;
    ffn__range_fn mem_range;  // cuMemGetAddressRange, or NULL
    bool broken;              // a wait timed out: the communicator must be aborted by its owner
};

static double ffn__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// --- finding NCCL ----------------------------------------------------------------------------

// Resolves the functions from the NCCL of this process: symbols the program exports (linked
// with -lnccl), else a libnccl.so.2 already loaded (RTLD_NOLOAD: never a second copy, whose
// functions could not work on the first copy's communicator).
static bool ffn__nccl_load(struct ffn__nccl *n, char *why, size_t cap) {
    void *h = RTLD_DEFAULT;
    if (!dlsym(RTLD_DEFAULT, "ncclAllReduce")) {
        (void)dlerror();
        h = n->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h) {
            snprintf(why, cap,
                     "no NCCL in this process (ffn calls the NCCL that made the communicator: "
                     "libnccl.so.2 loaded, or its functions exported by the program)");
            return false;
        }
    }
    static const struct {
        const char *name;
        size_t off;
        bool optional;
    } syms[] = {
        {"ncclGetVersion", offsetof(struct ffn__nccl_fns, get_version), false},
        {"ncclGetErrorString", offsetof(struct ffn__nccl_fns, error_string), false},
        {"ncclGetLastError", offsetof(struct ffn__nccl_fns, last_error), true},
        {"ncclCommGetAsyncError", offsetof(struct ffn__nccl_fns, async_error), false},
        {"ncclCommCount", offsetof(struct ffn__nccl_fns, count), false},
        {"ncclCommCuDevice", offsetof(struct ffn__nccl_fns, cu_device), false},
        {"ncclCommUserRank", offsetof(struct ffn__nccl_fns, user_rank), false},
        {"ncclAllReduce", offsetof(struct ffn__nccl_fns, all_reduce), false},
        {"ncclBroadcast", offsetof(struct ffn__nccl_fns, broadcast), false},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && !syms[i].optional) {
            snprintf(why, cap, "the process's NCCL lacks %s", syms[i].name);
            return false;
        }
        memcpy((char *)&n->f + syms[i].off, &p, sizeof p);  // object to function pointer (POSIX)
    }
    int v = 0;
    if (n->f.get_version(&v) != ncclSuccess || v < FFN_NCCL_MIN_VERSION) {
        // Codes before 2.9 were major·1000 + minor·100 + patch.
        snprintf(why, cap, "NCCL %d.%d is too old (2.10 or newer: bf16 all-reduces)",
                 v < 10000 ? v / 1000 : v / 10000, v < 10000 ? v / 100 % 10 : v / 100 % 100);
        return false;
    }
    n->version = v;
    return true;
}

// --- errors and waiting ----------------------------------------------------------------------

static enum ffn_status ffn__nccl_error(ffn_ctx_t ctx, const struct ffn__nccl *n, const char *what,
                                       ncclResult_t r) {
    const char *last = n->f.last_error ? n->f.last_error(n->comm) : NULL;
    return ffn_error(ctx, FFN_STATUS_BACKEND, "ffn_comm (nccl): %s: %s%s%s", what,
                     n->f.error_string(r), last && *last ? ": " : "", last ? last : "");
}

static enum ffn_status ffn__cuda_error(ffn_ctx_t ctx, const struct ffn__nccl *n, const char *what,
                                       cudaError_t e) {
    return ffn_error(ctx, FFN_STATUS_BACKEND,
                     "ffn_comm (nccl): %s failed on CUDA device %d: %s (%s)", what, n->device,
                     cudaGetErrorString(e), cudaGetErrorName(e));
}

// A call of a non-blocking communicator (ncclConfig_t.blocking = 0) may return ncclInProgress:
// it is complete on the host when ncclCommGetAsyncError no longer says so.
static ncclResult_t ffn__nccl_settle(const struct ffn__nccl *n, ncclResult_t r) {
    while (r == ncclInProgress) {
        sched_yield();
        if (n->f.async_error(n->comm, &r) != ncclSuccess) return ncclInternalError;
    }
    return r;
}

// An earlier asynchronous error of the communicator (a peer that failed, a network error).
static enum ffn_status ffn__nccl_async(ffn_ctx_t ctx, const struct ffn__nccl *n) {
    ncclResult_t a = ncclSuccess;
    const ncclResult_t r = n->f.async_error(n->comm, &a);
    if (r != ncclSuccess) return ffn__nccl_error(ctx, n, "ncclCommGetAsyncError", r);
    if (a != ncclSuccess && a != ncclInProgress)
        return ffn__nccl_error(ctx, n, "asynchronous error", a);
    return FFN_STATUS_OK;
}

// Waits for the stream, watching the communicator's asynchronous errors and the timeout.
static enum ffn_status ffn__nccl_wait(ffn_ctx_t ctx, struct ffn__nccl *n, cudaStream_t s) {
    const double t0 = ffn__now();
    for (;;) {
        const cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) return ffn__cuda_error(ctx, n, "cudaStreamQuery", e);
        const enum ffn_status st = ffn__nccl_async(ctx, n);
        if (st) return st;
        if (n->timeout_s > 0 && ffn__now() - t0 > n->timeout_s) {
            n->broken = true;
            return ffn_error(ctx, FFN_STATUS_BACKEND,
                             "ffn_comm (nccl): rank %d waited %.3g s for NCCL on CUDA device %d "
                             "(timeout_s): a rank that never joined the collective? The NCCL "
                             "communicator must now be aborted (ncclCommAbort) by its owner",
                             n->rank, n->timeout_s, n->device);
        }
        sched_yield();
    }
    return ffn__nccl_async(ctx, n);
}

// --- calls ---------------------------------------------------------------------------------------

// Checks that ctx can drive the communicator and makes its device current (*prev: to restore).
static enum ffn_status ffn__nccl_enter(ffn_ctx_t ctx, struct ffn_comm *c, int *prev) {
    struct ffn__nccl *n = c->impl;
    if (n->broken)
        return ffn_error(ctx, FFN_STATUS_BACKEND,
                         "ffn_comm (nccl): an earlier wait timed out; the communicator must be "
                         "aborted (ncclCommAbort) and made again");
    if (ctx->backend != FFN_BACKEND_CUDA)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm (nccl): the communicator works on CUDA device %d; this context "
                         "is a %s context (NCCL's calls are queued on a CUDA context's stream)",
                         n->device, ffn_backend_name(ctx->backend));
    if (ctx->device != n->device)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm (nccl): the communicator works on CUDA device %d; this context "
                         "on device %d",
                         n->device, ctx->device);
    cudaError_t e = cudaGetDevice(prev);
    if (e == cudaSuccess && *prev != n->device) e = cudaSetDevice(n->device);
    return e == cudaSuccess ? FFN_STATUS_OK : ffn__cuda_error(ctx, n, "cudaSetDevice", e);
}

static void ffn__nccl_leave(const struct ffn__nccl *n, int prev) {
    if (prev != n->device) (void)cudaSetDevice(prev);
}

// INVALID_ARG unless [p, p + bytes) is device (or managed) memory of the communicator's device,
// inside one allocation: NCCL would fault on anything else.
static enum ffn_status ffn__nccl_check_buf(ffn_ctx_t ctx, const struct ffn__nccl *n, const char *op,
                                           const void *p, size_t bytes) {
    struct cudaPointerAttributes at;
    const cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess && e != cudaErrorInvalidValue)
        return ffn__cuda_error(ctx, n, "cudaPointerGetAttributes", e);
    if (e != cudaSuccess) (void)cudaGetLastError();
    if (e != cudaSuccess || (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm (nccl): %s: buf=%p is host memory, not device memory (NCCL "
                         "reduces device buffers)",
                         op, p);
    if (at.type == cudaMemoryTypeDevice && at.device != n->device)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm (nccl): %s: buf=%p is memory of CUDA device %d; the "
                         "communicator works on device %d",
                         op, p, at.device, n->device);
    CUdeviceptr base = 0;
    size_t size = 0;
    if (n->mem_range && n->mem_range(&base, &size, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
        (uintptr_t)p + bytes > (uintptr_t)base + size)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm (nccl): %s: buf=%p holds %zu bytes to the end of its "
                         "allocation; the call needs %zu",
                         op, p, (size_t)((uintptr_t)base + size - (uintptr_t)p), bytes);
    return FFN_STATUS_OK;
}

static size_t ffn__esize(enum ffn_comm_dtype dt) {
    return dt == FFN_COMM_F32 ? 4 : dt == FFN_COMM_I64 ? 8 : 2;
}

// One NCCL collective on device memory, queued on ctx's stream: an all-reduce (root < 0) of n
// elements or a broadcast from root of n bytes.
static enum ffn_status ffn__nccl_op(ffn_ctx_t ctx, struct ffn__nccl *n, void *buf, size_t count,
                                    enum ffn_comm_dtype dtype, enum ffn_comm_op op, int64_t root) {
    static const ncclDataType_t types[] = {[FFN_COMM_F32] = ncclFloat32,
                                           [FFN_COMM_BF16] = ncclBfloat16,
                                           [FFN_COMM_I64] = ncclInt64,
                                           [FFN_COMM_F16] = ncclFloat16};
    const cudaStream_t s = (cudaStream_t)ctx->stream;
    const ncclResult_t r = root < 0
                               ? n->f.all_reduce(buf, buf, count, types[dtype],
                                                 op == FFN_COMM_SUM ? ncclSum : ncclMax, n->comm, s)
                               : n->f.broadcast(buf, buf, count, ncclInt8, (int)root, n->comm, s);
    const ncclResult_t done = ffn__nccl_settle(n, r);
    if (done != ncclSuccess)
        return ffn__nccl_error(ctx, n, root < 0 ? "ncclAllReduce" : "ncclBroadcast", done);
    return FFN_STATUS_OK;
}

// A host-memory call without a control communicator: each piece copied to the device (through
// pinned memory), reduced or broadcast there and copied back, on ctx's stream, then waited for.
static enum ffn_status ffn__nccl_staged(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                        enum ffn_comm_dtype dtype, enum ffn_comm_op op,
                                        int64_t root) {
    struct ffn__nccl *n = c->impl;
    const size_t es = root < 0 ? ffn__esize(dtype) : 1, piece = FFN_NCCL_STAGE / es * es;
    const cudaStream_t s = (cudaStream_t)ctx->stream;
    enum ffn_status st = FFN_STATUS_OK;
    for (size_t off = 0; off < bytes && !st; off += piece) {
        const size_t k = bytes - off < piece ? bytes - off : piece;
        char *h = (char *)buf + off;
        memcpy(n->hstage, h, k);
        cudaError_t e = cudaMemcpyAsync(n->stage, n->hstage, k, cudaMemcpyHostToDevice, s);
        if (e != cudaSuccess) return ffn__cuda_error(ctx, n, "cudaMemcpyAsync", e);
        st = ffn__nccl_op(ctx, n, n->stage, root < 0 ? k / es : k, dtype, op, root);
        if (st) break;
        e = cudaMemcpyAsync(n->hstage, n->stage, k, cudaMemcpyDeviceToHost, s);
        if (e != cudaSuccess) return ffn__cuda_error(ctx, n, "cudaMemcpyAsync", e);
        st = ffn__nccl_wait(ctx, n, s);
        if (!st) memcpy(h, n->hstage, k);
    }
    return st;
}

static enum ffn_status ffn__nccl_allreduce(ffn_ctx_t ctx, struct ffn_comm *c, void *buf,
                                           int64_t count, enum ffn_comm_dtype dtype,
                                           enum ffn_comm_op op, bool host) {
    struct ffn__nccl *n = c->impl;
    if (host && n->control)
        return n->control->be->allreduce(ctx, n->control, buf, count, dtype, op, true);
    if (op != FFN_COMM_SUM && (dtype == FFN_COMM_BF16 || dtype == FFN_COMM_F16))
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "ffn_comm (nccl): 16-bit floats sum only");
    int prev;
    enum ffn_status st = ffn__nccl_enter(ctx, c, &prev);
    if (st) return st;
    const size_t bytes = (size_t)count * ffn__esize(dtype);
    if (host)
        st = ffn__nccl_staged(ctx, c, buf, bytes, dtype, op, -1);
    else {
        st = ffn__nccl_check_buf(ctx, n, "ncclAllReduce", buf, bytes);
        if (!st) st = ffn__nccl_async(ctx, n);
        if (!st) st = ffn__nccl_op(ctx, n, buf, (size_t)count, dtype, op, -1);
    }
    ffn__nccl_leave(n, prev);
    return st;
}

static enum ffn_status ffn__nccl_bcast(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                       int64_t root, bool host) {
    struct ffn__nccl *n = c->impl;
    if (host && n->control)
        return n->control->be->broadcast(ctx, n->control, buf, bytes, root, true);
    int prev;
    enum ffn_status st = ffn__nccl_enter(ctx, c, &prev);
    if (st) return st;
    if (host)
        st = ffn__nccl_staged(ctx, c, buf, bytes, FFN_COMM_F32, FFN_COMM_SUM, root);
    else {
        st = ffn__nccl_check_buf(ctx, n, "ncclBroadcast", buf, bytes);
        if (!st) st = ffn__nccl_async(ctx, n);
        if (!st) st = ffn__nccl_op(ctx, n, buf, bytes, FFN_COMM_F32, FFN_COMM_SUM, root);
    }
    ffn__nccl_leave(n, prev);
    return st;
}

static enum ffn_status ffn__nccl_sync(ffn_ctx_t ctx, struct ffn_comm *c) {
    struct ffn__nccl *n = c->impl;
    int prev;
    enum ffn_status st = ffn__nccl_enter(ctx, c, &prev);
    if (st) return st;
    st = ffn__nccl_wait(ctx, n, (cudaStream_t)ctx->stream);
    ffn__nccl_leave(n, prev);
    return st;
}

static void ffn__nccl_destroy(struct ffn_comm *c) {
    struct ffn__nccl *n = c->impl;
    if (!n) return;
    if (n->stage || n->hstage) {
        int prev = n->device;
        if (cudaGetDevice(&prev) == cudaSuccess &&
            (prev == n->device || cudaSetDevice(n->device) == cudaSuccess)) {
            if (n->stage) (void)cudaFree(n->stage);  // waits for the work that may still use it
            if (n->hstage) (void)cudaFreeHost(n->hstage);
            if (prev != n->device) (void)cudaSetDevice(prev);
        }
        (void)cudaGetLastError();
    }
    if (n->lib) dlclose(n->lib);
    free(n);
    c->impl = NULL;
}

static const struct ffn_comm_backend ffn__nccl_backend = {
    .name = "nccl",
    .memory = FFN_BACKEND_CUDA,
    .act_dtypes = 1u << FFN_DTYPE_F32 | 1u << FFN_DTYPE_BF16 | 1u << FFN_DTYPE_F16,
    .allreduce = ffn__nccl_allreduce,
    .broadcast = ffn__nccl_bcast,
    .sync = ffn__nccl_sync,
    .destroy = ffn__nccl_destroy};

// --- creation ------------------------------------------------------------------------------------

enum ffn_status ffn_comm_create_nccl(ffn_ctx_t ctx, const void *nccl_comm,
                                     const struct ffn_comm_nccl_opts *opts, ffn_comm_t *comm_out) {
    static const char fn[] = "ffn_comm_create_nccl";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (comm_out) *comm_out = NULL;
    if (!nccl_comm || !comm_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: nccl_comm (a pointer to an ncclComm_t) and comm_out must not be NULL",
                         fn);
    const struct ffn_comm_nccl_opts defaults = FFN_COMM_NCCL_OPTS_INIT;
    if (!opts) opts = &defaults;
    if (opts->size < sizeof *opts)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: opts.size=%zu, expected %zu", fn,
                         opts->size, sizeof *opts);
    if (!(opts->timeout_s >= 0))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: opts.timeout_s=%g; expected ≥ 0", fn,
                         opts->timeout_s);
    if (ctx->backend != FFN_BACKEND_CUDA)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: the context runs on the %s backend; an NCCL communicator needs a "
                         "CUDA context (FFN_BACKEND_CUDA) on the communicator's device",
                         fn, ffn_backend_name(ctx->backend));
    const ncclComm_t nc = *(const ncclComm_t *)nccl_comm;
    if (!nc)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: *nccl_comm is a NULL ncclComm_t (make it with ncclCommInitRank "
                         "first)",
                         fn);
    const ffn_comm_t control = opts->control;
    if (control && control->be->memory != FFN_BACKEND_CPU)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: opts.control is a %s communicator; a host-memory one (MPI) expected",
                         fn, control->be->name);

    struct ffn_comm *c = calloc(1, sizeof *c);
    struct ffn__nccl *n = calloc(1, sizeof *n);
    if (!c || !n) {
        free(c), free(n);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    c->be = &ffn__nccl_backend;
    c->impl = n;
    n->comm = nc;
    n->device = -1;
    n->control = control;
    n->timeout_s = opts->timeout_s;
    enum ffn_status st = FFN_STATUS_OK;
    char why[256];
    int rank = -1, size = 0, dev = -1;
    ncclResult_t r = ncclSuccess;
    if (!ffn__nccl_load(n, why, sizeof why))
        st = ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: %s", fn, why);
    else if ((r = n->f.count(nc, &size)) != ncclSuccess ||
             (r = n->f.user_rank(nc, &rank)) != ncclSuccess ||
             (r = n->f.cu_device(nc, &dev)) != ncclSuccess)
        st = ffn__nccl_error(ctx, n,
                             "reading the communicator (ncclCommCount, ncclCommUserRank, "
                             "ncclCommCuDevice)",
                             r);
    else if (dev != ctx->device)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: the NCCL communicator works on CUDA device %d; the context on device "
                       "%d",
                       fn, dev, ctx->device);
    else if (control && (control->size != size || control->rank != rank))
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: opts.control is rank %" PRId64 " of %" PRId64
                       "; the NCCL communicator rank %d of %d (the same ranks, rank for rank, "
                       "expected)",
                       fn, control->rank, control->size, rank, size);
    n->device = dev;
    n->rank = rank;
    c->rank = rank;
    c->size = size;
    ffn_comm_stats_reset(c);
    if (!st) {
        // cuMemGetAddressRange, through the runtime (no link against libcuda): the buffer checks.
        void *fp = NULL;
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fp, 12000, cudaEnableDefault,
                                             &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            n->mem_range = (ffn__range_fn)fp;
        (void)cudaGetLastError();
    }
    if (!st && !control) {
        int prev;
        st = ffn__nccl_enter(ctx, c, &prev);
        if (!st) {
            cudaError_t e = cudaMalloc(&n->stage, FFN_NCCL_STAGE);
            if (e != cudaSuccess)
                n->stage = NULL;
            else if ((e = cudaMallocHost(&n->hstage, FFN_NCCL_STAGE)) != cudaSuccess)
                n->hstage = NULL;
            ffn__nccl_leave(n, prev);
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                st = ffn__cuda_error(ctx, n, "allocating the staging buffers", e);
            }
        }
    }
    if (st) {
        ffn_comm_destroy(c);
        return st;
    }
    ffn_log(ctx, 2, "ffn: NCCL %d.%d.%d communicator: rank %d of %d on CUDA device %d%s",
            n->version / 10000, n->version / 100 % 100, n->version % 100, rank, size, dev,
            control ? ", control calls over the host communicator" : "");
    *comm_out = c;
    return FFN_STATUS_OK;
}

#else  // no NCCL or no CUDA backend

enum ffn_status ffn_comm_create_nccl(ffn_ctx_t ctx, const void *nccl_comm,
                                     const struct ffn_comm_nccl_opts *opts, ffn_comm_t *comm_out) {
    (void)nccl_comm, (void)opts;
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (comm_out) *comm_out = NULL;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "ffn_comm_create_nccl: this build of ffn has no NCCL communicator (it needs "
                     "the CUDA backend and nccl.h when configured)");
}

#endif
