// main.c — the `ffn` command-line tool: subcommand dispatch. The only code that turns a status
// into an exit code: 0 success, 1 a check failed, 2 bad input or usage.
#include <stdio.h>
#include <string.h>

#include "ffn.h"

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: ffn <command> [options]\n");
        return argc < 2 ? 2 : 0;
    }
    fprintf(stderr, "ffn: unknown command '%s'\n", argv[1]);
    return 2;
}
