// comm.c — the generic side of a communicator: the public ffn_comm_* entry points, traffic
// statistics, and the agreement step that lets every collective entry point fail on all ranks
// together instead of leaving one rank waiting in a collective the others never reach. The
// backends (comm_mpi.c, comm_nccl.c) implement struct ffn_comm_backend only.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp/tp_impl.h"

static double ffn__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t ffn__comm_esize(enum ffn_comm_dtype dt) {
    return dt == FFN_COMM_F32 ? 4 : dt == FFN_COMM_I64 ? 8 : 2;
}

// --- generic operations over the backend ----------------------------------------------------

enum ffn_status ffn_comm_allreduce(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                   enum ffn_comm_dtype dtype, enum ffn_comm_op op, bool data) {
    const double t0 = ffn__now();
    const enum ffn_status st =
        n > 0 ? c->be->allreduce(ctx, c, buf, n, dtype, op, !data) : FFN_STATUS_OK;
    const double dt = ffn__now() - t0, bytes = (double)n * (double)ffn__comm_esize(dtype);
    if (data) {
        c->stats.data_calls++;
        c->stats.data_bytes += bytes;
        // Ring all-reduce: a reduce-scatter then an all-gather, each sending (P-1)/P of the data.
        c->stats.data_sent_bytes += 2.0 * (double)(c->size - 1) / (double)c->size * bytes;
        c->stats.data_seconds += dt;
    } else {
        c->stats.control_calls++;
        c->stats.control_bytes += bytes;
        c->stats.control_seconds += dt;
    }
    return st;
}

enum ffn_status ffn_comm_bcast(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                               int64_t root) {
    const double t0 = ffn__now();
    const enum ffn_status st =
        bytes ? c->be->broadcast(ctx, c, buf, bytes, root, true) : FFN_STATUS_OK;
    c->stats.control_calls++;
    c->stats.control_bytes += (double)bytes;
    c->stats.control_seconds += ffn__now() - t0;
    return st;
}

enum ffn_status ffn_comm_agree_vals(ffn_ctx_t ctx, struct ffn_comm *c, const char *fn,
                                    enum ffn_status local, const int64_t *vals,
                                    const char *const *what, int n_vals) {
    // One MAX all-reduce of [status, v_0, -v_0, v_1, -v_1, ...]: the largest status, and for
    // every value its maximum and (negated) minimum, so all ranks see the same verdict.
    int64_t buf[1 + 2 * 4];
    if (n_vals > 4) n_vals = 4;
    buf[0] = (int64_t)local;
    for (int i = 0; i < n_vals; i++) buf[1 + 2 * i] = vals[i], buf[2 + 2 * i] = -vals[i];
    char saved[sizeof ctx->err];
    snprintf(saved, sizeof saved, "%s", ctx->err);
    enum ffn_status st =
        ffn_comm_allreduce(ctx, c, buf, 1 + 2 * n_vals, FFN_COMM_I64, FFN_COMM_MAX, false);
    if (st) return st;
    if (local != FFN_STATUS_OK) {  // keep this rank's own message
        ffn_error(ctx, local, "%s", saved);
        return local;
    }
    const int64_t worst = buf[0];
    if (worst != FFN_STATUS_OK)
        return ffn_error(ctx,
                         (enum ffn_status)(worst < FFN_STATUS_COUNT ? worst : FFN_STATUS_INTERNAL),
                         "%s: another rank failed (%s); its message says why", fn,
                         ffn_status_string((enum ffn_status)worst));
    for (int i = 0; i < n_vals; i++) {
        const int64_t hi = buf[1 + 2 * i], lo = -buf[2 + 2 * i];
        if (hi != lo)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: %s differs across ranks (this rank "
                             "%" PRId64 ", others from %" PRId64 " to %" PRId64
                             "); every rank "
                             "must pass the same",
                             fn, what[i], vals[i], lo, hi);
    }
    return FFN_STATUS_OK;
}

enum ffn_status ffn_comm_bcast_text(ffn_ctx_t ctx, struct ffn_comm *c, const char *mine,
                                    char **out) {
    *out = NULL;
    int64_t len = c->rank == 0 && mine ? (int64_t)strlen(mine) : 0;
    enum ffn_status st = ffn_comm_bcast(ctx, c, &len, sizeof len, 0);
    if (st) return st;
    char *buf = malloc((size_t)len + 1);
    // Every rank must take part in the second broadcast even when its malloc failed.
    char dummy;
    if (c->rank == 0 && buf) memcpy(buf, mine ? mine : "", (size_t)len);
    st = ffn_comm_bcast(ctx, c, buf ? buf : &dummy, buf ? (size_t)len : 0, 0);
    if (!buf && !st)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "ffn_comm: out of memory for %" PRId64 " bytes", len);
    if (st) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *out = buf;
    return FFN_STATUS_OK;
}

// --- public ------------------------------------------------------------------------------------

void ffn_comm_destroy(ffn_comm_t c) {
    if (!c) return;
    if (c->be && c->be->destroy) c->be->destroy(c);
    free(c);
}

int64_t ffn_comm_rank(ffn_comm_t c) { return c ? c->rank : -1; }
int64_t ffn_comm_size(ffn_comm_t c) { return c ? c->size : -1; }
const char *ffn_comm_backend(ffn_comm_t c) { return c && c->be ? c->be->name : "?"; }

enum ffn_status ffn_comm_allreduce_f32(ffn_ctx_t ctx, ffn_comm_t c, float *buf, int64_t n) {
    static const char fn[] = "ffn_comm_allreduce_f32";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!c || (n > 0 && !buf) || n < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm and buf must not be NULL, n ≥ 0",
                         fn);
    return ffn_comm_allreduce(ctx, c, buf, n, FFN_COMM_F32, FFN_COMM_SUM, true);
}

enum ffn_status ffn_comm_allreduce_sum(ffn_ctx_t ctx, ffn_comm_t c, void *buf, enum ffn_dtype dtype,
                                       int64_t n) {
    static const char fn[] = "ffn_comm_allreduce_sum";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!c || (n > 0 && !buf) || n < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm and buf must not be NULL, n ≥ 0",
                         fn);
    if ((unsigned)dtype >= FFN_DTYPE_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: dtype %d is not a dtype of ffn", fn,
                         (int)dtype);
    if (!(c->be->act_dtypes >> dtype & 1u))
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: the %s communicator does not sum %s%s",
                         fn, c->be->name, ffn_dtype_name(dtype),
                         c->be->act_dtypes == 1u << FFN_DTYPE_F32 ? " (f32 only)" : "");
    static const enum ffn_comm_dtype map[FFN_DTYPE_COUNT] = {[FFN_DTYPE_F32] = FFN_COMM_F32,
                                                             [FFN_DTYPE_BF16] = FFN_COMM_BF16,
                                                             [FFN_DTYPE_F16] = FFN_COMM_F16};
    return ffn_comm_allreduce(ctx, c, buf, n, map[dtype], FFN_COMM_SUM, true);
}

enum ffn_status ffn_comm_broadcast(ffn_ctx_t ctx, ffn_comm_t c, void *buf, size_t bytes,
                                   int64_t root) {
    static const char fn[] = "ffn_comm_broadcast";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!c || (bytes && !buf))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm and buf must not be NULL", fn);
    if (root < 0 || root >= c->size)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: root %" PRId64 " is not a rank (0..%" PRId64 ")", fn, root,
                         c->size - 1);
    // Counted as a control call (it is not an activation all-reduce), buf in the backend's memory.
    const double t0 = ffn__now();
    const enum ffn_status st =
        bytes ? c->be->broadcast(ctx, c, buf, bytes, root, false) : FFN_STATUS_OK;
    c->stats.control_calls++;
    c->stats.control_bytes += (double)bytes;
    c->stats.control_seconds += ffn__now() - t0;
    return st;
}

enum ffn_status ffn_comm_synchronize(ffn_ctx_t ctx, ffn_comm_t c) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!c) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_comm_synchronize: comm is NULL");
    return c->be->sync ? c->be->sync(ctx, c) : FFN_STATUS_OK;
}

enum ffn_status ffn_comm_agree(ffn_ctx_t ctx, ffn_comm_t c, enum ffn_status local) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    if (!c) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_comm_agree: comm is NULL");
    return ffn_comm_agree_vals(ctx, c, "ffn_comm_agree", local, NULL, NULL, 0);
}

enum ffn_status ffn_comm_stats(ffn_ctx_t ctx, ffn_comm_t c, struct ffn_comm_stats *stats) {
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!c || !stats || stats->size < sizeof *stats)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_comm_stats: comm and stats (size set "
                         "from FFN_COMM_STATS_INIT) expected");
    *stats = c->stats;
    return FFN_STATUS_OK;
}

void ffn_comm_stats_reset(ffn_comm_t c) {
    if (!c) return;
    const struct ffn_comm_stats z = FFN_COMM_STATS_INIT;
    c->stats = z;
}
