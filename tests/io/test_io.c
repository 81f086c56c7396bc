// test_io.c — unit tests of the io layer: safetensors reader rules and writer (against cJSON and
// hand-built byte images), sharded checkpoints, the GGUF reader (every value type, nested
// arrays, reversed dims, alignment), Q8_0 / Q4_0 dequantisation against hand-computed values,
// and the Hugging Face config maps of every supported architecture.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ffn.h"

// --- byte images -------------------------------------------------------------------------------

struct img {
    uint8_t p[1 << 19];  // room for the 200,000-deep JSON header
    size_t n;
};

static void b_put(struct img *b, const void *s, size_t n) {
    if (b->n + n > sizeof b->p) {
        fprintf(stderr, "test_io: image buffer too small\n");
        exit(1);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void b_u32(struct img *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b->p[b->n++] = (uint8_t)(v >> (8 * i));
}
static void b_u64(struct img *b, uint64_t v) {
    for (int i = 0; i < 8; i++) b->p[b->n++] = (uint8_t)(v >> (8 * i));
}
static void b_str(struct img *b, const char *s) {
    b_u64(b, strlen(s));
    b_put(b, s, strlen(s));
}

static void st_img(struct img *b, const char *header, size_t data_len) {
    b->n = 0;
    b_u64(b, strlen(header));
    b_put(b, header, strlen(header));
    for (size_t i = 0; i < data_len; i++) b->p[b->n++] = (uint8_t)(i * 7);
}

// Opens an in-memory safetensors image; returns the status and (on success) closes it.
static enum ffn_status st_try(ffn_ctx_t ctx, const char *header, size_t data_len) {
    static struct img b;
    st_img(&b, header, data_len);
    ffn_safetensors_t st;
    const enum ffn_status s = ffn_safetensors_open_memory(ctx, b.p, b.n, "t", &st);
    if (!s) ffn_safetensors_close(st);
    return s;
}

// --- safetensors: the reference implementation's rules ----------------------------------------

static void test_st_rules(ffn_ctx_t ctx) {
    const struct {
        const char *header;
        size_t data;
        enum ffn_status want;
        const char *msg;  // substring of the message (bad cases)
    } cases[] = {
        {"{}", 0, FFN_STATUS_OK, ""},
        {"{}    ", 0, FFN_STATUS_OK, ""},  // padding spaces
        {"{\"__metadata__\":{\"a\":\"b\"}}", 0, FFN_STATUS_OK, ""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, FFN_STATUS_OK,
         ""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},\"b\":{\"dtype\":\"U8\","
         "\"shape\":[],\"data_offsets\":[0,1]}}",
         1, FFN_STATUS_OK, ""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 20,
         FFN_STATUS_BAD_FORMAT, "tensors end at byte 16"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 12,
         FFN_STATUS_BAD_FORMAT, "holds 12"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", 16,
         FFN_STATUS_BAD_FORMAT, "span 16"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
         FFN_STATUS_BAD_FORMAT, "hole"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, FFN_STATUS_BAD_FORMAT, "overlaps"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, FFN_STATUS_BAD_FORMAT, "duplicate key"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[65536,65536,65536,65536],\"data_offsets\":[0,4]}}",
         4, FFN_STATUS_BAD_FORMAT, "overflows"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4,
         FFN_STATUS_BAD_FORMAT, "non-negative integer"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4,
         FFN_STATUS_BAD_FORMAT, "non-negative integer"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, FFN_STATUS_BAD_FORMAT,
         "two non-negative"},
        {"{\"a\":{\"dtype\":\"X\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, FFN_STATUS_BAD_FORMAT,
         "unknown or unsupported dtype"},
        {"{\"a\":{\"dtype\":\"Q8_0\",\"shape\":[32],\"data_offsets\":[0,34]}}", 34,
         FFN_STATUS_BAD_FORMAT, "unknown or unsupported dtype"},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, FFN_STATUS_BAD_FORMAT,
         "needs \"dtype\""},
        {"{\"a\":5}", 0, FFN_STATUS_BAD_FORMAT, "not an object"},
        {"{\"__metadata__\":{\"a\":1}}", 0, FFN_STATUS_BAD_FORMAT, "not a string"},
        {" [] ", 0, FFN_STATUS_BAD_FORMAT, "does not start with '{'"},
        {"{} x", 0, FFN_STATUS_BAD_FORMAT, "trailing"},
        {"{\"a\xc0\x80\":1}", 0, FFN_STATUS_BAD_FORMAT, "invalid UTF-8"},     // overlong NUL
        {"{\"\xed\xa0\x80\":1}", 0, FFN_STATUS_BAD_FORMAT, "invalid UTF-8"},  // surrogate
        {"{\"a\tb\":1}", 0, FFN_STATUS_BAD_FORMAT, "control character"},
        {"{\"a\\u0000b\":1}", 0, FFN_STATUS_BAD_FORMAT, "\\u0000"},
        {"{\"a\":", 0, FFN_STATUS_BAD_FORMAT, "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const enum ffn_status s = st_try(ctx, cases[i].header, cases[i].data);
        CHECK(s == cases[i].want, "case %zu (%s): status %d, expected %d (%s)", i, cases[i].header,
              (int)s, (int)cases[i].want, ffn_ctx_last_error(ctx));
        if (s && s == cases[i].want)
            CHECK(strstr(ffn_ctx_last_error(ctx), cases[i].msg),
                  "case %zu: message '%s' lacks '%s'", i, ffn_ctx_last_error(ctx), cases[i].msg);
    }
    // Header length: 2^63, past the end, and a file shorter than the length itself.
    static struct img b;
    b.n = 0;
    b_u64(&b, UINT64_C(1) << 63);
    b_put(&b, "{}", 2);
    ffn_safetensors_t st;
    CHECK(ffn_safetensors_open_memory(ctx, b.p, b.n, "t", &st) == FFN_STATUS_BAD_FORMAT &&
              strstr(ffn_ctx_last_error(ctx), "100 MB"),
          "2^63 header: %s", ffn_ctx_last_error(ctx));
    b.n = 0;
    b_u64(&b, 3);
    b_put(&b, "{}", 2);
    CHECK(ffn_safetensors_open_memory(ctx, b.p, b.n, "t", &st) == FFN_STATUS_BAD_FORMAT &&
              strstr(ffn_ctx_last_error(ctx), "past the end"),
          "short header: %s", ffn_ctx_last_error(ctx));
    CHECK(ffn_safetensors_open_memory(ctx, b.p, 5, "t", &st) == FFN_STATUS_BAD_FORMAT,
          "5-byte file");
    // 200,000 nested arrays: a clean error, no deep recursion.
    static char deep[200010];
    deep[0] = '{';
    memset(deep + 1, '[', 200000);
    deep[200001] = '\0';
    CHECK(
        st_try(ctx, deep, 0) == FFN_STATUS_BAD_FORMAT && strstr(ffn_ctx_last_error(ctx), "deeper"),
        "deep JSON: %s", ffn_ctx_last_error(ctx));
}

// --- safetensors: writer and reader agree, and the header is what the reference writes -------

static void test_st_roundtrip(ffn_ctx_t ctx, const char *dir) {
    float a[6] = {1, -2, 3.5f, 0, -0.0f, 1e-30f};
    uint16_t h[3] = {0x3c00, 0xc000, 0x7e00};
    int8_t c[5] = {-128, -1, 0, 1, 127};
    struct ffn_file_tensor ts[4] = {
        {.name = "w.a",
         .dtype = FFN_FILE_DTYPE_F32,
         .n_dims = 2,
         .shape = {2, 3},
         .data = a,
         .nbytes = sizeof a},
        {.name = "q\"uote\\\n",
         .dtype = FFN_FILE_DTYPE_F16,
         .n_dims = 1,
         .shape = {3},
         .data = h,
         .nbytes = sizeof h},
        {.name = "empty",
         .dtype = FFN_FILE_DTYPE_BF16,
         .n_dims = 2,
         .shape = {0, 4},
         .data = NULL,
         .nbytes = 0},
        {.name = "i8",
         .dtype = FFN_FILE_DTYPE_I8,
         .n_dims = 1,
         .shape = {5},
         .data = c,
         .nbytes = sizeof c},
    };
    const struct ffn_safetensors_kv meta[] = {{"format", "pt"}, {"note", "é \"q\""}};
    char path[512];
    snprintf(path, sizeof path, "%s/rt.safetensors", dir);
    CHECK(ffn_safetensors_write(ctx, path, ts, 4, meta, 2) == FFN_STATUS_OK, "write: %s",
          ffn_ctx_last_error(ctx));
    // Independent view of the bytes: length prefix, padding, JSON by cJSON.
    FILE *f = fopen(path, "rb");
    static uint8_t raw[4096];
    const size_t n = f ? fread(raw, 1, sizeof raw, f) : 0;
    if (f) fclose(f);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = (hl << 8) | raw[i];
    CHECK(hl % 8 == 0 && 8 + hl + sizeof a + sizeof h + sizeof c == n,
          "header length %llu, file %zu", (unsigned long long)hl, n);
    CHECK(raw[8 + hl - 1] == ' ' || raw[8 + hl - 1] == '}', "padding byte 0x%02x", raw[8 + hl - 1]);
    cJSON *root = cJSON_ParseWithLength((const char *)raw + 8, hl);
    CHECK(root != NULL, "cJSON cannot parse the header");
    if (root) {
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "q\"uote\\\n");
        const cJSON *off = q ? cJSON_GetObjectItemCaseSensitive(q, "data_offsets") : NULL;
        CHECK(off && cJSON_GetArrayItem(off, 0)->valuedouble == 24 &&
                  cJSON_GetArrayItem(off, 1)->valuedouble == 30,
              "offsets of the escaped name");
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
        CHECK(md && !strcmp(cJSON_GetObjectItemCaseSensitive(md, "note")->valuestring, "é \"q\""),
              "metadata");
        cJSON_Delete(root);
    }
    ffn_safetensors_t st;
    CHECK(ffn_safetensors_open(ctx, path, &st) == FFN_STATUS_OK, "open: %s",
          ffn_ctx_last_error(ctx));
    if (!ffn_check_failures()) {
        CHECK(ffn_safetensors_count(st) == 4, "count %lld", (long long)ffn_safetensors_count(st));
        CHECK(!strcmp(ffn_safetensors_metadata(st, "note"), "é \"q\"") &&
                  !ffn_safetensors_metadata(st, "x"),
              "metadata");
        for (int i = 0; i < 4; i++) {
            struct ffn_file_tensor t;
            CHECK(ffn_safetensors_find(ctx, st, ts[i].name, &t) == FFN_STATUS_OK, "find %s",
                  ts[i].name);
            CHECK(t.dtype == ts[i].dtype && t.n_dims == ts[i].n_dims && t.nbytes == ts[i].nbytes &&
                      t.shape[0] == ts[i].shape[0] &&
                      (!t.nbytes || !memcmp(t.data, ts[i].data, t.nbytes)),
                  "tensor %s differs after the round trip", ts[i].name);
        }
        struct ffn_file_tensor t;
        CHECK(ffn_safetensors_find(ctx, st, "nope", &t) == FFN_STATUS_NOT_FOUND, "missing name");
        float back[6];
        ffn_safetensors_find(ctx, st, "w.a", &t);
        CHECK(
            ffn_file_tensor_to_f32(ctx, back, 6, &t) == FFN_STATUS_OK && !memcmp(back, a, sizeof a),
            "to_f32 F32");
        float hb[3];
        ffn_safetensors_find(ctx, st, "q\"uote\\\n", &t);
        ffn_file_tensor_to_f32(ctx, hb, 3, &t);
        CHECK(hb[0] == 1.0f && hb[1] == -2.0f && isnan(hb[2]), "to_f32 F16: %g %g %g", hb[0], hb[1],
              hb[2]);
        ffn_safetensors_close(st);
    }
    // The writer refuses what the reader would refuse.
    struct ffn_file_tensor dup[2] = {ts[0], ts[0]};
    CHECK(ffn_safetensors_write(ctx, path, dup, 2, NULL, 0) == FFN_STATUS_INVALID_ARG,
          "duplicate names written");
    struct ffn_file_tensor bad = ts[0];
    bad.nbytes = 20;
    CHECK(ffn_safetensors_write(ctx, path, &bad, 1, NULL, 0) == FFN_STATUS_INVALID_ARG,
          "nbytes mismatch written");
}

// --- sharded checkpoints --------------------------------------------------------------------

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

static void test_sharded(ffn_ctx_t ctx, const char *dir) {
    char sub[512], p[600];
    snprintf(sub, sizeof sub, "%s/sharded", dir);
    mkdir(sub, 0777);
    float a[2] = {1, 2}, b[3] = {3, 4, 5};
    struct ffn_file_tensor ta = {.name = "a",
                                 .dtype = FFN_FILE_DTYPE_F32,
                                 .n_dims = 1,
                                 .shape = {2},
                                 .data = a,
                                 .nbytes = 8};
    struct ffn_file_tensor tb = {.name = "b",
                                 .dtype = FFN_FILE_DTYPE_F32,
                                 .n_dims = 1,
                                 .shape = {3},
                                 .data = b,
                                 .nbytes = 12};
    snprintf(p, sizeof p, "%s/m-1.safetensors", sub);
    ffn_safetensors_write(ctx, p, &ta, 1, NULL, 0);
    snprintf(p, sizeof p, "%s/m-2.safetensors", sub);
    ffn_safetensors_write(ctx, p, &tb, 1, NULL, 0);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", sub);
    write_text(p,
               "{\"metadata\":{\"total_size\":20},\"weight_map\":{\"a\":\"m-1.safetensors\",\"b\":"
               "\"m-2.safetensors\"}}");
    ffn_safetensors_t st;
    CHECK(ffn_safetensors_open(ctx, sub, &st) == FFN_STATUS_OK, "sharded open: %s",
          ffn_ctx_last_error(ctx));
    if (!ffn_check_failures()) {
        struct ffn_file_tensor t;
        CHECK(ffn_safetensors_count(st) == 2 && ffn_safetensors_shard_count(st) == 2, "shards");
        CHECK(!ffn_safetensors_find(ctx, st, "b", &t) && !memcmp(t.data, b, 12),
              "tensor b from shard 2");
        ffn_safetensors_close(st);
    }
    write_text(p, "{\"weight_map\":{\"a\":\"m-2.safetensors\",\"b\":\"m-2.safetensors\"}}");
    CHECK(ffn_safetensors_open(ctx, sub, &st) != FFN_STATUS_OK &&
              strstr(ffn_ctx_last_error(ctx), "does not hold it"),
          "wrong shard accepted: %s", ffn_ctx_last_error(ctx));
    write_text(p, "{\"weight_map\":{\"a\":\"../m-1.safetensors\"}}");
    CHECK(ffn_safetensors_open(ctx, sub, &st) == FFN_STATUS_BAD_FORMAT, "path traversal accepted");
    write_text(p, "{\"weight_map\":{\"a\":\"m-1.safetensors\",\"c\":\"m-3.safetensors\"}}");
    CHECK(ffn_safetensors_open(ctx, sub, &st) == FFN_STATUS_NOT_FOUND, "missing shard: %s",
          ffn_ctx_last_error(ctx));
    snprintf(p, sizeof p, "%s/m-2.safetensors", sub);
    ffn_safetensors_write(ctx, p, &ta, 1, NULL, 0);  // 'a' in both shards
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", sub);
    write_text(p, "{\"weight_map\":{\"a\":\"m-1.safetensors\",\"x\":\"m-2.safetensors\"}}");
    CHECK(ffn_safetensors_open(ctx, sub, &st) == FFN_STATUS_BAD_FORMAT &&
              strstr(ffn_ctx_last_error(ctx), "more than one shard"),
          "duplicate across shards: %s", ffn_ctx_last_error(ctx));
}

// --- GGUF ------------------------------------------------------------------------------------

static void test_gguf(ffn_ctx_t ctx) {
    static struct img b;
    b.n = 0;
    b_put(&b, "GGUF", 4);
    b_u32(&b, 3);
    b_u64(&b, 2);   // tensors
    b_u64(&b, 16);  // key-values: one of each scalar type, a string, arrays, the alignment
    const uint8_t u8 = 200, i8 = (uint8_t)-5, bo = 1;
    b_str(&b, "k.u8"), b_u32(&b, 0), b_put(&b, &u8, 1);
    b_str(&b, "k.i8"), b_u32(&b, 1), b_put(&b, &i8, 1);
    b_str(&b, "k.u16"), b_u32(&b, 2), b_put(&b, "\x34\x12", 2);
    b_str(&b, "k.i16"), b_u32(&b, 3), b_put(&b, "\xfe\xff", 2);
    b_str(&b, "k.u32"), b_u32(&b, 4), b_u32(&b, 4000000000u);
    b_str(&b, "k.i32"), b_u32(&b, 5), b_u32(&b, (uint32_t)-7);
    const float f = 1.5f;
    b_str(&b, "k.f32"), b_u32(&b, 6), b_put(&b, &f, 4);
    b_str(&b, "k.bool"), b_u32(&b, 7), b_put(&b, &bo, 1);
    b_str(&b, "k.str"), b_u32(&b, 8), b_str(&b, "héllo");
    b_str(&b, "k.u64"), b_u32(&b, 10), b_u64(&b, UINT64_C(1) << 40);
    b_str(&b, "k.i64"), b_u32(&b, 11), b_u64(&b, (uint64_t)INT64_C(-3));
    const double dd = -2.25;
    b_str(&b, "k.f64"), b_u32(&b, 12), b_put(&b, &dd, 8);
    b_str(&b, "k.arr_i32"), b_u32(&b, 9), b_u32(&b, 5), b_u64(&b, 3), b_u32(&b, 1), b_u32(&b, 2),
        b_u32(&b, 3);
    b_str(&b, "k.arr_str"), b_u32(&b, 9), b_u32(&b, 8), b_u64(&b, 2), b_str(&b, "ab"),
        b_str(&b, "cde");
    b_str(&b, "k.nested"), b_u32(&b, 9), b_u32(&b, 9), b_u64(&b, 2);  // [[10], ["x", "y"]]
    b_u32(&b, 5), b_u64(&b, 1), b_u32(&b, 10);
    b_u32(&b, 8), b_u64(&b, 2), b_str(&b, "x"), b_str(&b, "y");
    b_str(&b, "general.alignment"), b_u32(&b, 4), b_u32(&b, 64);
    // Tensors: an F32 {3, 2} (HF [2, 3]) and a Q8_0 {32} (one block), offsets 0 and 64.
    b_str(&b, "w"), b_u32(&b, 2), b_u64(&b, 3), b_u64(&b, 2), b_u32(&b, 0), b_u64(&b, 0);
    b_str(&b, "q"), b_u32(&b, 1), b_u64(&b, 32), b_u32(&b, 8), b_u64(&b, 64);
    while (b.n % 64) b.p[b.n++] = 0;
    const size_t data_off = b.n;
    const float w[6] = {1, 2, 3, 4, 5, 6};
    b_put(&b, w, sizeof w);
    while ((b.n - data_off) % 64) b.p[b.n++] = 0;
    b_put(&b, "\x00\x38", 2);  // f16 0.5
    for (int i = 0; i < 32; i++) b.p[b.n++] = (uint8_t)(int8_t)(i - 16);
    ffn_gguf_t g;
    CHECK(ffn_gguf_open_memory(ctx, b.p, b.n, "g", &g) == FFN_STATUS_OK, "gguf open: %s",
          ffn_ctx_last_error(ctx));
    if (ffn_check_failures()) return;
    CHECK(ffn_gguf_version(g) == 3 && ffn_gguf_alignment(g) == 64 &&
              ffn_gguf_data_offset(g) == data_off,
          "alignment %llu, data offset %zu (expected %zu)",
          (unsigned long long)ffn_gguf_alignment(g), ffn_gguf_data_offset(g), data_off);
    const struct {
        const char *key;
        int64_t i;
    } ints[] = {{"k.u8", 200},
                {"k.i8", -5},
                {"k.u16", 0x1234},
                {"k.i16", -2},
                {"k.u32", 4000000000LL},
                {"k.i32", -7},
                {"k.bool", 1},
                {"k.u64", INT64_C(1) << 40},
                {"k.i64", -3}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        struct ffn_gguf_value v;
        int64_t x = 0;
        CHECK(!ffn_gguf_kv_find(ctx, g, ints[i].key, &v) && !ffn_gguf_value_int(ctx, &v, &x) &&
                  x == ints[i].i,
              "%s = %lld, expected %lld", ints[i].key, (long long)x, (long long)ints[i].i);
    }
    struct ffn_gguf_value v, e, e2;
    double x;
    ffn_gguf_kv_find(ctx, g, "k.f32", &v);
    CHECK(!ffn_gguf_value_float(ctx, &v, &x) && x == 1.5, "f32 %g", x);
    ffn_gguf_kv_find(ctx, g, "k.f64", &v);
    CHECK(!ffn_gguf_value_float(ctx, &v, &x) && x == -2.25, "f64 %g", x);
    CHECK(ffn_gguf_value_int(ctx, &v, &(int64_t){0}) == FFN_STATUS_INVALID_ARG,
          "a float read as int");
    const char *s;
    size_t sl;
    ffn_gguf_kv_find(ctx, g, "k.str", &v);
    CHECK(!ffn_gguf_value_string(ctx, &v, &s, &sl) && sl == 6 && !memcmp(s, "héllo", 6), "string");
    ffn_gguf_kv_find(ctx, g, "k.arr_i32", &v);
    int64_t xi = 0;
    CHECK(v.n == 3 && !ffn_gguf_value_element(ctx, &v, 2, &e) &&
              !ffn_gguf_value_int(ctx, &e, &xi) && xi == 3,
          "int array");
    CHECK(ffn_gguf_value_element(ctx, &v, 3, &e) == FFN_STATUS_INVALID_ARG, "index past the end");
    ffn_gguf_kv_find(ctx, g, "k.arr_str", &v);
    CHECK(!ffn_gguf_value_element(ctx, &v, 1, &e) && !ffn_gguf_value_string(ctx, &e, &s, &sl) &&
              sl == 3 && !memcmp(s, "cde", 3),
          "string array");
    ffn_gguf_kv_find(ctx, g, "k.nested", &v);
    CHECK(!ffn_gguf_value_element(ctx, &v, 1, &e) && e.type == FFN_GGUF_TYPE_ARRAY && e.n == 2 &&
              !ffn_gguf_value_element(ctx, &e, 1, &e2) &&
              !ffn_gguf_value_string(ctx, &e2, &s, &sl) && sl == 1 && s[0] == 'y',
          "nested array");
    struct ffn_file_tensor t;
    CHECK(!ffn_gguf_find(ctx, g, "w", &t) && t.n_dims == 2 && t.shape[0] == 2 && t.shape[1] == 3 &&
              (const uint8_t *)t.data == b.p + data_off && !memcmp(t.data, w, 24),
          "tensor w: dims reversed to [2, 3], data at the data offset");
    float q[32];
    CHECK(!ffn_gguf_find(ctx, g, "q", &t) && t.dtype == FFN_FILE_DTYPE_Q8_0 && t.nbytes == 34 &&
              !ffn_file_tensor_to_f32(ctx, q, 32, &t),
          "Q8_0 tensor");
    for (int i = 0; i < 32; i++)
        CHECK(q[i] == 0.5f * (float)(i - 16), "Q8_0[%d] = %g, expected %g", i, q[i],
              0.5 * (i - 16));
    ffn_gguf_close(g);
    // Version 2 has the same layout (64-bit counts): it opens too.
    b.p[4] = 2;
    CHECK(ffn_gguf_open_memory(ctx, b.p, b.n, "g", &g) == FFN_STATUS_OK && ffn_gguf_version(g) == 2,
          "GGUF v2: %s", ffn_ctx_last_error(ctx));
    ffn_gguf_close(g);
    b.p[4] = 3;
    // Reading one byte short anywhere must fail cleanly (every length checked).
    for (size_t cut = 0; cut < data_off; cut += 7) {
        ffn_gguf_t g2;
        CHECK(ffn_gguf_open_memory(ctx, b.p, cut, "g", &g2) != FFN_STATUS_OK,
              "truncated at %zu accepted", cut);
    }
}

static void test_q4_0(ffn_ctx_t ctx) {
    // One Q4_0 block: d = -0.25 (f16 0xb400), nibbles: low = i % 16, high = 15 - i % 16.
    uint8_t blk[18] = {0x00, 0xb4};
    for (int i = 0; i < 16; i++) blk[2 + i] = (uint8_t)((i & 15) | ((15 - i) << 4));
    struct ffn_file_tensor t = {.name = "q4",
                                .dtype = FFN_FILE_DTYPE_Q4_0,
                                .n_dims = 1,
                                .shape = {32},
                                .data = blk,
                                .nbytes = 18};
    float v[32];
    CHECK(!ffn_file_tensor_to_f32(ctx, v, 32, &t), "Q4_0: %s", ffn_ctx_last_error(ctx));
    for (int i = 0; i < 16; i++) {
        CHECK(v[i] == -0.25f * (float)(i - 8), "Q4_0 low [%d] = %g, expected %g", i, v[i],
              -0.25 * (i - 8));
        CHECK(v[16 + i] == -0.25f * (float)(7 - i), "Q4_0 high [%d] = %g, expected %g", 16 + i,
              v[16 + i], -0.25 * (7 - i));
    }
    t.shape[0] = 31;  // not whole blocks
    CHECK(ffn_file_tensor_to_f32(ctx, v, 31, &t) == FFN_STATUS_INVALID_ARG,
          "partial block accepted");
}

// --- Hugging Face configs -------------------------------------------------------------------

static void test_configs(ffn_ctx_t ctx) {
    const struct {
        const char *json;
        int64_t d, m, layers, experts;
        enum ffn_act act;
        bool gated, fused, in_out, note;
    } ok[] = {
        {"{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_"
         "layers\":32,\"hidden_act\":\"silu\"}",
         4096, 11008, 32, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"mistral\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"mixtral\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"num_local_experts\":8}",
         8, 16, 1, 8, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"qwen2\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"swish\"}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"qwen3\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"gemma\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"gelu\"}",
         8, 16, 1, 0, FFN_ACT_GELU_TANH, true, false, false, true},
        {"{\"model_type\":\"gemma\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"gelu\",\"hidden_activation\":null}",
         8, 16, 1, 0, FFN_ACT_GELU_TANH, true, false, false, true},
        {"{\"model_type\":\"gemma2\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_activation\":\"gelu_pytorch_tanh\"}",
         8, 16, 1, 0, FFN_ACT_GELU_TANH, true, false, false, false},
        {"{\"model_type\":\"gemma3\",\"text_config\":{\"hidden_size\":8,\"intermediate_size\":16,"
         "\"num_hidden_layers\":3}}",
         8, 16, 3, 0, FFN_ACT_GELU_TANH, true, false, false, false},
        {"{\"model_type\":\"gemma3_text\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_GELU_TANH, true, false, false, false},
        {"{\"model_type\":\"phi3\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, true, false, false},
        {"{\"model_type\":\"gpt2\",\"n_embd\":8,\"n_inner\":null,\"n_layer\":2}", 8, 32, 2, 0,
         FFN_ACT_GELU_TANH, false, false, true, false},
        {"{\"model_type\":\"gpt2\",\"n_embd\":8,\"n_inner\":20,\"n_layer\":2,\"activation_"
         "function\":\"gelu\"}",
         8, 20, 2, 0, FFN_ACT_GELU_ERF, false, false, true, false},
        {"{\"model_type\":\"gptj\",\"n_embd\":8,\"n_layer\":2,\"activation_function\":\"gelu_"
         "fast\"}",
         8, 32, 2, 0, FFN_ACT_GELU_TANH, false, false, false, false},
        {"{\"model_type\":\"gpt_neox\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"gelu\"}",
         8, 16, 1, 0, FFN_ACT_GELU_ERF, false, false, false, false},
        {"{\"model_type\":\"falcon\",\"hidden_size\":8,\"ffn_hidden_size\":null,\"num_hidden_"
         "layers\":1}",
         8, 32, 1, 0, FFN_ACT_GELU_ERF, false, false, false, false},
        {"{\"model_type\":\"starcoder2\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"gelu_pytorch_tanh\"}",
         8, 16, 1, 0, FFN_ACT_GELU_TANH, false, false, false, false},
        {"{\"model_type\":\"olmo\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"olmo2\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"stablelm\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"granite\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         8, 16, 1, 0, FFN_ACT_SILU, true, false, false, false},
        {"{\"model_type\":\"t5\",\"d_model\":8,\"d_ff\":16,\"num_layers\":2,\"feed_forward_proj\":"
         "\"gated-gelu\"}",
         8, 16, 2, 0, FFN_ACT_GELU_TANH, true, false, false, false},
        {"{\"model_type\":\"t5\",\"d_model\":8,\"d_ff\":16,\"num_layers\":2,\"feed_forward_proj\":"
         "\"gelu\"}",
         8, 16, 2, 0, FFN_ACT_GELU_ERF, false, false, false, false},
        {"{\"model_type\":\"t5\",\"d_model\":8,\"d_ff\":16,\"num_layers\":2}", 8, 16, 2, 0,
         FFN_ACT_RELU, false, false, false, false},
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"quick_gelu\"}",
         8, 16, 1, 0, FFN_ACT_QUICK_GELU, true, false, false, false},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct ffn_hf_config c;
        const enum ffn_status s = ffn_hf_config_parse(ctx, ok[i].json, strlen(ok[i].json), &c);
        CHECK(s == FFN_STATUS_OK, "config %zu: %s", i, ffn_ctx_last_error(ctx));
        if (s) continue;
        CHECK(c.d_model == ok[i].d && c.d_ff == ok[i].m && c.n_layers == ok[i].layers &&
                  c.n_experts == ok[i].experts && c.act == ok[i].act && c.gated == ok[i].gated &&
                  c.fused_gate_up == ok[i].fused && c.in_out == ok[i].in_out &&
                  (c.note[0] != 0) == ok[i].note,
              "config %zu (%s): d %lld m %lld L %lld E %lld act %s gated %d fused %d in_out %d "
              "note '%s'",
              i, ok[i].json, (long long)c.d_model, (long long)c.d_ff, (long long)c.n_layers,
              (long long)c.n_experts, ffn_act_name(c.act), c.gated, c.fused_gate_up, c.in_out,
              c.note);
    }
    const struct {
        const char *json, *msg;
        enum ffn_status want;
    } bad[] = {
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":1}",
         "no intermediate size", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":\"gelu_10\"}",
         "\"gelu_10\" is not an activation", FFN_STATUS_UNSUPPORTED},
        {"{\"model_type\":\"rwkv\",\"hidden_size\":8}", "unknown architecture",
         FFN_STATUS_UNSUPPORTED},
        {"{\"hidden_size\":8}", "model_type", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":0,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         "hidden_size is not an integer", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":8.5,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         "hidden_size is not an integer", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"intermediate_size\":1e300,\"num_hidden_"
         "layers\":1}",
         "intermediate_size is not an integer", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"mixtral\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1}",
         "no expert count", FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"hidden_size\":9}", "duplicate key",
         FFN_STATUS_BAD_FORMAT},
        {"{\"model_type\":\"llama\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_"
         "layers\":1,\"hidden_act\":3}",
         "not a string", FFN_STATUS_BAD_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ffn_hf_config c;
        const enum ffn_status s = ffn_hf_config_parse(ctx, bad[i].json, strlen(bad[i].json), &c);
        CHECK(s == bad[i].want && strstr(ffn_ctx_last_error(ctx), bad[i].msg),
              "bad config %zu: status %d (want %d), message '%s' (want '%s')", i, (int)s,
              (int)bad[i].want, ffn_ctx_last_error(ctx), bad[i].msg);
    }
}

static void test_small_dtypes(ffn_ctx_t ctx) {
    // F8 E4M3: 0x38 = 1.0, 0x7e = 448, 0x7f = NaN, 0x01 = 2^-9; E5M2: 0x3c = 1.0.
    const uint8_t e4[4] = {0x38, 0x7e, 0x7f, 0x81}, e5[2] = {0x3c, 0xc0};
    struct ffn_file_tensor t = {.name = "f8",
                                .dtype = FFN_FILE_DTYPE_F8_E4M3,
                                .n_dims = 1,
                                .shape = {4},
                                .data = e4,
                                .nbytes = 4};
    float v[4];
    CHECK(!ffn_file_tensor_to_f32(ctx, v, 4, &t) && v[0] == 1.0f && v[1] == 448.0f && isnan(v[2]) &&
              v[3] == -0x1p-9f,
          "E4M3: %g %g %g %g", v[0], v[1], v[2], v[3]);
    t.dtype = FFN_FILE_DTYPE_F8_E5M2, t.shape[0] = 2, t.data = e5, t.nbytes = 2;
    CHECK(!ffn_file_tensor_to_f32(ctx, v, 2, &t) && v[0] == 1.0f && v[1] == -2.0f, "E5M2: %g %g",
          v[0], v[1]);
    enum ffn_file_dtype fd;
    CHECK(!ffn_file_dtype_from_name("BF16", &fd) && fd == FFN_FILE_DTYPE_BF16 &&
              !strcmp(ffn_file_dtype_name(FFN_FILE_DTYPE_Q8_0), "Q8_0"),
          "dtype names");
}

int main(void) {
    ffn_check_begin("test_io");
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 1;
    char dir[] = "/tmp/ffn_test_io_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_st_rules(ctx);
    test_st_roundtrip(ctx, dir);
    test_sharded(ctx, dir);
    test_gguf(ctx);
    test_q4_0(ctx);
    test_configs(ctx);
    test_small_dtypes(ctx);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    ffn_ctx_destroy(ctx);
    return ffn_check_summary();
}
