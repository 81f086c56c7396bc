// cmd_run.c — `ffn run`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_run(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn run: not available in this build yet\n");
    return 2;
}
