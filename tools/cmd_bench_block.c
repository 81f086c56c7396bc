// cmd_bench_block.c — `ffn bench block`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_bench_block(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn bench block: not available in this build yet\n");
    return 2;
}
