// cmd_check.c — `ffn check`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_check(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn check: not available in this build yet\n");
    return 2;
}
