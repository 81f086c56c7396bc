// test_block_skinny.c — the CPU layer's skinny GEMM (few rows, bf16 or f32 weights:
// cpu/gemm_skinny.c) against a double-precision reference, for each weight dtype: M = 1..8 in both
// weight orientations and M up to 32 with the weights contiguous in n, with and without bias and
// accumulation, K and N with tails, strided rows of A, f32 and bf16 A and C, the same bits on 1
// and 2 threads, weights 0-2 elements past a 64-byte boundary; weights off that boundary by any
// element count giving the same bits as aligned ones; subnormal, infinite and NaN weights as IEEE
// arithmetic gives them. Then the block (bf16 and f32 weights) at a few tokens with the path on
// and off ($FFN_BLOCK_SKINNY): the same outputs within the bf16 tolerance of the
// block tests, both near the textbook block in double, and the path named in ffn_block_info.
// Skipped where the context's ISA is not AVX-512.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_ref.h"
#include "check.h"
#include "cpu/cpu_impl.h"
#include "ffn.h"

#define SEED 11u
// bf16 GEMMs against the double reference / against each other (test_block_api.c's bound).
#define TOL_BF16 2e-2
// f32 unit roundoff.
#define U32 (1.0 / 16777216.0)

static uint64_t rng = SEED;

static double rnd(void) {  // uniform in [-1, 1)
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

// --- the GEMM itself ---------------------------------------------------------------------------

struct gcase {
    int64_t M, N, K, lda;  // lda: A's row stride (≥ K)
    bool ba;               // weights contiguous in k ([N][K]), else in n ([K][N])
    bool bias, acc;
    enum ffn_dtype adt, bdt, cdt;
    int64_t boff;  // the weights start boff elements past a 64-byte boundary
};

// Runs one case on ctx with n_threads; compares with the double reference; returns C (f32 bits
// or bf16 widened) in out[M·N] for the thread comparison.
static void run_case(ffn_ctx_t ctx, const struct gcase *c, int threads, float *out) {
    const int64_t M = c->M, N = c->N, K = c->K, ldc = N + 5;
    const size_t as = ffn_dtype_size(c->adt), cs = ffn_dtype_size(c->cdt);
    void *A = calloc((size_t)(M * c->lda), as), *C = calloc((size_t)(M * ldc), cs);
    const size_t bs = ffn_dtype_size(c->bdt), bbytes = (size_t)(N * K + c->boff) * bs;
    void *B0 = aligned_alloc(64, (bbytes + 63) / 64 * 64), *B = (char *)B0 + c->boff * (int64_t)bs;
    float *bias = malloc((size_t)N * sizeof(float)), *c0 = malloc((size_t)(M * N) * sizeof(float));
    rng = SEED + (uint64_t)(M * 131 + N * 7 + K);
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) ffn_store_f32(A, c->adt, m * c->lda + k, (float)rnd());
    for (int64_t i = 0; i < N * K; i++) ffn_store_f32(B, c->bdt, i, (float)rnd());
    for (int64_t n = 0; n < N; n++) bias[n] = (float)rnd();
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            ffn_store_f32(C, c->cdt, m * ldc + n, (float)rnd());
            c0[m * N + n] = ffn_load_f32(C, c->cdt, m * ldc + n);
        }
    // B(k, n) at B[k·s0 + n·s1].
    const int64_t s0 = c->ba ? 1 : N, s1 = c->ba ? K : 1;
    const struct ffn_cpu_mat ma = {A, c->adt, c->lda, 1}, mb = {B, c->bdt, s0, s1},
                             mc = {C, c->cdt, ldc, 1};
    ffn_ctx_set_threads(ctx, threads);
    bool done = false;
    const enum ffn_status st = ffn_cpu_gemm_skinny(ctx, "test", M, N, K, &ma, &mb, &mc,
                                                   c->bias ? bias : NULL, c->acc, &done);
    CHECK(st == FFN_STATUS_OK && done, "M %" PRId64 " N %" PRId64 " K %" PRId64 " %s B %s: ran", M,
          N, K, c->ba ? "ba" : "ab", ffn_dtype_name(c->bdt));
    int64_t bad = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                const double p = (double)ffn_load_f32(A, c->adt, m * c->lda + k) *
                                 (double)ffn_load_f32(B, c->bdt, k * s0 + n * s1);
                s += p, mag += fabs(p);
            }
            if (c->bias) s += bias[n], mag += fabs(bias[n]);
            if (c->acc) s += c0[m * N + n], mag += fabs(c0[m * N + n]);
            const float got = ffn_load_f32(C, c->cdt, m * ldc + n);
            // f32 FMA sums: (K + 2)·u of the magnitudes (a 2x margin); a bf16 C: its rounding.
            const double tol =
                2.0 * (double)(K + 2) * U32 * mag + (c->cdt == FFN_DTYPE_BF16 ? fabs(s) / 256 : 0);
            if (!(fabs(got - s) <= tol) && bad++ < 5)
                FAIL("M %" PRId64 " N %" PRId64 " K %" PRId64
                     " %s B %s A %s C %s%s%s thr %d: C[%" PRId64 "][%" PRId64
                     "] = %.9g, want %.9g (tol %.3g)",
                     M, N, K, c->ba ? "ba" : "ab", ffn_dtype_name(c->bdt), ffn_dtype_name(c->adt),
                     ffn_dtype_name(c->cdt), c->bias ? " bias" : "", c->acc ? " acc" : "", threads,
                     m, n, got, s, tol);
            out[m * N + n] = got;
        }
    ffn_check_count(M * N - bad);
    // Columns of C past N (its padding) untouched.
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = N; n < ldc; n++)
            if (ffn_load_f32(C, c->cdt, m * ldc + n) != 0.0f) {
                FAIL("C padding written at [%" PRId64 "][%" PRId64 "]", m, n);
                break;
            }
    free(A), free(B0), free(C), free(bias), free(c0);
}

static void test_gemm(ffn_ctx_t ctx, enum ffn_dtype bdt) {
    ffn_check_section(bdt == FFN_DTYPE_F32 ? "gemm f32 weights" : "gemm bf16 weights", 0);
    // K: below one chunk, a tail, exact chunks; N: below one block, tails of 8 and 16 columns.
    static const int64_t Ks[] = {5, 77, 96, 233};
    static const int64_t Ns[] = {3, 37, 301};
    // Rows: 1..8 in both orientations, then up to FFN_SKINNY_AB_MAX_M in "ab" only (bf16 weights:
    // with bf16 A, by vdpbf16ps, where the CPU has AVX512_BF16).
    static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 24, 32};
    const bool dp = ffn_cpu_state(ctx)->avx512_bf16;
    int64_t cases = 0;
    for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++) {
        const int64_t M = Ms[mi];
        const bool pairs = M > FFN_SKINNY_MAX_M && bdt == FFN_DTYPE_BF16;
        if (pairs && !dp) continue;
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++)
                for (int v = 0; v < 4; v++, cases++) {
                    // Vary the other options over the sweep (every combination appears).
                    const uint64_t h = (uint64_t)cases * 2654435761u;
                    struct gcase c = {M,
                                      Ns[ni],
                                      Ks[ki],
                                      Ks[ki] + (h >> 3) % 3 * 7,  // row stride K, K+7 or K+14
                                      (v & 1) && M <= FFN_SKINNY_MAX_M,
                                      (h >> 5) & 1,
                                      (h >> 6) & 1,
                                      pairs || (h >> 7) & 1 ? FFN_DTYPE_BF16 : FFN_DTYPE_F32,
                                      bdt,
                                      v & 2 ? FFN_DTYPE_BF16 : FFN_DTYPE_F32,
                                      (int64_t)((h >> 9) % 3)};
                    const size_t n = (size_t)(M * c.N);
                    float *o1 = malloc(n * sizeof(float)), *o2 = malloc(n * sizeof(float));
                    run_case(ctx, &c, 1, o1);
                    run_case(ctx, &c, 2, o2);
                    // Every output is one thread's sum in a fixed order: same bits.
                    CHECK(!memcmp(o1, o2, n * sizeof(float)),
                          "M %" PRId64 " N %" PRId64 " K %" PRId64
                          " %s B %s: 1 and 2 threads differ",
                          M, c.N, c.K, c.ba ? "ba" : "ab", ffn_dtype_name(bdt));
                    free(o1), free(o2);
                }
    }
}

// Weights off a 64-byte boundary (rows a multiple of 64 bytes; bf16 ones are then read by aligned
// loads and a permutation, "ba" and "ab"): the same bits as the aligned weights, on 1 and 2
// threads.
static void test_misaligned(ffn_ctx_t ctx, enum ffn_dtype bdt, bool ba) {
    const bool f32 = bdt == FFN_DTYPE_F32;
    ffn_check_section(ba ? (f32 ? "misaligned f32 weights, ba" : "misaligned bf16 weights, ba")
                         : (f32 ? "misaligned f32 weights, ab" : "misaligned bf16 weights, ab"),
                      0);
    // "ba": K rows of 64, 192 and 576 bytes (f32 48 and 304: a partial last chunk), N with tails.
    // "ab": N rows of 64, 192 and 2112 bytes (bf16; f32 304: a partial last vector; 1056 columns:
    // pieces of 1024 at M 8, two threads), K with tails; M ≤ 6 (the FMA rows). Every offset class
    // of the element size.
    const int64_t Ks_ba[] = {f32 ? 16 : 32, f32 ? 48 : 96, f32 ? 304 : 288},
                  Ns_ab[] = {f32 ? 16 : 32, f32 ? 48 : 96, f32 ? 304 : 1056};
    const int64_t Ms[] = {1, 2, 3, 5, ba ? 8 : 6}, Ns_ba[] = {3, 37, 300}, Ks_ab[] = {3, 37, 80};
    for (size_t ki = 0; ki < 3; ki++)
        for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++)
            for (size_t ni = 0; ni < 3; ni++) {
                const int64_t M = Ms[mi], N = ba ? Ns_ba[ni] : Ns_ab[ni],
                              K = ba ? Ks_ba[ki] : Ks_ab[ki], n = M * N;
                float *o0 = malloc((size_t)n * sizeof(float)),
                      *o = malloc((size_t)n * sizeof(float));
                for (int64_t off = 0; off < (f32 ? 16 : 32); off += off < 3 ? 1 : 5) {
                    const struct gcase c = {
                        M,  N, K, K, ba, (mi & 1) != 0, false, FFN_DTYPE_F32, bdt, FFN_DTYPE_F32,
                        off};
                    for (int thr = 1; thr <= 2; thr++) {
                        run_case(ctx, &c, thr, off == 0 && thr == 1 ? o0 : o);
                        if (off == 0 && thr == 1) continue;
                        CHECK(!memcmp(o0, o, (size_t)n * sizeof(float)),
                              "M %" PRId64 " N %" PRId64 " K %" PRId64 " %s %s weights %" PRId64
                              " elements off, %d threads: differ from the aligned weights",
                              M, N, K, ba ? "ba" : "ab", ffn_dtype_name(bdt), off, thr);
                    }
                }
                free(o0), free(o);
            }
}

// --- special weights ---------------------------------------------------------------------------

// Subnormal, infinite and NaN weights: what IEEE f32 FMA gives (vdpbf16ps would flush the
// subnormals to zero), in both orientations, on 1 and 2 threads, bf16 or f32 weights.
static void test_specials(ffn_ctx_t ctx, enum ffn_dtype bdt) {
    ffn_check_section(bdt == FFN_DTYPE_F32 ? "specials f32 weights" : "specials bf16 weights", 0);
    // K = 80: the last 32-k chunk has 16 valid lanes ("ba" reads past them must be masked off).
    enum { M = 3, N = 40, K = 80 };
    static float A[M * K], C[M * N];
    static float B[K * N];  // room for f32 weights; bf16 ones use its first half
    // The subnormal weight: the smallest bf16 one, 2^-133; for f32 2^-140 (a·2^-140 is exact for
    // the quarters a below, where a·2^-149 would round).
    const int esub = bdt == FFN_DTYPE_F32 ? -140 : -133;
    for (int ba = 0; ba < 2; ba++)
        for (int thr = 1; thr <= 2; thr++) {
            const int64_t s0 = ba ? 1 : N, s1 = ba ? K : 1;
            for (int m = 0; m < M; m++)
                for (int k = 0; k < K; k++) A[m * K + k] = 1.0f + 0.25f * (float)m;
            for (int n = 0; n < N; n++)
                for (int k = 0; k < K; k++) ffn_store_f32(B, bdt, k * s0 + n * s1, 0.5f);
            // Column 3: every weight subnormal, 2^esub.
            for (int k = 0; k < K; k++) ffn_store_f32(B, bdt, k * s0 + 3 * s1, ldexpf(1.0f, esub));
            // Column 17: one NaN weight. Column 21: one +inf. Column 22: +inf and -inf.
            ffn_store_f32(B, bdt, 40 * s0 + 17 * s1, NAN);
            ffn_store_f32(B, bdt, 5 * s0 + 21 * s1, INFINITY);
            ffn_store_f32(B, bdt, 6 * s0 + 22 * s1, INFINITY);
            ffn_store_f32(B, bdt, 69 * s0 + 22 * s1, -INFINITY);
            // Column 30: +inf at k = 0, right after column 29's last weight in "ba" (a lane read
            // past K would make column 29 NaN: inf times A's zero padding).
            ffn_store_f32(B, bdt, 0 * s0 + 30 * s1, INFINITY);
            const struct ffn_cpu_mat ma = {A, FFN_DTYPE_F32, K, 1}, mb = {B, bdt, s0, s1},
                                     mc = {C, FFN_DTYPE_F32, N, 1};
            ffn_ctx_set_threads(ctx, thr);
            bool done = false;
            CHECK(ffn_cpu_gemm_skinny(ctx, "test", M, N, K, &ma, &mb, &mc, NULL, false, &done) ==
                          FFN_STATUS_OK &&
                      done,
                  "ran");
            for (int m = 0; m < M; m++) {
                const float a = 1.0f + 0.25f * (float)m;
                // K·a·2^esub: subnormal f32 multiples of 2^-149, every partial sum exact.
                const float sub = (float)K * a * ldexpf(1.0f, esub);
                CHECK(C[m * N + 3] == sub && sub > 0,
                      "%s thr %d row %d: subnormal column %.9g, want %.9g", ba ? "ba" : "ab", thr,
                      m, C[m * N + 3], sub);
                CHECK(isnan(C[m * N + 17]), "%s row %d: NaN weight gives %g", ba ? "ba" : "ab", m,
                      C[m * N + 17]);
                CHECK(isinf(C[m * N + 21]) && C[m * N + 21] > 0, "%s row %d: +inf weight gives %g",
                      ba ? "ba" : "ab", m, C[m * N + 21]);
                CHECK(isnan(C[m * N + 22]), "%s row %d: inf - inf gives %g", ba ? "ba" : "ab", m,
                      C[m * N + 22]);
                // The other columns are finite and exact: K·a·0.5 (small integers / quarters).
                CHECK(isinf(C[m * N + 30]) && C[m * N + 29] == (float)K * a * 0.5f,
                      "%s row %d: +inf weight at k = 0 gives %g, the column before it %g",
                      ba ? "ba" : "ab", m, C[m * N + 30], C[m * N + 29]);
                CHECK(C[m * N + 4] == (float)K * a * 0.5f, "%s row %d: plain column %.9g",
                      ba ? "ba" : "ab", m, C[m * N + 4]);
            }
        }
}

// Cases the path does not take: nothing is touched and the caller is told so.
// 1 when the skinny GEMM takes C[M, 8] = A[M, K]·B (A, C: f32, row stride 8), 0 when it leaves it
// to the caller, -1 when it fails.
static int taken(ffn_ctx_t ctx, int64_t M, int64_t K, const struct ffn_cpu_mat *b) {
    static float A[40 * 8], C[40 * 8];
    const struct ffn_cpu_mat a = {A, FFN_DTYPE_F32, 8, 1}, c = {C, FFN_DTYPE_F32, 8, 1};
    bool done = true;
    if (ffn_cpu_gemm_skinny(ctx, "t", M, 8, K, &a, b, &c, NULL, false, &done)) return -1;
    return done;
}

static void test_refusals(ffn_ctx_t ctx) {
    ffn_check_section("refusals", 0);
    static uint16_t B[8 * 8];
    static float B32[8 * 8];
    const struct ffn_cpu_mat bh = {B, FFN_DTYPE_F16, 1, 8}, bs = {B, FFN_DTYPE_BF16, 2, 16},
                             b = {B, FFN_DTYPE_BF16, 1, 8}, bn = {B, FFN_DTYPE_BF16, 8, 1},
                             fn = {B32, FFN_DTYPE_F32, 8, 1};
    const int ab_max = FFN_SKINNY_AB_MAX_M;
    CHECK(taken(ctx, 2, 8, &bh) == 0, "f16 weights: not taken");
    CHECK(taken(ctx, 2, 4, &bs) == 0, "weights strided both ways: not taken");
    CHECK(taken(ctx, 9, 8, &b) == 0, "9 rows, weights contiguous in k: not taken");
    CHECK(taken(ctx, ab_max + 1, 8, &bn) == 0, "%d rows, bf16 weights contiguous in n: not taken",
          ab_max + 1);
    CHECK(taken(ctx, FFN_SKINNY_MAX_M + 1, 8, &bn) == 0,
          "%d rows, bf16 weights contiguous in n, f32 A: not taken", FFN_SKINNY_MAX_M + 1);
    CHECK(taken(ctx, ab_max + 1, 8, &fn) == 0, "%d rows, f32 weights contiguous in n: not taken",
          ab_max + 1);
    CHECK(taken(ctx, ab_max, 8, &fn) == 1, "%d rows, f32 weights contiguous in n: taken", ab_max);
}

// --- the block with the path on and off ----------------------------------------------------------

// A block with wdt (bf16 or f32) weights (SwiGLU without biases, or GeLU with biases) in one
// orientation: y from the context ctx for T tokens (x f32), and the gemm_impl it reports.
static void block_y(ffn_ctx_t ctx, enum ffn_dtype wdt, bool gated, enum ffn_weight_orient orient,
                    const struct ref_ffn *f, int64_t T, const float *x, float *y, char *impl) {
    const int64_t d = f->d, m = f->m;
    const size_t es = ffn_dtype_size(wdt);
    void *wg = malloc((size_t)(d * m) * es), *wu = malloc((size_t)(d * m) * es),
         *wd = malloc((size_t)(d * m) * es), *bu = malloc((size_t)m * es),
         *bd = malloc((size_t)d * es);
    for (int64_t o = 0; o < m; o++)
        for (int64_t i = 0; i < d; i++) {
            ffn_store_f32(wu, wdt, ref_idx(orient, m, d, o, i, 0), (float)f->Wu[o * d + i]);
            if (gated)
                ffn_store_f32(wg, wdt, ref_idx(orient, m, d, o, i, 0), (float)f->Wg[o * d + i]);
        }
    for (int64_t o = 0; o < d; o++)
        for (int64_t i = 0; i < m; i++)
            ffn_store_f32(wd, wdt, ref_idx(orient, d, m, o, i, 0), (float)f->Wd[o * m + i]);
    for (int64_t j = 0; j < m; j++) ffn_store_f32(bu, wdt, j, f->bias ? (float)f->bu[j] : 0.0f);
    for (int64_t j = 0; j < d; j++) ffn_store_f32(bd, wdt, j, f->bias ? (float)f->bd[j] : 0.0f);
    struct ffn_block_spec s = FFN_BLOCK_SPEC_INIT;
    s.d_model = d, s.d_ff = m, s.act = f->act, s.gated = gated;
    s.bias_up = s.bias_down = f->bias;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    w.up = ffn_weight_dense(wu, wdt, orient);
    w.down = ffn_weight_dense(wd, wdt, orient);
    if (gated) w.gate = ffn_weight_dense(wg, wdt, orient);
    if (f->bias) {
        w.b_up = ffn_weight_dense(bu, wdt, FFN_WEIGHT_OUT_IN);
        w.b_down = ffn_weight_dense(bd, wdt, FFN_WEIGHT_OUT_IN);
    }
    ffn_block_t b = NULL;
    CHECK(ffn_block_create(ctx, &s, &w, NULL, &b) == FFN_STATUS_OK, "create: %s",
          ffn_ctx_last_error(ctx));
    const struct ffn_tensor tx = ffn_tensor_2d((void *)x, FFN_DTYPE_F32, T, d, d);
    const struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, T, d, d);
    CHECK(ffn_block_forward(ctx, b, &ty, &tx, FFN_BLOCK_POLICY_NONE) == FFN_STATUS_OK,
          "forward: %s", ffn_ctx_last_error(ctx));
    struct ffn_block_info info = FFN_BLOCK_INFO_INIT;
    ffn_block_info(ctx, b, T, &info);
    snprintf(impl, 64, "%s", info.gemm_impl);
    ffn_block_destroy(b);
    free(wg), free(wu), free(wd), free(bu), free(bd);
}

static void test_block(ffn_ctx_t on, ffn_ctx_t off) {
    ffn_check_section("block", 0);
    enum { D = 72, MM = 100, TMAX = 4 };
    static double Wg[MM * D], Wu[MM * D], Wd[D * MM], bu[MM], bd[D], xd[TMAX * D], yd[TMAX * D];
    static float x[TMAX * D], y_on[TMAX * D], y_off[TMAX * D];
    rng = SEED;
    // Weights and x as bf16 values, so the double reference sees what the block multiplies.
    const double ws = 1.0 / sqrt((double)D);
    for (int k = 0; k < MM * D; k++) {
        Wg[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)(ws * rnd())));
        Wu[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)(ws * rnd())));
        Wd[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)(rnd() / sqrt((double)MM))));
    }
    for (int k = 0; k < MM; k++) bu[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)(0.1 * rnd())));
    for (int k = 0; k < D; k++) bd[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)(0.1 * rnd())));
    for (int k = 0; k < TMAX * D; k++)
        xd[k] = x[k] = ffn_bf16_to_f32(ffn_f32_to_bf16((float)rnd()));
    for (int wi = 0; wi < 2; wi++)
        for (int gated = 0; gated < 2; gated++)
            for (int orient = 0; orient < 2; orient++)
                for (int64_t T = 1; T <= TMAX; T += 3) {
                    const struct ref_ffn f = {
                        D,     MM,     gated ? FFN_ACT_SILU : FFN_ACT_GELU_TANH,
                        gated, !gated, Wg,
                        Wu,    Wd,     NULL,
                        bu,    bd};
                    const enum ffn_weight_orient o = orient ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
                    char impl_on[64], impl_off[64];
                    const enum ffn_dtype wdt = wi ? FFN_DTYPE_F32 : FFN_DTYPE_BF16;
                    block_y(on, wdt, gated, o, &f, T, x, y_on, impl_on);
                    block_y(off, wdt, gated, o, &f, T, x, y_off, impl_off);
                    ref_forward(&f, T, xd, yd);
                    CHECK(!strcmp(impl_on, FFN_SKINNY_IMPL), "%s T %" PRId64 ": on reports %s",
                          ffn_dtype_name(wdt), T, impl_on);
                    CHECK(strcmp(impl_off, FFN_SKINNY_IMPL) != 0,
                          "%s T %" PRId64 ": off reports %s", ffn_dtype_name(wdt), T, impl_off);
                    double s = 0;
                    for (int64_t k = 0; k < T * D; k++) s = fabs(yd[k]) > s ? fabs(yd[k]) : s;
                    int bad = 0;
                    for (int64_t k = 0; k < T * D && bad < 3; k++) {
                        bad += !CHECK_NEAR(y_on[k], y_off[k], TOL_BF16 * s,
                                           "%s %s %s T %" PRId64 ": y[%" PRId64 "] on vs off",
                                           ffn_dtype_name(wdt), gated ? "swiglu" : "gelu",
                                           orient ? "in_out" : "out_in", T, k);
                        bad += !CHECK_NEAR(y_on[k], yd[k], TOL_BF16 * s,
                                           "%s %s %s T %" PRId64 ": y[%" PRId64 "] vs reference",
                                           ffn_dtype_name(wdt), gated ? "swiglu" : "gelu",
                                           orient ? "in_out" : "out_in", T, k);
                    }
                }
}

int main(void) {
    ffn_check_begin("block_skinny");
    (void)ref_fd, (void)ref_fused_pos;  // block_ref.h helpers this test has no use for
    // Contexts read the switches when created: one with the path on for up to 8 rows (32 with the
    // weights contiguous in n), one off.
    setenv("FFN_BLOCK_SKINNY_ROWS", "8", 1);
    setenv("FFN_BLOCK_SKINNY_AB_ROWS", "32", 1);
    setenv("FFN_BLOCK_SKINNY", "1", 1);
    ffn_ctx_t on = NULL, off = NULL;
    if (ffn_ctx_create(NULL, &on)) return ffn_check_skip("no CPU context");
    setenv("FFN_BLOCK_SKINNY", "0", 1);
    ffn_ctx_create(NULL, &off);
    ffn_check_show_error(on);
    if (ffn_ctx_isa(on) != FFN_ISA_AVX512) {
        ffn_ctx_destroy(on), ffn_ctx_destroy(off);
        return ffn_check_skip("the context's ISA is %s, the skinny GEMM needs AVX-512",
                              ffn_isa_name(ffn_ctx_isa(on)));
    }
    // Both instances of the kernels: the next weight rows prefetched into L1 and into L2 only
    // ($FFN_BLOCK_SKINNY_PF, read when a context is created; the same sums).
    for (int l2 = 0; l2 < 2; l2++) {
        setenv("FFN_BLOCK_SKINNY", "1", 1);
        setenv("FFN_BLOCK_SKINNY_PF", l2 ? "l2" : "l1", 1);
        ffn_ctx_t c = NULL;
        if (!CHECK(!ffn_ctx_create(NULL, &c), "a context with FFN_BLOCK_SKINNY_PF=%s",
                   l2 ? "l2" : "l1"))
            continue;
        CHECK(ffn_cpu_state(c)->skinny_pf_l2 == (l2 == 1), "FFN_BLOCK_SKINNY_PF=%s taken",
              l2 ? "l2" : "l1");
        for (int wi = 0; wi < 2; wi++) {
            test_gemm(c, wi ? FFN_DTYPE_F32 : FFN_DTYPE_BF16);
            test_specials(c, wi ? FFN_DTYPE_F32 : FFN_DTYPE_BF16);
            test_misaligned(c, wi ? FFN_DTYPE_F32 : FFN_DTYPE_BF16, true);
            test_misaligned(c, wi ? FFN_DTYPE_F32 : FFN_DTYPE_BF16, false);
        }
        ffn_ctx_destroy(c);
    }
    unsetenv("FFN_BLOCK_SKINNY_PF");
    test_refusals(on);
    // The off context never takes the path.
    {
        static float A[8], C[8];
        static uint16_t B[64];
        const struct ffn_cpu_mat a = {A, FFN_DTYPE_F32, 8, 1}, b = {B, FFN_DTYPE_BF16, 1, 8},
                                 c = {C, FFN_DTYPE_F32, 8, 1};
        bool done = true;
        CHECK(!ffn_cpu_gemm_skinny(off, "t", 1, 8, 8, &a, &b, &c, NULL, false, &done) && !done,
              "FFN_BLOCK_SKINNY=0: not taken");
    }
    ffn_ctx_set_threads(on, 2), ffn_ctx_set_threads(off, 2);
    test_block(on, off);
    ffn_ctx_destroy(on), ffn_ctx_destroy(off);
    return ffn_check_summary();
}
