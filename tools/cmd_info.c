// cmd_info.c — `ffn info MODEL [--json]`: what a checkpoint's FFNs are (architecture, layers,
// d, m, activation, gated or not), each layer's weight layout and dtype, and the FFN's share of
// the parameters. MODEL is a directory (config.json + safetensors) or a .gguf file.
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "model.h"
#include "tools.h"

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn info MODEL [--json]\n"
            "\n"
            "Describes the FFN (MLP) layers of a checkpoint: architecture, layer count, hidden\n"
            "size d, intermediate size m, activation and gating, each layer's weight layout,\n"
            "orientation and dtype, and the FFN's share of all parameters.\n"
            "\n"
            "  MODEL   a directory with config.json and model.safetensors (or a sharded\n"
            "          model.safetensors.index.json), or a .gguf file\n"
            "  --json  print one JSON object instead of text\n"
            "\n"
            "exit status: 0 success, 2 bad input or usage\n");
}

static const char *ffn__orient(enum ffn_weight_orient o) {
    return o == FFN_WEIGHT_OUT_IN ? "[out, in]" : "[in, out]";
}

static const char *ffn__layout_key(const struct ffn_model_layer *l) {
    if (!l->gated) return "plain";
    switch (l->layout) {
    case FFN_GATE_UP_SEPARATE: return "separate";
    case FFN_GATE_UP_FUSED: return "fused_gate_first";
    case FFN_GATE_UP_FUSED_UP_FIRST: return "fused_up_first";
    default: return "other";
    }
}

static void ffn__shape(char *buf, size_t cap, const struct ffn_file_tensor *t) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->n_dims && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "", t->shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

#define FFN__ROLES 8
static const char *const ffn__roles[FFN__ROLES] = {"gate",   "up",   "gate_up",   "down",
                                                   "b_gate", "b_up", "b_gate_up", "b_down"};

static void ffn__tensors(const struct ffn_model_layer *l,
                         const struct ffn_file_tensor *ts[FFN__ROLES]) {
    ts[0] = &l->gate, ts[1] = &l->up, ts[2] = &l->gate_up, ts[3] = &l->down;
    ts[4] = &l->b_gate, ts[5] = &l->b_up, ts[6] = &l->b_gate_up, ts[7] = &l->b_down;
}

static int ffn__json(ffn_ctx_t ctx, ffn_model_t model, const char *path) {
    const struct ffn_model_desc *d = ffn_model_desc(model);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", path);
    cJSON_AddStringToObject(o, "format", d->format);
    cJSON_AddStringToObject(o, "arch", d->arch);
    cJSON_AddNumberToObject(o, "n_layers", (double)d->n_layers);
    cJSON_AddNumberToObject(o, "d_model", (double)d->d_model);
    cJSON_AddNumberToObject(o, "d_ff", (double)d->d_ff);
    cJSON_AddNumberToObject(o, "n_experts", (double)d->n_experts);
    cJSON_AddStringToObject(o, "activation", ffn_act_name(d->act));
    cJSON_AddStringToObject(o, "activation_source", d->act_source);
    cJSON_AddBoolToObject(o, "gated", d->gated);
    cJSON_AddStringToObject(o, "ffn", ffn_tool_ffn_name(d->act, d->gated));
    cJSON_AddNumberToObject(o, "params_total", (double)d->n_params);
    cJSON_AddNumberToObject(o, "params_ffn", (double)d->n_params_ffn);
    cJSON_AddNumberToObject(o, "ffn_share",
                            d->n_params ? (double)d->n_params_ffn / (double)d->n_params : 0.0);
    cJSON_AddStringToObject(o, "note", d->note);
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    const int64_t per = d->n_experts ? d->n_experts : 1;
    for (int64_t L = 0; L < d->n_layers; L++) {
        for (int64_t e = 0; e < per; e++) {
            struct ffn_model_layer l;
            if (ffn_model_layer(ctx, model, L, d->n_experts ? e : -1, &l)) continue;
            cJSON *jl = cJSON_CreateObject();
            cJSON_AddNumberToObject(jl, "layer", (double)L);
            if (d->n_experts) cJSON_AddNumberToObject(jl, "expert", (double)e);
            cJSON_AddNumberToObject(jl, "d_ff", (double)l.d_ff);
            cJSON_AddStringToObject(jl, "layout", ffn__layout_key(&l));
            cJSON_AddStringToObject(jl, "orient",
                                    l.orient == FFN_WEIGHT_OUT_IN ? "out_in" : "in_out");
            char dt[48];
            ffn_tool_layer_dtype(&l, dt, sizeof dt);
            cJSON_AddStringToObject(jl, "dtype", dt);
            cJSON *jt = cJSON_AddObjectToObject(jl, "tensors");
            const struct ffn_file_tensor *ts[FFN__ROLES];
            ffn__tensors(&l, ts);
            for (int r = 0; r < FFN__ROLES; r++) {
                if (!ts[r]->name) continue;
                cJSON *t = cJSON_CreateObject();
                cJSON_AddStringToObject(t, "name", ts[r]->name);
                cJSON_AddStringToObject(t, "dtype", ffn_file_dtype_name(ts[r]->dtype));
                cJSON *sh = cJSON_AddArrayToObject(t, "shape");
                for (int k = 0; k < ts[r]->n_dims; k++)
                    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)ts[r]->shape[k]));
                cJSON_AddItemToObject(jt, ffn__roles[r], t);
            }
            cJSON_AddItemToArray(layers, jl);
        }
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) {
        fprintf(stderr, "ffn info: out of memory for the JSON text of %s\n", ffn_tool_esc(path));
        return 2;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

static int ffn__text(ffn_ctx_t ctx, ffn_model_t model, const char *path) {
    const struct ffn_model_desc *d = ffn_model_desc(model);
    char a[32], b[32];
    // Names from the file (arch, tensor names, notes quoting the config) are printed escaped.
    printf("%s: %s checkpoint (%s)\n", ffn_tool_esc(path), ffn_tool_esc(d->arch), d->format);
    printf("  layers       %" PRId64 "\n", d->n_layers);
    printf("  d_model      %" PRId64 "   (hidden size d)\n", d->d_model);
    printf("  d_ff         %" PRId64 "   (intermediate size m%s)\n", d->d_ff,
           d->n_experts ? ", per expert" : "");
    printf("  FFN          %s: activation %s (%s), %s\n", ffn_tool_ffn_name(d->act, d->gated),
           ffn_act_name(d->act), ffn_tool_esc(d->act_source),
           d->gated ? "gated: h = act(x W_gate) * (x W_up)" : "not gated: h = act(x W_up)");
    if (d->n_experts)
        printf("  experts      %" PRId64 " per layer (mixture of experts)\n", d->n_experts);
    ffn_tool_commas(a, sizeof a, d->n_params_ffn);
    ffn_tool_commas(b, sizeof b, d->n_params);
    printf("  parameters   FFN %s of %s (%.1f%%)\n", a, b,
           d->n_params ? 100.0 * (double)d->n_params_ffn / (double)d->n_params : 0.0);
    if (d->note[0]) printf("  note         %s\n", ffn_tool_esc(d->note));
    printf("\n  %-6s %-28s %-10s %s\n", "layer", "weight layout", "orient", "dtype");
    const int64_t per = d->n_experts ? d->n_experts : 1;
    for (int64_t L = 0; L < d->n_layers; L++) {
        struct ffn_model_layer l;
        if (ffn_model_layer(ctx, model, L, d->n_experts ? 0 : -1, &l)) continue;
        char dt[48];
        ffn_tool_layer_dtype(&l, dt, sizeof dt);
        printf("  %-6" PRId64 " %-28s %-10s %s", L, ffn_tool_layout_name(&l), ffn__orient(l.orient),
               dt);
        if (per > 1) printf("   (x%" PRId64 " experts)", per);
        if (l.d_ff != d->d_ff) printf("   m = %" PRId64, l.d_ff);
        printf("\n");
    }
    struct ffn_model_layer l0;
    if (!ffn_model_layer(ctx, model, 0, d->n_experts ? 0 : -1, &l0)) {
        printf("\n  layer 0 tensors:\n");
        const struct ffn_file_tensor *ts[FFN__ROLES];
        ffn__tensors(&l0, ts);
        for (int r = 0; r < FFN__ROLES; r++) {
            if (!ts[r]->name) continue;
            char sh[64];
            ffn__shape(sh, sizeof sh, ts[r]);
            printf("    %-10s %-52s %-14s %s\n", ffn__roles[r], ffn_tool_esc(ts[r]->name), sh,
                   ffn_file_dtype_name(ts[r]->dtype));
        }
    }
    return 0;
}

int ffn_cmd_info(int argc, char **argv) {
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "ffn info: unknown option '%s'\n", ffn_tool_esc(argv[i]));
            ffn__usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "ffn info: one MODEL expected, got '%s' too\n", ffn_tool_esc(argv[i]));
            return 2;
        }
    }
    if (!path) {
        ffn__usage(stderr);
        return 2;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) {
        fprintf(stderr, "ffn info: cannot create a context\n");
        return 2;
    }
    ffn_model_t model;
    if (ffn_model_open(ctx, path, &model)) {
        fprintf(stderr, "ffn info: %s\n", ffn_tool_errmsg(ctx));
        ffn_ctx_destroy(ctx);
        return 2;
    }
    const int rc = json ? ffn__json(ctx, model, path) : ffn__text(ctx, model, path);
    ffn_model_close(model);
    ffn_ctx_destroy(ctx);
    return rc;
}
