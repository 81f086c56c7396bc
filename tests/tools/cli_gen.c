// cli_gen.c — writes the small hostile and odd inputs of the CLI edge tests (tests/tools) into
// OUT_DIR: tiny checkpoints (d 8, m 16, one layer) whose weights have a dtype that is not a
// weight, names and strings with control characters, GGUF files with forged counts or a Phi-3
// ffn_up that cannot be split, and io files for `ffn verify` (against tests/data/hf/llama) with
// zero tokens or wrongly shaped tensors. Every file is valid as a file: what is wrong is what
// the test is about.
// usage: cli_gen OUT_DIR LLAMA_IO.safetensors
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffn.h"

#define D 8      // hidden size of the tiny models
#define M 16     // intermediate size
#define HF_D 64  // d of tests/data/hf/llama (the verify cases' model)

static const char *g_out;

static void die(const char *what) {
    fprintf(stderr, "cli_gen: %s\n", what);
    exit(2);
}

static char *path_of(const char *rel) {
    static char bufs[4][4096];
    static int next;
    char *p = bufs[next++ % 4];
    snprintf(p, sizeof bufs[0], "%s/%s", g_out, rel);
    return p;
}

static void save(const char *rel, const void *data, size_t n) {
    FILE *f = fopen(path_of(rel), "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f)) die(rel);
}

static void save_text(const char *rel, const char *text) { save(rel, text, strlen(text)); }

static void mkdir_rel(const char *rel) { mkdir(path_of(rel), 0777); }

// --- safetensors ------------------------------------------------------------------------------

struct tensors {
    struct ffn_file_tensor t[16];
    void *owned[16];
    int n;
};

// A tensor of `dtype` with n elements (bytes each), filled from f(i).
static void add(struct tensors *ts, const char *name, enum ffn_file_dtype dtype, size_t elem,
                int n_dims, int64_t s0, int64_t s1, double (*f)(int64_t)) {
    const int64_t n = n_dims == 1 ? s0 : s0 * s1;
    uint8_t *p = calloc((size_t)(n ? n : 1), elem);
    if (!p) die("out of memory");
    for (int64_t i = 0; i < n && f; i++) {
        const double v = f(i);
        if (dtype == FFN_FILE_DTYPE_F32) {
            const float x = (float)v;
            memcpy(p + i * 4, &x, 4);
        } else if (dtype == FFN_FILE_DTYPE_F64) {
            memcpy(p + i * 8, &v, 8);
        } else if (dtype == FFN_FILE_DTYPE_I32) {
            const int32_t x = (int32_t)(v * 100);
            memcpy(p + i * 4, &x, 4);
        } else {
            p[i] = (uint8_t)(int)(v * 100);  // I8, U8, BOOL (0/1 below), F8
            if (dtype == FFN_FILE_DTYPE_BOOL) p[i] = v > 0;
        }
    }
    struct ffn_file_tensor *t = &ts->t[ts->n];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->dtype = dtype;
    t->n_dims = n_dims;
    t->shape[0] = s0;
    t->shape[1] = s1;
    t->data = p;
    t->nbytes = (size_t)n * elem;
    ts->owned[ts->n++] = p;
}

static void write_st(const char *rel, struct tensors *ts, const struct ffn_safetensors_kv *meta,
                     int n_meta) {
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) die("context");
    if (ffn_safetensors_write(ctx, path_of(rel), ts->t, ts->n, meta, n_meta))
        die(ffn_ctx_last_error(ctx));
    ffn_ctx_destroy(ctx);
    for (int i = 0; i < ts->n; i++) free(ts->owned[i]);
    ts->n = 0;
}

static double small(int64_t i) { return (double)((i * 37) % 19 - 9) / 50.0; }
static double huge_at_3(int64_t i) { return i == 3 ? 1e6 : small(i); }

static const char *k_llama_cfg =
    "{\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\": 16, "
    "\"num_hidden_layers\": 1, \"hidden_act\": \"silu\"}";

// A tiny llama directory; the up weight gets `up_dtype` (elem bytes), optionally a scale tensor.
static void tiny_llama(const char *dir, const char *cfg, enum ffn_file_dtype up_dtype,
                       size_t up_elem, const char *extra_name, double (*up_f)(int64_t)) {
    mkdir_rel(dir);
    char rel[256];
    snprintf(rel, sizeof rel, "%s/config.json", dir);
    save_text(rel, cfg ? cfg : k_llama_cfg);
    struct tensors ts = {0};
    add(&ts, "model.layers.0.mlp.gate_proj.weight", FFN_FILE_DTYPE_F32, 4, 2, M, D, small);
    add(&ts, "model.layers.0.mlp.up_proj.weight", up_dtype, up_elem, 2, M, D, up_f ? up_f : small);
    add(&ts, "model.layers.0.mlp.down_proj.weight", FFN_FILE_DTYPE_F32, 4, 2, D, M, small);
    if (extra_name) add(&ts, extra_name, FFN_FILE_DTYPE_F32, 4, 1, M, 0, small);
    snprintf(rel, sizeof rel, "%s/model.safetensors", dir);
    write_st(rel, &ts, NULL, 0);
}

// --- GGUF -------------------------------------------------------------------------------------

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
        if (!b->p) die("out of memory");
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }  // little-endian host
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(struct buf *b, const char *s) {
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

enum { GGUF_U32 = 4, GGUF_STRING = 8, GGML_F32 = 0 };

struct gt {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[4];  // fastest first
};

// A GGUF v3 file: general.architecture = arch, the u32 keys given, F32 tensors (small values).
static void write_gguf(const char *rel, const char *arch, const char *const *keys,
                       const uint32_t *vals, int n_keys, const struct gt *ts, int n_t) {
    struct buf b = {0};
    put(&b, "GGUF", 4);
    put_u32(&b, 3);
    put_u64(&b, (uint64_t)n_t);
    put_u64(&b, (uint64_t)n_keys + 1);
    put_str(&b, "general.architecture"), put_u32(&b, GGUF_STRING), put_str(&b, arch);
    for (int i = 0; i < n_keys; i++)
        put_str(&b, keys[i]), put_u32(&b, GGUF_U32), put_u32(&b, vals[i]);
    uint64_t off = 0, sizes[8];
    for (int i = 0; i < n_t; i++) {
        uint64_t n = 1;
        for (uint32_t k = 0; k < ts[i].n_dims; k++) n *= ts[i].ne[k];
        sizes[i] = n * 4;
        put_str(&b, ts[i].name);
        put_u32(&b, ts[i].n_dims);
        for (uint32_t k = 0; k < ts[i].n_dims; k++) put_u64(&b, ts[i].ne[k]);
        put_u32(&b, GGML_F32);
        put_u64(&b, off);
        off += (sizes[i] + 31) / 32 * 32;
    }
    const uint8_t zero[32] = {0};
    put(&b, zero, (32 - b.len % 32) % 32);
    for (int i = 0; i < n_t; i++) {
        for (uint64_t k = 0; k < sizes[i] / 4; k++) {
            const float v = (float)small((int64_t)k);
            put(&b, &v, 4);
        }
        put(&b, zero, (32 - sizes[i] % 32) % 32);
    }
    save(rel, b.p, b.len);
    free(b.p);
}

// --- io files for `ffn verify` against tests/data/hf/llama (d 64, m 172) ----------------------

static void io_file(const char *rel, int64_t T, int x_dims, bool dy_transposed, bool bad_grad,
                    const char *layer_meta, enum ffn_file_dtype x_dtype) {
    struct tensors ts = {0};
    const size_t xe = x_dtype == FFN_FILE_DTYPE_I32 ? 4 : 4;
    add(&ts, "x", x_dtype, xe, x_dims, x_dims == 1 ? T * HF_D : T, HF_D, small);
    add(&ts, "y", FFN_FILE_DTYPE_F32, 4, 2, T, HF_D, small);
    if (dy_transposed) add(&ts, "dy", FFN_FILE_DTYPE_F32, 4, 2, HF_D, T, small);
    if (bad_grad) {
        add(&ts, "dy", FFN_FILE_DTYPE_F32, 4, 2, T, HF_D, small);
        add(&ts, "grad.up_proj.weight", FFN_FILE_DTYPE_F32, 4, 2, 5, 5, small);
    }
    const struct ffn_safetensors_kv meta[] = {{"layer", layer_meta ? layer_meta : "1"}};
    write_st(rel, &ts, meta, 1);
}

// A copy of the llama fixture's io file with a tensor and a metadata string holding control
// characters: verify passes and prints both, escaped.
static void io_ctl(const char *rel, const char *src) {
    ffn_ctx_t ctx;
    ffn_safetensors_t st;
    if (ffn_ctx_create(NULL, &ctx) || ffn_safetensors_open(ctx, src, &st)) die("open io fixture");
    struct ffn_file_tensor t[32];
    int64_t n = ffn_safetensors_count(st);
    if (n > 30) die("io fixture too large");
    for (int64_t i = 0; i < n; i++) ffn_safetensors_get(ctx, st, i, &t[i]);
    static const float w[4] = {1, 2, 3, 4};
    t[n] = (struct ffn_file_tensor){.name = "grad.\x1b[2J\x1b]0;pwned\x07mlp\nnext.weight",
                                    .dtype = FFN_FILE_DTYPE_F32,
                                    .n_dims = 1,
                                    .data = w,
                                    .nbytes = sizeof w};
    t[n].shape[0] = 4;
    const struct ffn_safetensors_kv meta[] = {{"layer", "1"},
                                              {"module", "Llama\x1b[31mMLP\r\x1b[K\xc2\x9b"}};
    if (ffn_safetensors_write(ctx, path_of(rel), t, n + 1, meta, 2)) die(ffn_ctx_last_error(ctx));
    ffn_safetensors_close(st);
    ffn_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
    if (argc < 3) die("usage: cli_gen OUT_DIR LLAMA_IO.safetensors");
    g_out = argv[1];
    mkdir(g_out, 0777);

    // Weights whose dtype is not a weight (class 6): integers, bools, int8 with a scale, fp8.
    tiny_llama("i32", NULL, FFN_FILE_DTYPE_I32, 4, NULL, NULL);
    tiny_llama("bool", NULL, FFN_FILE_DTYPE_BOOL, 1, NULL, NULL);
    tiny_llama("i8_scale", NULL, FFN_FILE_DTYPE_I8, 1, "model.layers.0.mlp.up_proj.weight_scale",
               NULL);
    tiny_llama("fp8", NULL, FFN_FILE_DTYPE_F8_E4M3, 1, NULL, NULL);
    tiny_llama("f64", NULL, FFN_FILE_DTYPE_F64, 8, NULL, NULL);  // a float: accepted
    // A weight of 1e6: f16 cannot hold it (largest finite 65504).
    tiny_llama("big", NULL, FFN_FILE_DTYPE_F32, 4, NULL, huge_at_3);
    tiny_llama("ok", NULL, FFN_FILE_DTYPE_F32, 4, NULL, NULL);

    // Control characters from files (class 8): model_type, a tensor name, a JSON key, a GGUF
    // architecture.
    tiny_llama("ctl_model_type",
               "{\"model_type\": \"lla\\u001b[31mma\\nFAKE: all good\", \"hidden_size\": 8, "
               "\"intermediate_size\": 16, \"num_hidden_layers\": 1}",
               FFN_FILE_DTYPE_F32, 4, NULL, NULL);
    tiny_llama("ctl_key",
               "{\"model_type\": \"llama\", \"\\u001b[2Jk\\r\": 1, \"\\u001b[2Jk\\r\": 2, "
               "\"hidden_size\": 8, \"intermediate_size\": 16, \"num_hidden_layers\": 1}",
               FFN_FILE_DTYPE_F32, 4, NULL, NULL);
    {  // an FFN tensor missing; a name with ESC and a newline among the FFN-looking tensors
        mkdir_rel("ctl_tensor");
        save_text("ctl_tensor/config.json", k_llama_cfg);
        struct tensors ts = {0};
        add(&ts, "model.layers.0.mlp.gate_proj.weight", FFN_FILE_DTYPE_F32, 4, 2, M, D, small);
        add(&ts, "model.layers.0.mlp.\x1b[31mup\nproj.weight", FFN_FILE_DTYPE_F32, 4, 2, M, D,
            small);
        add(&ts, "model.layers.0.mlp.down_proj.weight", FFN_FILE_DTYPE_F32, 4, 2, D, M, small);
        write_st("ctl_tensor/model.safetensors", &ts, NULL, 0);
    }
    {
        static const char *const keys[] = {"ll\x1b[1mama\n.block_count"};
        const uint32_t vals[] = {1};
        const struct gt ts[] = {{"blk.0.ffn_up.weight", 2, {D, M}}};
        write_gguf("ctl_arch.gguf", "ll\x1b[1mama\nFAKE", keys, vals, 1, ts, 1);
    }
    io_ctl("io_ctl.safetensors", argv[2]);

    // GGUF counts and shapes (classes 2 and 9).
    {
        static const char *const keys[] = {"phi3.block_count", "phi3.embedding_length",
                                           "phi3.feed_forward_length"};
        const uint32_t vals[] = {1, D, M};
        const struct gt ts[] = {{"blk.0.ffn_up.weight", 2, {D, 2 * M + 1}},
                                {"blk.0.ffn_down.weight", 2, {M, D}}};
        write_gguf("phi3_odd.gguf", "phi3", keys, vals, 3, ts, 2);
    }
    {
        static const char *const keys[] = {"llama.block_count", "llama.embedding_length",
                                           "llama.feed_forward_length", "llama.expert_count"};
        const uint32_t vals[] = {65536, D, M, 16384};
        const struct gt ts[] = {{"blk.0.ffn_gate_exps.weight", 3, {D, M, 4}},
                                {"blk.0.ffn_up_exps.weight", 3, {D, M, 4}},
                                {"blk.0.ffn_down_exps.weight", 3, {M, D, 4}}};
        write_gguf("moe_forged.gguf", "llama", keys, vals, 4, ts, 3);
        const uint32_t vals2[] = {65536, D, M, 4};  // the experts agree; the layers do not
        write_gguf("layers_forged.gguf", "llama", keys, vals2, 4, ts, 3);
    }
    {  // a valid tiny llama GGUF (given where safetensors is expected)
        static const char *const keys[] = {"llama.block_count", "llama.embedding_length",
                                           "llama.feed_forward_length"};
        const uint32_t vals[] = {1, D, M};
        const struct gt ts[] = {{"blk.0.ffn_gate.weight", 2, {D, M}},
                                {"blk.0.ffn_up.weight", 2, {D, M}},
                                {"blk.0.ffn_down.weight", 2, {M, D}}};
        write_gguf("llama.gguf", "llama", keys, vals, 3, ts, 3);
        mkdir_rel("gguf_inside");  // a GGUF under the name model.safetensors
        save_text("gguf_inside/config.json", k_llama_cfg);
        write_gguf("gguf_inside/model.safetensors", "llama", keys, vals, 3, ts, 3);
    }
    // Configs with forged counts over three tensors.
    tiny_llama("cfg_layers",
               "{\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\": 16, "
               "\"num_hidden_layers\": 65536}",
               FFN_FILE_DTYPE_F32, 4, NULL, NULL);
    {  // one Mixtral expert's tensors, and counts of 65536 layers x 16384 experts
        mkdir_rel("cfg_experts");
        save_text("cfg_experts/config.json",
                  "{\"model_type\": \"mixtral\", \"hidden_size\": 8, \"intermediate_size\": "
                  "16, \"num_hidden_layers\": 65536, \"num_local_experts\": 16384}");
        struct tensors ts = {0};
        add(&ts, "model.layers.0.block_sparse_moe.experts.0.w1.weight", FFN_FILE_DTYPE_F32, 4, 2, M,
            D, small);
        add(&ts, "model.layers.0.block_sparse_moe.experts.0.w3.weight", FFN_FILE_DTYPE_F32, 4, 2, M,
            D, small);
        add(&ts, "model.layers.0.block_sparse_moe.experts.0.w2.weight", FFN_FILE_DTYPE_F32, 4, 2, D,
            M, small);
        write_st("cfg_experts/model.safetensors", &ts, NULL, 0);
    }

    // JSON files that are not shard indexes (class 9).
    save_text("ok/not_index.json", "{\"metadata\": {\"total_size\": 4}, \"weights\": {}}");
    save_text("notes.txt", "these are not weights\n");

    // io files for verify (class 5) and non-float inputs (class 6).
    io_file("io_zero.safetensors", 0, 2, false, false, NULL, FFN_FILE_DTYPE_F32);
    io_file("io_dy_t.safetensors", 3, 2, true, false, NULL, FFN_FILE_DTYPE_F32);
    io_file("io_grad.safetensors", 3, 2, false, true, NULL, FFN_FILE_DTYPE_F32);
    io_file("io_layer_abc.safetensors", 3, 2, false, false, "abc", FFN_FILE_DTYPE_F32);
    io_file("io_layer_big.safetensors", 3, 2, false, false, "99999999999999999999",
            FFN_FILE_DTYPE_F32);
    io_file("io_x_1d.safetensors", 3, 1, false, false, NULL, FFN_FILE_DTYPE_F32);
    io_file("io_x_i32.safetensors", 3, 2, false, false, NULL, FFN_FILE_DTYPE_I32);
    printf("cli_gen: inputs written to %s\n", g_out);
    return 0;
}
