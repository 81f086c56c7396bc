// test_tp_nccl.c — the NCCL communicator (src/tp/comm_nccl.c) and tensor-parallel blocks on GPUs.
//   test_tp_nccl [--ranks P]
// P = 1 (default): one process and a 1-rank communicator (ncclGetUniqueId, ncclCommInitRank).
// P > 1: P processes forked before any CUDA call, rank r on device r (NCCL refuses two ranks on
// one device: P GPUs are needed), rank 0's unique id handed over through pipes. It checks:
//   - without a GPU: the refusals that need none (NULL arguments, a CPU context), then
//     "skipped: no CUDA device" (exit 77, as the CUDA tests);
//   - all-reduce sums of f32 / bf16 / f16 device buffers: P = 1 keeps every bit (NaN, inf and
//     subnormal patterns included), P > 1 sums integer data exact in every dtype; guard zones
//     untouched, odd starts, sizes from 1 element to several MiB, the context's own stream;
//     broadcasts from every root;
//   - refusals: a host pointer, a buffer shorter than n, an unknown dtype, a root out of range, a
//     CPU context, a NULL ncclComm_t, a control communicator that is not a host one, bad options;
//   - host-memory control calls: staged through the device (agreements, a 3 MiB text in pieces, a
//     host all-reduce in pieces), through a control communicator when one is given (never waiting
//     for the stream: checked against a stream held by a host function), and the timeout of a
//     wait (the same held stream), after which the communicator refuses every call;
//   - the tensor-parallel block over NCCL against the plain block on the same GPU (y, dx, every
//     gradient gathered back to the whole block's layout), f32 and bf16, plain and gated, b_down
//     on rank 0 or after the reduce, a strided y, d_ff not divisible by P, when this build has CUDA
//     blocks; until then ffn_tp_block_create must answer the block layer's FFN_STATUS_UNSUPPORTED.
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "check.h"
#include "tp/tp_impl.h"

#define SKIP FFN_CHECK_SKIP

static int g_rank, g_world = 1;
static ffn_ctx_t cpu;  // a CPU context: host conversions, plans, shards

#define CUDA(call)                                                                      \
    do {                                                                                \
        const cudaError_t e_ = (call);                                                  \
        if (e_ != cudaSuccess) {                                                        \
            printf("FAIL [rank %d] %s:%d: %s: %s\n", g_rank, __FILE__, __LINE__, #call, \
                   cudaGetErrorString(e_));                                             \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng;
}
static double rnd(void) { return (double)(rnd64() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }

// Does `msg` contain `part`? (for messages)
static bool has(const char *msg, const char *part) { return msg && strstr(msg, part); }

static void *dalloc(size_t bytes) {
    void *p = NULL;
    CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

// --- without a GPU -------------------------------------------------------------------------------

static void test_host_refusals(void) {
    ffn_comm_t c = (ffn_comm_t)0x1;
    CHECK(ffn_comm_create_nccl(cpu, NULL, NULL, &c) == FFN_STATUS_INVALID_ARG && !c,
          "NULL nccl_comm: %s", ffn_ctx_last_error(cpu));
    void *fake = (void *)0x1234;
    CHECK(ffn_comm_create_nccl(cpu, &fake, NULL, NULL) == FFN_STATUS_INVALID_ARG,
          "NULL comm_out: %s", ffn_ctx_last_error(cpu));
    c = (ffn_comm_t)0x1;
    const enum ffn_status st = ffn_comm_create_nccl(cpu, &fake, NULL, &c);
    CHECK(st == FFN_STATUS_INVALID_ARG && !c && has(ffn_ctx_last_error(cpu), "CUDA context"),
          "a CPU context: %d %s", (int)st, ffn_ctx_last_error(cpu));
    struct ffn_comm_nccl_opts o = FFN_COMM_NCCL_OPTS_INIT;
    o.size = 0;
    CHECK(ffn_comm_create_nccl(cpu, &fake, &o, &c) == FFN_STATUS_INVALID_ARG &&
              has(ffn_ctx_last_error(cpu), "opts.size"),
          "opts.size 0: %s", ffn_ctx_last_error(cpu));
    float x[4] = {0};
    CHECK(ffn_comm_allreduce_sum(cpu, NULL, x, FFN_DTYPE_F32, 4) == FFN_STATUS_INVALID_ARG,
          "NULL comm sum");
    CHECK(ffn_comm_broadcast(cpu, NULL, x, 4, 0) == FFN_STATUS_INVALID_ARG, "NULL comm bcast");
    CHECK(ffn_comm_synchronize(cpu, NULL) == FFN_STATUS_INVALID_ARG, "NULL comm sync");
}

// --- a test host communicator (for ffn_comm_nccl_opts.control) ------------------------------------
// One rank: its all-reduce and broadcast leave the data as it is, and count the calls.

static int local_calls;
static enum ffn_status local_allreduce(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, int64_t n,
                                       enum ffn_comm_dtype dtype, enum ffn_comm_op op, bool host) {
    (void)ctx, (void)c, (void)buf, (void)n, (void)dtype, (void)op, (void)host;
    local_calls++;
    return FFN_STATUS_OK;
}
static enum ffn_status local_bcast(ffn_ctx_t ctx, struct ffn_comm *c, void *buf, size_t bytes,
                                   int64_t root, bool host) {
    (void)ctx, (void)c, (void)buf, (void)bytes, (void)root, (void)host;
    local_calls++;
    return FFN_STATUS_OK;
}
static const struct ffn_comm_backend local_backend = {.name = "local",
                                                      .memory = FFN_BACKEND_CPU,
                                                      .act_dtypes = 1u << FFN_DTYPE_F32,
                                                      .allreduce = local_allreduce,
                                                      .broadcast = local_bcast,
                                                      .sync = NULL,
                                                      .destroy = NULL};

static ffn_comm_t local_comm(void) {
    struct ffn_comm *c = calloc(1, sizeof *c);
    c->be = &local_backend;
    c->rank = 0, c->size = 1;
    ffn_comm_stats_reset(c);
    return c;
}

// A host function that holds its stream until `release` is set (or 20 s pass: a guard against a
// test that would otherwise hang; then `expired` says so).
static atomic_int hold_release, hold_expired, hold_started;
static void CUDART_CB hold_stream(void *arg) {
    (void)arg;
    atomic_store(&hold_started, 1);
    const time_t t0 = time(NULL);
    while (!atomic_load(&hold_release)) {
        if (time(NULL) - t0 > 20) {
            atomic_store(&hold_expired, 1);
            return;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}
static void hold(cudaStream_t s) {
    atomic_store(&hold_release, 0), atomic_store(&hold_expired, 0), atomic_store(&hold_started, 0);
    CUDA(cudaLaunchHostFunc(s, hold_stream, NULL));
}

// --- the communicator's operations ------------------------------------------------------------------

#define GUARD 64  // elements of guard zone on each side
static const uint16_t guard16 = 0x7e5a;
static const uint32_t guard32 = 0x7fa55a01u;

// The value rank r holds at element i for the P > 1 sums: small integers, exact in bf16 and f16
// sums of up to 8 ranks.
static int ival(int r, int64_t i) { return (int)((i * 7 + r * 13) % 17) - 8; }

static void test_allreduce(ffn_ctx_t ctx, ffn_comm_t comm, cudaStream_t s) {
    static const enum ffn_dtype dts[] = {FFN_DTYPE_F32, FFN_DTYPE_BF16, FFN_DTYPE_F16};
    static const int64_t sizes[] = {1, 7, 1000, 4099, (1 << 20) + 5, 3 * (1 << 20) + 1};
    for (size_t di = 0; di < 3; di++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int off = 0; off < 2; off++) {
                const enum ffn_dtype dt = dts[di];
                const size_t es = ffn_dtype_size(dt);
                const int64_t n = sizes[si], tot = n + 2 * GUARD + off;
                unsigned char *h = malloc((size_t)tot * es), *back = malloc((size_t)tot * es);
                // Guards, then the data: P = 1 any bit pattern; P > 1 integers.
                for (int64_t i = 0; i < tot; i++) {
                    if (es == 4)
                        memcpy(h + i * 4, &guard32, 4);
                    else
                        memcpy(h + i * 2, &guard16, 2);
                }
                float *f = malloc((size_t)n * sizeof *f);
                for (int64_t i = 0; i < n; i++) f[i] = (float)ival(g_rank, i);
                unsigned char *data = h + (GUARD + off) * es;
                if (g_world == 1) {
                    for (int64_t i = 0; i < n; i++) {
                        const uint64_t b = rnd64() >> 17;
                        memcpy(data + i * es, &b, es);
                    }
                } else {
                    const struct ffn_tensor src = ffn_tensor_vec(f, FFN_DTYPE_F32, n),
                                            dst = ffn_tensor_vec(data, dt, n);
                    CHECK(!ffn_tensor_convert(cpu, &dst, &src), "convert");
                }
                unsigned char *d = dalloc((size_t)tot * es);
                // Written on the context's stream, reduced there, read back there: no wait between.
                CUDA(cudaMemcpyAsync(d, h, (size_t)tot * es, cudaMemcpyHostToDevice, s));
                const enum ffn_status st =
                    ffn_comm_allreduce_sum(ctx, comm, d + (GUARD + off) * es, dt, n);
                CHECK(st == FFN_STATUS_OK, "allreduce %s n=%" PRId64 ": %s", ffn_dtype_name(dt), n,
                      ffn_ctx_last_error(ctx));
                CUDA(cudaMemcpyAsync(back, d, (size_t)tot * es, cudaMemcpyDeviceToHost, s));
                CHECK(ffn_comm_synchronize(ctx, comm) == FFN_STATUS_OK, "sync: %s",
                      ffn_ctx_last_error(ctx));
                int64_t bad = -1;
                if (g_world == 1) {
                    if (memcmp(back, h, (size_t)tot * es)) bad = 0;  // every bit, guards too
                } else {
                    float *got = malloc((size_t)n * sizeof *got);
                    const struct ffn_tensor src = ffn_tensor_vec(back + (GUARD + off) * es, dt, n),
                                            dst = ffn_tensor_vec(got, FFN_DTYPE_F32, n);
                    CHECK(!ffn_tensor_convert(cpu, &dst, &src), "convert");
                    for (int64_t i = 0; i < n && bad < 0; i++) {
                        int want = 0;
                        for (int r = 0; r < g_world; r++) want += ival(r, i);
                        if (got[i] != (float)want) bad = i;
                    }
                    free(got);
                    if (memcmp(back, h, (size_t)(GUARD + off) * es) ||
                        memcmp(back + (GUARD + off + n) * es, h + (GUARD + off + n) * es,
                               GUARD * es))
                        bad = n;  // a guard zone written
                }
                CHECK(bad < 0, "allreduce %s n=%" PRId64 " offset %d: wrong at %" PRId64,
                      ffn_dtype_name(dt), n, off, bad);
                CUDA(cudaFree(d));
                free(h), free(back), free(f);
            }
    // n = 0: nothing to do, any pointer.
    CHECK(ffn_comm_allreduce_sum(ctx, comm, NULL, FFN_DTYPE_F32, 0) == FFN_STATUS_OK, "n = 0");
    printf("[rank %d] all-reduce: f32, bf16, f16; 1 to %d elements, odd starts: checked\n", g_rank,
           3 * (1 << 20) + 1);
}

static void test_broadcast(ffn_ctx_t ctx, ffn_comm_t comm, cudaStream_t s) {
    const size_t bytes = 1001;
    unsigned char *h = malloc(bytes), *back = malloc(bytes), *d = dalloc(bytes + 64);
    for (int root = 0; root < g_world; root++) {
        for (size_t i = 0; i < bytes; i++) h[i] = (unsigned char)(i * 31 + g_rank * 101 + 7);
        CUDA(cudaMemcpyAsync(d + 3, h, bytes, cudaMemcpyHostToDevice, s));
        CHECK(ffn_comm_broadcast(ctx, comm, d + 3, bytes, root) == FFN_STATUS_OK, "bcast: %s",
              ffn_ctx_last_error(ctx));
        CUDA(cudaMemcpyAsync(back, d + 3, bytes, cudaMemcpyDeviceToHost, s));
        CHECK(ffn_comm_synchronize(ctx, comm) == FFN_STATUS_OK, "sync: %s",
              ffn_ctx_last_error(ctx));
        size_t bad = bytes;
        for (size_t i = 0; i < bytes && bad == bytes; i++)
            if (back[i] != (unsigned char)(i * 31 + root * 101 + 7)) bad = i;
        CHECK(bad == bytes, "broadcast from %d: wrong at byte %zu", root, bad);
    }
    CUDA(cudaFree(d));
    free(h), free(back);
    printf("[rank %d] broadcast from every root: checked\n", g_rank);
}

static void test_refusals(ffn_ctx_t ctx, ffn_comm_t comm, ncclComm_t nc) {
    float host[16] = {0};
    enum ffn_status st = ffn_comm_allreduce_sum(ctx, comm, host, FFN_DTYPE_F32, 16);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "host memory"),
          "host pointer: %d %s", (int)st, ffn_ctx_last_error(ctx));
    st = ffn_comm_broadcast(ctx, comm, host, 16, 0);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "host memory"),
          "host pointer bcast: %d %s", (int)st, ffn_ctx_last_error(ctx));
    float *d = dalloc(256);
    st = ffn_comm_allreduce_sum(ctx, comm, d, FFN_DTYPE_F32, 100);  // 400 bytes of 256
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "allocation"),
          "a short buffer: %d %s", (int)st, ffn_ctx_last_error(ctx));
    st = ffn_comm_allreduce_sum(ctx, comm, d, (enum ffn_dtype)7, 4);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "dtype 7"),
          "unknown dtype: %d %s", (int)st, ffn_ctx_last_error(ctx));
    st = ffn_comm_allreduce_sum(ctx, comm, d, FFN_DTYPE_F32, -1);
    CHECK(st == FFN_STATUS_INVALID_ARG, "n < 0");
    st = ffn_comm_broadcast(ctx, comm, d, 16, g_world);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "root"),
          "root out of range: %d %s", (int)st, ffn_ctx_last_error(ctx));
    st = ffn_comm_allreduce_sum(cpu, comm, d, FFN_DTYPE_F32, 4);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(cpu), "CUDA device"),
          "a CPU context for a call: %d %s", (int)st, ffn_ctx_last_error(cpu));
    CUDA(cudaFree(d));

    // Creation.
    ffn_comm_t c = NULL;
    ncclComm_t null_comm = NULL;
    st = ffn_comm_create_nccl(ctx, &null_comm, NULL, &c);
    CHECK(st == FFN_STATUS_INVALID_ARG && !c && has(ffn_ctx_last_error(ctx), "NULL ncclComm_t"),
          "NULL ncclComm_t: %d %s", (int)st, ffn_ctx_last_error(ctx));
    struct ffn_comm_nccl_opts o = FFN_COMM_NCCL_OPTS_INIT;
    o.timeout_s = -1;
    CHECK(ffn_comm_create_nccl(ctx, &nc, &o, &c) == FFN_STATUS_INVALID_ARG, "timeout -1");
    o.timeout_s = NAN;
    CHECK(ffn_comm_create_nccl(ctx, &nc, &o, &c) == FFN_STATUS_INVALID_ARG, "timeout NaN");
    o = (struct ffn_comm_nccl_opts)FFN_COMM_NCCL_OPTS_INIT;
    o.control = comm;  // device memory: not a control communicator
    st = ffn_comm_create_nccl(ctx, &nc, &o, &c);
    CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "host-memory"),
          "an nccl control: %d %s", (int)st, ffn_ctx_last_error(ctx));
    if (g_world == 1) {
        struct ffn_comm *big = local_comm();
        big->size = 2;  // not the NCCL communicator's size
        o.control = big;
        st = ffn_comm_create_nccl(ctx, &nc, &o, &c);
        CHECK(st == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "rank for rank"),
              "a control of another size: %d %s", (int)st, ffn_ctx_last_error(ctx));
        ffn_comm_destroy(big);
    }
    printf("[rank %d] refusals: checked\n", g_rank);
}

// Host-memory calls: agreements, texts and a host all-reduce, staged through the device.
static void test_control(ffn_ctx_t ctx, ffn_comm_t comm) {
    // Agreement: OK everywhere; then rank 0 fails.
    CHECK(ffn_comm_agree(ctx, comm, FFN_STATUS_OK) == FFN_STATUS_OK, "agree OK: %s",
          ffn_ctx_last_error(ctx));
    ffn_error(ctx, FFN_STATUS_IO, "rank 0's own reason");
    const enum ffn_status mine = g_rank == 0 ? FFN_STATUS_IO : FFN_STATUS_OK;
    const enum ffn_status st = ffn_comm_agree(ctx, comm, mine);
    if (g_rank == 0)
        CHECK(st == FFN_STATUS_IO && has(ffn_ctx_last_error(ctx), "rank 0's own reason"),
              "agree, failing rank: %d %s", (int)st, ffn_ctx_last_error(ctx));
    else
        CHECK(st == FFN_STATUS_IO && has(ffn_ctx_last_error(ctx), "another rank failed"),
              "agree, other rank: %d %s", (int)st, ffn_ctx_last_error(ctx));
    // Values that agree, and one that differs across ranks (P > 1).
    const int64_t vals[2] = {1234567890123, 42 + (g_world > 1 ? g_rank : 0)};
    static const char *const what[] = {"a", "b"};
    const enum ffn_status sv = ffn_comm_agree_vals(ctx, comm, "test", FFN_STATUS_OK, vals, what, 2);
    if (g_world == 1)
        CHECK(sv == FFN_STATUS_OK, "agree values: %s", ffn_ctx_last_error(ctx));
    else
        CHECK(sv == FFN_STATUS_INVALID_ARG && has(ffn_ctx_last_error(ctx), "b differs"),
              "agree values: %d %s", (int)sv, ffn_ctx_last_error(ctx));
    // A 3 MiB text from rank 0, in pieces of the staging buffer.
    const size_t len = 3 * (1u << 20) + 17;
    char *text = malloc(len + 1), *got = NULL;
    for (size_t i = 0; i < len; i++) text[i] = (char)('a' + (i * 7 + i / 4096) % 26);
    text[len] = '\0';
    CHECK(ffn_comm_bcast_text(ctx, comm, g_rank == 0 ? text : NULL, &got) == FFN_STATUS_OK,
          "text: %s", ffn_ctx_last_error(ctx));
    CHECK(got && strlen(got) == len && !memcmp(got, text, len), "the text arrived changed");
    free(got), free(text);
    // A host all-reduce of 700,001 f32 (2.8 MB: three pieces).
    const int64_t n = 700001;
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) h[i] = (float)ival(g_rank, i) + 0.25f;
    CHECK(ffn_comm_allreduce(ctx, comm, h, n, FFN_COMM_F32, FFN_COMM_SUM, false) == FFN_STATUS_OK,
          "host all-reduce: %s", ffn_ctx_last_error(ctx));
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        float want = 0;
        for (int r = 0; r < g_world; r++) want += (float)ival(r, i) + 0.25f;
        if (h[i] != want) bad = i;
    }
    CHECK(bad < 0, "host all-reduce wrong at %" PRId64, bad);
    free(h);
    printf("[rank %d] control calls staged through the device: checked\n", g_rank);
}

// A control communicator takes every host call, and they never wait for the stream; the timeout
// of a wait. One rank (the test's control communicator has one).
static void test_control_comm_and_timeout(ffn_ctx_t ctx, ncclComm_t nc, cudaStream_t s) {
    struct ffn_comm *local = local_comm();
    struct ffn_comm_nccl_opts o = FFN_COMM_NCCL_OPTS_INIT;
    o.control = local;
    ffn_comm_t comm = NULL;
    CHECK(ffn_comm_create_nccl(ctx, &nc, &o, &comm) == FFN_STATUS_OK, "with control: %s",
          ffn_ctx_last_error(ctx));
    if (comm) {
        hold(s);  // the stream is busy until released
        local_calls = 0;
        CHECK(ffn_comm_agree(ctx, comm, FFN_STATUS_OK) == FFN_STATUS_OK, "agree: %s",
              ffn_ctx_last_error(ctx));
        char *got = NULL;
        CHECK(ffn_comm_bcast_text(ctx, comm, "plan text", &got) == FFN_STATUS_OK && got &&
                  !strcmp(got, "plan text"),
              "text through control: %s", ffn_ctx_last_error(ctx));
        free(got);
        CHECK(local_calls == 3, "the control communicator took %d calls; 3 expected", local_calls);
        CHECK(!atomic_load(&hold_expired) && cudaStreamQuery(s) == cudaErrorNotReady,
              "a control call waited for the stream");
        atomic_store(&hold_release, 1);
        CHECK(ffn_comm_synchronize(ctx, comm) == FFN_STATUS_OK, "sync: %s",
              ffn_ctx_last_error(ctx));
        ffn_comm_destroy(comm);
    }
    ffn_comm_destroy(local);

    // Timeout: a wait for a stream held by a host function gives up, and the communicator then
    // refuses every call.
    o = (struct ffn_comm_nccl_opts)FFN_COMM_NCCL_OPTS_INIT;
    o.timeout_s = 0.2;
    comm = NULL;
    CHECK(ffn_comm_create_nccl(ctx, &nc, &o, &comm) == FFN_STATUS_OK, "with timeout: %s",
          ffn_ctx_last_error(ctx));
    if (comm) {
        hold(s);
        enum ffn_status st = ffn_comm_synchronize(ctx, comm);
        CHECK(st == FFN_STATUS_BACKEND && has(ffn_ctx_last_error(ctx), "timeout_s"),
              "timeout: %d %s", (int)st, ffn_ctx_last_error(ctx));
        st = ffn_comm_agree(ctx, comm, FFN_STATUS_OK);
        CHECK(st == FFN_STATUS_BACKEND && has(ffn_ctx_last_error(ctx), "timed out"),
              "after the timeout: %d %s", (int)st, ffn_ctx_last_error(ctx));
        CHECK(!atomic_load(&hold_expired), "the held stream expired");
        atomic_store(&hold_release, 1);
        CUDA(cudaStreamSynchronize(s));
        ffn_comm_destroy(comm);
    }
    printf("[rank %d] control communicator (no wait for the stream), timeout: checked\n", g_rank);
}

// --- the tensor-parallel block over NCCL against the plain block --------------------------------

struct tcase {
    const char *name;
    bool gated;
    enum ffn_act act;
    enum ffn_gate_up_layout layout;
    bool bias;
    enum ffn_tp_down_bias down_bias;
    int64_t d, m, T, y_pad;  // y_pad: y's row stride is d + y_pad
};

static const struct tcase tcases[] = {
    {"swiglu [g|u]", true, FFN_ACT_SILU, FFN_GATE_UP_FUSED, false, FFN_TP_DOWN_BIAS_RANK0, 64, 96,
     33, 0},
    {"swiglu separate, biases, b_down on rank 0", true, FFN_ACT_SILU, FFN_GATE_UP_SEPARATE, true,
     FFN_TP_DOWN_BIAS_RANK0, 64, 128, 17, 0},
    {"gelu plain, biases, b_down after the reduce", false, FFN_ACT_GELU_TANH, FFN_GATE_UP_SEPARATE,
     true, FFN_TP_DOWN_BIAS_AFTER_REDUCE, 64, 96, 17, 0},
    {"geglu interleaved, biases after the reduce, d_ff 97, strided y", true, FFN_ACT_GELU_TANH,
     FFN_GATE_UP_INTERLEAVED, true, FFN_TP_DOWN_BIAS_AFTER_REDUCE, 48, 97, 9, 7},
};

// The eight members of weights / grads in one order.
static struct ffn_weight *wmem(struct ffn_block_weights *w, int k) {
    struct ffn_weight *m[8] = {&w->gate,   &w->up,   &w->gate_up,   &w->down,
                               &w->b_gate, &w->b_up, &w->b_gate_up, &w->b_down};
    return m[k];
}
static void **gmem(struct ffn_block_grads *g, int k) {
    void **m[8] = {&g->gate,   &g->up,   &g->gate_up,   &g->down,
                   &g->b_gate, &g->b_up, &g->b_gate_up, &g->b_down};
    return m[k];
}
static int64_t wcount(const struct ffn_weight *w) {
    if (!w->data) return 0;
    return (w->rows ? w->rows : 1) * (w->cols ? w->cols : 1);
}

// Device copies of host weights (declared shapes kept); *bufs collects what to free.
static struct ffn_block_weights upload(const struct ffn_block_weights *h, void **bufs) {
    struct ffn_block_weights w = *h;
    for (int k = 0; k < 8; k++) {
        struct ffn_weight *m = wmem(&w, k);
        bufs[k] = NULL;
        if (!m->data) continue;
        const size_t bytes = (size_t)wcount(m) * ffn_dtype_size(m->dtype);
        bufs[k] = dalloc(bytes);
        CUDA(cudaMemcpy(bufs[k], m->data, bytes, cudaMemcpyHostToDevice));
        m->data = bufs[k];
    }
    return w;
}

// f32 host copy of a device array of dtype dt (n elements, rows of `cols` `stride` apart).
static double *fetch(const void *d, enum ffn_dtype dt, int64_t rows, int64_t cols, int64_t stride) {
    const size_t es = ffn_dtype_size(dt);
    unsigned char *raw = malloc((size_t)(rows * stride) * es);
    CUDA(cudaMemcpy(raw, d, (size_t)(rows * stride) * es, cudaMemcpyDeviceToHost));
    float *f = malloc((size_t)(rows * cols) * sizeof *f);
    const struct ffn_tensor src = ffn_tensor_2d(raw, dt, rows, cols, stride),
                            dst = ffn_tensor_2d(f, FFN_DTYPE_F32, rows, cols, cols);
    CHECK(!ffn_tensor_convert(cpu, &dst, &src), "convert: %s", ffn_ctx_last_error(cpu));
    double *out = malloc((size_t)(rows * cols) * sizeof *out);
    for (int64_t i = 0; i < rows * cols; i++) out[i] = f[i];
    free(raw), free(f);
    return out;
}

// max |a - b| / max |b|
static double relerr(const double *a, const double *b, int64_t n) {
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs(a[i] - b[i]);
        e = d > e || isnan(d) ? d : e;
        s = fabs(b[i]) > s ? fabs(b[i]) : s;
    }
    return s > 0 ? e / s : e;
}

// Device f32 [rows, cols] of a host array of dtype dt drawn uniformly in [-a, a].
static void *draw(enum ffn_dtype dt, int64_t n, double a) {
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = (float)(a * rnd());
    void *h = malloc((size_t)n * ffn_dtype_size(dt));
    const struct ffn_tensor src = ffn_tensor_vec(f, FFN_DTYPE_F32, n),
                            dst = ffn_tensor_vec(h, dt, n);
    CHECK(!ffn_tensor_convert(cpu, &dst, &src), "convert");
    free(f);
    return h;
}

// 1: the plain block ran (CUDA blocks present); 0: this build has none (checked that the
// tensor-parallel block says so too).
static int tp_case(ffn_ctx_t ctx, ffn_comm_t comm, const struct tcase *c, enum ffn_dtype dt) {
    rng = 0x5eed0000u + (uint64_t)(c - tcases) * 977 + (uint64_t)dt;  // the same on every rank
    const int64_t d = c->d, m = c->m, T = c->T, ys = d + c->y_pad;
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = d, spec.d_ff = m, spec.act = c->act, spec.gated = c->gated;
    spec.gate_up_layout = c->gated ? c->layout : FFN_GATE_UP_SEPARATE;
    spec.bias_gate = c->bias && c->gated, spec.bias_up = c->bias, spec.bias_down = c->bias;
    const bool fused = c->gated && c->layout != FFN_GATE_UP_SEPARATE;
    // The whole block's weights, [out, in], on the host.
    struct ffn_block_weights wh = FFN_BLOCK_WEIGHTS_INIT;
    const double ws = 1.0 / sqrt((double)d);
    if (fused) {
        wh.gate_up = ffn_weight_dense(draw(dt, 2 * m * d, ws), dt, FFN_WEIGHT_OUT_IN);
        wh.gate_up.rows = 2 * m, wh.gate_up.cols = d;
    } else {
        wh.up = ffn_weight_dense(draw(dt, m * d, ws), dt, FFN_WEIGHT_OUT_IN);
        wh.up.rows = m, wh.up.cols = d;
        if (c->gated) {
            wh.gate = ffn_weight_dense(draw(dt, m * d, ws), dt, FFN_WEIGHT_OUT_IN);
            wh.gate.rows = m, wh.gate.cols = d;
        }
    }
    wh.down = ffn_weight_dense(draw(dt, d * m, 1.0 / sqrt((double)m)), dt, FFN_WEIGHT_OUT_IN);
    wh.down.rows = d, wh.down.cols = m;
    if (c->bias) {
        if (fused) {
            wh.b_gate_up = ffn_weight_dense(draw(dt, 2 * m, 0.3), dt, FFN_WEIGHT_OUT_IN);
        } else {
            wh.b_up = ffn_weight_dense(draw(dt, m, 0.3), dt, FFN_WEIGHT_OUT_IN);
            if (c->gated) wh.b_gate = ffn_weight_dense(draw(dt, m, 0.3), dt, FFN_WEIGHT_OUT_IN);
        }
        wh.b_down = ffn_weight_dense(draw(dt, d, 0.3), dt, FFN_WEIGHT_OUT_IN);
    }
    for (int k = 4; k < 8; k++) {  // declared vector shapes
        struct ffn_weight *v = wmem(&wh, k);
        if (v->data) v->rows = 1, v->cols = k == 6 ? 2 * m : k == 7 ? d : m;
    }
    struct ffn_tp_plan plan = FFN_TP_PLAN_INIT;
    struct ffn_tp_plan_opts po = FFN_TP_PLAN_OPTS_INIT;
    po.down_bias = c->down_bias;
    CHECK(!ffn_tp_plan_make(cpu, &spec, &wh, g_world, &po, &plan), "plan: %s",
          ffn_ctx_last_error(cpu));
    ffn_tp_shard_t shard = NULL;
    CHECK(!ffn_tp_shard_create(cpu, &plan, g_rank, &wh, &shard), "shard: %s",
          ffn_ctx_last_error(cpu));
    if (!shard) return 0;
    void *full_bufs[8], *shard_bufs[8];
    struct ffn_block_weights wfull = upload(&wh, full_bufs);
    struct ffn_block_weights wshard = upload(ffn_tp_shard_weights(shard), shard_bufs);
    void *xh = draw(dt, T * d, 1.5), *dyh = draw(dt, T * d, 1.0);
    const size_t es = ffn_dtype_size(dt);
    void *x = dalloc((size_t)(T * d) * es), *dy = dalloc((size_t)(T * d) * es);
    CUDA(cudaMemcpy(x, xh, (size_t)(T * d) * es, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(dy, dyh, (size_t)(T * d) * es, cudaMemcpyHostToDevice));
    void *y_ref = dalloc((size_t)(T * d) * es), *dx_ref = dalloc((size_t)(T * d) * es);
    void *y = dalloc((size_t)(T * ys) * es), *dx = dalloc((size_t)(T * d) * es);
    const struct ffn_tensor tx = ffn_tensor_2d(x, dt, T, d, d),
                            tdy = ffn_tensor_2d(dy, dt, T, d, d);
    const struct ffn_tensor ty_ref = ffn_tensor_2d(y_ref, dt, T, d, d),
                            tdx_ref = ffn_tensor_2d(dx_ref, dt, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, dt, T, d, ys),
                            tdx = ffn_tensor_2d(dx, dt, T, d, d);
    // Gradients (f32): the whole block's and this rank's, on the device.
    struct ffn_block_grads gfull = FFN_BLOCK_GRADS_INIT, gloc = FFN_BLOCK_GRADS_INIT;
    int64_t nfull[8] = {0}, nloc[8] = {0};
    const struct ffn_block_weights *sw = ffn_tp_shard_weights(shard);
    for (int k = 0; k < 8; k++) {
        nfull[k] = wcount(wmem(&wh, k));
        nloc[k] = wcount(wmem((struct ffn_block_weights *)sw, k));
        if (k == 7 && c->bias) nloc[k] = d;  // every rank: zeroed (rank 0) or Σ dy (after)
        if (nfull[k]) *gmem(&gfull, k) = dalloc((size_t)nfull[k] * 4);
        if (nloc[k]) *gmem(&gloc, k) = dalloc((size_t)nloc[k] * 4);
    }

    int ran = 0;
    ffn_block_t blk = NULL;
    enum ffn_status st = ffn_block_create(ctx, &spec, &wfull, NULL, &blk);
    if (st == FFN_STATUS_UNSUPPORTED) {
        // No CUDA blocks in this build: the tensor-parallel block gets the block layer's answer.
        ffn_tp_block_t tb = NULL;
        const enum ffn_status ts = ffn_tp_block_create(ctx, comm, &plan, &wshard, NULL, &tb);
        CHECK(ts == FFN_STATUS_UNSUPPORTED && !tb && has(ffn_ctx_last_error(ctx), "ffn_block"),
              "tp block without CUDA blocks: %d %s", (int)ts, ffn_ctx_last_error(ctx));
        ffn_tp_block_destroy(tb);
    } else {
        ran = 1;
        CHECK(st == FFN_STATUS_OK, "plain block: %s", ffn_ctx_last_error(ctx));
        CHECK(!ffn_block_forward(ctx, blk, &ty_ref, &tx, FFN_BLOCK_POLICY_SAVE), "fwd: %s",
              ffn_ctx_last_error(ctx));
        CHECK(!ffn_block_backward(ctx, blk, &gfull, &tdx_ref, &tdy), "bwd: %s",
              ffn_ctx_last_error(ctx));
        ffn_tp_block_t tb = NULL;
        CHECK(!ffn_tp_block_create(ctx, comm, &plan, &wshard, NULL, &tb), "tp create: %s",
              ffn_ctx_last_error(ctx));
        CHECK(!ffn_tp_block_forward(ctx, tb, &ty, &tx, FFN_BLOCK_POLICY_SAVE), "tp fwd: %s",
              ffn_ctx_last_error(ctx));
        CHECK(!ffn_tp_block_backward(ctx, tb, &gloc, &tdx, &tdy), "tp bwd: %s",
              ffn_ctx_last_error(ctx));
        CHECK(!ffn_ctx_synchronize(ctx) && !ffn_comm_synchronize(ctx, comm), "sync: %s",
              ffn_ctx_last_error(ctx));
        double *a = fetch(y, dt, T, d, ys), *b = fetch(y_ref, dt, T, d, d);
        const double ey = relerr(a, b, T * d);
        free(a), free(b);
        a = fetch(dx, dt, T, d, d), b = fetch(dx_ref, dt, T, d, d);
        const double edx = relerr(a, b, T * d);
        free(a), free(b);
        // Gradients: this rank's, on the host, gathered back to the whole block's layout.
        struct ffn_block_grads lh = FFN_BLOCK_GRADS_INIT, fh = FFN_BLOCK_GRADS_INIT;
        for (int k = 0; k < 8; k++) {
            if (nloc[k]) {
                *gmem(&lh, k) = malloc((size_t)nloc[k] * 4);
                CUDA(cudaMemcpy(*gmem(&lh, k), *gmem(&gloc, k), (size_t)nloc[k] * 4,
                                cudaMemcpyDeviceToHost));
            }
            if (nfull[k]) *gmem(&fh, k) = malloc((size_t)nfull[k] * 4);
        }
        CHECK(!ffn_tp_grads_gather(ctx, comm, &plan, &lh, &fh), "gather: %s",
              ffn_ctx_last_error(ctx));
        double eg = 0;
        for (int k = 0; k < 8; k++) {
            if (!nfull[k]) continue;
            double *r = fetch(*gmem(&gfull, k), FFN_DTYPE_F32, 1, nfull[k], nfull[k]);
            double *g = malloc((size_t)nfull[k] * sizeof *g);
            for (int64_t i = 0; i < nfull[k]; i++) g[i] = ((float *)*gmem(&fh, k))[i];
            const double e = relerr(g, r, nfull[k]);
            eg = e > eg ? e : eg;
            free(r), free(g);
        }
        for (int k = 0; k < 8; k++) free(*gmem(&lh, k)), free(*gmem(&fh, k));
        // y and dx are sums over ranks of 16-bit partials in bf16 (two roundings at P = 2);
        // the gradients are f32 GEMMs of the same products.
        const double tol = dt == FFN_DTYPE_BF16 ? 1.0 / 64 : g_world == 1 ? 1e-6 : 1e-5;
        CHECK(ey <= tol && edx <= tol && eg <= 1e-4,
              "%s %s: max rel err y %.3g, dx %.3g, grads %.3g", c->name, ffn_dtype_name(dt), ey,
              edx, eg);
        if (g_rank == 0)
            printf(
                "tp block over NCCL, P=%d, %-62s %-4s: max rel err y %.2e  dx %.2e  grads "
                "%.2e\n",
                g_world, c->name, ffn_dtype_name(dt), ey, edx, eg);
        ffn_tp_block_destroy(tb);
    }
    ffn_block_destroy(blk);
    for (int k = 0; k < 8; k++) {
        if (full_bufs[k]) CUDA(cudaFree(full_bufs[k]));
        if (shard_bufs[k]) CUDA(cudaFree(shard_bufs[k]));
        if (*gmem(&gfull, k)) CUDA(cudaFree(*gmem(&gfull, k)));
        if (*gmem(&gloc, k)) CUDA(cudaFree(*gmem(&gloc, k)));
        free((void *)wmem(&wh, k)->data);
    }
    void *const dbufs[] = {x, dy, y, dx, y_ref, dx_ref};
    for (int k = 0; k < 6; k++) CUDA(cudaFree(dbufs[k]));
    free(xh), free(dyh);
    ffn_tp_shard_destroy(shard);
    return ran;
}

static void test_tp_blocks(ffn_ctx_t ctx, ffn_comm_t comm) {
    int ran = 0, total = 0;
    for (size_t i = 0; i < sizeof tcases / sizeof tcases[0]; i++)
        for (int k = 0; k < 2; k++) {
            if (tcases[i].m < g_world) continue;
            ran += tp_case(ctx, comm, &tcases[i], k ? FFN_DTYPE_BF16 : FFN_DTYPE_F32);
            total++;
        }
    if (!ran)
        printf(
            "[rank %d] tp block: this build has no CUDA blocks; ffn_tp_block_create answers "
            "the block layer's FFN_STATUS_UNSUPPORTED (%d cases checked)\n",
            g_rank, total);
}

// --- one rank ---------------------------------------------------------------------------------------

static int rank_main(int id_in, const int *id_out) {
    static char name[64], label[32];  // each rank counts and reports its own checks
    snprintf(name, sizeof name, "[rank %d] test_tp_nccl", g_rank);
    snprintf(label, sizeof label, "rank %d", g_rank);
    ffn_check_begin(name);
    ffn_check_section(label, 0);
    struct ffn_ctx_opts co = FFN_CTX_OPTS_INIT;
    if (!CHECK(!ffn_ctx_create(&co, &cpu), "CPU context")) return ffn_check_summary();
    test_host_refusals();
    char why[256];
    int ndev = 0;
    if (!ffn_backend_available(FFN_BACKEND_CUDA, why, sizeof why)) {
        return ffn_check_skip("no CUDA device (%s)", why);
    }
    CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < g_world) {
        return ffn_check_skip("%d ranks need %d GPUs (NCCL puts one rank on a device); %d found",
                              g_world, g_world, ndev);
    }
    const int dev = g_rank;
    CUDA(cudaSetDevice(dev));
    ncclUniqueId id;
    if (g_rank == 0) {
        if (!CHECK(ncclGetUniqueId(&id) == ncclSuccess)) return ffn_check_summary();
        for (int r = 1; r < g_world; r++)
            if (!CHECK(write(id_out[r], &id, sizeof id) == (ssize_t)sizeof id,
                       "handing the unique id to rank %d", r))
                return ffn_check_summary();
    } else if (read(id_in, &id, sizeof id) != (ssize_t)sizeof id) {
        return ffn_check_skip("rank 0 handed over no NCCL id");
    }
    ncclComm_t nc = NULL;
    const ncclResult_t nr = ncclCommInitRank(&nc, g_world, id, g_rank);
    if (!CHECK(nr == ncclSuccess, "ncclCommInitRank: %s", ncclGetErrorString(nr)))
        return ffn_check_summary();
    int v = 0;
    ncclGetVersion(&v);
    cudaStream_t s;
    CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
    o.backend = FFN_BACKEND_CUDA, o.device = dev, o.stream = s;
    ffn_ctx_t ctx = NULL;
    if (!CHECK(!ffn_ctx_create(&o, &ctx), "CUDA context: %s", ffn_ctx_last_error(ctx)))
        return ffn_check_summary();
    struct cudaDeviceProp p;
    CUDA(cudaGetDeviceProperties(&p, dev));
    printf("[rank %d] %s (device %d), NCCL %d, %d rank%s\n", g_rank, p.name, dev, v, g_world,
           g_world > 1 ? "s" : "");

    ffn_comm_t comm = NULL;
    CHECK(ffn_comm_create_nccl(ctx, &nc, NULL, &comm) == FFN_STATUS_OK, "create: %s",
          ffn_ctx_last_error(ctx));
    if (comm) {
        CHECK(ffn_comm_rank(comm) == g_rank && ffn_comm_size(comm) == g_world &&
                  !strcmp(ffn_comm_backend(comm), "nccl"),
              "rank %" PRId64 " size %" PRId64 " backend %s", ffn_comm_rank(comm),
              ffn_comm_size(comm), ffn_comm_backend(comm));
        test_allreduce(ctx, comm, s);
        test_broadcast(ctx, comm, s);
        struct ffn_comm_stats cs = FFN_COMM_STATS_INIT;
        CHECK(!ffn_comm_stats(ctx, comm, &cs) && cs.data_calls == 3 * 6 * 2 + 1 &&
                  cs.control_calls == g_world,
              "stats: %" PRId64 " data calls, %" PRId64 " control calls", cs.data_calls,
              cs.control_calls);
        test_refusals(ctx, comm, nc);
        test_control(ctx, comm);
        if (g_world == 1) test_control_comm_and_timeout(ctx, nc, s);
        test_tp_blocks(ctx, comm);
        CHECK(ffn_comm_synchronize(ctx, comm) == FFN_STATUS_OK, "final sync: %s",
              ffn_ctx_last_error(ctx));
        ffn_comm_destroy(comm);
    }
    ffn_ctx_destroy(ctx);
    ncclCommDestroy(nc);  // the caller's: ffn never destroys it
    CUDA(cudaStreamDestroy(s));
    ffn_ctx_destroy(cpu);
    return ffn_check_summary();
}

int main(int argc, char **argv) {
    int P = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks") && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
            atoi(argv[i + 1]) <= 8)
            P = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: test_tp_nccl [--ranks P]   (P from 1 to 8)\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (P == 1) return rank_main(-1, NULL);
    // P processes, forked before any CUDA call; rank 0 hands its NCCL id over pipes.
    g_world = P;
    int fds[8][2], out[8] = {0};
    for (int r = 1; r < P; r++)
        if (pipe(fds[r])) {
            perror("pipe");
            return 1;
        }
    pid_t pid[8];
    for (int r = 0; r < P; r++) {
        pid[r] = fork();
        if (pid[r] < 0) {
            perror("fork");
            return 1;
        }
        if (pid[r] == 0) {
            g_rank = r;
            for (int k = 1; k < P; k++) {  // keep this rank's read end, rank 0 the write ends
                if (k != r) close(fds[k][0]);
                if (r != 0) close(fds[k][1]);
                out[k] = fds[k][1];
            }
            _exit(rank_main(r ? fds[r][0] : -1, out));
        }
    }
    for (int r = 1; r < P; r++) close(fds[r][0]), close(fds[r][1]);
    int worst = 0, skips = 0;
    for (int r = 0; r < P; r++) {
        int status = 0;
        waitpid(pid[r], &status, 0);
        const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        if (rc == SKIP)
            skips++;
        else if (rc)
            worst = 1;
    }
    if (worst) return 1;
    return skips ? SKIP : 0;
}
