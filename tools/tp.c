// tp.c — tensor parallelism in the `ffn` tool: --tp options, MPI start / stop, this rank's
// tensor-parallel block for a checkpoint layer, its backward with the gradients gathered back
// into the whole block's layout (so `ffn verify` compares them as for one process), and the
// per-rank lines of `ffn size --tp`.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FFN_HAVE_MPI
#    include <mpi.h>
#endif

#include "args.h"
#include "model.h"
#include "tp.h"

int ffn_tool_tp_option(const char *cmd, int argc, char **argv, int *i, struct ffn_tool_tp *tp) {
    const char *a = argv[*i];
    static const char *const opts[] = {"--tp",     "--shards", "--align",
                                       "--layout", "--orient", "--down-bias"};
    int k = -1;
    for (int j = 0; j < 6; j++)
        if (!strcmp(a, opts[j])) k = j;
    if (k < 0) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", cmd, a);
        return -1;
    }
    if (tp->opts.size == 0) {
        const struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        tp->opts = o;
    }
    const char *v = argv[++*i];
    int64_t n;
    // The checked parser names the command without its "ffn " prefix.
    const char *sub = strncmp(cmd, "ffn ", 4) ? cmd : cmd + 4;
    switch (k) {
    case 0:
        if (!ffn_arg_i64(sub, a, v, 1, FFN_TP_MAX_WORLD, &n)) return -1;
        tp->world = n;
        return 1;
    case 1: tp->shards = v; return 1;
    case 2:
        if (!ffn_arg_i64(sub, a, v, 1, INT64_C(1) << 20, &n)) return -1;
        tp->opts.align = n;
        break;
    case 3: {
        static const char *const names[] = {"separate", "fused", "fused-up-first", "interleaved"};
        int e = -1;
        for (int j = 0; j < 4; j++)
            if (!strcmp(v, names[j])) e = j;
        if (e < 0) {
            fprintf(stderr,
                    "%s: --layout '%s' is not separate, fused, fused-up-first or "
                    "interleaved\n",
                    cmd, ffn_tool_esc(v));
            return -1;
        }
        tp->opts.layout = (enum ffn_gate_up_layout)e;
        break;
    }
    case 4:
        if (strcmp(v, "out-in") && strcmp(v, "in-out")) {
            fprintf(stderr, "%s: --orient '%s' is not out-in or in-out\n", cmd, ffn_tool_esc(v));
            return -1;
        }
        tp->opts.orient = strcmp(v, "out-in") ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
        break;
    default:
        if (strcmp(v, "rank0") && strcmp(v, "after-reduce")) {
            fprintf(stderr, "%s: --down-bias '%s' is not rank0 or after-reduce\n", cmd,
                    ffn_tool_esc(v));
            return -1;
        }
        tp->opts.down_bias =
            strcmp(v, "rank0") ? FFN_TP_DOWN_BIAS_AFTER_REDUCE : FFN_TP_DOWN_BIAS_RANK0;
        break;
    }
    tp->opts_given = true;
    return 1;
}

int ffn_tool_tp_start(const char *cmd, ffn_ctx_t ctx, struct ffn_tool_tp *tp) {
    if (tp->opts.size == 0) {
        const struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        tp->opts = o;
    }
    if (!tp->world) {
        if (tp->shards || tp->opts_given) {
            fprintf(stderr,
                    "%s: --shards, --align, --layout, --orient and --down-bias go with "
                    "--tp P\n",
                    cmd);
            return 2;
        }
        return 0;
    }
#ifndef FFN_HAVE_MPI
    (void)ctx;
    fprintf(stderr,
            "%s: --tp needs a build of ffn with MPI (install libopenmpi-dev and "
            "reconfigure)\n",
            cmd);
    return 2;
#else
    int init = 0, level = 0;
    MPI_Initialized(&init);
    if (!init) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &level) != MPI_SUCCESS) {
            fprintf(stderr, "%s: MPI_Init_thread failed\n", cmd);
            return 2;
        }
        tp->mpi_started = true;
    }
    MPI_Comm world = MPI_COMM_WORLD;
    if (ffn_comm_create_mpi(ctx, &world, &tp->comm)) {
        fprintf(stderr, "%s: %s\n", cmd, ffn_tool_errmsg(ctx));
        return 2;
    }
    tp->rank = ffn_comm_rank(tp->comm);
    if (ffn_comm_size(tp->comm) != tp->world) {
        if (tp->rank == 0)
            fprintf(stderr,
                    "%s: --tp %" PRId64 " but %" PRId64 " processes: run it as `mpirun -np %" PRId64
                    " ffn %s ...`\n",
                    cmd, tp->world, ffn_comm_size(tp->comm), tp->world, cmd + 4);
        return 2;
    }
    // One report: rank 0's. Every rank still prints its own errors on stderr.
    if (tp->rank != 0 && !freopen("/dev/null", "w", stdout)) return 2;
    return 0;
#endif
}

void ffn_tool_tp_stop(struct ffn_tool_tp *tp) {
    ffn_comm_destroy(tp->comm);
    tp->comm = NULL;
#ifdef FFN_HAVE_MPI
    if (tp->mpi_started) MPI_Finalize();
#endif
    tp->mpi_started = false;
}

// --- this rank's block -------------------------------------------------------------------------

// The whole block's spec and weight views of a checkpoint layer (f32 copies of quantised or
// misaligned tensors into b->owned).
static enum ffn_status ffn__full(ffn_ctx_t ctx, const struct ffn_model_layer *l,
                                 struct ffn_tool_tpb *b, struct ffn_block_spec *spec,
                                 struct ffn_block_weights *w) {
    const struct ffn_block_spec s0 = FFN_BLOCK_SPEC_INIT;
    const struct ffn_block_weights w0 = FFN_BLOCK_WEIGHTS_INIT;
    *spec = s0, *w = w0;
    spec->d_model = l->d_model, spec->d_ff = l->d_ff, spec->act = l->act, spec->gated = l->gated;
    spec->gate_up_layout = l->gated ? l->layout : FFN_GATE_UP_SEPARATE;
    const struct ffn_file_tensor *ts[8] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                           &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    struct ffn_weight *ws[8] = {&w->gate,   &w->up,   &w->gate_up,   &w->down,
                                &w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    for (int k = 0; k < 8; k++) {
        const struct ffn_file_tensor *t = ts[k];
        if (!t->name) continue;
        enum ffn_dtype dt = FFN_DTYPE_F32;
        const void *data = t->data;
        if (ffn_file_dtype_to_dtype(t->dtype, &dt) || (uintptr_t)data % ffn_dtype_size(dt)) {
            const int64_t n = ffn_file_tensor_numel(t);
            float *buf = n > 0 ? malloc((size_t)n * sizeof *buf) : NULL;
            if (!buf) return FFN_STATUS_OUT_OF_MEMORY;
            b->owned[k] = buf;
            const enum ffn_status st = ffn_file_tensor_to_f32(ctx, buf, n, t);
            if (st) return st;
            data = buf, dt = FFN_DTYPE_F32;
        }
        *ws[k] = ffn_weight_dense(data, dt, l->orient);
        ws[k]->rows = t->n_dims == 2 ? t->shape[0] : 1;
        ws[k]->cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    }
    const bool fused = spec->gated && spec->gate_up_layout != FFN_GATE_UP_SEPARATE;
    spec->bias_gate = fused ? w->b_gate_up.data != NULL : w->b_gate.data != NULL;
    spec->bias_up = fused ? w->b_gate_up.data != NULL : w->b_up.data != NULL;
    spec->bias_down = w->b_down.data != NULL;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tool_tpb_make(ffn_ctx_t ctx, const struct ffn_tool_tp *tp,
                                  const char *model_path, const struct ffn_model_layer *l,
                                  struct ffn_tool_tpb *b) {
    memset(b, 0, sizeof *b);
    const struct ffn_tp_plan p0 = FFN_TP_PLAN_INIT;
    b->plan = p0;
    struct ffn_block_weights w;
    const struct ffn_block_weights *rw = NULL;
    enum ffn_status st;
    if (tp->shards) {
        // The shard set: checked against the checkpoint (collective), then this layer's file part.
        st = ffn_tp_shards_open(ctx, tp->comm, tp->shards, model_path, &b->shards);
        if (st) return st;
        st = ffn_tp_shards_layer(ctx, b->shards, l->layer, l->expert, &b->plan, &w);
        if (!st) rw = &w;
    } else {
        struct ffn_block_spec spec;
        st = ffn__full(ctx, l, b, &spec, &w);
        if (!st) st = ffn_tp_plan_make(ctx, &spec, &w, tp->world, &tp->opts, &b->plan);
        if (!st) st = ffn_tp_shard_create(ctx, &b->plan, tp->rank, &w, &b->shard);
        if (!st) rw = ffn_tp_shard_weights(b->shard);
    }
    // Every rank reaches the collective create; a rank that failed above passes its status on.
    if (st) {
        const enum ffn_status agreed = ffn_comm_agree(ctx, tp->comm, st);
        (void)agreed;  // this rank's own message stays in ctx
        return st;
    }
    st = ffn_comm_agree(ctx, tp->comm, FFN_STATUS_OK);
    if (!st) st = ffn_tp_block_create(ctx, tp->comm, &b->plan, rw, NULL, &b->block);
    return st;
}

void ffn_tool_tpb_free(struct ffn_tool_tpb *b) {
    ffn_tp_block_destroy(b->block);
    ffn_tp_shard_destroy(b->shard);
    ffn_tp_shards_close(b->shards);
    for (int i = 0; i < 8; i++) free(b->owned[i]);
    memset(b, 0, sizeof *b);
}

enum ffn_status ffn_tool_tpb_backward(ffn_ctx_t ctx, const struct ffn_tool_tp *tp,
                                      struct ffn_tool_tpb *b, const struct ffn_block_grads *full,
                                      const struct ffn_tensor *dx, const struct ffn_tensor *dy) {
    // Local gradients in this rank's shard layout: as many as the shard has tensors.
    struct ffn_block_spec rs;
    enum ffn_status st = ffn_tp_plan_shard_spec(ctx, &b->plan, tp->rank, &rs);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    float *buf[8] = {0};
    const int64_t d = rs.d_model, n = rs.d_ff;
    const bool fused = rs.gated && rs.gate_up_layout != FFN_GATE_UP_SEPARATE;
    const bool bd = b->plan.block.bias_down;
    const int64_t sizes[8] = {rs.gated && !fused ? n * d : 0,
                              !fused ? n * d : 0,
                              fused ? 2 * n * d : 0,
                              d * n,
                              rs.gated && !fused && rs.bias_gate ? n : 0,
                              !fused && rs.bias_up ? n : 0,
                              fused && rs.bias_up ? 2 * n : 0,
                              bd ? d : 0};
    for (int k = 0; k < 8 && !st; k++)
        if (sizes[k] && !(buf[k] = calloc((size_t)sizes[k], sizeof(float))))
            st = FFN_STATUS_OUT_OF_MEMORY;
    g.gate = buf[0], g.up = buf[1], g.gate_up = buf[2], g.down = buf[3];
    g.b_gate = buf[4], g.b_up = buf[5], g.b_gate_up = buf[6], g.b_down = buf[7];
    st = ffn_comm_agree(ctx, tp->comm, st);  // every rank reaches it, OK or not
    if (!st) st = ffn_tp_block_backward(ctx, b->block, &g, dx, dy);
    if (!st) st = ffn_tp_grads_gather(ctx, tp->comm, &b->plan, &g, full);
    for (int k = 0; k < 8; k++) free(buf[k]);
    return st;
}

// --- ffn size --tp
// ---------------------------------------------------------------------------------

void ffn_tool_size_tp(ffn_ctx_t ctx, int64_t world, int64_t align, int64_t d, int64_t m_plain,
                      int64_t m_gated, int json) {
    for (int k = 0; k < 2; k++) {
        struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
        s.d_model = d, s.d_ff = k ? m_gated : m_plain, s.gated = k;
        struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        o.align = align;
        struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
        if (ffn_tp_plan_make(ctx, &s, NULL, world, &o, &p)) {
            fprintf(stderr, "ffn size: --tp %" PRId64 ": %s\n", world, ffn_tool_errmsg(ctx));
            continue;
        }
        struct ffn_tp_cost c0 = FFN_TP_COST_INIT, cl = FFN_TP_COST_INIT, c32 = FFN_TP_COST_INIT;
        ffn_tp_plan_cost(ctx, &p, 0, 1, FFN_DTYPE_BF16, &c0);
        ffn_tp_plan_cost(ctx, &p, world - 1, 1, FFN_DTYPE_BF16, &cl);
        ffn_tp_plan_cost(ctx, &p, 0, 1, FFN_DTYPE_F32, &c32);
        if (json) {
            printf("{\"tp\":%" PRId64 ",\"block\":\"%s\",\"align\":%" PRId64
                   ",\"d_ff_rank0\":%" PRId64 ",\"d_ff_last\":%" PRId64 ",\"params_rank0\":%" PRId64
                   ",\"params_last\":%" PRId64
                   ",\"allreduce_bytes_per_token_bf16\":%.0f,"
                   "\"sent_bytes_per_token_bf16\":%.1f,\"allreduce_bytes_per_token_f32\":%.0f,"
                   "\"sent_bytes_per_token_f32\":%.1f,\"allreduces_fwd\":1,\"allreduces_bwd\":1}\n",
                   world, k ? "gated" : "plain", align, c0.d_ff, cl.d_ff, c0.n_params, cl.n_params,
                   c0.allreduce_bytes_fwd, c0.sent_bytes_fwd, c32.allreduce_bytes_fwd,
                   c32.sent_bytes_fwd);
            continue;
        }
        char p0[32], pl[32];
        ffn_tool_commas(p0, sizeof p0, c0.n_params);
        ffn_tool_commas(pl, sizeof pl, cl.n_params);
        if (k == 0)
            printf("tensor-parallel over %" PRId64 " ranks (d_ff in units of %" PRId64
                   "): one "
                   "all-reduce of y per forward, one of dx per backward\n",
                   world, align);
        printf("%-6s rank 0: d_ff %" PRId64 ", %s params; rank %" PRId64 ": d_ff %" PRId64
               ", %s params; per token and all-reduce: %.0f B bf16 (%.0f B f32) payload, %.0f B "
               "bf16 (%.0f B f32) sent per rank (ring: 2(P-1)/P)\n",
               k ? "gated" : "plain", c0.d_ff, p0, world - 1, cl.d_ff, pl, c0.allreduce_bytes_fwd,
               c32.allreduce_bytes_fwd, c0.sent_bytes_fwd, c32.sent_bytes_fwd);
    }
}
