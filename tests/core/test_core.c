// test_core.c — the core layer through the public API: status strings; dtype, activation, gated
// and ISA names (round trips, aliases, unknown values); contexts (create/destroy, options,
// forced ISAs, the FFN_ISA environment variable, threads, accuracy, the log callback); API misuse
// (NULL context, NULL views, negative shapes, shape and dtype mismatches, unknown enums, partial
// overlap -> FFN_STATUS_INVALID_ARG with a message naming the argument); ffn_gate_up_split; and
// ffn_tensor_convert against the scalar conversions.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

// True when `word` occurs in `msg` as a whole identifier (not inside a longer name).
static bool ffn__names(const char *msg, const char *word) {
    const size_t n = strlen(word);
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
        const bool left = p == msg || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        const bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (left && right) return true;
    }
    return false;
}

// A call must fail with INVALID_ARG and a message that names `arg`.
static void ffn__expect_invalid(ffn_ctx_t ctx, enum ffn_status st, const char *arg,
                                const char *what) {
    const char *msg = ffn_ctx_last_error(ctx);
    CHECK(st == FFN_STATUS_INVALID_ARG, "%s: status %s, want invalid argument", what,
          ffn_status_string(st));
    CHECK(ffn__names(msg, arg), "%s: message \"%s\" does not name '%s'", what, msg, arg);
}

static void ffn__check_status(void) {
    for (int i = 0; i < FFN_STATUS_COUNT; i++) {
        const char *s = ffn_status_string((enum ffn_status)i);
        CHECK(s && *s && strcmp(s, "unknown status"), "status %d has no text", i);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, ffn_status_string((enum ffn_status)j)),
                  "statuses %d and %d share the text \"%s\"", i, j, s);
    }
    CHECK(!strcmp(ffn_status_string(FFN_STATUS_OK), "ok"), "ok");
    CHECK(!strcmp(ffn_status_string(FFN_STATUS_COUNT), "unknown status") &&
              !strcmp(ffn_status_string((enum ffn_status) - 1), "unknown status"),
          "unknown statuses");
}

static void ffn__check_names(void) {
    static const char *const dt_names[] = {"f32", "bf16", "f16"};
    static const char *const dt_alias[] = {"float32", "bfloat16", "float16"};
    static const size_t dt_size[] = {4, 2, 2};
    for (int i = 0; i < FFN_DTYPE_COUNT; i++) {
        enum ffn_dtype d = FFN_DTYPE_COUNT, d2 = FFN_DTYPE_COUNT;
        CHECK(!strcmp(ffn_dtype_name((enum ffn_dtype)i), dt_names[i]), "dtype %d name", i);
        CHECK(ffn_dtype_from_name(dt_names[i], &d) == FFN_STATUS_OK && d == (enum ffn_dtype)i &&
                  ffn_dtype_from_name(dt_alias[i], &d2) == FFN_STATUS_OK && d2 == d,
              "dtype %s round trip", dt_names[i]);
        CHECK(ffn_dtype_size((enum ffn_dtype)i) == dt_size[i], "dtype %s size", dt_names[i]);
    }
    enum ffn_dtype d;
    CHECK(ffn_dtype_from_name("f64", &d) == FFN_STATUS_INVALID_ARG &&
              ffn_dtype_from_name(NULL, &d) == FFN_STATUS_INVALID_ARG &&
              ffn_dtype_from_name("f32", NULL) == FFN_STATUS_INVALID_ARG,
          "unknown dtype names");
    CHECK(!strcmp(ffn_dtype_name(FFN_DTYPE_COUNT), "?") && ffn_dtype_size(FFN_DTYPE_COUNT) == 0,
          "unknown dtype");

    static const char *const act_names[] = {"gelu_tanh", "gelu_erf", "silu",      "relu",
                                            "sigmoid",   "identity", "quick_gelu"};
    static const char *const glu_names[] = {"geglu_tanh", "geglu_erf", "swiglu",     "reglu",
                                            "glu",        "bilinear",  "quick_geglu"};
    for (int i = 0; i < FFN_ACT_COUNT; i++) {
        enum ffn_act a = FFN_ACT_COUNT;
        CHECK(!strcmp(ffn_act_name((enum ffn_act)i), act_names[i]) &&
                  !strcmp(ffn_glu_name((enum ffn_act)i), glu_names[i]),
              "act %d names", i);
        CHECK(ffn_act_from_name(act_names[i], &a) == FFN_STATUS_OK && a == (enum ffn_act)i,
              "act %s round trip", act_names[i]);
        CHECK(ffn_act_from_name(glu_names[i], &a) == FFN_STATUS_INVALID_ARG,
              "'%s' is a gated name, not an activation", glu_names[i]);
    }
    enum ffn_act a;
    CHECK(ffn_act_from_name("gelu", &a) == FFN_STATUS_INVALID_ARG &&
              ffn_act_from_name(NULL, &a) == FFN_STATUS_INVALID_ARG,
          "unknown activation names (HF aliases are the io layer's)");
    CHECK(!strcmp(ffn_act_name(FFN_ACT_COUNT), "?") && !strcmp(ffn_glu_name(FFN_ACT_COUNT), "?"),
          "unknown activation");

    static const char *const isa_names[] = {"auto", "scalar", "avx2", "avx512"};
    for (int i = 0; i < FFN_ISA_COUNT; i++) {
        enum ffn_isa s = FFN_ISA_COUNT;
        CHECK(!strcmp(ffn_isa_name((enum ffn_isa)i), isa_names[i]) &&
                  ffn_isa_from_name(isa_names[i], &s) == FFN_STATUS_OK && s == (enum ffn_isa)i,
              "isa %s round trip", isa_names[i]);
    }
    enum ffn_isa s;
    CHECK(ffn_isa_from_name("sse2", &s) == FFN_STATUS_INVALID_ARG, "unknown isa name");
    CHECK(ffn_isa_supported(FFN_ISA_SCALAR) && !ffn_isa_supported(FFN_ISA_COUNT),
          "scalar is always supported; an unknown ISA never");
    CHECK(!ffn_isa_supported(FFN_ISA_AVX512) || ffn_isa_supported(FFN_ISA_AVX2),
          "AVX-512 without AVX2");
}

struct ffn__log {
    int calls;
    char last[1024];
};

static void ffn__log_fn(int level, const char *message, void *user) {
    struct ffn__log *l = user;
    (void)level;
    l->calls++;
    snprintf(l->last, sizeof l->last, "%s", message);
}

static void ffn__check_ctx(void) {
    ffn_ctx_t ctx = NULL;
    unsetenv("FFN_ISA");
    CHECK(ffn_ctx_create(NULL, &ctx) == FFN_STATUS_OK && ctx, "create with NULL options");
    CHECK(ffn_isa_supported(ffn_ctx_isa(ctx)) && ffn_ctx_isa(ctx) != FFN_ISA_AUTO,
          "auto ISA is a supported one: %s", ffn_isa_name(ffn_ctx_isa(ctx)));
    const enum ffn_isa best = ffn_isa_supported(FFN_ISA_AVX512) ? FFN_ISA_AVX512
                              : ffn_isa_supported(FFN_ISA_AVX2) ? FFN_ISA_AVX2
                                                                : FFN_ISA_SCALAR;
    CHECK(ffn_ctx_isa(ctx) == best, "auto picks %s, best is %s", ffn_isa_name(ffn_ctx_isa(ctx)),
          ffn_isa_name(best));
    const int def = ffn_ctx_threads(ctx);
    CHECK(def >= 1, "default threads %d", def);
    CHECK(ffn_ctx_set_threads(ctx, 3) == FFN_STATUS_OK && ffn_ctx_threads(ctx) == 3, "threads 3");
    CHECK(ffn_ctx_set_threads(ctx, 0) == FFN_STATUS_OK && ffn_ctx_threads(ctx) == def,
          "threads 0 restores the default");
    ffn__expect_invalid(ctx, ffn_ctx_set_threads(ctx, -1), "n_threads", "set_threads(-1)");
    CHECK(ffn_ctx_accuracy(ctx) == FFN_ACCURACY_DEFAULT &&
              ffn_ctx_set_accuracy(ctx, FFN_ACCURACY_HIGH) == FFN_STATUS_OK &&
              ffn_ctx_accuracy(ctx) == FFN_ACCURACY_HIGH,
          "accuracy");
    CHECK(ffn_ctx_set_accuracy(ctx, (enum ffn_accuracy)7) == FFN_STATUS_INVALID_ARG,
          "unknown accuracy");
    CHECK(ffn_ctx_last_error(ctx)[0] != '\0', "failed call leaves a message");
    CHECK(ffn_ctx_set_threads(ctx, 1) == FFN_STATUS_OK && ffn_ctx_last_error(ctx)[0] == '\0',
          "a successful call clears the message");
    ffn_ctx_destroy(ctx);
    ffn_ctx_destroy(NULL);
    CHECK(ffn_ctx_last_error(NULL) != NULL, "last_error(NULL)");
    CHECK(ffn_ctx_create(NULL, NULL) == FFN_STATUS_INVALID_ARG, "create(NULL, NULL)");

    // Options: size, threads, accuracy, forced ISA.
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.size = 4;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG && !ctx, "opts.size too small");
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.n_threads = -2;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG, "opts.n_threads < 0");
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.n_threads = 2;
    o.accuracy = FFN_ACCURACY_HIGH;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_OK && ffn_ctx_threads(ctx) == 2 &&
              ffn_ctx_accuracy(ctx) == FFN_ACCURACY_HIGH,
          "opts threads/accuracy");
    ffn_ctx_destroy(ctx);
    for (int i = FFN_ISA_SCALAR; i < FFN_ISA_COUNT; i++) {
        o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
        o.force_isa = (enum ffn_isa)i;
        ctx = NULL;
        const enum ffn_status st = ffn_ctx_create(&o, &ctx);
        if (ffn_isa_supported((enum ffn_isa)i)) {
            CHECK(st == FFN_STATUS_OK && ffn_ctx_isa(ctx) == (enum ffn_isa)i, "force_isa %s",
                  ffn_isa_name((enum ffn_isa)i));
            // Every table entry comes from the forced ISA or a lower one, and the public
            // ffn_ctx_kernel_isa reports the table's entry.
            const struct ffn_cpu_kernels *kt = ffn_cpu_kernel_table(ctx);
            CHECK(!ctx || kt, "force_isa %s: a CPU context has a kernel table",
                  ffn_isa_name((enum ffn_isa)i));
            for (int op = 0; op < FFN_KOP_COUNT; op++)
                for (int a = 0; a < FFN_ACT_COUNT && kt; a++) {
                    CHECK(kt->isa[op][a] >= FFN_ISA_SCALAR && kt->isa[op][a] <= (enum ffn_isa)i,
                          "force_isa %s: entry (%d, %d) from %s", ffn_isa_name((enum ffn_isa)i), op,
                          a, ffn_isa_name(kt->isa[op][a]));
                    const enum ffn_isa k =
                        ffn_ctx_kernel_isa(ctx, (enum ffn_op)op, (enum ffn_act)a);
                    CHECK(k == kt->isa[op][a], "ffn_ctx_kernel_isa(%s, %s, %s) = %s",
                          ffn_isa_name((enum ffn_isa)i), ffn_op_name((enum ffn_op)op),
                          ffn_act_name((enum ffn_act)a), ffn_isa_name(k));
                }
            CHECK(ffn_ctx_kernel_isa(ctx, FFN_OP_COUNT, FFN_ACT_SILU) == FFN_ISA_AUTO &&
                      ffn_ctx_kernel_isa(ctx, FFN_OP_ACT_FWD, FFN_ACT_COUNT) == FFN_ISA_AUTO &&
                      ffn_ctx_kernel_isa(ctx, (enum ffn_op) - 1, FFN_ACT_SILU) == FFN_ISA_AUTO,
                  "ffn_ctx_kernel_isa: op or act out of range -> auto");
        } else {
            CHECK(st == FFN_STATUS_UNSUPPORTED && !ctx, "force_isa %s unsupported: %s",
                  ffn_isa_name((enum ffn_isa)i), ffn_status_string(st));
        }
        ffn_ctx_destroy(ctx);
    }
    CHECK(ffn_ctx_kernel_isa(NULL, FFN_OP_ACT_FWD, FFN_ACT_SILU) == FFN_ISA_AUTO,
          "ffn_ctx_kernel_isa(NULL) -> auto");
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.force_isa = (enum ffn_isa)42;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG, "force_isa 42");

    // $FFN_ISA: chooses when force_isa is auto; a bad value is UNSUPPORTED and named in the log.
    setenv("FFN_ISA", "scalar", 1);
    CHECK(ffn_ctx_create(NULL, &ctx) == FFN_STATUS_OK && ffn_ctx_isa(ctx) == FFN_ISA_SCALAR,
          "FFN_ISA=scalar");
    ffn_ctx_destroy(ctx);
    if (ffn_isa_supported(FFN_ISA_AVX2)) {
        o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
        o.force_isa = FFN_ISA_AVX2;
        CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_OK && ffn_ctx_isa(ctx) == FFN_ISA_AVX2,
              "force_isa overrides FFN_ISA");
        ffn_ctx_destroy(ctx);
    }
    struct ffn__log log = {0};
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.log = ffn__log_fn;
    o.log_user = &log;
    setenv("FFN_ISA", "bogus", 1);
    ctx = NULL;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_UNSUPPORTED && !ctx, "FFN_ISA=bogus");
    CHECK(log.calls > 0 && strstr(log.last, "bogus"), "FFN_ISA=bogus: log \"%s\"", log.last);
    for (int i = FFN_ISA_AVX2; i < FFN_ISA_COUNT; i++) {
        if (ffn_isa_supported((enum ffn_isa)i)) continue;
        setenv("FFN_ISA", ffn_isa_name((enum ffn_isa)i), 1);
        CHECK(ffn_ctx_create(NULL, &ctx) == FFN_STATUS_UNSUPPORTED, "FFN_ISA=%s unsupported here",
              ffn_isa_name((enum ffn_isa)i));
    }
    unsetenv("FFN_ISA");
    log.calls = 0;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_OK && log.calls > 0, "log callback at create");
    ffn_ctx_destroy(ctx);
}

static void ffn__check_misuse(void) {
    ffn_ctx_t ctx;
    ffn_ctx_create(NULL, &ctx);
    float a[64] = {0}, b[64] = {0}, c[64] = {0}, d[64] = {0};
    uint16_t hb[64] = {0};
    struct ffn_tensor ta = ffn_tensor_vec(a, FFN_DTYPE_F32, 64),
                      tb = ffn_tensor_vec(b, FFN_DTYPE_F32, 64);
    struct ffn_tensor tc = ffn_tensor_vec(c, FFN_DTYPE_F32, 64),
                      td = ffn_tensor_vec(d, FFN_DTYPE_F32, 64);
    const enum ffn_act act = FFN_ACT_SILU;

    // NULL context: INVALID_ARG from every entry point, no crash.
    CHECK(ffn_act_forward(NULL, act, &ta, &tb) == FFN_STATUS_INVALID_ARG &&
              ffn_act_backward(NULL, act, &ta, &tb, &tc) == FFN_STATUS_INVALID_ARG &&
              ffn_glu_forward(NULL, act, &ta, &tb, &tc) == FFN_STATUS_INVALID_ARG &&
              ffn_glu_backward(NULL, act, &ta, &tb, &tc, &td, &td) == FFN_STATUS_INVALID_ARG &&
              ffn_tensor_convert(NULL, &ta, &tb) == FFN_STATUS_INVALID_ARG &&
              ffn_ctx_set_threads(NULL, 1) == FFN_STATUS_INVALID_ARG,
          "NULL context");
    // NULL views.
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, NULL, &tb), "y", "act_forward y=NULL");
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &ta, NULL), "x", "act_forward x=NULL");
    ffn__expect_invalid(ctx, ffn_act_backward(ctx, act, &ta, &tb, NULL), "dy",
                        "act_backward dy=NULL");
    ffn__expect_invalid(ctx, ffn_glu_forward(ctx, act, &ta, &tb, NULL), "up",
                        "glu_forward up=NULL");
    ffn__expect_invalid(ctx, ffn_glu_forward(ctx, act, &ta, NULL, &tc), "gate",
                        "glu_forward gate=NULL");
    ffn__expect_invalid(ctx, ffn_glu_backward(ctx, act, &ta, NULL, &tb, &tc, &td), "dup",
                        "glu_backward dup=NULL");
    ffn__expect_invalid(ctx, ffn_glu_backward(ctx, act, &ta, &tb, &tc, &td, NULL), "dh",
                        "glu_backward dh=NULL");
    // NULL data in a non-empty view; an empty view is a valid no-op even with NULL data.
    struct ffn_tensor tn = ffn_tensor_vec(NULL, FFN_DTYPE_F32, 64);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &ta, &tn), "x", "x.data=NULL");
    struct ffn_tensor te = ffn_tensor_vec(NULL, FFN_DTYPE_F32, 0);
    CHECK(ffn_act_forward(ctx, act, &te, &te) == FFN_STATUS_OK, "empty views: %s",
          ffn_ctx_last_error(ctx));
    // Negative shapes, row_stride < cols.
    struct ffn_tensor neg = ffn_tensor_2d(a, FFN_DTYPE_F32, -1, 64, 64);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &ta, &neg), "x", "rows=-1");
    neg = ffn_tensor_2d(b, FFN_DTYPE_F32, 1, -5, 64);
    ffn__expect_invalid(ctx, ffn_act_backward(ctx, act, &ta, &tc, &neg), "dy", "cols=-5");
    struct ffn_tensor bad_rs = ffn_tensor_2d(a, FFN_DTYPE_F32, 4, 16, 8);
    struct ffn_tensor ok_2d = ffn_tensor_2d(b, FFN_DTYPE_F32, 4, 16, 16);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &ok_2d, &bad_rs), "x", "row_stride < cols");
    struct ffn_tensor huge = ffn_tensor_2d(a, FFN_DTYPE_F32, INT64_MAX / 2, 16, INT64_MAX / 4);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &huge, &ok_2d), "y", "byte extent overflow");
    // Shape mismatch: the message names both views.
    struct ffn_tensor t32 = ffn_tensor_vec(c, FFN_DTYPE_F32, 32);
    ffn__expect_invalid(ctx, ffn_glu_forward(ctx, act, &ta, &tb, &t32), "up",
                        "shape mismatch (up)");
    CHECK(ffn__names(ffn_ctx_last_error(ctx), "gate"), "shape mismatch names gate: %s",
          ffn_ctx_last_error(ctx));
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &t32, &tb), "y", "shape mismatch (y)");
    // Dtype mismatch between inputs; outputs of glu_backward must share one dtype.
    struct ffn_tensor tbf = ffn_tensor_vec(hb, FFN_DTYPE_BF16, 64);
    ffn__expect_invalid(ctx, ffn_act_backward(ctx, act, &ta, &tb, &tbf), "dy", "dtype mismatch dy");
    ffn__expect_invalid(ctx, ffn_glu_backward(ctx, act, &ta, &tbf, &tc, &td, &tb), "dup",
                        "dtype mismatch dup");
    // Unknown dtype and activation.
    struct ffn_tensor tbad = ffn_tensor_vec(a, (enum ffn_dtype)9, 64);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &tb, &tbad), "x", "unknown dtype");
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, (enum ffn_act)99, &ta, &tb), "act",
                        "unknown act");
    // Overlap: exact alias is fine, a partial overlap is not; two outputs must not overlap.
    CHECK(ffn_act_forward(ctx, act, &ta, &ta) == FFN_STATUS_OK, "exact alias: %s",
          ffn_ctx_last_error(ctx));
    struct ffn_tensor shifted = ffn_tensor_vec(a + 1, FFN_DTYPE_F32, 63),
                      first = ffn_tensor_vec(a, FFN_DTYPE_F32, 63);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &shifted, &first), "y", "partial overlap");
    CHECK(strstr(ffn_ctx_last_error(ctx), "overlap") != NULL, "overlap message: %s",
          ffn_ctx_last_error(ctx));
    ffn__expect_invalid(ctx, ffn_glu_backward(ctx, act, &ta, &ta, &tb, &tc, &td), "dup",
                        "dgate and dup overlap");
    // An alias of a different dtype over the same bytes is an overlap, not an in-place call.
    struct ffn_tensor ta_bf = ffn_tensor_vec(a, FFN_DTYPE_BF16, 64);
    ffn__expect_invalid(ctx, ffn_act_forward(ctx, act, &ta_bf, &ta), "y",
                        "alias with another dtype");
    // ffn_gate_up_split: odd columns, bad order, NULL outputs; the views.
    float fused[4 * 343];
    struct ffn_tensor tf = ffn_tensor_2d(fused, FFN_DTYPE_F32, 4, 343, 343), g, u;
    ffn__expect_invalid(ctx, ffn_gate_up_split(ctx, &tf, FFN_GATE_UP_GATE_FIRST, &g, &u), "fused",
                        "odd columns");
    CHECK(strstr(ffn_ctx_last_error(ctx), "343") != NULL, "odd columns message: %s",
          ffn_ctx_last_error(ctx));
    tf = ffn_tensor_2d(fused, FFN_DTYPE_F32, 4, 342, 343);
    CHECK(ffn_gate_up_split(ctx, &tf, (enum ffn_gate_up_order)5, &g, &u) == FFN_STATUS_INVALID_ARG,
          "unknown order");
    CHECK(ffn_gate_up_split(ctx, &tf, FFN_GATE_UP_GATE_FIRST, NULL, &u) == FFN_STATUS_INVALID_ARG,
          "NULL gate_out");
    CHECK(ffn_gate_up_split(ctx, &tf, FFN_GATE_UP_GATE_FIRST, &g, &u) == FFN_STATUS_OK &&
              g.data == (void *)fused && u.data == (void *)(fused + 171) && g.cols == 171 &&
              u.cols == 171 && g.rows == 4 && g.row_stride == 343 && u.row_stride == 343,
          "gate-first split views");
    CHECK(ffn_gate_up_split(ctx, &tf, FFN_GATE_UP_UP_FIRST, &g, &u) == FFN_STATUS_OK &&
              u.data == (void *)fused && g.data == (void *)(fused + 171),
          "up-first split views");
    // In-place gated backward over a fused buffer (dgate = gate, dup = up: the documented use).
    static float dhbuf[4 * 171];
    for (int i = 0; i < 4 * 171; i++) dhbuf[i] = 1.0f;
    struct ffn_tensor dh = ffn_tensor_2d(dhbuf, FFN_DTYPE_F32, 4, 171, 171);
    for (int i = 0; i < 4 * 343; i++) fused[i] = (float)(i % 17) * 0.25f - 2.0f;
    ffn_gate_up_split(ctx, &tf, FFN_GATE_UP_GATE_FIRST, &g, &u);
    CHECK(ffn_glu_backward(ctx, act, &g, &u, &g, &u, &dh) == FFN_STATUS_OK,
          "in-place glu_backward on the halves of a fused buffer: %s", ffn_ctx_last_error(ctx));
    ffn_ctx_destroy(ctx);
}

// ffn_tensor_convert equals the scalar conversions, for every dtype pair.
static void ffn__check_convert(void) {
    ffn_ctx_t ctx;
    ffn_ctx_create(NULL, &ctx);
    enum { N = 1000 };
    float src32[N], out32[N];
    uint16_t src16[N], out16[N];
    uint64_t s = 0xc0417e7ull;
    for (int i = 0; i < N; i++) src32[i] = ffn_test_logrand(&s, -30.0, 20.0);
    for (int ti = 0; ti < FFN_DTYPE_COUNT; ti++)
        for (int to = 0; to < FFN_DTYPE_COUNT; to++) {
            const enum ffn_dtype din = (enum ffn_dtype)ti, dout = (enum ffn_dtype)to;
            void *src = din == FFN_DTYPE_F32 ? (void *)src32 : (void *)src16;
            void *dst = dout == FFN_DTYPE_F32 ? (void *)out32 : (void *)out16;
            for (int i = 0; i < N; i++) ffn_test_set(src, din, i, src32[i]);
            struct ffn_tensor ts = ffn_tensor_vec(src, din, N), td = ffn_tensor_vec(dst, dout, N);
            CHECK(ffn_tensor_convert(ctx, &td, &ts) == FFN_STATUS_OK, "convert: %s",
                  ffn_ctx_last_error(ctx));
            for (int i = 0; i < N; i++) {
                const float want = ffn_round_to(dout, ffn_test_get(src, din, i));
                CHECK(ffn_test_same(ffn_test_get(dst, dout, i), want),
                      "convert %s->%s i=%d: %a, want %a", ffn_dtype_name(din), ffn_dtype_name(dout),
                      i, ffn_test_get(dst, dout, i), want);
            }
        }
    ffn_ctx_destroy(ctx);
}

// Backends: names, availability, and the CPU context's answers to the backend calls. A CUDA
// context where the build or the machine has no CUDA device is refused (UNSUPPORTED, with the
// reason logged); on a GPU machine it is made (the GPU tests, tests/cuda, go further).
static void ffn__check_backends(void) {
    CHECK(!strcmp(ffn_backend_name(FFN_BACKEND_CPU), "cpu") &&
              !strcmp(ffn_backend_name(FFN_BACKEND_CUDA), "cuda") &&
              !strcmp(ffn_backend_name((enum ffn_backend)9), "?"),
          "backend names");
    enum ffn_backend b = FFN_BACKEND_CPU;
    CHECK(ffn_backend_from_name("cuda", &b) == FFN_STATUS_OK && b == FFN_BACKEND_CUDA,
          "backend_from_name(cuda)");
    CHECK(ffn_backend_from_name("tpu", &b) == FFN_STATUS_INVALID_ARG &&
              ffn_backend_from_name(NULL, &b) == FFN_STATUS_INVALID_ARG,
          "backend_from_name(tpu / NULL)");
    char why[256] = "x";
    CHECK(ffn_backend_available(FFN_BACKEND_CPU, why, sizeof why) && why[0] == '\0',
          "CPU available");
    CHECK(!ffn_backend_available((enum ffn_backend)7, why, sizeof why) && why[0],
          "backend 7 unavailable, with a reason");
    const bool cuda = ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why);
#ifndef FFN_HAVE_CUDA
    CHECK(!cuda && strstr(why, "no cuda backend"), "no CUDA in this build: \"%s\"", why);
#endif
    CHECK(cuda || why[0], "CUDA unavailable comes with a reason");
    printf("core: CUDA backend %s%s%s\n", cuda ? "available" : "unavailable", cuda ? "" : ": ",
           cuda ? "" : why);
    CHECK(!ffn_backend_available(FFN_BACKEND_CUDA, NULL, 0) == !cuda,
          "available() with no reason buffer");

    // A CUDA context: made where a device is, else UNSUPPORTED with the reason in the log.
    struct ffn__log log = {0};
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA;
    o.log = ffn__log_fn;
    o.log_user = &log;
    ffn_ctx_t ctx = NULL;
    const enum ffn_status st = ffn_ctx_create(&o, &ctx);
    if (cuda) {
        CHECK(st == FFN_STATUS_OK && ffn_ctx_backend(ctx) == FFN_BACKEND_CUDA &&
                  ffn_ctx_device(ctx) == 0,
              "CUDA context: %s", log.last);
    } else {
        CHECK(st == FFN_STATUS_UNSUPPORTED && !ctx && log.calls > 0 &&
                  strstr(log.last, "ffn_ctx_create") && strlen(log.last) > 30,
              "CUDA context refused with a reason: %s, \"%s\"", ffn_status_string(st), log.last);
    }
    ffn_ctx_destroy(ctx);
    // Bad options: an unknown backend, a negative device, a stream for a CPU context.
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.log = ffn__log_fn;
    o.log_user = &log;
    o.backend = (enum ffn_backend)5;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG && strstr(log.last, "backend"),
          "backend 5: %s", log.last);
    o.backend = FFN_BACKEND_CUDA;
    o.device = -1;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG && strstr(log.last, "device"),
          "device -1: %s", log.last);
    o.backend = FFN_BACKEND_CPU;
    o.device = 0;
    o.stream = &log;
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_INVALID_ARG && strstr(log.last, "stream"),
          "stream for a CPU context: %s", log.last);
    // An older caller's opts (without the backend fields) get a CPU context.
    o = (struct ffn_ctx_opts)FFN_CTX_OPTS_INIT;
    o.size = offsetof(struct ffn_ctx_opts, backend);
    o.backend = FFN_BACKEND_CUDA;  // beyond the size: ignored
    CHECK(ffn_ctx_create(&o, &ctx) == FFN_STATUS_OK && ffn_ctx_backend(ctx) == FFN_BACKEND_CPU,
          "short opts: a CPU context");
    // A CPU context: no device, no stream, synchronous.
    CHECK(ffn_ctx_device(ctx) == -1 && ffn_ctx_stream(ctx) == NULL, "CPU device/stream");
    CHECK(ffn_ctx_set_stream(ctx, NULL) == FFN_STATUS_OK, "CPU set_stream(NULL)");
    CHECK(ffn_ctx_set_stream(ctx, &log) == FFN_STATUS_UNSUPPORTED &&
              strstr(ffn_ctx_last_error(ctx), "no streams"),
          "CPU set_stream(non-NULL): %s", ffn_ctx_last_error(ctx));
    CHECK(ffn_ctx_synchronize(ctx) == FFN_STATUS_OK, "CPU synchronize");
    CHECK(ffn_ctx_require_cpu(ctx, "ffn_block_create") == FFN_STATUS_OK, "require_cpu");
    ffn_ctx_destroy(ctx);
    CHECK(ffn_ctx_backend(NULL) == FFN_BACKEND_CPU && ffn_ctx_device(NULL) == -1 &&
              ffn_ctx_stream(NULL) == NULL &&
              ffn_ctx_set_stream(NULL, NULL) == FFN_STATUS_INVALID_ARG &&
              ffn_ctx_synchronize(NULL) == FFN_STATUS_INVALID_ARG,
          "NULL context");
}

// The op names, and the public reference in double against values computed independently
// (Python's math.erf / math.exp, 17 digits).
static void ffn__check_op_ref(void) {
    static const char *const names[FFN_OP_COUNT] = {"act_fwd", "act_bwd", "glu_fwd", "glu_bwd"};
    for (int op = 0; op < FFN_OP_COUNT; op++)
        CHECK(!strcmp(ffn_op_name((enum ffn_op)op), names[op]), "ffn_op_name(%d) = %s", op,
              ffn_op_name((enum ffn_op)op));
    CHECK(!strcmp(ffn_op_name(FFN_OP_COUNT), "?") && !strcmp(ffn_op_name((enum ffn_op) - 1), "?"),
          "ffn_op_name out of range");
    const struct {
        enum ffn_act act;
        bool deriv;
        double x, want;
    } refs[] = {
        {FFN_ACT_GELU_ERF, false, 1.0, 0.84134474606854293},   // Φ(1)
        {FFN_ACT_GELU_ERF, true, 1.0, 1.0833154705876864},     // Φ(1) + φ(1)
        {FFN_ACT_SILU, false, 1.0, 0.7310585786300049},        // 1/(1 + e^-1)
        {FFN_ACT_SILU, true, -2.0, -0.09078424878489547},      // σ(x)(1 + x(1 - σ(x)))
        {FFN_ACT_SIGMOID, false, -3.0, 0.04742587317756678},   // 1/(1 + e^3)
        {FFN_ACT_GELU_TANH, false, 2.0, 1.954597694087775},    // x·(1 + tanh u)/2
        {FFN_ACT_QUICK_GELU, false, 1.0, 0.8457957659328212},  // σ(1.702)
        {FFN_ACT_RELU, true, -1.0, 0.0},
        {FFN_ACT_IDENTITY, false, -7.5, -7.5},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        const double got = refs[i].deriv ? ffn_ref_dact(refs[i].act, refs[i].x)
                                         : ffn_ref_act(refs[i].act, refs[i].x);
        CHECK(fabs(got - refs[i].want) <= 1e-14 * fmax(1.0, fabs(refs[i].want)),
              "ffn_ref_%s(%s, %g) = %.17g, expected %.17g", refs[i].deriv ? "dact" : "act",
              ffn_act_name(refs[i].act), refs[i].x, got, refs[i].want);
    }
    CHECK(isnan(ffn_ref_act(FFN_ACT_COUNT, 1.0)) && isnan(ffn_ref_act(FFN_ACT_COUNT, INFINITY)) &&
              isnan(ffn_ref_dact((enum ffn_act) - 1, -INFINITY)),
          "ffn_ref_act / ffn_ref_dact: act out of range -> NaN");
    CHECK(ffn_ref_act(FFN_ACT_SILU, -INFINITY) == 0.0 &&
              signbit(ffn_ref_act(FFN_ACT_SILU, -INFINITY)) &&
              isnan(ffn_ref_act(FFN_ACT_SILU, NAN)),
          "ffn_ref_act special values");
}

int main(void) {
    ffn_check_begin("core");
    ffn__check_op_ref();
    ffn__check_backends();
    ffn__check_status();
    ffn__check_names();
    ffn__check_ctx();
    ffn__check_misuse();
    ffn__check_convert();
    return ffn_check_summary();
}
