// main.c — the `ffn` command-line tool: subcommand dispatch. The tool is the only code that
// turns a status into an exit code: 0 success, 1 a check failed, 2 bad input or usage.
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "ffn.h"
#include "tools.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} ffn__cmds[] = {
    {"check", ffn_cmd_check, "special values and a quick accuracy self-check"},
    {"ulp", ffn_cmd_ulp, "accuracy sweep against MPFR (max/mean ulp per op, dtype, ISA)"},
    {"bench", NULL, "benchmarks: `ffn bench act` (kernels), `ffn bench block` (FFN blocks)"},
    {"size", ffn_cmd_size, "FFN sizing: parameters, FLOPs, bytes, arithmetic intensity"},
    {"info", ffn_cmd_info, "describe the FFN layers of a checkpoint"},
    {"run", ffn_cmd_run, "run one layer's FFN on an input tensor"},
    {"verify", ffn_cmd_verify, "verify a checkpoint against reference outputs and gradients"},
    {"convert", ffn_cmd_convert, "rewrite FFN weights in another layout or dtype"},
    {"shard", ffn_cmd_shard, "split FFN weights for tensor-parallel ranks (--tp P)"},
};

static void ffn__usage(FILE *f) {
    fprintf(f, "usage: ffn <command> [options]   (ffn <command> --help for each)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof ffn__cmds / sizeof ffn__cmds[0]; i++)
        fprintf(f, "  %-8s %s\n", ffn__cmds[i].name, ffn__cmds[i].help);
    fprintf(f, "\nffn %d.%d.%d\n", FFN_VERSION_MAJOR, FFN_VERSION_MINOR, FFN_VERSION_PATCH);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        ffn__usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        ffn__usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "bench")) {
        if (argc >= 3 && !strcmp(argv[2], "act")) return ffn_cmd_bench_act(argc - 2, argv + 2);
        if (argc >= 3 && !strcmp(argv[2], "block")) return ffn_cmd_bench_block(argc - 2, argv + 2);
        const bool help = argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
        if (argc >= 3 && !help)
            fprintf(stderr, "ffn bench: unknown benchmark '%s'\n", ffn_tool_esc(argv[2]));
        fprintf(help ? stdout : stderr,
                "usage: ffn bench act|block [options]   (ffn bench act --help, ffn bench block "
                "--help)\n\n"
                "  act    throughput of the activation kernels (GB/s, ratio to a triad)\n"
                "  block  FFN blocks forward and backward (GFLOP/s), or a fixture's accuracy\n");
        return help ? 0 : 2;
    }
    for (size_t i = 0; i < sizeof ffn__cmds / sizeof ffn__cmds[0]; i++)
        if (ffn__cmds[i].run && !strcmp(argv[1], ffn__cmds[i].name))
            return ffn__cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ffn: unknown command '%s'\n", ffn_tool_esc(argv[1]));
    ffn__usage(stderr);
    return 2;
}
