// ctx.c — the context: its backend (through the backend table, which holds the backend's own
// state: the CPU kernel table, the CUDA device), the CPU ISA chosen from CPU features (or
// forced), thread count, accuracy tier, last error, log callback. No global mutable state.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif

#include "core_impl.h"

enum ffn_status ffn_error(ffn_ctx_t ctx, enum ffn_status status, const char *fmt, ...) {
    if (!ctx) return status;
    // Messages quote names and strings from files: control characters are escaped here, once
    // for every message, so no caller has to remember it (ffn_text_escape).
    char raw[sizeof ctx->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ffn_text_escape(ctx->err, sizeof ctx->err, raw);
    if (ctx->log) ctx->log(0, ctx->err, ctx->log_user);
    return status;
}

void ffn_error_clear(ffn_ctx_t ctx) {
    if (ctx) ctx->err[0] = '\0';
}

void ffn_log(ffn_ctx_t ctx, int level, const char *fmt, ...) {
    if (!ctx || !ctx->log) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->log(level, buf, ctx->log_user);
}

static int ffn__default_threads(void) {
#ifdef _OPENMP
    const int n = omp_get_max_threads();
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

// Picks the ISA: forced by opts, else by $FFN_ISA, else the best the CPU supports.
static enum ffn_status ffn__choose_isa(ffn_ctx_t ctx, enum ffn_isa forced) {
    enum ffn_isa isa = forced;
    const char *env = getenv("FFN_ISA");
    if (isa == FFN_ISA_AUTO && env && *env) {
        if (ffn_isa_from_name(env, &isa) != FFN_STATUS_OK)
            return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                             "ffn_ctx_create: FFN_ISA=%s is not one of scalar|avx2|avx512|auto",
                             env);
    }
    if (isa == FFN_ISA_AUTO) {
        isa = ffn_isa_supported(FFN_ISA_AVX512) ? FFN_ISA_AVX512
              : ffn_isa_supported(FFN_ISA_AVX2) ? FFN_ISA_AVX2
                                                : FFN_ISA_SCALAR;
    }
    if ((unsigned)isa >= FFN_ISA_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_ctx_create: force_isa=%d is not an ISA",
                         (int)isa);
    if (!ffn_isa_supported(isa))
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "ffn_ctx_create: ISA %s is not supported by this CPU/OS or build",
                         ffn_isa_name(isa));
    ctx->isa = isa;
    return FFN_STATUS_OK;
}

// --- backends ----------------------------------------------------------------------------------

// The backend table: what this build has (NULL: a backend it was built without).
static const struct ffn_backend_i *const ffn__backends[FFN_BACKEND_COUNT] = {
    [FFN_BACKEND_CPU] = &ffn_backend_cpu,
#ifdef FFN_HAVE_CUDA
    [FFN_BACKEND_CUDA] = &ffn_backend_cuda,
#endif
};

static const char *const ffn__backend_names[FFN_BACKEND_COUNT] = {
    [FFN_BACKEND_CPU] = "cpu",
    [FFN_BACKEND_CUDA] = "cuda",
};

const char *ffn_backend_name(enum ffn_backend backend) {
    return (unsigned)backend < FFN_BACKEND_COUNT ? ffn__backend_names[backend] : "?";
}

enum ffn_status ffn_backend_from_name(const char *name, enum ffn_backend *backend_out) {
    if (!name || !backend_out) return FFN_STATUS_INVALID_ARG;
    for (int i = 0; i < FFN_BACKEND_COUNT; i++)
        if (!strcmp(name, ffn__backend_names[i])) {
            *backend_out = (enum ffn_backend)i;
            return FFN_STATUS_OK;
        }
    return FFN_STATUS_INVALID_ARG;
}

bool ffn_backend_available(enum ffn_backend backend, char *why, size_t why_size) {
    if (why && why_size) why[0] = '\0';
    if ((unsigned)backend >= FFN_BACKEND_COUNT) {
        if (why && why_size) snprintf(why, why_size, "backend %d is not a backend", (int)backend);
        return false;
    }
    const struct ffn_backend_i *be = ffn__backends[backend];
    if (!be) {
        if (why && why_size)
            snprintf(why, why_size,
                     "this build of ffn has no %s backend (configure with the CUDA toolkit's nvcc "
                     "found, and -DFFN_CUDA=ON)",
                     ffn__backend_names[backend]);
        return false;
    }
    return be->available(why, why_size);
}

enum ffn_status ffn_ctx_require_cpu(ffn_ctx_t ctx, const char *fn) {
    if (!ctx || ctx->backend == FFN_BACKEND_CPU) return FFN_STATUS_OK;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "%s: runs on the CPU backend only; this context is %s (create a CPU "
                     "context for it)",
                     fn, ffn_backend_name(ctx->backend));
}

// --- contexts ---------------------------------------------------------------------------------

enum ffn_status ffn_ctx_create(const struct ffn_ctx_opts *opts, ffn_ctx_t *ctx_out) {
    if (!ctx_out) return FFN_STATUS_INVALID_ARG;
    *ctx_out = NULL;
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    if (opts) {
        // Copy only the prefix the caller knows about (older callers pass a smaller size).
        if (opts->size < offsetof(struct ffn_ctx_opts, force_isa) || opts->size > sizeof o)
            return FFN_STATUS_INVALID_ARG;
        memcpy(&o, opts, opts->size);
        o.size = sizeof o;
    }
    if (o.n_threads < 0 || (unsigned)o.accuracy > FFN_ACCURACY_HIGH) return FFN_STATUS_INVALID_ARG;
    const char *bad = (unsigned)o.backend >= FFN_BACKEND_COUNT ? "backend is not a backend"
                      : o.device < 0                           ? "device is negative"
                      : o.backend == FFN_BACKEND_CPU && o.stream
                          ? "a stream is given for a CPU context (set backend = FFN_BACKEND_CUDA)"
                          : NULL;
    if (bad) {
        if (o.log) {
            char msg[160];
            snprintf(msg, sizeof msg, "ffn_ctx_create: opts.backend=%d, opts.device=%d: %s",
                     (int)o.backend, o.device, bad);
            o.log(0, msg, o.log_user);
        }
        return FFN_STATUS_INVALID_ARG;
    }
    ffn_ctx_t ctx = calloc(1, sizeof *ctx);
    if (!ctx) return FFN_STATUS_OUT_OF_MEMORY;
    ctx->backend = o.backend;
    ctx->be = ffn__backends[o.backend];
    ctx->device = o.backend == FFN_BACKEND_CPU ? -1 : o.device;
    ctx->stream = o.backend == FFN_BACKEND_CPU ? NULL : o.stream;
    ctx->log = o.log;
    ctx->log_user = o.log_user;
    ctx->accuracy = o.accuracy;
    ctx->bf16_parity = o.bf16_parity;
    ctx->default_threads = ffn__default_threads();
    ctx->n_threads = o.n_threads > 0 ? o.n_threads : ctx->default_threads;
    enum ffn_status st = ffn__choose_isa(ctx, o.force_isa);
    if (st != FFN_STATUS_OK) {
        ffn_log(ctx, 0, "%s", ctx->err);
        free(ctx);
        return st;
    }
    if (!ctx->be) {
        char why[256];
        ffn_backend_available(o.backend, why, sizeof why);
        st = ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "ffn_ctx_create: %s", why);
    } else if (ctx->be->init) {
        st = ctx->be->init(ctx, &o);
    }
    if (st != FFN_STATUS_OK) {
        ffn_log(ctx, 0, "%s", ctx->err);
        free(ctx);
        return st;
    }
    ffn_log(ctx, 2, "ffn: backend %s, isa %s, %d threads", ffn_backend_name(ctx->backend),
            ffn_isa_name(ctx->isa), ctx->n_threads);
    *ctx_out = ctx;
    return FFN_STATUS_OK;
}

void ffn_ctx_destroy(ffn_ctx_t ctx) {
    if (!ctx) return;
    if (ctx->be && ctx->be->free) ctx->be->free(ctx);
    free(ctx);
}

const char *ffn_ctx_last_error(ffn_ctx_t ctx) { return ctx ? ctx->err : "ffn: NULL context"; }

enum ffn_isa ffn_ctx_isa(ffn_ctx_t ctx) { return ctx ? ctx->isa : FFN_ISA_SCALAR; }

enum ffn_isa ffn_ctx_kernel_isa(ffn_ctx_t ctx, enum ffn_op op, enum ffn_act act) {
    if (!ctx || (unsigned)op >= FFN_OP_COUNT || (unsigned)act >= FFN_ACT_COUNT) return FFN_ISA_AUTO;
    return ctx->be->kernel_isa ? ctx->be->kernel_isa(ctx, op, act) : FFN_ISA_AUTO;
}

enum ffn_status ffn_ctx_set_threads(ffn_ctx_t ctx, int n_threads) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (n_threads < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_ctx_set_threads: n_threads=%d, expected ≥ 0", n_threads);
    ctx->n_threads = n_threads > 0 ? n_threads : ctx->default_threads;
    return FFN_STATUS_OK;
}

int ffn_ctx_threads(ffn_ctx_t ctx) { return ctx ? ctx->n_threads : 1; }

enum ffn_status ffn_ctx_set_accuracy(ffn_ctx_t ctx, enum ffn_accuracy accuracy) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if ((unsigned)accuracy > FFN_ACCURACY_HIGH)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_ctx_set_accuracy: accuracy=%d unknown",
                         (int)accuracy);
    ctx->accuracy = accuracy;
    return FFN_STATUS_OK;
}

enum ffn_accuracy ffn_ctx_accuracy(ffn_ctx_t ctx) {
    return ctx ? ctx->accuracy : FFN_ACCURACY_DEFAULT;
}

enum ffn_backend ffn_ctx_backend(ffn_ctx_t ctx) { return ctx ? ctx->backend : FFN_BACKEND_CPU; }

int ffn_ctx_device(ffn_ctx_t ctx) { return ctx ? ctx->device : -1; }

void *ffn_ctx_stream(ffn_ctx_t ctx) { return ctx ? ctx->stream : NULL; }

enum ffn_status ffn_ctx_set_stream(ffn_ctx_t ctx, void *stream) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (ctx->be->set_stream) return ctx->be->set_stream(ctx, stream);
    if (!stream) return FFN_STATUS_OK;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "ffn_ctx_set_stream: the %s backend has no streams (pass NULL)",
                     ffn_backend_name(ctx->backend));
}

enum ffn_status ffn_ctx_synchronize(ffn_ctx_t ctx) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    return ctx->be->synchronize ? ctx->be->synchronize(ctx) : FFN_STATUS_OK;
}
