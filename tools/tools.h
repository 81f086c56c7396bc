// tools.h — the subcommands of the `ffn` tool, one file each (cmd_<name>.c). Each returns the
// process exit status: 0 success, 1 a check failed, 2 bad input or usage.
#ifndef FFN_TOOLS_H
#define FFN_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ffn.h"

#ifndef FFN_ARRAY_LEN
#    define FFN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#endif

// Seconds on the monotonic clock (for intervals).
static inline double ffn_tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Element i of a buffer of `dt`, as f32; f32 v stored into it rounded to nearest even.
static inline float ffn_tool_load_f32(const void *p, enum ffn_dtype dt, int64_t i) {
    switch (dt) {
    case FFN_DTYPE_BF16: return ffn_bf16_to_f32(((const uint16_t *)p)[i]);
    case FFN_DTYPE_F16: return ffn_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}
static inline void ffn_tool_store_f32(void *p, enum ffn_dtype dt, int64_t i, float v) {
    switch (dt) {
    case FFN_DTYPE_BF16: ((uint16_t *)p)[i] = ffn_f32_to_bf16(v); break;
    case FFN_DTYPE_F16: ((uint16_t *)p)[i] = ffn_f32_to_f16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

// The CPU: "model name, family F model M" of the first processor in /proc/cpuinfo (family and
// model tell apart CPUs whose model name is only a brand, "AMD EPYC": Zen 4 is family 25, Zen 5
// 26), "unknown CPU" without one; its "cpu MHz" in *mhz (0 when absent) unless mhz is NULL
// (tools/host.c).
void ffn_tool_cpu_name(char *buf, size_t cap, double *mhz);

// bytes of zeroed memory (free() frees it), touched before any timing so that page faults are
// never measured. huge: 2 MiB aligned, the size rounded up to 2 MiB, and advised onto transparent
// huge pages before the first touch (a hint: the kernel may still use 4 KiB pages;
// ffn_tool_huge_kib says how much it gave). With 4 KiB pages every 4 KiB of each stream costs a
// TLB miss and restarts the hardware prefetchers (tools/host.c).
void *ffn_tool_alloc_touched(size_t bytes, bool huge);

// Bytes of the last-level cache one core reaches: the highest level in
// /sys/devices/system/cpu/cpu0/cache (one instance: an AMD CCX's L3, not the package's sum that
// sysconf(_SC_LEVEL3_CACHE_SIZE) gives there), else sysconf's, else 64 MiB (tools/host.c).
size_t ffn_tool_llc_bytes(void);

// KiB of this process's anonymous memory on huge pages (/proc/self/smaps_rollup), -1 if unknown
// (tools/host.c).
long ffn_tool_huge_kib(void);

// The CPU's arithmetic peak for GEMMs of dtype dt (f32 or bf16) on `threads` threads at once, in
// GFLOP/s: the issue rate of the multiply-add instruction oneDNN's kernels for dt are made of
// (AMX tdpbf16ps, vdpbf16ps, vfmadd231ps), measured; *instr names it. 0 where none applies
// (tools/peak.c).
double ffn_tool_peak_gflops(enum ffn_dtype dt, int threads, const char **instr);

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

// The GPU paths of `ffn ulp` and `ffn bench act` (tools/cuda/; stand-ins in tools/backend.c for a
// build without CUDA, which say so and return 2).
int ffn_cmd_ulp_cuda(int argc, char **argv);
int ffn_cmd_bench_act_cuda(int argc, char **argv);
// Finds `--backend cpu|cuda` (or --backend=...) in argv: 0 with *backend set (CPU when absent),
// or 2 after a message on stderr for a bad value.
int ffn_tool_backend(int argc, char **argv, const char *cmd, enum ffn_backend *backend);

// The activation ops as the CPU and GPU paths of `ffn ulp` and `ffn bench act` name and call them
// (tools/backend.c). An op is an activation `act` in a form: plain or gated (glu), forward or
// backward (bwd).
// An activation's name (silu) or a gated op's (swiglu): *act, and *gated for the second; false
// when it is neither.
bool ffn_tool_op_from_name(const char *name, enum ffn_act *act, bool *gated);
// The tensors the call writes (*n_out: 1, 2 for a gated backward) and reads (*n_in: 1 to 3).
void ffn_tool_act_arity(bool glu, bool bwd, int *n_out, int *n_in);
// The op's entry point on out[0..n_out), in[0..n_in) in its argument order (ffn_act_forward:
// y, x; ffn_act_backward: dx, x, dy; ffn_glu_forward: h, gate, up; ffn_glu_backward: dgate, dup,
// gate, up, dh).
enum ffn_status ffn_tool_act_call(ffn_ctx_t ctx, enum ffn_act act, bool glu, bool bwd,
                                  const struct ffn_tensor out[2], const struct ffn_tensor in[3]);
// `--dir fwd|bwd|all` of `ffn <cmd>`: false after "ffn <cmd>: --dir must be fwd, bwd or all
// (got 'v')" on stderr.
bool ffn_tool_dir_all(const char *cmd, const char *v, bool *fwd, bool *bwd);
// Which forms run, per activation k, from the activations chosen (sel), the ones chosen by a gated
// name (glu_only: only the gated form) and --unary / --glu / --both (want_unary, want_glu).
void ffn_tool_act_forms(const bool sel[FFN_ACT_COUNT], const bool glu_only[FFN_ACT_COUNT],
                        bool want_unary, bool want_glu, bool unary[FFN_ACT_COUNT],
                        bool glu[FFN_ACT_COUNT]);

#endif  // FFN_TOOLS_H
