// tools.h — the subcommands of the `ffn` tool, one file each (cmd_<name>.c). Each returns the
// process exit status: 0 success, 1 a check failed, 2 bad input or usage.
#ifndef FFN_TOOLS_H
#define FFN_TOOLS_H

int ffn_cmd_check(int argc, char **argv);        // special values and a quick self-check
int ffn_cmd_ulp(int argc, char **argv);          // accuracy sweep against MPFR
int ffn_cmd_bench_act(int argc, char **argv);    // activation kernel benchmark
int ffn_cmd_bench_block(int argc, char **argv);  // FFN block benchmark
int ffn_cmd_size(int argc, char **argv);         // sizing helper: params, FLOPs, intensity
int ffn_cmd_info(int argc, char **argv);         // describe a checkpoint's FFNs
int ffn_cmd_run(int argc, char **argv);          // run one layer's FFN on an input
int ffn_cmd_verify(int argc, char **argv);       // check against reference outputs/gradients
int ffn_cmd_convert(int argc, char **argv);      // rewrite FFN weights in another layout/dtype
int ffn_cmd_shard(int argc, char **argv);        // split FFN weights for tensor-parallel ranks
int ffn_cmd_bench_tp(int argc, char **argv);     // `bench block --tp P`: TP block benchmark

#endif  // FFN_TOOLS_H
