// skinny_gemm.c — the skinny GEMM with weights contiguous in n ("ab", row-major [K][N]: the
// backward's dh = dy·W_down and dx = dP·W of nn.Linear weights) against oneDNN's matmul on the
// same operands (its slow layout, what a block would run otherwise) and on the weights stored
// transposed (its fast layout), one thread, caches flushed before every call, the three timed in
// turn in each repetition (docs/blocks.md, "A few tokens: row-major weights"). Prints the median
// times and the median of each repetition's ratios.
//   build/bench_skinny_gemm M f32|bf16 [K N [reps]]     (default K 5632, N 2048, 21 reps)
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "cpu/cpu_impl.h"
#include "ffn.h"
#include "tools.h"

#define REPS_MAX 64
#define FLUSH_BYTES ((size_t)256 << 20)

static volatile char *flush_buf;

static void flush(void) {
    for (size_t i = 0; i < FLUSH_BYTES; i += 64) flush_buf[i]++;
}

struct mm {
    dnnl_primitive_t prim;
    dnnl_memory_t mem[3];
    dnnl_stream_t st;
};

// C[M, N] = A[M, K]·B[K, N], A row-major, B with strides (b0, b1), C row-major; strict f32 math.
static int mm_make(struct mm *p, dnnl_engine_t eng, dnnl_stream_t st, long M, long N, long K,
                   long b0, long b1, dnnl_data_type_t dt, void *A, void *B, void *C) {
    dnnl_memory_desc_t a, b, c;
    dnnl_dims_t da = {M, K}, db = {K, N}, dc = {M, N}, sa = {K, 1}, sb = {b0, b1}, sc = {N, 1};
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (dnnl_memory_desc_init_by_strides(&a, 2, da, dt, sa) ||
        dnnl_memory_desc_init_by_strides(&b, 2, db, dt, sb) ||
        dnnl_memory_desc_init_by_strides(&c, 2, dc, dt, sc) ||
        dnnl_matmul_desc_init(&md, &a, &b, NULL, &c) || dnnl_primitive_attr_create(&attr))
        return -1;
    dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict);
    const int bad = dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL) != dnnl_success;
    dnnl_primitive_attr_destroy(attr);
    if (bad || dnnl_primitive_create(&p->prim, pd)) return -1;
    dnnl_primitive_desc_destroy(pd);
    p->st = st;
    return dnnl_memory_create(&p->mem[0], &a, eng, A) ||
                   dnnl_memory_create(&p->mem[1], &b, eng, B) ||
                   dnnl_memory_create(&p->mem[2], &c, eng, C)
               ? -1
               : 0;
}

static double mm_time(const struct mm *p) {
    dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, p->mem[0]}, {DNNL_ARG_WEIGHTS, p->mem[1]}, {DNNL_ARG_DST, p->mem[2]}};
    flush();
    const double t0 = bench_now();
    dnnl_primitive_execute(p->prim, p->st, 3, args);
    dnnl_stream_wait(p->st);
    return bench_now() - t0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s M f32|bf16 [K N [reps]]\n", argv[0]);
        return 2;
    }
    const long M = atol(argv[1]), K = argc > 3 ? atol(argv[3]) : 5632,
               N = argc > 4 ? atol(argv[4]) : 2048;
    const int reps = argc > 5 ? atoi(argv[5]) : 21;
    const enum ffn_dtype dt = strcmp(argv[2], "bf16") ? FFN_DTYPE_F32 : FFN_DTYPE_BF16;
    if (M < 1 || K < 1 || N < 1 || reps < 1 || reps > REPS_MAX) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    omp_set_num_threads(1);  // oneDNN's primitives run on the caller's OpenMP thread count
    const dnnl_data_type_t ddt = dt == FFN_DTYPE_F32 ? dnnl_f32 : dnnl_bf16;
    flush_buf = malloc(FLUSH_BYTES);
    const size_t es = ffn_dtype_size(dt);
    void *A = malloc((size_t)(M * K) * es), *B = malloc((size_t)(K * N) * es),
         *C = malloc((size_t)(M * N) * es);
    if (!flush_buf || !A || !B || !C) return 1;
    memset((void *)flush_buf, 1, FLUSH_BYTES);
    for (long i = 0; i < M * K; i++) ffn_store_f32(A, dt, i, (float)(i % 7) * 0.125f - 0.375f);
    for (long i = 0; i < K * N; i++) ffn_store_f32(B, dt, i, (float)(i % 11) * 0.0625f - 0.3f);
    ffn_ctx_t ctx;
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.n_threads = 1;
    if (ffn_ctx_create(&o, &ctx)) return 1;
    dnnl_engine_t eng;
    dnnl_stream_t st;
    struct mm slow, fast;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) ||
        dnnl_stream_create(&st, eng, dnnl_stream_default_flags) ||
        mm_make(&slow, eng, st, M, N, K, N, 1, ddt, A, B, C) ||
        mm_make(&fast, eng, st, M, N, K, 1, K, ddt, A, B, C)) {
        fprintf(stderr, "oneDNN refused the matmul\n");
        return 1;
    }
    const struct ffn_cpu_mat a = {A, dt, K, 1}, b = {B, dt, N, 1}, c = {C, dt, N, 1};
    double ts[REPS_MAX], to[REPS_MAX], tf[REPS_MAX], r_slow[REPS_MAX], r_fast[REPS_MAX];
    bool done = false;
    for (int r = 0; r < reps; r++) {
        flush();
        const double t0 = bench_now();
        ffn_cpu_gemm_skinny(ctx, "bench", M, N, K, &a, &b, &c, NULL, false, &done);
        ts[r] = bench_now() - t0;
        to[r] = mm_time(&slow), tf[r] = mm_time(&fast);
        r_slow[r] = to[r] / ts[r], r_fast[r] = tf[r] / ts[r];
    }
    if (!done) {
        fprintf(stderr, "the skinny GEMM did not take M = %ld (see $FFN_BLOCK_SKINNY_AB_ROWS)\n",
                M);
        return 1;
    }
    char cpu[256];
    ffn_tool_cpu_name(cpu, sizeof cpu, NULL);
    const double s = bench_median(ts, reps);
    printf(
        "%s, one thread: M %ld %s K %ld N %ld: skinny %.3f ms (%.1f GB/s of weights, %.0f "
        "GFLOP/s); oneDNN [K][N] %.3f ms, [N][K] %.3f ms; speed-up %.2f / %.2f\n",
        cpu, M, ffn_dtype_name(dt), K, N, s * 1e3, (double)(K * N) * (double)es / s * 1e-9,
        2.0 * (double)(M * N * K) / s * 1e-9, bench_median(to, reps) * 1e3,
        bench_median(tf, reps) * 1e3, bench_median(r_slow, reps), bench_median(r_fast, reps));
    ffn_ctx_destroy(ctx);
    return 0;
}
