// tp_case.h — the tensor-parallel tests' own bookkeeping, independent of src/tp/: one block
// case (widths, layout, orientations, biases, the sharding choices), its weights drawn as
// logical matrices and packed into the stored layout with block_ref.h's position maps, the
// unsharded block's results, the partition of d_ff written from its definition, and the
// conversion of any stored gradient (whole or one rank's shard) back to logical matrices.
// Header-only (static functions), shared by test_tp_plan.c and test_tp_mpi.c.
#ifndef FFN_TEST_TP_CASE_H
#define FFN_TEST_TP_CASE_H

#include <stdio.h>
#include <string.h>

#include "block_ref.h"

// block_ref.h's finite differences are not needed here (the block tests own them).
static inline void tp_unused_ref(void) { (void)ref_fd; }

struct tp_case {
    int64_t d, m, T;
    enum ffn_act act;
    bool gated, bias;
    enum ffn_gate_up_layout layout;  // gated only
    int64_t groups;                  // BLOCKED
    enum ffn_weight_orient o_first, o_down;
    int64_t world, align;
    enum ffn_gate_up_layout shard_layout;  // FFN_GATE_UP_LAYOUT_COUNT: as stored
    enum ffn_weight_orient shard_orient;   // FFN_WEIGHT_ORIENT_COUNT: as stored
    enum ffn_tp_down_bias down_bias;
};

static const char *tp_layout_name(enum ffn_gate_up_layout l) {
    static const char *const n[] = {"separate", "[g|u]", "[u|g]", "interleaved", "blocked"};
    return (unsigned)l < 5 ? n[l] : "as-stored";
}

static void tp_case_name(const struct tp_case *c, char *buf, size_t cap) {
    char lay[32];
    if (!c->gated)
        snprintf(lay, sizeof lay, "plain");
    else if (c->layout == FFN_GATE_UP_BLOCKED)
        snprintf(lay, sizeof lay, "blocked/%" PRId64, c->groups);
    else
        snprintf(lay, sizeof lay, "%s", tp_layout_name(c->layout));
    snprintf(
        buf, cap, "%s %s/%s m=%" PRId64 " P=%" PRId64 " align=%" PRId64 " bias=%s shard=%s%s", lay,
        c->o_first == FFN_WEIGHT_OUT_IN ? "oi" : "io", c->o_down == FFN_WEIGHT_OUT_IN ? "oi" : "io",
        c->m, c->world, c->align,
        !c->bias                                 ? "none"
        : c->down_bias == FFN_TP_DOWN_BIAS_RANK0 ? "rank0"
                                                 : "after-reduce",
        c->shard_layout == FFN_GATE_UP_LAYOUT_COUNT ? "as-stored" : tp_layout_name(c->shard_layout),
        c->shard_orient == FFN_WEIGHT_ORIENT_COUNT ? ""
        : c->shard_orient == FFN_WEIGHT_OUT_IN     ? "/oi"
                                                   : "/io");
}

// The partition by its definition: units of `align` columns, the first (units mod P) ranks
// one unit more, the last unit short when m is not a multiple of align.
static void tp_cols(int64_t m, int64_t P, int64_t align, int64_t r, int64_t *c0, int64_t *n) {
    const int64_t units = (m + align - 1) / align;
    int64_t u = 0;
    for (int64_t k = 0; k < r; k++) u += units / P + (k < units % P);
    const int64_t len = units / P + (r < units % P);
    *c0 = u * align;
    const int64_t end = (u + len) * align < m ? (u + len) * align : m;
    *n = end - *c0;
}

// The shard layout and orientation the case expects (as stored: a blocked source gives fused).
static enum ffn_gate_up_layout tp_shard_layout(const struct tp_case *c) {
    if (!c->gated) return FFN_GATE_UP_SEPARATE;
    if (c->shard_layout != FFN_GATE_UP_LAYOUT_COUNT) return c->shard_layout;
    return c->layout == FFN_GATE_UP_BLOCKED ? FFN_GATE_UP_FUSED : c->layout;
}
static enum ffn_weight_orient tp_shard_orient(const struct tp_case *c, bool down) {
    if (c->shard_orient != FFN_WEIGHT_ORIENT_COUNT) return c->shard_orient;
    return down ? c->o_down : c->o_first;
}

// Logical weights or gradients: g, u [m][d] (out, in), dn [d][m], biases.
struct tp_logical {
    int64_t d, m;
    double *g, *u, *dn, *bg, *bu, *bd;
};

static void tp_logical_alloc(struct tp_logical *L, int64_t d, int64_t m) {
    L->d = d, L->m = m;
    L->g = calloc((size_t)(m * d), sizeof(double));
    L->u = calloc((size_t)(m * d), sizeof(double));
    L->dn = calloc((size_t)(d * m), sizeof(double));
    L->bg = calloc((size_t)m, sizeof(double));
    L->bu = calloc((size_t)m, sizeof(double));
    L->bd = calloc((size_t)d, sizeof(double));
}
static void tp_logical_free(struct tp_logical *L) {
    free(L->g), free(L->u), free(L->dn), free(L->bg), free(L->bu), free(L->bd);
    memset(L, 0, sizeof *L);
}

// Stored arrays of one block in the order of struct ffn_block_weights:
// gate, up, gate_up, down, b_gate, b_up, b_gate_up, b_down (NULL: absent).
struct tp_stored {
    float *t[8];
    int64_t n[8];  // elements
};

// Where logical element (j, i) of the gate (up = false) or up lies in a stored block of width
// mw (layout, groups, orientation of the first projection): member index and element index.
static void tp_first_at(bool gated, enum ffn_gate_up_layout layout, int64_t groups,
                        enum ffn_weight_orient o, int64_t d, int64_t mw, bool up, int64_t j,
                        int64_t i, int *member, int64_t *idx) {
    if (!gated || layout == FFN_GATE_UP_SEPARATE) {
        *member = up || !gated ? 1 : 0;
        *idx = ref_idx(o, mw, d, j, i, 0);
        return;
    }
    *member = 2;
    *idx = ref_idx(o, 2 * mw, d, ref_fused_pos(layout, groups, mw, up, j), i, 0);
}
static void tp_first_bias_at(bool gated, enum ffn_gate_up_layout layout, int64_t groups, int64_t mw,
                             bool up, int64_t j, int *member, int64_t *idx) {
    if (!gated || layout == FFN_GATE_UP_SEPARATE) {
        *member = up || !gated ? 5 : 4;
        *idx = j;
        return;
    }
    *member = 6;
    *idx = ref_fused_pos(layout, groups, mw, up, j);
}

// Adds the stored block s (width mw = columns [c0, c0 + mw) of the logical block; layout,
// orientations as given) into the logical L. has_bd: s holds b_down.
static void tp_stored_to_logical(const struct tp_stored *s, bool gated,
                                 enum ffn_gate_up_layout layout, int64_t groups,
                                 enum ffn_weight_orient of, enum ffn_weight_orient od, int64_t d,
                                 int64_t mw, int64_t c0, bool has_bd, struct tp_logical *L) {
    for (int up = gated ? 0 : 1; up < 2; up++)
        for (int64_t j = 0; j < mw; j++) {
            double *dst = up ? L->u : L->g, *bdst = up ? L->bu : L->bg;
            int mem;
            int64_t idx;
            for (int64_t i = 0; i < d; i++) {
                tp_first_at(gated, layout, groups, of, d, mw, up, j, i, &mem, &idx);
                if (s->t[mem]) dst[(c0 + j) * d + i] += s->t[mem][idx];
            }
            tp_first_bias_at(gated, layout, groups, mw, up, j, &mem, &idx);
            if (s->t[mem]) bdst[c0 + j] += s->t[mem][idx];
        }
    for (int64_t o = 0; o < d; o++)
        for (int64_t j = 0; j < mw; j++)
            if (s->t[3]) L->dn[o * L->m + c0 + j] += s->t[3][ref_idx(od, d, mw, o, j, 0)];
    if (has_bd && s->t[7])
        for (int64_t o = 0; o < d; o++) L->bd[o] += s->t[7][o];
}

// Allocates the stored arrays (zeroed) of a block of width mw in the given layout.
static void tp_stored_alloc(struct tp_stored *s, bool gated, enum ffn_gate_up_layout layout,
                            bool bias, bool has_bd, int64_t d, int64_t mw) {
    memset(s, 0, sizeof *s);
    const bool fused = gated && layout != FFN_GATE_UP_SEPARATE;
    if (gated && !fused) s->n[0] = mw * d;
    if (!fused) s->n[1] = mw * d;
    if (fused) s->n[2] = 2 * mw * d;
    s->n[3] = d * mw;
    if (bias && gated && !fused) s->n[4] = mw;
    if (bias && !fused) s->n[5] = mw;
    if (bias && fused) s->n[6] = 2 * mw;
    if (has_bd) s->n[7] = d;
    for (int k = 0; k < 8; k++)
        if (s->n[k]) s->t[k] = calloc((size_t)s->n[k], sizeof(float));
}
static void tp_stored_free(struct tp_stored *s) {
    for (int k = 0; k < 8; k++) free(s->t[k]);
    memset(s, 0, sizeof *s);
}

// Packs logical weights into a whole stored block (the inverse of tp_stored_to_logical).
static void tp_logical_to_stored(const struct tp_logical *L, const struct tp_case *c,
                                 struct tp_stored *s) {
    const int64_t d = c->d, m = c->m;
    for (int up = c->gated ? 0 : 1; up < 2; up++)
        for (int64_t j = 0; j < m; j++) {
            const double *src = up ? L->u : L->g, *bsrc = up ? L->bu : L->bg;
            int mem;
            int64_t idx;
            for (int64_t i = 0; i < d; i++) {
                tp_first_at(c->gated, c->layout, c->groups, c->o_first, d, m, up, j, i, &mem, &idx);
                s->t[mem][idx] = (float)src[j * d + i];
            }
            tp_first_bias_at(c->gated, c->layout, c->groups, m, up, j, &mem, &idx);
            if (s->t[mem]) s->t[mem][idx] = (float)bsrc[j];
        }
    for (int64_t o = 0; o < d; o++)
        for (int64_t j = 0; j < m; j++)
            s->t[3][ref_idx(c->o_down, d, m, o, j, 0)] = (float)L->dn[o * m + j];
    if (s->t[7])
        for (int64_t o = 0; o < d; o++) s->t[7][o] = (float)L->bd[o];
}

// Block views of stored arrays (each matrix with its declared shape).
static void tp_views(const struct tp_stored *s, bool gated, enum ffn_gate_up_layout layout,
                     enum ffn_weight_orient of, enum ffn_weight_orient od, int64_t d, int64_t mw,
                     struct ffn_block_weights *w) {
    struct ffn_block_weights z = FFN_BLOCK_WEIGHTS_INIT;
    *w = z;
    struct ffn_weight *m[8] = {&w->gate,   &w->up,   &w->gate_up,   &w->down,
                               &w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    for (int k = 0; k < 8; k++) {
        if (!s->t[k]) continue;
        const enum ffn_weight_orient o = k == 3 ? od : of;
        *m[k] = ffn_weight_dense(s->t[k], FFN_DTYPE_F32, o);
        if (k < 4) {
            const int64_t n_out = k == 3 ? d : k == 2 ? 2 * mw : mw, n_in = k == 3 ? mw : d;
            m[k]->rows = o == FFN_WEIGHT_OUT_IN ? n_out : n_in;
            m[k]->cols = o == FFN_WEIGHT_OUT_IN ? n_in : n_out;
        }
    }
    (void)gated, (void)layout;
}

static struct ffn_block_spec tp_spec(const struct tp_case *c) {
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = c->d, s.d_ff = c->m, s.act = c->act, s.gated = c->gated;
    s.gate_up_layout = c->gated ? c->layout : FFN_GATE_UP_SEPARATE;
    s.tp_groups = c->layout == FFN_GATE_UP_BLOCKED ? c->groups : 1;
    s.bias_gate = c->bias && c->gated, s.bias_up = c->bias, s.bias_down = c->bias;
    return s;
}

// max |a - b| / max |b| over n doubles (a normwise relative error).
static double tp_relerr(const double *a, const double *b, int64_t n) {
    double e = 0, s = 0;
    for (int64_t k = 0; k < n; k++) {
        const double d = fabs(a[k] - b[k]);
        e = d > e || isnan(d) ? d : e;
        s = fabs(b[k]) > s ? fabs(b[k]) : s;
    }
    return s > 0 ? e / s : e;
}

// The largest relative error over every logical gradient.
static double tp_logical_err(const struct tp_logical *a, const struct tp_logical *b, bool gated,
                             bool bias) {
    const int64_t d = a->d, m = a->m;
    double e = tp_relerr(a->u, b->u, m * d);
    const double ed = tp_relerr(a->dn, b->dn, d * m);
    e = ed > e ? ed : e;
    if (gated) {
        const double eg = tp_relerr(a->g, b->g, m * d);
        e = eg > e ? eg : e;
    }
    if (bias) {
        const double e1 = tp_relerr(a->bu, b->bu, m), e2 = tp_relerr(a->bd, b->bd, d);
        e = e1 > e ? e1 : e;
        e = e2 > e ? e2 : e;
        if (gated) {
            const double e3 = tp_relerr(a->bg, b->bg, m);
            e = e3 > e ? e3 : e;
        }
    }
    return e;
}

// --- the case list ------------------------------------------------------------------------------
// Every layout the block API accepts (plain; gated: two tensors, [g|u], [u|g], interleaved,
// blocked for 2 and 3 groups) × orientations (both [out, in], both [in, out], mixed) × biases
// (none, b_down on rank 0, b_down after the reduce) × d_ff (12, and 13 which no P > 1 divides)
// × partition unit (1, 4), each once with the shard layout as stored and once with another
// layout and orientation (a re-blocking in both directions). `world` is P.
static int tp_case_list(int64_t world, struct tp_case *out, int cap) {
    static const enum ffn_act acts[] = {FFN_ACT_SILU, FFN_ACT_GELU_TANH, FFN_ACT_RELU,
                                        FFN_ACT_GELU_ERF, FFN_ACT_SIGMOID};
    struct lay {
        bool gated;
        enum ffn_gate_up_layout layout, alt;
        int64_t groups;
    } lays[] = {
        {false, FFN_GATE_UP_SEPARATE, FFN_GATE_UP_SEPARATE, 1},
        {true, FFN_GATE_UP_SEPARATE, FFN_GATE_UP_FUSED, 1},
        {true, FFN_GATE_UP_FUSED, FFN_GATE_UP_SEPARATE, 1},
        {true, FFN_GATE_UP_FUSED_UP_FIRST, FFN_GATE_UP_INTERLEAVED, 1},
        {true, FFN_GATE_UP_INTERLEAVED, FFN_GATE_UP_FUSED_UP_FIRST, 1},
        {true, FFN_GATE_UP_BLOCKED, FFN_GATE_UP_SEPARATE, 2},
        {true, FFN_GATE_UP_BLOCKED, FFN_GATE_UP_INTERLEAVED, 3},
    };
    const enum ffn_weight_orient OI = FFN_WEIGHT_OUT_IN, IO = FFN_WEIGHT_IN_OUT;
    const enum ffn_weight_orient orients[3][2] = {{OI, OI}, {IO, IO}, {OI, IO}};
    int n = 0, k = 0;
    for (size_t li = 0; li < sizeof lays / sizeof lays[0]; li++)
        for (int oi = 0; oi < 3; oi++)
            for (int bias = 0; bias < 3; bias++)
                for (int64_t m = 12; m <= 13; m++)
                    for (int64_t align = 1; align <= 4; align += 3)
                        for (int alt = 0; alt < 2; alt++) {
                            const struct lay *L = &lays[li];
                            if (L->layout == FFN_GATE_UP_INTERLEAVED && orients[oi][0] != OI)
                                continue;
                            if (L->layout == FFN_GATE_UP_BLOCKED && m % L->groups) continue;
                            if (alt && (!L->gated || align != 1)) continue;
                            if ((m + align - 1) / align < world) continue;
                            struct tp_case c = {
                                8,
                                m,
                                5,
                                acts[k++ % 5],
                                L->gated,
                                bias > 0,
                                L->layout,
                                L->groups,
                                orients[oi][0],
                                orients[oi][1],
                                world,
                                align,
                                FFN_GATE_UP_LAYOUT_COUNT,
                                FFN_WEIGHT_ORIENT_COUNT,
                                bias == 2 ? FFN_TP_DOWN_BIAS_AFTER_REDUCE : FFN_TP_DOWN_BIAS_RANK0};
                            if (alt) {
                                c.shard_layout = L->alt;
                                // The other orientation (interleaved shards need [out, in]).
                                c.shard_orient = L->alt == FFN_GATE_UP_INTERLEAVED ? OI
                                                 : orients[oi][0] == OI            ? IO
                                                                                   : OI;
                            }
                            if (n < cap) out[n] = c;
                            n++;
                        }
    return n;
}

// --- the unsharded block: weights, inputs, results --------------------------------------------

struct tp_ref_run {
    struct tp_logical W;  // logical weights
    struct tp_stored S;   // the whole block as stored
    struct ffn_block_spec spec;
    struct ffn_block_weights w;
    float *x, *dy;        // [T, d]
    double *y, *dx;       // the unsharded block's results
    struct tp_logical G;  // its gradients, logical
};

static uint64_t tp_rng;
static double tp_rnd(void) {  // uniform in [-1, 1)
    tp_rng = tp_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(tp_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void tp_ref_free(struct tp_ref_run *R) {
    tp_logical_free(&R->W), tp_logical_free(&R->G), tp_stored_free(&R->S);
    free(R->x), free(R->dy), free(R->y), free(R->dx);
    memset(R, 0, sizeof *R);
}

// Draws the case's weights (seeded), packs them, runs the unsharded block forward + backward.
// 0 on success; on failure prints the library's message.
static int tp_ref_run(ffn_ctx_t ctx, const struct tp_case *c, uint64_t seed, struct tp_ref_run *R) {
    memset(R, 0, sizeof *R);
    const int64_t d = c->d, m = c->m, T = c->T;
    tp_rng = seed;
    tp_logical_alloc(&R->W, d, m);
    tp_logical_alloc(&R->G, d, m);
    const double ws = 1.0 / sqrt((double)d);
    for (int64_t k = 0; k < m * d; k++) R->W.g[k] = ws * tp_rnd(), R->W.u[k] = ws * tp_rnd();
    for (int64_t k = 0; k < d * m; k++) R->W.dn[k] = tp_rnd() / sqrt((double)m);
    for (int64_t k = 0; k < m; k++) R->W.bg[k] = 0.3 * tp_rnd(), R->W.bu[k] = 0.3 * tp_rnd();
    for (int64_t k = 0; k < d; k++) R->W.bd[k] = 0.3 * tp_rnd();
    tp_stored_alloc(&R->S, c->gated, c->gated ? c->layout : FFN_GATE_UP_SEPARATE, c->bias, c->bias,
                    d, m);
    tp_logical_to_stored(&R->W, c, &R->S);
    R->spec = tp_spec(c);
    tp_views(&R->S, c->gated, c->layout, c->o_first, c->o_down, d, m, &R->w);
    R->x = malloc((size_t)(T * d) * sizeof(float));
    R->dy = malloc((size_t)(T * d) * sizeof(float));
    for (int64_t k = 0; k < T * d; k++)
        R->x[k] = (float)(1.5 * tp_rnd()), R->dy[k] = (float)tp_rnd();
    R->y = calloc((size_t)(T * d), sizeof(double));
    R->dx = calloc((size_t)(T * d), sizeof(double));
    // The unsharded block, its gradients in the stored layout.
    struct tp_stored gs;
    tp_stored_alloc(&gs, c->gated, R->spec.gate_up_layout, c->bias, c->bias, d, m);
    float *y = malloc((size_t)(T * d) * sizeof(float)),
          *dx = malloc((size_t)(T * d) * sizeof(float));
    ffn_block_t blk = NULL;
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.gate = gs.t[0], g.up = gs.t[1], g.gate_up = gs.t[2], g.down = gs.t[3];
    g.b_gate = gs.t[4], g.b_up = gs.t[5], g.b_gate_up = gs.t[6], g.b_down = gs.t[7];
    const struct ffn_tensor tx = ffn_tensor_2d(R->x, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor tdy = ffn_tensor_2d(R->dy, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor tdx = ffn_tensor_2d(dx, FFN_DTYPE_F32, T, d, d);
    int rc = 0;
    if (ffn_block_create(ctx, &R->spec, &R->w, NULL, &blk) ||
        ffn_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_SAVE) ||
        ffn_block_backward(ctx, blk, &g, &tdx, &tdy)) {
        printf("FAIL unsharded block: %s\n", ffn_ctx_last_error(ctx));
        rc = 1;
    }
    for (int64_t k = 0; k < T * d && !rc; k++) R->y[k] = y[k], R->dx[k] = dx[k];
    if (!rc)
        tp_stored_to_logical(&gs, c->gated, R->spec.gate_up_layout, c->groups, c->o_first,
                             c->o_down, d, m, 0, c->bias, &R->G);
    ffn_block_destroy(blk);
    tp_stored_free(&gs);
    free(y), free(dx);
    return rc;
}

#endif  // FFN_TEST_TP_CASE_H
