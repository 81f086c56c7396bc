// ulp_cli.c — the command-line pieces both `ffn ulp` tools share (ulp_cli.h).
#include "ulp_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "oracle.h"
#include "tools.h"

void ffn_ulp_sel_init(struct ffn_ulp_sel *s) {
    *s = (struct ffn_ulp_sel){.fwd = true, .bwd = true, .stride = FFN_ULP_DEFAULT_STRIDE};
}

int ffn_ulp_sel_option(struct ffn_ulp_sel *s, int argc, char **argv, int *i) {
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--accurate")) {
        s->accurate = true;
        return 1;
    } else if (!strcmp(a, "--all")) {
        s->all = true;
        return 1;
    } else if (!strcmp(a, "--json")) {
        s->json = true;
        return 1;
    } else if (!strncmp(a, "--backend=", 10)) {
        return 1;  // read by ffn_tool_backend
    }
    if (!v) return 0;
    if (!strcmp(a, "--op")) {
        enum ffn_act act;
        bool gated;
        if (!ffn_tool_op_from_name(v, &act, &gated)) {
            fprintf(stderr, "ffn ulp: unknown op '%s'\n", v);
            return -1;
        }
        (gated ? s->glu : s->act)[act] = true;
        s->any_op = true;
    } else if (!strcmp(a, "--dir")) {
        if (strcmp(v, "fwd") && strcmp(v, "bwd")) {
            fprintf(stderr, "ffn ulp: --dir takes fwd or bwd, not '%s'\n", v);
            return -1;
        }
        s->fwd = !strcmp(v, "fwd");
        s->bwd = !s->fwd;
    } else if (!strcmp(a, "--dtype")) {
        enum ffn_dtype dt;
        if (ffn_dtype_from_name(v, &dt) != FFN_STATUS_OK) {
            fprintf(stderr, "ffn ulp: unknown dtype '%s'\n", v);
            return -1;
        }
        s->dtype[dt] = s->any_dtype = true;
    } else if (!strcmp(a, "--stride")) {
        int64_t stride;
        if (!ffn_arg_i64("ulp", a, v, 1, UINT32_MAX, &stride)) return -1;
        s->stride = (uint32_t)stride;
    } else if (!strcmp(a, "--backend")) {
        // read by ffn_tool_backend
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

void ffn_ulp_sel_finish(struct ffn_ulp_sel *s) {
    if (!s->any_op)
        for (int k = 0; k < FFN_ACT_COUNT; k++) s->act[k] = s->glu[k] = true;
    if (!s->any_dtype)
        for (int k = 0; k < FFN_DTYPE_COUNT; k++) s->dtype[k] = true;
}

float *ffn_ulp_f32_list(uint32_t stride, int64_t *n) {
    const int64_t ns = ffn_inputs_strided(NULL, 0, stride, 0), nh = ffn_inputs_hard(NULL, 0);
    float *list = malloc((size_t)(ns + nh) * sizeof *list);
    *n = list ? ns + nh : 0;
    if (list) {
        ffn_inputs_strided(list, ns, stride, 0);
        ffn_inputs_hard(list + ns, nh);
    }
    return list;
}

const char *ffn_ulp_out_name(enum ffn_op op, int o) {
    static const char *const names[FFN_OP_COUNT][2] = {
        {"y", ""}, {"dx", ""}, {"h", ""}, {"dgate", "dup"}};
    return names[op][o];
}

void ffn_ulp_print_columns(void) {
    printf("%-12s %-4s %-6s %-5s %-22s %11s %10s %9s %7s %16s %6s\n", "op", "dir", "out", "dtype",
           "isa", "n_inputs", "max_ulp", "mean_ulp", "cr%", "x_at_max", "bound");
}

void ffn_ulp_json_float(double v) {
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

void ffn_ulp_print_verdict(int status) {
    printf("%s\n", status ? "ffn ulp: some kernels exceed their bound (FAIL rows)"
                          : "ffn ulp: every kernel within its bound");
}
