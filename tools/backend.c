// backend.c — the tool's `--backend cpu|cuda` option, shared by the subcommands that have a GPU
// path (`ffn ulp`, `ffn bench act`), and the stand-ins for the CUDA subcommands in a build
// without the CUDA backend (tools/cuda/ has the real ones).
#include <stdio.h>
#include <string.h>

#include "ffn.h"
#include "tools.h"

int ffn_tool_backend(int argc, char **argv, const char *cmd, enum ffn_backend *backend) {
    *backend = FFN_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--backend"))
            v = i + 1 < argc ? argv[i + 1] : "";
        else if (!strncmp(argv[i], "--backend=", 10))
            v = argv[i] + 10;
        if (!v) continue;
        if (ffn_backend_from_name(v, backend) != FFN_STATUS_OK) {
            fprintf(stderr, "%s: --backend takes cpu or cuda, not '%s'\n", cmd, v);
            return 2;
        }
    }
    return 0;
}

#ifndef FFN_HAVE_CUDA
static int ffn__no_cuda(const char *cmd) {
    char why[256];
    ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why);
    fprintf(stderr, "%s --backend cuda: %s\n", cmd, why);
    return 2;
}
int ffn_cmd_ulp_cuda(int argc, char **argv) {
    (void)argc, (void)argv;
    return ffn__no_cuda("ffn ulp");
}
int ffn_cmd_bench_act_cuda(int argc, char **argv) {
    (void)argc, (void)argv;
    return ffn__no_cuda("ffn bench act");
}
#endif
