// hf_config.c — Hugging Face config.json -> the FFN spec of each layer: hidden size d,
// intermediate size m, activation, gated or not, experts; by the architecture table (arch.c).
// Activation names follow transformers' ACT2FN; the architecture's own rules win where the
// model code overrides the config (Gemma 1 runs the tanh GeLU; T5's "gated-gelu" is gelu_new).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

// Upper bounds that keep every product of sizes far from overflow (d·m·experts·layers < 2^63)
// while admitting any real model (largest today: d ≈ 2^14, m ≈ 2^16, 2^8 experts, 2^7 layers).
#define FFN_IO_MAX_WIDTH (INT64_C(1) << 31)
#define FFN_IO_MAX_LAYERS (INT64_C(1) << 16)
#define FFN_IO_MAX_EXPERTS (INT64_C(1) << 14)

// Looks up the first of `keys` present (and not null) in obj. Returns 1 with *v set, 0 when
// none is present, -1 (message set) when the value is not an integer in [1, max].
static int ffn__get_int(ffn_ctx_t ctx, const char *fn, const char *what, const cJSON *obj,
                        const char *const *keys, int64_t max, const char **key_used, int64_t *v) {
    for (int i = 0; i < FFN_IO_ARCH_MAX_KEYS && keys[i]; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
        if (!it || cJSON_IsNull(it)) continue;
        uint64_t u;
        if (!ffn_io_json_u64(it, &u) || u < 1 || u > (uint64_t)max) {
            ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                      "%s: %s: %s is not an integer in [1, %" PRId64 "]", fn, what, keys[i], max);
            return -1;
        }
        *v = (int64_t)u;
        if (key_used) *key_used = keys[i];
        return 1;
    }
    return 0;
}

static void ffn__key_list(char *buf, size_t cap, const char *const *keys) {
    buf[0] = '\0';
    for (int i = 0; i < FFN_IO_ARCH_MAX_KEYS && keys[i]; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", keys[i]);
}

static enum ffn_status ffn__unknown_act(ffn_ctx_t ctx, const char *fn, const char *what,
                                        const char *key, const char *name) {
    char known[512] = "";
    for (size_t i = 0; i < ffn_io_hf_act_count(); i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 ffn_io_hf_act_name(i));
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "%s: %s: %s = \"%.60s\" is not an activation ffn knows (known: %s)", fn, what,
                     key, name, known);
}

// The activation by the architecture's rule. Sets out->act, out->gated (T5), act_source, note.
static enum ffn_status ffn__activation(ffn_ctx_t ctx, const char *fn, const char *what,
                                       const struct ffn_io_arch *a, const cJSON *cfg,
                                       struct ffn_hf_config *out) {
    const char *name = NULL, *key = NULL;
    for (int i = 0; i < FFN_IO_ARCH_MAX_KEYS && a->act_keys[i]; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(cfg, a->act_keys[i]);
        if (!it || cJSON_IsNull(it)) continue;
        if (!cJSON_IsString(it))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: %s is not a string", fn, what,
                             a->act_keys[i]);
        name = it->valuestring, key = a->act_keys[i];
        break;
    }
    out->gated = a->gated;
    if (a->act_rule == FFN_IO_ACT_T5) {
        // transformers T5Config: act = feed_forward_proj.split("-")[-1], gated when it starts
        // with "gated-"; "gated-gelu" is rewritten to dense_act_fn = "gelu_new".
        const cJSON *ff = cJSON_GetObjectItemCaseSensitive(cfg, "feed_forward_proj");
        const char *proj = cJSON_IsString(ff) ? ff->valuestring : "relu";
        if (ff && !cJSON_IsNull(ff) && !cJSON_IsString(ff))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: feed_forward_proj is not a string", fn, what);
        out->gated = !strncmp(proj, "gated-", 6);
        if (!name) {
            name = out->gated ? proj + 6 : proj;
            key = "feed_forward_proj";
            if (!strcmp(proj, "gated-gelu")) name = "gelu_new";
        }
    }
    if (!name) {
        if (!a->act_default) {
            char keys[160];
            ffn__key_list(keys, sizeof keys, a->act_keys);
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no activation (looked for %s)",
                             fn, what, keys);
        }
        name = a->act_default, key = "default";
    }
    if (!ffn_io_act_from_hf(name, &out->act)) return ffn__unknown_act(ctx, fn, what, key, name);
    snprintf(out->act_source, sizeof out->act_source, "%s = %s", key, name);
    if (a->act_rule == FFN_IO_ACT_GEMMA && out->act == FFN_ACT_GELU_ERF) {
        // Gemma 1 checkpoints say "gelu" (hidden_act); the model was trained with, and
        // transformers runs, the tanh approximation.
        out->act = FFN_ACT_GELU_TANH;
        snprintf(out->note, sizeof out->note,
                 "config says %s = \"%s\" (exact erf GeLU), but Gemma runs the tanh GeLU "
                 "(gelu_pytorch_tanh): following the architecture",
                 key, name);
    }
    return FFN_STATUS_OK;
}

enum ffn_status ffn_io_hf_config_read(ffn_ctx_t ctx, const char *fn, const char *what,
                                      const cJSON *root, struct ffn_hf_config *out,
                                      const struct ffn_io_arch **arch_out) {
    memset(out, 0, sizeof *out);
    *arch_out = NULL;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(mt))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no \"model_type\" string", fn, what);
    const struct ffn_io_arch *a = ffn_io_arch_find(mt->valuestring);
    if (!a) {
        char known[640] = "";
        for (size_t i = 0; i < ffn_io_arch_count(); i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                     ffn_io_arch_at(i)->model_type);
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: %s: unknown architecture model_type = \"%.60s\" (known: %s)", fn,
                         what, mt->valuestring, known);
    }
    snprintf(out->model_type, sizeof out->model_type, "%s", a->model_type);
    // Multimodal wrappers (Gemma 3) keep the language model's sizes in text_config.
    const cJSON *cfg = root;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    if (cJSON_IsObject(tc) && !cJSON_GetObjectItemCaseSensitive(root, a->d_keys[0])) cfg = tc;

    const char *used = NULL;
    char keys[160];
    int r = ffn__get_int(ctx, fn, what, cfg, a->d_keys, FFN_IO_MAX_WIDTH, NULL, &out->d_model);
    if (r <= 0) {
        ffn__key_list(keys, sizeof keys, a->d_keys);
        return r < 0 ? FFN_STATUS_BAD_FORMAT
                     : ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                 "%s: %s: no hidden size (looked for %s)", fn, what, keys);
    }
    r = ffn__get_int(ctx, fn, what, cfg, a->layer_keys, FFN_IO_MAX_LAYERS, NULL, &out->n_layers);
    if (r <= 0) {
        ffn__key_list(keys, sizeof keys, a->layer_keys);
        return r < 0 ? FFN_STATUS_BAD_FORMAT
                     : ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                 "%s: %s: no layer count (looked for %s)", fn, what, keys);
    }
    r = ffn__get_int(ctx, fn, what, cfg, a->m_keys, FFN_IO_MAX_WIDTH, &used, &out->d_ff);
    if (r < 0) return FFN_STATUS_BAD_FORMAT;
    if (r == 0) {
        ffn__key_list(keys, sizeof keys, a->m_keys);
        if (a->m_rule != FFN_IO_M_OR_4D)
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: no intermediate size (looked for %s)", fn, what, keys);
        out->d_ff = 4 * out->d_model;  // transformers: n_inner None -> 4 * hidden size
        snprintf(out->d_ff_source, sizeof out->d_ff_source, "%.60s absent or null: 4 x hidden size",
                 keys);
    } else {
        snprintf(out->d_ff_source, sizeof out->d_ff_source, "%s", used);
    }
    if (a->expert_keys[0]) {
        r = ffn__get_int(ctx, fn, what, cfg, a->expert_keys, FFN_IO_MAX_EXPERTS, NULL,
                         &out->n_experts);
        if (r <= 0) {
            ffn__key_list(keys, sizeof keys, a->expert_keys);
            return r < 0 ? FFN_STATUS_BAD_FORMAT
                         : ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                     "%s: %s: no expert count (looked for %s)", fn, what, keys);
        }
    }
    if (a->dec_prefix) {
        int64_t dec = out->n_layers;
        r = ffn__get_int(ctx, fn, what, cfg, a->dec_layer_keys, FFN_IO_MAX_LAYERS, NULL, &dec);
        if (r < 0) return FFN_STATUS_BAD_FORMAT;
        out->n_decoder_layers = dec;
    }
    enum ffn_status s = ffn__activation(ctx, fn, what, a, cfg, out);
    if (s) return s;
    out->fused_gate_up = a->fused;
    out->in_out = a->conv1d;
    *arch_out = a;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_hf_config_parse(ffn_ctx_t ctx, const char *json, size_t len,
                                    struct ffn_hf_config *out) {
    static const char fn[] = "ffn_hf_config_parse";
    ffn_error_clear(ctx);
    if ((!json && len) || !out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    cJSON *root;
    enum ffn_status s = ffn_io_json_parse(ctx, fn, "config.json", json ? json : "", len, &root);
    if (s) return s;
    const struct ffn_io_arch *a;
    s = ffn_io_hf_config_read(ctx, fn, "config.json", root, out, &a);
    cJSON_Delete(root);
    return s;
}
