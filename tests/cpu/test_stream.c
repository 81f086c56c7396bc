// test_stream.c — the streaming bodies of the SIMD kernels (non-temporal stores, interleaved
// sub-ranges: ffn_stream_ways) give bitwise the results of the plain bodies. A call that touches
// more than the streaming threshold (48 MiB) is compared with the same op run piece by piece in
// calls small enough to stay plain, for every op kind, f32 and bf16, 1, 2 and 3 threads, on
// views that start off vector alignment (so the masked head runs) and end in a tail, with the
// two outputs of the gated backward aligned differently (one streamed, one stored plainly).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define FFN__N ((int64_t)13000007)     // bf16 act forward: 4 B an element, 52 MB > 48 MiB
#define FFN__PIECE ((int64_t)1000003)  // ≤ 20 B an element: 20 MB, below the threshold
#define FFN__SEED 0x57ea3ull

static const int ffn__threads[] = {1, 2, 3};
static const enum ffn_act ffn__acts[] = {FFN_ACT_SILU, FFN_ACT_GELU_ERF};

enum { FFN__FWD, FFN__BWD, FFN__GLU_FWD, FFN__GLU_BWD, FFN__KINDS };
static const char *const ffn__kind_names[] = {"act fwd", "act bwd", "glu fwd", "glu bwd"};

// Runs kind on elements [off, off + n) of the buffers (element offsets into each).
static enum ffn_status ffn__call(ffn_ctx_t ctx, int kind, enum ffn_act act, enum ffn_dtype dt,
                                 char *const *o, char *const *in, int64_t off, int64_t n) {
    const size_t es = ffn_dtype_size(dt);
    struct ffn_tensor t_o[2], t_i[3];
    for (int k = 0; k < 2; k++) t_o[k] = ffn_tensor_vec(o[k] + off * (int64_t)es, dt, n);
    for (int k = 0; k < 3; k++) t_i[k] = ffn_tensor_vec(in[k] + off * (int64_t)es, dt, n);
    switch (kind) {
    case FFN__FWD: return ffn_act_forward(ctx, act, &t_o[0], &t_i[0]);
    case FFN__BWD: return ffn_act_backward(ctx, act, &t_o[0], &t_i[0], &t_i[1]);
    case FFN__GLU_FWD: return ffn_glu_forward(ctx, act, &t_o[0], &t_i[0], &t_i[1]);
    default: return ffn_glu_backward(ctx, act, &t_o[0], &t_o[1], &t_i[0], &t_i[1], &t_i[2]);
    }
}

int main(void) {
    ffn_check_begin("stream");
    struct ffn_test_ctx c[FFN_TEST_MAX_CTX];
    const int nc = ffn_test_contexts(c, false);
    uint64_t seed = FFN__SEED;
    printf("seed %#llx, n %lld\n", (unsigned long long)seed, (long long)FFN__N);

    // Element offsets from 64-byte aligned allocations: inputs 1, outputs 3 and 0 (dgate off
    // alignment, dup on it), so heads are masked and the second output is not streamed; for bf16
    // dup at 19, 32 bytes from dgate: streamed 16 elements at a time but not as the 64-byte
    // stores of the bf16 pairs (src/cpu/simd/loops.h, ffn__body).
    const int64_t in_off = 1, out_offs[2][2] = {{3, 0}, {3, 19}};
    const size_t bytes = (size_t)(FFN__N + 32) * 4;
    char *in[3], *o[2], *ref[2];
    for (int k = 0; k < 3; k++) in[k] = ffn_test_alloc(bytes);
    for (int k = 0; k < 2; k++) o[k] = ffn_test_alloc(bytes), ref[k] = ffn_test_alloc(bytes);

    for (int di = 0; di < 2; di++) {
        const enum ffn_dtype dt = di ? FFN_DTYPE_BF16 : FFN_DTYPE_F32;
        const size_t es = ffn_dtype_size(dt);
        const int64_t *out_off = out_offs[di];
        for (int k = 0; k < 3; k++)
            for (int64_t i = 0; i < FFN__N + 16; i++)
                ffn_test_set(in[k], dt, i, (float)ffn_test_uniform(&seed, k ? -3.0 : -8.0, 8.0));
        char *ins[3], *outs[2], *refs[2];
        for (int k = 0; k < 3; k++) ins[k] = in[k] + in_off * (int64_t)es;
        for (int k = 0; k < 2; k++) {
            outs[k] = o[k] + out_off[k] * (int64_t)es;
            refs[k] = ref[k] + out_off[k] * (int64_t)es;
        }
        for (int ci = 0; ci < nc; ci++) {
            if (c[ci].isa == FFN_ISA_SCALAR) continue;  // the reference never streams
            for (size_t ai = 0; ai < sizeof ffn__acts / sizeof ffn__acts[0]; ai++)
                for (int kind = 0; kind < FFN__KINDS; kind++) {
                    const enum ffn_act act = ffn__acts[ai];
                    const int n_out = kind == FFN__GLU_BWD ? 2 : 1;
                    ffn_ctx_set_threads(c[ci].ctx, 1);
                    bool ok = true;
                    for (int64_t p = 0; p < FFN__N && ok; p += FFN__PIECE) {
                        const int64_t m = FFN__N - p < FFN__PIECE ? FFN__N - p : FFN__PIECE;
                        ok = ffn__call(c[ci].ctx, kind, act, dt, refs, ins, p, m) == FFN_STATUS_OK;
                    }
                    CHECK(ok, "[%s] %s %s %s: piecewise call failed: %s", c[ci].label,
                          ffn_act_name(act), ffn__kind_names[kind], ffn_dtype_name(dt),
                          ffn_ctx_last_error(c[ci].ctx));
                    for (size_t ti = 0; ti < sizeof ffn__threads / sizeof ffn__threads[0]; ti++) {
                        const int t = ffn__threads[ti];
                        ffn_ctx_set_threads(c[ci].ctx, t);
                        for (int k = 0; k < n_out; k++) memset(outs[k], 0x5a, (size_t)FFN__N * es);
                        const enum ffn_status st =
                            ffn__call(c[ci].ctx, kind, act, dt, outs, ins, 0, FFN__N);
                        bool same = st == FFN_STATUS_OK;
                        for (int k = 0; k < n_out && same; k++)
                            same = !memcmp(outs[k], refs[k], (size_t)FFN__N * es);
                        CHECK(same,
                              "[%s] %s %s %s, %d threads: the streamed call differs "
                              "from the piecewise one (status %s)",
                              c[ci].label, ffn_act_name(act), ffn__kind_names[kind],
                              ffn_dtype_name(dt), t, ffn_status_string(st));
                    }
                    ffn_ctx_set_threads(c[ci].ctx, 1);
                }
        }
    }
    for (int k = 0; k < 3; k++) free(in[k]);
    for (int k = 0; k < 2; k++) free(o[k]), free(ref[k]);
    ffn_test_contexts_free(c, nc);
    return ffn_check_summary();
}
