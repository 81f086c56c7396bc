// test_tp_mpi.c — tensor-parallel blocks over Open MPI, one launch per world size P
// (`mpirun -np P test_tp_mpi [--level single|funneled|serialized|multiple] [--bug]`).
//
// Default: every case of tp_case.h (each layout the block API accepts × orientations ×
// plain / gated × biases × d_ff 12 and 13 × partition unit × shard layout) through
// ffn_tp_block_forward / _backward, compared with the unsharded block computed on every rank:
// y and dx (after their all-reduce) and every weight and bias gradient, gathered back twice:
// by the test's own position maps and an MPI_Allreduce, and by ffn_tp_grads_gather. Then
// collective failures: bad input on one rank, n_tokens or dx differing across ranks, plans that
// differ, a world size that is not the plan's: an error on every rank, never a hang.
// --bug: the classic mistake shown numerically (P = 2): a fused [gate | up] cut contiguously
// gives rank 0 every gate row and rank 1 every up row; the plan re-blocks it.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "tp_case.h"

// Sharded vs unsharded: the same f32 products summed in another order (over ranks).
#define TOL_SHARD 2e-5
// The contiguous cut computes another function: its error is O(1), far above this.
#define BUG_MIN_ERR 0.1

static int rank, world;
static ffn_ctx_t ctx;
static ffn_comm_t comm;

static int mkdir_p(const char *path) { return mkdir(path, 0777) && errno != EEXIST; }

static double max_over_ranks(double v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

static struct ffn_tp_plan_opts case_opts(const struct tp_case *c) {
    struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
    o.align = c->align, o.layout = c->shard_layout, o.orient = c->shard_orient;
    o.down_bias = c->down_bias;
    return o;
}

// --- one case ------------------------------------------------------------------------------------

struct errs {
    double y, dx, g_test, g_lib;
};

static void sum_logical(struct tp_logical *L) {
    const int64_t d = L->d, m = L->m;
    MPI_Allreduce(MPI_IN_PLACE, L->g, (int)(m * d), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, L->u, (int)(m * d), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, L->dn, (int)(d * m), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, L->bg, (int)m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, L->bu, (int)m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static struct errs run_case(const struct tp_case *c, uint64_t seed) {
    struct errs e = {INFINITY, INFINITY, INFINITY, INFINITY};
    struct tp_ref_run R;
    const bool ref_ok = !tp_ref_run(ctx, c, seed, &R);  // the same on every rank (same seed)
    const int64_t d = c->d, T = c->T, m = c->m;
    char name[160];
    tp_case_name(c, name, sizeof name);
    const struct ffn_tp_plan_opts o = case_opts(c);
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    ffn_tp_shard_t sh = NULL;
    ffn_tp_block_t blk = NULL;
    int64_t c0, n;
    tp_cols(m, world, c->align, rank, &c0, &n);
    const enum ffn_gate_up_layout sl = tp_shard_layout(c);
    const enum ffn_weight_orient sof = tp_shard_orient(c, false), sod = tp_shard_orient(c, true);
    CHECK(ref_ok && !ffn_tp_plan_make(ctx, &R.spec, &R.w, world, &o, &plan) &&
              !ffn_tp_shard_create(ctx, &plan, rank, &R.w, &sh),
          "%s: plan / shard", name);
    // Collective from here on: every rank calls, whatever happened above.
    const enum ffn_status cs =
        ffn_tp_block_create(ctx, comm, &plan, sh ? ffn_tp_shard_weights(sh) : &R.w, NULL, &blk);
    CHECK(cs == FFN_STATUS_OK, "%s: ffn_tp_block_create", name);
    if (cs) goto out;
    float *y = malloc((size_t)(T * d) * 4), *dx = malloc((size_t)(T * d) * 4);
    double *yd = malloc((size_t)(T * d) * sizeof(double)),
           *dxd = malloc((size_t)(T * d) * sizeof(double));
    const struct ffn_tensor tx = ffn_tensor_2d(R.x, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor tdy = ffn_tensor_2d(R.dy, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, d, d);
    // Gradients in the shard's layout; b_down on every rank (RANK0: zero off rank 0).
    struct tp_stored gs;
    tp_stored_alloc(&gs, c->gated, sl, c->bias, c->bias, d, n);
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.gate = gs.t[0], g.up = gs.t[1], g.gate_up = gs.t[2], g.down = gs.t[3];
    g.b_gate = gs.t[4], g.b_up = gs.t[5], g.b_gate_up = gs.t[6], g.b_down = gs.t[7];
    const enum ffn_block_policy pol = seed % 2 ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_RECOMPUTE;
    enum ffn_status st = ffn_tp_block_forward(ctx, blk, &ty, &tx, pol);
    CHECK(!st, "%s: forward", name);
    if (!st) st = ffn_tp_block_backward(ctx, blk, &g, &tdx, &tdy);
    CHECK(!st, "%s: backward", name);
    if (!st) {
        for (int64_t k = 0; k < T * d; k++) yd[k] = y[k], dxd[k] = dx[k];
        e.y = tp_relerr(yd, R.y, T * d);
        e.dx = tp_relerr(dxd, R.dx, T * d);
        // The test's own gather: this rank's columns into logical matrices, summed over ranks.
        struct tp_logical G;
        tp_logical_alloc(&G, d, m);
        tp_stored_to_logical(&gs, c->gated, sl, 1, sof, sod, d, n, c0, false, &G);
        sum_logical(&G);
        double ebd = 0;
        if (c->bias) {  // b_down's gradient as the rule says: Σ dy on rank 0 or on every rank
            const bool here = c->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE || rank == 0;
            for (int64_t j = 0; j < d; j++) G.bd[j] = gs.t[7][j];
            if (here)
                ebd = tp_relerr(G.bd, R.G.bd, d);
            else
                for (int64_t j = 0; j < d; j++) ebd = fabs(G.bd[j]) > ebd ? fabs(G.bd[j]) : ebd;
            memcpy(G.bd, R.G.bd, (size_t)d * sizeof(double));
        }
        e.g_test = tp_logical_err(&G, &R.G, c->gated, c->bias);
        e.g_test = ebd > e.g_test ? ebd : e.g_test;
        tp_logical_free(&G);
        // The library's gather into the whole block's layout, then to logical matrices.
        struct tp_stored full;
        tp_stored_alloc(&full, c->gated, R.spec.gate_up_layout, c->bias, c->bias, d, m);
        struct ffn_block_grads fg = FFN_BLOCK_GRADS_INIT;
        fg.gate = full.t[0], fg.up = full.t[1], fg.gate_up = full.t[2], fg.down = full.t[3];
        fg.b_gate = full.t[4], fg.b_up = full.t[5], fg.b_gate_up = full.t[6], fg.b_down = full.t[7];
        st = ffn_tp_grads_gather(ctx, comm, &plan, &g, &fg);
        CHECK(!st, "%s: ffn_tp_grads_gather", name);
        if (!st) {
            struct tp_logical F;
            tp_logical_alloc(&F, d, m);
            tp_stored_to_logical(&full, c->gated, R.spec.gate_up_layout, c->groups, c->o_first,
                                 c->o_down, d, m, 0, c->bias, &F);
            e.g_lib = tp_logical_err(&F, &R.G, c->gated, c->bias);
            tp_logical_free(&F);
        }
        tp_stored_free(&full);
    }
    const double worst = fmax(fmax(e.y, e.dx), fmax(e.g_test, e.g_lib));
    CHECK(worst <= TOL_SHARD, "%s: sharded vs unsharded y %.2e dx %.2e grads %.2e / %.2e", name,
          e.y, e.dx, e.g_test, e.g_lib);
    tp_stored_free(&gs);
    free(y), free(dx), free(yd), free(dxd);
out:
    ffn_tp_block_destroy(blk);
    ffn_tp_shard_destroy(sh);
    tp_ref_free(&R);
    return e;
}

// --- the table ---------------------------------------------------------------------------------

struct row {
    char key[48];
    int cases;
    struct errs e;
};

static void table_add(struct row *rows, int *n_rows, const struct tp_case *c, struct errs e) {
    char key[48];
    if (!c->gated)
        snprintf(key, sizeof key, "plain");
    else if (c->layout == FFN_GATE_UP_BLOCKED)
        snprintf(key, sizeof key, "gated blocked/%" PRId64, c->groups);
    else
        snprintf(key, sizeof key, "gated %s", tp_layout_name(c->layout));
    const char *on = c->o_first == FFN_WEIGHT_OUT_IN ? "[out,in]" : "[in,out]";
    const char *od = c->o_down == FFN_WEIGHT_OUT_IN ? "[out,in]" : "[in,out]";
    snprintf(key + strlen(key), sizeof key - strlen(key), " %s%s%s", on,
             c->o_first != c->o_down ? "+down " : "", c->o_first != c->o_down ? od : "");
    int i = 0;
    while (i < *n_rows && strcmp(rows[i].key, key)) i++;
    if (i == *n_rows) {
        memset(&rows[i], 0, sizeof rows[i]);
        snprintf(rows[i].key, sizeof rows[i].key, "%s", key);
        (*n_rows)++;
    }
    struct row *r = &rows[i];
    r->cases++;
    r->e.y = fmax(r->e.y, e.y), r->e.dx = fmax(r->e.dx, e.dx);
    r->e.g_test = fmax(r->e.g_test, e.g_test), r->e.g_lib = fmax(r->e.g_lib, e.g_lib);
}

static void run_all(void) {
    static struct tp_case cs[1024];
    static struct row rows[64];
    int n_rows = 0;
    const int n = tp_case_list(world, cs, 1024);
    for (int i = 0; i < n && i < 1024; i++) {
        struct errs e = run_case(&cs[i], 5000u + (uint64_t)i);
        e.y = max_over_ranks(e.y), e.dx = max_over_ranks(e.dx);
        e.g_test = max_over_ranks(e.g_test), e.g_lib = max_over_ranks(e.g_lib);
        table_add(rows, &n_rows, &cs[i], e);
    }
    if (rank != 0) return;
    printf(
        "sharded vs unsharded, P = %d ranks: max |sharded - unsharded| / max |unsharded| over "
        "the cases\n(d_ff 12 and 13, units 1 and 4, biases none / rank 0 / after the reduce, "
        "shard layout as stored and re-blocked)\n",
        world);
    printf("%-40s %5s %10s %10s %12s %12s\n", "layout (stored)", "cases", "y", "dx", "grads(test)",
           "grads(lib)");
    for (int i = 0; i < n_rows; i++)
        printf("%-40s %5d %10.2e %10.2e %12.2e %12.2e\n", rows[i].key, rows[i].cases, rows[i].e.y,
               rows[i].e.dx, rows[i].e.g_test, rows[i].e.g_lib);
    fflush(stdout);
}

// --- collective failures ----------------------------------------------------------------------

static void test_failures(void) {
    struct tp_case c = {8,
                        12,
                        5,
                        FFN_ACT_SILU,
                        true,
                        true,
                        FFN_GATE_UP_FUSED,
                        1,
                        FFN_WEIGHT_OUT_IN,
                        FFN_WEIGHT_OUT_IN,
                        world,
                        1,
                        FFN_GATE_UP_LAYOUT_COUNT,
                        FFN_WEIGHT_ORIENT_COUNT,
                        FFN_TP_DOWN_BIAS_RANK0};
    struct tp_ref_run R;
    if (tp_ref_run(ctx, &c, 77, &R)) return;
    const int64_t d = c.d, T = c.T;
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT, other = FFN_TP_PLAN_INIT;
    ffn_tp_shard_t sh = NULL, sh2 = NULL;
    ffn_tp_block_t blk = NULL, b2 = (ffn_tp_block_t)&c;
    ffn_tp_plan_make(ctx, &R.spec, &R.w, world, NULL, &plan);
    ffn_tp_shard_create(ctx, &plan, rank, &R.w, &sh);
    CHECK(!ffn_tp_block_create(ctx, comm, &plan, ffn_tp_shard_weights(sh), NULL, &blk), "create");
    float *y = calloc((size_t)(T * d), 4), *dx = calloc((size_t)(T * d), 4);
    const struct ffn_tensor tx = ffn_tensor_2d(R.x, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);

    // Bad input on rank 1 only: every rank fails, rank 1 says why.
    const struct ffn_tensor bad = ffn_tensor_2d(R.x, FFN_DTYPE_F32, T, d - 1, d);
    enum ffn_status st =
        ffn_tp_block_forward(ctx, blk, &ty, rank == 1 ? &bad : &tx, FFN_BLOCK_POLICY_NONE);
    CHECK(st == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), rank == 1 ? "x.cols=7" : "another rank failed"),
          "bad x on rank 1: status %d", (int)st);
    // ... and the block still works afterwards.
    st = ffn_tp_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_SAVE);
    CHECK(!st, "forward after a failed one");
    double *yd = malloc((size_t)(T * d) * sizeof(double));
    for (int64_t k = 0; k < T * d; k++) yd[k] = y[k];
    CHECK(tp_relerr(yd, R.y, T * d) <= TOL_SHARD, "y after a failed call");
    free(yd);
    // dx asked for on rank 0 only.
    const struct ffn_tensor tdy = ffn_tensor_2d(R.dy, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, d, d);
    st = ffn_tp_block_backward(ctx, blk, NULL, rank == 0 ? &tdx : NULL, &tdy);
    CHECK(st == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "whether dx is asked for differs"),
          "dx on rank 0 only: status %d", (int)st);
    // n_tokens differing across ranks.
    const struct ffn_tensor tx4 = ffn_tensor_2d(R.x, FFN_DTYPE_F32, rank ? T - 1 : T, d, d);
    const struct ffn_tensor ty4 = ffn_tensor_2d(y, FFN_DTYPE_F32, rank ? T - 1 : T, d, d);
    st = ffn_tp_block_forward(ctx, blk, &ty4, &tx4, FFN_BLOCK_POLICY_NONE);
    CHECK(st == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "n_tokens differs across ranks"),
          "n_tokens 5 / 4: status %d", (int)st);

    // A plan that differs on the last rank (another unit: other widths, so another shard).
    struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
    o.align = rank == world - 1 ? 2 : 1;
    ffn_tp_plan_make(ctx, &R.spec, &R.w, world, &o, &other);
    ffn_tp_shard_create(ctx, &other, rank, &R.w, &sh2);
    st = ffn_tp_block_create(ctx, comm, &other, ffn_tp_shard_weights(sh2), NULL, &b2);
    char want[96];
    snprintf(want, sizeof want, "rank %d's plan differs from rank 0's: align: 2 vs 1", world - 1);
    CHECK(st == FFN_STATUS_INVALID_ARG && b2 == NULL &&
              strstr(ffn_ctx_last_error(ctx), rank == world - 1 ? want : "another rank failed"),
          "plans differ: status %d", (int)st);
    // A plan for another world size.
    struct ffn_tp_plan p3 = FFN_TP_PLAN_INIT;
    ffn_tp_plan_make(ctx, &R.spec, &R.w, world + 1 <= 12 ? world + 1 : 1, NULL, &p3);
    st = ffn_tp_block_create(ctx, comm, &p3, ffn_tp_shard_weights(sh), NULL, &b2);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "the plan is for"),
          "plan for P+1: status %d", (int)st);
    // The public agreement.
    st = ffn_comm_agree(ctx, comm, rank == 0 ? FFN_STATUS_IO : FFN_STATUS_OK);
    CHECK(st == FFN_STATUS_IO, "agree: status %d", (int)st);
    CHECK(ffn_comm_agree(ctx, comm, FFN_STATUS_OK) == FFN_STATUS_OK, "agree OK");
    // The public sum and broadcast on host memory; MPI sums f32 only; sync returns at once.
    float v[3] = {1.0f, (float)rank, -2.5f};
    CHECK(!ffn_comm_allreduce_sum(ctx, comm, v, FFN_DTYPE_F32, 3) && v[0] == (float)world &&
              v[1] == (float)(world * (world - 1) / 2) && v[2] == -2.5f * (float)world,
          "allreduce_sum f32: %g %g %g", v[0], v[1], v[2]);
    uint16_t h16[2] = {0x3f80, 0x3f80};
    st = ffn_comm_allreduce_sum(ctx, comm, h16, FFN_DTYPE_BF16, 2);
    CHECK(st == FFN_STATUS_UNSUPPORTED && strstr(ffn_ctx_last_error(ctx), "does not sum bf16"),
          "allreduce_sum bf16 on MPI: status %d", (int)st);
    char bb[5] = {'r', (char)('0' + rank), 'x', 'y', 'z'};
    CHECK(!ffn_comm_broadcast(ctx, comm, bb, 5, world - 1) && bb[1] == (char)('0' + world - 1),
          "broadcast from the last rank");
    CHECK(ffn_comm_synchronize(ctx, comm) == FFN_STATUS_OK, "sync");
    // Traffic was counted: the forwards above reduced T·d floats each.
    struct ffn_comm_stats cs = FFN_COMM_STATS_INIT;
    CHECK(!ffn_comm_stats(ctx, comm, &cs) && cs.data_calls > 0 && cs.data_bytes > 0 &&
              cs.control_calls > 0 && !strcmp(ffn_comm_backend(comm), "mpi"),
          "stats: %" PRId64 " data calls", cs.data_calls);
    ffn_tp_block_destroy(blk);
    ffn_tp_shard_destroy(sh);
    ffn_tp_shard_destroy(sh2);
    free(y), free(dx);
    tp_ref_free(&R);
}

// --- shard sets that do not belong together (library level, no checkpoint named) -------------

static int copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[1 << 16];
    size_t k;
    int ok = a && b;
    while (ok && (k = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, k, b) == k;
    if (a) fclose(a);
    if (b && fclose(b)) ok = 0;
    return ok ? 0 : 1;
}

// Removes what test_sets writes under tmp (from an earlier run too).
static void clean_sets(const char *tmp) {
    static const char *const dirs[] = {"llama2", "gemma2", "llama2_align4", "mix0", "mix1"};
    char p[700];
    for (int i = 0; i < 5; i++) {
        for (int r = 0; r < 2; r++) {
            snprintf(p, sizeof p, "%s/%s/rank-%d-of-2.safetensors", tmp, dirs[i], r);
            remove(p);
        }
        snprintf(p, sizeof p, "%s/%s", tmp, dirs[i]);
        remove(p);
    }
}

static void test_sets(const char *data, const char *tmp) {
    char a[600], b[600], c[600], mix[600], p0[700], p1[700];
    snprintf(a, sizeof a, "%s/llama2", tmp);
    snprintf(b, sizeof b, "%s/gemma2", tmp);
    snprintf(c, sizeof c, "%s/llama2_align4", tmp);
    int bad = 0;
    if (rank == 0) {  // one writer; the others wait at the broadcast
        char m[600];
        struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        bad = mkdir_p(tmp);
        clean_sets(tmp);
        snprintf(m, sizeof m, "%s/llama", data);
        bad |= ffn_tp_model_shard(ctx, m, 2, NULL, a) != FFN_STATUS_OK;
        o.align = 4;
        bad |= ffn_tp_model_shard(ctx, m, 2, &o, c) != FFN_STATUS_OK;
        snprintf(m, sizeof m, "%s/gemma", data);
        bad |= ffn_tp_model_shard(ctx, m, 2, NULL, b) != FFN_STATUS_OK;
        CHECK(!bad, "ffn_tp_model_shard");
        CHECK(ffn_tp_model_shard(ctx, m, 2, NULL, b) == FFN_STATUS_INVALID_ARG &&
                  strstr(ffn_ctx_last_error(ctx), "is not empty"),
              "a non-empty out_dir is refused");
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) return;
    static const struct {
        const char *second, *msg;
    } mixes[] = {{"gemma2", "comes from another checkpoint than rank 0's: config.json:"},
                 {"llama2_align4",
                  "another shard set than rank 0's (another plan): layers.0: "
                  "align: 4 vs 1"}};
    for (int k = 0; k < 2; k++) {
        snprintf(mix, sizeof mix, "%s/mix%d", tmp, k);
        if (rank == 0) {
            bad = mkdir_p(mix);
            snprintf(p0, sizeof p0, "%s/rank-0-of-2.safetensors", a);
            snprintf(p1, sizeof p1, "%s/rank-0-of-2.safetensors", mix);
            bad |= copy_file(p0, p1);
            snprintf(p0, sizeof p0, "%s/%s/rank-1-of-2.safetensors", tmp, mixes[k].second);
            snprintf(p1, sizeof p1, "%s/rank-1-of-2.safetensors", mix);
            bad |= copy_file(p0, p1);
        }
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        ffn_tp_shards_t sh = (ffn_tp_shards_t)&bad;
        const enum ffn_status st = ffn_tp_shards_open(ctx, comm, mix, NULL, &sh);
        CHECK(!bad && st == FFN_STATUS_INVALID_ARG && sh == NULL &&
                  strstr(ffn_ctx_last_error(ctx), rank == 1 ? mixes[k].msg : "another rank failed"),
              "mixed set %d: status %d", k, (int)st);
    }
    // The set itself opens, and its layers are this rank's columns.
    ffn_tp_shards_t sh = NULL;
    CHECK(!ffn_tp_shards_open(ctx, comm, a, NULL, &sh), "open %s", a);
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    struct ffn_block_weights w;
    CHECK(sh && !ffn_tp_shards_layer(ctx, sh, 1, -1, &plan, &w) && w.gate.rows == 86 &&
              w.down.cols == 86 && plan.world == 2,
          "layer 1 of the set");
    CHECK(sh && ffn_tp_shards_layer(ctx, sh, 2, -1, &plan, &w) == FFN_STATUS_INVALID_ARG,
          "layer 2 of 2");
    ffn_tp_shards_close(sh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) clean_sets(tmp);
}

// --- the classic bug -----------------------------------------------------------------------------

static int run_bug(void) {
    if (world != 2) {
        if (rank == 0) printf("--bug needs 2 ranks\n");
        return 1;
    }
    // A SwiGLU block with gate and up fused [gate | up], stored [out, in]: gate_up [2m, d].
    struct tp_case c = {16,
                        24,
                        7,
                        FFN_ACT_SILU,
                        true,
                        false,
                        FFN_GATE_UP_FUSED,
                        1,
                        FFN_WEIGHT_OUT_IN,
                        FFN_WEIGHT_OUT_IN,
                        2,
                        1,
                        FFN_GATE_UP_LAYOUT_COUNT,
                        FFN_WEIGHT_ORIENT_COUNT,
                        FFN_TP_DOWN_BIAS_RANK0};
    struct tp_ref_run R;
    if (tp_ref_run(ctx, &c, 2024, &R)) return 1;
    const int64_t d = c.d, m = c.m, T = c.T, h = m / 2;
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    CHECK(!ffn_tp_plan_make(ctx, &R.spec, &R.w, 2, NULL, &plan), "plan");
    // The naive split: rank r takes rows [r·m, (r+1)·m) of gate_up (a contiguous half, as one
    // would split any column-parallel weight) and reads it as its own [g_r | u_r]; down is cut
    // row-parallel correctly ([d, m]: columns [r·m/2, (r+1)·m/2)). The plan's shard shapes.
    float *gu = malloc((size_t)(m * d) * 4), *dn = malloc((size_t)(d * h) * 4);
    memcpy(gu, R.S.t[2] + rank * m * d, (size_t)(m * d) * 4);
    for (int64_t o = 0; o < d; o++) memcpy(dn + o * h, R.S.t[3] + o * m + rank * h, (size_t)h * 4);
    struct ffn_block_weights naive = FFN_BLOCK_WEIGHTS_INIT;
    naive.gate_up = ffn_weight_dense(gu, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    naive.down = ffn_weight_dense(dn, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    ffn_tp_shard_t sh = NULL;
    CHECK(!ffn_tp_shard_create(ctx, &plan, rank, &R.w, &sh), "shard");
    double err[2] = {INFINITY, INFINITY};
    float *y = malloc((size_t)(T * d) * 4);
    double *yd = malloc((size_t)(T * d) * sizeof(double));
    const struct ffn_tensor tx = ffn_tensor_2d(R.x, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    for (int k = 0; k < 2; k++) {
        ffn_tp_block_t blk = NULL;
        const enum ffn_status st = ffn_tp_block_create(
            ctx, comm, &plan, k ? ffn_tp_shard_weights(sh) : &naive, NULL, &blk);
        CHECK(!st, "create (%s): no error is raised either way", k ? "plan" : "naive");
        if (!st && !ffn_tp_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_NONE)) {
            for (int64_t i = 0; i < T * d; i++) yd[i] = y[i];
            err[k] = tp_relerr(yd, R.y, T * d);
        }
        ffn_tp_block_destroy(blk);
    }
    // Element-wise, the largest |sharded - unsharded| / |unsharded| over entries with
    // |unsharded| ≥ 1% of its largest, for the naive split.
    if (rank == 0) {
        printf("SwiGLU block, d_model %" PRId64 ", d_ff %" PRId64 ", %" PRId64
               " tokens; gate_up "
               "stored fused [gate | up] as [%" PRId64 ", %" PRId64 "] ([out, in]); 2 ranks\n",
               d, m, T, 2 * m, d);
        printf("  cut contiguously (rank 0 rows 0-%" PRId64
               " = every gate row, rank 1 rows %" PRId64 "-%" PRId64
               " = every up row): max rel err of y %.3e -> %s\n",
               m - 1, m, 2 * m - 1, err[0],
               err[0] > BUG_MIN_ERR ? "WRONG, and no error anywhere" : "?");
        printf("  ffn's plan (rank r gets gate and up outputs %" PRId64 "r to %" PRId64 "r+%" PRId64
               ", re-blocked as [g_r | u_r]): max rel err of y %.3e -> %s\n",
               h, h, h - 1, err[1],
               err[1] <= TOL_SHARD ? "matches the unsharded block" : "MISMATCH");
        printf("  (max rel err = max |y_tp - y| / max |y|, y the unsharded block's output)\n");
    }
    CHECK(err[0] > BUG_MIN_ERR, "the contiguous cut should be wrong: %.3e", err[0]);
    CHECK(err[1] <= TOL_SHARD, "the plan should match: %.3e", err[1]);
    ffn_tp_shard_destroy(sh);
    free(gu), free(dn), free(y), free(yd);
    tp_ref_free(&R);
    return 0;
}

int main(int argc, char **argv) {
    int want = MPI_THREAD_FUNNELED, bug = 0;
    const char *data = NULL, *tmp = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bug"))
            bug = 1;
        else if (!strcmp(argv[i], "--sets") && i + 2 < argc)
            data = argv[i + 1], tmp = argv[i + 2], i += 2;
        else if (!strcmp(argv[i], "--level") && i + 1 < argc) {
            const char *l = argv[++i];
            want = !strcmp(l, "single")       ? MPI_THREAD_SINGLE
                   : !strcmp(l, "serialized") ? MPI_THREAD_SERIALIZED
                   : !strcmp(l, "multiple")   ? MPI_THREAD_MULTIPLE
                                              : MPI_THREAD_FUNNELED;
        }
    }
    int got;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.n_threads = 1;
    MPI_Comm mc = MPI_COMM_WORLD;
    if (ffn_ctx_create(&o, &ctx) || ffn_comm_create_mpi(ctx, &mc, &comm)) {
        printf("rank %d: cannot create the context or the communicator: %s\n", rank,
               ctx ? ffn_ctx_last_error(ctx) : "");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char name[64], label[32];  // each rank counts and reports its own checks
    snprintf(name, sizeof name, "test_tp_mpi rank %d", rank);
    snprintf(label, sizeof label, "rank %d", rank);
    ffn_check_begin(name);
    ffn_check_section(label, 0);
    ffn_check_show_error(ctx);  // failures print the context's last error
    CHECK(ffn_comm_rank(comm) == rank && ffn_comm_size(comm) == world, "rank / size");
    if (rank == 0)
        printf("%d ranks, MPI thread level %d (asked %d), 1 thread per rank\n", world, got, want);
    if (bug)
        run_bug();
    else {
        run_all();
        if (world > 1) test_failures();
        if (world == 2 && data) test_sets(data, tmp);
    }
    ffn_check_summary();
    int fails = (int)ffn_check_failures();
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_tp_mpi: %d failures over %d ranks\n", fails, world);
    ffn_check_show_error(NULL);
    ffn_comm_destroy(comm);
    ffn_ctx_destroy(ctx);
    MPI_Finalize();
    return fails ? 1 : 0;
}
