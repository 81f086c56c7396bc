// test_tp_plan.c — tensor-parallel plans and shards in one process, no communication: SHA-256
// against the FIPS 180-4 examples, the partition of d_ff (balanced, aligned, refused), the
// plan's text (the documented example, round trips, hostile texts), plan comparison, shard
// specs and costs, and, for every case of tp_case.h at P = 1..4, the shards of the library run
// as P local blocks whose partial outputs, summed, and whose gradients, placed back by the
// test's own maps, equal the unsharded block's. Also: the MPI communicator is refused before
// MPI_Init (or in a build without MPI).
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tp/tp_impl.h"
#include "tp_case.h"

// Sharded vs unsharded: the same f32 products summed in another order (over ranks).
#define TOL_SHARD 2e-5

static ffn_ctx_t ctx;

// --- SHA-256 ------------------------------------------------------------------------------------

static void hash_str(const void *p, size_t n, size_t step, char hex[65]) {
    struct ffn_sha256 h;
    uint8_t dg[32];
    ffn_sha256_init(&h);
    for (size_t i = 0; i < n; i += step)
        ffn_sha256_update(&h, (const char *)p + i, n - i < step ? n - i : step);
    ffn_sha256_final(&h, dg);
    ffn_sha256_hex(dg, hex);
}

static void test_sha256(void) {
    static const struct {
        const char *msg, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    char hex[65];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t step = 1; step <= 64; step += 63) {
            hash_str(v[i].msg, strlen(v[i].msg), step, hex);
            CHECK(!strcmp(hex, v[i].hex), "sha256(\"%s\") step %zu = %s", v[i].msg, step, hex);
        }
    // One million 'a' (FIPS 180-2 appendix B.3), in uneven pieces.
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    hash_str(a, 1000000, 4099, hex);
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
          "sha256(1M 'a') = %s", hex);
    free(a);
}

// --- partition -----------------------------------------------------------------------------------

static struct ffn_tp_plan plan_for(int64_t m, int64_t P, int64_t align, enum ffn_status *st) {
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = 64, s.d_ff = m;
    struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
    o.align = align;
    struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
    *st = ffn_tp_plan_make(ctx, &s, NULL, P, &o, &p);
    return p;
}

static void test_partition(void) {
    static const struct {
        int64_t m, P, align, cols[4];
    } v[] = {
        {172, 3, 1, {58, 57, 57}},
        {172, 4, 1, {43, 43, 43, 43}},
        {11008, 4, 128, {2816, 2816, 2688, 2688}},
        {300, 2, 128, {256, 44}},
        {13, 4, 4, {4, 4, 4, 1}},
        {7, 1, 1, {7}},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        enum ffn_status st;
        struct ffn_tp_plan p = plan_for(v[i].m, v[i].P, v[i].align, &st);
        CHECK(st == FFN_STATUS_OK, "plan m=%" PRId64 " P=%" PRId64, v[i].m, v[i].P);
        int64_t next = 0;
        for (int64_t r = 0; r < v[i].P && !st; r++) {
            int64_t c0 = -1, n = -1, t0, tn;
            CHECK(!ffn_tp_plan_range(ctx, &p, r, &c0, &n), "range");
            tp_cols(v[i].m, v[i].P, v[i].align, r, &t0, &tn);
            CHECK(c0 == next && n == v[i].cols[r] && t0 == c0 && tn == n,
                  "m=%" PRId64 " P=%" PRId64 " align=%" PRId64 " rank %" PRId64 ": [%" PRId64
                  ", +%" PRId64 "), expected [%" PRId64 ", +%" PRId64 ")",
                  v[i].m, v[i].P, v[i].align, r, c0, n, next, v[i].cols[r]);
            next += v[i].cols[r];
        }
        int64_t c0, n;
        CHECK(ffn_tp_plan_range(ctx, &p, v[i].P, &c0, &n) == FFN_STATUS_INVALID_ARG, "rank P");
    }
    enum ffn_status st;
    plan_for(100, 2, 128, &st);
    CHECK(st == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "makes 1 unit of align=128"),
          "m=100 align=128 P=2 refused");
    plan_for(3, 4, 1, &st);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "4 ranks need"),
          "m=3 P=4 refused");
    plan_for(64, 0, 1, &st);
    CHECK(st == FFN_STATUS_INVALID_ARG, "world 0 refused");
    plan_for(64, 2, 0, &st);
    CHECK(st == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "align=0"), "align 0");
}

// --- text, comparison, specs, cost -----------------------------------------------------------

static void test_text(void) {
    // The example of ffn.h: a fused [gate | up] SwiGLU, d 64, m 172, two ranks.
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = 64, s.d_ff = 172, s.gate_up_layout = FFN_GATE_UP_FUSED;
    s.bias_gate = s.bias_up = s.bias_down = true;
    struct ffn_tp_plan p = FFN_TP_PLAN_INIT, q = FFN_TP_PLAN_INIT;
    CHECK(!ffn_tp_plan_make(ctx, &s, NULL, 2, NULL, &p), "make");
    char text[FFN_TP_PLAN_TEXT_MAX], why[160];
    CHECK(!ffn_tp_plan_to_string(ctx, &p, text, sizeof text), "to_string");
    const char *want =
        "ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused "
        "tp_groups=1 orient=out_in,out_in,out_in bias=1,1,1 align=1 "
        "shard_layout=fused shard_orient=out_in,out_in,out_in down_bias=rank0 "
        "cols=86x2";
    CHECK(!strcmp(text, want), "text:\n  %s\nexpected\n  %s", text, want);
    CHECK(!ffn_tp_plan_parse(ctx, text, &q) && ffn_tp_plan_equal(&p, &q, why, sizeof why),
          "round trip: %s", why);
    char small[16];
    CHECK(ffn_tp_plan_to_string(ctx, &p, small, sizeof small) == FFN_STATUS_INVALID_ARG, "cap");

    // Differences are named.
    struct ffn_tp_plan r = p;
    r.world = 4;
    CHECK(!ffn_tp_plan_equal(&p, &r, why, sizeof why) && !strcmp(why, "world: 2 vs 4"), "%s", why);
    r = p;
    r.shard_layout = FFN_GATE_UP_SEPARATE;
    CHECK(!ffn_tp_plan_equal(&p, &r, why, sizeof why) &&
              !strcmp(why, "shard_layout: fused vs separate"),
          "%s", why);
    r = p;
    r.align = 128;
    CHECK(!ffn_tp_plan_equal(&p, &r, why, sizeof why) && !strcmp(why, "align: 1 vs 128"), "%s",
          why);

    // Every plan of the case list round-trips through its text.
    for (int64_t P = 1; P <= 4; P++) {
        struct tp_case cs[1024];
        const int n = tp_case_list(P, cs, 1024);
        for (int i = 0; i < n && i < 1024; i++) {
            const struct tp_case *c = &cs[i];
            struct ffn_block_spec sp = tp_spec(c);
            struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
            w.gate.orient = w.up.orient = w.gate_up.orient = c->o_first;
            w.down.orient = c->o_down;
            struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
            o.align = c->align, o.layout = c->shard_layout, o.orient = c->shard_orient;
            o.down_bias = c->down_bias;
            struct ffn_tp_plan a = FFN_TP_PLAN_INIT, b = FFN_TP_PLAN_INIT;
            char name[160];
            tp_case_name(c, name, sizeof name);
            CHECK(!ffn_tp_plan_make(ctx, &sp, &w, P, &o, &a), "make %s", name);
            CHECK(!ffn_tp_plan_to_string(ctx, &a, text, sizeof text) &&
                      !ffn_tp_plan_parse(ctx, text, &b) &&
                      ffn_tp_plan_equal(&a, &b, why, sizeof why),
                  "round trip %s: %s", name, text);
        }
    }
}

static void test_hostile(void) {
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "does not start with"},
        {"ffn-tp-plan/2 world=2", "does not start with"},
        {"ffn-tp-plan/1", "key 'world' is missing"},
        {"ffn-tp-plan/1 world=2 world=2", "appears twice"},
        {"ffn-tp-plan/1 wrld=2", "unknown key 'wrld'"},
        {"ffn-tp-plan/1  world=2", "single spaces"},
        {"ffn-tp-plan/1 world=2 ", "single spaces"},
        {"ffn-tp-plan/1 world", "not key=value"},
        {"ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=87x2",
         "give cols=86x2"},
        {"ffn-tp-plan/1 world=0 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "world=0"},
        {"ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=swish gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "act=swish"},
        {"ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in bias=1,1,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "three orientations"},
        {"ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,0,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "must agree"},
        {"ffn-tp-plan/1 world=2 d_model=64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=blocked "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "holds one group"},
        {"ffn-tp-plan/1 world=2 d_model=99999999999999999999 d_ff=172 act=silu gated=1 "
         "layout=fused tp_groups=1 orient=out_in,out_in,out_in bias=1,1,1 align=1 "
         "shard_layout=fused shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "d_model=99999999999999999999"},
        {"ffn-tp-plan/1 world=2 d_model=-64 d_ff=172 act=silu gated=1 layout=fused tp_groups=1 "
         "orient=out_in,out_in,out_in bias=1,1,1 align=1 shard_layout=fused "
         "shard_orient=out_in,out_in,out_in down_bias=rank0 cols=86x2",
         "d_model=-64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
        const enum ffn_status st = ffn_tp_plan_parse(ctx, bad[i].text, &p);
        CHECK(st == FFN_STATUS_BAD_FORMAT && strstr(ffn_ctx_last_error(ctx), bad[i].msg),
              "hostile text %zu: status %d, expected a message with \"%s\"", i, (int)st,
              bad[i].msg);
    }
    char *huge = malloc(100000);
    memset(huge, 'x', 99999);
    huge[99999] = '\0';
    struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
    CHECK(ffn_tp_plan_parse(ctx, huge, &p) == FFN_STATUS_BAD_FORMAT, "a 100 kB text");
    free(huge);
}

static void test_spec_cost(void) {
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = 768, s.d_ff = 3072, s.gated = false, s.act = FFN_ACT_GELU_TANH;
    s.bias_up = s.bias_down = true;
    for (int mode = 0; mode < 2; mode++) {
        struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        o.down_bias = mode ? FFN_TP_DOWN_BIAS_AFTER_REDUCE : FFN_TP_DOWN_BIAS_RANK0;
        struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
        CHECK(!ffn_tp_plan_make(ctx, &s, NULL, 4, &o, &p), "make");
        int64_t total = 0;
        for (int64_t r = 0; r < 4; r++) {
            struct ffn_block_spec rs;
            CHECK(!ffn_tp_plan_shard_spec(ctx, &p, r, &rs) && rs.d_ff == 768, "spec");
            CHECK(rs.bias_down == (!mode && r == 0), "rank %" PRId64 " bias_down %d", r,
                  rs.bias_down);
            struct ffn_tp_cost c = FFN_TP_COST_INIT;
            CHECK(!ffn_tp_plan_cost(ctx, &p, r, 1, FFN_DTYPE_BF16, &c), "cost");
            // 2·768·768 weights + 768 b_up (+ 768 b_down where the rank holds it).
            const int64_t want = 2 * 768 * 768 + 768 + ((mode || r == 0) ? 768 : 0);
            CHECK(c.n_params == want, "rank %" PRId64 " params %" PRId64 " want %" PRId64, r,
                  c.n_params, want);
            CHECK(c.allreduce_bytes_fwd == 768 * 2 && fabs(c.sent_bytes_fwd - 1.5 * 768 * 2) < 1e-9,
                  "bytes %g %g", c.allreduce_bytes_fwd, c.sent_bytes_fwd);
            total += c.n_params;
        }
        // GPT-2 small's MLP: 4,722,432 parameters; after_reduce replicates b_down 3 more times.
        CHECK(total == 4722432 + (mode ? 3 * 768 : 0), "total %" PRId64, total);
    }
}

// --- shards run as local blocks ---------------------------------------------------------------

// Runs one case with P local blocks; returns the largest relative error (y, dx, gradients).
static double sim_case(const struct tp_case *c, uint64_t seed) {
    struct tp_ref_run R;
    if (!CHECK(!tp_ref_run(ctx, c, seed, &R), "the unsharded reference block")) {
        tp_ref_free(&R);
        return INFINITY;
    }
    const int64_t d = c->d, T = c->T, P = c->world;
    char name[160];
    tp_case_name(c, name, sizeof name);
    struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
    o.align = c->align, o.layout = c->shard_layout, o.orient = c->shard_orient;
    o.down_bias = c->down_bias;
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    double worst = INFINITY;
    double *y = calloc((size_t)(T * d), sizeof(double)),
           *dx = calloc((size_t)(T * d), sizeof(double));
    float *yr = malloc((size_t)(T * d) * 4), *dxr = malloc((size_t)(T * d) * 4);
    struct tp_logical G;
    tp_logical_alloc(&G, d, c->m);
    const enum ffn_gate_up_layout sl = tp_shard_layout(c);
    const enum ffn_weight_orient sof = tp_shard_orient(c, false), sod = tp_shard_orient(c, true);
    if (ffn_tp_plan_make(ctx, &R.spec, &R.w, P, &o, &plan)) {
        FAIL("%s: plan", name);
        goto out;
    }
    CHECK(plan.shard_layout == sl && plan.shard_orient_gate == sof && plan.shard_orient_down == sod,
          "%s: plan's shard layout %d/%d/%d", name, plan.shard_layout, plan.shard_orient_gate,
          plan.shard_orient_down);
    for (int64_t r = 0; r < P; r++) {
        int64_t c0, n;
        tp_cols(c->m, P, c->align, r, &c0, &n);
        ffn_tp_shard_t sh = NULL;
        ffn_block_t blk = NULL;
        struct ffn_block_spec rs;
        if (ffn_tp_shard_create(ctx, &plan, r, &R.w, &sh) ||
            ffn_tp_plan_shard_spec(ctx, &plan, r, &rs)) {
            FAIL("%s: shard %" PRId64, name, r);
            ffn_tp_shard_destroy(sh);
            goto out;
        }
        CHECK(rs.d_ff == n, "%s: rank %" PRId64 " width %" PRId64 " want %" PRId64, name, r,
              rs.d_ff, n);
        struct ffn_block_weights w = *ffn_tp_shard_weights(sh);
        if (c->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE) {
            CHECK(w.b_down.data != NULL, "%s: after-reduce shard without b_down", name);
            memset(&w.b_down, 0, sizeof w.b_down);
        }
        const bool has_bd = rs.bias_down;
        struct tp_stored gs;
        tp_stored_alloc(&gs, c->gated, sl, c->bias, has_bd, d, n);
        struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
        g.gate = gs.t[0], g.up = gs.t[1], g.gate_up = gs.t[2], g.down = gs.t[3];
        g.b_gate = gs.t[4], g.b_up = gs.t[5], g.b_gate_up = gs.t[6], g.b_down = gs.t[7];
        const struct ffn_tensor tx = ffn_tensor_2d(R.x, FFN_DTYPE_F32, T, d, d);
        const struct ffn_tensor ty = ffn_tensor_2d(yr, FFN_DTYPE_F32, T, d, d);
        const struct ffn_tensor tdy = ffn_tensor_2d(R.dy, FFN_DTYPE_F32, T, d, d);
        const struct ffn_tensor tdx = ffn_tensor_2d(dxr, FFN_DTYPE_F32, T, d, d);
        const bool ok = !ffn_block_create(ctx, &rs, &w, NULL, &blk) &&
                        !ffn_block_forward(ctx, blk, &ty, &tx, FFN_BLOCK_POLICY_RECOMPUTE) &&
                        !ffn_block_backward(ctx, blk, &g, &tdx, &tdy);
        CHECK(ok, "%s: rank %" PRId64 " block", name, r);
        for (int64_t k = 0; k < T * d && ok; k++) y[k] += yr[k], dx[k] += dxr[k];
        if (ok) tp_stored_to_logical(&gs, c->gated, sl, 1, sof, sod, d, n, c0, has_bd, &G);
        tp_stored_free(&gs);
        ffn_block_destroy(blk);
        ffn_tp_shard_destroy(sh);
    }
    if (c->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE) {  // what the TP block adds after the sum
        for (int64_t t = 0; t < T; t++)
            for (int64_t j = 0; j < d; j++)
                y[t * d + j] += R.W.bd[j] == R.W.bd[j] ? (float)R.W.bd[j] : 0;
        for (int64_t j = 0; j < d; j++) {
            double s = 0;
            for (int64_t t = 0; t < T; t++) s += R.dy[t * d + j];
            G.bd[j] = s;
        }
    }
    const double ey = tp_relerr(y, R.y, T * d), edx = tp_relerr(dx, R.dx, T * d);
    const double eg = tp_logical_err(&G, &R.G, c->gated, c->bias);
    worst = ey > edx ? ey : edx;
    worst = eg > worst ? eg : worst;
    CHECK(worst <= TOL_SHARD, "%s: sharded vs unsharded y %.2e dx %.2e grads %.2e", name, ey, edx,
          eg);
out:
    tp_logical_free(&G);
    free(y), free(dx), free(yr), free(dxr);
    tp_ref_free(&R);
    return worst;
}

static void test_shards(void) {
    static struct tp_case cs[1024];
    for (int64_t P = 1; P <= 4; P++) {
        const int n = tp_case_list(P, cs, 1024);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            const double e = sim_case(&cs[i], 1000u + (uint64_t)i);
            worst = e > worst ? e : worst;
        }
        printf("P=%" PRId64 ": %d cases, sharded (P local blocks) vs unsharded: max rel err %.2e\n",
               P, n, worst);
    }
}

// A shard refuses weights stored otherwise than the plan says.
static void test_shard_refusals(void) {
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
                        2,
                        1,
                        FFN_GATE_UP_LAYOUT_COUNT,
                        FFN_WEIGHT_ORIENT_COUNT,
                        FFN_TP_DOWN_BIAS_RANK0};
    struct tp_ref_run R;
    if (tp_ref_run(ctx, &c, 5, &R)) return;
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    CHECK(!ffn_tp_plan_make(ctx, &R.spec, &R.w, 2, NULL, &plan), "plan");
    struct ffn_block_weights w = R.w;
    w.gate_up.orient = FFN_WEIGHT_IN_OUT;
    ffn_tp_shard_t sh = NULL;
    CHECK(ffn_tp_shard_create(ctx, &plan, 0, &w, &sh) == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "gate_up is stored [in, out] but the plan"),
          "orientation mismatch refused");
    w = R.w;
    w.gate = w.gate_up;
    CHECK(ffn_tp_shard_create(ctx, &plan, 0, &w, &sh) == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "weights.gate is given"),
          "extra tensor refused");
    w = R.w;
    w.gate_up.rows = 25;
    CHECK(ffn_tp_shard_create(ctx, &plan, 0, &w, &sh) == FFN_STATUS_INVALID_ARG &&
              strstr(ffn_ctx_last_error(ctx), "the plan needs [24, 8]"),
          "shape refused");
    CHECK(ffn_tp_shard_create(ctx, &plan, 2, &R.w, &sh) == FFN_STATUS_INVALID_ARG, "rank 2 of 2");
    CHECK(sh == NULL, "no shard on failure");
    tp_ref_free(&R);
}

static void test_comm_without_mpi(void) {
    // Before MPI_Init (or without MPI in the build) the communicator is refused, not crashed on.
    int fake = 0;
    ffn_comm_t comm = (ffn_comm_t)&fake;
    const enum ffn_status st = ffn_comm_create_mpi(ctx, &fake, &comm);
    CHECK(st == FFN_STATUS_UNSUPPORTED && comm == NULL &&
              (strstr(ffn_ctx_last_error(ctx), "not initialised") ||
               strstr(ffn_ctx_last_error(ctx), "no MPI")),
          "ffn_comm_create_mpi before MPI_Init: status %d", (int)st);
    CHECK(ffn_comm_rank(NULL) == -1 && ffn_comm_size(NULL) == -1, "NULL comm");
    ffn_comm_destroy(NULL);
    // NCCL with a CPU context (or in a build without NCCL): refused, naming why.
    void *fake_nccl = &fake;
    comm = (ffn_comm_t)&fake;
    const enum ffn_status sn = ffn_comm_create_nccl(ctx, &fake_nccl, NULL, &comm);
    CHECK(comm == NULL &&
              ((sn == FFN_STATUS_INVALID_ARG && strstr(ffn_ctx_last_error(ctx), "CUDA context")) ||
               (sn == FFN_STATUS_UNSUPPORTED && strstr(ffn_ctx_last_error(ctx), "no NCCL"))),
          "ffn_comm_create_nccl with a CPU context: status %d: %s", (int)sn,
          ffn_ctx_last_error(ctx));
}

int main(void) {
    ffn_check_begin("test_tp_plan");
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.n_threads = 1;
    if (ffn_ctx_create(&o, &ctx)) return 2;
    ffn_check_show_error(ctx);  // failures print the context's last error
    test_sha256();
    test_partition();
    test_text();
    test_hostile();
    test_spec_cost();
    test_shard_refusals();
    test_comm_without_mpi();
    test_shards();
    ffn_check_show_error(NULL);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
