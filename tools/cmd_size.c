// cmd_size.c — `ffn size`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_size(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn size: not available in this build yet\n");
    return 2;
}
