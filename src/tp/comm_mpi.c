// comm_mpi.c — the MPI backend of the communication seam: the caller's MPI_Comm, duplicated
// (our messages never match the caller's) with MPI_ERRORS_RETURN (an MPI error becomes
// FFN_STATUS_BACKEND with MPI's text, not an abort). ffn never calls MPI_Init: the caller does,
// at any thread level; every call here runs on the calling thread. A build without MPI keeps
// ffn_comm_create_mpi, which then says so (FFN_STATUS_UNSUPPORTED).
#include <limits.h>
#include <stdlib.h>

#include "tp/tp_impl.h"

#ifdef FFN_HAVE_MPI
#    include <mpi.h>

// MPI counts are int: larger buffers go in chunks of this many elements.
#    define FFN_MPI_CHUNK ((int64_t)1 << 30)

struct ffn__mpi {
    MPI_Comm comm;
};

static enum ffn_status ffn__mpi_error(ffn_ctx_t ctx, const char *what, int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    return ffn_error(ctx, FFN_STATUS_BACKEND, "%s: MPI error %d: %s", what, rc, text);
}

// `host` is ignored: MPI's own memory is host memory.
static enum ffn_status ffn__mpi_allreduce(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                          enum ffn_comm_dtype dtype, enum ffn_comm_op op,
                                          bool host) {
    (void)host;
    if (dtype == FFN_COMM_BF16 || dtype == FFN_COMM_F16)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "ffn_comm (mpi): MPI has no 16-bit float type; "
                         "the CPU blocks reduce f32");
    const MPI_Comm comm = ((struct ffn__mpi *)c->impl)->comm;
    const MPI_Datatype t = dtype == FFN_COMM_F32 ? MPI_FLOAT : MPI_INT64_T;
    const size_t es = dtype == FFN_COMM_F32 ? 4 : 8;
    for (int64_t i = 0; i < n; i += FFN_MPI_CHUNK) {
        const int64_t k = n - i < FFN_MPI_CHUNK ? n - i : FFN_MPI_CHUNK;
        const int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + (size_t)i * es, (int)k, t,
                                     op == FFN_COMM_SUM ? MPI_SUM : MPI_MAX, comm);
        if (rc != MPI_SUCCESS) return ffn__mpi_error(ctx, "MPI_Allreduce", rc);
    }
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__mpi_bcast(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                      int64_t root, bool host) {
    (void)host;
    const MPI_Comm comm = ((struct ffn__mpi *)c->impl)->comm;
    for (size_t i = 0; i < bytes; i += (size_t)FFN_MPI_CHUNK) {
        const size_t k = bytes - i < (size_t)FFN_MPI_CHUNK ? bytes - i : (size_t)FFN_MPI_CHUNK;
        const int rc = MPI_Bcast((char *)buf + i, (int)k, MPI_BYTE, (int)root, comm);
        if (rc != MPI_SUCCESS) return ffn__mpi_error(ctx, "MPI_Bcast", rc);
    }
    return FFN_STATUS_OK;
}

static void ffn__mpi_destroy(struct ffn_comm *c) {
    struct ffn__mpi *m = c->impl;
    if (!m) return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&m->comm);  // after MPI_Finalize there is nothing to free
    free(m);
    c->impl = NULL;
}

static const struct ffn_comm_backend ffn__mpi_backend = {.name = "mpi",
                                                         .memory = FFN_BACKEND_CPU,
                                                         .act_dtypes = 1u << FFN_DTYPE_F32,
                                                         .allreduce = ffn__mpi_allreduce,
                                                         .broadcast = ffn__mpi_bcast,
                                                         .sync = NULL,
                                                         .destroy = ffn__mpi_destroy};

enum ffn_status ffn_comm_create_mpi(ffn_ctx_t ctx, const void *mpi_comm, ffn_comm_t *comm_out) {
    static const char fn[] = "ffn_comm_create_mpi";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!mpi_comm || !comm_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: mpi_comm (a pointer to an MPI_Comm) and "
                         "comm_out must not be NULL",
                         fn);
    *comm_out = NULL;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: MPI is %s; call MPI_Init or "
                         "MPI_Init_thread first (ffn never initialises MPI itself)",
                         fn, fin ? "already finalised" : "not initialised");
    struct ffn_comm *c = calloc(1, sizeof *c);
    struct ffn__mpi *m = calloc(1, sizeof *m);
    if (!c || !m) {
        free(c), free(m);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    int rc = MPI_Comm_dup(*(const MPI_Comm *)mpi_comm, &m->comm);
    if (rc != MPI_SUCCESS) {
        free(c), free(m);
        return ffn__mpi_error(ctx, "MPI_Comm_dup", rc);
    }
    int rank = 0, size = 1;
    rc = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(m->comm, &rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(m->comm, &size);
    c->be = &ffn__mpi_backend;
    c->impl = m;
    c->rank = rank;
    c->size = size;
    ffn_comm_stats_reset(c);
    if (rc != MPI_SUCCESS) {
        const enum ffn_status st = ffn__mpi_error(ctx, fn, rc);
        ffn_comm_destroy(c);
        return st;
    }
    *comm_out = c;
    return FFN_STATUS_OK;
}

#else  // !FFN_HAVE_MPI

enum ffn_status ffn_comm_create_mpi(ffn_ctx_t ctx, const void *mpi_comm, ffn_comm_t *comm_out) {
    (void)mpi_comm;
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (comm_out) *comm_out = NULL;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "ffn_comm_create_mpi: this build of ffn has no "
                     "MPI (install libopenmpi-dev and reconfigure)");
}

#endif  // FFN_HAVE_MPI
