// bench_act_cuda.c — `ffn bench act --backend cuda`: throughput of the activation entry points on a
// CUDA context (device pointers, one stream), as GB/s over the minimum bytes moved and as a ratio
// to a device-to-device copy of the same bytes (cudaMemcpyAsync: half of them read, half written)
// measured in the same process, rep by rep, like the CPU benchmark's triad. GPU time by CUDA
// events around each call; before every timed call a read of twice the L2 cache evicts the data
// (so no size is measured in cache) and keeps the stream busy while the host queues the call, so
// the host's own cost (validation, pointer checks, launch) stays out of the GPU time; it is
// reported apart (host_us). The JSON rows carry the CPU benchmark's fields plus copy_gbps and
// host_us, and are read by bench/torch_cuda.py next to PyTorch's.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "args.h"
#include "ffn.h"
#include "tools.h"
#include "tools_cuda.h"

// 512 x 3072 (GPT-2-small FFN at sequence 512: fits in the 60 MB L2), 16M, and 8192 x 14336
// (LLaMA-3-8B's d_ff at 8192 tokens).
static const int64_t ffn__default_ns[] = {512 * 3072, (int64_t)1 << 24, (int64_t)8192 * 14336};
#define FFN__MAX_LIST 16
#define FFN__MAX_N ((int64_t)1 << 31)
#define FFN__ROW_BUDGET_S 0.03  // auto reps: about this much timed GPU work per row
#define FFN__MIN_REPS 10
#define FFN__MAX_REPS 100
#define FFN__QUICK_REPS 10
#define FFN__HOST_CALLS 20  // calls timed on the host for host_us
#define FFN__SEED 0x5eedf00dULL

static const char *const ffn__dist_names[2] = {"normal", "wide"};

struct ffn__opts {
    bool unary[FFN_ACT_COUNT], glu[FFN_ACT_COUNT];
    bool fwd, bwd;
    bool dtypes[FFN_DTYPE_COUNT];
    bool dists[2];
    int64_t ns[FFN__MAX_LIST];
    int n_ns;
    int reps, device;
    int64_t fused;  // > 0: gate and up are the halves of one [n / fused, 2 fused] buffer
    bool quick, accurate, json, warm;
};

static int ffn__cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ffn__median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ffn__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn bench act --backend cuda [options]\n"
            "  Throughput of every activation and its gated combine, forward and backward, on the\n"
            "  GPU: GB/s over the minimum bytes moved (each input read once, each output written\n"
            "  once) and the ratio to a device-to-device copy of as many bytes in the same run;\n"
            "  GPU time by CUDA events, the L2 cache evicted before every timed call.\n"
            "options:\n"
            "  --op OP|all          activation or gated name (as the CPU benchmark); default all\n"
            "  --dir fwd|bwd|all    direction (default all)\n"
            "  --glu|--unary|--both gated, plain or both forms (default both)\n"
            "  --dtype f32|bf16|f16|all   input = output dtype, repeatable (default all three)\n"
            "  --n N[,N...]         elements per tensor (default 1572864,16777216,117440512:\n"
            "                       512x3072, 16M, 8192x14336)\n"
            "  --dist normal|wide|all     x/gate ~ N(0,1) or uniform[-20,20] (default normal)\n"
            "  --reps R             timed reps per row (default: automatic, %d..%d)\n"
            "  --quick              SwiGLU and GeLU-tanh, f32 and bf16, 512x3072 and 8192x14336\n"
            "  --accurate           FFN_ACCURACY_HIGH\n"
            "  --warm               no L2 flush: the inputs stay in L2 from the previous call, as\n"
            "                       a GEMM's output does (a spin kernel hides the host instead)\n"
            "  --fused M            gated ops only, gate and up as the two halves of one\n"
            "                       [n/M, 2M] buffer (a fused gate_up projection's output, row\n"
            "                       stride 2M), dgate and dup into the halves of another; h and\n"
            "                       dh [n/M, M]. Every n a multiple of M\n"
            "  --device D           CUDA device ordinal (default 0)\n"
            "  --json               one JSON object per line (first line: the device header)\n",
            FFN__MIN_REPS, FFN__MAX_REPS);
}

static bool ffn__parse_ns(const char *s, struct ffn__opts *o) {
    o->n_ns = 0;
    while (*s) {
        if (o->n_ns >= FFN__MAX_LIST) return false;
        char *end;
        errno = 0;
        const long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 1 || v > FFN__MAX_N || (*end && *end != ',')) return false;
        o->ns[o->n_ns++] = v;
        s = *end ? end + 1 : end;
    }
    return o->n_ns > 0;
}

static int ffn__parse(int argc, char **argv, struct ffn__opts *o) {
    memset(o, 0, sizeof *o);
    o->fwd = o->bwd = true;
    bool sel[FFN_ACT_COUNT], glu_only[FFN_ACT_COUNT] = {false};
    bool want_unary = true, want_glu = true, any_dt = false, any_dist = false, ns_set = false;
    bool op_given = false;
    for (int a = 0; a < FFN_ACT_COUNT; a++) sel[a] = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return -1;
        } else if (!strcmp(a, "--backend") && v) {
            i++;
        } else if (!strncmp(a, "--backend=", 10)) {
        } else if (!strcmp(a, "--op") && v) {
            i++;
            if (strcmp(v, "all")) {
                enum ffn_act act;
                bool gated;
                if (!ffn_tool_op_from_name(v, &act, &gated)) {
                    fprintf(stderr, "ffn bench act: unknown --op '%s'\n", v);
                    return 2;
                }
                if (!op_given)  // --op given: only the ops named (repeatable)
                    for (int k = 0; k < FFN_ACT_COUNT; k++) sel[k] = false;
                op_given = true;
                sel[act] = true;
                glu_only[act] = gated;
            }
        } else if (!strcmp(a, "--dir") && v) {
            i++;
            if (!ffn_tool_dir_all("bench act", v, &o->fwd, &o->bwd)) return 2;
        } else if (!strcmp(a, "--glu") || !strcmp(a, "--unary") || !strcmp(a, "--both")) {
            want_glu = strcmp(a, "--unary") != 0;
            want_unary = strcmp(a, "--glu") != 0;
        } else if (!strcmp(a, "--dtype") && v) {
            i++;
            if (!strcmp(v, "all")) {
                o->dtypes[0] = o->dtypes[1] = o->dtypes[2] = true;
            } else {
                enum ffn_dtype dt;
                if (ffn_dtype_from_name(v, &dt) != FFN_STATUS_OK) {
                    fprintf(stderr, "ffn bench act: unknown --dtype '%s'\n", v);
                    return 2;
                }
                o->dtypes[dt] = true;
            }
            any_dt = true;
        } else if (!strcmp(a, "--n") && v) {
            i++;
            if (!ffn__parse_ns(v, o)) {
                fprintf(stderr,
                        "ffn bench act: --n wants integers in [1, %" PRId64
                        "] separated "
                        "by commas (got '%s')\n",
                        FFN__MAX_N, v);
                return 2;
            }
            ns_set = true;
        } else if (!strcmp(a, "--dist") && v) {
            i++;
            o->dists[0] = !strcmp(v, "normal") || !strcmp(v, "all");
            o->dists[1] = !strcmp(v, "wide") || !strcmp(v, "all");
            if (!o->dists[0] && !o->dists[1]) {
                fprintf(stderr, "ffn bench act: --dist must be normal, wide or all\n");
                return 2;
            }
            any_dist = true;
        } else if (!strcmp(a, "--reps") && v) {
            i++;
            if (!ffn_arg_int("bench act", "--reps", v, 1, FFN__MAX_REPS, &o->reps)) return 2;
        } else if (!strcmp(a, "--device") && v) {
            i++;
            if (!ffn_arg_int("bench act", "--device", v, 0, 1023, &o->device)) return 2;
        } else if (!strcmp(a, "--fused") && v) {
            i++;
            if (!ffn_arg_i64("bench act", "--fused", v, 1, FFN__MAX_N, &o->fused)) return 2;
        } else if (!strcmp(a, "--quick")) {
            o->quick = true;
        } else if (!strcmp(a, "--accurate")) {
            o->accurate = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--warm")) {
            o->warm = true;
        } else {
            fprintf(stderr, "ffn bench act --backend cuda: unknown or incomplete option '%s'\n", a);
            ffn__usage(stderr);
            return 2;
        }
    }
    if (o->quick) {
        if (!ns_set)
            o->ns[0] = 512 * 3072, o->ns[1] = (int64_t)8192 * 14336, o->n_ns = 2, ns_set = true;
        if (!any_dt) o->dtypes[FFN_DTYPE_F32] = o->dtypes[FFN_DTYPE_BF16] = any_dt = true;
        for (int k = 0; k < FFN_ACT_COUNT; k++)
            sel[k] = k == FFN_ACT_SILU || k == FFN_ACT_GELU_TANH;
        if (!o->reps) o->reps = FFN__QUICK_REPS;
    }
    if (!ns_set) {
        for (size_t k = 0; k < sizeof ffn__default_ns / sizeof ffn__default_ns[0]; k++)
            o->ns[k] = ffn__default_ns[k];
        o->n_ns = (int)(sizeof ffn__default_ns / sizeof ffn__default_ns[0]);
    }
    if (!any_dt) o->dtypes[0] = o->dtypes[1] = o->dtypes[2] = true;
    if (!any_dist) o->dists[0] = true;
    if (o->fused) {
        for (int k = 0; k < o->n_ns; k++)
            if (o->ns[k] % o->fused) {
                fprintf(stderr,
                        "ffn bench act: --fused %" PRId64 ": n = %" PRId64
                        " is not a whole number of its rows\n",
                        o->fused, o->ns[k]);
                return 2;
            }
        want_unary = false;
    }
    ffn_tool_act_forms(sel, glu_only, want_unary, want_glu, o->unary, o->glu);
    return 0;
}

// --- the run -------------------------------------------------------------------------------------

struct ffn__dev {
    ffn_ctx_t ctx;
    cudaStream_t s;
    void *in[3], *out[2], *csrc, *cdst, *flush;
    size_t flush_bytes;
    float *sink;
    cudaEvent_t ev[4 * FFN__MAX_REPS];
    char name[256];
    int sm_count, l2_bytes;
};

struct ffn__case {
    enum ffn_act act;
    bool glu, bwd;
    struct ffn_tensor out[2], in[3];
};

static enum ffn_status ffn__case_run(ffn_ctx_t ctx, const struct ffn__case *c) {
    return ffn_tool_act_call(ctx, c->act, c->glu, c->bwd, c->out, c->in);
}

static int ffn__cuda_fail(const char *what, cudaError_t e) {
    fprintf(stderr, "ffn bench act: %s: %s\n", what, cudaGetErrorString(e));
    return 2;
}

static int ffn__row(const struct ffn__opts *o, struct ffn__dev *d, enum ffn_dtype dt, int dist,
                    int64_t n, enum ffn_act act, bool glu, bool bwd) {
    int n_out, n_in;
    ffn_tool_act_arity(glu, bwd, &n_out, &n_in);
    struct ffn__case c = {.act = act, .glu = glu, .bwd = bwd};
    for (int k = 0; k < n_out; k++) c.out[k] = ffn_tensor_vec(d->out[k], dt, n);
    for (int k = 0; k < n_in; k++) c.in[k] = ffn_tensor_vec(d->in[k], dt, n);
    if (o->fused) {  // gated: gate, up (and dgate, dup) the halves of fused buffers
        const int64_t m = o->fused, rows = n / m;
        const struct ffn_tensor gu = ffn_tensor_2d(d->in[0], dt, rows, 2 * m, 2 * m),
                                dgu = ffn_tensor_2d(d->out[0], dt, rows, 2 * m, 2 * m);
        if (ffn_gate_up_split(d->ctx, &gu, FFN_GATE_UP_GATE_FIRST, &c.in[0], &c.in[1]) ||
            (bwd &&
             ffn_gate_up_split(d->ctx, &dgu, FFN_GATE_UP_GATE_FIRST, &c.out[0], &c.out[1]))) {
            fprintf(stderr, "ffn bench act: %s\n", ffn_ctx_last_error(d->ctx));
            return 2;
        }
        if (bwd)
            c.in[2] = ffn_tensor_2d(d->in[2], dt, rows, m, m);
        else
            c.out[0] = ffn_tensor_2d(d->out[0], dt, rows, m, m);
    }
    const double bytes = (double)(n_out + n_in) * (double)n * (double)ffn_dtype_size(dt);
    const size_t half = (size_t)(bytes / 2) / 16 * 16;
    cudaError_t e;
    // Warm-up (module load, occupancy query, caches of the driver), then the time of one call.
    for (int w = 0; w < 2; w++)
        if (ffn__case_run(d->ctx, &c) != FFN_STATUS_OK) {
            fprintf(stderr, "ffn bench act: %s\n", ffn_ctx_last_error(d->ctx));
            return 2;
        }
    if ((e = cudaMemcpyAsync(d->cdst, d->csrc, half, cudaMemcpyDeviceToDevice, d->s)))
        return ffn__cuda_fail("cudaMemcpyAsync", e);
    cudaEventRecord(d->ev[0], d->s);
    ffn__case_run(d->ctx, &c);
    cudaEventRecord(d->ev[1], d->s);
    if ((e = cudaStreamSynchronize(d->s))) return ffn__cuda_fail("warm-up", e);
    float ms = 0;
    cudaEventElapsedTime(&ms, d->ev[0], d->ev[1]);
    int reps = o->reps;
    if (!reps) {
        reps = (int)(FFN__ROW_BUDGET_S / (2e-3 * (ms > 1e-3f ? ms : 1e-3f)));
        reps = reps < FFN__MIN_REPS ? FFN__MIN_REPS : reps > FFN__MAX_REPS ? FFN__MAX_REPS : reps;
    }
    // Timed reps: flush, op, flush, copy; the events of all reps, read at the end. Warm: a spin
    // of ~30 µs instead of each flush (the data stays in L2).
    for (int r = 0; r < reps; r++) {
        if (o->warm)
            ffn_benchcu_spin(d->s, 60000);
        else
            ffn_benchcu_flush(d->s, d->flush, d->flush_bytes, d->sink);
        cudaEventRecord(d->ev[4 * r], d->s);
        if (ffn__case_run(d->ctx, &c) != FFN_STATUS_OK) {
            fprintf(stderr, "ffn bench act: %s\n", ffn_ctx_last_error(d->ctx));
            return 2;
        }
        cudaEventRecord(d->ev[4 * r + 1], d->s);
        if (o->warm) {
            cudaMemcpyAsync(d->cdst, d->csrc, half, cudaMemcpyDeviceToDevice, d->s);  // in L2
            ffn_benchcu_spin(d->s, 60000);
        } else {
            ffn_benchcu_flush(d->s, d->flush, d->flush_bytes, d->sink);
        }
        cudaEventRecord(d->ev[4 * r + 2], d->s);
        cudaMemcpyAsync(d->cdst, d->csrc, half, cudaMemcpyDeviceToDevice, d->s);
        cudaEventRecord(d->ev[4 * r + 3], d->s);
    }
    if ((e = cudaStreamSynchronize(d->s))) return ffn__cuda_fail("timed reps", e);
    double t_op[FFN__MAX_REPS], t_cp[FFN__MAX_REPS], ratio[FFN__MAX_REPS];
    for (int r = 0; r < reps; r++) {
        float a = 0, b = 0;
        cudaEventElapsedTime(&a, d->ev[4 * r], d->ev[4 * r + 1]);
        cudaEventElapsedTime(&b, d->ev[4 * r + 2], d->ev[4 * r + 3]);
        t_op[r] = 1e-3 * a, t_cp[r] = 1e-3 * b;
        ratio[r] = t_cp[r] / t_op[r] * bytes / (2.0 * (double)half);
    }
    // The host's own cost of a call (checks and launch), the GPU kept busy meanwhile.
    double t_host[FFN__HOST_CALLS];
    ffn_benchcu_flush(d->s, d->flush, d->flush_bytes, d->sink);
    for (int k = 0; k < FFN__HOST_CALLS; k++) {
        const double t0 = ffn_tool_now();
        ffn__case_run(d->ctx, &c);
        t_host[k] = ffn_tool_now() - t0;
    }
    if ((e = cudaStreamSynchronize(d->s))) return ffn__cuda_fail("host calls", e);
    const double med = ffn__median(t_op, reps), cmed = ffn__median(t_cp, reps);
    const double best = t_op[0], cbest = t_cp[0];  // sorted by ffn__median
    const double rat = ffn__median(ratio, reps),
                 host_us = 1e6 * ffn__median(t_host, FFN__HOST_CALLS);
    const double gbps = bytes / med * 1e-9, copy_gbps = 2.0 * (double)half / cmed * 1e-9;
    const char *op = glu ? ffn_glu_name(act) : ffn_act_name(act);
    if (!o->json) {
        printf("%-12s %-3s %-5s %-6s %10" PRId64 " %9.2f %9.2f %8.1f %8.1f %6.3f %7.1f\n", op,
               bwd ? "bwd" : "fwd", ffn_dtype_name(dt), ffn__dist_names[dist], n, med * 1e6,
               best * 1e6, gbps, copy_gbps, rat, host_us);
    } else {
        printf(
            "{\"impl\":\"ffn\",\"backend\":\"cuda\",\"op\":\"%s\",\"act\":\"%s\",\"glu\":%s,"
            "\"dir\":\"%s\",\"dtype\":\"%s\",\"dist\":\"%s\",\"n\":%" PRId64
            ",\"threads\":null,\"isa\":\"cuda\",\"kernel_isa\":\"cuda\",\"accuracy\":\"%s\","
            "\"reps\":%d,\"inner\":1,\"seconds\":%.9g,\"min_seconds\":%.9g,\"bytes\":%.0f,"
            "\"gbps\":%.4f,\"min_gbps\":%.4f,\"copy_gbps\":%.4f,\"copy_best_gbps\":%.4f,"
            "\"copy_seconds\":%.9g,\"ratio\":%.4f,\"host_us\":%.3f,\"flush\":%s,"
            "\"fused\":%" PRId64 ",\"device\":\"%s\",\"sm_count\":%d}\n",
            op, ffn_act_name(act), glu ? "true" : "false", bwd ? "bwd" : "fwd", ffn_dtype_name(dt),
            ffn__dist_names[dist], n, o->accurate ? "high" : "default", reps, med, best, bytes,
            gbps, bytes / best * 1e-9, copy_gbps, 2.0 * (double)half / cbest * 1e-9, cmed, rat,
            host_us, o->warm ? "false" : "true", o->fused, d->name, d->sm_count);
    }
    fflush(stdout);
    return 0;
}

int ffn_cmd_bench_act_cuda(int argc, char **argv) {
    struct ffn__opts o;
    const int prc = ffn__parse(argc, argv, &o);
    if (prc) return prc < 0 ? 0 : prc;
    char why[256];
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why)) {
        fprintf(stderr, "ffn bench act --backend cuda: %s\n", why);
        return 2;
    }
    struct ffn__dev d;
    memset(&d, 0, sizeof d);
    cudaError_t e;
    if ((e = cudaSetDevice(o.device)) || (e = cudaStreamCreate(&d.s)))
        return ffn__cuda_fail("device", e);
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, o.device);
    snprintf(d.name, sizeof d.name, "%s", prop.name);
    d.sm_count = prop.multiProcessorCount;
    d.l2_bytes = prop.l2CacheSize;
    struct ffn_ctx_opts co = FFN_CTX_OPTS_INIT;
    co.backend = FFN_BACKEND_CUDA;
    co.device = o.device;
    co.stream = d.s;
    co.accuracy = o.accurate ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
    if (ffn_ctx_create(&co, &d.ctx) != FFN_STATUS_OK) {
        fprintf(stderr, "ffn bench act: no CUDA context on device %d\n", o.device);
        return 2;
    }
    int64_t max_n = 0;
    for (int k = 0; k < o.n_ns; k++) max_n = o.ns[k] > max_n ? o.ns[k] : max_n;
    const size_t es = o.dtypes[FFN_DTYPE_F32] ? 4 : 2, bytes = (size_t)max_n * es;
    d.flush_bytes = ((size_t)2 * (size_t)d.l2_bytes + 15) / 16 * 16;
    bool ok = true;
    // --fused: in[0] and out[0] hold [n/M, 2M] (gate and up, dgate and dup).
    const size_t bytes0 = o.fused ? 2 * bytes : bytes;
    for (int k = 0; k < 3; k++) ok = ok && !cudaMalloc(&d.in[k], k ? bytes : bytes0);
    for (int k = 0; k < 2; k++) ok = ok && !cudaMalloc(&d.out[k], k ? bytes : bytes0);
    ok = ok && !cudaMalloc(&d.csrc, 5 * bytes / 2 + 16) && !cudaMalloc(&d.cdst, 5 * bytes / 2 + 16);
    ok = ok && !cudaMalloc(&d.flush, d.flush_bytes) && !cudaMalloc((void **)&d.sink, sizeof(float));
    for (int k = 0; k < 4 * FFN__MAX_REPS && ok; k++) ok = !cudaEventCreate(&d.ev[k]);
    if (!ok) {
        fprintf(stderr, "ffn bench act: out of device memory (%zu bytes per buffer)\n", bytes);
        return 2;
    }
    cudaMemsetAsync(d.flush, 1, d.flush_bytes, d.s);
    cudaMemsetAsync(d.csrc, 0x3c, 5 * bytes / 2 + 16, d.s);
    // $FFN_BENCH_COPY_SRC=random: the copy moves random f32 data (normal) instead of a constant
    // byte, as the ops do (measurement of whether the copy's speed depends on the data).
    const char *csrc = getenv("FFN_BENCH_COPY_SRC");
    if (csrc && !strcmp(csrc, "random"))
        ffn_benchcu_fill(d.s, d.csrc, FFN_DTYPE_F32, (int64_t)((5 * bytes / 2 + 16) / 4), 0,
                         FFN__SEED + 99);
    cudaMemsetAsync(d.out[0], 0, bytes0, d.s);
    cudaMemsetAsync(d.out[1], 0, bytes, d.s);
    if (o.json) {
        printf(
            "{\"bench\":\"act\",\"impl\":\"ffn\",\"header\":true,\"backend\":\"cuda\","
            "\"device\":\"%s\",\"sm_count\":%d,\"l2_mib\":%d,\"cc\":\"%d.%d\","
            "\"accuracy\":\"%s\",\"version\":\"%d.%d.%d\"}\n",
            d.name, d.sm_count, d.l2_bytes >> 20, prop.major, prop.minor,
            o.accurate ? "high" : "default", FFN_VERSION_MAJOR, FFN_VERSION_MINOR,
            FFN_VERSION_PATCH);
    } else {
        printf("# ffn bench act --backend cuda: %s (%d SMs, %d MiB L2), accuracy %s\n", d.name,
               d.sm_count, d.l2_bytes >> 20, o.accurate ? "high" : "default");
        printf(
            "# GB/s = minimum bytes / median GPU time (events, L2 evicted before each call); "
            "copy = device-to-device cudaMemcpyAsync of as many bytes, same run; ratio = "
            "median of per-rep GB/s over copy GB/s; host_us = the call's own host time\n");
        if (o.fused)
            printf("# gate and up: the halves of one [n/%" PRId64 ", %" PRId64
                   "] buffer (row stride %" PRId64 "), dgate and dup likewise\n",
                   o.fused, 2 * o.fused, 2 * o.fused);
        printf("%-12s %-3s %-5s %-6s %10s %9s %9s %8s %8s %6s %7s\n", "op", "dir", "dtype", "dist",
               "n", "med_us", "min_us", "GB/s", "copy", "ratio", "host_us");
    }
    int rc = 0;
    for (int t = 0; t < FFN_DTYPE_COUNT && !rc; t++) {
        if (!o.dtypes[t]) continue;
        const enum ffn_dtype dt = (enum ffn_dtype)t;
        for (int k = 1; k < 3; k++)
            ffn_benchcu_fill(d.s, d.in[k], t, max_n, 0, FFN__SEED + (uint64_t)k);
        for (int dist = 0; dist < 2 && !rc; dist++) {
            if (!o.dists[dist]) continue;
            ffn_benchcu_fill(d.s, d.in[0], t, o.fused ? 2 * max_n : max_n, dist,
                             FFN__SEED + 10 + (uint64_t)dist);
            for (int ni = 0; ni < o.n_ns && !rc; ni++)
                for (int g = 0; g < 2 && !rc; g++)
                    for (int a = 0; a < FFN_ACT_COUNT && !rc; a++)
                        for (int dir = 0; dir < 2 && !rc; dir++)
                            if ((g ? o.glu[a] : o.unary[a]) && (dir ? o.bwd : o.fwd))
                                rc = ffn__row(&o, &d, dt, dist, o.ns[ni], (enum ffn_act)a, g == 1,
                                              dir == 1);
        }
    }
    for (int k = 0; k < 4 * FFN__MAX_REPS; k++) cudaEventDestroy(d.ev[k]);
    for (int k = 0; k < 3; k++) cudaFree(d.in[k]);
    for (int k = 0; k < 2; k++) cudaFree(d.out[k]);
    cudaFree(d.csrc), cudaFree(d.cdst), cudaFree(d.flush), cudaFree(d.sink);
    ffn_ctx_destroy(d.ctx);
    cudaStreamDestroy(d.s);
    return rc;
}
