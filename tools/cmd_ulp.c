// cmd_ulp.c — `ffn ulp`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_ulp(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn ulp: not available in this build yet\n");
    return 2;
}
