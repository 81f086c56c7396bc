// ulp_cli.h — what `ffn ulp` on the CPU (cmd_ulp.c) and on the GPU (cuda/ulp_cuda.c) share on the
// command line: the selection of ops, directions and dtypes with the options that set it, the f32
// input set, the table's columns, the JSON rows' numbers and the closing verdict line.
#ifndef FFN_TOOL_ULP_CLI_H
#define FFN_TOOL_ULP_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ffn.h"

#define FFN_ULP_DEFAULT_STRIDE 4093u  // f32 sweep: every 4093rd bit pattern (1,049,345)

// The rows a sweep covers and the options of both tools.
struct ffn_ulp_sel {
    bool act[FFN_ACT_COUNT], glu[FFN_ACT_COUNT], any_op;
    bool fwd, bwd;
    bool dtype[FFN_DTYPE_COUNT], any_dtype;
    bool accurate, all, json;
    uint32_t stride;
};

// Both directions, the default stride, nothing chosen yet.
void ffn_ulp_sel_init(struct ffn_ulp_sel *s);
// Takes argv[*i] when it is one of the shared options (--op, --dir, --dtype, --stride,
// --accurate, --all, --json, --backend; *i advanced past its value): 1. Not one of them, or one
// without its value: 0. A bad value: -1, after a line on stderr.
int ffn_ulp_sel_option(struct ffn_ulp_sel *s, int argc, char **argv, int *i);
// No --op: every activation and gated op; no --dtype: every dtype.
void ffn_ulp_sel_finish(struct ffn_ulp_sel *s);

// The f32 input set without --all: every stride-th bit pattern, then the hard regions
// (oracle.h); malloc'ed, *n its length. NULL when out of memory.
float *ffn_ulp_f32_list(uint32_t stride, int64_t *n);

// "y", "dx", "h", "dgate" / "dup": the name of output o of op.
const char *ffn_ulp_out_name(enum ffn_op op, int o);
// The table's column line.
void ffn_ulp_print_columns(void);
// A JSON number, or "nan" / "inf" / "-inf" as a string.
void ffn_ulp_json_float(double v);
// The closing line of the table (status 0: all within their bounds, 1: not).
void ffn_ulp_print_verdict(int status);

#endif  // FFN_TOOL_ULP_CLI_H
