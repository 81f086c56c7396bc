// tp.h — tensor parallelism in the `ffn` tool: the --tp options that run, verify, bench block
// and size share, MPI start and stop (the tool, not the library, calls MPI_Init), and this
// rank's tensor-parallel block for one checkpoint layer (sharded in memory by the plan, or read
// from a shard set made by `ffn shard`).
#ifndef FFN_TOOL_TP_H
#define FFN_TOOL_TP_H

#include "ffn.h"

struct ffn_tool_tp {
    int64_t world;                 // --tp P; 0: not tensor-parallel
    const char *shards;            // --shards DIR (made by `ffn shard`), or NULL
    struct ffn_tp_plan_opts opts;  // --align, --layout, --orient, --down-bias
    bool opts_given;               // any of those four
    ffn_comm_t comm;               // after ffn_tool_tp_start
    int64_t rank;
    bool mpi_started;  // this process called MPI_Init (and will call MPI_Finalize)
};

// The option lines of the help texts.
#define FFN_TOOL_TP_USAGE                                                                       \
    "  --tp P        tensor-parallel over P ranks: run under `mpirun -np P` (Open MPI)\n"       \
    "  --shards DIR  with --tp: read this rank's weights from DIR (made by `ffn shard`),\n"     \
    "                checked against MODEL; otherwise each rank shards MODEL in memory\n"       \
    "  --align K     with --tp: split d_ff in units of K columns (default 1: balanced)\n"       \
    "  --layout L    with --tp: each rank's gate/up layout: separate, fused, fused-up-first,\n" \
    "                interleaved (default: as stored)\n"                                        \
    "  --orient O    with --tp: each rank's weight orientation: out-in or in-out\n"             \
    "  --down-bias B with --tp: b_down added on rank0 (default) or after-reduce\n"

// Consumes argv[*i] (and its value) when it is one of the options above: 1 consumed, 0 not a
// --tp option, -1 a bad value (the message printed, prefixed by cmd).
int ffn_tool_tp_option(const char *cmd, int argc, char **argv, int *i, struct ffn_tool_tp *tp);
// With --tp: initialises MPI (MPI_THREAD_FUNNELED) unless already done, wraps MPI_COMM_WORLD,
// checks that its size is P, and sends stdout of ranks other than 0 to /dev/null. 0 on success,
// else the exit status (the message printed). A no-op without --tp.
int ffn_tool_tp_start(const char *cmd, ffn_ctx_t ctx, struct ffn_tool_tp *tp);
// Frees the communicator and finalises MPI if ffn_tool_tp_start initialised it.
void ffn_tool_tp_stop(struct ffn_tool_tp *tp);

// This rank's part of a tensor-parallel block for one layer of a checkpoint.
struct ffn_tool_tpb {
    ffn_tp_block_t block;
    struct ffn_tp_plan plan;
    ffn_tp_shard_t shard;    // sharded in memory
    ffn_tp_shards_t shards;  // or read from a shard set
    void *owned[8];          // f32 copies of quantised / misaligned source tensors
};

// Collective (every rank calls it). On failure the message is in ctx.
enum ffn_status ffn_tool_tpb_make(ffn_ctx_t ctx, const struct ffn_tool_tp *tp,
                                  const char *model_path, const struct ffn_model_layer *l,
                                  struct ffn_tool_tpb *b);
void ffn_tool_tpb_free(struct ffn_tool_tpb *b);
// Backward on every rank, then the weight gradients gathered into `full` (the whole block's
// layout, as for an unsharded block). Collective.
enum ffn_status ffn_tool_tpb_backward(ffn_ctx_t ctx, const struct ffn_tool_tp *tp,
                                      struct ffn_tool_tpb *b, const struct ffn_block_grads *full,
                                      const struct ffn_tensor *dx, const struct ffn_tensor *dy);

// `ffn size --tp P`: per-rank parameters and communication per token for the plain and the gated
// block of widths (d, m_plain, m_gated).
void ffn_tool_size_tp(ffn_ctx_t ctx, int64_t world, int64_t align, int64_t d, int64_t m_plain,
                      int64_t m_gated, int json);

#endif  // FFN_TOOL_TP_H
