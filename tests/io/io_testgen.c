// io_testgen.c — test-data generator for the io layer (a test helper, not part of the library):
//   gguf    HF_DIR OUT.gguf f32|f16|bf16|q8_0|q4_0 [ALIGN]   an HF fixture as GGUF (llama.cpp
//   names) mutate  HF_DIR OUT_DIR swap|transpose-down|transpose-all|gelu|nan   a converter mistake
//   hostile OUT_DIR        hand-made hostile checkpoints + OUT_DIR/cases.txt ("path<TAB>substring")
//   corpus  OUT_DIR        fuzz seeds: OUT_DIR/{safetensors,gguf,config}/...
// The GGUF writer follows ggml's docs/gguf.md (v3): header, key-values, tensor infos with dims
// fastest-first, data aligned to general.alignment. Q8_0 / Q4_0 quantise as ggml's reference
// quantize_row_q8_0_ref / quantize_row_q4_0_ref do.
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffn.h"

#define QK 32  // elements per Q8_0 / Q4_0 block

static int fail(const char *what) {
    fprintf(stderr, "io_testgen: %s\n", what);
    return 2;
}

// --- a growable byte buffer ------------------------------------------------------------------

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) {
            fprintf(stderr, "io_testgen: out of memory\n");
            exit(2);
        }
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) {
    uint8_t x[4];
    for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 4);
}

static void put_u64(struct buf *b, uint64_t v) {
    uint8_t x[8];
    for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 8);
}

static void put_str(struct buf *b, const char *s) {
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

static void put_zeros(struct buf *b, size_t n) {
    static const uint8_t z[64] = {0};
    while (n) {
        const size_t k = n < sizeof z ? n : sizeof z;
        put(b, z, k);
        n -= k;
    }
}

static int save(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        if (f) fclose(f);
        fprintf(stderr, "io_testgen: cannot write %s\n", path);
        return 2;
    }
    return fclose(f) ? 2 : 0;
}

static char *join(const char *a, const char *b) {
    char *p = malloc(strlen(a) + strlen(b) + 2);
    sprintf(p, "%s/%s", a, b);
    return p;
}

static void mkdirs(const char *path) { mkdir(path, 0777); }

// --- GGUF
// -----------------------------------------------------------------------------------------

enum { GGUF_U32 = 4, GGUF_I32 = 5, GGUF_F32 = 6, GGUF_STRING = 8, GGUF_ARRAY = 9 };
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8, GGML_BF16 = 30 };

struct gtensor {
    char name[96];
    uint32_t n_dims;
    uint64_t ne[4];  // fastest first
    uint32_t type;
    struct buf data;
};

static void kv_str(struct buf *kv, int *n, const char *key, const char *val) {
    put_str(kv, key), put_u32(kv, GGUF_STRING), put_str(kv, val), (*n)++;
}

static void kv_u32(struct buf *kv, int *n, const char *key, uint32_t v) {
    put_str(kv, key), put_u32(kv, GGUF_U32), put_u32(kv, v), (*n)++;
}

// ggml quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d).
static void quant_q8_0(struct buf *out, const float *x, int64_t n) {
    for (int64_t b = 0; b < n / QK; b++) {
        float amax = 0;
        for (int i = 0; i < QK; i++) amax = fmaxf(amax, fabsf(x[b * QK + i]));
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        uint16_t h = ffn_f32_to_f16(d);
        put(out, &h, 2);
        for (int i = 0; i < QK; i++) {
            const int8_t q = (int8_t)roundf(x[b * QK + i] * id);
            put(out, &q, 1);
        }
    }
}

// ggml quantize_row_q4_0_ref: d = (value of largest magnitude) / -8, q = min(15, x/d + 8.5).
static void quant_q4_0(struct buf *out, const float *x, int64_t n) {
    for (int64_t b = 0; b < n / QK; b++) {
        float amax = 0, max = 0;
        for (int i = 0; i < QK; i++) {
            const float v = x[b * QK + i];
            if (fabsf(v) > amax) amax = fabsf(v), max = v;
        }
        const float d = max / -8.0f, id = d ? 1.0f / d : 0.0f;
        uint16_t h = ffn_f32_to_f16(d);
        put(out, &h, 2);
        for (int i = 0; i < QK / 2; i++) {
            const float x0 = x[b * QK + i] * id, x1 = x[b * QK + QK / 2 + i] * id;
            int q0 = (int)(x0 + 8.5f), q1 = (int)(x1 + 8.5f);
            q0 = q0 > 15 ? 15 : q0, q1 = q1 > 15 ? 15 : q1;
            const uint8_t byte = (uint8_t)(q0 | (q1 << 4));
            put(out, &byte, 1);
        }
    }
}

// A 2-D [rows, cols] (slowest first) or 1-D tensor in `type` (quantised types fall back to F16
// when a row is not a whole number of blocks, as llama.cpp's quantiser does).
static void gtensor_make(struct gtensor *t, const char *name, const float *v, int n_dims,
                         int64_t rows, int64_t cols, uint32_t type) {
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = (uint32_t)n_dims;
    const int64_t n = n_dims == 1 ? rows : rows * cols;
    t->ne[0] = (uint64_t)(n_dims == 1 ? rows : cols);
    t->ne[1] = (uint64_t)(n_dims == 1 ? 1 : rows);
    if ((type == GGML_Q8_0 || type == GGML_Q4_0) && (t->ne[0] % QK || n_dims == 1)) type = GGML_F16;
    t->type = type;
    if (type == GGML_Q8_0)
        quant_q8_0(&t->data, v, n);
    else if (type == GGML_Q4_0)
        quant_q4_0(&t->data, v, n);
    else
        for (int64_t i = 0; i < n; i++) {
            if (type == GGML_F32)
                put(&t->data, &v[i], 4);
            else {
                const uint16_t h = type == GGML_BF16 ? ffn_f32_to_bf16(v[i]) : ffn_f32_to_f16(v[i]);
                put(&t->data, &h, 2);
            }
        }
}

static void gguf_assemble(struct buf *out, const struct buf *kv, int n_kv, struct gtensor *ts,
                          int n_t, uint64_t align) {
    put(out, "GGUF", 4);
    put_u32(out, 3);
    put_u64(out, (uint64_t)n_t);
    put_u64(out, (uint64_t)n_kv);
    put(out, kv->p, kv->len);
    uint64_t off = 0;
    for (int i = 0; i < n_t; i++) {
        put_str(out, ts[i].name);
        put_u32(out, ts[i].n_dims);
        for (uint32_t k = 0; k < ts[i].n_dims; k++) put_u64(out, ts[i].ne[k]);
        put_u32(out, ts[i].type);
        put_u64(out, off);
        off += (ts[i].data.len + align - 1) / align * align;
    }
    put_zeros(out, (size_t)((align - out->len % align) % align));
    for (int i = 0; i < n_t; i++) {
        put(out, ts[i].data.p, ts[i].data.len);
        put_zeros(out, (size_t)((align - ts[i].data.len % align) % align));
    }
}

static float *to_f32(ffn_ctx_t ctx, const struct ffn_file_tensor *t) {
    const int64_t n = ffn_file_tensor_numel(t);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (ffn_file_tensor_to_f32(ctx, v, n, t)) {
        fprintf(stderr, "io_testgen: %s\n", ffn_ctx_last_error(ctx));
        exit(2);
    }
    return v;
}

// An HF LLaMA or Phi-3 fixture as GGUF: FFN tensors with llama.cpp names, token_embd and
// output_norm, the metadata llama.cpp reads, and a tokenizer array plus a nested array.
static int cmd_gguf(int argc, char **argv) {
    if (argc < 5) return fail("usage: gguf HF_DIR OUT.gguf f32|f16|bf16|q8_0|q4_0 [ALIGN]");
    const char *ty = argv[4];
    const uint32_t type = !strcmp(ty, "f32")    ? GGML_F32
                          : !strcmp(ty, "f16")  ? GGML_F16
                          : !strcmp(ty, "bf16") ? GGML_BF16
                          : !strcmp(ty, "q8_0") ? GGML_Q8_0
                          : !strcmp(ty, "q4_0") ? GGML_Q4_0
                                                : 999;
    if (type == 999) return fail("unknown type");
    const uint64_t align = argc > 5 ? strtoull(argv[5], NULL, 10) : 32;
    ffn_ctx_t ctx;
    ffn_model_t m;
    ffn_ctx_create(NULL, &ctx);
    if (ffn_model_open(ctx, argv[2], &m)) return fail(ffn_ctx_last_error(ctx));
    const struct ffn_model_desc *d = ffn_model_desc(m);
    const char *arch = !strcmp(d->arch, "phi3") ? "phi3" : "llama";
    struct buf kv = {0};
    int n_kv = 0;
    char key[96];
    kv_str(&kv, &n_kv, "general.architecture", arch);
    kv_str(&kv, &n_kv, "general.name", "ffn test fixture");
    kv_u32(&kv, &n_kv, "general.alignment", (uint32_t)align);
    snprintf(key, sizeof key, "%s.block_count", arch),
        kv_u32(&kv, &n_kv, key, (uint32_t)d->n_layers);
    snprintf(key, sizeof key, "%s.context_length", arch), kv_u32(&kv, &n_kv, key, 2048);
    snprintf(key, sizeof key, "%s.embedding_length", arch),
        kv_u32(&kv, &n_kv, key, (uint32_t)d->d_model);
    snprintf(key, sizeof key, "%s.feed_forward_length", arch),
        kv_u32(&kv, &n_kv, key, (uint32_t)d->d_ff);
    snprintf(key, sizeof key, "%s.attention.head_count", arch), kv_u32(&kv, &n_kv, key, 4);
    if (d->n_experts) {
        snprintf(key, sizeof key, "%s.expert_count", arch),
            kv_u32(&kv, &n_kv, key, (uint32_t)d->n_experts);
        snprintf(key, sizeof key, "%s.expert_used_count", arch), kv_u32(&kv, &n_kv, key, 2);
    }
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    put_str(&kv, key), put_u32(&kv, GGUF_F32), put(&kv, &(float){1e-6f}, 4), n_kv++;
    // tokenizer.ggml.tokens: an array of strings; ffn.test.nested: [[1, 2], [3]] (arrays nest).
    put_str(&kv, "tokenizer.ggml.tokens"), put_u32(&kv, GGUF_ARRAY), put_u32(&kv, GGUF_STRING),
        put_u64(&kv, 3);
    put_str(&kv, "<s>"), put_str(&kv, "</s>"), put_str(&kv, "hello"), n_kv++;
    put_str(&kv, "ffn.test.nested"), put_u32(&kv, GGUF_ARRAY), put_u32(&kv, GGUF_ARRAY),
        put_u64(&kv, 2);
    put_u32(&kv, GGUF_I32), put_u64(&kv, 2), put_u32(&kv, 1), put_u32(&kv, 2);
    put_u32(&kv, GGUF_I32), put_u64(&kv, 1), put_u32(&kv, 3), n_kv++;

    const int max_t = (int)(3 * d->n_layers + 2);
    struct gtensor *ts = calloc((size_t)max_t, sizeof *ts);
    int n_t = 0;
    ffn_safetensors_t st = ffn_model_safetensors(m);
    const char *extra[][2] = {{"model.embed_tokens.weight", "token_embd.weight"},
                              {"model.norm.weight", "output_norm.weight"}};
    for (int i = 0; i < 2; i++) {
        struct ffn_file_tensor t;
        if (ffn_safetensors_find(NULL, st, extra[i][0], &t)) continue;
        float *v = to_f32(ctx, &t);
        gtensor_make(&ts[n_t++], extra[i][1], v, t.n_dims, t.shape[0],
                     t.n_dims > 1 ? t.shape[1] : 1, t.n_dims == 1 ? GGML_F32 : type);
        free(v);
    }
    for (int64_t L = 0; L < d->n_layers && d->n_experts; L++) {
        // Mixture of experts: blk.L.ffn_{gate,up,down}_exps.weight, [E, rows, cols] (ne {cols,
        // rows, E}), the experts' matrices back to back.
        const char *role[3] = {"gate", "up", "down"};
        for (int k = 0; k < 3; k++) {
            float *all = NULL;
            int64_t rows = 0, cols = 0;
            for (int64_t e = 0; e < d->n_experts; e++) {
                struct ffn_model_layer l;
                ffn_model_layer(ctx, m, L, e, &l);
                const struct ffn_file_tensor *t = k == 0 ? &l.gate : k == 1 ? &l.up : &l.down;
                rows = t->shape[0], cols = t->shape[1];
                if (!all) all = malloc((size_t)(d->n_experts * rows * cols) * sizeof *all);
                float *v = to_f32(ctx, t);
                memcpy(all + e * rows * cols, v, (size_t)(rows * cols) * sizeof *v);
                free(v);
            }
            char name[96];
            snprintf(name, sizeof name, "blk.%" PRId64 ".ffn_%s_exps.weight", L, role[k]);
            gtensor_make(&ts[n_t], name, all, 2, d->n_experts * rows, cols, type);
            ts[n_t].n_dims = 3, ts[n_t].ne[1] = (uint64_t)rows,
            ts[n_t].ne[2] = (uint64_t)d->n_experts;
            n_t++;
            free(all);
        }
    }
    for (int64_t L = 0; L < d->n_layers && !d->n_experts; L++) {
        struct ffn_model_layer l;
        ffn_model_layer(ctx, m, L, -1, &l);
        const struct ffn_file_tensor *src[3] = {l.gate.name ? &l.gate : NULL,
                                                l.gate_up.name ? &l.gate_up : &l.up, &l.down};
        const char *role[3] = {"gate", "up", "down"};
        for (int k = 0; k < 3; k++) {
            if (!src[k]) continue;
            char name[96];
            snprintf(name, sizeof name, "blk.%" PRId64 ".ffn_%s.weight", L, role[k]);
            float *v = to_f32(ctx, src[k]);
            gtensor_make(&ts[n_t++], name, v, 2, src[k]->shape[0], src[k]->shape[1], type);
            free(v);
        }
    }
    struct buf out = {0};
    gguf_assemble(&out, &kv, n_kv, ts, n_t, align);
    const int rc = save(argv[3], out.p, out.len);
    for (int i = 0; i < n_t; i++) free(ts[i].data.p);
    free(ts), free(kv.p), free(out.p);
    ffn_model_close(m);
    ffn_ctx_destroy(ctx);
    return rc;
}

// --- mutate: the usual converter mistakes --------------------------------------------------------

struct owned {
    struct ffn_file_tensor t[4096];
    void *free_me[4096];
    int n;
};

static int write_config(const char *src_dir, const char *dst_dir, bool flip_gelu) {
    char *sp = join(src_dir, "config.json"), *dp = join(dst_dir, "config.json");
    FILE *f = fopen(sp, "rb");
    if (!f) return fail("no config.json");
    static char text[1 << 20];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    int rc;
    if (!flip_gelu) {
        rc = save(dp, text, n);
    } else {
        cJSON *root = cJSON_Parse(text);
        const char *keys[] = {"hidden_act", "hidden_activation", "activation_function",
                              "dense_act_fn", "activation"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            cJSON *it = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
            if (!cJSON_IsString(it)) continue;
            const bool erf = !strcmp(it->valuestring, "gelu");
            cJSON_SetValuestring(it, erf ? "gelu_new" : "gelu");
        }
        char *out = cJSON_Print(root);
        rc = save(dp, out, strlen(out));
        free(out);
        cJSON_Delete(root);
    }
    free(sp), free(dp);
    return rc;
}

// Transposed bytes under the same declared shape: [r, c] storage gets the [c, r] matrix.
static void *transpose_bytes(ffn_ctx_t ctx, const struct ffn_file_tensor *t) {
    float *v = to_f32(ctx, t), *o = malloc(t->nbytes);
    const int64_t r = t->shape[0], c = t->shape[1];
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) o[j * r + i] = v[i * c + j];
    free(v);
    return o;
}

static int cmd_mutate(int argc, char **argv) {
    if (argc < 5)
        return fail("usage: mutate HF_DIR OUT_DIR swap|transpose-down|transpose-all|gelu|nan");
    const char *src = argv[2], *dst = argv[3], *how = argv[4];
    ffn_ctx_t ctx;
    ffn_model_t m;
    ffn_ctx_create(NULL, &ctx);
    if (ffn_model_open(ctx, src, &m)) return fail(ffn_ctx_last_error(ctx));
    mkdirs(dst);
    ffn_safetensors_t st = ffn_model_safetensors(m);
    const struct ffn_model_desc *d = ffn_model_desc(m);
    static struct owned o;
    o.n = 0;
    for (int64_t i = 0; i < ffn_safetensors_count(st) && o.n < 4096; i++)
        ffn_safetensors_get(NULL, st, i, &o.t[o.n++]);
    for (int64_t L = 0; L < d->n_layers; L++) {
        struct ffn_model_layer l;
        ffn_model_layer(ctx, m, L, d->n_experts ? 0 : -1, &l);
        for (int i = 0; i < o.n; i++) {
            struct ffn_file_tensor *t = &o.t[i];
            const bool is_gate = l.gate.name && !strcmp(t->name, l.gate.name);
            const bool is_up = l.up.name && !strcmp(t->name, l.up.name);
            const bool is_fused = l.gate_up.name && !strcmp(t->name, l.gate_up.name);
            const bool is_down = !strcmp(t->name, l.down.name);
            const bool weight = is_gate || is_up || is_fused || is_down;
            const bool is_bgate = l.b_gate.name && !strcmp(t->name, l.b_gate.name);
            const bool is_bup = l.b_up.name && !strcmp(t->name, l.b_up.name);
            if (!strcmp(how, "swap")) {  // the gate and up modules exchanged: weights and biases
                if (is_gate)
                    t->data = l.up.data;
                else if (is_up)
                    t->data = l.gate.data;
                else if (is_bgate && l.b_up.name)
                    t->data = l.b_up.data;
                else if (is_bup && l.b_gate.name)
                    t->data = l.b_gate.data;
                else if (is_fused) {  // [gate | up] -> [up | gate] along the output rows
                    uint8_t *p = malloc(t->nbytes);
                    const size_t half = t->nbytes / 2;
                    memcpy(p, (const uint8_t *)l.gate_up.data + half, half);
                    memcpy(p + half, l.gate_up.data, half);
                    t->data = p;
                    o.free_me[i] = p;
                }
            } else if ((!strcmp(how, "transpose-down") && is_down) ||
                       (!strcmp(how, "transpose-all") && weight)) {
                t->data = o.free_me[i] = transpose_bytes(ctx, t);
            } else if (!strcmp(how, "nan") && L == 1 && (is_gate || is_up || is_fused)) {
                float *p = malloc(t->nbytes);
                for (size_t k = 0; k < t->nbytes / 4; k++) p[k] = NAN;
                t->data = o.free_me[i] = p;
            }
        }
    }
    char *sp = join(dst, "model.safetensors");
    const struct ffn_safetensors_kv meta[] = {{"format", "pt"}};
    int rc = ffn_safetensors_write(ctx, sp, o.t, o.n, meta, 1) ? fail(ffn_ctx_last_error(ctx)) : 0;
    if (!rc) rc = write_config(src, dst, !strcmp(how, "gelu"));
    for (int i = 0; i < o.n; i++) free(o.free_me[i]), o.free_me[i] = NULL;
    free(sp);
    ffn_model_close(m);
    ffn_ctx_destroy(ctx);
    return rc;
}

// --- hostile files ------------------------------------------------------------------------------

static const char *k_llama_config =
    "{\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\": 16, "
    "\"num_hidden_layers\": 1, \"hidden_act\": \"silu\"}";

// A safetensors image: the u64 header length (or `len_override` when nonzero), the header, and
// `data_len` bytes of data (counting up, so values differ).
static void st_image(struct buf *b, const char *header, size_t data_len, uint64_t len_override) {
    put_u64(b, len_override ? len_override : strlen(header));
    put(b, header, strlen(header));
    for (size_t i = 0; i < data_len; i++) put(b, &(uint8_t){(uint8_t)i}, 1);
}

// The FFN of a valid tiny llama (d 8, m 16, 1 layer): gate, up [16, 8], down [8, 16] f32.
static const char *k_llama_header =
    "{\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],\"data_offsets\":"
    "[0,512]},"
    "\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],\"data_offsets\":["
    "512,1024]},"
    "\"model.layers.0.mlp.down_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,16],\"data_offsets\":["
    "1024,1536]}}";

struct cases {
    FILE *list;
    const char *root;
};

// A model directory <root>/<name>/ with config.json and model.safetensors.
static void st_case(struct cases *c, const char *name, const struct buf *st, const char *config,
                    const char *expect) {
    char *dir = join(c->root, name);
    mkdirs(dir);
    char *sp = join(dir, "model.safetensors"), *cp = join(dir, "config.json");
    save(sp, st->p, st->len);
    save(cp, config, strlen(config));
    fprintf(c->list, "%s\t%s\n", dir, expect);
    free(dir), free(sp), free(cp);
}

static void st_hdr_case(struct cases *c, const char *name, const char *header, size_t data_len,
                        uint64_t len_override, const char *expect) {
    struct buf b = {0};
    st_image(&b, header, data_len, len_override);
    st_case(c, name, &b, k_llama_config, expect);
    free(b.p);
}

static void gguf_case(struct cases *c, const char *name, const struct buf *g, const char *expect) {
    char file[256];
    snprintf(file, sizeof file, "%s.gguf", name);
    char *p = join(c->root, file);
    save(p, g->p, g->len);
    fprintf(c->list, "%s\t%s\n", p, expect);
    free(p);
}

// A valid tiny llama GGUF, with knobs to break it. Fields of the first tensor can be overridden.
struct gknobs {
    uint64_t n_t, n_kv;  // 0: the true counts
    uint64_t key_len;    // 0: true length of the first key
    uint32_t n_dims;     // 0: 2
    uint32_t type;       // 0xffffffff: F32
    uint64_t offset;     // UINT64_MAX: true offset
    uint32_t alignment;  // 0: 32
    uint64_t arr_len;    // 0: 3 (tokenizer array)
    int nest;            // extra nesting of the nested array
    bool dup_key;
    size_t truncate;       // > 0: cut the file to this many bytes
    uint32_t version;      // 0: 3
    bool ffn_len_missing;  // drop llama.feed_forward_length
};

static void gguf_tiny(struct buf *out, const struct gknobs *k) {
    struct buf kv = {0};
    int n_kv = 0;
    const char *arch = "general.architecture";
    put_u64(&kv, k->key_len ? k->key_len : strlen(arch)), put(&kv, arch, strlen(arch));
    put_u32(&kv, GGUF_STRING), put_str(&kv, "llama"), n_kv++;
    kv_u32(&kv, &n_kv, "general.alignment", k->alignment ? k->alignment : 32);
    kv_u32(&kv, &n_kv, "llama.block_count", 1);
    kv_u32(&kv, &n_kv, "llama.embedding_length", 32);
    if (!k->ffn_len_missing) kv_u32(&kv, &n_kv, "llama.feed_forward_length", 32);
    if (k->dup_key) kv_u32(&kv, &n_kv, "llama.block_count", 1);
    put_str(&kv, "tokenizer.ggml.tokens"), put_u32(&kv, GGUF_ARRAY), put_u32(&kv, GGUF_STRING);
    put_u64(&kv, k->arr_len ? k->arr_len : 3), put_str(&kv, "a"), put_str(&kv, "b"),
        put_str(&kv, "c"), n_kv++;
    put_str(&kv, "ffn.test.nested"), put_u32(&kv, GGUF_ARRAY);
    for (int i = 0; i < k->nest; i++) put_u32(&kv, GGUF_ARRAY), put_u64(&kv, 1);
    put_u32(&kv, GGUF_I32), put_u64(&kv, 1), put_u32(&kv, 7), n_kv++;
    static float w[32 * 32];
    for (int i = 0; i < 32 * 32; i++) w[i] = (float)((i * 37) % 101 - 50) / 500.0f;
    struct gtensor ts[3];
    const char *names[3] = {"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight",
                            "blk.0.ffn_down.weight"};
    for (int i = 0; i < 3; i++) gtensor_make(&ts[i], names[i], w, 2, 32, 32, GGML_F32);
    const uint64_t align = 32;
    put(out, "GGUF", 4);
    put_u32(out, k->version ? k->version : 3);
    put_u64(out, k->n_t ? k->n_t : 3);
    put_u64(out, k->n_kv ? k->n_kv : (uint64_t)n_kv);
    put(out, kv.p, kv.len);
    uint64_t off = 0;
    for (int i = 0; i < 3; i++) {
        put_str(out, ts[i].name);
        const uint32_t nd = i == 0 && k->n_dims ? k->n_dims : 2;
        put_u32(out, nd);
        for (uint32_t j = 0; j < nd; j++) put_u64(out, j < 2 ? ts[i].ne[j] : 1);
        put_u32(out, i == 0 && k->type != 0xffffffffu ? k->type : GGML_F32);
        put_u64(out, i == 0 && k->offset != UINT64_MAX ? k->offset : off);
        off += ts[i].data.len;
    }
    put_zeros(out, (size_t)((align - out->len % align) % align));
    for (int i = 0; i < 3; i++) put(out, ts[i].data.p, ts[i].data.len), free(ts[i].data.p);
    if (k->truncate && k->truncate < out->len) out->len = k->truncate;
    free(kv.p);
}

static struct gknobs gk(void) {
    struct gknobs k = {0};
    k.type = 0xffffffffu;
    k.offset = UINT64_MAX;
    return k;
}

static int cmd_hostile(int argc, char **argv) {
    if (argc < 3) return fail("usage: hostile OUT_DIR");
    struct cases c = {NULL, argv[2]};
    mkdirs(c.root);
    char *lp = join(c.root, "cases.txt");
    c.list = fopen(lp, "w");
    free(lp);
    if (!c.list) return fail("cannot write cases.txt");
    const char *h = k_llama_header;
    // safetensors
    st_hdr_case(&c, "st_len_2p63", h, 1536, UINT64_C(1) << 63, "exceeds the 100 MB limit");
    st_hdr_case(&c, "st_len_past_end", h, 16, 5000, "runs past the end of the file");
    st_hdr_case(&c, "st_offsets_past_end", h, 1000, 0, "but the data section holds 1000");
    st_hdr_case(&c, "st_truncated", h, 1200, 0, "but the data section holds 1200");
    st_hdr_case(&c, "st_overlap",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
                24, 0, "overlaps");
    st_hdr_case(&c, "st_hole",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}",
                24, 0, "hole");
    st_hdr_case(
        &c, "st_shape_overflow",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,16]}}",
        16, 0, "overflows");
    st_hdr_case(&c, "st_negative_shape",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1,4],\"data_offsets\":[0,16]}}", 16, 0,
                "not a non-negative integer");
    st_hdr_case(&c, "st_too_many_dims",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
                4, 0, "at most 8");
    st_hdr_case(&c, "st_wrong_rank",
                "{\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[128],"
                "\"data_offsets\":[0,512]},"
                "\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],\"data_"
                "offsets\":[512,1024]},"
                "\"model.layers.0.mlp.down_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,16],"
                "\"data_offsets\":[1024,1536]}}",
                1536, 0, "has shape [128]; expected [16, 8]");
    st_hdr_case(&c, "st_transposed",
                "{\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,16],"
                "\"data_offsets\":[0,512]},"
                "\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],\"data_"
                "offsets\":[512,1024]},"
                "\"model.layers.0.mlp.down_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,16],"
                "\"data_offsets\":[1024,1536]}}",
                1536, 0, "stored transposed?");
    st_hdr_case(&c, "st_unknown_dtype",
                "{\"a\":{\"dtype\":\"Q9\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16, 0,
                "unknown or unsupported dtype 'Q9'");
    st_hdr_case(&c, "st_size_mismatch",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[5],\"data_offsets\":[0,16]}}", 16, 0,
                "data_offsets span 16");
    st_hdr_case(&c, "st_duplicate",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                8, 0, "duplicate key 'a'");
    st_hdr_case(&c, "st_not_object", "[1, 2, 3]", 0, 0, "does not start with '{'");
    st_hdr_case(&c, "st_bad_utf8", "{\"a\xff\":{}}", 0, 0, "invalid UTF-8");
    st_hdr_case(&c, "st_bad_json", "{\"a\":{\"dtype\":\"F32\",}", 0, 0, "invalid JSON");
    st_hdr_case(&c, "st_trailing", "{}x", 0, 0, "trailing bytes");
    st_hdr_case(&c, "st_meta_not_string", "{\"__metadata__\":{\"k\":1}}", 0, 0, "is not a string");
    st_hdr_case(&c, "st_offsets_reversed",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8, 0,
                "end before they begin");
    {  // JSON nested 200,000 deep
        struct buf b = {0};
        const size_t depth = 200000;
        put_u64(&b, depth + 1);
        put(&b, "{", 1);
        for (size_t i = 0; i < depth; i++) put(&b, "[", 1);
        st_case(&c, "st_deep_json", &b, k_llama_config, "nested deeper than 64");
        free(b.p);
    }
    {  // a file shorter than the 8-byte length
        struct buf b = {0};
        put(&b, "\x10\x00\x00", 3);
        st_case(&c, "st_tiny", &b, k_llama_config, "8-byte header length");
        free(b.p);
    }
    {  // missing tensor (up_proj)
        struct buf b = {0};
        st_image(&b,
                 "{\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],"
                 "\"data_offsets\":[0,512]},"
                 "\"model.layers.0.mlp.down_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,16],"
                 "\"data_offsets\":[512,1024]}}",
                 1024, 0);
        st_case(&c, "st_missing_tensor", &b, k_llama_config,
                "missing tensor 'model.layers.0.mlp.up_proj.weight'");
        struct buf v = {0};
        st_image(&v, h, 1536, 0);
        st_case(&c, "cfg_no_intermediate", &v,
                "{\"model_type\": \"llama\", \"hidden_size\": 8, \"num_hidden_layers\": 1}",
                "no intermediate size");
        st_case(&c, "cfg_unknown_act", &v,
                "{\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\": 16, "
                "\"num_hidden_layers\": 1, \"hidden_act\": \"swoosh\"}",
                "\"swoosh\" is not an activation");
        st_case(&c, "cfg_unknown_arch", &v,
                "{\"model_type\": \"mamba9\", \"hidden_size\": 8, \"intermediate_size\": 16, "
                "\"num_hidden_layers\": 1}",
                "FFN-looking tensors found: model.layers.0.mlp.gate_proj.weight [16, 8]");
        st_case(&c, "cfg_negative_size", &v,
                "{\"model_type\": \"llama\", \"hidden_size\": -8, \"intermediate_size\": 16, "
                "\"num_hidden_layers\": 1}",
                "hidden_size is not an integer");
        st_case(&c, "cfg_deep", &v,
                "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]"
                "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                "nested deeper than 64");
        st_case(&c, "cfg_mismatch_d", &v,
                "{\"model_type\": \"llama\", \"hidden_size\": 9, \"intermediate_size\": 16, "
                "\"num_hidden_layers\": 1}",
                "expected [16, 9]");
        st_case(&c, "cfg_too_many_layers", &v,
                "{\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\": 16, "
                "\"num_hidden_layers\": 2}",
                "missing tensor 'model.layers.1.mlp.down_proj.weight'");
        free(b.p), free(v.p);
    }
    // GGUF
    struct gknobs k;
    struct buf g = {0};
#define GCASE(name, expect, ...)         \
    do {                                 \
        k = gk();                        \
        __VA_ARGS__;                     \
        g.len = 0;                       \
        gguf_tiny(&g, &k);               \
        gguf_case(&c, name, &g, expect); \
    } while (0)
    GCASE("gguf_huge_tensor_count", "tensors cannot fit", k.n_t = UINT64_C(1) << 62);
    GCASE("gguf_huge_kv_count", "metadata entries cannot fit", k.n_kv = UINT64_MAX);
    GCASE("gguf_huge_string", "length runs past the end", k.key_len = UINT64_C(1) << 62);
    GCASE("gguf_huge_array", "array length runs past the end", k.arr_len = UINT64_C(1) << 61);
    GCASE("gguf_too_many_dims", "has 5 dimensions; 1 to 4 allowed", k.n_dims = 5);
    GCASE("gguf_unknown_type", "unknown ggml type 99", k.type = 99);
    GCASE("gguf_q4_k", "ggml type Q4_K (12), which ffn does not read", k.type = 12);
    GCASE("gguf_offset_past_end", "(truncated file?)", k.offset = 1 << 20);
    GCASE("gguf_misaligned", "is not a multiple of the alignment", k.offset = 4);
    GCASE("gguf_overlap", "overlaps", k.offset = 4096);
    GCASE("gguf_bad_alignment", "general.alignment must be a power of two", k.alignment = 3);
    GCASE("gguf_deep_arrays", "arrays nested too deep", k.nest = 20);
    GCASE("gguf_duplicate_key", "duplicate metadata key 'llama.block_count'", k.dup_key = true);
    GCASE("gguf_truncated_header", "truncated", k.truncate = 20);
    GCASE("gguf_truncated_data", "(truncated file?)", k.truncate = 600);
    GCASE("gguf_version_1", "version 1 is not supported", k.version = 1);
    GCASE("gguf_big_endian", "big-endian", k.version = 0x03000000u);
    GCASE("gguf_no_ffn_length", "no llama.feed_forward_length", k.ffn_len_missing = true);
#undef GCASE
    free(g.p);
    fclose(c.list);
    return 0;
}

// --- fuzz seed corpus ------------------------------------------------------------------------

static int cmd_corpus(int argc, char **argv) {
    if (argc < 3) return fail("usage: corpus OUT_DIR");
    const char *root = argv[2];
    mkdirs(root);
    char *sd = join(root, "safetensors"), *gd = join(root, "gguf"), *cd = join(root, "config");
    mkdirs(sd), mkdirs(gd), mkdirs(cd);
    struct {
        const char *name, *header;
        size_t data;
        uint64_t len;
    } sts[] = {
        {"valid_llama", k_llama_header, 1536, 0},
        {"valid_meta",
         "{\"__metadata__\":{\"format\":\"pt\"},\"x\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_"
         "offsets\":[0,12]}}",
         12, 0},
        {"valid_empty", "{}", 0, 0},
        {"valid_zero_size",
         "{\"a\":{\"dtype\":\"F16\",\"shape\":[0,7],\"data_offsets\":[0,0]},\"b\":{\"dtype\":"
         "\"I8\",\"shape\":[3],\"data_offsets\":[0,3]}}",
         3, 0},
        {"len_huge", k_llama_header, 1536, UINT64_C(1) << 63},
        {"overlap",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},\"b\":{\"dtype\":"
         "\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
         24, 0},
        {"overflow",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,16]}}",
         16, 0},
        {"dup",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, 0},
        {"escapes", "{\"\\u00e9\\n\\\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
         1, 0},
    };
    for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) {
        struct buf b = {0};
        st_image(&b, sts[i].header, sts[i].data, sts[i].len);
        char *p = join(sd, sts[i].name);
        save(p, b.p, b.len);
        free(p), free(b.p);
    }
    {
        struct buf b = {0};
        put_u64(&b, 2001);
        put(&b, "{", 1);
        for (int i = 0; i < 2000; i++) put(&b, "[", 1);
        char *p = join(sd, "deep");
        save(p, b.p, b.len);
        free(p), free(b.p);
    }
    struct {
        const char *name;
        struct gknobs k;
    } gs[] = {
        {"valid", gk()}, {"nested", gk()}, {"huge_count", gk()},
        {"q4k", gk()},   {"dims5", gk()},  {"truncated", gk()},
    };
    gs[1].k.nest = 3;
    gs[2].k.n_t = UINT64_C(1) << 62;
    gs[3].k.type = 12;
    gs[4].k.n_dims = 5;
    gs[5].k.truncate = 300;
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        struct buf b = {0};
        gguf_tiny(&b, &gs[i].k);
        char *p = join(gd, gs[i].name);
        save(p, b.p, b.len);
        free(p), free(b.p);
    }
    const char *cfgs[][2] = {
        {"llama",
         "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":172,\"num_hidden_"
         "layers\":2,\"hidden_act\":\"silu\"}"},
        {"gpt2",
         "{\"model_type\":\"gpt2\",\"n_embd\":64,\"n_inner\":null,\"n_layer\":2,\"activation_"
         "function\":\"gelu_new\"}"},
        {"t5",
         "{\"model_type\":\"t5\",\"d_model\":64,\"d_ff\":172,\"num_layers\":2,\"feed_forward_"
         "proj\":\"gated-gelu\"}"},
        {"gemma",
         "{\"model_type\":\"gemma\",\"hidden_size\":64,\"intermediate_size\":172,\"num_hidden_"
         "layers\":2,\"hidden_act\":\"gelu\"}"},
        {"gemma3",
         "{\"model_type\":\"gemma3\",\"text_config\":{\"hidden_size\":64,\"intermediate_size\":172,"
         "\"num_hidden_layers\":2}}"},
        {"mixtral",
         "{\"model_type\":\"mixtral\",\"hidden_size\":64,\"intermediate_size\":172,\"num_hidden_"
         "layers\":2,\"num_local_experts\":8}"},
        {"bad_act",
         "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":172,\"num_hidden_"
         "layers\":2,\"hidden_act\":\"x\"}"},
        {"no_m", "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2}"},
        {"float_size",
         "{\"model_type\":\"llama\",\"hidden_size\":6.5e3,\"intermediate_size\":1e300,\"num_hidden_"
         "layers\":2}"},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        char *p = join(cd, cfgs[i][0]);
        save(p, cfgs[i][1], strlen(cfgs[i][1]));
        free(p);
    }
    free(sd), free(gd), free(cd);
    return 0;
}

// cmp A NAME_A B NAME_B TOL: max|a - b| ≤ TOL · max|b| and the shapes agree.
static int cmd_cmp(int argc, char **argv) {
    if (argc < 7) return fail("usage: cmp A NAME_A B NAME_B TOL");
    ffn_ctx_t ctx;
    ffn_ctx_create(NULL, &ctx);
    ffn_safetensors_t a, b;
    struct ffn_file_tensor ta, tb;
    if (ffn_safetensors_open(ctx, argv[2], &a) || ffn_safetensors_find(ctx, a, argv[3], &ta) ||
        ffn_safetensors_open(ctx, argv[4], &b) || ffn_safetensors_find(ctx, b, argv[5], &tb))
        return fail(ffn_ctx_last_error(ctx));
    const int64_t n = ffn_file_tensor_numel(&ta);
    if (n != ffn_file_tensor_numel(&tb) || ta.n_dims != tb.n_dims) return fail("shapes differ");
    float *va = to_f32(ctx, &ta), *vb = to_f32(ctx, &tb);
    double max_d = 0, max_b = 0;
    int64_t worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs((double)va[i] - vb[i]);
        if (!(d <= max_d)) max_d = d, worst = i;
        max_b = fmax(max_b, fabs((double)vb[i]));
    }
    const double tol = strtod(argv[6], NULL);
    const bool ok = max_d <= tol * max_b;
    printf(
        "cmp: %lld values, max abs diff %.3g at %lld (got %.9g, expected %.9g), max|ref| %.3g: "
        "%s\n",
        (long long)n, max_d, (long long)worst, va[worst], vb[worst], max_b, ok ? "ok" : "FAIL");
    free(va), free(vb);
    ffn_safetensors_close(a), ffn_safetensors_close(b);
    ffn_ctx_destroy(ctx);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "cmp")) return cmd_cmp(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "gguf")) return cmd_gguf(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "mutate")) return cmd_mutate(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "hostile")) return cmd_hostile(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "corpus")) return cmd_corpus(argc, argv);
    return fail("usage: io_testgen gguf|mutate|hostile|corpus ...");
}
