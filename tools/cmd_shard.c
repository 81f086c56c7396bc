// cmd_shard.c — `ffn shard MODEL --tp P --out DIR`: splits every FFN of a checkpoint for P
// tensor-parallel ranks into DIR/rank-<r>-of-<P>.safetensors, each with its plan, its rank and
// the SHA-256 of the source files in __metadata__ (ffn_tp_model_shard). DIR must be new or empty;
// the files appear there only when all are complete. `ffn run/verify MODEL ... --tp P --shards
// DIR` under mpirun reads them back, each rank its own file, checked.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "tools.h"
#include "tp.h"

static void ffn__usage(FILE *f) {
    fprintf(
        f,
        "usage: ffn shard MODEL --tp P --out DIR [--align K] [--layout L] [--orient O]\n"
        "                 [--down-bias B]\n"
        "\n"
        "Splits the FFN of every layer of MODEL (a Hugging Face directory or a GGUF file) for\n"
        "P tensor-parallel ranks: gate and up by the same columns of d_ff, down by the same\n"
        "rows, a fused gate_up re-blocked per rank. Writes DIR/rank-<r>-of-<P>.safetensors\n"
        "with the plan, the rank and the SHA-256 of MODEL's files in __metadata__. DIR must\n"
        "not exist or be empty.\n"
        "\n"
        "  --tp P        the number of ranks\n"
        "  --out DIR     the output folder\n"
        "  --align K     split d_ff in units of K columns (default 1: balanced)\n"
        "  --layout L    each rank's gate/up layout: separate, fused, fused-up-first,\n"
        "                interleaved (default: as stored; a blocked one becomes fused)\n"
        "  --orient O    each rank's weight orientation: out-in or in-out (default: as stored)\n"
        "  --down-bias B b_down kept on rank0 (default) or on every rank, added after-reduce\n"
        "\n"
        "exit status: 0 success, 2 bad input or usage\n");
}

int ffn_cmd_shard(int argc, char **argv) {
    const char *model = NULL, *out = NULL;
    struct ffn_tool_tp tp = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        }
        const int k = ffn_tool_tp_option("ffn shard", argc, argv, &i, &tp);
        if (k < 0) return 2;
        if (k) continue;
        if (!strcmp(a, "--out")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ffn shard: --out needs a value\n");
                return 2;
            }
            out = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ffn shard: unknown option '%s'\n", a);
            return 2;
        } else if (!model) {
            model = a;
        } else {
            fprintf(stderr, "ffn shard: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!model || !out || !tp.world || tp.shards) {
        fprintf(stderr,
                "ffn shard: MODEL, --tp P and --out DIR are required (and --shards is "
                "not an option of shard)\n");
        ffn__usage(stderr);
        return 2;
    }
    if (tp.opts.size == 0) {
        const struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        tp.opts = o;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) {
        fprintf(stderr, "ffn shard: cannot create a context\n");
        return 2;
    }
    int rc = 2;
    if (ffn_tp_model_shard(ctx, model, tp.world, &tp.opts, out)) {
        fprintf(stderr, "ffn shard: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    // What was written: the first FFN's plan, read back from rank 0's file.
    ffn_safetensors_t st = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-0-of-%" PRId64 ".safetensors", out, tp.world);
    if (!ffn_safetensors_open(ctx, path, &st)) {
        const char *plan = ffn_safetensors_metadata(st, "ffn.tp.plan.layers.0");
        if (!plan) plan = ffn_safetensors_metadata(st, "ffn.tp.plan.layers.0.experts.0");
        printf("ffn shard: %s -> %s/rank-{0..%" PRId64 "}-of-%" PRId64 ".safetensors\n", model, out,
               tp.world - 1, tp.world);
        printf("  layers %s, experts %s; set %.16s...\n",
               ffn_safetensors_metadata(st, "ffn.tp.layers"),
               ffn_safetensors_metadata(st, "ffn.tp.experts"),
               ffn_safetensors_metadata(st, "ffn.tp.set"));
        printf("  source %s\n", ffn_safetensors_metadata(st, "ffn.tp.source"));
        printf("  layer 0: %s\n", plan ? plan : "?");
        ffn_safetensors_close(st);
    }
    rc = 0;
done:
    ffn_ctx_destroy(ctx);
    return rc;
}
