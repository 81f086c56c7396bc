// test_cuda_block_epi.cu — cuBLASLt's GeLU epilogues measured like any kernel: their outputs over
// many inputs against ffn's double-precision reference (src/cpu/scalar/act_ref.h) with the ulp
// metric and bounds of `ffn ulp` (tools/ulp_metric.h), evaluated on the device.
//
// GELU (forward, the tanh form): a bf16 GEMM on the tensor cores whose f32 accumulator holds an
// exact f32 input v: x's row i is (hi, mid, lo, 0, ...), the three bf16 pieces of v (8 significant
// bits each), and W's row n is (s, s, s, 0, ...) with s = ±1, so the epilogue sees ±v. A plain run
// (no epilogue, f32 out) first checks that every accumulator equals ±v exactly. Inputs: every
// `stride`-th positive f32 from 2^-100 to the largest finite one, each with both signs; outputs
// f32 and bf16 (the dtypes of h).
// DGELU (backward): D = (x·Wᵀ) ⊙ gelu'(aux) with x·Wᵀ = dy ∈ {1, -1.25, 0.375, -3, 0.5, 2, -0.75,
// 1.5} exactly and aux the input: every stride-th finite f32 pattern (f32 out, f32 aux), every
// finite bf16 (bf16 out, bf16 aux).
// The library uses an epilogue only where ffn_cuda_gelu_epilogue_ok says so; the test fails if it
// says so for an output dtype whose measured error exceeds the bound (4 ulp forward, 2 in the
// accurate tier; 8 backward).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_lt.h"
#include "ulp_metric.h"

extern "C" bool ffn_cuda_gelu_epilogue_ok(enum ffn_dtype out, bool accurate);

#define EPI_N 8          // output features (columns of the row-major D)
#define EPI_K 16         // the reduction: 3 pieces, zeros after
#define EPI_M (1 << 22)  // rows per chunk
#define EPI_BLOCKS 1024

__constant__ float epi_dys[EPI_N] = {1.0f, -1.25f, 0.375f, -3.0f, 0.5f, 2.0f, -0.75f, 1.5f};

// Row i of x: the pieces of the positive f32 with bits b0 + i·stride (for the forward), or
// (1, 0, ...) (for the backward, dgelu != 0).
__global__ void epi_gen(__nv_bfloat16 *x, int64_t m, uint32_t b0, uint32_t stride, uint32_t last,
                        int dgelu) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m;
         i += (int64_t)gridDim.x * blockDim.x) {
        float p[3] = {1.0f, 0.0f, 0.0f};
        if (!dgelu) {
            uint64_t bits = b0 + (uint64_t)i * stride;
            if (bits > last) bits = last;
            const float v = __uint_as_float((uint32_t)bits);
            const float hi = __uint_as_float((uint32_t)bits & 0xffff0000u);
            const float r1 = v - hi;
            const float mid = __uint_as_float(__float_as_uint(r1) & 0xffff0000u);
            p[0] = hi, p[1] = mid, p[2] = r1 - mid;
        }
        for (int k = 0; k < EPI_K; k++) x[i * EPI_K + k] = __float2bfloat16_rn(k < 3 ? p[k] : 0.0f);
    }
}

// aux[i, n] of dtype dt: the f32 pattern b0 + (i·N + n)·stride (non-finite ones as 0), or the
// bf16 pattern (i·N + n) (dt bf16).
__global__ void epi_aux(void *aux, int dt, int64_t m, uint32_t b0, uint32_t stride) {
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m * EPI_N;
         e += (int64_t)gridDim.x * blockDim.x) {
        if (dt == FFN_DTYPE_BF16) {
            uint16_t h = (uint16_t)e;
            if ((h & 0x7f80u) == 0x7f80u) h = 0;
            ((uint16_t *)aux)[e] = h;
        } else {
            uint32_t u = (uint32_t)(b0 + (uint64_t)e * stride);
            if ((u & 0x7f800000u) == 0x7f800000u) u = 0;
            ((uint32_t *)aux)[e] = u;
        }
    }
}

// max: over every input; body_*: over the inputs of magnitude ≤ 2^20 (where pre-activations live)
// whose exact result is a normal number of the output dtype; tail: inputs of the underflow tail
// above the bound (a zero of the wrong sign, a flushed subnormal); huge: inputs beyond 2^20 above
// the bound; nonfinite: NaN or inf for a finite exact result.
struct epi_stat {
    double max, body_max;
    float x, m1, got, bx, bm1, bgot;
    unsigned long long n, n_over, n_inexact, n_tail, n_huge, n_nonfinite;
};

static __device__ float epi_ld(const void *p, int64_t i, int dt) {
    if (dt == FFN_DTYPE_F32) return ((const float *)p)[i];
    return __uint_as_float((uint32_t)((const uint16_t *)p)[i] << 16);
}

// mode 0: the accumulator check (D f32 = s·v exactly); 1: GELU, D of dtype dt; 2: DGELU.
__global__ void epi_metric(int mode, const void *D, int dt, const void *aux, int aux_dt, int64_t m,
                           uint32_t b0, uint32_t stride, uint32_t last, double bound,
                           struct epi_stat *out) {
    __shared__ struct epi_stat sh[256];
    struct epi_stat me = {-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m * EPI_N;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = e / EPI_N;
        const int c = (int)(e % EPI_N);
        const float got = epi_ld(D, e, mode == 1 ? dt : mode == 2 ? dt : FFN_DTYPE_F32);
        float x, m1 = 1.0f;
        double exact, err;
        if (mode < 2) {
            uint64_t bits = b0 + (uint64_t)i * stride;
            if (bits > last) bits = last;
            x = __uint_as_float((uint32_t)bits) * (c % 2 ? -1.0f : 1.0f);
        } else {
            x = epi_ld(aux, e, aux_dt);
            m1 = epi_dys[c];
        }
        if (mode == 0) {
            me.n_inexact += got != x;
            me.n++;
            continue;
        }
        if (mode == 1) {
            exact = ffn_ref_act_eval(FFN_ACT_GELU_TANH, (double)x);
            err = ffn_um_ulp_error(FFN_UM_ACT_FWD, 0, FFN_ACT_GELU_TANH, (enum ffn_dtype)dt, got,
                                   exact, x, 1.0f, 1.0f);
        } else {
            exact = (double)m1 * ffn_ref_dact_eval(FFN_ACT_GELU_TANH, (double)x);
            err = ffn_um_ulp_error(FFN_UM_ACT_BWD, 0, FFN_ACT_GELU_TANH, (enum ffn_dtype)dt, got,
                                   exact, x, m1, 1.0f);
        }
        me.n++;
        me.n_over += err > bound;
        if (err > me.max) me.max = err, me.x = x, me.m1 = m1, me.got = got;
        const double r = ffn_um_round(exact, (enum ffn_dtype)dt);
        const bool huge = !(fabsf(x) <= 0x1p20f),
                   tail = !huge && !(isfinite(r) && fabs(r) >= 0x1p-126);
        if (!huge && !tail && err > me.body_max)
            me.body_max = err, me.bx = x, me.bm1 = m1, me.bgot = got;
        if (tail && err > bound) me.n_tail++;
        if (huge && err > bound) me.n_huge++;
        if (isfinite(exact) && !isfinite(got)) me.n_nonfinite++;
    }
    const int t = threadIdx.x;
    sh[t] = me;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) {
            struct epi_stat *a = &sh[t];
            const struct epi_stat *b = &sh[t + s];
            if (b->max > a->max) a->max = b->max, a->x = b->x, a->m1 = b->m1, a->got = b->got;
            if (b->body_max > a->body_max)
                a->body_max = b->body_max, a->bx = b->bx, a->bm1 = b->bm1, a->bgot = b->bgot;
            a->n += b->n, a->n_over += b->n_over, a->n_inexact += b->n_inexact;
            a->n_tail += b->n_tail, a->n_huge += b->n_huge, a->n_nonfinite += b->n_nonfinite;
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sh[0];
}

// W [N, K] bf16: row n = (s, s, s, 0...) with s = ±1 (forward) or (dy_n, 0, ...) (backward).
static void epi_weights(__nv_bfloat16 *hw, bool dgelu) {
    static const float dys[EPI_N] = {1.0f, -1.25f, 0.375f, -3.0f, 0.5f, 2.0f, -0.75f, 1.5f};
    for (int n = 0; n < EPI_N; n++)
        for (int k = 0; k < EPI_K; k++) {
            const float s = dgelu ? dys[n] : (n % 2 ? -1.0f : 1.0f);
            hw[n * EPI_K + k] =
                __float2bfloat16_rn(dgelu ? (k == 0 ? s : 0.0f) : (k < 3 ? s : 0.0f));
        }
}

struct epi_gemm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    bool ok;
    char why[160];
};

// D[M, N] (row-major) = x[M, K]·W[N, K]ᵀ with `epilogue`, D of dtype dt, aux (DGELU) of aux_dt.
static void epi_gemm_make(const struct ffn_lt *lt, cublasLtHandle_t h, struct epi_gemm *g,
                          cublasLtEpilogue_t epilogue, cudaDataType_t dt, void *aux,
                          cudaDataType_t aux_dt, void *ws, size_t ws_bytes) {
    memset(g, 0, sizeof *g);
    const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const uint32_t ep = (uint32_t)epilogue;
    lt->desc_create(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
    if (aux) {
        const int64_t ld = EPI_N;
        const int32_t at = aux_dt;
        lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux);
        lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld);
        if (aux_dt != dt)
            lt->desc_set(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &at, sizeof at);
    }
    lt->layout_create(&g->la, CUDA_R_16BF, EPI_K, EPI_N, EPI_K);
    lt->layout_create(&g->lb, CUDA_R_16BF, EPI_K, EPI_M, EPI_K);
    lt->layout_create(&g->lc, dt, EPI_N, EPI_M, EPI_N);
    cublasLtMatmulPreference_t pref;
    lt->pref_create(&pref);
    const uint64_t wsb = ws_bytes;
    lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    cublasLtMatmulHeuristicResult_t res;
    int n = 0;
    cublasStatus_t s = lt->heuristic(h, g->desc, g->la, g->lb, g->lc, g->lc, pref, 1, &res, &n);
    lt->pref_destroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || n < 1) {
        snprintf(g->why, sizeof g->why, "no cuBLASLt algorithm (%s)", ffn_lt_status(lt, s));
        return;
    }
    g->algo = res.algo;
    g->ok = true;
}

static void epi_gemm_free(const struct ffn_lt *lt, struct epi_gemm *g) {
    if (g->desc) lt->desc_destroy(g->desc);
    if (g->la) lt->layout_destroy(g->la);
    if (g->lb) lt->layout_destroy(g->lb);
    if (g->lc) lt->layout_destroy(g->lc);
}

static int epi_run(const struct ffn_lt *lt, cublasLtHandle_t h, struct epi_gemm *g, const void *W,
                   const void *x, void *D, void *ws, size_t ws_bytes) {
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t s = lt->matmul(h, g->desc, &alpha, W, g->la, x, g->lb, &beta, D, g->lc, D, g->lc,
                                  &g->algo, ws, ws_bytes, 0);
    if (s != CUBLAS_STATUS_SUCCESS) {
        FAIL("epilogue: cublasLtMatmul: %s", ffn_lt_status(lt, s));
        return 1;
    }
    return 0;
}

// Host reduction of the per-block stats into *acc.
static void epi_collect(const struct epi_stat *d_st, struct epi_stat *acc) {
    static struct epi_stat h[EPI_BLOCKS];
    cudaMemcpy(h, d_st, sizeof h, cudaMemcpyDeviceToHost);
    for (int b = 0; b < EPI_BLOCKS; b++) {
        if (h[b].max > acc->max)
            acc->max = h[b].max, acc->x = h[b].x, acc->m1 = h[b].m1, acc->got = h[b].got;
        if (h[b].body_max > acc->body_max)
            acc->body_max = h[b].body_max, acc->bx = h[b].bx, acc->bm1 = h[b].bm1,
            acc->bgot = h[b].bgot;
        acc->n += h[b].n, acc->n_over += h[b].n_over, acc->n_inexact += h[b].n_inexact;
        acc->n_tail += h[b].n_tail, acc->n_huge += h[b].n_huge,
            acc->n_nonfinite += h[b].n_nonfinite;
    }
}

extern "C" void ffn_test_epilogue(int stride, bool verbose) {
    char why[512];
    const struct ffn_lt *lt = ffn_lt_get(why, sizeof why);
    if (!lt) {
        printf("epilogue: skipped: %s\n", why);
        return;
    }
    if (stride < 1) stride = 1;
    cublasLtHandle_t h;
    lt->create(&h);
    const size_t ws_bytes = (size_t)32 << 20;
    void *ws, *W, *x, *D, *aux;
    struct epi_stat *st;
    cudaMalloc(&ws, ws_bytes);
    cudaMalloc(&W, EPI_N * EPI_K * 2);
    cudaMalloc(&x, (size_t)EPI_M * EPI_K * 2);
    cudaMalloc(&D, (size_t)EPI_M * EPI_N * 4);
    cudaMalloc(&aux, (size_t)EPI_M * EPI_N * 4);
    cudaMalloc((void **)&st, EPI_BLOCKS * sizeof *st);
    __nv_bfloat16 hw[EPI_N * EPI_K];
    printf("cuBLASLt GeLU epilogues (tanh form) against ffn's reference, %s\n", lt->path);
    printf("  %-5s %-4s %-40s %11s %9s %9s %5s %10s %10s %9s %4s %s\n", "what", "out", "inputs",
           "values", "max ulp", "body max", "bound", "tail>bound", "huge>bound", "nonfinite",
           "used", "worst of the body (|x| <= 2^20) at");

    // --- forward: the accumulator check, then GELU into f32 and into bf16 ----------------------
    epi_weights(hw, false);
    cudaMemcpy(W, hw, sizeof hw, cudaMemcpyHostToDevice);
    struct epi_gemm g0, g1, g2;
    epi_gemm_make(lt, h, &g0, CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_32F, NULL, CUDA_R_32F, ws,
                  ws_bytes);
    epi_gemm_make(lt, h, &g1, CUBLASLT_EPILOGUE_GELU, CUDA_R_32F, NULL, CUDA_R_32F, ws, ws_bytes);
    epi_gemm_make(lt, h, &g2, CUBLASLT_EPILOGUE_GELU, CUDA_R_16BF, NULL, CUDA_R_16BF, ws, ws_bytes);
    const uint32_t first = 0x0D800000u, last = 0x7F7FFFFFu;  // 2^-100 .. the largest finite f32
    const struct epi_stat empty = {-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct epi_stat s0 = empty, s1 = empty, s2 = empty;
    const double bf = ffn_um_bound(FFN_UM_ACT_FWD, FFN_ACT_GELU_TANH, false);
    const double bf_acc = ffn_um_bound(FFN_UM_ACT_FWD, FFN_ACT_GELU_TANH, true);
    const double bb = ffn_um_bound(FFN_UM_ACT_BWD, FFN_ACT_GELU_TANH, false);
    for (uint64_t b0 = first; g0.ok && g1.ok && b0 <= last; b0 += (uint64_t)EPI_M * stride) {
        epi_gen<<<1024, 256>>>((__nv_bfloat16 *)x, EPI_M, (uint32_t)b0, (uint32_t)stride, last, 0);
        if (epi_run(lt, h, &g0, W, x, D, ws, ws_bytes)) return;
        epi_metric<<<EPI_BLOCKS, 256>>>(0, D, FFN_DTYPE_F32, NULL, 0, EPI_M, (uint32_t)b0, stride,
                                        last, bf, st);
        epi_collect(st, &s0);
        if (epi_run(lt, h, &g1, W, x, D, ws, ws_bytes)) return;
        epi_metric<<<EPI_BLOCKS, 256>>>(1, D, FFN_DTYPE_F32, NULL, 0, EPI_M, (uint32_t)b0, stride,
                                        last, bf, st);
        epi_collect(st, &s1);
        if (g2.ok) {
            if (epi_run(lt, h, &g2, W, x, D, ws, ws_bytes)) return;
            epi_metric<<<EPI_BLOCKS, 256>>>(1, D, FFN_DTYPE_BF16, NULL, 0, EPI_M, (uint32_t)b0,
                                            stride, last, bf, st);
            epi_collect(st, &s2);
        }
        if (verbose)
            printf("    forward chunk from 0x%08x: max %.3f / %.3f\n", (unsigned)b0, s1.max,
                   s2.max);
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        FAIL("epilogue: %s", cudaGetErrorString(e));
        return;
    }
    char inputs[64];
    snprintf(inputs, sizeof inputs, "±(each %d%s positive f32 from 2^-100)", stride,
             stride == 1 ? "st" : "th");
    if (!g0.ok || !g1.ok) {
        FAIL("epilogue: GELU forward f32: %s", !g0.ok ? g0.why : g1.why);
    } else {
        CHECK(
            s0.n_inexact == 0,
            "epilogue: %llu of %llu accumulators are not the exact input: the measurement is void",
            s0.n_inexact, s0.n);
    }
    struct {
        const char *what, *out;
        const struct epi_stat *s;
        bool ok;
        double bound;
        enum ffn_dtype dt;
        bool fwd;
    } rows[] = {
        {"GELU", "f32", &s1, g1.ok, bf, FFN_DTYPE_F32, true},
        {"GELU", "bf16", &s2, g2.ok, bf, FFN_DTYPE_BF16, true},
        {"DGELU", "f32", NULL, false, bb, FFN_DTYPE_F32, false},
        {"DGELU", "bf16", NULL, false, bb, FFN_DTYPE_BF16, false},
    };

    // --- backward: DGELU with f32 aux into f32, bf16 aux into bf16 ------------------------------
    epi_weights(hw, true);
    cudaMemcpy(W, hw, sizeof hw, cudaMemcpyHostToDevice);
    struct epi_gemm g3, g4;
    epi_gemm_make(lt, h, &g3, CUBLASLT_EPILOGUE_DGELU, CUDA_R_32F, aux, CUDA_R_32F, ws, ws_bytes);
    epi_gemm_make(lt, h, &g4, CUBLASLT_EPILOGUE_DGELU, CUDA_R_16BF, aux, CUDA_R_16BF, ws, ws_bytes);
    struct epi_stat s3 = empty, s4 = empty;
    epi_gen<<<1024, 256>>>((__nv_bfloat16 *)x, EPI_M, 0, 0, 0, 1);
    const uint64_t per = (uint64_t)EPI_M * EPI_N * stride;
    for (uint64_t b0 = 0; g3.ok && b0 < ((uint64_t)1 << 32); b0 += per) {
        epi_aux<<<1024, 256>>>(aux, FFN_DTYPE_F32, EPI_M, (uint32_t)b0, (uint32_t)stride);
        if (epi_run(lt, h, &g3, W, x, D, ws, ws_bytes)) return;
        epi_metric<<<EPI_BLOCKS, 256>>>(2, D, FFN_DTYPE_F32, aux, FFN_DTYPE_F32, EPI_M, 0, 0, 0, bb,
                                        st);
        epi_collect(st, &s3);
    }
    if (g4.ok) {  // all 65,536 bf16 patterns: 8192 rows of 8 (the rest of the chunk repeats them)
        epi_aux<<<1024, 256>>>(aux, FFN_DTYPE_BF16, EPI_M, 0, 1);
        if (epi_run(lt, h, &g4, W, x, D, ws, ws_bytes)) return;
        epi_metric<<<EPI_BLOCKS, 256>>>(2, D, FFN_DTYPE_BF16, aux, FFN_DTYPE_BF16, 8192, 0, 0, 0,
                                        bb, st);
        epi_collect(st, &s4);
    }
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        FAIL("epilogue: %s", cudaGetErrorString(e));
        return;
    }
    rows[2].s = &s3, rows[2].ok = g3.ok;
    rows[3].s = &s4, rows[3].ok = g4.ok;
    char in_b[64];
    snprintf(in_b, sizeof in_b, "each %d%s finite f32 pattern", stride, stride == 1 ? "st" : "th");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const bool used = ffn_cuda_gelu_epilogue_ok(rows[r].dt, false);
        const char *in = rows[r].fwd                    ? inputs
                         : rows[r].dt == FFN_DTYPE_BF16 ? "every finite bf16"
                                                        : in_b;
        if (!rows[r].ok) {
            printf("  %-5s %-4s %-40s (no cuBLASLt algorithm) used: %s\n", rows[r].what,
                   rows[r].out, in, used ? "yes" : "no");
            continue;
        }
        const struct epi_stat *s = rows[r].s;
        char at[128];
        if (rows[r].fwd)
            snprintf(at, sizeof at, "x=%.9g got %.9g", s->bx, s->bgot);
        else
            snprintf(at, sizeof at, "x=%.9g dy=%g got %.9g", s->bx, s->bm1, s->bgot);
        printf("  %-5s %-4s %-40s %11llu %9.3g %9.3f %5.0f %10llu %10llu %9llu %4s %s\n",
               rows[r].what, rows[r].out, in, s->n, s->max, s->body_max, rows[r].bound, s->n_tail,
               s->n_huge, s->n_nonfinite, used ? "yes" : "no", at);
        if (rows[r].fwd)
            printf("        worst overall at x=%.9g got %.9g; %llu values above the bound\n", s->x,
                   s->got, s->n_over);
        else
            printf("        worst overall at x=%.9g dy=%g got %.9g; %llu values above the bound\n",
                   s->x, s->m1, s->got, s->n_over);
        if (used)
            CHECK(s->max <= rows[r].bound, "epilogue: the library uses %s into %s, %.3f ulp > %.0f",
                  rows[r].what, rows[r].out, s->max, rows[r].bound);
        if (rows[r].fwd && ffn_cuda_gelu_epilogue_ok(rows[r].dt, true))
            CHECK(s->max <= bf_acc,
                  "epilogue: the library uses %s into %s in the accurate tier, %.3f ulp > %.0f",
                  rows[r].what, rows[r].out, s->max, bf_acc);
    }
    epi_gemm_free(lt, &g0), epi_gemm_free(lt, &g1), epi_gemm_free(lt, &g2);
    epi_gemm_free(lt, &g3), epi_gemm_free(lt, &g4);
    lt->destroy(h);
    cudaFree(ws), cudaFree(W), cudaFree(x), cudaFree(D), cudaFree(aux), cudaFree(st);
}
