// cuda_backend.c — the CUDA backend (FFN_BACKEND_CUDA): its ffn_backend_i table. A context holds a
// device ordinal, a stream (the caller's; NULL = the default stream) and the device's properties;
// an element-wise call checks that every view is memory the device can reach and lies inside its
// allocation, then queues one kernel (ew_kernel.cuh) on the stream and returns. Every runtime
// call is checked: CUDA's own words come back in the context's message with FFN_STATUS_BACKEND
// (FFN_STATUS_OUT_OF_MEMORY when device memory ran out; ffn_cuda_error); nothing here aborts,
// prints or synchronizes behind the caller's back, and the calling thread's current device is
// left as it was.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>  // driver-API types only: cuMemGetAddressRange comes through the runtime
#include <cuda_runtime_api.h>

#include "core/core_impl.h"
#include "cuda/act_math.h"  // ffn_cm_tier16_on
#include "cuda/cuda_device.h"
#include "cuda/cuda_impl.h"

// Compute capability the kernels are built for (sm_90 code, compute_90 PTX for newer parts).
#define FFN_CUDA_MIN_MAJOR 9

typedef CUresult (*ffn__mem_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);

// Elements from which an accurate-tier 16-bit forward goes through its lookup table (lut.cu): the
// table's copy into every SM's shared memory (132 × 128 KiB from L2, ~3 µs) must be small beside
// the call: at 2^23 bf16 elements the reference's double math takes far longer than the table's
// ~7 µs + 3 µs (the default tier's math, measured then, 0.60 of a copy at 16M elements where the
// table read 0.90 at 117M).
// $FFN_CUDA_LUT=0 turns the tables off, =N uses them from N elements on (1: always; tests).
#define FFN_CUDA_LUT_MIN ((int64_t)1 << 23)

struct ffn_cuda_state {
    int sm_count;
    int cc_major, cc_minor;
    int l2_bytes;
    char name[256];
    ffn__mem_range_fn mem_range;                                    // cuMemGetAddressRange, or NULL
    int occupancy[FFN_CUDA_K_COUNT][FFN_KOP_COUNT][FFN_ACT_COUNT];  // blocks per SM; 0: not asked
    // Lookup tables of the accurate tier's 16-bit forwards, built at first use:
    // [act][in f16][out f16].
    uint16_t *lut[FFN_ACT_COUNT][2][2];
    cudaStream_t lut_stream;  // where they are built (the context's own; NULL until needed)
    int64_t lut_min;          // elements from which a call uses its table
    bool no_flat;             // $FFN_CUDA_FLAT=0: the generic kernel for every layout (tests)
    int flat_threads;         // threads per block of the flat kernel ($FFN_CUDA_BLOCK)
    int flat_u, flat_w;       // $FFN_CUDA_FLAT_FORM=U,W for every call (0: the rule's)
    int64_t flat_blocks;      // $FFN_CUDA_FLAT_BLOCKS: most blocks of a looping grid (tests)
    // Blocks per SM of the flat kernels, [views of rows][log2 u][kind][op][act] (0: not asked).
    int flat_occ[2][3][FFN_CUDA_K_COUNT][FFN_KOP_COUNT][FFN_ACT_COUNT];
    int lut_mode;       // $FFN_CUDA_LUT_MODE (lut.cu)
    bool lut_smem_set;  // the apply kernel's shared-memory limit raised
};

static struct ffn_cuda_state *ffn__state(ffn_ctx_t ctx) {
    return (struct ffn_cuda_state *)ctx->be_state;
}

enum ffn_status ffn_cuda_error(ffn_ctx_t ctx, const char *fn, const char *what, cudaError_t e) {
    (void)cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "%s: %s: out of device memory on CUDA device %d", fn, what, ctx->device);
    return ffn_error(ctx, FFN_STATUS_BACKEND, "%s: %s failed on CUDA device %d: %s (%s)", fn, what,
                     ctx->device, cudaGetErrorString(e), cudaGetErrorName(e));
}

// The device stream s belongs to, in *dev; false when it cannot be asked: cudaStreamGetDevice is
// refused on a stream being captured (and invalidates the capture), so a capturing stream is not
// asked (its device was checked when the context was given it outside the capture, or the
// capture's kernels fail at launch with a CUDA error).
static bool ffn__stream_device(cudaStream_t s, int *dev) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    const bool ok = cudaStreamIsCapturing(s, &cs) == cudaSuccess &&
                    cs == cudaStreamCaptureStatusNone && cudaStreamGetDevice(s, dev) == cudaSuccess;
    (void)cudaGetLastError();
    return ok;
}

// Every entry point runs with the calling thread's stream-capture mode relaxed, the previous mode
// restored on the way out: under a capture in the default global mode (torch.cuda.graph's) the
// "potentially unsafe" calls a call may make on the host (a block's first use of a size allocates
// its workspace, a table is built) would invalidate the caller's capture. Measured on an H200
// (CUDA 13.0): pointer attributes, allocation ranges, occupancy, function attributes and the
// current device are allowed under a global capture; cudaStreamGetDevice is refused even relaxed
// (ffn__stream_device below).
int ffn_cuda_capture_relax(void) {
    enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return (int)m;
}

void ffn_cuda_capture_restore(int mode) {
    if (mode < 0) return;
    enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)mode;
    if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) (void)cudaGetLastError();
}

// --- availability and the context ----------------------------------------------------------------

static bool ffn__cuda_available(char *why, size_t why_size) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why && why_size) {
            if (e != cudaSuccess)
                snprintf(why, why_size, "no usable CUDA device: cudaGetDeviceCount: %s (%s)",
                         cudaGetErrorString(e), cudaGetErrorName(e));
            else
                snprintf(why, why_size, "no CUDA device: the driver reports none");
        }
        (void)cudaGetLastError();  // leave no error behind for the caller's own CUDA code
        return false;
    }
    int major = 0;
    for (int d = 0; d < n; d++)
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) == cudaSuccess &&
            major >= FFN_CUDA_MIN_MAJOR)
            return true;
    if (why && why_size)
        snprintf(why, why_size,
                 "no CUDA device of compute capability %d.0 or newer (%d device%s, the first of "
                 "compute capability %d.x); this build has kernels for sm_90 and newer",
                 FFN_CUDA_MIN_MAJOR, n, n == 1 ? "" : "s", major);
    return false;
}

static enum ffn_status ffn__cuda_init(ffn_ctx_t ctx, const struct ffn_ctx_opts *o) {
    static const char fn[] = "ffn_ctx_create";
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        char why[256];
        ffn__cuda_available(why, sizeof why);
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: %s", fn, why);
    }
    if (o->device >= n)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: CUDA device %d does not exist (%d device%s: 0..%d)", fn, o->device, n,
                         n == 1 ? "" : "s", n - 1);
    struct ffn_cuda_state *s = calloc(1, sizeof *s);
    if (!s) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    const int d = o->device;
    struct cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, d)) != cudaSuccess) {
        free(s);
        return ffn_cuda_error(ctx, fn, "cudaGetDeviceProperties", e);
    }
    snprintf(s->name, sizeof s->name, "%s", prop.name);
    s->sm_count = prop.multiProcessorCount;
    s->cc_major = prop.major;
    s->cc_minor = prop.minor;
    s->l2_bytes = prop.l2CacheSize;
    if (s->cc_major < FFN_CUDA_MIN_MAJOR) {
        const enum ffn_status st = ffn_error(
            ctx, FFN_STATUS_UNSUPPORTED,
            "%s: CUDA device %d (%s) has compute capability %d.%d; this build has kernels for "
            "%d.0 and newer (sm_90 code, compute_90 PTX)",
            fn, d, s->name, s->cc_major, s->cc_minor, FFN_CUDA_MIN_MAJOR);
        free(s);
        return st;
    }
    // cuMemGetAddressRange, through the runtime (no link against libcuda): the allocation a
    // device pointer belongs to, for the view-bounds check. Without it that check is skipped.
    void *fp = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fp, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        s->mem_range = (ffn__mem_range_fn)fp;
    (void)cudaGetLastError();
    const char *lut = getenv("FFN_CUDA_LUT"), *flat = getenv("FFN_CUDA_FLAT");
    const long long lut_v = lut && *lut ? strtoll(lut, NULL, 10) : -1;
    s->lut_min = lut_v == 0 ? INT64_MAX : lut_v > 0 ? lut_v : FFN_CUDA_LUT_MIN;
    s->no_flat = flat && flat[0] == '0';
    const char *blk = getenv("FFN_CUDA_BLOCK"), *lm = getenv("FFN_CUDA_LUT_MODE");
    const int bv = blk ? atoi(blk) : 0;
    s->flat_threads =
        bv >= 64 && bv <= FFN_CUDA_FLAT_MAX_THREADS && bv % 32 == 0 ? bv : FFN_CUDA_FLAT_THREADS;
    s->lut_mode = lm ? atoi(lm) : 0;
    // $FFN_CUDA_FLAT_FORM=U,W: the flat kernel's form for every call (measurements, tests);
    // $FFN_CUDA_FLAT_BLOCKS=N caps a looping grid at N blocks (tests: many steps a thread).
    const char *ff = getenv("FFN_CUDA_FLAT_FORM"), *fb = getenv("FFN_CUDA_FLAT_BLOCKS");
    int fu = 0, fw = 0;
    if (ff && sscanf(ff, "%d,%d", &fu, &fw) == 2 && (fu == 1 || fu == 2 || fu == 4) && fw >= 0 &&
        fw <= 64)
        s->flat_u = fu, s->flat_w = fw;
    s->flat_blocks = fb && atoll(fb) > 0 ? atoll(fb) : INT32_MAX;
    ctx->be_state = s;
    if (o->stream) {
        int sd = -1;
        if (ffn__stream_device((cudaStream_t)o->stream, &sd) && sd != d) {
            ctx->be_state = NULL;
            free(s);
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: opts.stream belongs to CUDA device %d, opts.device is %d", fn, sd,
                             d);
        }
        (void)cudaGetLastError();
    }
    ffn_log(ctx, 2, "ffn: CUDA device %d: %s, compute capability %d.%d, %d SMs, %d MiB L2", d,
            s->name, s->cc_major, s->cc_minor, s->sm_count, s->l2_bytes >> 20);
    return FFN_STATUS_OK;
}

// Frees the state. Lookup tables are device memory: cudaFree waits for the device to finish the
// work that may still read them.
static void ffn__cuda_free(ffn_ctx_t ctx) {
    struct ffn_cuda_state *s = ffn__state(ctx);
    if (!s) return;
    int prev;
    if (s->lut_stream && ffn_cuda_enter(ctx->device, &prev) == cudaSuccess) {
        uint16_t **t = &s->lut[0][0][0];
        for (size_t i = 0; i < sizeof s->lut / sizeof s->lut[0][0][0]; i++)
            if (t[i]) (void)cudaFree(t[i]);
        (void)cudaStreamDestroy(s->lut_stream);
        ffn_cuda_leave(ctx->device, prev);
    }
    (void)cudaGetLastError();
    free(s);
    ctx->be_state = NULL;
}

static enum ffn_status ffn__cuda_set_stream(ffn_ctx_t ctx, void *stream) {
    if (stream) {
        int sd = -1;
        if (ffn__stream_device((cudaStream_t)stream, &sd) && sd != ctx->device)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "ffn_ctx_set_stream: the stream belongs to CUDA device %d, the "
                             "context to device %d",
                             sd, ctx->device);
    }
    ctx->stream = stream;
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__cuda_synchronize(ffn_ctx_t ctx) {
    int prev;
    cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
    if (e != cudaSuccess) return ffn_cuda_error(ctx, "ffn_ctx_synchronize", "cudaSetDevice", e);
    e = cudaStreamSynchronize((cudaStream_t)ctx->stream);
    ffn_cuda_leave(ctx->device, prev);
    if (e != cudaSuccess)
        return ffn_cuda_error(ctx, "ffn_ctx_synchronize", "cudaStreamSynchronize", e);
    return FFN_STATUS_OK;
}

// --- views ---------------------------------------------------------------------------------------

// Checks that the device of ctx can reach view t (name) and that it lies inside its allocation.
static enum ffn_status ffn__check_view(ffn_ctx_t ctx, const char *fn, const char *name,
                                       const struct ffn_tensor *t) {
    struct cudaPointerAttributes at;
    const cudaError_t e = cudaPointerGetAttributes(&at, t->data);
    if (e != cudaSuccess && e != cudaErrorInvalidValue)  // a sticky error of earlier work, ...
        return ffn_cuda_error(ctx, fn, "cudaPointerGetAttributes", e);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s.data=%p is not memory CUDA knows: cudaPointerGetAttributes: %s",
                         fn, name, t->data, cudaGetErrorString(e));
    }
    switch (at.type) {
    case cudaMemoryTypeDevice:
        if (at.device != ctx->device)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s.data=%p is memory of CUDA device %d; this context runs on "
                             "device %d",
                             fn, name, t->data, at.device, ctx->device);
        break;
    case cudaMemoryTypeManaged: break;
    case cudaMemoryTypeHost:  // pinned host memory: usable when mapped into the device's space
        if (!at.devicePointer)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s.data=%p is pinned host memory not mapped for the device", fn,
                             name, t->data);
        return FFN_STATUS_OK;
    default:
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s.data=%p is host memory, not device memory: a CUDA context takes "
                         "device pointers (cudaMalloc, cudaMallocManaged) and copies nothing",
                         fn, name, t->data);
    }
    const struct ffn_cuda_state *s = ffn__state(ctx);
    if (!s->mem_range) return FFN_STATUS_OK;
    uintptr_t lo, hi;
    ffn_tensor_extent(t, &lo, &hi);
    CUdeviceptr base = 0;
    size_t size = 0;
    if (s->mem_range(&base, &size, (CUdeviceptr)lo) != CUDA_SUCCESS) return FFN_STATUS_OK;
    if (hi > (uintptr_t)base + size)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s spans %" PRIuPTR
                         " bytes from %p, past the end of its allocation "
                         "(%zu bytes from 0x%llx): %" PRIuPTR " bytes too many",
                         fn, name, hi - lo, t->data, size, (unsigned long long)base,
                         hi - ((uintptr_t)base + size));
    return FFN_STATUS_OK;
}

// --- the element-wise call -----------------------------------------------------------------------

static const void *ffn__kernel(int op, enum ffn_act act, int kind, int u, int mode) {
    switch (act) {
    case FFN_ACT_GELU_TANH: return ffn_cuda_ew_gelu_tanh(op, kind, u, mode);
    case FFN_ACT_GELU_ERF: return ffn_cuda_ew_gelu_erf(op, kind, u, mode);
    case FFN_ACT_SILU: return ffn_cuda_ew_silu(op, kind, u, mode);
    case FFN_ACT_RELU: return ffn_cuda_ew_relu(op, kind, u, mode);
    case FFN_ACT_SIGMOID: return ffn_cuda_ew_sigmoid(op, kind, u, mode);
    case FFN_ACT_IDENTITY: return ffn_cuda_ew_identity(op, kind, u, mode);
    case FFN_ACT_QUICK_GELU: return ffn_cuda_ew_quick_gelu(op, kind, u, mode);
    default: return NULL;
    }
}

// The flat kernel's form (ew_kernel.cuh): u chunks of 16 bytes a thread and step, and the grid:
// w = 0 one pass (as many blocks as the chunks need), w > 0 that many waves of resident blocks
// (occupancy × SMs × w) looping over the views. By size, op, 16-bit dtype or f32, and the weight
// of the activation's math: none (ReLU, identity: bytes moved at the copy's speed), light (the σ
// family; tanh-GeLU's 16-bit tier), heavy (tanh-GeLU in f32 or in the accurate tier) or erf
// (erf-GeLU), whose math takes longer than the loads of the next chunk, which a loop keeps in
// flight.
struct ffn__flat_form {
    signed char u, w;
};
// The rule as measured on an H200 (the gpu-run.sh group `flat`, two runs averaged: every op,
// direction and dtype at n = 1.5M, 4M, 16M and 117M under eight forms; per class, of the forms
// within 1 % of the best geometric mean of the ratios to a device copy, the one whose worst row is
// best: at 1.5M for the small rule, 16M for the medium one, 117M for the large one; the 16-bit
// heavy class, which the benchmark's default tier does not run, keeps the forms of the earlier
// measurement). A one-pass form holds one step's chunks in registers, a looping form two
// (ew_kernel.cuh): one pass of one to four chunks is the large rule's form, the looping forms
// are most of the small rule's. Geometric mean over the classes, small / medium / large rule:
// 1.5M 0.92 / 0.90 / 0.86, 4M 0.95 / 0.94 / 0.90, 16M 0.98 / 0.99 / 0.98, 117M 0.97 / 0.97 /
// 1.01. FFN_CUDA_FLAT_MEDIUM and FFN_CUDA_FLAT_LARGE (the elements from which the next rule
// applies) lie between the sizes where each one wins (nothing was measured in between).
#define FFN_CUDA_FLAT_MEDIUM ((int64_t)1 << 23)
#define FFN_CUDA_FLAT_LARGE ((int64_t)1 << 26)
static const struct ffn__flat_form ffn__flat_rule[3][FFN_KOP_COUNT][2][4] = {
    // [size][op][16-bit][math]: f32 {none, light, heavy, erf}, bf16/f16 {none, light, heavy, erf}
    {
        [FFN_KOP_ACT_FWD] = {{{1, 0}, {1, 1}, {1, 1}, {1, 1}}, {{2, 0}, {1, 0}, {1, 1}, {1, 1}}},
        [FFN_KOP_ACT_BWD] = {{{1, 1}, {1, 1}, {1, 1}, {1, 1}}, {{1, 1}, {1, 0}, {1, 1}, {1, 1}}},
        [FFN_KOP_GLU_FWD] = {{{1, 1}, {1, 1}, {1, 1}, {1, 1}}, {{1, 0}, {1, 1}, {1, 1}, {1, 0}}},
        [FFN_KOP_GLU_BWD] = {{{2, 1}, {2, 1}, {1, 0}, {1, 0}}, {{1, 0}, {1, 1}, {1, 0}, {1, 0}}},
    },
    {
        [FFN_KOP_ACT_FWD] = {{{1, 0}, {1, 1}, {2, 1}, {1, 1}}, {{4, 1}, {2, 4}, {2, 4}, {2, 1}}},
        [FFN_KOP_ACT_BWD] = {{{1, 0}, {1, 1}, {1, 1}, {1, 1}}, {{1, 1}, {1, 1}, {1, 1}, {2, 4}}},
        [FFN_KOP_GLU_FWD] = {{{1, 0}, {1, 1}, {1, 1}, {1, 1}}, {{2, 4}, {1, 1}, {1, 1}, {2, 4}}},
        [FFN_KOP_GLU_BWD] = {{{1, 0}, {1, 0}, {1, 0}, {1, 0}}, {{1, 0}, {1, 1}, {1, 1}, {1, 1}}},
    },
    {
        [FFN_KOP_ACT_FWD] = {{{1, 0}, {2, 0}, {4, 0}, {2, 0}}, {{1, 0}, {2, 0}, {2, 4}, {4, 0}}},
        [FFN_KOP_ACT_BWD] = {{{2, 0}, {2, 0}, {2, 0}, {2, 0}}, {{1, 0}, {2, 0}, {1, 1}, {4, 0}}},
        [FFN_KOP_GLU_FWD] = {{{2, 0}, {2, 0}, {2, 0}, {2, 0}}, {{1, 0}, {2, 0}, {1, 1}, {4, 0}}},
        [FFN_KOP_GLU_BWD] = {{{1, 0}, {1, 0}, {1, 0}, {4, 0}}, {{1, 0}, {4, 0}, {1, 1}, {2, 0}}},
    },
};

static struct ffn__flat_form ffn__flat_form_of(const struct ffn_cuda_state *s,
                                               const struct ffn_ew_call *c, int64_t n) {
    if (s->flat_u) return (struct ffn__flat_form){(signed char)s->flat_u, (signed char)s->flat_w};
    const bool tier16 = ffn_cm_tier16_on(c->act, c->out, c->accurate, false);
    const int math = c->act == FFN_ACT_RELU || c->act == FFN_ACT_IDENTITY ? 0
                     : c->act == FFN_ACT_GELU_ERF                         ? 3
                     : c->act == FFN_ACT_GELU_TANH && !tier16             ? 2
                                                                          : 1;
    const int size = n >= FFN_CUDA_FLAT_LARGE ? 2 : n >= FFN_CUDA_FLAT_MEDIUM ? 1 : 0;
    return ffn__flat_rule[size][c->op][c->in != FFN_DTYPE_F32][math];
}

// The lookup table of the accurate tier's 16-bit forward (act, in, out), built at its first use on the
// context's own stream and waited for (so any stream may read it from then on); NULL when it
// cannot be had now: out of memory, or the caller's stream is being captured into a graph (the
// build's wait is not allowed there). The caller then runs the kernel itself: the same bits.
// The device of ctx is current.
static const uint16_t *ffn__lut(ffn_ctx_t ctx, enum ffn_act act, enum ffn_dtype in,
                                enum ffn_dtype out) {
    struct ffn_cuda_state *s = ffn__state(ctx);
    uint16_t **slot = &s->lut[act][in == FFN_DTYPE_F16][out == FFN_DTYPE_F16];
    if (*slot) return *slot;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)ctx->stream, &cs) != cudaSuccess ||
        cs != cudaStreamCaptureStatusNone) {
        (void)cudaGetLastError();
        return NULL;
    }
    uint16_t *tab = NULL;
    if ((!s->lut_stream &&
         cudaStreamCreateWithFlags(&s->lut_stream, cudaStreamNonBlocking) != cudaSuccess) ||
        cudaMalloc((void **)&tab, FFN_CUDA_LUT_SMEM) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    int in_i = (int)in, out_i = (int)out;
    void *params[] = {&tab, &in_i, &out_i};
    const dim3 grid = {65536 / FFN_CUDA_THREADS, 1, 1}, block = {FFN_CUDA_THREADS, 1, 1};
    const void *build = ffn__kernel(-1, act, 0, 1, FFN_CUDA_FLAT_PASS);
    if (!build || cudaLaunchKernel(build, grid, block, params, 0, s->lut_stream) != cudaSuccess ||
        cudaStreamSynchronize(s->lut_stream) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaFree(tab);
        return NULL;
    }
    *slot = tab;
    return tab;
}

static bool ffn__contiguous(const struct ffn_tensor *t) {
    return t->rows <= 1 || t->row_stride == t->cols;
}

static enum ffn_status ffn__cuda_elementwise_run(ffn_ctx_t ctx, const struct ffn_ew_call *c) {
    struct ffn_cuda_state *s = ffn__state(ctx);
    enum ffn_status st;
    for (int k = 0; k < c->n_out && !c->trusted; k++)
        if ((st = ffn__check_view(ctx, c->fn, c->out_names[k], c->outs[k]))) return st;
    for (int k = 0; k < c->n_in && !c->trusted; k++)
        if ((st = ffn__check_view(ctx, c->fn, c->in_names[k], c->ins[k]))) return st;
    struct ffn_cuda_ew_args a;
    memset(&a, 0, sizeof a);
    a.in_dt = (int32_t)c->in;
    a.out_dt = (int32_t)c->out;
    a.rows = c->ins[0]->rows;
    a.cols = c->ins[0]->cols;
    bool contiguous = true;
    for (int k = 0; k < c->n_out; k++) contiguous = contiguous && ffn__contiguous(c->outs[k]);
    for (int k = 0; k < c->n_in; k++) contiguous = contiguous && ffn__contiguous(c->ins[k]);
    if (contiguous) {  // one long row: vectors run across row ends
        a.cols *= a.rows;
        a.rows = 1;
    }
    // 16-byte accesses when every row of every view starts 16-byte aligned; byte accesses when a
    // view is not even aligned to its element size (the device faults on a misaligned access).
    const size_t ies = ffn_dtype_size(c->in), oes = ffn_dtype_size(c->out);
    bool vec = true, bytes = false;
    for (int k = 0; k < c->n_out + c->n_in; k++) {
        const struct ffn_tensor *t = k < c->n_out ? c->outs[k] : c->ins[k - c->n_out];
        const size_t es = k < c->n_out ? oes : ies;
        const uintptr_t p = (uintptr_t)t->data;
        const int64_t rs = a.rows > 1 ? t->row_stride : 0;
        vec = vec && p % 16 == 0 && ((uint64_t)rs * es) % 16 == 0;
        bytes = bytes || p % es != 0;
        if (k < c->n_out) {
            a.out[k] = t->data;
            a.out_rs[k] = rs;
        } else {
            a.in[k - c->n_out] = t->data;
            a.in_rs[k - c->n_out] = rs;
        }
    }
    a.flags = (c->accurate ? FFN_CUDA_ACC : 0) |
              (c->parity && c->out != FFN_DTYPE_F32 ? FFN_CUDA_PAR : 0) | (vec ? FFN_CUDA_VEC : 0) |
              (bytes ? FFN_CUDA_BYTES : 0);

    int prev;
    cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
    if (e != cudaSuccess) return ffn_cuda_error(ctx, c->fn, "cudaSetDevice", e);

    // The identity forward of views of one dtype is a copy of the bytes (NaN payloads too): the
    // driver's device-to-device copy (stream-ordered, capturable), 2-D for views of rows, nothing
    // at all in place. Row strides beyond the copy's largest pitch take the kernel.
    if (c->op == FFN_KOP_ACT_FWD && c->act == FFN_ACT_IDENTITY && c->in == c->out && !s->no_flat) {
        const cudaStream_t st = (cudaStream_t)ctx->stream;
        const size_t w = (size_t)a.cols * ies;
        e = a.out[0] == a.in[0] && a.out_rs[0] == a.in_rs[0] ? cudaSuccess
            : a.rows == 1 ? cudaMemcpyAsync(a.out[0], a.in[0], w, cudaMemcpyDeviceToDevice, st)
                          : cudaMemcpy2DAsync(a.out[0], (size_t)a.out_rs[0] * ies, a.in[0],
                                              (size_t)a.in_rs[0] * ies, w, (size_t)a.rows,
                                              cudaMemcpyDeviceToDevice, st);
        if (e != cudaErrorInvalidPitchValue) {
            ffn_cuda_leave(ctx->device, prev);
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                return ffn_cuda_error(ctx, c->fn,
                                      a.rows == 1 ? "cudaMemcpyAsync" : "cudaMemcpy2DAsync", e);
            }
            return FFN_STATUS_OK;
        }
        (void)cudaGetLastError();
    }

    // A large contiguous 16-bit forward of a transcendental activation in the accurate tier (the
    // reference's outputs, in double): through its table. The default tier's 16-bit math
    // (act_math.h) runs at the memory's speed by itself.
    const bool in16 = c->in != FFN_DTYPE_F32, out16 = c->out != FFN_DTYPE_F32;
    if (c->op == FFN_KOP_ACT_FWD && in16 && out16 && c->accurate && a.rows == 1 && vec && !bytes &&
        a.cols >= s->lut_min && c->act != FFN_ACT_RELU && c->act != FFN_ACT_IDENTITY) {
        const uint16_t *tab = ffn__lut(ctx, c->act, c->in, c->out);
        if (tab) {
            const void *apply = ffn_cuda_lut_apply();
            e = cudaSuccess;
            if (!s->lut_smem_set) {
                e = cudaFuncSetAttribute(apply, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         FFN_CUDA_LUT_SMEM);
                s->lut_smem_set = e == cudaSuccess;
            }
            const void *x = a.in[0];
            void *y = a.out[0];
            int64_t n = a.cols;
            int mode = s->lut_mode;
            void *params[] = {(void *)&tab, (void *)&x, &y, &n, &mode};
            const dim3 grid = {(unsigned)s->sm_count, 1, 1}, block = {FFN_CUDA_LUT_THREADS, 1, 1};
            if (e == cudaSuccess)
                e = cudaLaunchKernel(apply, grid, block, params, FFN_CUDA_LUT_SMEM,
                                     (cudaStream_t)ctx->stream);
            ffn_cuda_leave(ctx->device, prev);
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                return ffn_cuda_error(ctx, c->fn, "the kernel launch", e);
            }
            return FFN_STATUS_OK;
        }
    }

    // The kernel: the flat one for views of one dtype in and out whose rows all start 16-byte
    // aligned, when they are contiguous, or when every row is a whole number of 16-byte chunks
    // (views of rows, the halves of a fused gate/up output among them; fewer than 2^31 chunks in
    // all: the row of a chunk is a 32-bit quotient), in the rule's form for their elements; the
    // generic one for everything else (offsets, ragged rows, mixed dtypes).
    const int64_t cw = in16 ? 8 : 4;  // elements of a 16-byte chunk
    const bool one_dt = vec && !bytes && c->in == c->out && !s->no_flat;
    const bool rows = one_dt && a.rows > 1 && a.cols > 0 && a.cols % cw == 0 &&
                      a.rows * (a.cols / cw) < INT32_MAX;
    const bool flat = (one_dt && a.rows == 1) || rows;
    if (rows) ffn_cuda_div_magic((uint32_t)(a.cols / cw), &a.div_mul, &a.div_shift);
    const bool par = (a.flags & FFN_CUDA_PAR) && c->op == FFN_KOP_GLU_FWD;
    const int kind =
        !flat ? FFN_CUDA_K_GENERIC : FFN_CUDA_K_FLAT + (int)c->in + (par ? FFN_CUDA_K_PAR : 0);
    const struct ffn__flat_form form =
        flat ? ffn__flat_form_of(s, c, a.rows * a.cols) : (struct ffn__flat_form){1, 0};
    const void *kern =
        ffn__kernel(c->op, c->act, kind, form.u,
                    (form.w > 0 ? FFN_CUDA_FLAT_LOOP : 0) | (rows ? FFN_CUDA_FLAT_ROWS : 0));
    if (!kern) {
        ffn_cuda_leave(ctx->device, prev);
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: no CUDA kernel for %s", c->fn,
                         ffn_act_name(c->act));
    }
    // The generic kernel: blocks as many as the device holds at once (occupancy × SMs, asked
    // once per kernel) and no more than the work needs; grid-stride loops cover the rest. The
    // flat one: one pass (w = 0), or w waves of resident blocks looping.
    const int ul = form.u == 4 ? 2 : form.u == 2 ? 1 : 0;
    int *occ =
        flat ? &s->flat_occ[rows][ul][kind][c->op][c->act] : &s->occupancy[kind][c->op][c->act];
    if ((!flat || form.w > 0) && *occ <= 0) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            occ, kern, flat ? s->flat_threads : FFN_CUDA_THREADS, 0);
        if (e != cudaSuccess || *occ <= 0) {
            *occ = 0;
            ffn_cuda_leave(ctx->device, prev);
            return ffn_cuda_error(ctx, c->fn, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                                  e != cudaSuccess ? e : cudaErrorInvalidConfiguration);
        }
    }
    dim3 grid = {1, 1, 1}, block = {FFN_CUDA_THREADS, 1, 1};
    if (flat) {
        const int64_t chunks = a.rows * a.cols / cw, bt = s->flat_threads, per = bt * form.u;
        block.x = (unsigned)bt;
        int64_t gx = (chunks + per - 1) / per;
        if (form.w > 0) {
            const int64_t resident = (int64_t)s->sm_count * *occ * form.w;
            if (gx > resident) gx = resident;
            if (gx > s->flat_blocks) gx = s->flat_blocks;
        }
        if (gx > INT32_MAX) gx = INT32_MAX;  // the kernel loops past it
        if (gx < 1) gx = 1;
        grid.x = (unsigned)gx;
    } else {
        // Lanes of a block along a row (a power of two up to a block, so narrow rows share a
        // block).
        const int64_t max_blocks = (int64_t)s->sm_count * *occ;
        const int64_t upr = (a.cols + FFN_CUDA_UNIT - 1) / FFN_CUDA_UNIT;
        int lg = 0;
        while ((1 << lg) < FFN_CUDA_THREADS && ((int64_t)1 << lg) < upr) lg++;
        a.lpr_log2 = lg;
        const int64_t lanes = (int64_t)1 << lg, rpb = FFN_CUDA_THREADS / lanes;
        int64_t gx = (upr + lanes - 1) / lanes;
        if (gx > max_blocks) gx = max_blocks;
        int64_t gy = (a.rows + rpb - 1) / rpb, gy_cap = max_blocks / gx;
        if (gy_cap < 1) gy_cap = 1;
        if (gy > gy_cap) gy = gy_cap;
        if (gy > 65535) gy = 65535;
        grid.x = (unsigned)gx;
        grid.y = (unsigned)gy;
    }
    void *params[] = {&a};
    e = cudaLaunchKernel(kern, grid, block, params, 0, (cudaStream_t)ctx->stream);
    ffn_cuda_leave(ctx->device, prev);
    if (e != cudaSuccess) {
        // A launch error (bad configuration, no kernel image for this device) or a sticky error of
        // earlier work on the device: either way the kernel did not run.
        (void)cudaGetLastError();
        return ffn_cuda_error(ctx, c->fn, "the kernel launch", e);
    }
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__cuda_elementwise(ffn_ctx_t ctx, const struct ffn_ew_call *c) {
    const int mode = ffn_cuda_capture_relax();
    const enum ffn_status st = ffn__cuda_elementwise_run(ctx, c);
    ffn_cuda_capture_restore(mode);
    return st;
}

const struct ffn_backend_i ffn_backend_cuda = {
    .name = "cuda",
    .available = ffn__cuda_available,
    .init = ffn__cuda_init,
    .free = ffn__cuda_free,
    .elementwise = ffn__cuda_elementwise,
    .set_stream = ffn__cuda_set_stream,
    .synchronize = ffn__cuda_synchronize,
    .block = &ffn_block_cuda,
};

// For the CUDA block (cuda_block.c): its weight and activation views get the same checks.
enum ffn_status ffn_cuda_check_view(ffn_ctx_t ctx, const char *fn, const char *name,
                                    const struct ffn_tensor *t);
enum ffn_status ffn_cuda_check_view(ffn_ctx_t ctx, const char *fn, const char *name,
                                    const struct ffn_tensor *t) {
    return ffn__check_view(ctx, fn, name, t);
}
