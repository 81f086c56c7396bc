// cmd_ulp.c — `ffn ulp`: accuracy sweep of the activation kernels of every ISA against the
// correctly rounded values, max / mean ulp per (op, dir, output, dtype, ISA), checked against the
// bound table (tools/oracle.c, docs/numerics.md). The exact value of each input comes from the
// double-precision reference (ffn_ref_act / ffn_ref_dact, relative error ~1e-15) and from MPFR
// (tools/oracle.c) whenever it matters: when the double value lies within 2^-20 ulp of a rounding
// boundary of the output type (so "correctly rounded" is decided exactly), and for every error
// that could set a maximum or break a bound (so every reported maximum is MPFR's). --exact asks
// MPFR for every input. Work is split over OpenMP threads in chunks; results do not depend on
// the thread count.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "args.h"
#include "ffn.h"
#include "oracle.h"
#include "tools.h"
#include "ulp_cli.h"

#define FFN__CHUNK ((int64_t)1 << 16)  // inputs per work item
#define FFN__BOUNDARY_MARGIN 0x1p-20   // ulps: closer to a rounding boundary -> MPFR
#define FFN__PROGRESS_S 0.5            // seconds between progress lines
#define FFN__CONFIRM_MIN 0.5           // ulps: smaller maxima need no MPFR confirmation
#define FFN__MAX_ISA 3
#define FFN__ALL_INPUTS ((int64_t)1 << 32)

// Gated ops sweep the gate over the inputs; up and dh cycle through these values (exact in
// bf16 and f16). The unary backward uses dy = 1: it measures act' itself.
static const float ffn__ups[] = {1.0f, -0.75f, 2.5f, 0.0078125f};
static const float ffn__dhs[] = {1.0f, -1.25f, 0.375f};
#define FFN__N_UP 4
#define FFN__N_DH 3

struct ffn__opts {
    struct ffn_ulp_sel sel;
    enum ffn_isa isas[FFN__MAX_ISA];
    int n_isa;
    bool exact;
    int threads;
};

struct ffn__stat {
    int64_t n, n_cr;
    double max, sum;
    float x_at_max;
};

static void ffn__stat_merge(struct ffn__stat *into, const struct ffn__stat *s) {
    if (s->n && (s->max > into->max || into->n == 0)) {
        into->max = s->max;
        into->x_at_max = s->x_at_max;
    }
    into->n += s->n;
    into->n_cr += s->n_cr;
    into->sum += s->sum;
}

static int ffn__thread_num(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

// --- one job: an op family, an activation and a dtype, over every selected ISA ---------------

struct ffn__job {
    enum ffn_op op;
    enum ffn_act act;
    enum ffn_dtype dt;
    const float *list;  // the inputs, or NULL for all 2^32 f32 patterns
    int64_t n;
};

struct ffn__worker {
    ffn_ctx_t ctx[FFN__MAX_ISA];
    struct ffn_oracle oracle;
    bool oracle_ready;
    void *x, *m1s, *m2s, *out[FFN__MAX_ISA][2];
    float *xf, *m1, *m2;
};

// The factors of element i: (dy) = 1; (up) cycles; (up, dh) cycle.
static void ffn__factors_of(enum ffn_op op, int64_t i, float *m1, float *m2) {
    *m1 = op == FFN_OP_ACT_FWD || op == FFN_OP_ACT_BWD ? 1.0f : ffn__ups[i % FFN__N_UP];
    *m2 = op == FFN_OP_GLU_BWD ? ffn__dhs[i % FFN__N_DH] : 1.0f;
}

// The reference value in double and the oracle call of output o.
static double ffn__ref(const struct ffn__job *j, int o, float x, float m1, float m2) {
    switch (j->op) {
    case FFN_OP_ACT_FWD: return ffn_ref_act(j->act, x);
    case FFN_OP_ACT_BWD: return (double)m1 * ffn_ref_dact(j->act, x);
    case FFN_OP_GLU_FWD: return ffn_ref_act(j->act, x) * (double)m1;
    default:
        return o == 0 ? (double)m2 * (double)m1 * ffn_ref_dact(j->act, x)
                      : (double)m2 * ffn_ref_act(j->act, x);
    }
}

static double ffn__exact(struct ffn_oracle * or, const struct ffn__job *j, int o, float x, float m1,
                         float m2) {
    switch (j->op) {
    case FFN_OP_ACT_FWD: return ffn_oracle_eval(or, j->act, false, x, 1.0f, 1.0f, NULL);
    case FFN_OP_ACT_BWD: return ffn_oracle_eval(or, j->act, true, x, m1, 1.0f, NULL);
    case FFN_OP_GLU_FWD: return ffn_oracle_eval(or, j->act, false, x, m1, 1.0f, NULL);
    default:
        return o == 0 ? ffn_oracle_eval(or, j->act, true, x, m1, m2, NULL)
                      : ffn_oracle_eval(or, j->act, false, x, m2, 1.0f, NULL);
    }
}

// The ulp-metric factors of output o (see ffn_ulp_error).
static void ffn__metric_factors(enum ffn_op op, int o, float m1, float m2, float *a1, float *a2) {
    *a1 = op == FFN_OP_GLU_BWD && o == 1 ? m2 : m1;
    *a2 = op == FFN_OP_GLU_BWD && o == 0 ? m2 : 1.0f;
}

static enum ffn_status ffn__run_kernel(ffn_ctx_t ctx, const struct ffn__job *j,
                                       struct ffn__worker *w, int c, int64_t n) {
    const struct ffn_tensor tx = ffn_tensor_vec(w->x, j->dt, n);
    const struct ffn_tensor t1 = ffn_tensor_vec(w->m1s, j->dt, n);
    const struct ffn_tensor t2 = ffn_tensor_vec(w->m2s, j->dt, n);
    const struct ffn_tensor o0 = ffn_tensor_vec(w->out[c][0], j->dt, n);
    const struct ffn_tensor o1 = ffn_tensor_vec(w->out[c][1], j->dt, n);
    switch (j->op) {
    case FFN_OP_ACT_FWD: return ffn_act_forward(ctx, j->act, &o0, &tx);
    case FFN_OP_ACT_BWD: return ffn_act_backward(ctx, j->act, &o0, &tx, &t1);
    case FFN_OP_GLU_FWD: return ffn_glu_forward(ctx, j->act, &o0, &tx, &t1);
    default: return ffn_glu_backward(ctx, j->act, &o0, &o1, &tx, &t1, &t2);
    }
}

static void ffn__worker_free(struct ffn__worker *w, int n_isa) {
    for (int c = 0; c < n_isa; c++) {
        ffn_ctx_destroy(w->ctx[c]);
        free(w->out[c][0]);
        free(w->out[c][1]);
    }
    if (w->oracle_ready) ffn_oracle_clear(&w->oracle);
    free(w->x), free(w->m1s), free(w->m2s), free(w->xf), free(w->m1), free(w->m2);
    memset(w, 0, sizeof *w);
}

// One thread's contexts and buffers, made (and checked) by the main thread before the parallel
// region, so that a failure is reported instead of crashing a worker. False when any failed.
static bool ffn__worker_make(const struct ffn__opts *op, struct ffn__worker *w) {
    memset(w, 0, sizeof *w);
    bool ok = true;
    for (int c = 0; c < op->n_isa; c++) {
        struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
        o.force_isa = op->isas[c];
        o.n_threads = 1;
        o.accuracy = op->sel.accurate ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
        ok = ok && ffn_ctx_create(&o, &w->ctx[c]) == FFN_STATUS_OK;
        for (int k = 0; k < 2; k++) ok = ok && (w->out[c][k] = malloc((size_t)FFN__CHUNK * 4));
    }
    void *b[6];
    for (int k = 0; k < 6; k++) ok = (b[k] = malloc((size_t)FFN__CHUNK * 4)) && ok;
    w->x = b[0], w->m1s = b[1], w->m2s = b[2], w->xf = b[3], w->m1 = b[4], w->m2 = b[5];
    if (ok) {
        ffn_oracle_init(&w->oracle);
        w->oracle_ready = true;
    }
    return ok;
}

// Sweeps one job; stats[c][o] receive the results. Returns 0, or 2 on a failed call.
static int ffn__sweep(const struct ffn__opts *op, const struct ffn__job *j,
                      struct ffn__stat stats[FFN__MAX_ISA][2], const char *title) {
    const int n_out = j->op == FFN_OP_GLU_BWD ? 2 : 1;
    const double bound = ffn_ulp_bound(j->op, j->act, op->sel.accurate);
    const int64_t n_chunks = (j->n + FFN__CHUNK - 1) / FFN__CHUNK;
    const bool progress = op->sel.all && j->dt == FFN_DTYPE_F32;
    const double t0 = ffn_tool_now();
    int64_t done = 0;
    int failed = 0;
    // Every thread's state, made here: op->threads is bounded by the option parser.
    struct ffn__worker *ws = calloc((size_t)op->threads, sizeof *ws);
    int made = 0;
    while (ws && made < op->threads && ffn__worker_make(op, &ws[made])) made++;
    if (!ws || made < op->threads) {
        fprintf(stderr,
                "ffn ulp: out of memory for the contexts and buffers of thread %d of %d "
                "(%.1f MiB each); use fewer --threads\n",
                made + 1, op->threads, (double)(6 + 2 * op->n_isa) * FFN__CHUNK * 4 / (1 << 20));
        if (ws && made < op->threads) ffn__worker_free(&ws[made], op->n_isa);
        for (int t = 0; t < made; t++) ffn__worker_free(&ws[t], op->n_isa);
        free(ws);
        return 2;
    }
#pragma omp parallel num_threads(op->threads)
    {
        struct ffn__worker *w = &ws[ffn__thread_num()];  // < op->threads
        struct ffn__stat local[FFN__MAX_ISA][2] = {{{0}}};
#pragma omp for schedule(dynamic)
        for (int64_t k = 0; k < n_chunks; k++) {
            const int64_t i0 = k * FFN__CHUNK;
            const int64_t n = j->n - i0 < FFN__CHUNK ? j->n - i0 : FFN__CHUNK;
            for (int64_t i = 0; i < n; i++) {
                const float v = j->list ? j->list[i0 + i] : ffn_f32_from_bits((uint32_t)(i0 + i));
                float m1, m2;
                ffn__factors_of(j->op, i0 + i, &m1, &m2);
                ffn_tool_store_f32(w->x, j->dt, i, v);
                ffn_tool_store_f32(w->m1s, j->dt, i, m1);
                ffn_tool_store_f32(w->m2s, j->dt, i, m2);
                w->xf[i] = ffn_tool_load_f32(w->x, j->dt, i);
                w->m1[i] = ffn_tool_load_f32(w->m1s, j->dt, i);
                w->m2[i] = ffn_tool_load_f32(w->m2s, j->dt, i);
            }
            for (int c = 0; c < op->n_isa; c++)
                if (ffn__run_kernel(w->ctx[c], j, w, c, n) != FFN_STATUS_OK) {
#pragma omp critical
                    fprintf(stderr, "ffn ulp: %s\n", ffn_ctx_last_error(w->ctx[c]));
#pragma omp atomic write
                    failed = 2;
                }
            for (int64_t i = 0; i < n; i++)
                for (int o = 0; o < n_out; o++) {
                    const float x = w->xf[i];
                    float a1, a2;
                    ffn__metric_factors(j->op, o, w->m1[i], w->m2[i], &a1, &a2);
                    bool mpfr = op->exact;
                    double exact = mpfr ? ffn__exact(&w->oracle, j, o, x, w->m1[i], w->m2[i])
                                        : ffn__ref(j, o, x, w->m1[i], w->m2[i]);
                    if (!mpfr && ffn_near_rounding_boundary(exact, j->dt, FFN__BOUNDARY_MARGIN)) {
                        exact = ffn__exact(&w->oracle, j, o, x, w->m1[i], w->m2[i]);
                        mpfr = true;
                    }
                    for (int c = 0; c < op->n_isa; c++) {
                        const float got = ffn_tool_load_f32(w->out[c][o], j->dt, i);
                        double err = ffn_ulp_error(j->op, o, j->act, j->dt, got, exact, x, a1, a2);
                        struct ffn__stat *s = &local[c][o];
                        // A candidate maximum above FFN__CONFIRM_MIN, or a broken bound: MPFR.
                        if (!mpfr && ((err > s->max && err > FFN__CONFIRM_MIN) || err > bound)) {
                            exact = ffn__exact(&w->oracle, j, o, x, w->m1[i], w->m2[i]);
                            mpfr = true;
                            err = ffn_ulp_error(j->op, o, j->act, j->dt, got, exact, x, a1, a2);
                        }
                        if (err > s->max || s->n == 0) {
                            s->max = err;
                            s->x_at_max = x;
                        }
                        s->n++;
                        s->sum += err < FFN_ULP_HUGE ? err : 0;
                        const double cr = ffn_round_double(exact, j->dt);
                        s->n_cr += (isnan(cr) && isnan(got)) || (double)got == cr;
                    }
                }
#pragma omp atomic
            done++;
            if (progress && ffn__thread_num() == 0) {
                static double last;  // only thread 0 touches it
                const double t = ffn_tool_now();
                if (t - last > FFN__PROGRESS_S) {
                    last = t;
                    int64_t d;
#pragma omp atomic read
                    d = done;
                    const double frac = (double)d / (double)n_chunks;
                    const double eta = frac > 0 ? (t - t0) * (1 - frac) / frac : 0;
                    char bar[41];
                    for (int b = 0; b < 40; b++) bar[b] = b < (int)(frac * 40) ? '#' : '.';
                    bar[40] = '\0';
                    fprintf(stderr, "\r%-28s [%s] %5.1f%%  ETA %dm%02ds ", title, bar, 100 * frac,
                            (int)eta / 60, (int)eta % 60);
                }
            }
        }
#pragma omp critical
        for (int c = 0; c < op->n_isa; c++)
            for (int o = 0; o < n_out; o++) ffn__stat_merge(&stats[c][o], &local[c][o]);
    }
    for (int t = 0; t < made; t++) ffn__worker_free(&ws[t], op->n_isa);
    free(ws);
    if (progress) fprintf(stderr, "\r%-28s done in %.1f s%40s\n", title, ffn_tool_now() - t0, "");
    return failed;
}

// --- output ------------------------------------------------------------------------------------

static void ffn__print_row(const struct ffn__opts *op, const struct ffn__job *j, int o,
                           enum ffn_isa isa, enum ffn_isa kernel_isa, const struct ffn__stat *s) {
    const char *name = j->op >= FFN_OP_GLU_FWD ? ffn_glu_name(j->act) : ffn_act_name(j->act);
    const char *dir = j->op == FFN_OP_ACT_FWD || j->op == FFN_OP_GLU_FWD ? "fwd" : "bwd";
    const double bound = ffn_ulp_bound(j->op, j->act, op->sel.accurate);
    const double mean = s->n ? s->sum / (double)s->n : 0,
                 cr = s->n ? (double)s->n_cr / (double)s->n : 0;
    const bool pass = s->max <= bound;
    if (op->sel.json) {
        printf(
            "{\"op\":\"%s\",\"dir\":\"%s\",\"out\":\"%s\",\"dtype\":\"%s\",\"isa\":\"%s\","
            "\"kernel_isa\":\"%s\",\"accurate\":%s,\"n_inputs\":%lld,\"max_ulp\":",
            name, dir, ffn_ulp_out_name(j->op, o), ffn_dtype_name(j->dt), ffn_isa_name(isa),
            ffn_isa_name(kernel_isa), op->sel.accurate ? "true" : "false", (long long)s->n);
        ffn_ulp_json_float(s->max);
        printf(",\"mean_ulp\":%.6g,\"cr_frac\":%.6f,\"x_at_max\":", mean, cr);
        ffn_ulp_json_float(s->x_at_max);
        printf(",\"bound\":%g,\"pass\":%s}\n", bound, pass ? "true" : "false");
    } else {
        char isa_s[40];
        if (kernel_isa == isa)
            snprintf(isa_s, sizeof isa_s, "%s", ffn_isa_name(isa));
        else
            snprintf(isa_s, sizeof isa_s, "%s (%s kernel)", ffn_isa_name(isa),
                     ffn_isa_name(kernel_isa));
        printf("%-12s %-4s %-6s %-5s %-22s %11lld %10.3f %9.4f %7.2f %16.9g %6g  %s\n", name, dir,
               ffn_ulp_out_name(j->op, o), ffn_dtype_name(j->dt), isa_s, (long long)s->n, s->max,
               mean, 100 * cr, (double)s->x_at_max, bound, pass ? "ok" : "FAIL");
    }
}

static void ffn__usage(FILE *f) {
    fprintf(
        f,
        "usage: ffn ulp [--op OP]... [--dir fwd|bwd] [--dtype f32|bf16|f16]... [--isa ISA|all]\n"
        "               [--accurate] [--all] [--threads T] [--stride N] [--exact] [--json]\n"
        "       ffn ulp --backend cuda [...]   the CUDA kernels, swept on the GPU (--backend\n"
        "               cuda --help)\n"
        "\n"
        "Accuracy of the activation kernels against the correctly rounded value (MPFR), in ulps\n"
        "of the output dtype, per op, direction, output, dtype and ISA; checked against the\n"
        "bounds of docs/numerics.md. Exit status 0 when every row is within its bound, 1 when\n"
        "one is not, 2 on bad usage.\n"
        "\n"
        "  --op OP       an activation (gelu_tanh gelu_erf silu relu sigmoid identity quick_gelu)\n"
        "                or a gated op (geglu_tanh geglu_erf swiglu reglu glu bilinear\n"
        "                quick_geglu); repeatable; default: all of them\n"
        "  --dir D       fwd or bwd (default both). bwd of an activation: dx = dy·act'(x), dy = "
        "1;\n"
        "                gated ops sweep the gate, with up cycling through {1, -0.75, 2.5,\n"
        "                0.0078125} and dh through {1, -1.25, 0.375}\n"
        "  --dtype T     f32, bf16 or f16 (inputs and outputs); repeatable; default all.\n"
        "                bf16/f16: all 65,536 inputs. f32: every N-th bit pattern (--stride,\n"
        "                default %u: 1,049,345 inputs) plus the hard regions\n"
        "  --all         f32: every one of the 2^32 inputs (minutes per op; progress on stderr)\n"
        "  --isa ISA     scalar, avx2, avx512 or all (default: all this CPU supports)\n"
        "  --accurate    contexts with FFN_ACCURACY_HIGH (GeLU bounds 2 ulp instead of 4)\n"
        "  --threads T   OpenMP threads for the sweep (default: all)\n"
        "  --exact       MPFR for every input (default: the double reference, and MPFR near\n"
        "                rounding boundaries and for every candidate maximum)\n"
        "  --json        one JSON object per row: op, dir, out, dtype, isa, kernel_isa,\n"
        "                accurate, n_inputs, max_ulp, mean_ulp, cr_frac, x_at_max, bound, pass\n"
        "\n"
        "Columns: n_inputs, max_ulp, mean_ulp, cr%% (results equal to the correctly rounded\n"
        "value), x_at_max (the input, or gate, of the largest error). Backward errors near a\n"
        "zero of act' are absolute, in ulps of act's largest term (docs/numerics.md).\n",
        FFN_ULP_DEFAULT_STRIDE);
}

static int ffn__max_threads(void) {
#ifdef _OPENMP
    const int n = omp_get_num_procs();
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

static int ffn__parse(int argc, char **argv, struct ffn__opts *op) {
    *op = (struct ffn__opts){0};
    ffn_ulp_sel_init(&op->sel);
#ifdef _OPENMP
    op->threads = omp_get_max_threads();
#else
    op->threads = 1;
#endif
    bool isa_all = true;
    enum ffn_isa isa_one = FFN_ISA_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const int taken = ffn_ulp_sel_option(&op->sel, argc, argv, &i);
        if (taken < 0) return 2;
        if (taken) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--isa") && v) {
            isa_all = !strcmp(v, "all");
            if (!isa_all &&
                (ffn_isa_from_name(v, &isa_one) != FFN_STATUS_OK || isa_one == FFN_ISA_AUTO)) {
                fprintf(stderr, "ffn ulp: --isa takes scalar, avx2, avx512 or all, not '%s'\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            // At most the processors this process may use: more only costs memory (each thread
            // holds its own contexts, buffers and MPFR state) and the results do not change.
            if (!ffn_arg_int("ulp", a, v, 1, ffn__max_threads(), &op->threads)) return 2;
            i++;
        } else if (!strcmp(a, "--exact")) {
            op->exact = true;
        } else {
            fprintf(stderr, "ffn ulp: unknown or incomplete option '%s' (ffn ulp --help)\n", a);
            return 2;
        }
    }
    ffn_ulp_sel_finish(&op->sel);
    if (isa_all) {
        for (int k = FFN_ISA_SCALAR; k < FFN_ISA_COUNT; k++)
            if (ffn_isa_supported((enum ffn_isa)k)) op->isas[op->n_isa++] = (enum ffn_isa)k;
    } else {
        if (!ffn_isa_supported(isa_one)) {
            fprintf(stderr, "ffn ulp: ISA %s is not supported by this CPU or build\n",
                    ffn_isa_name(isa_one));
            return 2;
        }
        op->isas[op->n_isa++] = isa_one;
    }
    return -1;  // go on
}

int ffn_cmd_ulp(int argc, char **argv) {
    enum ffn_backend be;
    if (ffn_tool_backend(argc, argv, "ffn ulp", &be)) return 2;
    if (be == FFN_BACKEND_CUDA) return ffn_cmd_ulp_cuda(argc, argv);
    struct ffn__opts op;
    const int st = ffn__parse(argc, argv, &op);
    if (st >= 0) return st;

    // The f32 input set (bf16/f16: generated per job).
    float *f32_list = NULL, *list16 = malloc(65536 * sizeof *list16);
    int64_t n_f32 = FFN__ALL_INPUTS;
    if (!op.sel.all && op.sel.dtype[FFN_DTYPE_F32]) {
        f32_list = ffn_ulp_f32_list(op.sel.stride, &n_f32);
        if (!f32_list) {
            fprintf(stderr, "ffn ulp: out of memory\n");
            free(list16);
            return 2;
        }
    }
    if (!op.sel.json) {
        printf("ffn ulp: %s inputs; contexts %s%s, %d threads\n",
               op.sel.all ? "f32: all 2^32" : "f32: strided sweep + hard regions",
               op.sel.accurate ? "FFN_ACCURACY_HIGH" : "FFN_ACCURACY_DEFAULT",
               op.exact ? ", MPFR for every input" : "", op.threads);
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
                    struct ffn__job j = {.op = (enum ffn_op)(glu * 2 + dir),
                                         .act = (enum ffn_act)a,
                                         .dt = (enum ffn_dtype)t};
                    if (j.dt == FFN_DTYPE_F32) {
                        j.list = f32_list;
                        j.n = n_f32;
                    } else {
                        for (int i = 0; i < 65536; i++)
                            list16[i] = j.dt == FFN_DTYPE_BF16 ? ffn_bf16_to_f32((uint16_t)i)
                                                               : ffn_f16_to_f32((uint16_t)i);
                        j.list = list16;
                        j.n = 65536;
                    }
                    struct ffn__stat stats[FFN__MAX_ISA][2] = {{{0}}};
                    char title[64];
                    snprintf(title, sizeof title, "%s %s %s",
                             glu ? ffn_glu_name(j.act) : ffn_act_name(j.act), dir ? "bwd" : "fwd",
                             ffn_dtype_name(j.dt));
                    if (ffn__sweep(&op, &j, stats, title)) {
                        status = 2;
                        break;
                    }
                    // Which ISA's kernel serves the entry in each context.
                    for (int c = 0; c < op.n_isa; c++) {
                        struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
                        o.force_isa = op.isas[c];
                        ffn_ctx_t ctx;
                        enum ffn_isa kisa = op.isas[c];
                        if (ffn_ctx_create(&o, &ctx) == FFN_STATUS_OK) {
                            kisa = ffn_ctx_kernel_isa(ctx, j.op, j.act);
                            ffn_ctx_destroy(ctx);
                        }
                        for (int out = 0; out < (j.op == FFN_OP_GLU_BWD ? 2 : 1); out++) {
                            ffn__print_row(&op, &j, out, op.isas[c], kisa, &stats[c][out]);
                            if (stats[c][out].max > ffn_ulp_bound(j.op, j.act, op.sel.accurate))
                                status = 1;
                        }
                    }
                    fflush(stdout);
                }
            }
        }
    free(f32_list);
    free(list16);
    if (!op.sel.json && status != 2) ffn_ulp_print_verdict(status);
    return status;
}
