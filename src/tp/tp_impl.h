// tp_impl.h — internals of the tensor-parallel layer (src/tp/): the communication seam that
// every collective goes through (MPI: comm_mpi.c; NCCL behind the CUDA backend: comm_nccl.c),
// the few operations a block does on its activations on either backend (tp_dev.c), the partition
// and the position maps that the plan, the shard copy and the gradient gather share, SHA-256.
// Never installed.
#ifndef FFN_TP_IMPL_H
#define FFN_TP_IMPL_H

#include "core/core_impl.h"

// --- the communication seam ----------------------------------------------------------------
// The tensor-parallel code sees these operations only. A backend implements them over its
// library. Buffers lie in one of two places, named by `host`:
//   host = false  the backend's own memory (`memory`): host memory for MPI, device memory of the
//                 communicator's device for NCCL. The activation all-reduces of a block (y, dx).
//   host = true   host memory: the agreement values, plan texts, gathered gradients (control).
// MPI's calls are synchronous (they return when the result is in `buf`). NCCL's device-memory
// calls are asynchronous: they queue on the calling context's stream and return; its host-memory
// calls return with the result in `buf` (through the `control` communicator when one is given,
// else staged through device memory, waiting for the stream). `sync` waits for what is queued.

enum ffn_comm_dtype { FFN_COMM_F32 = 0, FFN_COMM_BF16, FFN_COMM_I64, FFN_COMM_F16 };
enum ffn_comm_op { FFN_COMM_SUM = 0, FFN_COMM_MAX };

struct ffn_comm;

struct ffn_comm_backend {
    const char *name;         // "mpi", "nccl"
    enum ffn_backend memory;  // where its own buffers lie: FFN_BACKEND_CPU (host memory) or
                              // FFN_BACKEND_CUDA (device memory, the calling context's stream)
    unsigned act_dtypes;      // bit (1u << enum ffn_dtype) per dtype its SUM all-reduce takes
    // In-place all-reduce of n elements of `dtype` with `op` (16-bit floats: sum only).
    enum ffn_status (*allreduce)(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                 enum ffn_comm_dtype dtype, enum ffn_comm_op op, bool host);
    // Copies `bytes` bytes of rank `root`'s buf into every rank's buf.
    enum ffn_status (*broadcast)(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                 int64_t root, bool host);
    // Optional (NULL: synchronous backend): waits for every operation queued on ctx's stream and
    // reports the backend's asynchronous errors.
    enum ffn_status (*sync)(ffn_ctx_t ctx, struct ffn_comm *c);
    // Releases the backend's state (impl); the generic part frees the struct.
    void (*destroy)(struct ffn_comm *c);
};

struct ffn_comm {
    const struct ffn_comm_backend *be;
    int64_t rank, size;
    void *impl;  // the backend's state (MPI: the duplicated MPI_Comm; NCCL: struct ffn__nccl)
    struct ffn_comm_stats stats;
};

// Generic entry points over the backend, counting traffic into c->stats: `data` for
// activation all-reduces (buf in the backend's memory), else control calls (buf in host
// memory: agreements, broadcasts, gathered gradients).
enum ffn_status ffn_comm_allreduce(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                   enum ffn_comm_dtype dtype, enum ffn_comm_op op, bool data);
enum ffn_status ffn_comm_bcast(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                               int64_t root);
// Agreement on local statuses (the public ffn_comm_agree) with extra values that must be equal
// on every rank: vals[0..n_vals) (n_vals ≤ 4). On inequality returns INVALID_ARG on every rank
// with "<fn>: <what> differs across ranks (this rank: v, others: lo..hi)".
enum ffn_status ffn_comm_agree_vals(ffn_ctx_t ctx, struct ffn_comm *c, const char *fn,
                                    enum ffn_status local, const int64_t *vals,
                                    const char *const *what, int n_vals);
// Broadcasts rank 0's NUL-terminated text (any length) into *out (malloc'ed, on every rank).
// Collective; *out NULL on failure.
enum ffn_status ffn_comm_bcast_text(ffn_ctx_t ctx, struct ffn_comm *c, const char *mine,
                                    char **out);

// --- activations on the context's backend (tp_dev.c) --------------------------------------------
// What a tensor-parallel block does to its activations besides the local block and the
// all-reduce, wherever they lie: host loops on the CPU; on CUDA, runtime calls and the kernels of
// src/cuda/tp_kernels.cu queued on the context's stream (nothing waits). `fn` names the caller in
// messages.

// Where a buffer was allocated (for freeing it without a context).
struct ffn_tp_mem {
    enum ffn_backend backend;
    int device;
};
struct ffn_tp_mem ffn_tp_mem_of(ffn_ctx_t ctx);
enum ffn_status ffn_tp_mem_alloc(ffn_ctx_t ctx, const char *fn, size_t bytes, void **out);
void ffn_tp_mem_free(struct ffn_tp_mem where, void *p);
// INVALID_ARG unless [p, p + bytes) is memory the context's backend computes on: anything on the
// CPU; on CUDA device memory of the context's device (or managed memory), inside one allocation.
enum ffn_status ffn_tp_mem_check(ffn_ctx_t ctx, const char *fn, const char *name, const void *p,
                                 size_t bytes);
// True when ctx is a CUDA context and p device memory (host code must not touch it). A CPU
// context asks nothing of CUDA.
bool ffn_tp_mem_is_device(ffn_ctx_t ctx, const void *p);
enum ffn_status ffn_tp_mem_zero(ffn_ctx_t ctx, const char *fn, void *p, size_t bytes);
// rows rows of row_bytes bytes from src (rows src_stride bytes apart) to dst (dst_stride apart).
enum ffn_status ffn_tp_mem_copy_rows(ffn_ctx_t ctx, const char *fn, void *dst, size_t dst_stride,
                                     const void *src, size_t src_stride, int64_t rows,
                                     size_t row_bytes);
// y[r][j] += b[j] (b: f32 [y->cols], the context's memory), rounded once to y's dtype.
enum ffn_status ffn_tp_bias_add(ffn_ctx_t ctx, const char *fn, const struct ffn_tensor *y,
                                const float *b);
// g[j] = (accumulate ? g[j] : 0) + (float)Σ_r dy[r][j] (sum in double, g of dtype g_dtype,
// [dy->cols]). *scratch (*scratch_cap bytes, the context's memory) holds the GPU's partial sums
// and grows as needed (freed by the caller with ffn_tp_mem_free).
enum ffn_status ffn_tp_colsum(ffn_ctx_t ctx, const char *fn, void *g, enum ffn_dtype g_dtype,
                              bool accumulate, const struct ffn_tensor *dy, void **scratch,
                              size_t *scratch_cap);

// --- partition and positions (plan.c) ----------------------------------------------------------

// Rank r's columns [*c0, *c0 + *n) of d_ff under (m, world, align). false when some rank would
// get no column.
bool ffn_tp_partition(int64_t m, int64_t world, int64_t align, int64_t r, int64_t *c0, int64_t *n);

// Which stored tensor of ffn_block_weights holds output j (0 ≤ j < m) of the gate (up = false)
// or of up, and its position on that tensor's output axis, under a first-projection layout.
enum ffn_tp_member { FFN_TP_GATE = 0, FFN_TP_UP, FFN_TP_GATE_UP, FFN_TP_DOWN };
void ffn_tp_first_pos(bool gated, enum ffn_gate_up_layout layout, int64_t groups, int64_t m,
                      bool up, int64_t j, enum ffn_tp_member *member, int64_t *pos);
// Validates a plan's fields (as ffn_tp_plan_parse does after reading them).
enum ffn_status ffn_tp_plan_check(ffn_ctx_t ctx, const char *fn, const struct ffn_tp_plan *p);

// --- SHA-256 (sha256.c) ----------------------------------------------------------------------
struct ffn_sha256 {
    uint32_t h[8];
    uint64_t len;  // bytes hashed so far
    uint8_t buf[64];
    size_t n;  // bytes in buf
};
void ffn_sha256_init(struct ffn_sha256 *s);
void ffn_sha256_update(struct ffn_sha256 *s, const void *data, size_t len);
void ffn_sha256_final(struct ffn_sha256 *s, uint8_t out[32]);
// Lower-case hex of a digest: 64 characters and a NUL.
void ffn_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif  // FFN_TP_IMPL_H
