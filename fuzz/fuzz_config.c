// fuzz_config.c — libFuzzer harness for the Hugging Face config.json reader (hostile JSON checks,
// architecture table, activation names).
#include <stdint.h>
#include <stdlib.h>

#include "ffn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ffn_ctx_t ctx;
    if (!ctx && ffn_ctx_create(NULL, &ctx)) abort();
    struct ffn_hf_config c;
    if (ffn_hf_config_parse(ctx, (const char *)data, size, &c) == FFN_STATUS_OK) {
        // What a config yields must be usable as sizes: positive and bounded.
        if (c.d_model < 1 || c.d_ff < 1 || c.n_layers < 1 || c.n_experts < 0) abort();
    } else {
        // Messages quote the file (model_type, keys, names): never a raw control character.
        for (const unsigned char *p = (const unsigned char *)ffn_ctx_last_error(ctx); *p; p++)
            if (*p < 0x20 || *p == 0x7f) abort();
    }
    return 0;
}
