// fuzz_safetensors.c — libFuzzer harness for the safetensors reader: any bytes, opened from
// memory (every header rule applies), every tensor visited and converted to f32.
#include <stdint.h>
#include <stdlib.h>

#include "ffn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ffn_ctx_t ctx;
    if (!ctx && ffn_ctx_create(NULL, &ctx)) abort();
    ffn_safetensors_t st;
    if (ffn_safetensors_open_memory(ctx, data, size, "fuzz", &st) != FFN_STATUS_OK) {
        // Messages quote tensor names and keys: never a raw control character.
        for (const unsigned char *p = (const unsigned char *)ffn_ctx_last_error(ctx); *p; p++)
            if (*p < 0x20 || *p == 0x7f) abort();
        return 0;
    }
    for (int64_t i = 0; i < ffn_safetensors_count(st); i++) {
        struct ffn_file_tensor t, u;
        if (ffn_safetensors_get(NULL, st, i, &t) != FFN_STATUS_OK) continue;
        if (ffn_safetensors_find(NULL, st, t.name, &u) != FFN_STATUS_OK) abort();  // must agree
        const int64_t n = ffn_file_tensor_numel(&t);
        if (n < 0 || n > (1 << 20)) continue;
        float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        if (v) ffn_file_tensor_to_f32(NULL, v, n, &t);
        free(v);
    }
    for (int64_t i = 0; i < ffn_safetensors_metadata_count(st); i++)
        (void)ffn_safetensors_metadata(st, ffn_safetensors_metadata_key(st, i));
    ffn_safetensors_close(st);
    return 0;
}
