// cmd_info.c — `ffn info`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_info(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn info: not available in this build yet\n");
    return 2;
}
