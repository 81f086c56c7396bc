// cmd_bench_act.c — `ffn bench act`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_bench_act(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn bench act: not available in this build yet\n");
    return 2;
}
