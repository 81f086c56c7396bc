// tp_impl.h — internals of the tensor-parallel layer (src/tp/): the communication seam that
// every collective goes through (MPI now; NCCL behind the CUDA backend later), the partition
// and the position maps that the plan, the shard copy and the gradient gather share, SHA-256.
// Never installed.
#ifndef FFN_TP_IMPL_H
#define FFN_TP_IMPL_H

#include "core/core_impl.h"

// --- the communication seam ----------------------------------------------------------------
// The tensor-parallel code sees these operations only. A backend implements them over its
// library; MPI's are synchronous (they return when the result is in `buf`). A backend whose
// calls are asynchronous (NCCL on a CUDA stream: buffers are device pointers, a call enqueues)
// sets `sync`, which the callers invoke before they read a result on the host; the CPU block
// never runs on such a communicator.

enum ffn_comm_dtype { FFN_COMM_F32 = 0, FFN_COMM_BF16, FFN_COMM_I64 };
enum ffn_comm_op { FFN_COMM_SUM = 0, FFN_COMM_MAX };

struct ffn_comm;

struct ffn_comm_backend {
    const char *name;  // "mpi"
    // In-place all-reduce of n elements of `dtype` with `op` (bf16: sum only).
    enum ffn_status (*allreduce)(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                 enum ffn_comm_dtype dtype, enum ffn_comm_op op);
    // Copies `bytes` bytes of rank `root`'s buf into every rank's buf.
    enum ffn_status (*broadcast)(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                 int64_t root);
    // Optional (NULL: synchronous backend): waits for every enqueued operation.
    enum ffn_status (*sync)(ffn_ctx_t ctx, struct ffn_comm *c);
    // Releases the backend's state (impl); the generic part frees the struct.
    void (*destroy)(struct ffn_comm *c);
};

struct ffn_comm {
    const struct ffn_comm_backend *be;
    int64_t rank, size;
    void *impl;  // the backend's state (MPI: the duplicated MPI_Comm)
    struct ffn_comm_stats stats;
};

// Generic entry points over the backend, counting traffic into c->stats: `data` for
// activation all-reduces, `control` for agreement / broadcast calls.
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
