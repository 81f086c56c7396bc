// fuzz_gguf.c — libFuzzer harness for the GGUF reader: any bytes, opened from memory; every
// metadata value read (arrays walked, nested ones too) and every tensor converted to f32.
#include <stdint.h>
#include <stdlib.h>

#include "ffn.h"

// Reads a value and, for arrays, a few of its elements (recursively, as deep as the file nests).
static void visit(const struct ffn_gguf_value *v, int depth) {
    int64_t i;
    double f;
    const char *s;
    size_t n;
    (void)ffn_gguf_value_int(NULL, v, &i);
    (void)ffn_gguf_value_float(NULL, v, &f);
    (void)ffn_gguf_value_string(NULL, v, &s, &n);
    if (v->type != FFN_GGUF_TYPE_ARRAY || depth > 16) return;
    for (int64_t j = 0; j < v->n && j < 4; j++) {
        struct ffn_gguf_value e;
        if (ffn_gguf_value_element(NULL, v, j, &e) == FFN_STATUS_OK) visit(&e, depth + 1);
    }
    if (v->n > 0) {
        struct ffn_gguf_value e;
        if (ffn_gguf_value_element(NULL, v, v->n - 1, &e) == FFN_STATUS_OK) visit(&e, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ffn_ctx_t ctx;
    if (!ctx && ffn_ctx_create(NULL, &ctx)) abort();
    ffn_gguf_t g;
    if (ffn_gguf_open_memory(ctx, data, size, "fuzz", &g) != FFN_STATUS_OK) {
        // Messages quote keys and tensor names (arbitrary bytes in GGUF): never a raw control.
        for (const unsigned char *p = (const unsigned char *)ffn_ctx_last_error(ctx); *p; p++)
            if (*p < 0x20 || *p == 0x7f) abort();
        return 0;
    }
    for (int64_t i = 0; i < ffn_gguf_kv_count(g); i++) {
        const char *key;
        struct ffn_gguf_value v;
        if (ffn_gguf_kv_get(NULL, g, i, &key, &v) == FFN_STATUS_OK) visit(&v, 0);
    }
    for (int64_t i = 0; i < ffn_gguf_count(g); i++) {
        struct ffn_file_tensor t, u;
        if (ffn_gguf_get(NULL, g, i, &t) != FFN_STATUS_OK) continue;
        if (ffn_gguf_find(NULL, g, t.name, &u) != FFN_STATUS_OK) abort();
        const int64_t n = ffn_file_tensor_numel(&t);
        if (n < 0 || n > (1 << 20)) continue;
        float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        if (v) ffn_file_tensor_to_f32(NULL, v, n, &t);
        free(v);
    }
    ffn_gguf_close(g);
    return 0;
}
