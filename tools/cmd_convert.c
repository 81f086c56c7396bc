// cmd_convert.c — `ffn convert`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_convert(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn convert: not available in this build yet\n");
    return 2;
}
