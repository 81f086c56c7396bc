// cmd_convert.c — `ffn convert MODEL --out DIR [--fuse-gate-up | --split-gate-up]
// [--dtype f32|bf16|f16]`: rewrites a Hugging Face checkpoint's FFN weights in another layout
// (gate and up as two tensors <-> one fused [gate | up] tensor, along the output axis, in the
// checkpoint's own orientation) or dtype, as DIR/model.safetensors + DIR/config.json. Every other
// tensor is copied unchanged. Fused tensors are named <prefix>gate_up_proj.{weight,bias}, split
// ones <prefix>gate_proj / up_proj (Phi-3 / vLLM names), which ffn's loader accepts for any
// architecture, so `ffn verify` runs on the result.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"
#include "tools.h"

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn convert MODEL --out DIR [--fuse-gate-up | --split-gate-up]\n"
            "                   [--dtype f32|bf16|f16]\n"
            "\n"
            "Rewrites the FFN weights of a Hugging Face checkpoint (a directory with config.json\n"
            "and safetensors) in another layout or dtype, into DIR/model.safetensors and\n"
            "DIR/config.json. Other tensors are copied unchanged.\n"
            "\n"
            "  --fuse-gate-up   store gate and up as one tensor gate_up_proj = [gate | up]\n"
            "  --split-gate-up  store a fused gate_up as two tensors gate_proj and up_proj\n"
            "  --dtype T        FFN weights in f32, bf16 or f16 (default: as they are)\n"
            "\n"
            "exit status: 0 success, 2 bad input or usage\n");
}

// The new tensors of the output (owned names and data).
struct ffn__out {
    struct ffn_file_tensor *t;
    bool *owned;  // name and data malloc'ed
    int64_t n, cap;
};

static bool ffn__push(struct ffn__out *o, struct ffn_file_tensor t, bool owned) {
    if (o->n == o->cap) {
        const int64_t cap = o->cap ? 2 * o->cap : 64;
        void *p = realloc(o->t, (size_t)cap * sizeof *o->t), *q;
        if (!p) return false;
        o->t = p;
        q = realloc(o->owned, (size_t)cap * sizeof *o->owned);
        if (!q) return false;
        o->owned = q;
        o->cap = cap;
    }
    o->owned[o->n] = owned;
    o->t[o->n++] = t;
    return true;
}

// An owned tensor of `dtype` made from f32 values.
static bool ffn__make(struct ffn__out *o, const char *name, const float *v, int n_dims, int64_t s0,
                      int64_t s1, enum ffn_dtype dtype) {
    const int64_t n = n_dims == 1 ? s0 : s0 * s1;
    const size_t es = ffn_dtype_size(dtype);
    void *data = malloc((size_t)(n > 0 ? n : 1) * es);
    char *nm = malloc(strlen(name) + 1);
    if (!data || !nm) {
        free(data), free(nm);
        return false;
    }
    strcpy(nm, name);
    for (int64_t i = 0; i < n; i++) {
        if (dtype == FFN_DTYPE_F32)
            ((float *)data)[i] = v[i];
        else if (dtype == FFN_DTYPE_BF16)
            ((uint16_t *)data)[i] = ffn_f32_to_bf16(v[i]);
        else
            ((uint16_t *)data)[i] = ffn_f32_to_f16(v[i]);
    }
    struct ffn_file_tensor t = {
        .name = nm, .n_dims = n_dims, .data = data, .nbytes = (size_t)n * es};
    t.dtype = dtype == FFN_DTYPE_F32    ? FFN_FILE_DTYPE_F32
              : dtype == FFN_DTYPE_BF16 ? FFN_FILE_DTYPE_BF16
                                        : FFN_FILE_DTYPE_F16;
    t.shape[0] = s0;
    t.shape[1] = s1;
    if (!ffn__push(o, t, true)) {
        free(data), free(nm);
        return false;
    }
    return true;
}

static float *ffn__f32(ffn_ctx_t ctx, const struct ffn_file_tensor *t) {
    if (!t->name) return NULL;
    const int64_t n = ffn_file_tensor_numel(t);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v && ffn_file_tensor_to_f32(ctx, v, n, t)) {
        free(v);
        return NULL;
    }
    return v;
}

// [rows_a + rows_b, cols] from two [rows, cols] (OUT_IN: stack rows) or [rows, ca + cb] from two
// [rows, c] (IN_OUT: concatenate each row): the fused output axis in either orientation.
static float *ffn__concat(const float *a, const float *b, int64_t rows, int64_t cols,
                          bool by_rows) {
    float *v = malloc((size_t)(2 * rows * cols) * sizeof *v);
    if (!v) return NULL;
    if (by_rows) {
        memcpy(v, a, (size_t)(rows * cols) * sizeof *v);
        memcpy(v + rows * cols, b, (size_t)(rows * cols) * sizeof *v);
    } else {
        for (int64_t r = 0; r < rows; r++) {
            memcpy(v + r * 2 * cols, a + r * cols, (size_t)cols * sizeof *v);
            memcpy(v + r * 2 * cols + cols, b + r * cols, (size_t)cols * sizeof *v);
        }
    }
    return v;
}

// The inverse: half `which` (0 first, 1 second) of a fused [2·rows, cols] / [rows, 2·cols].
static float *ffn__half(const float *f, int64_t rows, int64_t cols, bool by_rows, int which) {
    float *v = malloc((size_t)(rows * cols) * sizeof *v);
    if (!v) return NULL;
    if (by_rows)
        memcpy(v, f + which * rows * cols, (size_t)(rows * cols) * sizeof *v);
    else
        for (int64_t r = 0; r < rows; r++)
            memcpy(v + r * cols, f + r * 2 * cols + which * cols, (size_t)cols * sizeof *v);
    return v;
}

static bool ffn__is_ffn_tensor(const struct ffn_model_layer *ls, int64_t n, const char *name) {
    for (int64_t i = 0; i < n; i++) {
        const struct ffn_model_layer *l = &ls[i];
        const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                              &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
        for (size_t k = 0; k < 8; k++)
            if (ts[k]->name && !strcmp(ts[k]->name, name)) return true;
    }
    return false;
}

// Appends the rewritten tensors of one FFN.
static bool ffn__layer(ffn_ctx_t ctx, struct ffn__out *o, const struct ffn_model_layer *l, int mode,
                       bool have_dtype, enum ffn_dtype dtype) {
    const int64_t d = l->d_model, m = l->d_ff;
    const bool oi = l->orient == FFN_WEIGHT_OUT_IN;
    const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                          &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    float *v[8] = {0};
    bool ok = true;
    for (int k = 0; k < 8 && ok; k++)
        if (ts[k]->name && !(v[k] = ffn__f32(ctx, ts[k]))) ok = false;
    // The dtype each output tensor gets: --dtype, else its own when f32/bf16/f16, else f32.
    enum ffn_dtype dt[8];
    for (int k = 0; k < 8; k++) {
        dt[k] = FFN_DTYPE_F32;
        if (have_dtype)
            dt[k] = dtype;
        else if (ts[k]->name)
            ffn_file_dtype_to_dtype(ts[k]->dtype, &dt[k]);
    }
    char name[600];
    const int64_t wr = oi ? m : d, wc = oi ? d : m;  // a gate/up weight's stored shape
    if (ok && mode == 1 && l->gated && l->layout == FFN_GATE_UP_SEPARATE) {
        float *f = ffn__concat(v[0], v[1], wr, wc, oi);
        snprintf(name, sizeof name, "%sgate_up_proj.weight", l->prefix);
        ok = f && ffn__make(o, name, f, 2, oi ? 2 * m : d, oi ? d : 2 * m, dt[0]);
        free(f);
        if (ok && v[4] && v[5]) {
            f = ffn__concat(v[4], v[5], 1, m, false);
            snprintf(name, sizeof name, "%sgate_up_proj.bias", l->prefix);
            ok = f && ffn__make(o, name, f, 1, 2 * m, 0, dt[4]);
            free(f);
        }
        for (int k = 0; k < 2; k++) free(v[k]), v[k] = NULL;
        free(v[4]), free(v[5]), v[4] = v[5] = NULL;
    } else if (ok && mode == 2 && l->gated && l->layout != FFN_GATE_UP_SEPARATE) {
        const int first = l->layout == FFN_GATE_UP_FUSED ? 0 : 1;  // which half is the gate
        for (int k = 0; k < 2 && ok; k++) {
            float *h = ffn__half(v[2], wr, wc, oi, k == 0 ? first : 1 - first);
            snprintf(name, sizeof name, "%s%s_proj.weight", l->prefix, k == 0 ? "gate" : "up");
            ok = h && ffn__make(o, name, h, 2, wr, wc, dt[2]);
            free(h);
            if (ok && v[6]) {
                h = ffn__half(v[6], 1, m, false, k == 0 ? first : 1 - first);
                snprintf(name, sizeof name, "%s%s_proj.bias", l->prefix, k == 0 ? "gate" : "up");
                ok = h && ffn__make(o, name, h, 1, m, 0, dt[6]);
                free(h);
            }
        }
        free(v[2]), free(v[6]), v[2] = v[6] = NULL;
    }
    for (int k = 0; k < 8 && ok; k++)  // what is left keeps its name and shape
        if (v[k])
            ok = ffn__make(o, ts[k]->name, v[k], ts[k]->n_dims, ts[k]->shape[0], ts[k]->shape[1],
                           dt[k]);
    for (int k = 0; k < 8; k++) free(v[k]);
    return ok;
}

int ffn_cmd_convert(int argc, char **argv) {
    const char *path = NULL, *dir = NULL, *dts = NULL;
    int mode = 0;  // 1 fuse, 2 split
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--fuse-gate-up") || !strcmp(a, "--split-gate-up")) {
            const int want = !strcmp(a, "--fuse-gate-up") ? 1 : 2;
            if (mode && mode != want) {
                fprintf(stderr,
                        "ffn convert: --fuse-gate-up and --split-gate-up exclude each other\n");
                return 2;
            }
            mode = want;
        } else if (!strcmp(a, "--out") || !strcmp(a, "--dtype")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ffn convert: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--out"))
                dir = argv[++i];
            else
                dts = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ffn convert: unknown option '%s'\n", a);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            fprintf(stderr, "ffn convert: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!path || !dir) {
        ffn__usage(stderr);
        return 2;
    }
    enum ffn_dtype dtype = FFN_DTYPE_F32;
    if (dts && ffn_dtype_from_name(dts, &dtype)) {
        fprintf(stderr, "ffn convert: --dtype '%s' is not f32, bf16 or f16\n", dts);
        return 2;
    }
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) {
        fprintf(stderr, "ffn convert: cannot create a context\n");
        return 2;
    }
    int rc = 2;
    ffn_model_t model = NULL;
    struct ffn_model_layer *ls = NULL;
    struct ffn__out o = {0};
    char *cfg_path = NULL, *st_path = NULL;
    if (ffn_model_open(ctx, path, &model)) {
        fprintf(stderr, "ffn convert: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    ffn_safetensors_t st = ffn_model_safetensors(model);
    if (!st) {
        fprintf(stderr,
                "ffn convert: %s is a GGUF file; convert reads Hugging Face checkpoints "
                "(a directory with config.json and safetensors)\n",
                path);
        goto done;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ffn convert: %s: cannot create: %s\n", dir, strerror(errno));
        goto done;
    }
    const struct ffn_model_desc *desc = ffn_model_desc(model);
    const int64_t per = desc->n_experts ? desc->n_experts : 1, n = desc->n_layers * per;
    ls = calloc((size_t)n, sizeof *ls);
    if (!ls) goto oom;
    for (int64_t L = 0; L < desc->n_layers; L++)
        for (int64_t e = 0; e < per; e++)
            ffn_model_layer(ctx, model, L, desc->n_experts ? e : -1, &ls[L * per + e]);
    for (int64_t i = 0; i < ffn_safetensors_count(st); i++) {
        struct ffn_file_tensor t;
        ffn_safetensors_get(NULL, st, i, &t);
        if (!ffn__is_ffn_tensor(ls, n, t.name) && !ffn__push(&o, t, false)) goto oom;
    }
    for (int64_t i = 0; i < n; i++)
        if (!ffn__layer(ctx, &o, &ls[i], mode, dts != NULL, dtype)) goto oom;
    cfg_path = malloc(strlen(dir) + 16);
    st_path = malloc(strlen(dir) + 24);
    if (!cfg_path || !st_path) goto oom;
    sprintf(cfg_path, "%s/config.json", dir);
    sprintf(st_path, "%s/model.safetensors", dir);
    const struct ffn_safetensors_kv meta[] = {{"format", "pt"}};
    if (ffn_safetensors_write(ctx, st_path, o.t, o.n, meta, 1)) {
        fprintf(stderr, "ffn convert: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    const char *cfg = ffn_model_config_json(model);
    FILE *f = fopen(cfg_path, "wb");
    if (!f || fwrite(cfg, 1, strlen(cfg), f) != strlen(cfg)) {
        fprintf(stderr, "ffn convert: %s: cannot write: %s\n", cfg_path, strerror(errno));
        if (f) fclose(f);
        goto done;
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "ffn convert: %s: cannot write\n", cfg_path);
        goto done;
    }
    printf("ffn convert: %s -> %s (%" PRId64 " FFNs%s%s%s%s)\n", path, dir, n,
           mode == 1 ? ", gate and up fused into gate_up_proj" : "",
           mode == 2 ? ", gate_up split into gate_proj and up_proj" : "", dts ? ", dtype " : "",
           dts ? ffn_dtype_name(dtype) : "");
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "ffn convert: out of memory\n");
done:
    for (int64_t i = 0; i < o.n; i++)
        if (o.owned[i]) free((void *)o.t[i].name), free((void *)o.t[i].data);
    free(o.t);
    free(o.owned);
    free(ls);
    free(cfg_path);
    free(st_path);
    ffn_model_close(model);
    ffn_ctx_destroy(ctx);
    return rc;
}
