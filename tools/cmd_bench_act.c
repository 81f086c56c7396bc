// cmd_bench_act.c — `ffn bench act`: throughput of the activation entry points (unary and gated,
// forward and backward, f32 / bf16) through the public API, as GB/s over the minimum bytes moved
// and as a ratio to a STREAM-style triad measured in the same process, one triad run just before
// each timed rep of the op (the bandwidth of this shared host drifts). Text table by default, JSON
// lines with --json (read by bench/compare.py next to bench/torch_act.py's rows). Not a correctness
// test: results are not checked here (tests/cpu does that); a failing call is reported and stops
// the run.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "args.h"
#include "ffn.h"
#include "tools.h"

// --- parameters ----------------------------------------------------------------------------------
// Default sizes: 16,384 (in L1/L2), 512 x 3072 (GPT-2-small FFN at sequence 512, inside L3),
// 32M (far out of cache: 128 MiB per f32 tensor).
static const int64_t ffn__default_ns[] = {16384, 512 * 3072, (int64_t)32 << 20};
#define FFN__QUICK_N ((int64_t)512 * 3072)
#define FFN__MAX_LIST 16               // entries in a --n / --threads list
#define FFN__MAX_N ((int64_t)1 << 30)  // sanity cap (8 buffers of n floats are allocated)
#define FFN__REP_MIN_S 2e-4            // a timed rep lasts at least this (calls are batched)
#define FFN__ROW_BUDGET_S 0.08         // auto reps: about this much timed work per row
#define FFN__TRIAD_BUDGET_S 0.04       // and per triad measurement
#define FFN__MIN_REPS 5                // auto reps: at least (median of 5)
#define FFN__MAX_REPS 60               // auto reps: at most
#define FFN__QUICK_REPS 3              // --quick: reps per row (and auto reps of slow calls)
#define FFN__SLOW_CALL_S 0.1           // auto reps: a call this slow gets FFN__QUICK_REPS reps
#define FFN__REPS_CAP 1000             // --reps: at most
#define FFN__TRIAD_SCALAR 3.0f         // STREAM's q
#define FFN__SEED 0x5eedf00dULL
#define FFN__FILL_BLOCK ((int64_t)1 << 16)  // random fill: one PRNG stream per block
#define FFN__WIDE 20.0                      // worst-case set: uniform on [-20, 20]
#define FFN__TWO_PI 6.28318530717958647692

enum ffn__dist { FFN__DIST_NORMAL = 0, FFN__DIST_WIDE, FFN__DIST_COUNT };
static const char *const ffn__dist_names[FFN__DIST_COUNT] = {"normal", "wide"};

struct ffn__opts {
    bool unary[FFN_ACT_COUNT];  // which unary ops run
    bool glu[FFN_ACT_COUNT];    // which gated ops run
    bool fwd, bwd;
    bool dtypes[FFN_DTYPE_COUNT];
    bool dists[FFN__DIST_COUNT];
    int64_t ns[FFN__MAX_LIST];
    int n_ns;
    int threads[FFN__MAX_LIST];
    int n_threads;
    enum ffn_isa isa;
    int reps;  // 0: automatic
    bool quick, accurate, json;
    bool huge;  // buffers on transparent huge pages (--pages huge, the default)
};

// Host description for the header and every JSON row.
struct ffn__host {
    char cpu[256];
    double mhz;  // 0 when unknown
};

// --- small helpers -------------------------------------------------------------------------------
static int ffn__cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Writes s as a JSON string (quotes, backslashes and control characters escaped).
static void ffn__json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

// --- inputs: deterministic random fill -----------------------------------------------------------
// splitmix64: a tiny, well-mixed generator; one independent stream per block of the buffer so the
// fill can run on several threads and still be the same for any thread count.
static uint64_t ffn__splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Uniform on (0, 1): 53 random bits, never 0 (log() below).
static double ffn__unit(uint64_t *s) { return ((double)(ffn__splitmix(s) >> 11) + 0.5) * 0x1p-53; }

// p[i] = v, rounded to f32 and then (bf16, f16) to nearest even.
static void ffn__store(void *p, enum ffn_dtype dtype, int64_t i, double v) {
    const float x = (float)v;
    switch (dtype) {
    case FFN_DTYPE_F32: ((float *)p)[i] = x; break;
    case FFN_DTYPE_BF16: ((uint16_t *)p)[i] = ffn_f32_to_bf16(x); break;
    default: ((uint16_t *)p)[i] = ffn_f32_to_f16(x); break;
    }
}

// Fills n elements of `dtype` at p: N(0, 1) (Box-Muller: r = sqrt(-2 ln u1), x = r cos 2πu2,
// r sin 2πu2) or uniform on [-FFN__WIDE, FFN__WIDE]. bf16/f16 values are the rounded f32 draws.
static void ffn__fill(void *p, enum ffn_dtype dtype, int64_t n, enum ffn__dist dist,
                      uint64_t seed) {
    const int64_t blocks = (n + FFN__FILL_BLOCK - 1) / FFN__FILL_BLOCK;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        uint64_t s = seed ^ ((uint64_t)b * 0xd1b54a32d192ed03ULL);
        const int64_t lo = b * FFN__FILL_BLOCK;
        const int64_t hi = lo + FFN__FILL_BLOCK < n ? lo + FFN__FILL_BLOCK : n;
        if (dist == FFN__DIST_WIDE) {
            for (int64_t i = lo; i < hi; i++)
                ffn__store(p, dtype, i, FFN__WIDE * (2.0 * ffn__unit(&s) - 1.0));
            continue;
        }
        // Box-Muller gives two independent normals per pair of uniforms: r cos θ and r sin θ.
        for (int64_t i = lo; i < hi; i += 2) {
            const double r = sqrt(-2.0 * log(ffn__unit(&s)));
            const double th = FFN__TWO_PI * ffn__unit(&s);
            ffn__store(p, dtype, i, r * cos(th));
            if (i + 1 < hi) ffn__store(p, dtype, i + 1, r * sin(th));
        }
    }
}

// --- STREAM triad: a[i] = b[i] + q*c[i], 12 bytes per element counted ----------------------------
// One contiguous slice per thread (as STREAM's static schedule). The slice is compiled for the
// widest vector ISA the CPU has (target_clones), so the in-cache triad is not held back by the
// tool's baseline SSE2 build; plain stores, as STREAM compiled without special flags.
__attribute__((target_clones("avx512f", "avx2", "default"))) static void ffn__triad_slice(
    float *restrict a, const float *restrict b, const float *restrict c, float q, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; i++) a[i] = b[i] + q * c[i];
}

struct ffn__triad {
    float *a, *b, *c;
    int64_t n;
    int threads;
};

static void ffn__triad_run(const struct ffn__triad *t) {
    const int nt = t->threads;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int id = 0, cnt = 1;
#ifdef _OPENMP
        id = omp_get_thread_num();
        cnt = omp_get_num_threads();
#endif
        const int64_t lo = t->n * id / cnt, hi = t->n * (id + 1) / cnt;
        ffn__triad_slice(t->a + lo, t->b + lo, t->c + lo, FFN__TRIAD_SCALAR, hi - lo);
    }
}

// --- one op call ---------------------------------------------------------------------------------
struct ffn__case {
    ffn_ctx_t ctx;
    enum ffn_act act;
    bool glu, bwd;
    struct ffn_tensor out[2], in[3];
};

static enum ffn_status ffn__case_run(const struct ffn__case *c) {
    return ffn_tool_act_call(c->ctx, c->act, c->glu, c->bwd, c->out, c->in);
}

// --- timing --------------------------------------------------------------------------------------
// A measured thing: either an op call (returns its status) or the triad (always OK).
struct ffn__target {
    const struct ffn__case *op;  // NULL: the triad
    const struct ffn__triad *triad;
};

static enum ffn_status ffn__target_call(const struct ffn__target *t) {
    if (t->op) return ffn__case_run(t->op);
    ffn__triad_run(t->triad);
    return FFN_STATUS_OK;
}

struct ffn__timing {
    double median_s, min_s;  // per call
    int reps, inner;
};

// The row's measurement: the triad and the op in interleaved reps (triad, op, triad, op, ...), so
// that each op rep has a triad measured just before it and a change of the machine's bandwidth
// during the row (other tenants of a shared host) moves both. Two warm-up calls of each (caches,
// TLB, branch predictors, OpenMP pool; the second, warm one gives the cost estimate), calls batched
// so that a timed rep lasts at least FFN__REP_MIN_S; reps from the op's budget plus the triad's (at
// least min_reps pairs, or reps_req). Fills both timings and *ratio, the median of the per-pair
// ratios (op bytes / op time) / (triad bytes / triad time).
static enum ffn_status ffn__time_pair(const struct ffn__target *tri, const struct ffn__target *op,
                                      int reps_req, int min_reps, double tri_bytes, double op_bytes,
                                      struct ffn__timing *tt, struct ffn__timing *to,
                                      double *ratio) {
    const struct ffn__target *tg[2] = {tri, op};
    double est[2];
    int inner[2];
    enum ffn_status st;
    for (int k = 0; k < 2; k++) {
        if ((st = ffn__target_call(tg[k]))) return st;
        const double t0 = ffn_tool_now();
        if ((st = ffn__target_call(tg[k]))) return st;
        est[k] = ffn_tool_now() - t0;
        if (est[k] < 1e-9) est[k] = 1e-9;
        inner[k] = est[k] < FFN__REP_MIN_S ? (int)ceil(FFN__REP_MIN_S / est[k]) : 1;
    }
    int reps = reps_req;
    if (reps <= 0) {
        if (est[1] > FFN__SLOW_CALL_S && min_reps > FFN__QUICK_REPS) min_reps = FFN__QUICK_REPS;
        const double r =
            (FFN__ROW_BUDGET_S + FFN__TRIAD_BUDGET_S) / (est[0] * inner[0] + est[1] * inner[1]);
        reps = r < min_reps ? min_reps : r > FFN__MAX_REPS ? FFN__MAX_REPS : (int)r;
    }
    if (reps > FFN__REPS_CAP) reps = FFN__REPS_CAP;
    static double times[2][FFN__REPS_CAP], ratios[FFN__REPS_CAP];
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < 2; k++) {
            const double t0 = ffn_tool_now();
            for (int i = 0; i < inner[k]; i++)
                if ((st = ffn__target_call(tg[k]))) return st;
            times[k][r] = (ffn_tool_now() - t0) / inner[k];
        }
        ratios[r] = (op_bytes / times[1][r]) / (tri_bytes / times[0][r]);
    }
    struct ffn__timing *out[2] = {tt, to};
    for (int k = 0; k < 2; k++) {
        qsort(times[k], (size_t)reps, sizeof times[k][0], ffn__cmp_double);
        out[k]->median_s =
            reps % 2 ? times[k][reps / 2] : 0.5 * (times[k][reps / 2 - 1] + times[k][reps / 2]);
        out[k]->min_s = times[k][0];
        out[k]->reps = reps;
        out[k]->inner = inner[k];
    }
    qsort(ratios, (size_t)reps, sizeof ratios[0], ffn__cmp_double);
    *ratio = reps % 2 ? ratios[reps / 2] : 0.5 * (ratios[reps / 2 - 1] + ratios[reps / 2]);
    return FFN_STATUS_OK;
}

// --- option parsing ------------------------------------------------------------------------------
static void ffn__usage(FILE *f) {
    fprintf(
        f,
        "usage: ffn bench act [options]\n"
        "  Throughput of every activation and its gated combine, forward and backward, as GB/s\n"
        "  over the minimum bytes moved (each input read once, each output written once) and\n"
        "  as a ratio to a STREAM triad (a = b + q*c, 12 B/element, same n, same threads)\n"
        "  measured just before each row.\n"
        "options:\n"
        "  --op OP|all          activation (gelu_tanh gelu_erf silu relu sigmoid identity\n"
        "                       quick_gelu) or gated name (swiglu geglu_tanh ...); default all\n"
        "  --dir fwd|bwd|all    direction (default all)\n"
        "  --glu|--unary|--both gated, plain or both forms (default both)\n"
        "  --dtype f32|bf16|f16|all   input = output dtype (default all: f32 and bf16)\n"
        "  --n N[,N...]|all     element counts (default 16384,1572864,33554432)\n"
        "  --threads T[,T...]|all     thread counts (default 1,2)\n"
        "  --isa ISA            auto scalar avx2 avx512 (default auto)\n"
        "  --dist normal|wide|all     x/gate ~ N(0,1) or uniform[-20,20] (default all);\n"
        "                       up, dy, dh ~ N(0,1)\n"
        "  --reps R             timed reps per row (default: automatic, >= %d)\n"
        "  --quick              n=1572864, 1 thread, f32, normal, %d reps (for make demo)\n"
        "  --accurate           FFN_ACCURACY_HIGH kernels\n"
        "  --pages huge|4k      buffers (the triad's too) advised onto 2 MiB transparent huge\n"
        "                       pages (default), or left on the default 4 KiB pages\n"
        "  --json               one JSON object per line (first line: the host header)\n"
        "  --backend cpu|cuda   cuda: the GPU kernels against a same-run device copy\n"
        "                       (ffn bench act --backend cuda --help)\n",
        FFN__MIN_REPS, FFN__QUICK_REPS);
}

// "--name value" or "--name=value"; advances *i past the value. NULL when `a` is not --name.
static const char *ffn__optval(int argc, char **argv, int *i, const char *name, bool *missing) {
    const size_t len = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, len)) return NULL;
    if (a[len] == '=') return a + len + 1;
    if (a[len] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

// Parses "all" (-> the defaults) or a comma list of positive integers no larger than max.
static bool ffn__parse_list(const char *s, int64_t max, int64_t *vals, int *count,
                            const int64_t *defaults, int n_defaults) {
    if (!strcmp(s, "all")) {
        for (int k = 0; k < n_defaults; k++) vals[k] = defaults[k];
        *count = n_defaults;
        return true;
    }
    *count = 0;
    for (;;) {  // each comma-separated piece through the tool's one checked parser
        if (*count >= FFN__MAX_LIST) return false;
        const char *comma = strchr(s, ',');
        char piece[32];
        const size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len >= sizeof piece) return false;
        memcpy(piece, s, len);
        piece[len] = '\0';
        if (ffn_arg_parse_i64(piece, 1, max, &vals[*count]) != FFN_ARG_OK) return false;
        (*count)++;
        if (!comma) break;
        s = comma + 1;
    }
    return *count > 0;
}

static int ffn__parse(int argc, char **argv, struct ffn__opts *o) {
    bool act_sel[FFN_ACT_COUNT], glu_only[FFN_ACT_COUNT] = {false};
    bool want_unary = true, want_glu = true, any_dtype = false, reps_set = false;
    bool threads_set = false, ns_set = false, dtype_set = false, dist_set = false;
    for (int a = 0; a < FFN_ACT_COUNT; a++) act_sel[a] = true;
    memset(o, 0, sizeof *o);
    o->huge = true;
    o->fwd = o->bwd = true;
    o->isa = FFN_ISA_AUTO;
    const int64_t default_threads[] = {1, 2};
    int64_t tmp[FFN__MAX_LIST];

    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return -1;
        } else if ((v = ffn__optval(argc, argv, &i, "--op", &missing))) {
            if (strcmp(v, "all")) {
                enum ffn_act act;
                bool gated;
                if (!ffn_tool_op_from_name(v, &act, &gated)) {
                    fprintf(stderr, "ffn bench act: unknown --op '%s'\n", v);
                    return 2;
                }
                for (int k = 0; k < FFN_ACT_COUNT; k++) act_sel[k] = k == (int)act;
                glu_only[act] = gated;
            }
        } else if ((v = ffn__optval(argc, argv, &i, "--dir", &missing))) {
            if (!ffn_tool_dir_all("bench act", v, &o->fwd, &o->bwd)) return 2;
        } else if (!strcmp(a, "--glu") || !strcmp(a, "--unary") || !strcmp(a, "--both")) {
            want_glu = strcmp(a, "--unary") != 0;
            want_unary = strcmp(a, "--glu") != 0;
        } else if ((v = ffn__optval(argc, argv, &i, "--dtype", &missing))) {
            dtype_set = true;
            if (!strcmp(v, "all")) {
                o->dtypes[FFN_DTYPE_F32] = o->dtypes[FFN_DTYPE_BF16] = true;
            } else {
                enum ffn_dtype dt;
                if (ffn_dtype_from_name(v, &dt) != FFN_STATUS_OK) {
                    fprintf(stderr, "ffn bench act: unknown --dtype '%s'\n", v);
                    return 2;
                }
                o->dtypes[dt] = true;
            }
            any_dtype = true;
        } else if ((v = ffn__optval(argc, argv, &i, "--n", &missing))) {
            ns_set = true;
            if (!ffn__parse_list(v, FFN__MAX_N, o->ns, &o->n_ns, ffn__default_ns,
                                 (int)FFN_ARRAY_LEN(ffn__default_ns))) {
                fprintf(stderr,
                        "ffn bench act: --n wants 'all' or integers in [1, %" PRId64
                        "] separated by commas (got '%s')\n",
                        FFN__MAX_N, v);
                return 2;
            }
        } else if ((v = ffn__optval(argc, argv, &i, "--threads", &missing))) {
            threads_set = true;
            if (!ffn__parse_list(v, 1024, tmp, &o->n_threads, default_threads, 2)) {
                fprintf(stderr,
                        "ffn bench act: --threads wants 'all' or integers in [1, 1024] "
                        "separated by commas (got '%s')\n",
                        v);
                return 2;
            }
            for (int k = 0; k < o->n_threads; k++) o->threads[k] = (int)tmp[k];
        } else if ((v = ffn__optval(argc, argv, &i, "--isa", &missing))) {
            if (ffn_isa_from_name(v, &o->isa) != FFN_STATUS_OK) {
                fprintf(stderr, "ffn bench act: unknown --isa '%s' (auto scalar avx2 avx512)\n", v);
                return 2;
            }
        } else if ((v = ffn__optval(argc, argv, &i, "--dist", &missing))) {
            dist_set = true;
            o->dists[FFN__DIST_NORMAL] = !strcmp(v, "normal") || !strcmp(v, "all");
            o->dists[FFN__DIST_WIDE] = !strcmp(v, "wide") || !strcmp(v, "all");
            if (!o->dists[FFN__DIST_NORMAL] && !o->dists[FFN__DIST_WIDE]) {
                fprintf(stderr, "ffn bench act: --dist must be normal, wide or all (got '%s')\n",
                        v);
                return 2;
            }
        } else if ((v = ffn__optval(argc, argv, &i, "--reps", &missing))) {
            if (!ffn_arg_int("bench act", "--reps", v, 1, FFN__REPS_CAP, &o->reps)) return 2;
            reps_set = true;
        } else if (!strcmp(a, "--quick")) {
            o->quick = true;
        } else if (!strcmp(a, "--accurate")) {
            o->accurate = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if ((v = ffn__optval(argc, argv, &i, "--backend", &missing))) {
            // cpu here (ffn_cmd_bench_act hands cuda to ffn_cmd_bench_act_cuda)
        } else if ((v = ffn__optval(argc, argv, &i, "--pages", &missing))) {
            if (strcmp(v, "huge") && strcmp(v, "4k")) {
                fprintf(stderr, "ffn bench act: --pages must be huge or 4k (got '%s')\n", v);
                return 2;
            }
            o->huge = !strcmp(v, "huge");
        } else {
            if (missing)
                fprintf(stderr, "ffn bench act: %s needs a value\n", a);
            else
                fprintf(stderr, "ffn bench act: unknown option '%s'\n", a);
            ffn__usage(stderr);
            return 2;
        }
    }

    // --quick fills in what was not given explicitly.
    if (o->quick) {
        if (!ns_set) o->ns[0] = FFN__QUICK_N, o->n_ns = 1, ns_set = true;
        if (!threads_set) o->threads[0] = 1, o->n_threads = 1, threads_set = true;
        if (!dtype_set) o->dtypes[FFN_DTYPE_F32] = any_dtype = true;
        if (!dist_set) o->dists[FFN__DIST_NORMAL] = dist_set = true;
        if (!reps_set) o->reps = FFN__QUICK_REPS;
    }
    if (!ns_set)
        ffn__parse_list("all", FFN__MAX_N, o->ns, &o->n_ns, ffn__default_ns,
                        (int)FFN_ARRAY_LEN(ffn__default_ns));
    if (!threads_set) o->threads[0] = 1, o->threads[1] = 2, o->n_threads = 2;
    if (!any_dtype) o->dtypes[FFN_DTYPE_F32] = o->dtypes[FFN_DTYPE_BF16] = true;
    if (!dist_set) o->dists[FFN__DIST_NORMAL] = o->dists[FFN__DIST_WIDE] = true;
    ffn_tool_act_forms(act_sel, glu_only, want_unary, want_glu, o->unary, o->glu);
    return 0;
}

// --- output --------------------------------------------------------------------------------------
struct ffn__row {
    const struct ffn__case *c;
    enum ffn_dtype dtype;
    enum ffn__dist dist;
    int64_t n;
    int threads;
    enum ffn_isa kernel_isa;
    double bytes;
    struct ffn__timing op, triad;
    double ratio;  // median over reps of (op GB/s) / (triad GB/s of the rep just before)
};

static void ffn__print_header(const struct ffn__opts *o, const struct ffn__host *h, ffn_ctx_t ctx) {
    // Count which ISA each kernel of the context's table came from (SIMD kernels override the
    // scalar reference one by one as they land).
    int per_isa[FFN_ISA_COUNT] = {0};
    const int total = FFN_OP_COUNT * FFN_ACT_COUNT;
    for (int k = 0; k < FFN_OP_COUNT; k++)
        for (int a = 0; a < FFN_ACT_COUNT; a++) {
            const enum ffn_isa isa = ffn_ctx_kernel_isa(ctx, (enum ffn_op)k, (enum ffn_act)a);
            if ((unsigned)isa < FFN_ISA_COUNT) per_isa[isa]++;
        }
    const char *acc = o->accurate ? "high" : "default";
    if (o->json) {
        printf("{\"bench\":\"act\",\"impl\":\"ffn\",\"header\":true,\"cpu\":");
        ffn__json_str(stdout, h->cpu);
        if (h->mhz > 0)
            printf(",\"mhz\":%.1f", h->mhz);
        else
            printf(",\"mhz\":null");
        printf(",\"isa\":\"%s\",\"accuracy\":\"%s\",\"kernels\":{", ffn_isa_name(ffn_ctx_isa(ctx)),
               acc);
        bool first = true;
        for (int i = 0; i < FFN_ISA_COUNT; i++)
            if (per_isa[i]) {
                printf("%s\"%s\":%d", first ? "" : ",", ffn_isa_name((enum ffn_isa)i), per_isa[i]);
                first = false;
            }
        printf("},\"pages\":\"%s\",\"huge_kib\":%ld,\"version\":\"%d.%d.%d\"}\n",
               o->huge ? "huge" : "4k", ffn_tool_huge_kib(), FFN_VERSION_MAJOR, FFN_VERSION_MINOR,
               FFN_VERSION_PATCH);
        return;
    }
    printf("# ffn bench act: cpu \"%s\"", h->cpu);
    if (h->mhz > 0) printf(" @ %.0f MHz", h->mhz);
    printf(", isa %s, accuracy %s, kernels:", ffn_isa_name(ffn_ctx_isa(ctx)), acc);
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        if (per_isa[i]) printf(" %s %d/%d", ffn_isa_name((enum ffn_isa)i), per_isa[i], total);
    printf("\n# pages: %s (%ld MiB of this process on huge pages)", o->huge ? "huge" : "4k",
           ffn_tool_huge_kib() / 1024);
    printf(
        "\n# GB/s = minimum bytes (each input read once, each output written once) / median "
        "time; ratio = median over reps of GB/s / GB/s of the triad run just before (same n, "
        "threads)\n");
    printf("%-12s %-3s %-5s %-6s %9s %2s %-7s %9s %9s %7s %7s %6s\n", "op", "dir", "dtype", "dist",
           "n", "T", "kernel", "med_ms", "min_ms", "GB/s", "triad", "ratio");
}

static void ffn__print_row(const struct ffn__opts *o, const struct ffn__host *h, ffn_ctx_t ctx,
                           const struct ffn__row *r) {
    const char *op = r->c->glu ? ffn_glu_name(r->c->act) : ffn_act_name(r->c->act);
    const char *dir = r->c->bwd ? "bwd" : "fwd";
    const double gbps = r->bytes / r->op.median_s * 1e-9;
    const double triad = 12.0 * (double)r->n / r->triad.median_s * 1e-9;
    if (!o->json) {
        printf("%-12s %-3s %-5s %-6s %9" PRId64 " %2d %-7s %9.4f %9.4f %7.2f %7.2f %6.3f\n", op,
               dir, ffn_dtype_name(r->dtype), ffn__dist_names[r->dist], r->n, r->threads,
               ffn_isa_name(r->kernel_isa), r->op.median_s * 1e3, r->op.min_s * 1e3, gbps, triad,
               r->ratio);
        fflush(stdout);
        return;
    }
    printf(
        "{\"impl\":\"ffn\",\"op\":\"%s\",\"act\":\"%s\",\"glu\":%s,\"dir\":\"%s\","
        "\"dtype\":\"%s\",\"dist\":\"%s\",\"n\":%" PRId64
        ",\"threads\":%d,\"isa\":\"%s\","
        "\"kernel_isa\":\"%s\",\"accuracy\":\"%s\",\"reps\":%d,\"inner\":%d,"
        "\"seconds\":%.9g,\"min_seconds\":%.9g,\"bytes\":%.0f,\"gbps\":%.4f,"
        "\"min_gbps\":%.4f,\"triad_gbps\":%.4f,\"triad_best_gbps\":%.4f,\"triad_seconds\":%.9g,"
        "\"ratio\":%.4f,\"cpu\":",
        op, ffn_act_name(r->c->act), r->c->glu ? "true" : "false", dir, ffn_dtype_name(r->dtype),
        ffn__dist_names[r->dist], r->n, r->threads, ffn_isa_name(ffn_ctx_isa(ctx)),
        ffn_isa_name(r->kernel_isa), o->accurate ? "high" : "default", r->op.reps, r->op.inner,
        r->op.median_s, r->op.min_s, r->bytes, gbps, r->bytes / r->op.min_s * 1e-9, triad,
        12.0 * (double)r->n / r->triad.min_s * 1e-9, r->triad.median_s, r->ratio);
    ffn__json_str(stdout, h->cpu);
    if (h->mhz > 0)
        printf(",\"mhz\":%.1f}\n", h->mhz);
    else
        printf(",\"mhz\":null}\n");
    fflush(stdout);
}

// --- the run -------------------------------------------------------------------------------------
// Buffers: 3 inputs + 2 outputs of max_n elements of the widest selected dtype (inputs are
// regenerated when the dtype or distribution changes; smaller n use prefixes), and the triad's
// 3 f32 arrays of max_n. All touched before any timing, so page faults are never measured.
struct ffn__bufs {
    void *in[3], *out[2];
    float *ta, *tb, *tc;
};

static void ffn__bufs_free(struct ffn__bufs *b) {
    for (int k = 0; k < 3; k++) free(b->in[k]);
    for (int k = 0; k < 2; k++) free(b->out[k]);
    free(b->ta);
    free(b->tb);
    free(b->tc);
}

// Measures one row: the triad at this n and thread count (the bandwidth of this moment), then the
// op `act` in form `glu`, direction `bwd`, on prefixes of the buffers; prints the row.
static int ffn__run_row(const struct ffn__opts *o, const struct ffn__host *h, ffn_ctx_t ctx,
                        const struct ffn__bufs *b, enum ffn_dtype dtype, enum ffn__dist dist,
                        int nt, int64_t n, enum ffn_act act, bool glu, bool bwd) {
    struct ffn__case c = {.ctx = ctx, .act = act, .glu = glu, .bwd = bwd};
    int n_out, n_in;
    ffn_tool_act_arity(glu, bwd, &n_out, &n_in);  // each read once, each written once
    for (int k = 0; k < n_out; k++) c.out[k] = ffn_tensor_vec(b->out[k], dtype, n);
    for (int k = 0; k < n_in; k++) c.in[k] = ffn_tensor_vec(b->in[k], dtype, n);
    const enum ffn_op kop =
        glu ? (bwd ? FFN_OP_GLU_BWD : FFN_OP_GLU_FWD) : (bwd ? FFN_OP_ACT_BWD : FFN_OP_ACT_FWD);
    struct ffn__row r = {
        .c = &c,
        .dtype = dtype,
        .dist = dist,
        .n = n,
        .threads = nt,
        .kernel_isa = ffn_ctx_kernel_isa(ctx, kop, act),
        .bytes = (double)(n_out + n_in) * (double)n * (double)ffn_dtype_size(dtype),
    };
    const struct ffn__triad tri = {b->ta, b->tb, b->tc, n, nt};
    const struct ffn__target ttri = {NULL, &tri}, top = {&c, NULL};
    const int min_reps = o->quick ? FFN__QUICK_REPS : FFN__MIN_REPS;
    if (ffn__time_pair(&ttri, &top, o->reps, min_reps, 12.0 * (double)n, r.bytes, &r.triad, &r.op,
                       &r.ratio) != FFN_STATUS_OK) {
        fprintf(stderr, "ffn bench act: %s\n", ffn_ctx_last_error(ctx));
        return 2;
    }
    ffn__print_row(o, h, ctx, &r);
    return 0;
}

// Rows in the order dtype, distribution, threads, n, then unary ops, gated ops, fwd before bwd.
static int ffn__run_all(const struct ffn__opts *o, const struct ffn__host *h, ffn_ctx_t ctx) {
    int64_t max_n = 0;
    for (int k = 0; k < o->n_ns; k++) max_n = o->ns[k] > max_n ? o->ns[k] : max_n;
    const size_t esize = o->dtypes[FFN_DTYPE_F32] ? 4 : 2;
    const size_t bytes = (size_t)max_n * esize, tbytes = (size_t)max_n * sizeof(float);

    struct ffn__bufs b = {0};
    bool ok = true;
    for (int k = 0; k < 3; k++) ok = ok && (b.in[k] = ffn_tool_alloc_touched(bytes, o->huge));
    for (int k = 0; k < 2; k++) ok = ok && (b.out[k] = ffn_tool_alloc_touched(bytes, o->huge));
    ok = ok && (b.ta = ffn_tool_alloc_touched(tbytes, o->huge)) &&
         (b.tb = ffn_tool_alloc_touched(tbytes, o->huge)) &&
         (b.tc = ffn_tool_alloc_touched(tbytes, o->huge));
    if (!ok) {
        fprintf(stderr, "ffn bench act: out of memory allocating 8 buffers of %zu bytes\n", bytes);
        ffn__bufs_free(&b);
        return 2;
    }
    for (int64_t i = 0; i < max_n; i++) b.tb[i] = 1.0f, b.tc[i] = 2.0f;

    ffn__print_header(o, h, ctx);
    int rc = 0;
    for (int dt = 0; dt < FFN_DTYPE_COUNT && !rc; dt++) {
        if (!o->dtypes[dt]) continue;
        const enum ffn_dtype dtype = (enum ffn_dtype)dt;
        // up / dy and dh: N(0, 1) whatever the distribution of x / gate.
        ffn__fill(b.in[1], dtype, max_n, FFN__DIST_NORMAL, FFN__SEED + 1);
        ffn__fill(b.in[2], dtype, max_n, FFN__DIST_NORMAL, FFN__SEED + 2);
        for (int di = 0; di < FFN__DIST_COUNT && !rc; di++) {
            if (!o->dists[di]) continue;
            const enum ffn__dist dist = (enum ffn__dist)di;
            ffn__fill(b.in[0], dtype, max_n, dist, FFN__SEED + 10 + (uint64_t)di);
            for (int ti = 0; ti < o->n_threads && !rc; ti++) {
                const int nt = o->threads[ti];
                if (ffn_ctx_set_threads(ctx, nt) != FFN_STATUS_OK) {
                    fprintf(stderr, "ffn bench act: %s\n", ffn_ctx_last_error(ctx));
                    rc = 2;
                    break;
                }
                for (int ni = 0; ni < o->n_ns && !rc; ni++)
                    for (int g = 0; g < 2 && !rc; g++)
                        for (int a = 0; a < FFN_ACT_COUNT && !rc; a++)
                            for (int d = 0; d < 2 && !rc; d++)
                                if ((g ? o->glu[a] : o->unary[a]) && (d ? o->bwd : o->fwd))
                                    rc = ffn__run_row(o, h, ctx, &b, dtype, dist, nt, o->ns[ni],
                                                      (enum ffn_act)a, g == 1, d == 1);
            }
        }
    }
    ffn__bufs_free(&b);
    return rc;
}

int ffn_cmd_bench_act(int argc, char **argv) {
    enum ffn_backend be;
    if (ffn_tool_backend(argc, argv, "ffn bench act", &be)) return 2;
    if (be == FFN_BACKEND_CUDA) return ffn_cmd_bench_act_cuda(argc, argv);
    struct ffn__opts o;
    const int prc = ffn__parse(argc, argv, &o);
    if (prc) return prc < 0 ? 0 : prc;
    if (o.isa != FFN_ISA_AUTO && !ffn_isa_supported(o.isa)) {
        fprintf(stderr, "ffn bench act: --isa %s: not supported by this build or CPU\n",
                ffn_isa_name(o.isa));
        return 2;
    }
    struct ffn__host host;
    ffn_tool_cpu_name(host.cpu, sizeof host.cpu, &host.mhz);
    struct ffn_ctx_opts copts = FFN_CTX_OPTS_INIT;
    copts.force_isa = o.isa;
    copts.accuracy = o.accurate ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
    ffn_ctx_t ctx = NULL;
    const enum ffn_status st = ffn_ctx_create(&copts, &ctx);
    if (st) {
        fprintf(stderr, "ffn bench act: %s\n",
                ctx ? ffn_ctx_last_error(ctx) : ffn_status_string(st));
        ffn_ctx_destroy(ctx);
        return 2;
    }
    const int rc = ffn__run_all(&o, &host, ctx);
    ffn_ctx_destroy(ctx);
    return rc;
}
