// ulp_cuda.c — `ffn ulp --backend cuda`: the accuracy sweep of the CUDA kernels, run on the GPU.
// The library computes each chunk of inputs through its public entry points on a CUDA context
// (device pointers), and a metric kernel (ulp_kernels.cu) compares every output with the
// double-precision reference evaluated on the device, by the metric and bounds of `ffn ulp`.
// The largest error of each row is then re-measured against MPFR on the host (tools/oracle.c),
// so every reported maximum is MPFR's; cr% (correctly rounded) comes from the double reference
// (exact but within ~2^-29 ulp of a rounding boundary). With --all the f32 sweep covers all 2^32
// inputs (seconds per op on an H200). The table has the columns of the CPU tool's.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "ffn.h"
#include "oracle.h"
#include "tools.h"
#include "tools_cuda.h"
#include "ulp_cli.h"

#define FFN__CHUNK ((int64_t)1 << 26)  // inputs per chunk (5 buffers of 256 MiB at most)
#define FFN__BLOCKS 1056               // metric blocks (132 SMs × 8)

struct ffn__opts {
    struct ffn_ulp_sel sel;
    int device;
};

static void ffn__usage(FILE *f) {
    fprintf(
        f,
        "usage: ffn ulp --backend cuda [--op OP]... [--dir fwd|bwd] [--dtype f32|bf16|f16]...\n"
        "               [--accurate] [--all] [--stride N] [--device D] [--json]\n"
        "\n"
        "Accuracy of the CUDA kernels, swept on the GPU: the library's outputs for every input\n"
        "of the set against the double-precision reference evaluated on the device, in ulps of\n"
        "the output dtype, the largest error of each row confirmed by MPFR; checked against the\n"
        "bounds of docs/numerics.md. Exit 0 when every row is within its bound, 1 when one is\n"
        "not, 2 on bad usage or a CUDA error.\n"
        "\n"
        "  --op OP       an activation or a gated op (as `ffn ulp`); repeatable; default all\n"
        "  --dir D       fwd or bwd (default both)\n"
        "  --dtype T     f32, bf16, f16 (in = out); repeatable; default all three\n"
        "  --accurate    contexts with FFN_ACCURACY_HIGH\n"
        "  --all         f32: all 2^32 bit patterns (default: every %u-th pattern + the hard\n"
        "                regions); bf16 and f16 always take all 65,536\n"
        "  --stride N    the f32 strided sweep's step\n"
        "  --device D    CUDA device ordinal (default 0)\n"
        "  --json        one JSON object per row (the CPU tool's fields, isa \"cuda\")\n",
        FFN_ULP_DEFAULT_STRIDE);
}

static int ffn__parse(int argc, char **argv, struct ffn__opts *op) {
    memset(op, 0, sizeof *op);
    ffn_ulp_sel_init(&op->sel);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const int taken = ffn_ulp_sel_option(&op->sel, argc, argv, &i);
        if (taken < 0) return 2;
        if (taken) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--device") && v) {
            op->device = atoi(v);
            i++;
        } else {
            fprintf(stderr, "ffn ulp --backend cuda: unknown or incomplete option '%s' (--help)\n",
                    a);
            return 2;
        }
    }
    ffn_ulp_sel_finish(&op->sel);
    return -1;
}

// --- one row: an op family, an activation, a dtype -----------------------------------------------

struct ffn__dev {
    ffn_ctx_t ctx;
    cudaStream_t stream;
    void *x, *m1, *m2, *out[2];
    float *list;  // the f32 list on the device (NULL with --all)
    int64_t n_list;
    struct ffn_ulpcu_stat *dstats, *hstats;
    char name[256];
};

static enum ffn_status ffn__call(const struct ffn__dev *d, enum ffn_op op, enum ffn_act act,
                                 enum ffn_dtype dt, int64_t n) {
    const struct ffn_tensor out[2] = {ffn_tensor_vec(d->out[0], dt, n),
                                      ffn_tensor_vec(d->out[1], dt, n)};
    const struct ffn_tensor in[3] = {ffn_tensor_vec(d->x, dt, n), ffn_tensor_vec(d->m1, dt, n),
                                     ffn_tensor_vec(d->m2, dt, n)};
    return ffn_tool_act_call(d->ctx, act, op >= FFN_OP_GLU_FWD,
                             op == FFN_OP_ACT_BWD || op == FFN_OP_GLU_BWD, out, in);
}

static void ffn__merge(struct ffn_ulpcu_stat *into, const struct ffn_ulpcu_stat *s) {
    if (s->i_max >= 0 && (s->max > into->max || into->i_max < 0)) {
        into->max = s->max, into->i_max = s->i_max;
        into->x = s->x, into->m1 = s->m1, into->m2 = s->m2, into->got = s->got;
    }
    into->sum += s->sum;
    into->n += s->n, into->n_cr += s->n_cr, into->n_over += s->n_over;
}

// Sweeps one row; prints it. Returns 0 (within the bound), 1 (not) or 2 (an error).
static int ffn__row(const struct ffn__opts *op, struct ffn__dev *d, struct ffn_oracle * or,
                    enum ffn_op kop, enum ffn_act act, enum ffn_dtype dt) {
    const int n_out = kop == FFN_OP_GLU_BWD ? 2 : 1;
    const int64_t total = dt != FFN_DTYPE_F32 ? 65536 : op->sel.all ? (int64_t)1 << 32 : d->n_list;
    const float *list = dt == FFN_DTYPE_F32 && !op->sel.all ? d->list : NULL;
    struct ffn_ulpcu_stat st[2];
    memset(st, 0, sizeof st);
    st[0].i_max = st[1].i_max = -1;
    const double t0 = ffn_tool_now();
    for (int64_t i0 = 0; i0 < total; i0 += FFN__CHUNK) {
        const int64_t n = total - i0 < FFN__CHUNK ? total - i0 : FFN__CHUNK;
        int e = ffn_ulpcu_gen(d->stream, kop, dt, list, (uint64_t)i0, n, d->x, d->m1, d->m2);
        if (e) {
            fprintf(stderr, "ffn ulp: input generation: %s\n", cudaGetErrorString((cudaError_t)e));
            return 2;
        }
        if (ffn__call(d, kop, act, dt, n) != FFN_STATUS_OK) {
            fprintf(stderr, "ffn ulp: %s\n", ffn_ctx_last_error(d->ctx));
            return 2;
        }
        e = ffn_ulpcu_metric(d->stream, kop, act, dt, op->sel.accurate, d->x, d->m1, d->m2,
                             d->out[0], n_out > 1 ? d->out[1] : NULL, n, (uint64_t)i0, d->dstats,
                             FFN__BLOCKS);
        if (!e)
            e = cudaMemcpyAsync(d->hstats, d->dstats, 2 * FFN__BLOCKS * sizeof *d->hstats,
                                cudaMemcpyDeviceToHost, d->stream);
        if (!e) e = cudaStreamSynchronize(d->stream);
        if (e) {
            fprintf(stderr, "ffn ulp: metric: %s\n", cudaGetErrorString((cudaError_t)e));
            return 2;
        }
        for (int o = 0; o < n_out; o++)
            for (int b = 0; b < FFN__BLOCKS; b++)
                ffn__merge(&st[o], &d->hstats[o * FFN__BLOCKS + b]);
    }
    const double secs = ffn_tool_now() - t0;
    const char *name = kop >= FFN_OP_GLU_FWD ? ffn_glu_name(act) : ffn_act_name(act);
    const char *dir = kop == FFN_OP_ACT_FWD || kop == FFN_OP_GLU_FWD ? "fwd" : "bwd";
    const double bound = ffn_ulp_bound(kop, act, op->sel.accurate);
    int status = 0;
    for (int o = 0; o < n_out; o++) {
        struct ffn_ulpcu_stat *s = &st[o];
        // The largest error again, against MPFR (the oracle call of `ffn ulp`).
        double max = s->max;
        if (s->i_max >= 0) {
            const bool deriv = kop == FFN_OP_ACT_BWD || (kop == FFN_OP_GLU_BWD && o == 0);
            const float f1 =
                kop == FFN_OP_ACT_FWD ? 1.0f : (kop == FFN_OP_GLU_BWD && o == 1 ? s->m2 : s->m1);
            const float f2 = kop == FFN_OP_GLU_BWD && o == 0 ? s->m2 : 1.0f;
            const double exact = ffn_oracle_eval(or, act, deriv, s->x, f1, f2, NULL);
            const float a1 = kop == FFN_OP_GLU_BWD && o == 1 ? s->m2 : s->m1;
            const float a2 = kop == FFN_OP_GLU_BWD && o == 0 ? s->m2 : 1.0f;
            max = ffn_ulp_error(kop, o, act, dt, s->got, exact, s->x, a1, a2);
        }
        const bool pass = max <= bound && s->n_over == 0;
        if (!pass) status = 1;
        const double mean = s->n ? s->sum / (double)s->n : 0,
                     cr = s->n ? (double)s->n_cr / (double)s->n : 0;
        if (op->sel.json) {
            printf(
                "{\"op\":\"%s\",\"dir\":\"%s\",\"out\":\"%s\",\"dtype\":\"%s\",\"isa\":\"cuda\","
                "\"kernel_isa\":\"cuda\",\"backend\":\"cuda\",\"device\":\"%s\",\"accurate\":%s,"
                "\"all\":%s,\"n_inputs\":%lld,\"max_ulp\":",
                name, dir, ffn_ulp_out_name(kop, o), ffn_dtype_name(dt), d->name,
                op->sel.accurate ? "true" : "false", op->sel.all ? "true" : "false",
                (long long)s->n);
            ffn_ulp_json_float(max);
            printf(",\"mean_ulp\":%.6g,\"cr_frac\":%.6f,\"x_at_max\":", mean, cr);
            ffn_ulp_json_float(s->x);
            printf(",\"n_over\":%lld,\"seconds\":%.3f,\"bound\":%g,\"pass\":%s}\n",
                   (long long)s->n_over, secs, bound, pass ? "true" : "false");
        } else {
            printf("%-12s %-4s %-6s %-5s %-22s %11lld %10.3f %9.4f %7.2f %16.9g %6g  %s\n", name,
                   dir, ffn_ulp_out_name(kop, o), ffn_dtype_name(dt), "cuda", (long long)s->n, max,
                   mean, 100 * cr, (double)s->x, bound, pass ? "ok" : "FAIL");
            if (s->n_over)
                printf("    %lld inputs above the bound (by the double reference)\n",
                       (long long)s->n_over);
        }
    }
    if (op->sel.all && dt == FFN_DTYPE_F32 && !op->sel.json)
        fprintf(stderr, "%s %s f32: %lld inputs in %.1f s\n", name, dir, (long long)total, secs);
    fflush(stdout);
    return status;
}

int ffn_cmd_ulp_cuda(int argc, char **argv) {
    struct ffn__opts op;
    const int pst = ffn__parse(argc, argv, &op);
    if (pst >= 0) return pst;
    char why[256];
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why)) {
        fprintf(stderr, "ffn ulp --backend cuda: %s\n", why);
        return 2;
    }
    struct ffn__dev d;
    memset(&d, 0, sizeof d);
    struct ffn_ctx_opts co = FFN_CTX_OPTS_INIT;
    co.backend = FFN_BACKEND_CUDA;
    co.device = op.device;
    co.accuracy = op.sel.accurate ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
    if (cudaSetDevice(op.device) != cudaSuccess || cudaStreamCreate(&d.stream) != cudaSuccess) {
        fprintf(stderr, "ffn ulp: CUDA device %d: %s\n", op.device,
                cudaGetErrorString(cudaGetLastError()));
        return 2;
    }
    co.stream = d.stream;
    if (ffn_ctx_create(&co, &d.ctx) != FFN_STATUS_OK) {
        fprintf(stderr, "ffn ulp: no CUDA context on device %d\n", op.device);
        return 2;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, op.device);
    snprintf(d.name, sizeof d.name, "%s", prop.name);

    // The f32 set of the CPU tool: every stride-th pattern, then the hard regions.
    float *hl = NULL;
    if (!op.sel.all && op.sel.dtype[FFN_DTYPE_F32]) {
        hl = ffn_ulp_f32_list(op.sel.stride, &d.n_list);
        if (!hl) return 2;
    }
    bool ok = true;
    for (int k = 0; k < 3; k++)
        ok = ok && cudaMalloc(k == 0   ? &d.x
                              : k == 1 ? &d.m1
                                       : &d.m2,
                              (size_t)FFN__CHUNK * 4) == cudaSuccess;
    for (int k = 0; k < 2; k++)
        ok = ok && cudaMalloc(&d.out[k], (size_t)FFN__CHUNK * 4) == cudaSuccess;
    ok = ok && cudaMalloc((void **)&d.dstats, 2 * FFN__BLOCKS * sizeof *d.dstats) == cudaSuccess;
    d.hstats = malloc(2 * FFN__BLOCKS * sizeof *d.hstats);
    if (hl) {
        ok = ok && cudaMalloc((void **)&d.list, (size_t)d.n_list * sizeof *hl) == cudaSuccess &&
             cudaMemcpy(d.list, hl, (size_t)d.n_list * sizeof *hl, cudaMemcpyHostToDevice) ==
                 cudaSuccess;
        free(hl);
    }
    if (!ok || !d.hstats) {
        fprintf(stderr, "ffn ulp: out of device memory\n");
        return 2;
    }
    struct ffn_oracle or ;
    ffn_oracle_init(& or);
    if (!op.sel.json) {
        printf("ffn ulp --backend cuda: %s (device %d); f32: %s; contexts %s\n", d.name, op.device,
               op.sel.all ? "all 2^32 inputs" : "strided sweep + hard regions",
               op.sel.accurate ? "FFN_ACCURACY_HIGH" : "FFN_ACCURACY_DEFAULT");
        ffn_ulp_print_columns();
    }
    int status = 0;
    for (int glu = 0; glu < 2 && status != 2; glu++)
        for (int a = 0; a < FFN_ACT_COUNT && status != 2; a++) {
            if (!(glu ? op.sel.glu[a] : op.sel.act[a])) continue;
            for (int dir = 0; dir < 2 && status != 2; dir++) {
                if (!(dir ? op.sel.bwd : op.sel.fwd)) continue;
                for (int t = 0; t < FFN_DTYPE_COUNT && status != 2; t++) {
                    if (!op.sel.dtype[t]) continue;
                    const int r = ffn__row(&op, &d, & or, (enum ffn_op)(glu * 2 + dir),
                                           (enum ffn_act)a, (enum ffn_dtype)t);
                    if (r > status) status = r;
                }
            }
        }
    if (!op.sel.json && status != 2) ffn_ulp_print_verdict(status);
    ffn_oracle_clear(& or);
    ffn_ctx_destroy(d.ctx);
    cudaFree(d.x), cudaFree(d.m1), cudaFree(d.m2), cudaFree(d.out[0]), cudaFree(d.out[1]);
    cudaFree(d.dstats), cudaFree(d.list);
    free(d.hstats);
    cudaStreamDestroy(d.stream);
    return status;
}
