// cmd_verify.c — `ffn verify`: not written yet (placeholder so the tool links).
#include <stdio.h>

#include "tools.h"

int ffn_cmd_verify(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "ffn verify: not available in this build yet\n");
    return 2;
}
