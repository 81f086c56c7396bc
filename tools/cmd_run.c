// cmd_run.c — `ffn run MODEL --layer L --input IN.safetensors --output OUT.safetensors`: the FFN
// of layer L on a tensor x [tokens, d] (any float dtype), writing y [tokens, d] (f32). The block
// computes in the checkpoint's dtype (bf16 weights: bf16 GEMMs with f32 accumulation). A y with
// NaN or inf values is reported (exit 1) and not written: non-finite weights or inputs are named
// instead of being passed on silently.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "model.h"
#include "tools.h"
#include "tp.h"

static void ffn__usage(FILE *f) {
    fprintf(
        f,
        "usage: ffn run MODEL --layer L --input IN.safetensors --output OUT.safetensors\n"
        "               [--expert E] [--name X] [--tp P [--shards DIR] ...]\n"
        "\n"
        "Runs the FFN of layer L on the tensor x [tokens, d] (or [d]) of IN.safetensors and\n"
        "writes y (f32, same shape) to OUT.safetensors.\n"
        "\n"
        "  --layer L   the layer (0-based)\n"
        "  --expert E  the expert, for a mixture-of-experts layer\n"
        "  --name X    the input tensor's name (default: \"x\", or the file's only "
        "tensor)\n" FFN_TOOL_TP_USAGE
        "\n"
        "exit status: 0 success, 1 the output holds NaN/inf (not written), 2 bad input or usage\n");
}

int ffn_cmd_run(int argc, char **argv) {
    const char *model_path = NULL, *in = NULL, *out = NULL, *name = NULL;
    int64_t layer = -1, expert = -1;
    struct ffn_tool_tp tp = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        }
        const int k = ffn_tool_tp_option("ffn run", argc, argv, &i, &tp);
        if (k < 0) return 2;
        if (k) continue;
        const bool takes = !strcmp(a, "--layer") || !strcmp(a, "--expert") ||
                           !strcmp(a, "--input") || !strcmp(a, "--output") || !strcmp(a, "--name");
        if (takes && !(v = ffn_arg_value("run", argc, argv, &i))) return 2;
        if (!strcmp(a, "--layer")) {
            if (!ffn_arg_i64("run", a, v, 0, FFN_TOOL_MAX_LAYER, &layer)) return 2;
        } else if (!strcmp(a, "--expert")) {
            if (!ffn_arg_i64("run", a, v, 0, FFN_TOOL_MAX_EXPERT, &expert)) return 2;
        } else if (!strcmp(a, "--input")) {
            in = v;
        } else if (!strcmp(a, "--output")) {
            out = v;
        } else if (!strcmp(a, "--name")) {
            name = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ffn run: unknown option '%s'\n", ffn_tool_esc(a));
            return 2;
        } else if (!model_path) {
            model_path = a;
        } else {
            fprintf(stderr, "ffn run: unexpected argument '%s'\n", ffn_tool_esc(a));
            return 2;
        }
    }
    if (!model_path || !in || !out || layer < 0) {
        fprintf(stderr, "ffn run: MODEL, --layer, --input and --output are required\n");
        ffn__usage(stderr);
        return 2;
    }
    if (!ffn_arg_want("run", "--input", in, false)) return 2;
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) {
        fprintf(stderr, "ffn run: cannot create a context\n");
        return 2;
    }
    int rc = 2;
    ffn_model_t model = NULL;
    ffn_safetensors_t io = NULL;
    float *x = NULL, *y = NULL;
    struct ffn_tool_block b = {0};
    struct ffn_tool_tpb tb = {0};
    if (ffn_tool_tp_start("ffn run", ctx, &tp)) goto done;
    // The output is checked before any work (and again when it is written).
    if (ffn_file_check_output(ctx, out) || ffn_model_open(ctx, model_path, &model) ||
        ffn_safetensors_open(ctx, in, &io)) {
        fprintf(stderr, "ffn run: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    const struct ffn_model_desc *desc = ffn_model_desc(model);
    char mp[1024];  // the model's path as printed (escaped once, used below)
    ffn_text_escape(mp, sizeof mp, model_path);
    if (desc->n_experts && expert < 0) {
        fprintf(stderr, "ffn run: %s has %" PRId64 " experts per layer; give --expert E\n", mp,
                desc->n_experts);
        goto done;
    }
    if (!desc->n_experts && expert >= 0) {
        fprintf(stderr, "ffn run: --expert %" PRId64 ": %s has no experts (a dense model)\n",
                expert, mp);
        goto done;
    }
    struct ffn_model_layer l;
    if (ffn_model_layer(ctx, model, layer, desc->n_experts ? expert : -1, &l)) {
        fprintf(stderr, "ffn run: %s: %s\n", mp, ffn_tool_errmsg(ctx));
        goto done;
    }
    if (!name) {
        struct ffn_file_tensor t;
        if (ffn_safetensors_find(NULL, io, "x", &t) == FFN_STATUS_OK)
            name = "x";
        else if (ffn_safetensors_count(io) == 1 && !ffn_safetensors_get(NULL, io, 0, &t))
            name = t.name;
        else {
            fprintf(stderr, "ffn run: %s: no tensor 'x' (and more than one tensor): give --name\n",
                    ffn_tool_esc(in));
            goto done;
        }
    }
    struct ffn_file_tensor tx;
    if (!(x = ffn_tool_read_f32(ctx, "ffn run", io, in, name, &tx))) goto done;
    const int64_t d = l.d_model;
    const bool vec = tx.n_dims == 1;
    if (!((vec && tx.shape[0] == d) || (tx.n_dims == 2 && tx.shape[1] == d))) {
        fprintf(stderr,
                "ffn run: %s: tensor '%s' must be [tokens, %" PRId64 "] or [%" PRId64
                "] (d of %s)\n",
                ffn_tool_esc(in), ffn_tool_esc(name), d, d, mp);
        goto done;
    }
    const int64_t T = vec ? 1 : tx.shape[0];
    if (T == 0) {
        fprintf(stderr, "ffn run: %s: tensor '%s' has 0 tokens: nothing to run\n", ffn_tool_esc(in),
                ffn_tool_esc(name));
        goto done;
    }
    y = malloc((size_t)(T * d) * sizeof *y);
    if (!y) {
        fprintf(stderr, "ffn run: out of memory for y [%" PRId64 ", %" PRId64 "] (%.1f MiB)\n", T,
                d, (double)(T * d) * 4.0 / (1 << 20));
        goto done;
    }
    if (tp.world ? ffn_tool_tpb_make(ctx, &tp, model_path, &l, &tb)
                 : ffn_tool_block_make(ctx, &l, NULL, &b)) {
        fprintf(stderr, "ffn run: %s layer %" PRId64 ": %s\n", mp, layer, ffn_tool_errmsg(ctx));
        goto done;
    }
    struct ffn_tensor vx = ffn_tensor_2d(x, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor vy = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    if (tp.world ? ffn_tp_block_forward(ctx, tb.block, &vy, &vx, FFN_BLOCK_POLICY_NONE)
                 : ffn_block_forward(ctx, b.block, &vy, &vx, FFN_BLOCK_POLICY_NONE)) {
        fprintf(stderr, "ffn run: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    int64_t first;
    const int64_t bad = ffn_tool_nonfinite(y, T * d, &first);
    if (bad) {
        const int64_t bad_x = ffn_tool_nonfinite(x, T * d, NULL);
        const int64_t bad_w = ffn_tool_layer_nonfinite(ctx, &l);
        fprintf(stderr,
                "ffn run: y has %" PRId64 " non-finite values (NaN/inf; first at [%" PRId64
                ", %" PRId64 "]): %s layer %" PRId64 "'s weights hold %" PRId64
                " non-finite values, the input %" PRId64 "; %s not written\n",
                bad, first / d, first % d, mp, layer, bad_w, bad_x, ffn_tool_esc(out));
        rc = 1;
        goto done;
    }
    char lay[32];
    snprintf(lay, sizeof lay, "%" PRId64, layer);
    const struct ffn_safetensors_kv meta[] = {
        {"layer", lay}, {"model", model_path}, {"tool", "ffn run"}};
    struct ffn_file_tensor ty = {.name = "y",
                                 .dtype = FFN_FILE_DTYPE_F32,
                                 .n_dims = vec ? 1 : 2,
                                 .data = y,
                                 .nbytes = (size_t)(T * d) * sizeof *y};
    ty.shape[0] = vec ? d : T;
    ty.shape[1] = d;
    if (tp.rank == 0 && ffn_safetensors_write(ctx, out, &ty, 1, meta, 3)) {  // one writer
        fprintf(stderr, "ffn run: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    const bool have_info = b.block && !ffn_block_info(ctx, b.block, T, &info);
    printf("ffn run: %s layer %" PRId64 " (%s%s%s): %s [%" PRId64 ", %" PRId64
           "] -> y written to %s\n",
           mp, layer, ffn_tool_ffn_name(l.act, l.gated), have_info ? ", computed in " : "",
           have_info ? ffn_dtype_name(info.compute_dtype) : "", ffn_tool_esc(name), T, d,
           ffn_tool_esc(out));
    if (tp.world)
        printf("  tensor-parallel over %" PRId64 " ranks%s%s\n", tp.world,
               tp.shards ? ", weights from " : " (sharded in memory)",
               tp.shards ? ffn_tool_esc(tp.shards) : "");
    rc = 0;
done:
    ffn_tool_block_free(&b);
    ffn_tool_tpb_free(&tb);
    free(x);
    free(y);
    ffn_safetensors_close(io);
    ffn_model_close(model);
    ffn_tool_tp_stop(&tp);
    ffn_ctx_destroy(ctx);
    return rc;
}
