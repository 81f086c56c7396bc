// fuzz_config.c — libFuzzer harness for the Hugging Face config.json reader (hostile JSON checks,
// architecture table, activation names).
#include <stdint.h>
#include <stdlib.h>

#include "ffn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct ffn_hf_config c;
    if (ffn_hf_config_parse(NULL, (const char *)data, size, &c) == FFN_STATUS_OK) {
        // What a config yields must be usable as sizes: positive and bounded.
        if (c.d_model < 1 || c.d_ff < 1 || c.n_layers < 1 || c.n_experts < 0) abort();
    }
    return 0;
}
