// fuzz_model.c — libFuzzer harness for ffn_model_open over a checkpoint directory: the input is
// the directory's config.json (first byte even) or its model.safetensors.index.json (first byte
// odd), beside fixed valid shards written once into a private temporary folder. Covers the
// config reader, the architecture table, the shard index, the layer and expert counts, tensor
// lookup, dtype and shape checks. Properties: an open model has usable sizes and every layer's
// tensors have the shapes it says; a refused one leaves a message without control characters.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffn.h"

#define D 8
#define M 16
#define LAYERS 2

static char g_root[64], g_cfg_dir[128], g_idx_dir[128];
static ffn_ctx_t g_ctx;

static void die(const char *what) {
    fprintf(stderr, "fuzz_model: %s\n", what);
    abort();
}

static void put_file(const char *dir, const char *name, const void *p, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f)) die(path);
}

// Names of the FFN tensors of several architectures (d 8, m 16), for layer L: [rows, cols].
struct spec {
    const char *fmt;
    int64_t rows, cols;  // cols 0: 1-D
};
static const struct spec k_specs[] = {
    {"model.layers.%d.mlp.gate_proj.weight", M, D},
    {"model.layers.%d.mlp.up_proj.weight", M, D},
    {"model.layers.%d.mlp.down_proj.weight", D, M},
    {"model.layers.%d.mlp.gate_up_proj.weight", 2 * M, D},
    {"transformer.h.%d.mlp.c_fc.weight", D, M},
    {"transformer.h.%d.mlp.c_fc.bias", M, 0},
    {"transformer.h.%d.mlp.c_proj.weight", M, D},
    {"encoder.block.%d.layer.1.DenseReluDense.wi_0.weight", M, D},
    {"encoder.block.%d.layer.1.DenseReluDense.wi_1.weight", M, D},
    {"encoder.block.%d.layer.1.DenseReluDense.wo.weight", D, M},
    {"model.layers.%d.block_sparse_moe.experts.0.w1.weight", M, D},
    {"model.layers.%d.block_sparse_moe.experts.0.w3.weight", M, D},
    {"model.layers.%d.block_sparse_moe.experts.0.w2.weight", D, M},
    {"model.layers.%d.block_sparse_moe.experts.1.w1.weight", M, D},
    {"model.layers.%d.block_sparse_moe.experts.1.w3.weight", M, D},
    {"model.layers.%d.block_sparse_moe.experts.1.w2.weight", D, M},
};
#define N_SPECS (sizeof k_specs / sizeof k_specs[0])

// Writes the tensors of layers [l0, l1) into dir/name.
static void write_shard(const char *dir, const char *name, int l0, int l1) {
    static float w[2 * M * D];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((i * 7) % 13) / 16.0f;
    struct ffn_file_tensor t[N_SPECS * LAYERS];
    static char names[N_SPECS * LAYERS][96];
    int n = 0;
    for (int L = l0; L < l1; L++)
        for (size_t s = 0; s < N_SPECS; s++, n++) {
            snprintf(names[n], sizeof names[n], k_specs[s].fmt, L);
            memset(&t[n], 0, sizeof t[n]);
            t[n].name = names[n];
            t[n].dtype = FFN_FILE_DTYPE_F32;
            t[n].n_dims = k_specs[s].cols ? 2 : 1;
            t[n].shape[0] = k_specs[s].rows;
            t[n].shape[1] = k_specs[s].cols;
            t[n].data = w;
            t[n].nbytes = (size_t)(k_specs[s].rows * (k_specs[s].cols ? k_specs[s].cols : 1)) * 4;
        }
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ffn_safetensors_write(g_ctx, path, t, n, NULL, 0)) die(ffn_ctx_last_error(g_ctx));
}

static void cleanup(void) {
    static const char *const files[] = {"cfg/config.json",
                                        "cfg/model.safetensors",
                                        "idx/config.json",
                                        "idx/model.safetensors.index.json",
                                        "idx/model-00001-of-00002.safetensors",
                                        "idx/model-00002-of-00002.safetensors"};
    char p[256];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", g_root, files[i]);
        unlink(p);
    }
    rmdir(g_cfg_dir), rmdir(g_idx_dir), rmdir(g_root);
    ffn_ctx_destroy(g_ctx);
}

static void setup(void) {
    if (g_ctx) return;
    if (ffn_ctx_create(NULL, &g_ctx)) die("context");
    snprintf(g_root, sizeof g_root, "/tmp/ffn-fuzz-model.XXXXXX");
    if (!mkdtemp(g_root)) die("mkdtemp");
    snprintf(g_cfg_dir, sizeof g_cfg_dir, "%s/cfg", g_root);
    snprintf(g_idx_dir, sizeof g_idx_dir, "%s/idx", g_root);
    mkdir(g_cfg_dir, 0700);
    mkdir(g_idx_dir, 0700);
    atexit(cleanup);
    write_shard(g_cfg_dir, "model.safetensors", 0, LAYERS);
    static const char cfg[] =
        "{\"model_type\": \"llama\", \"hidden_size\": 8, "
        "\"intermediate_size\": 16, \"num_hidden_layers\": 2}";
    put_file(g_idx_dir, "config.json", cfg, sizeof cfg - 1);
    write_shard(g_idx_dir, "model-00001-of-00002.safetensors", 0, 1);
    write_shard(g_idx_dir, "model-00002-of-00002.safetensors", 1, 2);
}

// No control character may reach a message (ffn_text_escape in ffn_error).
static void check_message(void) {
    for (const unsigned char *p = (const unsigned char *)ffn_ctx_last_error(g_ctx); *p; p++)
        if (*p < 0x20 || *p == 0x7f) die("a control character in an error message");
}

static void check_tensor(const struct ffn_file_tensor *t, int64_t rows, int64_t cols) {
    if (!t->name) return;
    const int64_t a = t->shape[0], b = t->n_dims == 2 ? t->shape[1] : 0;
    // [rows, cols] in either orientation (the layer says which; both are products of d and m).
    if (!((a == rows && b == cols) || (a == cols && b == rows))) die("a tensor of another shape");
    if (ffn_file_tensor_numel(t) != rows * cols) die("numel");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    if (size < 1) return 0;
    const bool index = data[0] & 1;
    put_file(index ? g_idx_dir : g_cfg_dir, index ? "model.safetensors.index.json" : "config.json",
             data + 1, size - 1);
    ffn_model_t m;
    if (ffn_model_open(g_ctx, index ? g_idx_dir : g_cfg_dir, &m) != FFN_STATUS_OK) {
        check_message();
        return 0;
    }
    const struct ffn_model_desc *d = ffn_model_desc(m);
    if (d->n_layers < 1 || d->d_model < 1 || d->d_ff < 1 || d->n_experts < 0) die("sizes");
    const int64_t per = d->n_experts ? d->n_experts : 1;
    for (int64_t L = 0; L < d->n_layers; L++)
        for (int64_t e = 0; e < per; e++) {
            struct ffn_model_layer l;
            if (ffn_model_layer(g_ctx, m, L, d->n_experts ? e : -1, &l)) die("a layer in range");
            const int64_t dm = l.d_model, ff = l.d_ff;
            if (!l.down.name) die("no down tensor");
            check_tensor(&l.down, dm, ff);
            check_tensor(&l.gate, ff, dm);
            check_tensor(&l.up, ff, dm);
            check_tensor(&l.gate_up, 2 * ff, dm);
        }
    ffn_model_close(m);
    return 0;
}
