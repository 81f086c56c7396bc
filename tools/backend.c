// backend.c — the tool's `--backend cpu|cuda` option, shared by the subcommands that have a GPU
// path (`ffn ulp`, `ffn bench act`), the activation ops as both paths name and call them, and the
// stand-ins for the CUDA subcommands in a build without the CUDA backend (tools/cuda/ has the real
// ones).
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

bool ffn_tool_op_from_name(const char *name, enum ffn_act *act, bool *gated) {
    *gated = false;
    if (ffn_act_from_name(name, act) == FFN_STATUS_OK) return true;
    for (int k = 0; k < FFN_ACT_COUNT; k++)
        if (!strcmp(name, ffn_glu_name((enum ffn_act)k))) {
            *act = (enum ffn_act)k;
            *gated = true;
            return true;
        }
    return false;
}

void ffn_tool_act_arity(bool glu, bool bwd, int *n_out, int *n_in) {
    *n_out = glu && bwd ? 2 : 1;
    *n_in = glu ? (bwd ? 3 : 2) : (bwd ? 2 : 1);
}

enum ffn_status ffn_tool_act_call(ffn_ctx_t ctx, enum ffn_act act, bool glu, bool bwd,
                                  const struct ffn_tensor out[2], const struct ffn_tensor in[3]) {
    if (!glu && !bwd) return ffn_act_forward(ctx, act, &out[0], &in[0]);
    if (!glu) return ffn_act_backward(ctx, act, &out[0], &in[0], &in[1]);
    if (!bwd) return ffn_glu_forward(ctx, act, &out[0], &in[0], &in[1]);
    return ffn_glu_backward(ctx, act, &out[0], &out[1], &in[0], &in[1], &in[2]);
}

bool ffn_tool_dir_all(const char *cmd, const char *v, bool *fwd, bool *bwd) {
    *fwd = !strcmp(v, "fwd") || !strcmp(v, "all");
    *bwd = !strcmp(v, "bwd") || !strcmp(v, "all");
    if (*fwd || *bwd) return true;
    fprintf(stderr, "ffn %s: --dir must be fwd, bwd or all (got '%s')\n", cmd, v);
    return false;
}

void ffn_tool_act_forms(const bool sel[FFN_ACT_COUNT], const bool glu_only[FFN_ACT_COUNT],
                        bool want_unary, bool want_glu, bool unary[FFN_ACT_COUNT],
                        bool glu[FFN_ACT_COUNT]) {
    for (int k = 0; k < FFN_ACT_COUNT; k++) {
        unary[k] = sel[k] && want_unary && !glu_only[k];
        glu[k] = sel[k] && (want_glu || glu_only[k]);
    }
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
