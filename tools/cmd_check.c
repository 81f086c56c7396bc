// cmd_check.c — `ffn check`: the special values of every activation through a context's kernels
// (the ISA of --isa, default the best supported), printed as a short table of act(x) and act'(x)
// at -inf, -1000, -88, -1, -0, 0, 1, 1000, inf and NaN, and checked against the contract: the
// correctly rounded value (MPFR, tools/oracle.c) within the bound of docs/numerics.md, NaN for
// NaN, exact infinities and zero signs. The gated forms and bf16/f16 storage are checked at the
// same points without being printed. Notes the two classic WGSL bugs (gelu_tanh(1000) clamped to
// 100, silu(-inf) = NaN; docs/numerics.md) as absent or present. Exit status 1 when any value
// breaks the contract.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffn.h"
#include "oracle.h"
#include "tools.h"

#define FFN__NP 10
static const float ffn__points[FFN__NP] = {-INFINITY, -1000.0f, -88.0f,  -1.0f,    -0.0f,
                                           0.0f,      1.0f,     1000.0f, INFINITY, NAN};
static const char *const ffn__point_names[FFN__NP] = {"-inf", "-1000", "-88",  "-1",  "-0",
                                                      "0",    "1",     "1000", "inf", "nan"};
// Factors of the unprinted gated checks: (up, dh).
static const float ffn__glu_m[][2] = {{1.0f, 1.0f}, {-2.0f, 0.5f}, {3.0f, -1.5f}};
#define FFN__N_GLU_M 3

struct ffn__check {
    ffn_ctx_t ctx;
    bool accurate;
    struct ffn_oracle oracle;
    int64_t checks, failures;
};

static void ffn__fmt(char *buf, size_t size, float v) {
    if (isnan(v))
        snprintf(buf, size, "nan");
    else if (v == 0)
        snprintf(buf, size, "%s0", signbit(v) ? "-" : "");
    else
        snprintf(buf, size, "%.6g", (double)v);
}

// Checks one value; prints the failure. Returns ok.
static bool ffn__expect(struct ffn__check *C, enum ffn_op op, int out, enum ffn_act act,
                        enum ffn_dtype dt, float x, float m1, float m2, float got) {
    const bool deriv = op == FFN_OP_ACT_BWD || (op == FFN_OP_GLU_BWD && out == 0);
    const float e1 = op == FFN_OP_GLU_BWD && out == 1 ? m2 : m1;
    const float e2 = op == FFN_OP_GLU_BWD && out == 0 ? m2 : 1.0f;
    const double exact = ffn_oracle_eval(&C->oracle, act, deriv, x, e1, e2, NULL);
    const double err = ffn_ulp_error(op, out, act, dt, got, exact, x, e1, e2);
    const double bound = ffn_ulp_bound(op, act, C->accurate);
    C->checks++;
    if (err <= bound) return true;
    C->failures++;
    static const char *const what[FFN_OP_COUNT][2] = {
        {"act", ""}, {"act'", ""}, {"act(g)*up", ""}, {"dh*up*act'(g)", "dh*act(g)"}};
    printf("  BROKEN: %s %s %s at x=%g (m1=%g, m2=%g): got %a, exact %a (%.3g ulp > %g)\n",
           ffn_act_name(act), what[op][out], ffn_dtype_name(dt), (double)x, (double)m1, (double)m2,
           (double)got, exact, err, bound);
    return false;
}

// act and act' of one activation at the points, in dtype dt; fills y, dy when non-NULL.
static enum ffn_status ffn__unary(struct ffn__check *C, enum ffn_act act, enum ffn_dtype dt,
                                  bool *ok_y, bool *ok_d, float *y, float *d) {
    uint32_t xs[FFN__NP], ones[FFN__NP], ys[FFN__NP], ds[FFN__NP];
    for (int i = 0; i < FFN__NP; i++) {
        ffn_tool_store_f32(xs, dt, i, ffn__points[i]);
        ffn_tool_store_f32(ones, dt, i, 1.0f);
    }
    const struct ffn_tensor tx = ffn_tensor_vec(xs, dt, FFN__NP),
                            t1 = ffn_tensor_vec(ones, dt, FFN__NP);
    const struct ffn_tensor ty = ffn_tensor_vec(ys, dt, FFN__NP),
                            td = ffn_tensor_vec(ds, dt, FFN__NP);
    enum ffn_status st = ffn_act_forward(C->ctx, act, &ty, &tx);
    if (st == FFN_STATUS_OK) st = ffn_act_backward(C->ctx, act, &td, &tx, &t1);
    if (st != FFN_STATUS_OK) return st;
    for (int i = 0; i < FFN__NP; i++) {
        const float x = ffn_tool_load_f32(xs, dt, i);
        const float gy = ffn_tool_load_f32(ys, dt, i), gd = ffn_tool_load_f32(ds, dt, i);
        ok_y[i] = ffn__expect(C, FFN_OP_ACT_FWD, 0, act, dt, x, 1.0f, 1.0f, gy);
        ok_d[i] = ffn__expect(C, FFN_OP_ACT_BWD, 0, act, dt, x, 1.0f, 1.0f, gd);
        if (y) y[i] = gy;
        if (d) d[i] = gd;
    }
    return FFN_STATUS_OK;
}

// The gated forms at the points (gate), for each (up, dh) of ffn__glu_m.
static enum ffn_status ffn__gated(struct ffn__check *C, enum ffn_act act, enum ffn_dtype dt) {
    enum { N = FFN__NP * FFN__N_GLU_M };
    uint32_t g[N], u[N], dh[N], h[N], dg[N], du[N];
    for (int i = 0; i < N; i++) {
        ffn_tool_store_f32(g, dt, i, ffn__points[i % FFN__NP]);
        ffn_tool_store_f32(u, dt, i, ffn__glu_m[i / FFN__NP][0]);
        ffn_tool_store_f32(dh, dt, i, ffn__glu_m[i / FFN__NP][1]);
    }
    const struct ffn_tensor tg = ffn_tensor_vec(g, dt, N), tu = ffn_tensor_vec(u, dt, N),
                            tdh = ffn_tensor_vec(dh, dt, N), th = ffn_tensor_vec(h, dt, N),
                            tdg = ffn_tensor_vec(dg, dt, N), tdu = ffn_tensor_vec(du, dt, N);
    enum ffn_status st = ffn_glu_forward(C->ctx, act, &th, &tg, &tu);
    if (st == FFN_STATUS_OK) st = ffn_glu_backward(C->ctx, act, &tdg, &tdu, &tg, &tu, &tdh);
    if (st != FFN_STATUS_OK) return st;
    for (int i = 0; i < N; i++) {
        const float x = ffn_tool_load_f32(g, dt, i);
        const float m1 = ffn_tool_load_f32(u, dt, i), m2 = ffn_tool_load_f32(dh, dt, i);
        ffn__expect(C, FFN_OP_GLU_FWD, 0, act, dt, x, m1, 1.0f, ffn_tool_load_f32(h, dt, i));
        ffn__expect(C, FFN_OP_GLU_BWD, 0, act, dt, x, m1, m2, ffn_tool_load_f32(dg, dt, i));
        ffn__expect(C, FFN_OP_GLU_BWD, 1, act, dt, x, m1, m2, ffn_tool_load_f32(du, dt, i));
    }
    return FFN_STATUS_OK;
}

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn check [--isa scalar|avx2|avx512] [--accurate]\n"
            "\n"
            "Prints act(x) and act'(x) of every activation at -inf, -1000, -88, -1, -0, 0, 1,\n"
            "1000, inf and NaN through the kernels of the chosen ISA (default: the best this CPU\n"
            "supports), checks them, the gated forms and bf16/f16 storage against the contract\n"
            "(docs/numerics.md; a '!' marks a broken value), and notes the two classic WGSL bugs.\n"
            "Exit status 0 when every value keeps the contract, 1 otherwise, 2 on bad usage.\n");
}

int ffn_cmd_check(int argc, char **argv) {
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.n_threads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
            if (ffn_isa_from_name(argv[++i], &o.force_isa) != FFN_STATUS_OK) {
                fprintf(stderr, "ffn check: unknown ISA '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--accurate")) {
            o.accuracy = FFN_ACCURACY_HIGH;
        } else {
            ffn__usage(stderr);
            return 2;
        }
    }
    struct ffn__check C = {.accurate = o.accuracy == FFN_ACCURACY_HIGH};
    const enum ffn_status cst = ffn_ctx_create(&o, &C.ctx);
    if (cst != FFN_STATUS_OK) {
        fprintf(stderr, "ffn check: cannot create a context: %s\n", ffn_status_string(cst));
        return 2;
    }
    ffn_oracle_init(&C.oracle);
    printf("ffn check: isa %s%s (a '!' marks a value that breaks the contract)\n",
           ffn_isa_name(ffn_ctx_isa(C.ctx)), C.accurate ? ", FFN_ACCURACY_HIGH" : "");
    printf("%-22s", "x");
    for (int i = 0; i < FFN__NP; i++) printf(" %11s", ffn__point_names[i]);
    printf("\n");

    bool gelu_1000_ok = false, silu_inf_ok = false;
    enum ffn_status st = FFN_STATUS_OK;
    for (int a = 0; a < FFN_ACT_COUNT && st == FFN_STATUS_OK; a++) {
        const enum ffn_act act = (enum ffn_act)a;
        float y[FFN__NP], d[FFN__NP];
        bool ok_y[FFN__NP], ok_d[FFN__NP];
        st = ffn__unary(&C, act, FFN_DTYPE_F32, ok_y, ok_d, y, d);
        if (st != FFN_STATUS_OK) break;
        for (int row = 0; row < 2; row++) {
            char label[40], v[32];
            snprintf(label, sizeof label, "%s%s [%s]", ffn_act_name(act), row ? "'" : "",
                     ffn_isa_name(
                         ffn_ctx_kernel_isa(C.ctx, row ? FFN_OP_ACT_BWD : FFN_OP_ACT_FWD, act)));
            printf("%-22s", label);
            for (int i = 0; i < FFN__NP; i++) {
                ffn__fmt(v, sizeof v, row ? d[i] : y[i]);
                printf(" %10s%s", v, (row ? ok_d[i] : ok_y[i]) ? " " : "!");
            }
            printf("\n");
        }
        if (act == FFN_ACT_GELU_TANH) gelu_1000_ok = y[7] == 1000.0f;
        if (act == FFN_ACT_SILU) silu_inf_ok = y[0] == 0 && signbit(y[0]);
        // Unprinted: bf16 and f16 storage, the gated forms in every dtype.
        bool sy[FFN__NP], sd[FFN__NP];
        for (int t = FFN_DTYPE_BF16; t < FFN_DTYPE_COUNT && st == FFN_STATUS_OK; t++)
            st = ffn__unary(&C, act, (enum ffn_dtype)t, sy, sd, NULL, NULL);
        for (int t = 0; t < FFN_DTYPE_COUNT && st == FFN_STATUS_OK; t++)
            st = ffn__gated(&C, act, (enum ffn_dtype)t);
    }
    if (st != FFN_STATUS_OK) {
        fprintf(stderr, "ffn check: %s\n", ffn_ctx_last_error(C.ctx));
        ffn_oracle_clear(&C.oracle);
        ffn_ctx_destroy(C.ctx);
        return 2;
    }
    printf(
        "classic WGSL bugs: gelu_tanh(1000) = 1000 (no input clamp): %s; "
        "silu(-inf) = -0 (not NaN): %s\n",
        gelu_1000_ok ? "absent" : "PRESENT", silu_inf_ok ? "absent" : "PRESENT");
    if (!gelu_1000_ok || !silu_inf_ok) C.failures++;
    printf(
        "ffn check: %lld values checked (f32/bf16/f16, unary and gated), %lld break the "
        "contract\n",
        (long long)C.checks, (long long)C.failures);
    ffn_oracle_clear(&C.oracle);
    ffn_ctx_destroy(C.ctx);
    return C.failures ? 1 : 0;
}
